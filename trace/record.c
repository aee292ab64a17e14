/*
 * record.c: the recorder's life: private tracefs instance, per-CPU raw
 * reading, and clean removal.
 *
 * struct recorder (record-local.h) holds the instance "argus-PID" under
 * the tracing directory and one nonblocking trace_pipe_raw descriptor per
 * CPU. record_poll() reads every CPU's pages until the kernel has none
 * ready (bounded per call so one busy CPU cannot starve the rest) and
 * queues them for the decoding thread (record-pump.c). The instance uses
 * the "boot" clock, so timestamps are CLOCK_BOOTTIME nanoseconds.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <tracefs.h>

#include "common/common.h"
#include "user-protocol.h"
#include "record-local.h"

#define PROBE_SYSTEM "argus_probes"

static const char *const set_names[] = { "sched", "default", "full" };
static const char *const backend_names[] = { "auto", "tracefs", "bpf" };

int
record_backend_lookup(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(backend_names); i++)
		if (strcmp(name, backend_names[i]) == 0)
			return (int)i;
	return -1;
}

const char *
record_backend_name(int backend)
{
	return backend >= 0 && (size_t)backend < ARRAY_SIZE(backend_names) ?
	    backend_names[backend] : "?";
}

int
record_have_bpf(void)
{
#ifdef ARGUS_BPF
	return 1;
#else
	return 0;
#endif
}

int
record_backend(const struct recorder *r)
{
	return r->bpf ? RECORD_BACKEND_BPF : RECORD_BACKEND_TRACEFS;
}

int
record_set_lookup(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(set_names); i++)
		if (strcmp(name, set_names[i]) == 0)
			return (int)i;
	return -1;
}

const char *
record_set_name(int set)
{
	return set >= 0 && (size_t)set < ARRAY_SIZE(set_names) ?
	    set_names[set] : "?";
}

void
rec_warn(struct recorder *r, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (s == NULL)
		return;
	r->warn = xreallocarray(r->warn, r->nwarn + 1, sizeof(*r->warn));
	r->warn[r->nwarn++] = s;
}

void
rec_add(struct recorder *r, const struct trace_event *ev)
{
	int err;

	if (r->err)
		return;		/* the trace cannot take more (full disk) */
	err = trace_writer_add(r->w, ev);

	if (err == 0)
		r->stored++;
	else if (err != TRACE_EORDER && r->err == 0)
		r->err = err;
}

static uint64_t
clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Write a string to a file of the instance; 0 or errno. */
static int
inst_write(struct recorder *r, const char *file, const char *val)
{
	char *path = xasprintf("%s/%s", r->inst_path, file);
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	int err = 0;

	free(path);
	if (fd < 0)
		return errno;
	if (write(fd, val, strlen(val)) < 0)
		err = errno;
	close(fd);
	return err;
}

static int
stale_cb(const char *name, void *arg)
{
	int *n = arg;
	char *end;
	long pid;

	if (strncmp(name, "argus-", 6) != 0)
		return 0;
	pid = strtol(name + 6, &end, 10);
	if (*end != '\0' || pid <= 0)
		return 0;
	if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
		return 0;
	struct tracefs_instance *in = tracefs_instance_alloc(NULL, name);
	if (in) {
		/* Tells a libargus still writing there to let go. */
		(void)tracefs_instance_file_write(in, "tracing_on", "0");
		if (tracefs_instance_destroy(in) == 0)
			(*n)++;
		tracefs_instance_free(in);
	}
	return 0;
}

int
record_remove_stale(void)
{
	int n = 0;

	tracefs_instances_walk(stale_cb, &n);
	return n;
}

/*
 * Syscalls of the default set: those that block or communicate. They are
 * enabled one by one (syscalls:sys_enter_NAME and sys_exit_NAME), which
 * costs the others nothing and records only their real arguments.
 */
static const char *const comm_syscalls[] = {
	"read", "write", "readv", "writev", "close", "poll", "ppoll",
	"select", "pselect6", "epoll_wait", "epoll_pwait", "epoll_pwait2",
	"futex", "futex_waitv", "nanosleep", "clock_nanosleep", "pause",
	"wait4", "waitid", "flock", "fcntl", "semop", "semtimedop", "msgsnd",
	"msgrcv", "sched_yield", "connect", "accept", "accept4", "sendto",
	"recvfrom", "sendmsg", "recvmsg", "sendmmsg", "recvmmsg",
	"rt_sigsuspend", "rt_sigtimedwait",
};

/* Kernel event id of an event of the instance, or -1. */
static int
event_id(struct recorder *r, const char *sys, const char *name)
{
	char *path = xasprintf("%s/events/%s/%s/id", r->inst_path, sys, name);
	char buf[32];
	int fd = open(path, O_RDONLY | O_CLOEXEC), n;

	free(path);
	if (fd < 0)
		return -1;
	n = (int)read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return atoi(buf);
}

/*
 * Enable the default set's syscalls, never for the recorder itself (its
 * reads of the buffers would feed themselves). Syscalls this kernel or
 * architecture does not have are skipped.
 */
static int
enable_syscalls(struct recorder *r, char **cause)
{
	char *flt = xasprintf("common_pid != %d", (int)getpid());
	int err = 0, n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(comm_syscalls) && !err; i++) {
		for (int exit = 0; exit < 2; exit++) {
			char *ev = xasprintf("sys_%s_%s", exit ? "exit" : "enter",
			    comm_syscalls[i]);
			char *file;
			int id = event_id(r, "syscalls", ev);

			if (id < 0) {
				free(ev);
				continue;
			}
			file = xasprintf("events/syscalls/%s/filter", ev);
			err = inst_write(r, file, flt);
			free(file);
			if (!err) {
				file = xasprintf("events/syscalls/%s/enable", ev);
				err = inst_write(r, file, "1");
				free(file);
			}
			if (err) {
				*cause = xasprintf("cannot enable syscalls:%s: %s",
				    ev, strerror(err));
				free(ev);
				break;
			}
			rec_decode_add(r, (unsigned)id, exit ? DK_SYSC_EXIT :
			    DK_SYSC_ENTER);
			n++;
			free(ev);
		}
	}
	free(flt);
	if (!err && n == 0)
		rec_warn(r, "the kernel has no syscall events; the analysis "
		    "will miss what threads wait for and their messages");
	return err;
}

/* Filter of the raw syscall events (full set): not the recorder's own. */
static char *
syscall_filter(void)
{
	return xasprintf("common_pid != %d", (int)getpid());
}

static void
rec_free(struct recorder *r)
{
	if (r->cpus) {
		for (unsigned i = 0; i < r->ncpus; i++)
			if (r->cpus[i].fd >= 0)
				close(r->cpus[i].fd);
	}
	free(r->cpus);
	free(r->cg_pids);
	rec_decode_free(r);
	rec_proc_free(r);
	for (size_t i = 0; i < r->nwarn; i++)
		free(r->warn[i]);
	free(r->warn);
	free(r->dir);
	free(r->inst_name);
	free(r->inst_path);
	free(r->marker_path);
	free(r);
}

/*
 * Remove our instance. Callers first set its tracing_on to 0 and remove
 * ARGUS_MARKER_PATH_FILE: that is how libargus learns to let go of
 * trace_marker_raw, which it checks at most once a second. Until it has,
 * rmdir fails with EBUSY (an open file pins an instance): retry for 2 s.
 */
static void
remove_instance(struct recorder *r)
{
	struct tracefs_instance *in;
	char *path;

	if (r->inst_name == NULL)
		return;
	in = tracefs_instance_alloc(NULL, r->inst_name);
	if (in == NULL)
		return;
	path = tracefs_instance_get_dir(in);
	for (int i = 0; path && i < 40; i++) {
		struct timespec ts = { 0, 50000000L };

		if (rmdir(path) == 0 || errno != EBUSY)
			break;
		nanosleep(&ts, NULL);
	}
	tracefs_put_tracing_file(path);
	tracefs_instance_free(in);
}

/*
 * Close the CPU buffers (rmdir of the instance fails while its files are
 * open), remove the instance and free the recorder.
 */
static void
release(struct recorder *r)
{
	rec_pump_free(r);	/* first: the thread uses what follows */
	rec_bpf_free(r);
	for (unsigned i = 0; r->cpus && i < r->ncpus; i++) {
		if (r->cpus[i].fd >= 0)
			close(r->cpus[i].fd);
		r->cpus[i].fd = -1;
	}
	remove_instance(r);
	rec_guard_stop(r);
	rec_free(r);
}

static int
enable_events(struct recorder *r, char **cause)
{
	for (size_t i = 0; i < rec_nevtab; i++) {
		const struct evspec *s = &rec_evtab[i];
		char *file;
		int err;

		if (s->set > r->set || strcmp(s->sys, "ftrace") == 0)
			continue;
		if (strcmp(s->sys, "raw_syscalls") == 0) {
			char *flt = syscall_filter();

			file = xasprintf("events/%s/%s/filter", s->sys, s->name);

			err = inst_write(r, file, flt);
			free(flt);
			free(file);
			if (err) {
				*cause = xasprintf("cannot set the syscall "
				    "filter: %s", strerror(err));
				return err;
			}
		}
		file = xasprintf("events/%s/%s/enable", s->sys, s->name);
		err = inst_write(r, file, "1");
		free(file);
		if (err == ENOENT) {
			rec_warn(r, "the kernel lacks the event %s:%s; the "
			    "analysis will miss %s", s->sys, s->name, s->miss);
			continue;
		}
		if (err) {
			*cause = xasprintf("cannot enable %s:%s: %s", s->sys,
			    s->name, strerror(err));
			return err;
		}
	}
	return 0;
}

static int
open_cpus(struct recorder *r, char **cause)
{
	char *path;
	char buf[32];
	int fd, n;

	r->ncpus = 0;
	for (;;) {
		struct stat st;

		path = xasprintf("%s/per_cpu/cpu%u", r->inst_path, r->ncpus);
		n = stat(path, &st);
		free(path);
		if (n != 0)
			break;
		r->ncpus++;
	}
	if (r->ncpus == 0) {
		*cause = xasprintf("no per-CPU buffers under %s", r->inst_path);
		return ENOENT;
	}
	r->cpus = xcalloc(r->ncpus, sizeof(*r->cpus));
	for (unsigned i = 0; i < r->ncpus; i++)
		r->cpus[i].fd = -1;
	for (unsigned i = 0; i < r->ncpus; i++) {
		path = xasprintf("%s/per_cpu/cpu%u/trace_pipe_raw", r->inst_path,
		    i);
		r->cpus[i].fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (r->cpus[i].fd < 0) {
			int err = errno;

			*cause = xasprintf("cannot open %s: %s", path,
			    strerror(err));
			free(path);
			return err;
		}
		free(path);
	}
	/* Sub-buffer size (4 KiB unless the kernel was told otherwise). */
	r->subbuf = (unsigned)sysconf(_SC_PAGESIZE);
	path = xasprintf("%s/buffer_subbuf_size_kb", r->inst_path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	free(path);
	if (fd >= 0) {
		n = (int)read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n > 0) {
			buf[n] = '\0';
			if (atoi(buf) > 0)
				r->subbuf = (unsigned)atoi(buf) * 1024;
		}
	}
	return 0;
}

static void
publish_marker(struct recorder *r)
{
	char *tmp;
	int fd;

	if (mkdir("/run/argus", 0755) != 0 && errno != EEXIST)
		return;
	tmp = xasprintf("%s.%d", ARGUS_MARKER_PATH_FILE, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
	    0644);
	if (fd >= 0) {
		dprintf(fd, "%s\n", r->marker_path);
		close(fd);
		if (rename(tmp, ARGUS_MARKER_PATH_FILE) == 0)
			r->marker_file = 1;
		else
			unlink(tmp);
	}
	free(tmp);
}

static void
unpublish_marker(struct recorder *r)
{
	char buf[512];
	int fd;
	ssize_t n;

	if (!r->marker_file)
		return;
	/* Remove the file only while it still names our instance. */
	fd = open(ARGUS_MARKER_PATH_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n > 0) {
		buf[n] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		if (strcmp(buf, r->marker_path) == 0)
			unlink(ARGUS_MARKER_PATH_FILE);
	}
	r->marker_file = 0;
}

/* Whether `argus probe` has uprobe events defined (tracefs records
   them; the BPF backend does not). */
static int
probes_defined(void)
{
	DIR *d = opendir("/sys/kernel/tracing/events/" PROBE_SYSTEM);
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.' && strcmp(e->d_name, "enable") != 0 &&
		    strcmp(e->d_name, "filter") != 0)
			n++;
	closedir(d);
	return n > 0;
}

int
record_open(struct recorder **rp, const struct record_opts *o, char **cause)
{
	struct recorder *r;
	struct trace_writer_opts wo;
	struct tracefs_instance *in;
	const char *tdir = NULL;
	char val[32];
	int err, scoped;

	*rp = NULL;
	*cause = NULL;
	if (geteuid() != 0) {
		*cause = xstrdup("recording needs root (the kernel's tracing "
		    "interface is root-only)");
		return EPERM;
	}
	if (tracefs_tracing_dir_is_mounted(true, &tdir) < 0 || tdir == NULL) {
		*cause = xstrdup("tracefs is not available (cannot mount it "
		    "on /sys/kernel/tracing)");
		return ENODEV;
	}
	if (o->dir == NULL || o->dir[0] == '\0') {
		*cause = xstrdup("no trace directory given");
		return EINVAL;
	}
	record_remove_stale();

	r = xcalloc(1, sizeof(*r));
	r->diag_fd = -1;
	r->guard_fd = -1;
	r->guard_pid = -1;
	r->set = o->set;
	r->dir = xstrdup(o->dir);
	r->inst_name = xasprintf("argus-%d", (int)getpid());
	if (tracefs_instance_exists(r->inst_name)) {
		/* Left by a dead recorder whose pid we now have. */
		remove_instance(r);
	}
	in = tracefs_instance_create(r->inst_name);
	if (in == NULL) {
		err = errno ? errno : EIO;
		*cause = xasprintf("cannot create the tracefs instance %s: %s",
		    r->inst_name, strerror(err));
		free(r->inst_name);
		r->inst_name = NULL;
		rec_free(r);
		return err;
	}
	r->inst_path = xasprintf("%s/instances/%s", tdir, r->inst_name);
	r->marker_path = xasprintf("%s/trace_marker_raw", r->inst_path);
	tracefs_instance_free(in);
	/* Before any buffer is open: the guard inherits none of them. */
	if ((err = rec_guard_start(r)) != 0)
		rec_warn(r, "no guard process (%s): if this recorder is "
		    "killed, 'argus status' or the next start ends its "
		    "tracing", strerror(err));

	if ((err = inst_write(r, "tracing_on", "0")) != 0 ||
	    (err = inst_write(r, "trace_clock", "boot")) != 0) {
		*cause = xasprintf("cannot configure the instance %s: %s",
		    r->inst_name, strerror(err));
		goto fail;
	}
	if ((err = open_cpus(r, cause)) != 0)
		goto fail;
	r->scope_netns = o->scope_netns;
	r->scope_cgroup = o->scope_cgroup;
	r->scope_cgfd = o->scope_cgroup != 0 ? o->scope_cgfd : -1;
	scoped = o->scope_netns != 0 || o->scope_cgroup != 0;
	if (scoped && o->backend == RECORD_BACKEND_TRACEFS) {
		*cause = xasprintf("a recorder scoped to a %s needs the BPF "
		    "backend (tracefs cannot tell the %s of a task)",
		    o->scope_netns ? "network namespace" : "cgroup",
		    o->scope_netns ? "namespace" : "cgroup");
		err = EINVAL;
		goto fail;
	}
	if (scoped && probes_defined())
		rec_warn(r, "probes of argus probe are defined; a scoped "
		    "recorder records with BPF, which does not record them");
	if (o->backend == RECORD_BACKEND_AUTO && probes_defined() &&
	    !scoped) {
		rec_warn(r, "probes of argus probe are defined; recording with "
		    "tracefs (the BPF backend does not record them)");
	} else if (o->backend != RECORD_BACKEND_TRACEFS) {
		char *bcause = NULL;

		err = rec_bpf_open(r, o, &bcause);
		if (err && (o->backend == RECORD_BACKEND_BPF || scoped)) {
			*cause = bcause;
			goto fail;
		}
		if (err)
			rec_warn(r, "BPF backend unavailable (%s); recording "
			    "with tracefs", bcause);
		free(bcause);
		err = 0;
	}
	if (r->bpf == NULL && o->net_sends)
		rec_warn(r, "--net: the tracefs backend records no sequence "
		    "numbers of messages; the traces of several hosts will "
		    "not pair them");
	/* With BPF the instance only carries libargus's marker, which
	   nobody reads there: the smallest buffer. */
	snprintf(val, sizeof(val), "%u", r->bpf ? 4 :
	    o->buffer_kb ? o->buffer_kb : RECORD_DEFAULT_BUFFER_KB);
	if ((err = inst_write(r, "buffer_size_kb", val)) != 0) {
		*cause = xasprintf("cannot set a %s KiB buffer per CPU: %s",
		    val, strerror(err));
		goto fail;
	}
	if (r->bpf == NULL && (err = enable_events(r, cause)) != 0)
		goto fail;
	if ((err = rec_decode_init(r, cause)) != 0)
		goto fail;
	if (r->bpf == NULL && r->set == RECORD_SET_DEFAULT &&
	    (err = enable_syscalls(r, cause)) != 0)
		goto fail;
	/* Probes defined by `argus probe` before we started (the BPF
	   backend does not record them: see record-bpf.c). */
	if (r->bpf == NULL)
		(void)inst_write(r, "events/" PROBE_SYSTEM "/enable", "1");

	wo = o->wopts;
	wo.clock = "boot";
	if (wo.zstd_level == 0)
		/* 10% smaller than level 1 (3.8 against 4.2 bytes an
		   event from the BPF recorder), for little CPU: at 1 M
		   events/s the compressor sees about 10 MB/s */
		wo.zstd_level = 3;
	wo.ncpus = r->ncpus;
	wo.recorder = r->bpf ? "bpf" : "tracefs";
	wo.recorder_pid = (uint32_t)getpid();
	r->bound = wo.size_bound ? wo.size_bound : TRACE_DEFAULT_BOUND;
	/* Wall clock minus trace clock, sampled tightly. */
	{
		uint64_t b0 = clock_ns(CLOCK_BOOTTIME);
		uint64_t rt = clock_ns(CLOCK_REALTIME);
		uint64_t b1 = clock_ns(CLOCK_BOOTTIME);

		wo.realtime_offset = (int64_t)rt - (int64_t)((b0 + b1) / 2);
	}
	if ((err = trace_writer_open(&r->w, r->dir, &wo, cause)) != 0)
		goto fail;

	r->start_ts = clock_ns(CLOCK_BOOTTIME);
	if ((err = inst_write(r, "tracing_on", "1")) != 0) {
		*cause = xasprintf("cannot start tracing: %s", strerror(err));
		goto fail;
	}
	if (r->bpf && (err = rec_bpf_start(r, cause)) != 0)
		goto fail;
	/* Threads born from here on are seen by task_newtask as well. */
	rec_proc_scan(r, r->start_ts);
	if ((err = rec_pump_start(r, cause)) != 0)
		goto fail;
	if (o->marker_file)
		publish_marker(r);
	*rp = r;
	return 0;

fail:
	if (r->w) {
		trace_writer_close(r->w);
		r->w = NULL;
	}
	release(r);
	return err;
}

size_t
record_nwarnings(const struct recorder *r)
{
	return r->nwarn;
}

const char *
record_warning(const struct recorder *r, size_t i)
{
	return i < r->nwarn ? r->warn[i] : NULL;
}

const char *
record_marker_path(const struct recorder *r)
{
	return r->marker_path;
}

int
record_dirfd(const struct recorder *r)
{
	return trace_writer_dirfd(r->w);
}

uint64_t
rec_lost_ts(const struct recorder *r, unsigned cpu, uint64_t ts)
{
	if (ts < r->cpus[cpu].last_ts)
		ts = r->cpus[cpu].last_ts;
	return ts < r->start_ts ? r->start_ts : ts;
}

void
rec_sync_lost(struct recorder *r, unsigned cpu, uint64_t ts)
{
	char *path = xasprintf("%s/per_cpu/cpu%u/stats", r->inst_path, cpu);
	char buf[1024], *p;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;
	unsigned long long over;

	free(path);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	if ((p = strstr(buf, "overrun: ")) == NULL ||
	    sscanf(p + 9, "%llu", &over) != 1)
		return;
	if (over > r->cpus[cpu].lost) {
		struct trace_event ev;

		memset(&ev, 0, sizeof(ev));
		ev.type = TT_LOST;
		ev.cpu = (uint16_t)cpu;
		ev.ts = rec_lost_ts(r, cpu, ts);
		ev.arg[0] = over - r->cpus[cpu].lost;
		r->lost += ev.arg[0];
		r->cpus[cpu].lost = over;
		rec_add(r, &ev);
	}
}

int
record_poll(struct recorder *r, int flush)
{
	return rec_pump_read(r, flush);
}

void
record_sync(struct recorder *r)
{
	rec_pump_drain(r);
}

void
record_stats(const struct recorder *r, struct record_stats *st)
{
	struct rec_snap s;

	memset(st, 0, sizeof(*st));
	rec_pump_snapshot(r, &s);
	st->events = s.events;
	st->stored = s.stored;
	st->lost = s.lost;
	st->bytes = r->bytes;
	st->disk_bytes = s.disk_bytes;
	st->bound = r->bound;
	st->first_ts = r->start_ts;
	st->last_ts = s.last_ts;
	st->fds = s.fds;
	st->ncpus = r->ncpus;
	st->hang = s.hang;
	rec_bpf_cost(r, &st->bpf_ns, &st->bpf_runs);
	st->stacks_skipped = rec_bpf_stacks_skipped(r);
}

int
record_close(struct recorder *r, char **cause)
{
	int err;

	*cause = NULL;
	inst_write(r, "tracing_on", "0");
	rec_bpf_stop(r);
	record_poll(r, 0);
	rec_pump_free(r);	/* drained: the decoder state is ours again */
	/* Losses no page reported yet (overwritten at the very end). */
	for (unsigned c = 0; c < r->ncpus && r->bpf == NULL; c++)
		rec_sync_lost(r, c, 0);
	unpublish_marker(r);
	err = r->err;
	if (err)
		*cause = xasprintf("cannot write the trace in %s: %s", r->dir,
		    *trace_writer_error(r->w) ? trace_writer_error(r->w) :
		    trace_strerror(err));
	{
		int e2 = trace_writer_close(r->w);

		if (e2 && !err) {
			err = e2;
			*cause = xasprintf("cannot close the trace in %s: %s",
			    r->dir, trace_strerror(e2));
		}
	}
	r->w = NULL;
	release(r);
	return err;
}

int
record_marker_find(char *buf, size_t len)
{
	const char *e = getenv("ARGUS_MARKER");
	FILE *f;

	if (e && *e) {
		snprintf(buf, len, "%s", e);
		return 0;
	}
	f = fopen(ARGUS_MARKER_PATH_FILE, "re");
	if (f == NULL)
		return -1;
	if (fgets(buf, (int)len, f) == NULL) {
		fclose(f);
		return -1;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return buf[0] ? 0 : -1;
}
