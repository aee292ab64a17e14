/*
 * diag-bench.c: the diagnosis at the paper's scale, after the graph is
 * built.
 *
 * usage: diag-bench TRACE
 * Builds the graph of TRACE with the default rules (not timed), then
 * times: the full diagnosis with the default options (hang search over
 * every process's main thread, classification, similar nodes, slices,
 * diff, recursion); the same at a given time (--at) on the thread with
 * the most events, in the middle of the trace, which always diagnoses a
 * node; and ten diag_add_node() calls on vertices of that thread. Prints
 * each time and "ok"/"FAIL" against the 200 ms target of the full
 * diagnosis.
 */
#include <stdio.h>
#include <stdlib.h>

#include "common/common.h"
#include "engine/engine.h"
#include "trace/trace.h"

#define TARGET_NS 200000000ULL

int
main(int argc, char **argv)
{
	struct trace_reader *r;
	struct graph *g;
	struct diag *d;
	char *cause = NULL;

	if (argc != 2) {
		fprintf(stderr, "usage: diag-bench TRACE\n");
		return 2;
	}
	struct rules *rs = rules_new();
	if (rules_add_defaults(rs, &cause) != 0 ||
	    trace_reader_open(&r, argv[1], &cause) != 0 ||
	    graph_build(r, rs, &g, &cause) != 0) {
		fprintf(stderr, "diag-bench: %s\n", cause ? cause : argv[1]);
		return 1;
	}
	printf("graph: %zu vertices, %zu edges, %zu threads\n",
	    graph_nvertices(g), graph_nedges(g), graph_nthreads(g));

	uint64_t t0 = now_ns();
	if (diag_new(g, NULL, &d, &cause) != 0) {
		fprintf(stderr, "diag-bench: %s\n", cause);
		return 1;
	}
	uint64_t full = now_ns() - t0;
	size_t culprits = 0;
	for (size_t h = 0; h < diag_nhangs(d); h++)
		culprits += diag_nculprits(d, h);
	printf("full diagnosis: %.1f ms, %zu hangs, %zu culprits: %s\n",
	    (double)full / 1e6, diag_nhangs(d), culprits,
	    full <= TARGET_NS ? "ok" : "FAIL (target 200 ms)");
	diag_free(d);

	/* the busiest thread, in the middle of the trace */
	uint32_t best = 0;
	for (uint32_t ti = 0; ti < graph_nthreads(g); ti++) {
		const struct graph_thread *t = graph_thread(g, ti);
		if (t->pid != 0 && !(t->flags & GRAPH_THREAD_KERNEL) &&
		    t->nevents > graph_thread(g, best)->nevents)
			best = ti;
	}
	const struct graph_thread *bt = graph_thread(g, best);
	size_t nv;
	const uint32_t *vs = graph_thread_vertices(g, best, &nv);
	struct diag_opts o = { .tid = bt->tid };
	if (nv > 0)
		o.at = graph_vertex_start(g, vs[nv / 2]) + 1;
	t0 = now_ns();
	if (diag_new(g, &o, &d, &cause) != 0) {
		fprintf(stderr, "diag-bench: %s\n", cause);
		return 1;
	}
	uint64_t at = now_ns() - t0;
	printf("diagnosis at a time (thread %u, %u events): %.1f ms, %zu "
	    "similar nodes, path of %zu\n", bt->tid, bt->nevents,
	    (double)at / 1e6, diag_nsimilar(d, 0), diag_npath(d, 0));
	t0 = now_ns();
	for (size_t i = 0; i < 10 && nv > 0; i++) {
		size_t h;
		diag_add_node(d, vs[(nv / 10) * i], &h);
	}
	printf("10 vertices diagnosed on demand: %.1f ms\n",
	    (double)(now_ns() - t0) / 1e6);
	diag_free(d);
	graph_free(g);
	trace_reader_close(r);
	rules_free(rs);
	return 0;
}
