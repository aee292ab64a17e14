/*
 * test-snapshot.c: trace_snapshot() against a writer that is still
 * writing: closed segments are hard links, the open one becomes a closed
 * copy of its complete chunks, the result reads back event for event;
 * --last keeps only recent segments; a failure leaves nothing; pruning
 * keeps the newest snapshots within count and size.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/common.h"
#include "trace/trace.h"
#include "store-fixture.h"

static char *
scratch(void)
{
	char tmpl[] = "/tmp/argus-snapunit-XXXXXX";

	cr_assert_not_null(mkdtemp(tmpl));
	return xstrdup(tmpl);
}

static void
rmtree(const char *dir)
{
	char *cmd = xasprintf("rm -rf '%s'", dir);

	cr_assert_eq(system(cmd), 0);
	free(cmd);
}

/* Events of a trace, and whether every segment is complete. */
static size_t
count(const char *dir, int *all_complete)
{
	struct trace_reader *r;
	struct trace_event ev;
	char *cause = NULL;
	size_t n = 0;

	cr_assert_eq(trace_reader_open(&r, dir, &cause), 0, "%s", cause);
	*all_complete = 1;
	for (size_t i = 0; i < trace_reader_nsegments(r); i++)
		if (!trace_reader_segment(r, i)->complete)
			*all_complete = 0;
	while (trace_reader_next(r, &ev))
		if (ev.cpu != TRACE_CPU_META)
			n++;
	cr_assert_eq(trace_reader_ndamage(r), 0, "%s: %s at %llu", dir,
	    trace_reader_ndamage(r) ? trace_reader_damage(r, 0)->reason : "",
	    trace_reader_ndamage(r) ? (unsigned long long)
	    trace_reader_damage(r, 0)->offset : 0ULL);
	trace_reader_close(r);
	return n;
}

Test(snapshot, while_writing)
{
	char *d = scratch(), *src = xasprintf("%s/t", d);
	char *dst = xasprintf("%s/s", d), *last = xasprintf("%s/l", d);
	struct trace_writer_opts o = { .segment_size = 64 << 10,
	    .size_bound = 8 << 20, .chunk_size = 16 << 10 };
	struct trace_writer *w;
	struct trace_snapshot_stats st;
	struct trace_event e;
	char *cause = NULL;
	size_t n = 400000;
	int complete;

	cr_assert_eq(trace_writer_open(&w, src, &o, &cause), 0, "%s", cause);
	for (size_t i = 0; i < n; i++) {
		fix_gen_event(&e, i);
		cr_assert_eq(trace_writer_add(w, &e), 0);
	}
	cr_assert_eq(trace_writer_flush(w), 0);
	/* the writer keeps its last segment open: no index yet */
	cr_assert_eq(trace_snapshot(src, dst, 0, NULL, NULL, &st, &cause), 0,
	    "%s", cause);
	cr_assert_gt(st.segments, 2);
	cr_assert_eq(st.linked, st.segments - 1, "linked %u of %u", st.linked,
	    st.segments);
	cr_assert_eq(st.copied, 1);
	cr_assert_eq(count(dst, &complete), n);
	cr_assert(complete, "the copied segment got its index");

	/* the last 10% of the time: fewer segments, the newest events */
	uint64_t span = st.last_ts - st.first_ts;

	cr_assert_eq(trace_snapshot(src, last, span / 10, NULL, NULL, &st,
	    &cause), 0, "%s", cause);
	cr_assert_lt(count(last, &complete), n / 2);

	/* a destination that is not empty is refused, and left alone */
	cr_assert_neq(trace_snapshot(src, dst, 0, NULL, NULL, &st, &cause), 0);
	cr_assert_not_null(cause);
	free(cause);
	cause = NULL;
	cr_assert_eq(count(dst, &complete), n);

	/* more events after the snapshot do not reach it */
	for (size_t i = n; i < n + 1000; i++) {
		fix_gen_event(&e, i);
		trace_writer_add(w, &e);
	}
	cr_assert_eq(trace_writer_close(w), 0);
	cr_assert_eq(count(dst, &complete), n);
	rmtree(d);
	free(d);
	free(src);
	free(dst);
	free(last);
}

Test(snapshot, prune_oldest_first)
{
	char *d = scratch(), *src = xasprintf("%s/t", d);
	char *snaps = xasprintf("%s/snaps", d);
	struct trace_writer *w;
	struct trace_snapshot_stats st;
	struct trace_event e;
	char *cause = NULL;
	size_t removed;
	static const char *const names[] = { "20260101-000001Z-a-1",
	    "20260101-000002Z-b-2", "20260101-000003Z-c-3",
	    "20260101-000004Z-d-4" };

	cr_assert_eq(trace_writer_open(&w, src, NULL, &cause), 0, "%s", cause);
	for (size_t i = 0; i < 1000; i++) {
		fix_gen_event(&e, i);
		trace_writer_add(w, &e);
	}
	cr_assert_eq(trace_writer_close(w), 0);
	cr_assert_eq(mkdir(snaps, 0700), 0);
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		char *p = xasprintf("%s/%s", snaps, names[i]);

		cr_assert_eq(trace_snapshot(src, p, 0, NULL, NULL, &st, &cause),
		    0, "%s", cause);
		free(p);
	}
	/* something that is not a snapshot is never touched */
	char *other = xasprintf("%s/0-notes", snaps);
	FILE *f;

	cr_assert_eq(mkdir(other, 0700), 0);
	char *note = xasprintf("%s/readme", other);
	cr_assert_not_null(f = fopen(note, "w"));
	fclose(f);

	cr_assert_eq(trace_snapshot_prune(snaps, 2, 0, &removed), 0);
	cr_assert_eq(removed, 2);
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		char *p = xasprintf("%s/%s", snaps, names[i]);
		struct stat sb;

		cr_assert_eq(stat(p, &sb) == 0, i >= 2, "%s", names[i]);
		free(p);
	}
	cr_assert_eq(access(note, F_OK), 0);
	/* a size bound of one byte keeps the newest only */
	cr_assert_eq(trace_snapshot_prune(snaps, 10, 1, &removed), 0);
	cr_assert_eq(removed, 1);
	char *p = xasprintf("%s/%s", snaps, names[3]);
	cr_assert_eq(access(p, F_OK), 0);
	free(p);
	free(note);
	free(other);
	rmtree(d);
	free(d);
	free(src);
	free(snaps);
}
