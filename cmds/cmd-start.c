/*
 * cmd-start.c: argus start, stop and status, the recorder as a daemon.
 *
 * start runs the recording loop of cmd-record.c in a daemon that writes
 * DIR/argus.pid and logs to DIR/argus.log; a pipe tells the parent whether
 * the start succeeded. stop sends SIGTERM to the pid of DIR/argus.pid, once
 * it has checked that this pid is the recorder of DIR (it holds DIR/.lock
 * open and locked), and waits for the end; status prints DIR/status and
 * what is on disk. The directory must be one we trust (trace_dir_open).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <limits.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "cmd-record-local.h"
#include "common/common.h"
#include "trace/trace.h"

/* The pid written in DIR/argus.pid (read safely), or 0. */
static pid_t
pidfile_pid(int dfd)
{
	char buf[32], *end;
	long pid;

	if (trace_dir_read_file(dfd, "argus.pid", buf, sizeof(buf)) <= 0)
		return 0;
	pid = strtol(buf, &end, 10);
	if (end == buf || (*end != '\n' && *end != '\0') || pid <= 0 ||
	    pid > INT_MAX)
		return 0;
	return (pid_t)pid;
}

/*
 * Is pid (through its pidfd) the recorder of the directory dfd? The
 * recorder holds DIR/.lock open and locked (trace_writer_open), which no
 * other process does: the lock must be taken and one of pid's
 * descriptors must be that very file.
 */
static int
is_recorder(int dfd, pid_t pid)
{
	struct stat lk, sb;
	char path[64];
	int fd, found = 0;
	DIR *d;
	struct dirent *de;

	fd = openat(dfd, ".lock", O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (fstat(fd, &lk) != 0 || !S_ISREG(lk.st_mode) ||
	    flock(fd, LOCK_SH | LOCK_NB) == 0) {
		close(fd);		/* no writer holds the lock */
		return 0;
	}
	close(fd);
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	if ((d = opendir(path)) == NULL)
		return 0;
	while (!found && (de = readdir(d)) != NULL) {
		if (fstatat(dirfd(d), de->d_name, &sb, 0) == 0 &&
		    sb.st_dev == lk.st_dev && sb.st_ino == lk.st_ino)
			found = 1;
	}
	closedir(d);
	return found;
}

/*
 * A pidfd of the live recorder of dfd, or -1. The pidfd is taken before
 * the check, so the pid cannot be reused between the check and a signal.
 */
static int
recorder_pidfd(int dfd, pid_t *pidp)
{
	pid_t pid = pidfile_pid(dfd);
	int pfd;

	*pidp = pid;
	if (pid == 0)
		return -1;
	pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pfd < 0)
		return -1;
	if (!is_recorder(dfd, pid)) {
		close(pfd);
		return -1;
	}
	return pfd;
}

/* Pid of a live recorder on dir (a trusted directory), or 0. */
static pid_t
live_pid(const char *dir)
{
	int err, dfd = trace_dir_open(dir, &err, NULL);
	pid_t pid = 0;
	int pfd;

	if (dfd < 0)
		return 0;
	pfd = recorder_pidfd(dfd, &pid);
	close(dfd);
	if (pfd < 0)
		return 0;
	close(pfd);
	return pid;
}

/*
 * Open dir for stop or status: a missing directory is 0 with *dfd -1; an
 * untrusted one is an error (printed; returns 1).
 */
static int
open_trusted(const char *name, const char *dir, int *dfd)
{
	char *cause = NULL;
	int err;

	*dfd = trace_dir_open(dir, &err, &cause);
	if (*dfd >= 0 || err == ENOENT) {
		free(cause);
		return 0;
	}
	cmd_error(name, "%s", cause);
	free(cause);
	return 1;
}

int
cmd_start(int argc, char **argv)
{
	struct ropts o;
	int rc = parse_ropts("start", argc, argv, &o);
	int pfd[2];
	pid_t pid;
	char buf[1024], *absdir = NULL;
	ssize_t n;

	if (rc >= 0)
		return rc;
	if (o.command)
		return cmd_usage_error("start", "start takes no command");
	/* The daemon works from "/": name the directory absolutely. */
	if (o.ro.dir[0] != '/') {
		char cwd[PATH_MAX];

		if (getcwd(cwd, sizeof(cwd)) == NULL)
			return cmd_error("start", "cannot resolve %s: %s",
			    o.ro.dir, strerror(errno));
		absdir = xasprintf("%s/%s", strcmp(cwd, "/") ? cwd : "",
		    o.ro.dir);
		o.ro.dir = absdir;
	}
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
		/* it removes its pid file at the end */
		st = run_recorder("start", &o, pfd[1], 0);
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
	free(absdir);
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
	pid_t pid = 0;
	int dfd, pfd;

	if (rc >= 0)
		return rc;
	if (open_trusted("stop", dir, &dfd) != 0)
		return 1;
	pfd = dfd >= 0 ? recorder_pidfd(dfd, &pid) : -1;
	if (dfd >= 0)
		close(dfd);
	if (pfd < 0)
		return cmd_error("stop", "no recorder runs on %s%s", dir,
		    pid ? " (its pid file names a process that is not its "
		    "recorder)" : "");
	if (syscall(SYS_pidfd_send_signal, pfd, SIGTERM, NULL, 0) != 0) {
		int e = errno;

		close(pfd);
		return cmd_error("stop", "cannot signal pid %d: %s", (int)pid,
		    strerror(e));
	}
	{
		struct pollfd p = { .fd = pfd, .events = POLLIN };
		int r;

		while ((r = poll(&p, 1, 30000)) < 0 && errno == EINTR)
			;
		close(pfd);
		if (r > 0)
			return 0;
	}
	return cmd_error("stop", "pid %d did not stop within 30 s", (int)pid);
}

int
cmd_status(int argc, char **argv)
{
	const char *dir;
	int rc = parse_dir_opt("status", argc, argv, &dir, usage_status);
	char line[256], text[4096], *nl;
	ssize_t n = -1;
	int dfd, pfd;
	char set[32] = "?", backend[32] = "?";
	char *snap_dir = NULL;
	unsigned long long v, events = 0, lost = 0, disk = 0, bound = 0;
	unsigned long long sskip = 0;
	unsigned long long elapsed = 0, fds = 0, cpu = 0, bns = 0, bruns = 0;
	double rate = 0;
	pid_t pid = 0;
	long spid = 0, srunning = 0;	/* the status file's pid, running */
	struct trace_reader *tr;
	char *cause = NULL;
	char b1[16], b2[16];

	if (rc >= 0)
		return rc;
	/* Tracing left on by a recorder that was killed: turn it off. */
	if (geteuid() == 0)
		record_remove_stale();
	if (open_trusted("status", dir, &dfd) != 0)
		return 1;
	if (dfd >= 0) {
		pfd = recorder_pidfd(dfd, &pid);
		if (pfd >= 0)
			close(pfd);
		else
			pid = 0;
		n = trace_dir_read_file(dfd, "status", text, sizeof(text));
		close(dfd);
	}
	if (n < 0)
		return cmd_error("status", "no recorder status in %s%s", dir,
		    pid ? "" : " (no recorder runs there)");
	for (char *lp = text; (nl = strchr(lp, '\n')) != NULL || *lp;
	    lp = nl ? nl + 1 : lp + strlen(lp)) {
		size_t len = nl ? (size_t)(nl - lp) : strlen(lp);

		snprintf(line, sizeof(line), "%.*s", (int)len, lp);
		if (sscanf(line, "events_set %31s", set) == 1)
			continue;
		if (sscanf(line, "backend %31s", backend) == 1)
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
		else if (sscanf(line, "cpu_ns %llu", &v) == 1)
			cpu = v;
		else if (sscanf(line, "bpf_ns %llu", &v) == 1)
			bns = v;
		else if (sscanf(line, "bpf_runs %llu", &v) == 1)
			bruns = v;
		else if (sscanf(line, "stacks_skipped %llu", &v) == 1)
			sskip = v;
		else if (sscanf(line, "pid %ld", &spid) == 1 ||
		    sscanf(line, "running %ld", &srunning) == 1)
			;
		else
			sscanf(line, "rate %lf", &rate);
		if (nl == NULL)
			break;
	}
	/* a status still saying "running" with no recorder: it was killed */
	if (pid)
		printf("recorder:   running\npid:        %d\n", (int)pid);
	else if (srunning && spid > 0)
		printf("recorder:   not running: pid %ld died without stopping "
		    "(killed or crashed; what follows is its last status)\n",
		    spid);
	else
		printf("recorder:   not running\n");
	printf("directory:  %s\n", dir);
	printf("events:     %s set, %llu recorded in %.0f s", set, events,
	    (double)elapsed / 1e9);
	if (pid)
		printf(", %.0f events/s", rate);
	printf("\n");
	printf("backend:    %s\n", backend);
	printf("disk:       %s of %s\n", fmt_bytes(b1, sizeof(b1), disk),
	    fmt_bytes(b2, sizeof(b2), bound));
	printf("lost:       %llu events lost by the kernel", lost);
	if (sskip > 0)
		printf("; %llu stacks left out over --stack-rate", sskip);
	printf("\n");
	printf("fds:        %llu descriptor identities\n", fds);
	/* the recorder's own cost: its threads, and its BPF programs in
	   the kernel when the kernel counted them (ARGUS_BPF_STATS=1) */
	printf("cpu:        %.3f s in the recorder", (double)cpu / 1e9);
	if (events > 0)
		printf(", %.0f ns per event", (double)cpu / (double)events);
	if (bruns > 0) {
		printf("; %.3f s in its BPF programs", (double)bns / 1e9);
		if (events > 0)
			printf(", %.0f ns per event", (double)bns /
			    (double)events);
		printf(" (%llu runs, %.0f ns each)", bruns, (double)bns /
		    (double)bruns);
	}
	printf("\n");
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
