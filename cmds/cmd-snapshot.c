/*
 * cmd-snapshot.c: argus snapshot, and the snapshots the recorder takes by
 * itself when an instrumented program marks a hang (--snapshot-on-hang).
 *
 * The copying is trace_snapshot() (trace/snapshot.c). For the recorder, a
 * struct hangsnap watches the hang counters of record_stats at each of
 * the loop's flushes: a hang mark makes a snapshot due once the hang has
 * ended and a flush has put its end on disk (or 10 s after the mark when
 * it goes on), named by the wall-clock time and the hung process. The
 * copy runs on a thread of normal priority, so the recording loop, which
 * runs at real-time priority, never waits for the disk; one snapshot at
 * a time, and hangs marked meanwhile share the next one. After each
 * snapshot the folder is pruned to its count and size bounds.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "cmd-record-local.h"
#include "common/common.h"
#include "common/progress.h"
#include "trace/trace.h"

#define DEFAULT_LAST_NS (60ULL * 1000000000ULL)
#define HANG_WAIT_NS (10ULL * 1000000000ULL)	/* snapshot an ongoing hang */
#define HANG_MARGIN_NS (5ULL * 1000000000ULL)	/* before the hang start */

static const char snapshot_usage[] =
    "usage: argus snapshot [-o TRACE] [--last SECONDS] DEST\n"
    "\n"
    "Copy the segments of TRACE (default " ARGUS_DEFAULT_TRACE ") that hold\n"
    "its last SECONDS into DEST, while the recorder keeps writing: closed\n"
    "segments are hard linked (or cloned, or copied), the open one is\n"
    "copied up to its last complete chunk. DEST is a trace of its own that\n"
    "the ring cannot overwrite.\n"
    "\n"
    "  -o, --output TRACE  the trace directory\n"
    "  --last SECONDS      how far back (default 60; 0: everything)\n"
    "  -h, --help          show this help\n";

static void
on_progress(void *arg, uint64_t done, uint64_t total)
{
	progress_update(arg, done, total);
}

int
cmd_snapshot(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "last", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *src = ARGUS_DEFAULT_TRACE;
	uint64_t last = DEFAULT_LAST_NS;
	struct trace_snapshot_stats st;
	struct progress *pg;
	char *cause = NULL;
	char b1[32], b2[32];
	int c, err;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			src = optarg;
			break;
		case 'l':
			if (parse_duration(optarg, &last) != 0)
				return cmd_usage_error("snapshot", "bad time "
				    "'%s' (seconds)", optarg);
			break;
		case 'h':
			fputs(snapshot_usage, stdout);
			return 0;
		default:
			return cmd_usage_error("snapshot", "unknown option "
			    "'%s'", argv[optind - 1]);
		}
	}
	if (argc - optind != 1)
		return cmd_usage_error("snapshot", argc - optind ?
		    "one destination" : "no destination");
	pg = progress_new("argus snapshot: copying", 0);
	err = trace_snapshot(src, argv[optind], last, on_progress, pg, &st,
	    &cause);
	progress_free(pg);
	if (err) {
		cmd_error("snapshot", "%s", cause);
		free(cause);
		return 1;
	}
	printf("%s: %u segments, %s, %s of events (%u linked, %u cloned, "
	    "%u copied)\n", argv[optind], st.segments,
	    fmt_bytes(b1, sizeof(b1), st.bytes),
	    fmt_duration(b2, sizeof(b2), st.last_ts - st.first_ts),
	    st.linked, st.cloned, st.copied);
	return 0;
}

/* --- snapshots at hangs, for the recorder ------------------------------ */

struct hangsnap {
	char *trace_dir, *snap_dir;
	unsigned keep;
	uint64_t max_bytes;
	uint64_t seen;		/* hang marks handled */
	int due;		/* a hang waits for its snapshot */
	uint64_t due_since;	/* monotonic ns of its mark */
	uint64_t ended_seen_at;	/* monotonic ns its end was seen; 0 */
	struct record_hang hang;
	uint64_t last_ts;	/* newest event read when it was taken */

	pthread_t th;
	int running;		/* the thread runs a snapshot */
	/* the job, owned by the thread while running */
	int job_dirfd;		/* snap_dir, opened and checked */
	char *job_dest;		/* the new snapshot's name in it */
	uint64_t job_last;
	int job_err;
	char *job_cause;
	volatile int job_done;
	uint64_t taken;
};

struct hangsnap *
hangsnap_new(const char *trace_dir, const char *snap_dir, unsigned keep,
    uint64_t max_bytes, char **cause)
{
	struct hangsnap *h;
	int err, fd = trace_dir_open(snap_dir, &err, cause);

	/* missing is fine (made at the first snapshot); untrusted is not */
	if (fd < 0 && err != ENOENT)
		return NULL;
	if (fd >= 0)
		close(fd);
	free(*cause);
	*cause = NULL;
	h = xcalloc(1, sizeof(*h));
	h->job_dirfd = -1;

	h->trace_dir = xstrdup(trace_dir);
	h->snap_dir = xstrdup(snap_dir);
	h->keep = keep;
	h->max_bytes = max_bytes;
	return h;
}

static void *
snap_thread(void *arg)
{
	struct hangsnap *h = arg;
	struct trace_snapshot_stats st;
	size_t removed;

	h->job_err = trace_snapshot_in(h->trace_dir, h->job_dirfd, h->job_dest,
	    h->job_last, &st, &h->job_cause);
	trace_snapshot_prune_fd(h->job_dirfd, h->keep, h->max_bytes, &removed);
	__atomic_store_n(&h->job_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Reap a finished snapshot thread and log its result. */
static void
reap(struct hangsnap *h, const char *name, int wait)
{
	if (!h->running)
		return;
	if (!wait && !__atomic_load_n(&h->job_done, __ATOMIC_ACQUIRE))
		return;
	pthread_join(h->th, NULL);
	h->running = 0;
	if (h->job_err) {
		fprintf(stderr, "argus %s: snapshot at a hang in %s: %s\n",
		    name, h->snap_dir, h->job_cause ? h->job_cause :
		    trace_strerror(h->job_err));
	} else {
		h->taken++;
		fprintf(stderr, "argus %s: hang snapshot in %s/%s\n", name,
		    h->snap_dir, h->job_dest);
	}
	close(h->job_dirfd);
	h->job_dirfd = -1;
	free(h->job_cause);
	h->job_cause = NULL;
	free(h->job_dest);
	h->job_dest = NULL;
}

/* "20261124-161203Z-comm-4242": UTC time, then the hung process (a name
   in snap_dir). */
static char *
snap_name(const struct hangsnap *h)
{
	char when[32], comm[TRACE_COMM_LEN];
	time_t now = time(NULL);
	struct tm tm;
	size_t i;

	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y%m%d-%H%M%SZ", &tm);
	for (i = 0; h->hang.comm[i] && i < sizeof(comm) - 1; i++) {
		char ch = h->hang.comm[i];

		comm[i] = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || ch == '-' || ch == '.' ||
		    ch == '_' ? ch : '_';
	}
	comm[i] = '\0';
	return xasprintf("%s-%s-%u", when, i ? comm : "pid", h->hang.pid);
}

static void
start_snapshot(struct hangsnap *h, const char *name)
{
	pthread_attr_t at;
	struct sched_param sp = { 0 };
	char *base = snap_name(h), *dest = xstrdup(base), *cause = NULL;
	struct stat sb;
	uint64_t span;
	int created, dfd, err;

	created = mkdir(h->snap_dir, 0700) == 0;
	if (!created && errno != EEXIST) {
		fprintf(stderr, "argus %s: cannot create %s: %s\n", name,
		    h->snap_dir, strerror(errno));
		free(base);
		free(dest);
		return;
	}
	/* checked as a trace directory: a link planted there is refused */
	dfd = trace_dir_open(h->snap_dir, &err, &cause);
	if (dfd < 0) {
		fprintf(stderr, "argus %s: snapshot at a hang: %s\n", name,
		    cause);
		free(cause);
		free(base);
		free(dest);
		return;
	}
	/* as readable as the trace (a group given with --group) */
	if (created && stat(h->trace_dir, &sb) == 0 &&
	    fchown(dfd, (uid_t)-1, sb.st_gid) == 0)
		(void)fchmod(dfd, sb.st_mode & 0750);
	for (int k = 2; fstatat(dfd, dest, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
	    k < 100; k++) {
		free(dest);
		dest = xasprintf("%s-%d", base, k);
	}
	free(base);
	h->job_dirfd = dfd;
	h->job_dest = dest;
	/* the last minute, and at least from a little before the hang */
	span = h->last_ts > h->hang.start_ts ? h->last_ts - h->hang.start_ts +
	    HANG_MARGIN_NS : 0;
	h->job_last = span > DEFAULT_LAST_NS ? span : DEFAULT_LAST_NS;
	h->job_done = 0;
	h->job_err = 0;
	pthread_attr_init(&at);
	pthread_attr_setinheritsched(&at, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&at, SCHED_OTHER);
	pthread_attr_setschedparam(&at, &sp);
	if (pthread_create(&h->th, &at, snap_thread, h) == 0) {
		h->running = 1;
	} else {
		fprintf(stderr, "argus %s: cannot start a snapshot thread\n",
		    name);
		free(h->job_dest);
		h->job_dest = NULL;
		close(h->job_dirfd);
		h->job_dirfd = -1;
	}
	pthread_attr_destroy(&at);
}

void
hangsnap_poll(struct hangsnap *h, const char *name,
    const struct record_stats *st, uint64_t now, int stopping)
{
	reap(h, name, 0);
	if (st->hang.begun > h->seen) {
		/* a new hang; one that ended before it is taken now */
		if (h->due && h->ended_seen_at && !h->running) {
			h->due = 0;
			start_snapshot(h, name);
		}
		if (!h->due)
			h->due_since = now;
		h->due = 1;
		h->seen = st->hang.begun;
		h->hang = st->hang;
		h->last_ts = st->last_ts;
		h->ended_seen_at = 0;
	}
	if (!h->due)
		return;
	/* over when every hang marked so far has ended */
	if (h->ended_seen_at == 0 && st->hang.ended >= h->seen)
		h->ended_seen_at = now;
	/*
	 * Due a flush after the end was seen (so the end is on disk), when
	 * the hang goes on for long, or when the recorder stops.
	 */
	if (!stopping && !(h->ended_seen_at && now - h->ended_seen_at >=
	    500000000ULL) && now - h->due_since < HANG_WAIT_NS)
		return;
	if (h->running)
		return;		/* the next poll takes it */
	h->last_ts = st->last_ts;
	h->due = 0;
	start_snapshot(h, name);
}

void
hangsnap_free(struct hangsnap *h, const char *name)
{
	if (h == NULL)
		return;
	reap(h, name, 1);
	free(h->trace_dir);
	free(h->snap_dir);
	free(h);
}

void
hangsnap_finish(struct hangsnap *h, const char *name,
    const struct record_stats *st)
{
	reap(h, name, 1);
	if (h->due || st->hang.begun > h->seen) {
		hangsnap_poll(h, name, st, now_ns(), 1);
		reap(h, name, 1);
	}
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void
hangsnap_list(const char *dir, FILE *f)
{
	char *why = NULL;
	int err, fd = trace_dir_open(dir, &err, &why);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	char **names = NULL;
	size_t n = 0;

	if (d == NULL) {
		if (fd < 0 && err != ENOENT)
			fprintf(f, "snapshots:  %s\n", why);
		else
			fprintf(f, "snapshots:  none yet in %s\n", dir);
		if (fd >= 0)
			close(fd);
		free(why);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		names = xreallocarray(names, n + 1, sizeof(*names));
		names[n++] = xstrdup(de->d_name);
	}
	closedir(d);
	if (n > 1)
		qsort(names, n, sizeof(*names), name_cmp);
	fprintf(f, "snapshots:  %zu in %s\n", n, dir);
	for (size_t i = 0; i < n; i++) {
		char *p = xasprintf("%s/%s", dir, names[i]);
		struct trace_reader *r;
		char *cause = NULL;
		char b1[32], b2[32];

		if (trace_reader_open(&r, p, &cause) == 0) {
			const struct trace_info *ti = trace_reader_info(r);

			fprintf(f, "  %s  %s of events, %u segments, %s\n",
			    names[i], fmt_duration(b1, sizeof(b1),
			    ti->last_ts - ti->first_ts), ti->nsegments,
			    fmt_bytes(b2, sizeof(b2), ti->disk_bytes));
			trace_reader_close(r);
		} else {
			fprintf(f, "  %s  (unreadable: %s)\n", names[i], cause);
			free(cause);
		}
		free(p);
		free(names[i]);
	}
	free(names);
}
