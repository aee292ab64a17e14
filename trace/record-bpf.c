/*
 * record-bpf.c: the BPF backend of the recorder: loading, attaching and
 * reading what the programs of bpf/record.bpf.c write (decoding it is
 * record-bpf-decode.c's).
 *
 * struct rbpf holds the skeleton (generated at build time from the BPF
 * object), the links of the programs attached (every link is an fd:
 * when the recorder dies, even by SIGKILL, the kernel detaches them;
 * nothing is pinned), the libbpf ring-buffer reader and, for the reading
 * thread, the pool page being filled. record_poll copies ring records
 * into pool pages as [u32 length][u32 0][record, padded to 8 bytes],
 * ended by a zero length, and queues them like tracefs pages for the
 * decoding thread. The losses the programs count per CPU become TT_LOST
 * pseudo-records in the page stream.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/array.h"
#include "common/common.h"
#include "record-local.h"

#ifndef ARGUS_BPF

int
rec_bpf_open(struct recorder *r, const struct record_opts *o, char **cause)
{
	(void)r;
	(void)o;
	*cause = xstrdup("this argus was built without the BPF backend "
	    "(clang, bpftool or the kernel's BTF were missing)");
	return ENOTSUP;
}

int
rec_bpf_start(struct recorder *r, char **cause)
{
	(void)r;
	(void)cause;
	return ENOTSUP;
}

void rec_bpf_read(struct recorder *r) { (void)r; }
void rec_bpf_probes(struct recorder *r) { (void)r; }
void rec_bpf_stop(struct recorder *r) { (void)r; }
void rec_bpf_free(struct recorder *r) { (void)r; }
void
rec_bpf_cost(const struct recorder *r, uint64_t *ns, uint64_t *runs)
{
	(void)r;
	*ns = *runs = 0;
}
uint64_t rec_bpf_stacks_skipped(const struct recorder *r) { (void)r; return 0; }

#else

#include "record-bpf-local.h"

_Static_assert(RB_STK_WAIT == TSK_WAIT && RB_STK_WAKER == TSK_WAKER &&
    RB_STK_SAMPLE == TSK_SAMPLE && RB_STK_KWAIT == TSK_KWAIT &&
    RB_STK_KSAMPLE == TSK_KSAMPLE &&
    RB_STACK_MAX == TRACE_STACK_MAX,
    "RB_STACK is a TT_STACK");
_Static_assert(sizeof(((struct blk *)0)->sstk) == RB_STACK_MAX * 8,
    "a kept stack is an RB_STACK's frames");

/* --- loading ------------------------------------------------------------- */

static FILE *print_to;

static int
on_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (print_to == NULL || level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(print_to, fmt, ap);
}

/* Address of a kernel text symbol from /proc/kallsyms, or 0. */
static uint64_t
ksym(const char *name)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	char line[512], sym[256], type;
	unsigned long long a;
	uint64_t found = 0;

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &a, &type, sym) == 3 &&
		    strcmp(sym, name) == 0) {
			found = a;
			break;
		}
	}
	fclose(f);
	return found;
}

/* Programs of a set: name of the tracepoint, lowest set (enum
   record_set), and for the full set only. */
struct progspec {
	const char *tp;
	int set;
};

static struct bpf_program *
prog_of(struct record_bpf *s, const char *tp)
{
	struct bpf_program *p;

	bpf_object__for_each_program(p, s->obj) {
		const char *sec = bpf_program__section_name(p);
		const char *slash = strchr(sec, '/');

		if (slash && strcmp(slash + 1, tp) == 0)
			return p;
	}
	return NULL;
}

/* Is name in the comma list of environment variable var? */
static int
env_lists(const char *var, const char *name)
{
	const char *e = getenv(var);
	size_t n = strlen(name);

	for (const char *p = e; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (strncmp(p, name, n) == 0 && (p[n] == ',' || p[n] == '\0'))
			return 1;
	return 0;
}

/* A tracepoint named in ARGUS_BPF_SKIP (a comma list): left out, to
   measure what each costs. */
static int
skipped(const char *tp)
{
	return env_lists("ARGUS_BPF_SKIP", tp);
}

/* What ARGUS_BPF_REFUSE names (a comma list), made for the kernel to
   refuse, to test what the recorder does then: "cpu_clock", the
   sampler's program; "perf_event", the sampler's perf events;
   "task_work", BPF task work (taken as missing). */
static int
refused(const char *what)
{
	return env_lists("ARGUS_BPF_REFUSE", what);
}

/*
 * libargus's records (o->marker_file) come from the exits of write(2),
 * at sys_exit: where the set leaves that program out, it is loaded to
 * keep those records alone (marker_exit), which leaves the default set
 * lean; passing over every other call costs it a few instructions.
 */
static void
marker_exits(struct rbpf *b, const struct record_opts *o)
{
	struct bpf_program *se = prog_of(b->skel, "sys_exit");

	if (!o->marker_file || se == NULL || bpf_program__autoload(se) ||
	    skipped("sys_exit"))
		return;
	bpf_program__set_autoload(se, true);
	b->skel->rodata->marker_exit = 1;
}

static const struct progspec progs[] = {
	{ "sched_switch", RECORD_SET_SCHED },
	{ "sched_waking", RECORD_SET_SCHED },
	{ "sched_wakeup_new", RECORD_SET_SCHED },
	{ "task_newtask", RECORD_SET_SCHED },
	{ "sched_process_exec", RECORD_SET_SCHED },
	{ "sched_process_exit", RECORD_SET_SCHED },
	{ "task_rename", RECORD_SET_SCHED },
	{ "irq_handler_entry", RECORD_SET_SCHED },
	{ "irq_handler_exit", RECORD_SET_SCHED },
	{ "softirq_entry", RECORD_SET_SCHED },
	{ "softirq_exit", RECORD_SET_SCHED },
	{ "ipi_send_cpu", RECORD_SET_SCHED },
	{ "ipi_send_cpumask", RECORD_SET_SCHED },
	{ "hrtimer_start", RECORD_SET_SCHED },
	{ "hrtimer_cancel", RECORD_SET_SCHED },
	{ "hrtimer_expire_entry", RECORD_SET_SCHED },
	{ "hrtimer_expire_exit", RECORD_SET_SCHED },
	{ "timer_start", RECORD_SET_SCHED },
	{ "timer_cancel", RECORD_SET_SCHED },
	{ "timer_expire_entry", RECORD_SET_SCHED },
	{ "timer_expire_exit", RECORD_SET_SCHED },
	{ "local_timer_entry", RECORD_SET_SCHED },
	{ "local_timer_exit", RECORD_SET_SCHED },
	{ "reschedule_entry", RECORD_SET_SCHED },
	{ "reschedule_exit", RECORD_SET_SCHED },
	{ "call_function_entry", RECORD_SET_SCHED },
	{ "call_function_exit", RECORD_SET_SCHED },
	{ "call_function_single_entry", RECORD_SET_SCHED },
	{ "call_function_single_exit", RECORD_SET_SCHED },
	{ "irq_work_entry", RECORD_SET_SCHED },
	{ "irq_work_exit", RECORD_SET_SCHED },
	{ "softirq_raise", RECORD_SET_DEFAULT },
	{ "workqueue_queue_work", RECORD_SET_DEFAULT },
	{ "workqueue_execute_start", RECORD_SET_DEFAULT },
	{ "workqueue_execute_end", RECORD_SET_DEFAULT },
	{ "signal_generate", RECORD_SET_DEFAULT },
	{ "signal_deliver", RECORD_SET_DEFAULT },
	{ "sock_recv_length", RECORD_SET_DEFAULT },
	{ "sk_data_ready", RECORD_SET_DEFAULT },
	{ "posix_lock_inode", RECORD_SET_DEFAULT },
	{ "flock_lock_inode", RECORD_SET_DEFAULT },
	{ "fcntl_setlk", RECORD_SET_DEFAULT },
	{ "locks_remove_posix", RECORD_SET_DEFAULT },
	{ "sys_exit", RECORD_SET_FULL },
	{ "rseq_update", RECORD_SET_DEFAULT },
	{ "sock_send_length", RECORD_SET_FULL },	/* or net_sends */
	{ "sys_enter", RECORD_SET_FULL },
};

void
rec_bpf_free(struct recorder *r)
{
	struct rbpf *b = r->bpf;

	if (b == NULL)
		return;
	for (size_t i = 0; i < b->nlinks; i++)
		bpf_link__destroy(b->links[i]);
	free(b->links);
	ring_buffer__free(b->ring);
	record_bpf__destroy(b->skel);
	if (b->stats_fd >= 0)
		close(b->stats_fd);
	free(b->lost_seen);
	free(b->lost_vals);
	free(b);
	r->bpf = NULL;
}

void
rec_bpf_stop(struct recorder *r)
{
	struct rbpf *b = r->bpf;

	for (size_t i = 0; b && i < b->nlinks; i++)
		bpf_link__destroy(b->links[i]);
	if (b)
		b->nlinks = 0;
}

void
rec_bpf_cost(const struct recorder *r, uint64_t *ns, uint64_t *runs)
{
	const struct rbpf *b = r->bpf;
	struct bpf_program *p;

	*ns = *runs = 0;
	if (b == NULL || b->skel == NULL || b->stats_fd < 0)
		return;		/* not asked: no system call a program */
	bpf_object__for_each_program(p, b->skel->obj) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(p);

		memset(&info, 0, sizeof(info));
		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len) != 0)
			continue;
		*ns += info.run_time_ns;
		*runs += info.run_cnt;
	}
}

uint64_t
rec_bpf_stacks_skipped(const struct recorder *r)
{
	const struct rbpf *b = r->bpf;
	uint32_t key = 1;	/* LOST_STACKS (record.bpf.c) */
	uint64_t sum = 0;

	if (b == NULL || b->skel == NULL || b->lost_vals == NULL)
		return 0;
	uint64_t *v = xcalloc((size_t)b->nposs, sizeof(*v));
	if (bpf_map__lookup_elem(b->skel->maps.lost, &key, sizeof(key), v,
	    (size_t)b->nposs * sizeof(*v), 0) == 0)
		for (int c = 0; c < b->nposs; c++)
			sum += v[c];
	free(v);
	return sum;
}

static void
add_link(struct rbpf *b, struct bpf_link *l)
{
	b->links = xreallocarray(b->links, b->nlinks + 1, sizeof(*b->links));
	b->links[b->nlinks++] = l;
}

/* Power of two of at least n bytes, at least 1 MiB. */
static uint32_t
ring_size(uint64_t n)
{
	uint64_t s = 1 << 20;

	while (s < n && s < (1u << 30))
		s <<= 1;
	return (uint32_t)s;
}

/* Where libbpf's messages of a load go: a file of the temporary
   directory named after the recorder's pid and suffix (allocated). */
static char *
log_path(const char *suffix)
{
	return xasprintf("%s/argus-bpf-%d%s.log", getenv("TMPDIR") ?
	    getenv("TMPDIR") : "/tmp", (int)getpid(), suffix);
}

/* Load b's object with libbpf's messages (the verifier's) into the file
   path; libbpf's error (negative) or 0. */
static int
load_logged(struct rbpf *b, const char *path)
{
	int err;

	b->log = fopen(path, "w");
	print_to = b->log;
	libbpf_set_print(on_libbpf_print);
	err = record_bpf__load(b->skel);
	print_to = NULL;
	if (b->log)
		fclose(b->log);
	b->log = NULL;
	return err;
}

/* After a load of b's object that failed, the same object again (an
   object loads once) with the same programs and settings but the
   sampler's (on_cpu_clock), loaded with its messages into path; as
   load_logged(). */
static int
load_without_sampler(struct rbpf *b, const char *path)
{
	struct record_bpf *s = record_bpf__open();
	struct bpf_program *p;

	if (s == NULL)
		return -(errno ? errno : EINVAL);
	bpf_object__for_each_program(p, b->skel->obj)
		bpf_program__set_autoload(bpf_object__find_program_by_name(
		    s->obj, bpf_program__name(p)), bpf_program__autoload(p));
	bpf_program__set_autoload(s->progs.on_cpu_clock, false);
	memcpy(s->rodata, b->skel->rodata, sizeof(*s->rodata));
	bpf_map__set_max_entries(s->maps.rb, bpf_map__max_entries(
	    b->skel->maps.rb));
	record_bpf__destroy(b->skel);
	b->skel = s;
	return load_logged(b, path);
}

int
rec_bpf_open(struct recorder *r, const struct record_opts *o, char **cause)
{
	struct rbpf *b = xcalloc(1, sizeof(*b));
	struct btf *vmlinux;
	char *logpath;
	int err = 0;

	r->bpf = b;
	b->stats_fd = -1;
	b->nposs = libbpf_num_possible_cpus();
	if (b->nposs <= 0) {
		*cause = xstrdup("cannot count the possible CPUs");
		err = EIO;
		goto fail;
	}
	vmlinux = btf__load_vmlinux_btf();
	if (vmlinux == NULL) {
		err = errno ? errno : ENOENT;
		*cause = xasprintf("the kernel has no BTF type information "
		    "(/sys/kernel/btf/vmlinux): %s", strerror(err));
		goto fail;
	}
	b->skel = record_bpf__open();
	if (b->skel == NULL) {
		err = errno ? errno : EINVAL;
		btf__free(vmlinux);
		*cause = xasprintf("cannot open the BPF object: %s",
		    strerror(err));
		goto fail;
	}
	/* Only the set's programs, and only those the kernel can attach. */
	{
		struct bpf_program *p;

		bpf_object__for_each_program(p, b->skel->obj)
			bpf_program__set_autoload(p, false);
	}
	for (size_t i = 0; i < ARRAY_SIZE(progs); i++) {
		struct bpf_program *p = prog_of(b->skel, progs[i].tp);
		char *tn;

		if (progs[i].set > o->set)
			continue;
		if (skipped(progs[i].tp))
			continue;
		tn = xasprintf("btf_trace_%s", progs[i].tp);
		if (btf__find_by_name_kind(vmlinux, tn, BTF_KIND_TYPEDEF) < 0) {
			rec_warn(r, "the kernel lacks the tracepoint %s; the "
			    "analysis will miss its events", progs[i].tp);
		} else if (p) {
			bpf_program__set_autoload(p, true);
		}
		free(tn);
	}
	/* --net: the sends of TCP messages to other hosts */
	if (o->net_sends && o->set < RECORD_SET_FULL && !skipped(
	    "sock_send_length") && prog_of(b->skel, "sock_send_length") &&
	    btf__find_by_name_kind(vmlinux, "btf_trace_sock_send_length",
	    BTF_KIND_TYPEDEF) >= 0)
		bpf_program__set_autoload(prog_of(b->skel, "sock_send_length"),
		    true);
	/* BPF task work: the stacks of threads without rseq taken only
	   for their long waits */
	b->skel->rodata->task_work = btf__find_by_name_kind(vmlinux,
	    "bpf_task_work_schedule_resume_impl", BTF_KIND_FUNC) >= 0 &&
	    !refused("task_work");
	btf__free(vmlinux);
	/* the samples of busy tasks, with the stacks of long waits */
	if (o->stack_ns != 0 && !skipped("cpu_clock"))
		bpf_program__set_autoload(b->skel->progs.on_cpu_clock, true);
	b->skel->rodata->self_tgid = (uint32_t)getpid();
	b->skel->rodata->scope_netns = o->scope_netns;
	b->skel->rodata->scope_cgroup = o->scope_cgroup;
	b->skel->rodata->scope_cglevel = o->scope_cglevel;
	b->skel->rodata->stack_ns = o->stack_ns;
	/* the kernel's functions, for the kernel stacks: read now, not
	   at the first one, while recording */
	if (o->stack_ns != 0)
		rec_ksyms_load(r);
	b->skel->rodata->stack_gap_ns = o->stack_rate != 0 ?
	    1000000000ull / o->stack_rate : 0;
	b->skel->rodata->stack_bytes = (o->stack_depth != 0 &&
	    o->stack_depth < RB_STACK_MAX ? o->stack_depth : RB_STACK_MAX) * 8;
	b->skel->rodata->full = o->set == RECORD_SET_FULL;
	b->skel->rodata->blocking = o->set == RECORD_SET_DEFAULT;
	/* without sys_exit (libargus's records need it), the exits of
	   blocked calls come at rseq_update */
	if (o->set == RECORD_SET_DEFAULT) {
		struct bpf_program *se = prog_of(b->skel, "sys_exit");
		struct bpf_program *rs = prog_of(b->skel, "rseq_update");
		int se_on = se != NULL && bpf_program__autoload(se);
		int rs_on = rs != NULL && bpf_program__autoload(rs);

		/* a kernel without rseq: the exits at sys_exit */
		if (!se_on && !rs_on && se != NULL && !skipped("sys_exit")) {
			bpf_program__set_autoload(se, true);
			se_on = 1;
		}
		b->skel->rodata->lean = !se_on && rs_on;
		if (rs_on && se_on)
			bpf_program__set_autoload(rs, false);
	}
	marker_exits(b, o);
	b->skel->rodata->eventfd_write_fn = ksym("eventfd_write");
	b->skel->rodata->marker_write_fn = ksym("tracing_mark_raw_write");
	if (b->skel->rodata->eventfd_write_fn == 0 ||
	    b->skel->rodata->marker_write_fn == 0)
		rec_warn(r, "/proc/kallsyms hides kernel addresses (kptr_restrict "
		    "without CAP_SYSLOG): eventfd writes and libargus's records "
		    "will be missing");
	{
		struct stat st;

		if (stat(r->marker_path, &st) == 0)
			b->skel->rodata->marker_ino = st.st_ino;
	}
	bpf_map__set_max_entries(b->skel->maps.rb, ring_size((uint64_t)
	    r->ncpus * (o->buffer_kb ? o->buffer_kb :
	    RECORD_DEFAULT_BUFFER_KB) * 1024));

	if (refused("cpu_clock"))	/* a program type it cannot be */
		bpf_program__set_type(b->skel->progs.on_cpu_clock,
		    BPF_PROG_TYPE_SOCKET_FILTER);
	logpath = log_path("");
	err = load_logged(b, logpath);
	/* the sampler refused (a verifier that rejects what it does):
	   the rest records without it */
	if (err && bpf_program__autoload(b->skel->progs.on_cpu_clock)) {
		char *again = log_path(".nosampler");
		int err2 = load_without_sampler(b, again);

		if (err2 == 0) {
			rec_warn(r, "samples of busy threads are off: the kernel "
			    "refused their BPF program (%s; the verifier's log "
			    "is in %s)", strerror(-err > 0 ? -err : EINVAL),
			    logpath);
			free(logpath);
			logpath = again;
		} else {
			unlink(logpath);
			free(logpath);
			logpath = again;
		}
		err = err2;
	}
	if (err) {
		err = -err > 0 ? -err : EINVAL;
		*cause = xasprintf("cannot load the BPF programs: %s (the "
		    "verifier's log is in %s)", strerror(err), logpath);
		free(logpath);
		goto fail;
	}
	unlink(logpath);
	free(logpath);
	if (o->bpf_stats && (b->stats_fd = bpf_enable_stats(
	    BPF_STATS_RUN_TIME)) < 0) {
		rec_warn(r, "the kernel does not count the BPF programs' run "
		    "time: %s", strerror(-b->stats_fd));
		b->stats_fd = -1;
	}
	return 0;
fail:
	rec_bpf_free(r);
	return err;
}

static int on_sample(void *ctx, void *data, size_t size);

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL	/* linux/pidfd.h, kernel 6.9 */
#endif

/*
 * The programs keep the exit of a call only when they saw the task block
 * in it; a thread asleep in a call since before the programs were
 * attached would lose its exit, where its wait ends. Mark every such
 * thread (its /proc/PID/task/TID/syscall names a call) in the task
 * storage, through a pidfd of the thread. A thread that wakes meanwhile
 * only gets one spurious exit; one the programs marked already is kept.
 * Best effort: kernels without thread pidfds mark main threads only.
 */
static void
mark_sleepers(struct recorder *r)
{
	struct rbpf *b = r->bpf;
	/* since 1: blocked since before the recording, a long wait */
	const struct blk mark = { .on = 1, .since = 1 };
	char path[64], buf[128];
	DIR *pd = opendir("/proc"), *td;
	struct dirent *pe, *te;

	if (pd == NULL)
		return;
	while ((pe = readdir(pd)) != NULL) {
		long pid = strtol(pe->d_name, NULL, 10);

		if (pid <= 0 || pid == (long)getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/task", pid);
		if ((td = opendir(path)) == NULL)
			continue;
		while ((te = readdir(td)) != NULL) {
			long tid = strtol(te->d_name, NULL, 10);
			int fd, pfd;
			ssize_t n;

			if (tid <= 0)
				continue;
			snprintf(path, sizeof(path), "/proc/%ld/task/%ld/syscall",
			    pid, tid);
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue;
			n = read(fd, buf, sizeof(buf) - 1);
			close(fd);
			/* "NR args...", or "running", or "-1 ..." outside
			   any call */
			if (n <= 0 || buf[0] < '0' || buf[0] > '9')
				continue;
			pfd = (int)syscall(SYS_pidfd_open, (pid_t)tid,
			    tid == pid ? 0 : PIDFD_THREAD);
			if (pfd < 0)
				continue;
			(void)bpf_map__update_elem(b->skel->maps.blocked, &pfd,
			    sizeof(pfd), &mark, sizeof(mark), BPF_NOEXIST);
			close(pfd);
		}
		closedir(td);
	}
	closedir(pd);
}

/* kernel.perf_event_paranoid, or INT_MIN when it cannot be read. */
static int
perf_paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	int v = INT_MIN;

	if (f != NULL) {
		if (fscanf(f, "%d", &v) != 1)
			v = INT_MIN;
		fclose(f);
	}
	return v;
}

/*
 * The sampler of busy tasks: on each CPU, a CPU clock perf event at
 * RB_SAMPLE_HZ runs on_cpu_clock. A kernel or a policy without perf
 * events gives a warning and no samples; the rest records as before.
 */
static void
attach_sampler(struct recorder *r)
{
	struct rbpf *b = r->bpf;
	struct bpf_program *p = b->skel->progs.on_cpu_clock;
	struct perf_event_attr a;
	int attached = 0, err = 0, opened = 0;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	/* ARGUS_BPF_REFUSE=perf_event: a software counter the kernel
	   does not have */
	a.config = refused("perf_event") ? PERF_COUNT_SW_MAX + 100 :
	    PERF_COUNT_SW_CPU_CLOCK;
	a.size = sizeof(a);
	a.sample_freq = RB_SAMPLE_HZ;
	a.freq = 1;
	for (int cpu = 0; cpu < b->nposs; cpu++) {
		struct bpf_link *l;
		int fd = (int)syscall(SYS_perf_event_open, &a, -1, cpu, -1,
		    PERF_FLAG_FD_CLOEXEC);

		if (fd < 0) {
			if (errno != ENODEV)	/* ENODEV: an offline CPU */
				err = errno;
			continue;
		}
		opened++;
		l = bpf_program__attach_perf_event(p, fd);
		if (l == NULL) {
			err = errno ? errno : EINVAL;
			close(fd);
			continue;
		}
		add_link(b, l);	/* closes fd when destroyed */
		attached++;
	}
	if (attached > 0 && err != 0)
		rec_warn(r, "busy threads are sampled on %d of %d CPUs (%s): "
		    "their stacks may be missing", attached, b->nposs,
		    strerror(err));
	else if (attached == 0 && opened > 0)
		rec_warn(r, "samples of busy threads are off: the kernel "
		    "refused their BPF program on a perf event (%s)",
		    strerror(err ? err : ENODEV));
	else if (attached == 0 && (err == EACCES || err == EPERM) &&
	    perf_paranoid() != INT_MIN)
		rec_warn(r, "samples of busy threads are off: cannot open a "
		    "CPU clock perf event (%s; kernel.perf_event_paranoid is "
		    "%d)", strerror(err), perf_paranoid());
	else if (attached == 0)
		rec_warn(r, "samples of busy threads are off: cannot open a "
		    "CPU clock perf event (%s)", strerror(err ? err : ENODEV));
}

/* Attach what was loaded (tracing starts) and the ring reader. */
int
rec_bpf_start(struct recorder *r, char **cause)
{
	struct rbpf *b = r->bpf;
	struct bpf_program *p;

	b->lost_seen = xcalloc((size_t)b->nposs, sizeof(uint64_t));
	b->lost_vals = xcalloc((size_t)b->nposs, sizeof(uint64_t));
	bpf_object__for_each_program(p, b->skel->obj) {
		struct bpf_link *l;

		if (!bpf_program__autoload(p))
			continue;
		if (p == b->skel->progs.on_cpu_clock) {
			attach_sampler(r);
			continue;
		}
		l = bpf_program__attach(p);
		if (l == NULL) {
			int err = errno ? errno : EINVAL;

			*cause = xasprintf("cannot attach the BPF program of "
			    "%s: %s", bpf_program__section_name(p),
			    strerror(err));
			return err;
		}
		add_link(b, l);
	}
	if (b->skel->rodata->blocking)
		mark_sleepers(r);
	b->ring = ring_buffer__new(bpf_map__fd(b->skel->maps.rb), on_sample,
	    r, NULL);
	if (b->ring == NULL) {
		int err = errno ? errno : EINVAL;

		*cause = xasprintf("cannot map the BPF ring buffer: %s",
		    strerror(err));
		return err;
	}
	return 0;
}

/*
 * Probes of `argus probe` (uprobe trace events) are not attached: on
 * this kernel (6.18) closing a perf event that carries a BPF program on a
 * uprobe trace event oopsed in uprobe_apply (NULL pointer) with
 * event_mutex held, which left every tracefs instance of the machine
 * unusable until a reboot. Their hits land in the instance's buffer,
 * which the BPF backend does not read; use --backend tracefs to record
 * probes.
 */
void
rec_bpf_probes(struct recorder *r)
{
	(void)r;
}

/* --- reading (the caller's thread) ---------------------------------------- */

/* Queue the page being filled (ended by a zero length). */
static void
page_out(struct recorder *r)
{
	struct rbpf *b = r->bpf;

	if (b->page == NULL)
		return;
	if (b->off == 0) {
		rec_pump_put(r, b->page);
		b->page = NULL;
		return;
	}
	if (b->off + 4 <= r->subbuf)
		memset(b->page + b->off, 0, 4);
	rec_pump_queue(r, b->page);
	b->page = NULL;
	b->off = 0;
}

/* A page with room for the largest record, or 0 when the pool is empty. */
static int
page_room(struct recorder *r)
{
	struct rbpf *b = r->bpf;

	if (b->page && b->off + SLOT_MAX + 4 <= r->subbuf)
		return 1;
	page_out(r);
	b->page = rec_pump_get(r);
	b->off = 0;
	return b->page != NULL;
}

static void
put_rec(struct recorder *r, const void *data, size_t size)
{
	struct rbpf *b = r->bpf;
	uint32_t len = (uint32_t)size, z = 0;

	memcpy(b->page + b->off, &len, 4);
	memcpy(b->page + b->off + 4, &z, 4);
	memcpy(b->page + b->off + 8, data, size);
	b->off += 8 + ((size + 7) & ~(size_t)7);
	r->bytes += size;
}

static int
on_sample(void *ctx, void *data, size_t size)
{
	struct recorder *r = ctx;

	if (size > SLOT_MAX - 8 || size < sizeof(struct rb_head))
		return 0;		/* not ours */
	put_rec(r, data, size);
	/* the next record needs a page: stop when the pool has none (the
	   ring keeps the rest for the next poll) */
	return page_room(r) ? 0 : -1;
}

void
rec_bpf_read(struct recorder *r)
{
	struct rbpf *b = r->bpf;
	uint32_t key = 0;

	if (!page_room(r))
		return;
	(void)ring_buffer__consume(b->ring);	/* < 0: out of pages */
	if (b->page && bpf_map__lookup_elem(b->skel->maps.lost, &key,
	    sizeof(key), b->lost_vals, (size_t)b->nposs * sizeof(uint64_t),
	    0) == 0) {
		for (int c = 0; c < b->nposs && c < (int)r->ncpus; c++) {
			struct { struct rb_head h; uint64_t a; } lr;

			if (b->lost_vals[c] <= b->lost_seen[c])
				continue;
			if (!page_room(r))
				break;
			memset(&lr, 0, sizeof(lr));
			lr.h.cpu = (uint16_t)c;
			lr.h.kind = RB_LOST;
			lr.a = b->lost_vals[c] - b->lost_seen[c];
			b->lost_seen[c] = b->lost_vals[c];
			put_rec(r, &lr, sizeof(lr));
		}
	}
	page_out(r);
}

#endif
