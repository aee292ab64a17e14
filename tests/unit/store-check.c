/*
 * store-check.c: the helpers of store-check.h, shared by the store tests.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "store-check.h"

char *
fix_tmpdir(void)
{
	char tmpl[] = "/tmp/argus-test-XXXXXX";
	char *d = mkdtemp(tmpl);

	cr_assert_not_null(d);
	return xstrdup(d);
}

void
fix_rm_rf(const char *dir)
{
	char *cmd = xasprintf("rm -rf '%s'", dir);

	(void)system(cmd);
	free(cmd);
}

struct trace_writer *
fix_open_writer(const char *dir, uint64_t bound, uint64_t seg,
    unsigned format)
{
	struct trace_writer_opts o = { 0 };
	struct trace_writer *w;
	char *cause = NULL;

	o.size_bound = bound;
	o.segment_size = seg;
	o.chunk_size = 16 << 10;	/* many chunks, so seeks and damage bite */
	o.ncpus = FIX_NCPUS;
	o.format = format;
	o.group = (gid_t)-1;
	o.hostname = "testhost";
	o.release = "6.0-test";
	o.boot_id = "boot-1";
	int err = trace_writer_open(&w, dir, &o, &cause);

	cr_assert_eq(err, 0, "writer open: %s", cause ? cause : "?");
	return w;
}

void
fix_write_gen(const char *dir, size_t n)
{
	struct trace_writer *w = fix_open_writer(dir, 1ULL << 30, 64ULL << 20,
	    0);
	struct trace_event e;

	for (size_t i = 0; i < n; i++) {
		fix_gen_event(&e, i);
		cr_assert_eq(trace_writer_add(w, &e), 0);
	}
	cr_assert_eq(trace_writer_close(w), 0);
}

struct trace_reader *
fix_open_reader(const char *dir)
{
	struct trace_reader *r;
	char *cause = NULL;
	int err = trace_reader_open(&r, dir, &cause);

	cr_assert_eq(err, 0, "reader open: %s", cause ? cause : "?");
	return r;
}

void
fix_assert_same(const struct trace_event *a, const struct trace_event *b)
{
	cr_assert_eq(a->ts, b->ts, "ts %llu != %llu",
	    (unsigned long long)a->ts, (unsigned long long)b->ts);
	cr_assert_eq(a->type, b->type, "type %u != %u at ts %llu", a->type,
	    b->type, (unsigned long long)a->ts);
	cr_assert_eq(a->tid, b->tid, "tid %u != %u (type %s)", a->tid, b->tid,
	    trace_type_name(a->type));
	cr_assert_eq(a->cpu, b->cpu);
	cr_assert_eq(a->flags & TRACE_CTX_MASK, b->flags & TRACE_CTX_MASK);
	for (unsigned i = 0; i < trace_type_nargs(a->type); i++)
		cr_assert_eq(a->arg[i], b->arg[i], "%s arg %u: %llx != %llx",
		    trace_type_name(a->type), i,
		    (unsigned long long)a->arg[i], (unsigned long long)b->arg[i]);
	cr_assert_eq(a->blob_len, b->blob_len, "%s blob length",
	    trace_type_name(a->type));
	if (a->blob_len)
		cr_assert(memcmp(a->blob, b->blob, a->blob_len) == 0);
}

int
fix_next(struct trace_reader *r, struct trace_event *ev)
{
	int more;

	while ((more = trace_reader_next(r, ev)) && ev->type == TT_STACKDEF)
		cr_assert(!trace_stack_malformed(ev));
	return more;
}

size_t
fix_count_defs(const char *dir)
{
	struct trace_reader *r = fix_open_reader(dir);
	struct trace_event ev;
	size_t n = 0;

	while (trace_reader_next(r, &ev))
		n += ev.type == TT_STACKDEF;
	trace_reader_close(r);
	return n;
}

size_t
fix_read_checked(struct trace_reader *r, size_t *per_cpu_max)
{
	struct trace_event out, e;
	size_t got = 0;

	while (trace_reader_next(r, &out)) {
		got++;
		if (out.type == TT_STACKDEF) {
			cr_assert(!trace_stack_malformed(&out));
			continue;
		}
		size_t i = fix_index_of(&out);

		fix_gen_event(&e, i);
		fix_assert_same(&out, &e);
		if (per_cpu_max && i + 1 > per_cpu_max[out.cpu])
			per_cpu_max[out.cpu] = i + 1;
	}
	return got;
}
