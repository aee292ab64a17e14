/*
 * test-stack-bad.c: malformed TT_STACK records (no frame, a cut frame,
 * more than TRACE_STACK_MAX) are left out by the reader, with one
 * warning for the whole trace, and by the graph load.
 *
 * The trace on disk is the store fixture's stream (fix_gen_event()) with
 * malformed stacks slipped in after some of its events, on their CPU and
 * at their time: every reading path must give back exactly the stream,
 * and the damage callback must be called once.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "common/common.h"
#include "engine/engine.h"
#include "trace/trace.h"
#include "graph-fixture.h"
#include "store-check.h"

#define NGEN 6000		/* several chunks of each CPU */
#define EVERY 500		/* a malformed stack after each 500th event */
#define NDEFS 2			/* the definitions of the generator's two
				   stacks (the malformed ones have none) */

static uint64_t big[200];	/* frames enough for any stack too long */

/* The k-th malformed stack, at the time and on the CPU of e. */
static void
bad_stack(struct trace_event *b, const struct trace_event *e, size_t k)
{
	memset(b, 0, sizeof(*b));
	b->ts = e->ts;
	b->cpu = e->cpu;
	b->tid = e->tid;
	b->type = TT_STACK;
	b->arg[0] = e->tid;
	b->blob = big;
	switch (k % 3) {
	case 0:
		b->blob_len = 0;
		break;
	case 1:
		b->blob_len = (TRACE_STACK_MAX + 1) * 8;
		break;
	default:
		b->blob_len = sizeof(big);
		break;
	}
}

/* Writes the stream with the malformed stacks into dir; returns how
   many malformed ones. */
static size_t
write_trace(const char *dir)
{
	struct trace_writer *w = fix_open_writer(dir, 1ULL << 30, 64ULL << 20,
	    0);
	struct trace_event e, b;
	size_t nbad = 0;

	for (size_t i = 0; i < sizeof(big) / 8; i++)
		big[i] = 0x555500001000ULL + i * 16;
	for (size_t i = 0; i < NGEN; i++) {
		fix_gen_event(&e, i);
		cr_assert_eq(trace_writer_add(w, &e), 0);
		if (i % EVERY == EVERY / 2) {
			bad_stack(&b, &e, nbad++);
			cr_assert_eq(trace_writer_add(w, &b), 0);
		}
	}
	cr_assert_eq(trace_writer_close(w), 0);
	return nbad;
}

struct warned {
	unsigned n;		/* damage reports */
	unsigned stacks;	/* of them, about malformed stacks */
};

static void
on_damage(const struct trace_damage *d, void *arg)
{
	struct warned *wd = arg;

	wd->n++;
	if (strstr(d->reason, "malformed stack") != NULL)
		wd->stacks++;
}

static struct trace_reader *
open_watched(const char *dir, struct warned *wd)
{
	struct trace_reader *r = fix_open_reader(dir);

	memset(wd, 0, sizeof(*wd));
	trace_reader_on_damage(r, on_damage, wd);
	return r;
}

static void
assert_one_warning(struct trace_reader *r, const struct warned *wd)
{
	struct trace_reader_stats st;

	cr_assert_eq(wd->stacks, 1, "%u warnings about stacks", wd->stacks);
	cr_assert_eq(wd->n, 1, "%u warnings in all", wd->n);
	cr_assert_eq(trace_reader_ndamage(r), 1);
	trace_reader_stats(r, &st);
	cr_assert_eq(st.damaged, 1);
}

Test(stack_bad, reader_next_skips_them_warns_once)
{
	char *dir = fix_tmpdir();
	struct warned wd;

	cr_assert_gt(write_trace(dir), 3);
	struct trace_reader *r = open_watched(dir, &wd);
	/* each event read must be the generator's: a malformed stack read
	   back would differ from the event of its time */
	cr_assert_eq(fix_read_checked(r, NULL), NGEN + NDEFS);
	assert_one_warning(r, &wd);
	/* read again from the start: still one warning */
	cr_assert_eq(trace_reader_seek(r, 0), 0);
	cr_assert_eq(fix_read_checked(r, NULL), NGEN + NDEFS);
	cr_assert_eq(wd.stacks, 1);
	trace_reader_close(r);
	fix_rm_rf(dir);
	free(dir);
}

/* trace_reader_read(), with and without decoding ahead. */
Test(stack_bad, reader_batches_skip_them)
{
	char *dir = fix_tmpdir();
	struct trace_event evs[100], want;
	struct warned wd;

	write_trace(dir);
	for (int ahead = 0; ahead < 2; ahead++) {
		struct trace_reader *r = open_watched(dir, &wd);
		size_t got = 0, n;

		if (ahead)
			cr_assert_eq(trace_reader_decode_ahead(r), 0);
		while ((n = trace_reader_read(r, evs, 100)) > 0) {
			for (size_t i = 0; i < n; i++) {
				if (evs[i].type == TT_STACKDEF)
					continue;
				fix_gen_event(&want, fix_index_of(&evs[i]));
				fix_assert_same(&evs[i], &want);
			}
			got += n;
		}
		cr_assert_eq(got, NGEN + NDEFS, "ahead %d: %zu events", ahead,
		    got);
		assert_one_warning(r, &wd);
		trace_reader_close(r);
	}
	fix_rm_rf(dir);
	free(dir);
}

/* The bulk decoding of chunks, on its own buffers. */
Test(stack_bad, chunk_decode_skips_them)
{
	char *dir = fix_tmpdir();
	struct warned wd;

	write_trace(dir);
	struct trace_reader *r = open_watched(dir, &wd);
	struct trace_chunk_buf *b = trace_chunk_buf_new();
	size_t got = 0;

	for (size_t i = 0; i < trace_reader_nchunks(r); i++) {
		const struct trace_chunk_info *ci = trace_reader_chunk(r, i);
		struct trace_event *evs = xcalloc(ci->count ? ci->count : 1,
		    sizeof(*evs));
		size_t n = trace_reader_decode_chunk(r, i, b, evs);

		for (size_t k = 0; k < n; k++) {
			struct trace_event want;

			if (evs[k].type == TT_THREAD ||
			    evs[k].type == TT_STACKDEF)
				continue;
			fix_gen_event(&want, fix_index_of(&evs[k]));
			fix_assert_same(&evs[k], &want);
			got++;
		}
		free(evs);
	}
	cr_assert_eq(got, NGEN);
	assert_one_warning(r, &wd);
	trace_chunk_buf_free(b);
	trace_reader_close(r);
	fix_rm_rf(dir);
	free(dir);
}

/* Stacks of the graph: how many, each of 1 to TRACE_STACK_MAX frames. */
static size_t
graph_stacks(const struct graph *g)
{
	size_t ns = 0;

	for (uint32_t t = 0; t < graph_nthreads(g); t++) {
		const struct graph_thread *th = graph_thread(g, t);

		for (uint32_t i = 0; i < th->nevents; i++) {
			const struct graph_event *ev = graph_event(g, t, i);
			size_t nf;

			if (ev->type != TT_STACK)
				continue;
			cr_assert_not_null(graph_stack(g, ev, &nf));
			cr_assert(nf >= 1 && nf <= TRACE_STACK_MAX,
			    "a stack of %zu frames", nf);
			ns++;
		}
	}
	return ns;
}

Test(stack_bad, graph_from_reader_has_only_the_good)
{
	char *dir = fix_tmpdir();
	struct trace_event e;
	struct graph *g = NULL;
	char *cause = NULL;
	struct warned wd;
	size_t good = 0;

	write_trace(dir);
	for (size_t i = 0; i < NGEN; i++) {
		fix_gen_event(&e, i);
		good += e.type == TT_STACK;
	}
	cr_assert_gt(good, 0);
	struct trace_reader *r = open_watched(dir, &wd);
	cr_assert_eq(graph_build(r, NULL, &g, &cause), 0, "%s",
	    cause ? cause : "");
	cr_assert_eq(graph_stacks(g), good);
	assert_one_warning(r, &wd);
	graph_free(g);
	trace_reader_close(r);
	fix_rm_rf(dir);
	free(dir);
}

/* Events handed to the graph as an array, not read from a trace. */
Test(stack_bad, graph_load_skips_them)
{
	static struct fx f;
	static const uint64_t two[2] = { 0x401000, 0x402000 };
	enum { M = 100 };

	fx_init(&f);
	fx_thread(&f, M, M, "app");
	fx_run(&f, 0, M);
	fx_ev(&f, M, TT_STACK, M, 0, 0, 0);
	f.ev[f.n - 1].blob = two;
	f.ev[f.n - 1].blob_len = sizeof(two);
	/* a cut frame; none; a NULL blob; one frame too many */
	const uint32_t lens[] = { 12, 0, 8, (TRACE_STACK_MAX + 1) * 8 };
	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		fx_ev(&f, M, TT_STACK, M, 0, 0, 0);
		f.ev[f.n - 1].blob = k == 2 ? NULL : big;
		f.ev[f.n - 1].blob_len = lens[k];
	}
	fx_ev(&f, M, TT_SYS_ENTER, SYS_getpid, 0, 0, 0);
	fx_ev(&f, M, TT_SYS_EXIT, SYS_getpid, 0, 0, 0);
	fx_block(&f, M, 0, SYS_poll, 0);
	struct graph *g = fx_build(&f, NULL);
	cr_assert_not_null(g);
	cr_assert_eq(graph_stacks(g), 1);
	/* the well-formed one is whole, and the thread's other events are
	   there: sys_enter, sys_exit, then the block's */
	uint32_t t = graph_thread_find(g, M);
	unsigned ns = 0, nsys = 0;
	for (uint32_t i = 0; i < graph_thread(g, t)->nevents; i++) {
		const struct graph_event *ev = graph_event(g, t, i);
		size_t nf;

		if (ev->type == TT_STACK) {
			const uint64_t *fr = graph_stack(g, ev, &nf);
			cr_assert_eq(nf, 2);
			cr_assert_eq(fr[0], two[0]);
			cr_assert_eq(fr[1], two[1]);
			ns++;
		}
		nsys += ev->type == TT_SYS_ENTER || ev->type == TT_SYS_EXIT;
	}
	cr_assert_eq(ns, 1);
	cr_assert_eq(nsys, 3);
	graph_free(g);
}

Test(stack_bad, malformed_predicate)
{
	struct trace_event e = { .type = TT_STACK, .blob = big };

	e.blob_len = 8;
	cr_assert_eq(trace_stack_malformed(&e), 0);
	e.blob_len = TRACE_STACK_MAX * 8;
	cr_assert_eq(trace_stack_malformed(&e), 0);
	e.blob_len = TRACE_STACK_MAX * 8 + 8;
	cr_assert_eq(trace_stack_malformed(&e), 1);
	e.blob_len = 20;
	cr_assert_eq(trace_stack_malformed(&e), 1);
	e.blob_len = 0;
	cr_assert_eq(trace_stack_malformed(&e), 1);
	e.blob = NULL;
	e.blob_len = 8;
	cr_assert_eq(trace_stack_malformed(&e), 1);
	/* another type with no blob is no stack at all */
	e.type = TT_SYS_ENTER;
	e.blob_len = 0;
	cr_assert_eq(trace_stack_malformed(&e), 0);
}
