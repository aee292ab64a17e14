/*
 * record-bpf-open.c: the BPF backend's loading (rec_bpf_open): which
 * programs of bpf/record.bpf.c the set loads, the settings the loader
 * gives them (the skeleton's rodata), the verifier's log kept in a file
 * when the kernel refuses them, and the scope's cgroup held in a map.
 *
 * progs[] is the table of the tracepoints with the smallest set that
 * records each; the environment (ARGUS_BPF_SKIP, ARGUS_BPF_REFUSE) leaves
 * programs out or has them refused, to measure and to test. Attaching
 * and reading are record-bpf.c's.
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

#else

#include "record-bpf-local.h"

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

int
rbpf_refused(const char *what)
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
	    !rbpf_refused("task_work");
	btf__free(vmlinux);
	/* the identity of UDP datagrams: a hash of their first bytes */
	b->skel->rodata->udp_hash = !skipped("udp_hash");
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

	if (rbpf_refused("cpu_clock"))	/* a program type it cannot be */
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
	/* the scope's cgroup held while recording (see scope.bpf.h) */
	if (o->scope_cgroup != 0) {
		uint32_t k = 0, fd = (uint32_t)o->scope_cgfd;

		if (bpf_map__update_elem(b->skel->maps.scope_cgs, &k,
		    sizeof(k), &fd, sizeof(fd), BPF_ANY) != 0) {
			err = errno ? errno : EINVAL;
			*cause = xasprintf("cannot hold the cgroup of the "
			    "scope: %s", strerror(err));
			goto fail;
		}
	}
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

#endif
