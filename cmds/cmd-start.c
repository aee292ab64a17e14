/*
 * cmd-start.c: argus start, stop and status, the recorder as a daemon.
 *
 * start runs the recording loop of cmd-record.c in a daemon that writes
 * DIR/argus.pid and logs to DIR/argus.log; a pipe tells the parent whether
 * the start succeeded. stop sends SIGTERM to the pid of DIR/argus.pid and
 * waits for the end; status prints DIR/status and what is on disk.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "cmd-record-local.h"
#include "common/common.h"
#include "trace/trace.h"

/* Pid of a live recorder on dir, or 0. */
static pid_t
live_pid(const char *dir)
{
	char *path = xasprintf("%s/argus.pid", dir);
	FILE *f = fopen(path, "re");
	long pid = 0;

	free(path);
	if (f == NULL)
		return 0;
	if (fscanf(f, "%ld", &pid) != 1)
		pid = 0;
	fclose(f);
	if (pid <= 0 || (kill((pid_t)pid, 0) != 0 && errno == ESRCH))
		return 0;
	return (pid_t)pid;
}

int
cmd_start(int argc, char **argv)
{
	struct ropts o;
	int rc = parse_ropts("start", argc, argv, &o);
	int pfd[2];
	pid_t pid;
	char buf[1024];
	ssize_t n;

	if (rc >= 0)
		return rc;
	if (o.command)
		return cmd_usage_error("start", "start takes no command");
	if ((pid = live_pid(o.ro.dir)) != 0)
		return cmd_error("start", "a recorder already runs on %s "
		    "(pid %d)", o.ro.dir, (int)pid);
	if (pipe2(pfd, O_CLOEXEC) != 0)
		return cmd_error("start", "pipe: %s", strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return cmd_error("start", "cannot fork: %s", strerror(errno));
	if (pid == 0) {
		int fd, st;
		char *p;

		close(pfd[0]);
		setsid();
		if (fork() != 0)
			_exit(0);
		fd = open("/dev/null", O_RDWR);
		if (fd >= 0) {
			dup2(fd, 0);
			dup2(fd, 1);
			if (fd > 2)
				close(fd);
		}
		if (chdir("/") != 0)
			_exit(1);
		fd = open("/dev/null", O_WRONLY);
		if (fd >= 0) {
			dup2(fd, 2);
			if (fd > 2)
				close(fd);
		}
		st = run_recorder("start", &o, pfd[1], 0);
		p = xasprintf("%s/argus.pid", o.ro.dir);
		if (st == 0 || live_pid(o.ro.dir) == getpid())
			unlink(p);
		free(p);
		_exit(st);
	}
	close(pfd[1]);
	waitpid(pid, NULL, 0);
	/* Lines: "warning: ..." any number, then "ok" or the error. */
	{
		size_t len = 0;
		char *line, *nl;

		while (len < sizeof(buf) - 1 &&
		    (n = read(pfd[0], buf + len, sizeof(buf) - 1 - len)) > 0)
			len += (size_t)n;
		close(pfd[0]);
		buf[len] = '\0';
		if (len == 0)
			return cmd_error("start", "the recorder died while "
			    "starting");
		for (line = buf; (nl = strchr(line, '\n')) != NULL;
		    line = nl + 1) {
			*nl = '\0';
			if (strncmp(line, "warning: ", 9) == 0)
				fprintf(stderr, "argus start: %s\n", line);
			else if (strcmp(line, "ok") == 0)
				break;
			else
				return cmd_error("start", "%s", line);
		}
		if (nl == NULL)
			return cmd_error("start", "the recorder died while "
			    "starting");
	}
	printf("argus: recording into %s (pid file %s/argus.pid)\n",
	    o.ro.dir, o.ro.dir);
	return 0;
}

static int
parse_dir_opt(const char *name, int argc, char **argv, const char **dir,
    void (*usage)(FILE *))
{
	static const struct option lo[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*dir = ARGUS_DEFAULT_TRACE;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", lo, NULL)) != -1) {
		if (c == 'o') {
			*dir = optarg;
		} else if (c == 'h') {
			usage(stdout);
			return 0;
		} else {
			return cmd_usage_error(name, "bad option");
		}
	}
	if (optind < argc)
		*dir = argv[optind];
	return -1;
}

static void
usage_stop(FILE *f)
{
	fprintf(f, "usage: argus stop [-o DIR]\n\nFlush and end the recorder "
	    "started by 'argus start' on DIR\n(default %s).\n",
	    ARGUS_DEFAULT_TRACE);
}

static void
usage_status(FILE *f)
{
	fprintf(f, "usage: argus status [-o DIR]\n\nShow what the recorder on "
	    "DIR records: event set, rate, disk use,\nspan on disk, lost "
	    "events and the snapshots taken at hangs\n(default DIR %s).\n", ARGUS_DEFAULT_TRACE);
}

int
cmd_stop(int argc, char **argv)
{
	const char *dir;
	int rc = parse_dir_opt("stop", argc, argv, &dir, usage_stop);
	pid_t pid;

	if (rc >= 0)
		return rc;
	if ((pid = live_pid(dir)) == 0)
		return cmd_error("stop", "no recorder runs on %s", dir);
	if (kill(pid, SIGTERM) != 0)
		return cmd_error("stop", "cannot signal pid %d: %s", (int)pid,
		    strerror(errno));
	for (int i = 0; i < 600; i++) {
		struct timespec ts = { 0, 50000000L };

		if (kill(pid, 0) != 0 && errno == ESRCH)
			return 0;
		nanosleep(&ts, NULL);
	}
	return cmd_error("stop", "pid %d did not stop within 30 s", (int)pid);
}

int
cmd_status(int argc, char **argv)
{
	const char *dir;
	int rc = parse_dir_opt("status", argc, argv, &dir, usage_status);
	char *path, line[256];
	char set[32] = "?";
	char *snap_dir = NULL;
	unsigned long long v, events = 0, lost = 0, disk = 0, bound = 0;
	unsigned long long elapsed = 0, fds = 0;
	double rate = 0;
	FILE *f;
	pid_t pid;
	struct trace_reader *tr;
	char *cause = NULL;
	char b1[16], b2[16];

	if (rc >= 0)
		return rc;
	pid = live_pid(dir);
	path = xasprintf("%s/status", dir);
	f = fopen(path, "re");
	free(path);
	if (f == NULL)
		return cmd_error("status", "no recorder status in %s%s", dir,
		    pid ? "" : " (no recorder runs there)");
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "events_set %31s", set) == 1)
			continue;
		if (strncmp(line, "snapshot_dir ", 13) == 0) {
			line[strcspn(line, "\n")] = '\0';
			free(snap_dir);
			snap_dir = xstrdup(line + 13);
			continue;
		}
		if (sscanf(line, "events %llu", &v) == 1)
			events = v;
		else if (sscanf(line, "lost %llu", &v) == 1)
			lost = v;
		else if (sscanf(line, "disk_bytes %llu", &v) == 1)
			disk = v;
		else if (sscanf(line, "bound %llu", &v) == 1)
			bound = v;
		else if (sscanf(line, "elapsed_ns %llu", &v) == 1)
			elapsed = v;
		else if (sscanf(line, "fds %llu", &v) == 1)
			fds = v;
		else
			sscanf(line, "rate %lf", &rate);
	}
	fclose(f);
	printf("recorder:   %s\n", pid ? "running" : "not running");
	if (pid)
		printf("pid:        %d\n", (int)pid);
	printf("directory:  %s\n", dir);
	printf("events:     %s set, %llu recorded in %.0f s, %.0f events/s\n",
	    set, events, (double)elapsed / 1e9, pid ? rate : 0.0);
	printf("disk:       %s of %s\n", fmt_bytes(b1, sizeof(b1), disk),
	    fmt_bytes(b2, sizeof(b2), bound));
	printf("lost:       %llu events lost by the kernel\n", lost);
	printf("fds:        %llu descriptor identities\n", fds);
	if (trace_reader_open(&tr, dir, &cause) == 0) {
		const struct trace_info *ti = trace_reader_info(tr);

		printf("on disk:    %s span, %u segments, %llu events\n",
		    ti->last_ts > ti->first_ts ? fmt_duration(b1, sizeof(b1),
		    ti->last_ts - ti->first_ts) : "0 s", ti->nsegments,
		    (unsigned long long)ti->nevents);
		trace_reader_close(tr);
	} else {
		free(cause);
	}
	if (snap_dir)
		hangsnap_list(snap_dir, stdout);
	free(snap_dir);
	return 0;
}
