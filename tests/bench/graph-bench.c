/*
 * graph-bench.c: trace to event graph, end to end, on one core.
 *
 * usage: graph-bench TRACE
 * Opens TRACE with the store's reader, builds the graph with the default
 * rules, then rebuilds it after a rule change (a batch server and a
 * split symbol added). Prints events per second, the figures of the
 * graph, peak resident memory and the rebuild time; "ok"/"FAIL" against
 * the targets (2 s, 1 GiB, 1 s).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "common/common.h"
#include "engine/engine.h"
#include "trace/trace.h"

static double
cpu_secs(void)
{
	struct rusage u;

	getrusage(RUSAGE_SELF, &u);
	return (double)u.ru_utime.tv_sec + (double)u.ru_utime.tv_usec / 1e6 +
	    (double)u.ru_stime.tv_sec + (double)u.ru_stime.tv_usec / 1e6;
}

int
main(int argc, char **argv)
{
	struct trace_reader *r;
	struct graph *g;
	char *cause = NULL;
	struct graph_stats st;
	struct rusage ru;

	if (argc != 2) {
		fprintf(stderr, "usage: graph-bench TRACE\n");
		return 2;
	}
	struct rules *rs = rules_new();
	if (rules_add_defaults(rs, &cause) != 0) {
		fprintf(stderr, "graph-bench: %s\n", cause);
		return 1;
	}
	double c0 = cpu_secs();
	uint64_t t0 = now_ns();
	int err = trace_reader_open(&r, argv[1], &cause);
	if (err == 0)
		err = graph_build(r, rs, &g, &cause);
	if (err) {
		fprintf(stderr, "graph-bench: %s\n", cause ? cause :
		    graph_strerror(err));
		return 1;
	}
	uint64_t t1 = now_ns();
	double c1 = cpu_secs();
	graph_get_stats(g, &st);
	getrusage(RUSAGE_SELF, &ru);
	double secs = (double)(t1 - t0) / 1e9;
	double rss = (double)ru.ru_maxrss / 1024.0;
	printf("graph-bench: %llu events, %llu processes, %llu threads, "
	    "%llu messages\n", (unsigned long long)st.trace_events,
	    (unsigned long long)st.processes, (unsigned long long)st.threads,
	    (unsigned long long)st.messages);
	printf("graph-bench: %llu vertices, %llu edges\n",
	    (unsigned long long)st.vertices, (unsigned long long)st.edges);
	printf("graph-bench: trace to graph %.2f s (read+load %.2f s, build "
	    "%.2f s), %.1f M events/s; %.2f s of CPU  %s\n", secs,
	    (double)st.load_ns / 1e9, (double)st.build_ns / 1e9,
	    (double)st.trace_events / secs / 1e6, c1 - c0,
	    secs <= 2.0 ? "ok" : "FAIL (target 2 s)");
	printf("graph-bench: peak resident %.0f MiB (graph holds %.0f MiB)  "
	    "%s\n", rss, (double)st.memory / 1048576.0,
	    rss <= 1024 ? "ok" : "FAIL (target 1 GiB)");
	if (rules_parse(rs, "batch process daemon1*\nsplit symbol frame\n"
	    "cull process app3-*\n", "bench", &cause) != 0) {
		fprintf(stderr, "graph-bench: %s\n", cause);
		return 1;
	}
	t0 = now_ns();
	c0 = cpu_secs();
	err = graph_rebuild(g, rs, &cause);
	t1 = now_ns();
	c1 = cpu_secs();
	graph_get_stats(g, &st);
	printf("graph-bench: rebuild after a rule change %.2f s, %.2f s of CPU "
	    "(%llu vertices, %llu edges)  %s\n", (double)(t1 - t0) / 1e9,
	    c1 - c0,
	    (unsigned long long)st.vertices, (unsigned long long)st.edges,
	    (double)(t1 - t0) / 1e9 <= 1.0 ? "ok" : "FAIL (target 1 s)");
	graph_free(g);
	trace_reader_close(r);
	rules_free(rs);
	return err != 0;
}
