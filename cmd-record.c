/*
 * cmd-record.c: argus record, start, stop and status.
 *
 * record runs the recorder (trace/record.c) in the foreground: a loop that
 * drains the kernel buffers every 100 ms, flushes the trace every second
 * and rewrites DIR/status (a few "key value" lines) for `argus status`.
 * start runs the same loop in a daemon that writes DIR/argus.pid and logs
 * to DIR/argus.log; a pipe tells the parent whether the start succeeded.
 * stop sends SIGTERM to the pid of DIR/argus.pid and waits for the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "common.h"
#include "trace.h"

#define POLL_MS 100		/* drain period */
#define POLL_BUSY_MS 10		/* drain period when the kernel writes fast */

static volatile sig_atomic_t stop_sig;

/* First signal: stop cleanly; a second one ends the process at once. */
static void
on_signal(int sig)
{
	if (stop_sig) {
		signal(sig, SIG_DFL);
		raise(sig);
	}
	stop_sig = sig;
}

struct ropts {
	struct record_opts ro;
	uint64_t duration_ns;
	char **command;
	int quiet;
	int no_instrument;	/* kernel events only: no libargus */
};

static void
usage_record(FILE *f, const char *name)
{
	fprintf(f,
	    "usage: argus %s [-o DIR] [--size SIZE] [--segment SIZE]\n"
	    "       [--duration SECONDS] [--events SET] [--buffer-kb N]\n"
	    "       [--group GROUP] [--backend auto|bpf|tracefs]\n"
	    "       [--no-instrument] [-q]%s\n"
	    "\n"
	    "Record what every thread of the system waits for and who wakes\n"
	    "it, into a trace directory bounded in size (oldest segments go).\n"
	    "\n"
	    "  -o, --output DIR    trace directory (default %s)\n"
	    "  --size SIZE         bound on the trace's disk use (default 2G)\n"
	    "  --segment SIZE      size of one segment file (default 64M)\n"
	    "  --duration SECONDS  stop after this time\n"
	    "  --events SET        sched, default or full (default: default)\n"
	    "  --buffer-kb N       kernel buffer per CPU (default %u)\n"
	    "  --group GROUP       make trace files 0640 and owned by GROUP\n"
	    "  --backend NAME      bpf, tracefs or auto (default: auto, BPF\n"
	    "                      where it loads, else tracefs)\n"
	    "  --no-instrument     kernel events only: no libargus records\n"
	    "  -q, --quiet         no progress line\n",
	    name, strcmp(name, "record") == 0 ? " [-- COMMAND [ARGS...]]" : "",
	    ARGUS_DEFAULT_TRACE, RECORD_DEFAULT_BUFFER_KB);
	if (strcmp(name, "record") == 0)
		fprintf(f, "\nWith COMMAND, run it (as the invoking user under "
		    "sudo) while recording,\nstop when it ends and exit with "
		    "its status.\n");
	else
		fprintf(f, "\nThe recorder runs as a daemon; see 'argus stop' "
		    "and 'argus status'.\n");
}

/* Parse the options shared by record and start; returns -1, 0 or 2. */
static int
parse_ropts(const char *name, int argc, char **argv, struct ropts *o)
{
	static const struct option lo[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "size", required_argument, NULL, 's' },
		{ "segment", required_argument, NULL, 'S' },
		{ "duration", required_argument, NULL, 'd' },
		{ "events", required_argument, NULL, 'e' },
		{ "buffer-kb", required_argument, NULL, 'b' },
		{ "group", required_argument, NULL, 'g' },
		{ "no-instrument", no_argument, NULL, 'N' },
		{ "backend", required_argument, NULL, 'B' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	uint64_t v;

	memset(o, 0, sizeof(*o));
	o->ro.dir = ARGUS_DEFAULT_TRACE;
	o->ro.set = RECORD_SET_DEFAULT;
	o->ro.wopts.group = (gid_t)-1;
	o->ro.marker_file = 1;
	/* ARGUS_BACKEND picks the default (test suites run on either) */
	if (getenv("ARGUS_BACKEND") && *getenv("ARGUS_BACKEND")) {
		o->ro.backend = record_backend_lookup(getenv("ARGUS_BACKEND"));
		if (o->ro.backend < 0)
			return cmd_usage_error(name, "unknown backend '%s' in "
			    "ARGUS_BACKEND (auto, bpf, tracefs)",
			    getenv("ARGUS_BACKEND"));
	}
	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:qh", lo, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->ro.dir = optarg;
			break;
		case 's':
			if (parse_size(optarg, &v) != 0 || v == 0)
				return cmd_usage_error(name, "bad size '%s'",
				    optarg);
			o->ro.wopts.size_bound = v;
			break;
		case 'S':
			if (parse_size(optarg, &v) != 0 || v == 0)
				return cmd_usage_error(name,
				    "bad segment size '%s'", optarg);
			o->ro.wopts.segment_size = v;
			break;
		case 'd':
			if (parse_duration(optarg, &v) != 0)
				return cmd_usage_error(name,
				    "bad duration '%s'", optarg);
			o->duration_ns = v;
			break;
		case 'e':
			o->ro.set = record_set_lookup(optarg);
			if (o->ro.set < 0)
				return cmd_usage_error(name, "unknown event set "
				    "'%s' (sched, default, full)", optarg);
			break;
		case 'b':
			if (parse_u64(optarg, &v) != 0 || v < 4 ||
			    v > (1u << 22))
				return cmd_usage_error(name,
				    "bad buffer size '%s' (KiB per CPU)", optarg);
			o->ro.buffer_kb = (unsigned)v;
			break;
		case 'g': {
			struct group *gr = getgrnam(optarg);

			if (gr == NULL)
				return cmd_usage_error(name, "no group '%s'",
				    optarg);
			o->ro.wopts.group = gr->gr_gid;
			o->ro.wopts.file_mode = 0640;
			break;
		}
		case 'B':
			o->ro.backend = record_backend_lookup(optarg);
			if (o->ro.backend < 0)
				return cmd_usage_error(name, "unknown backend "
				    "'%s' (auto, bpf, tracefs)", optarg);
			if (o->ro.backend == RECORD_BACKEND_BPF &&
			    !record_have_bpf())
				return cmd_usage_error(name, "this argus was "
				    "built without the BPF backend");
			break;
		case 'N':
			o->no_instrument = 1;
			o->ro.marker_file = 0;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'h':
			usage_record(stdout, name);
			return 0;
		default:
			return cmd_usage_error(name, "bad option");
		}
	}
	if (optind < argc)
		o->command = argv + optind;
	if (o->ro.wopts.size_bound && o->ro.wopts.segment_size &&
	    o->ro.wopts.segment_size * 2 > o->ro.wopts.size_bound)
		return cmd_usage_error(name, "the size bound must hold at "
		    "least two segments");
	return -1;
}

/* Path of libargus.so next to the binary, or NULL. */
static char *
find_libargus(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	static const char *const rel[] = { "libargus.so", "build/libargus.so",
	    "../lib/argus/libargus.so", "../lib/libargus.so" };
	char *slash;

	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	if ((slash = strrchr(exe, '/')) == NULL)
		return NULL;
	*slash = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(rel); i++) {
		char *p = xasprintf("%s/%s", exe, rel[i]);

		if (access(p, R_OK) == 0)
			return p;
		free(p);
	}
	return NULL;
}

/*
 * In the child: drop to the sudo user (if any), set up env and exec.
 * marker is NULL with --no-instrument: no libargus, no marker.
 */
static void
exec_command(char **cmd, const char *marker)
{
	const char *su = getenv("SUDO_UID"), *sg = getenv("SUDO_GID");
	const char *user = getenv("SUDO_USER");
	char *lib = marker ? find_libargus() : NULL;

	if (marker)
		setenv("ARGUS_MARKER", marker, 1);
	else
		unsetenv("ARGUS_MARKER");
	if (lib) {
		const char *old = getenv("LD_PRELOAD");
		char *v = old && *old ? xasprintf("%s:%s", lib, old) :
		    xstrdup(lib);

		setenv("LD_PRELOAD", v, 1);
		free(v);
		free(lib);
	}
	if (getuid() == 0 && su && sg) {
		uid_t uid = (uid_t)strtoul(su, NULL, 10);
		gid_t gid = (gid_t)strtoul(sg, NULL, 10);
		int mfd;

		/*
		 * The tracing directory is root-only, so the user cannot
		 * open the marker by its path: hand it an open descriptor,
		 * and make the marker file the user's so that reopening it
		 * through /proc/self/fd works as well.
		 */
		mfd = marker ? open(marker, O_WRONLY) : -1;
		if (mfd >= 0) {
			char *v = xasprintf("/proc/self/fd/%d", mfd);

			if (fchown(mfd, uid, (gid_t)-1) != 0)
				(void)0;	/* writes through mfd still work */
			setenv("ARGUS_MARKER", v, 1);
			free(v);
		}

		if ((user ? initgroups(user, gid) : setgroups(0, NULL)) != 0 ||
		    setgid(gid) != 0 || setuid(uid) != 0 || (uid != 0 &&
		    setuid(0) == 0)) {
			fprintf(stderr, "argus record: cannot drop privileges "
			    "to uid %u: %s\n", (unsigned)uid, strerror(errno));
			_exit(126);
		}
	}
	execvp(cmd[0], cmd);
	fprintf(stderr, "argus record: cannot run %s: %s\n", cmd[0],
	    strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

/* CPU time of the recorder itself (every thread), user and system. */
static uint64_t
self_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) *
	    1000000000ull + ((uint64_t)ru.ru_utime.tv_usec +
	    (uint64_t)ru.ru_stime.tv_usec) * 1000ull;
}

static void
write_status(const char *dir, const struct recorder *r, const char *set,
    uint64_t t0, uint64_t now, uint64_t ev0, uint64_t tprev, int running)
{
	struct record_stats st;
	char *tmp = xasprintf("%s/status.tmp", dir);
	char *path = xasprintf("%s/status", dir);
	FILE *f;
	int fd;
	double dt = (double)(now - tprev) / 1e9;

	record_stats(r, &st);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
	    0644);
	if (fd < 0 || (f = fdopen(fd, "w")) == NULL) {
		if (fd >= 0)
			close(fd);
		goto out;
	}
	fprintf(f, "pid %d\nrunning %d\nevents_set %s\nbackend %s\n"
	    "elapsed_ns %llu\n"
	    "events %llu\nrate %.0f\nstored %llu\nlost %llu\n"
	    "disk_bytes %llu\nbound %llu\nfds %llu\ncpu_ns %llu\n"
	    "updated %lld\n",
	    (int)getpid(), running, set,
	    record_backend_name(record_backend(r)),
	    (unsigned long long)(now - t0),
	    (unsigned long long)st.events,
	    dt > 0 ? (double)(st.events - ev0) / dt : 0.0,
	    (unsigned long long)st.stored, (unsigned long long)st.lost,
	    (unsigned long long)st.disk_bytes, (unsigned long long)st.bound,
	    (unsigned long long)st.fds, (unsigned long long)self_cpu_ns(),
	    (long long)time(NULL));
	if (fclose(f) == 0)
		rename(tmp, path);
out:
	free(tmp);
	free(path);
}

/*
 * The recording loop shared by record and start. ready_fd (or -1) gets
 * "ok" once recording runs, or the error line. Returns the exit status.
 */
static int
run_recorder(const char *name, struct ropts *o, int ready_fd, int progress)
{
	struct recorder *r;
	struct record_stats st;
	struct sigaction sa;
	char *cause = NULL;
	pid_t child = -1;
	int err, status = 0, child_status = -1;
	uint64_t t0, tnext, ev_prev = 0, t_prev, bytes_prev = 0, busy;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	err = record_open(&r, &o->ro, &cause);
	if (err) {
		if (ready_fd >= 0) {
			dprintf(ready_fd, "%s\n", cause);
			close(ready_fd);
		}
		cmd_error(name, "%s", cause);
		free(cause);
		return 1;
	}
	for (size_t i = 0; i < record_nwarnings(r); i++) {
		fprintf(stderr, "argus %s: warning: %s\n", name,
		    record_warning(r, i));
		if (ready_fd >= 0)
			dprintf(ready_fd, "warning: %s\n", record_warning(r, i));
	}
	if (o->command) {
		fflush(NULL);
		child = fork();
		if (child < 0) {
			err = errno;
			record_close(r, &cause);
			free(cause);
			return cmd_error(name, "cannot fork: %s", strerror(err));
		}
		if (child == 0) {
			signal(SIGINT, SIG_DFL);
			signal(SIGTERM, SIG_DFL);
			signal(SIGHUP, SIG_DFL);
			exec_command(o->command, o->no_instrument ? NULL :
			    record_marker_path(r));
		}
	}
	/*
	 * The reader must run promptly even when hundreds of threads are
	 * runnable, or the kernel overwrites what it has not read yet. It
	 * sleeps between bounded drains, so a low real-time priority is safe;
	 * the decoding thread takes the level below.
	 */
	{
		struct sched_param sp = { .sched_priority = 2 };

		if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0)
			(void)setpriority(PRIO_PROCESS, 0, -10);
	}
	if (ready_fd >= 0) {
		/* Daemon: log and pid file, now that the directory is ours. */
		char *p = xasprintf("%s/argus.log", o->ro.dir);
		int fd = open(p, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW |
		    O_CLOEXEC, 0600);

		free(p);
		if (fd >= 0) {
			dup2(fd, 2);
			close(fd);
		}
		p = xasprintf("%s/argus.pid", o->ro.dir);
		fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
		    O_CLOEXEC, 0644);
		free(p);
		if (fd >= 0) {
			dprintf(fd, "%d\n", (int)getpid());
			close(fd);
		}
		dprintf(ready_fd, "ok\n");
		close(ready_fd);
	}
	record_stats(r, &st);
	busy = (uint64_t)st.ncpus * (o->ro.buffer_kb ? o->ro.buffer_kb :
	    RECORD_DEFAULT_BUFFER_KB) * 1024 / 16;
	t0 = now_ns();
	tnext = t0 + 1000000000ull;
	t_prev = t0;
	write_status(o->ro.dir, r, record_set_name(o->ro.set), t0, t0, 0, t0, 1);
	while (!stop_sig) {
		struct timespec ts = { 0, POLL_MS * 1000000L };
		uint64_t now;
		int flush;

		/* Busy: a poll read over 1/16 of the kernel buffers. */
		record_stats(r, &st);
		if (st.bytes - bytes_prev > busy)
			ts.tv_nsec = POLL_BUSY_MS * 1000000L;
		bytes_prev = st.bytes;

		if (child > 0) {
			int ws;

			if (waitpid(child, &ws, WNOHANG) == child) {
				child_status = WIFEXITED(ws) ? WEXITSTATUS(ws) :
				    128 + WTERMSIG(ws);
				break;
			}
		}
		nanosleep(&ts, NULL);
		now = now_ns();
		flush = now >= tnext;
		if (record_poll(r, flush) != 0)
			break;
		if (o->duration_ns && now - t0 >= o->duration_ns)
			break;
		if (!flush)
			continue;
		tnext = now + 1000000000ull;
		record_stats(r, &st);
		write_status(o->ro.dir, r, record_set_name(o->ro.set), t0, now,
		    ev_prev, t_prev, 1);
		if (progress) {
			char b1[16], b2[16];

			fprintf(stderr, "\r%6.1f s  %8.0f events/s  %s of %s  "
			    "lost %llu   ", (double)(now - t0) / 1e9,
			    (double)(st.events - ev_prev) * 1e9 /
			    (double)(now - t_prev),
			    fmt_bytes(b1, sizeof(b1), st.disk_bytes),
			    fmt_bytes(b2, sizeof(b2), st.bound),
			    (unsigned long long)st.lost);
		}
		ev_prev = st.events;
		t_prev = now;
	}
	if (progress)
		fputc('\n', stderr);
	if (child > 0 && child_status < 0) {
		/* Interrupted: pass the signal on and wait for the command. */
		int ws;

		kill(child, stop_sig ? stop_sig : SIGTERM);
		if (waitpid(child, &ws, 0) == child)
			child_status = WIFEXITED(ws) ? WEXITSTATUS(ws) :
			    128 + WTERMSIG(ws);
	}
	record_poll(r, 0);
	record_sync(r);
	record_stats(r, &st);
	{
		uint64_t now = now_ns();

		write_status(o->ro.dir, r, record_set_name(o->ro.set), t0, now,
		    ev_prev, t_prev, 0);
	}
	err = record_close(r, &cause);
	if (err) {
		cmd_error(name, "%s", cause);
		free(cause);
		status = 1;
	} else if (!o->quiet && progress) {
		fprintf(stderr, "argus %s: %llu events, %llu lost, in %s\n",
		    name, (unsigned long long)st.events,
		    (unsigned long long)st.lost, o->ro.dir);
	}
	if (child > 0 && status == 0)
		return child_status < 0 ? 1 : child_status;
	return status;
}

int
cmd_record(int argc, char **argv)
{
	struct ropts o;
	int rc = parse_ropts("record", argc, argv, &o);

	if (rc >= 0)
		return rc;
	return run_recorder("record", &o, -1, !o.quiet && isatty(2));
}

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
	    "DIR records: event set, rate, disk use,\nspan on disk and lost "
	    "events (default DIR %s).\n", ARGUS_DEFAULT_TRACE);
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
	char set[32] = "?", backend[32] = "?";
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
		if (sscanf(line, "backend %31s", backend) == 1)
			continue;
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
	printf("backend:    %s\n", backend);
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
	return 0;
}
