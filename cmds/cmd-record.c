/*
 * cmd-record.c: argus record, and the recording loop that argus start
 * (cmd-start.c) runs in its daemon.
 *
 * record runs the recorder (trace/record.c) in the foreground: a loop that
 * drains the kernel buffers every 100 ms, flushes the trace every second
 * and rewrites DIR/status (a few "key value" lines) for `argus status`.
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
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "cmd-record-local.h"
#include "common/common.h"
#include "trace/trace.h"

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


static void
usage_record(FILE *f, const char *name)
{
	fprintf(f,
	    "usage: argus %s [-o DIR] [--size SIZE] [--segment SIZE]\n"
	    "       [--duration SECONDS] [--events SET] [--buffer-kb N]\n"
	    "       [--group GROUP] [--backend auto|bpf|tracefs]\n"
	    "       [--no-instrument] [--net] [--netns NS] [--cgroup DIR]\n"
	    "       [--host NAME]\n"
	    "       [--stacks MS|off] [--stack-depth N] [--stack-rate N] [-q]\n"
	    "       [--snapshot-on-hang DIR [--snapshot-max N]"
	    " [--snapshot-size SIZE]]%s\n"
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
	    "  --net               also the sends of TCP messages to other hosts,\n"
	    "                      so that the traces of several hosts pair\n"
	    "                      their messages (BPF backend)\n"
	    "  --netns NS          only the tasks of network namespace NS (a\n"
	    "                      name of ip netns, or a path such as\n"
	    "                      /proc/PID/ns/net), with kernel threads and\n"
	    "                      interrupts: one host of several (BPF)\n"
	    "  --cgroup DIR        only the tasks of cgroup v2 directory DIR\n"
	    "                      and the cgroups below it, likewise: a\n"
	    "                      container or a service (BPF); with --netns,\n"
	    "                      the tasks inside both\n"
	    "  --host NAME         the host name the trace gives (default: the\n"
	    "                      system's)\n"
	    "  --stacks MS|off     the user stack of every wait of MS or more\n"
	    "                      (default 10) at its end, its waker's, and\n"
	    "                      samples of threads that run that long,\n"
	    "                      with their kernel stacks in a call (BPF)\n"
	    "  --stack-depth N     frames of a stack at most (1 to 32, default 32)\n"
	    "  --stack-rate N      stacks a CPU takes a second at most for waits\n"
	    "                      under ten times --stacks (default %u; 0: no\n"
	    "                      bound); longer waits always get theirs\n"
	    "  --snapshot-on-hang DIR  when an instrumented program marks a hang,\n"
	    "                      snapshot the last minute into a new directory\n"
	    "                      of DIR (see argus-snapshot(1))\n"
	    "  --snapshot-max N    snapshots kept, oldest go first (default %u)\n"
	    "  --snapshot-size SIZE  bytes of snapshots kept (default 1G)\n"
	    "  -q, --quiet         no progress line\n",
	    name, strcmp(name, "record") == 0 ? " [-- COMMAND [ARGS...]]" : "",
	    ARGUS_DEFAULT_TRACE, RECORD_DEFAULT_BUFFER_KB,
	    RECORD_DEFAULT_STACK_RATE, SNAP_DEFAULT_KEEP);
	if (strcmp(name, "record") == 0)
		fprintf(f, "\nWith COMMAND, run it (as the invoking user under "
		    "sudo) while recording,\nstop when it ends and exit with "
		    "its status.\n");
	else
		fprintf(f, "\nThe recorder runs as a daemon; see 'argus stop' "
		    "and 'argus status'.\n");
}

/* Print usage error why (allocated, freed) as command name's: 2. */
static int
scope_error(const char *name, char *why)
{
	cmd_usage_error(name, "%s", why);
	free(why);
	return 2;
}

int
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
		{ "net", no_argument, NULL, 'n' },
		{ "netns", required_argument, NULL, 'x' },
		{ "cgroup", required_argument, NULL, 'C' },
		{ "host", required_argument, NULL, 'X' },
		{ "stacks", required_argument, NULL, 'T' },
		{ "stack-depth", required_argument, NULL, 'F' },
		{ "stack-rate", required_argument, NULL, 'R' },
		{ "backend", required_argument, NULL, 'B' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "snapshot-on-hang", required_argument, NULL, 'H' },
		{ "snapshot-max", required_argument, NULL, 'K' },
		{ "snapshot-size", required_argument, NULL, 'Z' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	uint64_t v, seg;
	char cwd[PATH_MAX];
	const char *size_arg = NULL, *seg_arg = "64M";
	char *why = NULL;

	memset(o, 0, sizeof(*o));
	o->ro.scope_cgfd = -1;
	o->ro.dir = ARGUS_DEFAULT_TRACE;
	o->ro.set = RECORD_SET_DEFAULT;
	o->ro.wopts.group = (gid_t)-1;
	o->ro.marker_file = 1;
	o->ro.stack_ns = 10000000;
	o->ro.stack_rate = RECORD_DEFAULT_STACK_RATE;
	o->snap_keep = SNAP_DEFAULT_KEEP;
	o->snap_bytes = SNAP_DEFAULT_BYTES;
	/* ARGUS_BACKEND picks the default (test suites run on either) */
	if (getenv("ARGUS_BACKEND") && *getenv("ARGUS_BACKEND")) {
		o->ro.backend = record_backend_lookup(getenv("ARGUS_BACKEND"));
		if (o->ro.backend < 0)
			return cmd_usage_error(name, "unknown backend '%s' in "
			    "ARGUS_BACKEND (auto, bpf, tracefs)",
			    getenv("ARGUS_BACKEND"));
	}
	/* ARGUS_BPF_STATS=1: the kernel counts the programs' run time (the
	   cost of the recorder in the kernel, for benchmarks) */
	o->ro.bpf_stats = getenv("ARGUS_BPF_STATS") != NULL &&
	    strcmp(getenv("ARGUS_BPF_STATS"), "1") == 0;
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
			size_arg = optarg;
			break;
		case 'S':
			if (parse_size(optarg, &v) != 0 || v == 0)
				return cmd_usage_error(name,
				    "bad segment size '%s'", optarg);
			if (v < TRACE_MIN_SEGMENT)
				return cmd_usage_error(name, "segment size %s "
				    "is below the minimum of %uk", optarg,
				    TRACE_MIN_SEGMENT >> 10);
			o->ro.wopts.segment_size = v;
			seg_arg = optarg;
			break;
		case 'd':
			if (parse_duration(optarg, &v) != 0)
				return cmd_usage_error(name,
				    "bad duration '%s'", optarg);
			if (v == 0)
				return cmd_usage_error(name, "bad duration "
				    "'%s' (leave --duration out to record "
				    "until stopped)", optarg);
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
		case 'n':
			o->ro.net_sends = 1;
			break;
		case 'x':
			if (o->ro.scope_netns != 0)
				return cmd_usage_error(name, "--netns given twice");
			if (record_scope_netns(optarg, &o->ro.scope_netns,
			    &why) != 0)
				return scope_error(name, why);
			break;
		case 'C':
			if (o->ro.scope_cgroup != 0)
				return cmd_usage_error(name, "--cgroup given twice");
			if (record_scope_cgroup(optarg, &o->ro, &why) != 0)
				return scope_error(name, why);
			break;
		case 'T':
			if (strcmp(optarg, "off") == 0)
				o->ro.stack_ns = 0;
			else if (parse_u64(optarg, &v) == 0 && v > 0 &&
			    v <= 3600000)
				o->ro.stack_ns = v * 1000000;
			else
				return cmd_usage_error(name, "bad --stacks '%s' "
				    "(milliseconds, or off)", optarg);
			break;
		case 'F':
			if (parse_u64(optarg, &v) != 0 || v == 0 ||
			    v > TRACE_STACK_MAX)
				return cmd_usage_error(name, "bad --stack-depth "
				    "'%s' (1 to %d frames)", optarg,
				    TRACE_STACK_MAX);
			o->ro.stack_depth = (unsigned)v;
			break;
		case 'R':
			if (parse_u64(optarg, &v) != 0 || v > 1000000)
				return cmd_usage_error(name, "bad --stack-rate "
				    "'%s' (stacks a second per CPU, 0 to "
				    "1000000)", optarg);
			o->ro.stack_rate = (unsigned)v;
			break;
		case 'X':
			if (optarg[0] == '\0' || strlen(optarg) > 64 ||
			    strpbrk(optarg, " \t\n/:") != NULL)
				return cmd_usage_error(name, "bad host name '%s' "
				    "(1 to 64 characters, no blank, '/' or "
				    "':')", optarg);
			o->ro.wopts.hostname = optarg;
			break;
		case 'N':
			o->no_instrument = 1;
			o->ro.marker_file = 0;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'H':
			/* the daemon changes to /: keep the folder absolute */
			if (optarg[0] != '/' && getcwd(cwd, sizeof(cwd))) {
				free(o->snap_dir_buf);
				o->snap_dir_buf = xasprintf("%s/%s", cwd, optarg);
				o->snap_dir = o->snap_dir_buf;
			} else {
				o->snap_dir = optarg;
			}
			break;
		case 'K':
			if (parse_u64(optarg, &v) != 0 || v == 0 || v > 100000)
				return cmd_usage_error(name,
				    "bad snapshot count '%s'", optarg);
			o->snap_keep = (unsigned)v;
			break;
		case 'Z':
			if (parse_size(optarg, &v) != 0 || v == 0)
				return cmd_usage_error(name,
				    "bad snapshot size '%s'", optarg);
			o->snap_bytes = v;
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
	if (o->ro.scope_netns != 0 && o->ro.backend == RECORD_BACKEND_TRACEFS)
		return cmd_usage_error(name, "--netns needs the BPF backend "
		    "(tracefs cannot tell the namespace of a task)");
	if (o->ro.scope_cgroup != 0 && o->ro.backend == RECORD_BACKEND_TRACEFS)
		return cmd_usage_error(name, "--cgroup needs the BPF backend "
		    "(tracefs cannot tell the cgroup of a task)");
	seg = o->ro.wopts.segment_size ? o->ro.wopts.segment_size :
	    TRACE_DEFAULT_SEGMENT;
	if (size_arg && seg * 2 > o->ro.wopts.size_bound)
		return cmd_usage_error(name, "size bound %s must hold two "
		    "segments of %s (give a smaller --segment, at least %uk)",
		    size_arg, seg_arg, TRACE_MIN_SEGMENT >> 10);
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

/* A decimal id of sudo's environment: 0 and *out, or -1. */
static int
parse_id(const char *s, unsigned *out)
{
	uint64_t v;

	if (s == NULL || parse_u64(s, &v) != 0 || v >= UINT32_MAX)
		return -1;
	*out = (unsigned)v;
	return 0;
}

int
sudo_identity(const char *name, struct ropts *o)
{
	const char *su = getenv("SUDO_UID"), *sg = getenv("SUDO_GID");
	const char *user = getenv("SUDO_USER");
	struct passwd *pw;
	unsigned uid, gid;

	o->drop = 0;
	if (getuid() != 0 || su == NULL)
		return 0;
	if (parse_id(su, &uid) != 0)
		return cmd_error(name, "SUDO_UID='%s' is not a user id: "
		    "refusing to run the command as root", su);
	pw = getpwuid((uid_t)uid);
	if (sg != NULL) {
		if (parse_id(sg, &gid) != 0)
			return cmd_error(name, "SUDO_GID='%s' is not a group "
			    "id: refusing to run the command as root", sg);
	} else if (pw != NULL) {
		gid = (unsigned)pw->pw_gid;	/* the user's own group */
	} else {
		return cmd_error(name, "SUDO_UID=%u without SUDO_GID names no "
		    "user: refusing to run the command as root", uid);
	}
	/* SUDO_USER only for its groups, and only when it is that user. */
	if (user != NULL && (pw == NULL || strcmp(pw->pw_name, user) != 0))
		user = NULL;
	o->drop = 1;
	o->uid = (uid_t)uid;
	o->gid = (gid_t)gid;
	snprintf(o->user, sizeof(o->user), "%s", user ? user :
	    pw ? pw->pw_name : "");
	return 0;
}

/*
 * In the child: drop to the sudo user (if any, checked by
 * sudo_identity), set up env and exec. marker is NULL with
 * --no-instrument: no libargus, no marker.
 */
static void
exec_command(const struct ropts *o, const char *marker)
{
	char **cmd = o->command;
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
	if (o->drop) {
		uid_t uid = o->uid;
		gid_t gid = o->gid;
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

		if ((o->user[0] ? initgroups(o->user, gid) :
		    setgroups(0, NULL)) != 0 ||
		    setgid(gid) != 0 || setuid(uid) != 0 || (uid != 0 &&
		    setuid(0) == 0)) {
			fprintf(stderr, "argus record: cannot drop privileges "
			    "to uid %u: %s\n", (unsigned)uid, strerror(errno));
			_exit(126);
		}
	}
	/* The command ends with the recorder, even when it is killed (set
	   after the uid change, which clears it). */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != o->parent)
		_exit(126);
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

/*
 * Rewrite dfd/status (through status.tmp, renamed over it), relative to
 * the trace directory's descriptor: never by the directory's name, which
 * another user may have renamed and replaced with a link.
 */
static void
write_status(int dfd, const struct recorder *r, const char *set,
    uint64_t t0, uint64_t now, uint64_t ev0, uint64_t tprev, int running,
    const char *snap_dir)
{
	struct record_stats st;
	FILE *f;
	int fd;
	double dt = (double)(now - tprev) / 1e9;

	record_stats(r, &st);
	fd = openat(dfd, "status.tmp", O_WRONLY | O_CREAT | O_TRUNC |
	    O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if ((f = fdopen(fd, "w")) == NULL) {
		close(fd);
		unlinkat(dfd, "status.tmp", 0);
		return;
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
	fprintf(f, "hangs %llu\n", (unsigned long long)st.hang.begun);
	if (st.stacks_skipped > 0)
		fprintf(f, "stacks_skipped %llu\n",
		    (unsigned long long)st.stacks_skipped);
	if (st.bpf_runs > 0)
		fprintf(f, "bpf_ns %llu\nbpf_runs %llu\n",
		    (unsigned long long)st.bpf_ns,
		    (unsigned long long)st.bpf_runs);
	if (snap_dir)
		fprintf(f, "snapshot_dir %s\n", snap_dir);
	/* a full disk leaves the old status, never half a new one */
	if (fclose(f) != 0 || renameat(dfd, "status.tmp", dfd, "status") != 0)
		unlinkat(dfd, "status.tmp", 0);
}

/*
 * Until the first chunk of events is on disk (at most 5 s), drain and
 * flush every 100 ms instead of every second: argus start returns once
 * the trace has a segment that argus snapshot can take.
 */
static void
await_first_chunk(struct recorder *r)
{
	struct record_stats st;

	for (int i = 0; i < 50 && !stop_sig; i++) {
		struct timespec ts = { 0, POLL_MS * 1000000L };

		nanosleep(&ts, NULL);
		if (record_poll(r, 1) != 0)
			return;
		record_sync(r);
		record_stats(r, &st);
		if (st.disk_bytes > 0)
			return;
	}
}

/*
 * The daemon's log (stderr from now on) and pid file, in the trace
 * directory dfd; the pid file is removed at the end by remove_pidfile.
 */
static void
open_daemon_files(int dfd)
{
	int fd = openat(dfd, "argus.log", O_WRONLY | O_CREAT | O_APPEND |
	    O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd >= 0) {
		dup2(fd, 2);
		close(fd);
	}
	fd = openat(dfd, "argus.pid", O_WRONLY | O_CREAT | O_TRUNC |
	    O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd >= 0) {
		dprintf(fd, "%d\n", (int)getpid());
		close(fd);
	}
}

/* Remove dfd/argus.pid when it still names this process. */
static void
remove_pidfile(int dfd)
{
	char buf[32];
	char *end;
	long pid;

	if (trace_dir_read_file(dfd, "argus.pid", buf, sizeof(buf)) <= 0)
		return;
	pid = strtol(buf, &end, 10);
	if (end != buf && (*end == '\n' || *end == '\0') &&
	    pid == (long)getpid())
		unlinkat(dfd, "argus.pid", 0);
}

/*
 * The recorder could not start, for cause (freed here): the waiting
 * parent of a daemon (ready_fd >= 0, closed here) reads cause, and it is
 * reported as the command's error. Returns the exit status, 1.
 */
static int
start_failed(const char *name, int ready_fd, char *cause)
{
	if (ready_fd >= 0) {
		dprintf(ready_fd, "%s\n", cause);
		close(ready_fd);
	}
	cmd_error(name, "%s", cause);
	free(cause);
	return 1;
}

int
run_recorder(const char *name, struct ropts *o, int ready_fd, int progress)
{
	struct recorder *r;
	struct record_stats st;
	struct hangsnap *hs = NULL;
	struct sigaction sa;
	char *cause = NULL;
	pid_t child = -1;
	int err, status = 0, child_status = -1, dfd;
	int is_daemon = ready_fd >= 0;
	uint64_t t0, tnext, ev_prev = 0, t_prev, bytes_prev = 0, busy;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	if (o->snap_dir && (hs = hangsnap_new(o->ro.dir, o->snap_dir,
	    o->snap_keep, o->snap_bytes, &cause)) == NULL) {
		return start_failed(name, ready_fd, cause);
	}
	err = record_open(&r, &o->ro, &cause);
	if (err) {
		hangsnap_free(hs, name);
		return start_failed(name, ready_fd, cause);
	}
	/* ours until the end, whatever happens to the directory's name */
	dfd = fcntl(record_dirfd(r), F_DUPFD_CLOEXEC, 3);
	for (size_t i = 0; i < record_nwarnings(r); i++) {
		fprintf(stderr, "argus %s: warning: %s\n", name,
		    record_warning(r, i));
		if (ready_fd >= 0)
			dprintf(ready_fd, "warning: %s\n", record_warning(r, i));
	}
	if (o->command) {
		fflush(NULL);
		o->parent = getpid();
		child = fork();
		if (child < 0) {
			err = errno;
			record_close(r, &cause);
			free(cause);
			hangsnap_free(hs, name);
			close(dfd);
			return cmd_error(name, "cannot fork: %s", strerror(err));
		}
		if (child == 0) {
			signal(SIGINT, SIG_DFL);
			signal(SIGTERM, SIG_DFL);
			signal(SIGHUP, SIG_DFL);
			exec_command(o, o->no_instrument ? NULL :
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
	if (is_daemon) {
		/* log and pid file, now that the directory is ours; ready
		   once a segment with events is on disk */
		open_daemon_files(dfd);
		await_first_chunk(r);
		dprintf(ready_fd, "ok\n");
		close(ready_fd);
	}
	record_stats(r, &st);
	busy = (uint64_t)st.ncpus * (o->ro.buffer_kb ? o->ro.buffer_kb :
	    RECORD_DEFAULT_BUFFER_KB) * 1024 / 16;
	t0 = now_ns();
	tnext = t0 + 1000000000ull;
	t_prev = t0;
	write_status(dfd, r, record_set_name(o->ro.set), t0, t0, 0, t0, 1,
	    o->snap_dir);
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
		write_status(dfd, r, record_set_name(o->ro.set), t0, now,
		    ev_prev, t_prev, 1, o->snap_dir);
		if (hs)
			hangsnap_poll(hs, name, &st, now, 0);
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

		write_status(dfd, r, record_set_name(o->ro.set), t0, now,
		    ev_prev, t_prev, 0, o->snap_dir);
	}
	err = record_close(r, &cause);
	if (hs) {
		/* closed: a hang still due is snapshotted from closed files */
		if (!err)
			hangsnap_finish(hs, name, &st);
		hangsnap_free(hs, name);
	}
	if (err) {
		cmd_error(name, "%s", cause);
		free(cause);
		status = 1;
	} else if (!o->quiet && progress) {
		fprintf(stderr, "argus %s: %llu events, %llu lost, in %s\n",
		    name, (unsigned long long)st.events,
		    (unsigned long long)st.lost, o->ro.dir);
		if (st.stacks_skipped > 0)
			fprintf(stderr, "argus %s: %llu stacks of short waits "
			    "left out over --stack-rate %u\n", name,
			    (unsigned long long)st.stacks_skipped,
			    o->ro.stack_rate);
	}
	if (is_daemon)
		remove_pidfile(dfd);
	close(dfd);
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
	if (o.command && sudo_identity("record", &o) != 0)
		return 1;
	return run_recorder("record", &o, -1, !o.quiet && isatty(2));
}
