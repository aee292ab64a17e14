/*
 * cmd-graph.c: argus graph: build the event graph of a trace and print its
 * figures (--stats), the Graphviz neighbourhood of a vertex (--dot) or the
 * overconnection suspects (--suspects), or check its invariants (--check).
 * Rules: the defaults of argus plus every --rules FILE, in order
 * (argus-rules(5)).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "cmd.h"
#include "common/common.h"
#include "engine/engine.h"
#include "trace/trace.h"

static const char graph_usage[] =
    "usage: argus graph [TRACE] [--rules FILE]... [--no-default-rules]\n"
    "                   [--stats | --dot VERTEX [--depth N] | --suspects "
    "[--limit N] |\n"
    "                    --check | --print-rules] [--memory SIZE]\n"
    "\n"
    "Build the event graph of TRACE (default " ARGUS_DEFAULT_TRACE ").\n"
    "\n"
    "  --stats              vertices and edges by kind, processes, threads,\n"
    "                       messages, build time and memory (the default)\n"
    "  --dot VERTEX         write the neighbourhood of VERTEX as a Graphviz\n"
    "                       digraph; VERTEX is a vertex number (#N or N) or\n"
    "                       TID@TIME (the vertex of thread TID at TIME, in\n"
    "                       seconds from the trace start or @NS)\n"
    "  --depth N            edges away from VERTEX to include (default 2)\n"
    "  --suspects           list vertices talking to two or more processes\n"
    "                       or with several incoming strong edges\n"
    "  --limit N            suspects to list (default 50)\n"
    "  --rules FILE         add the rules of FILE (argus-rules(5))\n"
    "  --no-default-rules   start from no rules instead of the defaults\n"
    "  --print-rules        print the rules in force and exit\n"
    "  --check              verify the graph's invariants (exit 1 if not)\n"
    "  --memory SIZE        the most memory the graph may take (default 2G,\n"
    "                       at most 4/5 of the memory available)\n"
    "  -h, --help           show this help\n";

static void
print_stats(const struct graph *g)
{
	struct graph_stats st;
	struct rusage ru;
	char b1[32], b2[32], b3[32];

	graph_get_stats(g, &st);
	getrusage(RUSAGE_SELF, &ru);
	printf("%-12s%llu read, %llu in compact form, %llu lost by the "
	    "kernel\n", "events:", (unsigned long long)st.trace_events,
	    (unsigned long long)st.events, (unsigned long long)st.lost);
	printf("%-12s%llu processes, %llu threads\n", "tasks:",
	    (unsigned long long)st.processes,
	    (unsigned long long)st.threads);
	printf("%-12s%llu\n", "messages:", (unsigned long long)st.messages);
	printf("%-12s%llu:", "vertices:", (unsigned long long)st.vertices);
	for (unsigned k = 0; k < GV_NKINDS; k++)
		if (st.vertices_by_kind[k])
			printf(" %s %llu", graph_vertex_kind_name(k),
			    (unsigned long long)st.vertices_by_kind[k]);
	printf("\n%-12s%llu:", "edges:", (unsigned long long)st.edges);
	for (unsigned k = 0; k < GE_NKINDS; k++)
		if (st.edges_by_kind[k])
			printf(" %s %llu%s", graph_edge_kind_name(k),
			    (unsigned long long)st.edges_by_kind[k],
			    graph_edge_kind_weak(k) ? " (weak)" : "");
	printf("\n%-12sload %s, build %s\n", "time:",
	    fmt_duration(b1, sizeof(b1), st.load_ns),
	    fmt_duration(b2, sizeof(b2), st.build_ns));
	printf("%-12s%s held by the graph, %s peak resident\n", "memory:",
	    fmt_bytes(b3, sizeof(b3), st.memory),
	    fmt_bytes(b1, sizeof(b1), (uint64_t)ru.ru_maxrss * 1024));
}

static int
parse_vertex(const struct graph *g, const char *s, uint64_t first_ts,
    uint32_t *out)
{
	uint64_t v;
	const char *at = strchr(s, '@');

	if (at == NULL) {
		if (*s == '#')
			s++;
		if (parse_u64(s, &v) != 0 || v >= graph_nvertices(g))
			return -1;
		*out = (uint32_t)v;
		return 0;
	}
	char *tid = strndup(s, (size_t)(at - s));
	unsigned long long ts;
	int bad = parse_u64(tid, &v) != 0 || v > UINT32_MAX;
	free(tid);
	if (bad)
		return -1;
	/* "TID@@NS" is absolute, "TID@1.5" relative to the start */
	if (cmd_parse_time(at + 1, first_ts, &ts) != 0)
		return -1;
	*out = graph_vertex_at(g, (uint32_t)v, ts);
	return *out == GRAPH_NONE ? -1 : 0;
}

static void
print_suspects(const struct graph *g, size_t limit)
{
	uint32_t *s = xmalloc((limit ? limit : 1) * sizeof(*s));
	size_t n = graph_suspects(g, s, limit);
	char buf[256];

	printf("%zu suspect vertices (add a rule: split, batch or cull; see "
	    "argus-rules(5))\n", n);
	for (size_t i = 0; i < n && i < limit; i++) {
		graph_vertex_describe(g, s[i], buf, sizeof(buf));
		const struct graph_thread *t = graph_thread(g,
		    graph_vertex(g, s[i])->thread);
		printf("%-48s process %s, %u peer processes, %u strong "
		    "in-edges\n", buf, t->process, graph_vertex_peers(g, s[i]),
		    graph_vertex_strong_in(g, s[i]));
	}
	free(s);
}

int
cmd_graph(int argc, char **argv)
{
	static const struct option opts[] = {
		CMD_RULES_OPTION,
		CMD_NO_DEFAULT_RULES_OPTION,
		{ "print-rules", no_argument, NULL, 'P' },
		{ "check", no_argument, NULL, 'C' },
		{ "stats", no_argument, NULL, 's' },
		{ "dot", required_argument, NULL, 'd' },
		{ "depth", required_argument, NULL, 'D' },
		{ "suspects", no_argument, NULL, 'S' },
		{ "limit", required_argument, NULL, 'l' },
		CMD_MEMORY_OPTION,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct cmd_rules_opts ro = { 0 };
	int c, print_rules = 0, mode = 's', rc = 1;
	const char *dot = NULL;
	uint64_t depth = 2, limit = 50;
	char *cause = NULL;

	cmd_engine_heap();
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case CMD_OPT_RULES:
		case CMD_OPT_NO_DEFAULT_RULES:
			(void)cmd_rules_option(&ro, c, optarg);
			break;
		case CMD_OPT_MEMORY:
			if ((rc = cmd_memory_option("graph", optarg)) != 0) {
				cmd_rules_opts_free(&ro);
				return rc;
			}
			rc = 1;
			break;
		case 'P': print_rules = 1; break;
		case 's': mode = 's'; break;
		case 'C': mode = 'C'; break;
		case 'S': mode = 'S'; break;
		case 'd': mode = 'd'; dot = optarg; break;
		case 'D':
			if (parse_u64(optarg, &depth) != 0 || depth > 100) {
				cmd_rules_opts_free(&ro);
				return cmd_usage_error("graph", "bad depth "
				    "'%s'", optarg);
			}
			break;
		case 'l':
			if (parse_u64(optarg, &limit) != 0 || limit > 1000000) {
				cmd_rules_opts_free(&ro);
				return cmd_usage_error("graph", "bad limit "
				    "'%s'", optarg);
			}
			break;
		case 'h':
			fputs(graph_usage, stdout);
			cmd_rules_opts_free(&ro);
			return 0;
		default:
			cmd_rules_opts_free(&ro);
			return cmd_usage_error("graph", "unknown option '%s'",
			    argv[optind - 1]);
		}
	}
	if (argc - optind > 1) {
		cmd_rules_opts_free(&ro);
		return cmd_usage_error("graph", "one trace at a time");
	}
	struct rules *rs = cmd_rules_load("graph", &ro);

	if (rs == NULL)
		return 1;
	if (print_rules) {
		rules_write(rs, stdout);
		rules_free(rs);
		return 0;
	}
	const char *path = optind < argc ? argv[optind] : ARGUS_DEFAULT_TRACE;
	struct trace_reader *r = cmd_open_trace("graph", path);
	if (r == NULL) {
		rules_free(rs);
		return 1;
	}
	struct graph *g = NULL;
	if (cmd_check_whole("graph", r) != 0) {
		trace_reader_close(r);
		rules_free(rs);
		return 1;
	}
	struct cmd_progress *pg = cmd_progress("graph", "loading", r);
	int err = graph_build(r, rs, &g, &cause);

	cmd_progress_end(pg);
	if (err) {
		cmd_error("graph", "%s: %s", path, cause ? cause :
		    graph_strerror(err));
		free(cause);
		goto out;
	}
	switch (mode) {
	case 's':
		printf("%-12s%s\n", "trace:", path);
		printf("%-12s%zu\n", "rules:", rules_count(rs));
		print_stats(g);
		rc = 0;
		break;
	case 'C':
		if ((err = graph_check(g, &cause)) != 0) {
			cmd_error("graph", "%s: %s", path, cause);
			free(cause);
			break;
		}
		printf("%s: %zu vertices, %zu edges: invariants hold\n", path,
		    graph_nvertices(g), graph_nedges(g));
		rc = 0;
		break;
	case 'S':
		print_suspects(g, (size_t)limit);
		rc = 0;
		break;
	case 'd': {
		uint32_t v;
		if (parse_vertex(g, dot, trace_reader_info(r)->first_ts,
		    &v) != 0) {
			rc = cmd_usage_error("graph", "no vertex '%s' (a "
			    "vertex number below %zu, or TID@TIME)", dot,
			    graph_nvertices(g));
			break;
		}
		graph_write_dot(g, v, (unsigned)depth, stdout);
		rc = 0;
		break;
	}
	}
out:
	graph_free(g);
	trace_reader_close(r);
	rules_free(rs);
	return rc;
}
