/*
 * cmd-export.c: argus export: a trace as Trace Event Format JSON for
 * Perfetto UI and chrome://tracing (argus-export(1)). The work is
 * engine/export.c; this file parses options, builds the graph and the
 * diagnosis unless told not to, and picks the output.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "common/common.h"
#include "engine/engine.h"
#include "trace/trace.h"

static const char export_usage[] =
    "usage: argus export [TRACE] [--format chrome] [-o FILE]\n"
    "                    [--from TIME] [--to TIME] [--pid PID]...\n"
    "                    [--diagnose | --no-diagnosis] [--rules FILE]...\n"
    "                    [--no-default-rules] [--memory SIZE]\n"
    "\n"
    "Write TRACE (default " ARGUS_DEFAULT_TRACE ") as Trace Event Format\n"
    "JSON, which Perfetto UI (ui.perfetto.dev) and chrome://tracing open:\n"
    "a track per thread, slices for running and for each wait, flow arrows\n"
    "for wake-ups and messages, the hangs and their culprits.\n"
    "\n"
    "  --format chrome   the output format (the only one)\n"
    "  -o, --output FILE write to FILE (default: standard output)\n"
    "  --from TIME       start of the window (seconds since the trace\n"
    "                    start, or @NS)\n"
    "  --to TIME         end of the window\n"
    "  --pid PID         only the threads of process PID (repeatable)\n"
    "  --diagnose        add the report of argus diagnose\n"
    "  --no-diagnosis    no hangs, culprits or message flows: memory then\n"
    "                    stays bounded whatever the size of the trace\n"
    "  --rules FILE      add the rules of FILE (argus-rules(5))\n"
    "  --no-default-rules  start from no rules instead of the defaults\n"
    "  --memory SIZE     the most memory the graph may take (default 2G,\n"
    "                    at most 4/5 of the memory available)\n"
    "  -h, --help        show this help\n";

struct xargs {
	const char *out, *from, *to, *path;
	const char *const *paths;	/* several hosts' traces: npaths > 1 */
	size_t npaths;
	uint32_t *pids;
	size_t npids;
	struct cmd_rules_opts ro;
	int report, nodiag;
};

static int
parse(int argc, char **argv, struct xargs *a)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'F' },
		{ "output", required_argument, NULL, 'o' },
		{ "from", required_argument, NULL, 'f' },
		{ "to", required_argument, NULL, 't' },
		{ "pid", required_argument, NULL, 'p' },
		{ "diagnose", no_argument, NULL, 'd' },
		{ "no-diagnosis", no_argument, NULL, 'D' },
		CMD_RULES_OPTION,
		CMD_NO_DEFAULT_RULES_OPTION,
		CMD_MEMORY_OPTION,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'F':
			if (strcmp(optarg, "chrome") != 0 &&
			    strcmp(optarg, "json") != 0)
				return cmd_usage_error("export", "unknown format "
				    "'%s' (chrome)", optarg);
			break;
		case 'o': a->out = optarg; break;
		case 'f': a->from = optarg; break;
		case 't': a->to = optarg; break;
		case 'p':
			if (parse_u64(optarg, &v) != 0 || v == 0 ||
			    v > UINT32_MAX)
				return cmd_usage_error("export", "bad pid '%s'",
				    optarg);
			a->pids = xreallocarray(a->pids, a->npids + 1,
			    sizeof(*a->pids));
			a->pids[a->npids++] = (uint32_t)v;
			break;
		case CMD_OPT_MEMORY:
			if ((c = cmd_memory_option("export", optarg)) != 0)
				return c;
			break;
		case 'd': a->report = 1; break;
		case 'D': a->nodiag = 1; break;
		case 'h':
			fputs(export_usage, stdout);
			return 0;
		default:
			if (cmd_rules_option(&a->ro, c, optarg))
				break;
			return cmd_usage_error("export", "unknown option '%s'",
			    argv[optind - 1]);
		}
	}
	if (a->report && a->nodiag)
		return cmd_usage_error("export", "--diagnose needs the "
		    "diagnosis (not --no-diagnosis)");
	a->path = optind < argc ? argv[optind] : ARGUS_DEFAULT_TRACE;
	a->paths = (const char *const *)argv + optind;
	a->npaths = (size_t)(argc - optind);
	return -1;
}

int
cmd_export(int argc, char **argv)
{
	struct xargs a = { 0 };
	struct export_opts eo = { 0 };
	struct trace_reader *r = NULL;
	struct rules *rs = NULL;
	struct graph *g = NULL;
	struct diag *d = NULL;
	struct hosts_report *hosts = NULL;
	struct diag_opts dopts = { 0 };
	char *cause = NULL, *report = NULL;
	const char *why;
	FILE *out = stdout;
	int rc = parse(argc, argv, &a), err;

	if (rc >= 0)
		goto done;
	rc = 1;
	cmd_engine_heap();
	if ((r = cmd_open_traces("export", a.paths, a.npaths, &hosts)) == NULL)
		goto done;
	if (hosts != NULL)
		a.path = "the merged traces";
	dopts.hosts = hosts;
	uint64_t first = trace_reader_info(r)->first_ts;
	unsigned long long t;

	if (a.from && cmd_parse_time(a.from, first, &t) == 0)
		eo.from = t;
	else if (a.from) {
		rc = cmd_usage_error("export", "bad time '%s'", a.from);
		goto done;
	}
	if (a.to && cmd_parse_time(a.to, first, &t) == 0)
		eo.to = t;
	else if (a.to) {
		rc = cmd_usage_error("export", "bad time '%s'", a.to);
		goto done;
	}
	if (eo.to && eo.to < eo.from) {
		rc = cmd_usage_error("export", "--to is before --from");
		goto done;
	}
	eo.pids = a.pids;
	eo.npids = a.npids;
	if (!a.nodiag) {
		if ((rs = cmd_rules_load("export", &a.ro)) == NULL)
			goto done;
		if (cmd_check_whole("export", r) != 0)
			goto done;
		struct cmd_progress *pg = cmd_progress("export", "loading", r);

		err = graph_build(r, rs, &g, &cause);
		cmd_progress_end(pg);
		if (err != 0 ||
		    (err = diag_new(g, &dopts, &d, &cause)) != 0) {
			cmd_error("export", "%s: %s", a.path, cause ? cause :
			    graph_strerror(err));
			goto done;
		}
		if (graph_first_ts(g) && graph_first_ts(g) < first)
			first = graph_first_ts(g);
	}
	if (a.report) {
		size_t n = 0;
		FILE *m = open_memstream(&report, &n);

		if (m == NULL)
			abort();
		diag_write_text(d, m, first);
		fclose(m);
		eo.report = report;
	}
	eo.base_ns = first;
	if (a.out && (out = out_fopen(a.out, &why)) == NULL) {
		cmd_error("export", "cannot write %s: %s", a.out, why);
		goto done;
	}
	struct cmd_progress *pg = cmd_progress("export", "writing", r);

	err = export_chrome(r, &eo, d, out, &cause);
	cmd_progress_end(pg);
	if (out == stdout) {
		if (fflush(stdout) != 0 && err == 0) {
			err = EIO;
			cause = xstrdup("cannot write the standard output");
		}
	} else if (fclose(out) != 0 && err == 0) {
		err = errno;
		cause = xasprintf("%s: %s", a.out, strerror(err));
	}
	if (err) {
		cmd_error("export", "%s", cause ? cause : graph_strerror(err));
		goto done;
	}
	rc = 0;
done:
	free(cause);
	free(report);
	diag_free(d);
	graph_free(g);
	rules_free(rs);
	if (r)
		trace_reader_close(r);
	hosts_report_free(hosts);
	free(a.pids);
	cmd_rules_opts_free(&a.ro);
	return rc;
}
