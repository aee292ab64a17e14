/*
 * cmd-watch.c: `argus watch PID SYMBOL|ADDRESS`, a hardware watchpoint on
 * a shared variable of a running process: the options, the target (a
 * symbol of the process or an address), the recorder's marker file, and
 * the loop; the breakpoints are instrument/tools/watch.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "common/common.h"
#include "common/elfsym.h"
#include "instrument/tools/watch.h"
#include "trace/trace.h"

static volatile sig_atomic_t stop;

static void
on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: argus watch [--len N] [--read|--write] [--marker PATH]\n"
	    "                   [--duration SECONDS] [--print] PID SYMBOL|ADDRESS\n"
	    "\n"
	    "Sets a hardware watchpoint on a variable of process PID and writes\n"
	    "every access into the running recorder's trace as a shared-flag\n"
	    "read or write event. Runs until the process exits, the duration\n"
	    "ends or it is interrupted. See argus-watch(1).\n");
}

static int
find_marker(const char *opt, char *buf, size_t len)
{
	if (opt) {
		snprintf(buf, len, "%s", opt);
		return 0;
	}
	return record_marker_find(buf, len);
}

/* --print: one line per access on stdout. */
static void
print_access(void *arg, const struct watch_access *a)
{
	(void)arg;
	printf("%s tid=%u addr=0x%" PRIx64 " value=%" PRIu64 " ip=0x%" PRIx64
	    "\n", a->write ? "write" : "read", a->tid, a->addr, a->value,
	    a->ip);
}

int
cmd_watch(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "len", required_argument, NULL, 'l' },
		{ "read", no_argument, NULL, 'r' },
		{ "write", no_argument, NULL, 'w' },
		{ "marker", required_argument, NULL, 'm' },
		{ "duration", required_argument, NULL, 'd' },
		{ "print", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct watch_opts o = { .markfd = -1 };
	struct watch *w = NULL;
	const char *marker_opt = NULL;
	uint64_t duration = 0, v, size = 0, end = 0;
	unsigned long hits, reads, writes;
	char path[4096], file[4096] = "", *cause = NULL;
	int c, print = 0;
	char *endp;

	optind = 1;
	while ((c = getopt_long(argc, argv, "l:rwm:d:ph", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			if (parse_u64(optarg, &v) != 0 ||
			    (v != 1 && v != 2 && v != 4 && v != 8))
				return cmd_usage_error("watch",
				    "--len must be 1, 2, 4 or 8");
			o.len = (unsigned)v;
			break;
		case 'r': o.mode = 'r'; break;
		case 'w': o.mode = 'w'; break;
		case 'm': marker_opt = optarg; break;
		case 'p': print = 1; break;
		case 'd':
			if (parse_duration(optarg, &duration) != 0)
				return cmd_usage_error("watch",
				    "bad duration '%s'", optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return cmd_usage_error("watch", "unknown option");
		}
	}
	if (argc - optind != 2)
		return cmd_usage_error("watch", "expected PID and SYMBOL|ADDRESS");
	if (parse_u64(argv[optind], &v) != 0 || v == 0 || v > INT32_MAX)
		return cmd_usage_error("watch", "bad process id '%s'",
		    argv[optind]);
	o.pid = (pid_t)v;
	if (watch_process_gone(o.pid))
		return cmd_error("watch", "process %d not found", (int)o.pid);
	const char *target = argv[optind + 1];
	o.addr = strtoull(target, &endp, 0);
	if (*endp != 0 || endp == target) {
		int err = elfsym_in_process(o.pid, target, &o.addr, &size,
		    file, sizeof(file));
		if (err == ESRCH)
			return cmd_error("watch", "process %d is gone",
			    (int)o.pid);
		if (err)
			return cmd_error("watch",
			    "symbol '%s' not found in process %d or its libraries",
			    target, (int)o.pid);
	}
	if (!o.len)
		o.len = size == 1 || size == 2 || size == 4 || size == 8 ?
		    (unsigned)size : 4;
	if (o.addr % o.len)
		return cmd_error("watch", "address 0x%" PRIx64
		    " is not aligned to --len %u", o.addr, o.len);
	if (find_marker(marker_opt, path, sizeof(path)) == 0) {
		o.markfd = open(path, O_WRONLY | O_CLOEXEC);
		if (o.markfd < 0)
			return cmd_error("watch", "cannot open marker %s: %s",
			    path, strerror(errno));
	} else if (!print) {
		return cmd_error("watch", "no recorder is running (no %s); "
		    "start 'argus record', or give --marker PATH or --print",
		    ARGUS_MARKER_PATH_FILE);
	}
	o.fn = print ? print_access : NULL;
	if (watch_open(&w, &o, &cause) != 0) {
		c = cmd_error("watch", "%s", cause);
		free(cause);
		return c;
	}
	fprintf(stderr, "argus watch: watching 0x%" PRIx64 " (%u bytes%s%s) "
	    "(%u breakpoints) in process %d\n", o.addr, o.len,
	    file[0] ? " in " : "", file, watch_nbreakpoints(w), (int)o.pid);
	signal(SIGINT, on_stop);
	signal(SIGTERM, on_stop);
	if (duration)
		end = now_ns() + duration;
	while (!stop) {
		watch_poll(w, 100);
		if (print)
			fflush(stdout);
		if (watch_follow(w))	/* the process is gone */
			break;
		if (end && now_ns() >= end)
			break;
	}
	watch_poll(w, 0);		/* what is left */
	watch_counts(w, &hits, &reads, &writes);
	fprintf(stderr, "argus watch: %lu accesses (%lu reads, %lu writes)\n",
	    hits, reads, writes);
	watch_close(w);
	return 0;
}
