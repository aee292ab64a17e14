/*
 * cmd-dump.c: argus dump: the events of a trace, one line each, with
 * filters on time, thread, process and type.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "common/common.h"
#include "trace/trace.h"

static const char dump_usage[] =
    "usage: argus dump [TRACE] [--from T] [--to T] [--tid TID] [--pid PID]\n"
    "                  [--type TYPE[,TYPE...]] [--abs]\n"
    "\n"
    "Print the events of TRACE (default " ARGUS_DEFAULT_TRACE ") one per line:\n"
    "time, CPU, context, thread, command, type and fields.\n"
    "\n"
    "  --from T, --to T   keep events in [T, T]; T is seconds after the trace\n"
    "                     start (\"1.5\", \"250ms\") or @NANOSECONDS absolute\n"
    "  --tid TID          keep events that ran on thread TID\n"
    "  --pid PID          keep events that ran in process PID\n"
    "  --type LIST        keep these types (see argus-trace(5) for names)\n"
    "  --abs              print absolute timestamps in nanoseconds\n"
    "  -h, --help         show this help\n";

int
cmd_dump(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "from", required_argument, NULL, 'f' },
		{ "to", required_argument, NULL, 't' },
		{ "tid", required_argument, NULL, 'T' },
		{ "pid", required_argument, NULL, 'p' },
		{ "type", required_argument, NULL, 'y' },
		{ "abs", no_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *from = NULL, *to = NULL;
	uint64_t tid = 0, pid = 0;
	int have_tid = 0, have_pid = 0, abs_ts = 0, c, ntypes = 0;
	uint8_t want[TT_NTYPES] = { 0 };
	char line[8192];

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'f': from = optarg; break;
		case 't': to = optarg; break;
		case 'T':
			if (parse_u64(optarg, &tid) != 0)
				return cmd_usage_error("dump", "bad --tid '%s'", optarg);
			have_tid = 1;
			break;
		case 'p':
			if (parse_u64(optarg, &pid) != 0)
				return cmd_usage_error("dump", "bad --pid '%s'", optarg);
			have_pid = 1;
			break;
		case 'y': {
			char *list = xstrdup(optarg), *save = NULL;

			for (char *s = strtok_r(list, ",", &save); s;
			    s = strtok_r(NULL, ",", &save)) {
				unsigned t = trace_type_lookup(s);

				if (t == TT_NONE) {
					int rc = cmd_usage_error("dump",
					    "unknown event type '%s'", s);

					free(list);
					return rc;
				}
				want[t] = 1;
				ntypes++;
			}
			free(list);
			break;
		}
		case 'a': abs_ts = 1; break;
		case 'h':
			fputs(dump_usage, stdout);
			return 0;
		default:
			return cmd_usage_error("dump", "unknown option '%s'",
			    argv[optind - 1]);
		}
	}
	if (argc - optind > 1)
		return cmd_usage_error("dump", "one trace at a time");

	struct trace_reader *r = cmd_open_trace("dump",
	    optind < argc ? argv[optind] : NULL);

	if (r == NULL)
		return 1;
	const struct trace_info *info = trace_reader_info(r);
	unsigned long long t0 = 0, t1 = UINT64_MAX;

	if (from && cmd_parse_time(from, info->first_ts, &t0) != 0) {
		trace_reader_close(r);
		return cmd_usage_error("dump", "bad time '%s'", from);
	}
	if (to && cmd_parse_time(to, info->first_ts, &t1) != 0) {
		trace_reader_close(r);
		return cmd_usage_error("dump", "bad time '%s'", to);
	}
	/* names of threads whose records come after their first events */
	trace_reader_read_ahead_threads(r);
	if (t0)
		trace_reader_seek(r, t0);

	struct trace_event ev;
	uint64_t base = abs_ts ? UINT64_MAX : info->first_ts;
	/* a bar only when the lines go elsewhere than the terminal */
	struct cmd_progress *pg = isatty(STDOUT_FILENO) ? NULL :
	    cmd_progress("dump", "reading", r);

	while (trace_reader_next(r, &ev)) {
		if (ev.ts > t1)
			break;
		if (ntypes && !want[ev.type])
			continue;
		if (have_tid && ev.tid != tid)
			continue;
		if (have_pid) {
			const struct trace_thread *t = trace_reader_thread(r, ev.tid);

			if (t == NULL)
				t = trace_reader_thread_ahead(r, ev.tid);

			if (t == NULL || t->pid != pid)
				continue;
		}
		size_t n = trace_format_event(r, &ev, base, line, sizeof(line));

		fwrite(line, 1, n < sizeof(line) ? n : sizeof(line) - 1, stdout);
		if (putchar('\n') == EOF)
			break;
	}
	cmd_progress_end(pg);
	trace_reader_close(r);
	if (fflush(stdout) != 0 || ferror(stdout))
		return cmd_error("dump", "cannot write the output");
	return 0;
}
