/*
 * record-bpf.c: the BPF backend of the recorder: attaching and reading
 * what the programs of bpf/record.bpf.c write (loading them is
 * record-bpf-open.c's, decoding what they write record-bpf-decode.c's).
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
	a.config = rbpf_refused("perf_event") ? PERF_COUNT_SW_MAX + 100 :
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
