/*
 * cmd-diagnose.c: argus diagnose: build the event graph of a trace, find
 * the hangs and explain them (argus-diagnose(1)): the spinning node, its
 * similar normal nodes, the normal wake-up path, the culprits by depth, a
 * circular wait and its timeout. The work is engine/diag*.c; this file
 * parses options, chooses how much of the trace to build (a window
 * around --at; a streaming search and windows around the hangs with
 * --stream, or when the whole graph would not fit in memory; else the
 * whole graph) and prints the text report or the JSON object.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "common/common.h"
#include "common/progress.h"
#include "engine/engine.h"
#include "trace/trace.h"


static const char diagnose_usage[] =
    "usage: argus diagnose [TRACE] [--pid PID | --tid TID | --comm NAME]\n"
    "                      [--at TIME] [--threshold MS] [--pick N]\n"
    "                      [--rules FILE]... [--json] [--whole | --stream]\n"
    "                      [--memory SIZE] [--critical-path] [--stats]\n"
    "                      [--stack-depth N]\n"
    "\n"
    "Find the hangs in TRACE (default " ARGUS_DEFAULT_TRACE ") and explain\n"
    "them: what the hung thread did, similar normal nodes, the normal\n"
    "wake-up path, the culprits (recursively) and circular waits.\n"
    "\n"
    "  --pid PID        the main thread of process PID\n"
    "  --tid TID        thread TID\n"
    "  --comm NAME      threads named NAME (or the main thread of a\n"
    "                   process named NAME)\n"
    "  --at TIME        diagnose this time (seconds since the trace start,\n"
    "                   @NS or NS for absolute nanoseconds)\n"
    "  --threshold MS   shortest hang (default 1000)\n"
    "  --pick N         take similar node N (1 = most recent, the default)\n"
    "  --rules FILE     add the rules of FILE (argus-rules(5))\n"
    "  --json           print one JSON object (argus-diagnose(1))\n"
    "  --critical-path  print each hang's critical path alone: the\n"
    "                   wake-ups walked back from its end, who ended each\n"
    "                   wait, and how long each thread blocked or ran\n"
    "  --whole          build the graph of the whole trace, rather than\n"
    "                   of a window around TIME (--at) or of windows\n"
    "                   around the hangs a streaming search finds\n"
    "                   (--stream): the same answer\n"
    "  --stream         search the whole trace in one streaming pass and\n"
    "                   build windows around the hangs only (the same\n"
    "                   answer; on traces whose similar nodes lie far\n"
    "                   from their hangs, slower than the whole build;\n"
    "                   the default when the whole graph would not fit\n"
    "                   in the memory bound)\n"
    "  --memory SIZE    the most memory its graphs may take (default 2G,\n"
    "                   at most 4/5 of the memory available)\n"
    "  --stats          then, on standard error, where the time went:\n"
    "                   the streaming pass, the graphs built and the\n"
    "                   analysis, in seconds and nanoseconds per event,\n"
    "                   and the peak memory\n"
    "  --stack-depth N  frames of each stack the text shows (default 12;\n"
    "                   the JSON has them all)\n"
    "  -h, --help       show this help\n";

static int
parse_at(const char *s, uint64_t first_ts, uint64_t *out)
{
	unsigned long long v;
	size_t n = strspn(s, "0123456789");

	/* a long bare integer is absolute nanoseconds */
	if (n == strlen(s) && n >= 13) {
		uint64_t x;
		if (parse_u64(s, &x) != 0)
			return -1;
		*out = x;
		return 0;
	}
	if (cmd_parse_time(s, first_ts, &v) != 0)
		return -1;
	*out = v;
	return 0;
}

/*
 * Whether the diagnosis at time at found nothing there, said in one line:
 * with no chosen thread waiting then, --at takes the first chosen thread
 * (or the one named), and when that one does not run either (at the
 * trace's very start, say), its "hang" is of no kind and no length. Not
 * when the answer is a window's that could rest on more.
 */
static int
nothing_at(const struct diag *d, const char *at)
{
	const struct diag_hang *h = diag_nhangs(d) == 1 ? diag_hang(d, 0) :
	    NULL;
	uint64_t from, to;

	/* a window held to its bound tells its partial answer instead */
	if (h == NULL || h->kind != DIAG_NONE ||
	    diag_window_short(d, &from, &to))
		return 0;
	cmd_error("diagnose", "nothing to diagnose at %s: no chosen thread "
	    "waits then, and %s (%u) does not run (choose another time or "
	    "thread)", at, h->th.comm ? h->th.comm : "?", h->th.tid);
	return 1;
}

static int
num_arg(const char *s, uint64_t max, uint64_t *out)
{
	return parse_u64(s, out) != 0 || *out > max ? -1 : 0;
}

/* The search's bars: the pass's (chunks read), then, once it is over,
   the candidate hangs settled in their windows (diag_opts.progress). */
struct search_bars {
	struct cmd_progress *pass;
	struct progress *cands;
};

static void
on_search(void *arg, uint64_t done, uint64_t total)
{
	struct search_bars *b = arg;

	if (b->pass != NULL) {
		cmd_progress_end(b->pass);
		b->pass = NULL;
		b->cands = progress_new("argus diagnose: diagnosing", total);
	}
	progress_update(b->cands, done, total);
}

/* --stats: st, and total_ns for the whole command, on standard error. */
static void
print_stats(const struct diag_stats *st, uint64_t total_ns)
{
	struct rusage ru;

	if (st->merge_ns > 0)
		fprintf(stderr, "argus diagnose: merge: %" PRIu64 " events of "
		    "several hosts' traces in %.2f s, %.1f ns/event (their "
		    "messages read, clocks aligned, traces merged)\n",
		    st->merge_events, (double)st->merge_ns / 1e9,
		    st->merge_events ? (double)st->merge_ns /
		    (double)st->merge_events : 0.0);
	if (st->pass_ns > 0)
		fprintf(stderr, "argus diagnose: pass: %" PRIu64 " events in "
		    "%.2f s, %.1f ns/event, %" PRIu64 " candidate hang%s\n",
		    st->pass_events, (double)st->pass_ns / 1e9,
		    st->pass_events ? (double)st->pass_ns /
		    (double)st->pass_events : 0.0, st->candidates,
		    st->candidates == 1 ? "" : "s");
	uint64_t gns = st->load_ns + st->build_ns;
	fprintf(stderr, "argus diagnose: graphs: %" PRIu64 " built of %" PRIu64
	    " events in %.2f s, %.1f ns/event (loading %.2f s, finishing "
	    "%.2f s)\n", st->graphs, st->graph_events, (double)gns / 1e9,
	    st->graph_events ? (double)gns / (double)st->graph_events : 0.0,
	    (double)st->load_ns / 1e9, (double)st->build_ns / 1e9);
	if (getrusage(RUSAGE_SELF, &ru) != 0)
		ru.ru_maxrss = 0;
	fprintf(stderr, "argus diagnose: analysis: %.2f s; total %.2f s, peak "
	    "memory %.0f MiB\n", (double)st->analysis_ns / 1e9,
	    (double)total_ns / 1e9, (double)ru.ru_maxrss / 1024.0);
}

int
cmd_diagnose(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "tid", required_argument, NULL, 't' },
		{ "comm", required_argument, NULL, 'c' },
		{ "at", required_argument, NULL, 'a' },
		{ "threshold", required_argument, NULL, 'T' },
		{ "pick", required_argument, NULL, 'k' },
		CMD_RULES_OPTION,
		{ "json", no_argument, NULL, 'j' },
		{ "critical-path", no_argument, NULL, 'P' },
		{ "whole", no_argument, NULL, 'W' },
		{ "stream", no_argument, NULL, 'S' },
		{ "stats", no_argument, NULL, 's' },
		{ "stack-depth", required_argument, NULL, 'D' },
		CMD_MEMORY_OPTION,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct diag_opts o = { 0 };
	struct diag_stats st = { 0 };
	uint64_t t0 = now_ns();
	struct cmd_rules_opts ro = { 0 };
	const char *at = NULL;
	int c, json = 0, whole = 0, stream = 0, rc = 1, nsel = 0;
	uint64_t v;
	char *cause = NULL;

	cmd_engine_heap();
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'p': case 't':
			if (num_arg(optarg, UINT32_MAX, &v) != 0 || v == 0) {
				cmd_rules_opts_free(&ro);
				return cmd_usage_error("diagnose", "bad %s "
				    "'%s'", c == 'p' ? "pid" : "tid", optarg);
			}
			if (c == 'p')
				o.pid = (uint32_t)v;
			else
				o.tid = (uint32_t)v;
			nsel++;
			break;
		case 'c':
			o.comm = optarg;
			nsel++;
			break;
		case 'a':
			at = optarg;
			break;
		case 'T':
			if (num_arg(optarg, 3600000, &v) != 0 || v == 0) {
				cmd_rules_opts_free(&ro);
				return cmd_usage_error("diagnose", "bad "
				    "threshold '%s' (milliseconds)", optarg);
			}
			o.threshold_ns = v * 1000000ULL;
			break;
		case 'k':
			if (num_arg(optarg, 1000000, &v) != 0 || v == 0) {
				cmd_rules_opts_free(&ro);
				return cmd_usage_error("diagnose", "bad pick "
				    "'%s' (1 is the first)", optarg);
			}
			o.pick = (unsigned)v;
			break;
		case CMD_OPT_RULES:
			(void)cmd_rules_option(&ro, c, optarg);
			break;
		case 'D':
			if (num_arg(optarg, TRACE_STACK_MAX, &v) != 0 ||
			    v == 0) {
				cmd_rules_opts_free(&ro);
				return cmd_usage_error("diagnose", "bad stack "
				    "depth '%s' (1 to %d frames)", optarg,
				    TRACE_STACK_MAX);
			}
			o.stack_depth = (unsigned)v;
			break;
		case 'j':
			json = 1;
			break;
		case 'P':
			o.cpath_only = 1;
			break;
		case 'W':
			whole = 1;
			break;
		case 'S':
			stream = 1;
			break;
		case 's':
			o.stats = &st;
			break;
		case CMD_OPT_MEMORY:
			if ((rc = cmd_memory_option("diagnose", optarg)) != 0) {
				cmd_rules_opts_free(&ro);
				return rc;
			}
			rc = 1;
			break;
		case 'h':
			fputs(diagnose_usage, stdout);
			cmd_rules_opts_free(&ro);
			return 0;
		default:
			cmd_rules_opts_free(&ro);
			return cmd_usage_error("diagnose", "unknown option "
			    "'%s'", argv[optind - 1]);
		}
	}
	if (stream && (whole || at != NULL)) {
		cmd_rules_opts_free(&ro);
		return cmd_usage_error("diagnose", "--stream searches the "
		    "whole trace: not with %s", whole ? "--whole" : "--at");
	}
	if (nsel > 1) {
		cmd_rules_opts_free(&ro);
		return cmd_usage_error("diagnose", "--pid, --tid and --comm "
		    "are exclusive");
	}
	struct rules *rs = cmd_rules_load("diagnose", &ro);
	if (rs == NULL)
		return 1;
	const char *path = optind < argc ? argv[optind] : ARGUS_DEFAULT_TRACE;
	struct hosts_report *hosts = NULL;
	uint64_t tm = now_ns();
	struct trace_reader *r = cmd_open_traces("diagnose",
	    (const char *const *)argv + optind, (size_t)(argc - optind), &hosts);
	if (r == NULL) {
		rules_free(rs);
		return 1;
	}
	if (hosts != NULL) {
		path = "the merged traces";
		st.merge_ns = now_ns() - tm;
		st.merge_events = trace_reader_info(r)->nevents;
	}
	o.hosts = hosts;
	struct graph *g = NULL;
	struct diag *d = NULL;
	const struct trace_info *in = trace_reader_info(r);
	int err;

	if (at != NULL && !whole && in->first_ts != 0) {
		/* a window around the time: its graph only */
		if (parse_at(at, in->first_ts, &o.at) != 0) {
			rc = cmd_usage_error("diagnose", "bad time '%s' "
			    "(seconds since the trace start, or @NS)", at);
			goto out;
		}
		if (cmd_check_time("diagnose", at, o.at, in->first_ts,
		    in->last_ts) != 0)
			goto out;
		struct cmd_progress *pg = cmd_progress("diagnose", "loading",
		    r);
		err = diag_at_window(r, rs, &o, &g, &d, &cause);
		cmd_progress_end(pg);
		if (err == GRAPH_ERANGE) {	/* the options name nobody */
			cmd_error("diagnose", "%s", cause ? cause :
			    graph_strerror(err));
			goto out;
		} else if (err) {
			cmd_error("diagnose", "%s: %s", path, cause ? cause :
			    graph_strerror(err));
			goto out;
		}
	}
	/* a whole graph beyond memory: the streaming search, unless the
	   user asked for the whole graph */
	double need, bound;
	if (d == NULL && at == NULL && !whole && !stream &&
	    in->first_ts != 0 && !cmd_whole_fits(r, &need, &bound)) {
		fprintf(stderr, "argus diagnose: the whole graph would need "
		    "about %.1f GiB, more than the %.1f GiB bound (--memory): "
		    "searching in one streaming pass (--stream)\n", need,
		    bound);
		stream = 1;
	}
	if (d == NULL && !stream && cmd_check_whole("diagnose", r) != 0)
		goto out;
	/* the search's graphs are held to the memory bound */
	if (stream && !cmd_whole_fits(r, &need, &bound))
		o.max_events = cmd_search_events();
	if (at == NULL && !whole && in->first_ts != 0 && stream) {
		/* one streaming pass, then windows around the hangs */
		cmd_engine_heap_windows();
		struct search_bars bars = { cmd_progress("diagnose",
		    "searching", r), NULL };
		o.progress = on_search;
		o.progress_arg = &bars;
		err = diag_search(r, rs, &o, json, in->first_ts, stdout,
		    NULL, NULL, &cause);
		cmd_progress_end(bars.pass);
		progress_free(bars.cands);
		if (err) {
			cmd_error("diagnose", "%s: %s", path, cause ? cause :
			    graph_strerror(err));
			goto out;
		}
		rc = fflush(stdout) == 0 ? 0 : 1;
		goto out;
	}
	if (d == NULL) {
		struct cmd_progress *pg = cmd_progress("diagnose", "loading",
		    r);
		err = graph_build(r, rs, &g, &cause);
		cmd_progress_end(pg);
		if (err) {
			cmd_error("diagnose", "%s: %s", path, cause ? cause :
			    graph_strerror(err));
			goto out;
		}
		diag_stats_add_graph(o.stats, g);
	}
	uint64_t ta = now_ns();
	uint64_t first = in->first_ts;
	if (first == 0 || (graph_first_ts(g) != 0 && graph_first_ts(g) < first))
		first = graph_first_ts(g);
	if (d == NULL && at != NULL && parse_at(at, first, &o.at) != 0) {
		rc = cmd_usage_error("diagnose", "bad time '%s' (seconds since "
		    "the trace start, or @NS)", at);
		goto out;
	}
	if (d == NULL && at != NULL && cmd_check_time("diagnose", at, o.at,
	    first, in->last_ts) != 0) {
		rc = 1;
		goto out;
	}
	if (d == NULL && (err = diag_new(g, &o, &d, &cause)) != 0) {
		cmd_error("diagnose", "%s", cause ? cause : graph_strerror(err));
		goto out;
	}
	if (at != NULL && nothing_at(d, at))
		goto out;
	if (json)
		diag_write_json(d, stdout);
	else
		diag_write_text(d, stdout, first);
	rc = fflush(stdout) == 0 ? 0 : 1;
	if (o.stats != NULL)
		st.analysis_ns += now_ns() - ta;
out:
	if (o.stats != NULL && rc == 0)
		print_stats(&st, now_ns() - t0);
	free(cause);
	diag_free(d);
	graph_free(g);
	trace_reader_close(r);
	hosts_report_free(hosts);
	rules_free(rs);
	return rc;
}
