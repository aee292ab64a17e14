/*
 * cmd-debug.c: argus debug: parse the options, open the trace and the
 * rules, and hand over to the full-screen debugger (tui/). Errors found
 * before the screen starts are printed here; the hidden --list-keys
 * prints the key table for the man page check.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "common/common.h"
#include "engine/engine.h"
#include "trace/trace.h"
#include "tui/tui.h"

static const char debug_usage[] =
    "usage: argus debug [TRACE] [--pid PID | --tid TID | --comm NAME]\n"
    "                   [--at TIME] [--rules FILE]... [--no-default-rules]\n"
    "\n"
    "Open the hang debugger on TRACE (default " ARGUS_DEFAULT_TRACE "):\n"
    "a full-screen view of the event graph opened on the first hang.\n"
    "Press ? inside for the keys; see argus-debug(1).\n"
    "\n"
    "  --pid PID            hangs of this process only\n"
    "  --tid TID            hangs of this thread only\n"
    "  --comm NAME          hangs of threads (or processes) of this name\n"
    "  --at TIME            diagnose the hang at TIME (seconds from the\n"
    "                       trace start, or @NS)\n"
    "  --rules FILE         add the rules of FILE (argus-rules(5))\n"
    "  --no-default-rules   start from no rules instead of the defaults\n"
    "  -h, --help           show this help\n";

int
cmd_debug(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "tid", required_argument, NULL, 't' },
		{ "comm", required_argument, NULL, 'c' },
		{ "at", required_argument, NULL, 'a' },
		CMD_RULES_OPTION,
		CMD_NO_DEFAULT_RULES_OPTION,
		{ "list-keys", no_argument, NULL, 'K' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct tui_opts o;
	struct cmd_rules_opts ro = { 0 };
	const char *at = NULL;
	int c, rc;
	uint64_t v;

	memset(&o, 0, sizeof(o));
	cmd_engine_heap();
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'p': case 't':
			if (parse_u64(optarg, &v) != 0 || v == 0 ||
			    v > UINT32_MAX) {
				cmd_rules_opts_free(&ro);
				return cmd_usage_error("debug", "bad %s '%s'",
				    c == 'p' ? "pid" : "tid", optarg);
			}
			if (c == 'p')
				o.pid = (uint32_t)v;
			else
				o.tid = (uint32_t)v;
			break;
		case 'c': o.comm = optarg; break;
		case 'a': at = optarg; break;
		case CMD_OPT_RULES:
		case CMD_OPT_NO_DEFAULT_RULES:
			(void)cmd_rules_option(&ro, c, optarg);
			break;
		case 'K':
			tui_list_keys(stdout);
			cmd_rules_opts_free(&ro);
			return 0;
		case 'h':
			fputs(debug_usage, stdout);
			cmd_rules_opts_free(&ro);
			return 0;
		default:
			cmd_rules_opts_free(&ro);
			return cmd_usage_error("debug", "unknown option '%s'",
			    argv[optind - 1]);
		}
	}
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		cmd_rules_opts_free(&ro);
		return cmd_error("debug", "needs a terminal (for a report "
		    "without one, see argus diagnose)");
	}
	o.rules = cmd_rules_load("debug", &ro);
	if (o.rules == NULL)
		return 1;
	o.trace = optind < argc ? argv[optind] : ARGUS_DEFAULT_TRACE;
	o.traces = (const char *const *)argv + optind;
	o.ntraces = (size_t)(argc - optind);
	o.reader = cmd_open_traces("debug", o.traces, o.ntraces, &o.hosts);
	if (o.reader == NULL) {
		rules_free(o.rules);
		return 1;
	}
	if (at != NULL) {
		unsigned long long ts;
		if (cmd_parse_time(at, trace_reader_info(o.reader)->first_ts,
		    &ts) != 0) {
			trace_reader_close(o.reader);
			rules_free(o.rules);
			return cmd_usage_error("debug", "bad time '%s'", at);
		}
		if (cmd_check_time("debug", at, ts,
		    trace_reader_info(o.reader)->first_ts,
		    trace_reader_info(o.reader)->last_ts) != 0) {
			trace_reader_close(o.reader);
			rules_free(o.rules);
			return 1;
		}
		o.at = ts;
	}
	rc = tui_run(&o);
	return rc;
}
