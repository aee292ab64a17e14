// SPDX-License-Identifier: GPL-2.0
/*
 * record.bpf.c: the kernel half of the BPF recorder.
 *
 * Programs on tracepoints only (tp_btf, and plain tracepoint programs
 * for the uprobe events of `argus probe`) write compact records
 * (record-bpf.h) into one ring buffer, "rb". A record that finds the
 * ring full is counted in the per-CPU array "lost", which the loader
 * turns into TT_LOST events.
 *
 * System calls cost nothing unless they matter: a task switched out
 * not runnable while inside a system call gets, with its switch, the
 * call's number and arguments read from its saved registers (RB_BLOCK,
 * one record for both), and a mark in its task storage ("blocked"); the
 * marked task writes its RB_SYS_EXIT on its way back to user space. In
 * the default set ("lean") no program works on every system call (the one on sys_exit that keeps libargus's
 * records, when recording with them, passes over every other call at
 * once): the exit comes at rseq_update, which a task that registered
 * rseq (glibc's threads do) meets after each switch, its registers
 * then holding the call's number and result (at signal_deliver when a
 * signal ends the call first); a lock attempt refused at once is kept
 * as its call from the file lock events; sched_yield at its switch;
 * and since close is not seen, the file a descriptor names is told to
 * the loader (RB_FD_INO, map "fdino") when first seen blocking and when
 * it names another inode than then, with its type (a socket's family):
 * the loader needs /proc only for the path of other files, which it
 * reads later, when a number reused by then names another file. Otherwise the program on sys_exit writes the exits of
 * marked tasks, and keeps the calls that wake others
 * without blocking: reads and writes of pipes (FIFO inodes), terminals
 * and eventfds, a close that succeeded (so fd numbers reused are looked
 * up again) and sched_yield (one a millisecond a thread: a yield loop
 * would flood the ring); the attempts of a polling loop: a call failing with "try
 * again" (EAGAIN, EBUSY, EALREADY, a refused connect) within the few
 * calls that follow a wait that ended by its own timeout (a sleep, a
 * poll or futex wait returning 0 or ETIMEDOUT); and the bytes written to
 * the recorder's trace_marker_raw (libargus's records). The full set
 * records every call instead. Socket messages come in bursts: one
 * record each way per burst (the socket storage "skq").
 *
 * Every program runs on a hot path and this kernel charges each call
 * and return (retpolines, return thunks): fields of the tracepoints'
 * typed arguments are read by plain loads, not helper calls, and no
 * record wakes the reader, which drains the ring on a timer.
 *
 * This file has the maps, the helpers every program shares and the
 * switch; the other programs are in the headers it includes, in this
 * order: stacks.bpf.h (the stacks of long waits and runs), task.bpf.h
 * (wake-ups and a task's life), irq.bpf.h (interrupt contexts, timers,
 * work items, signals), sock.bpf.h (socket messages), sys.bpf.h (system
 * calls, markers, file locks); scope.bpf.h holds what --netns and
 * --cgroup keep.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>

#include "record-bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by the loader before loading. */
const volatile __u32 self_tgid;		/* the recorder: no syscalls of it */
const volatile int full;		/* every syscall's entry and exit */
const volatile int blocking;		/* syscalls at switch-out (default) */
const volatile int lean;		/* blocking, the exits at rseq_update
					   (see above); sys_exit then runs
					   for marker_exit only */
const volatile __u64 eventfd_write_fn;	/* f_op->write of an eventfd */
const volatile __u64 marker_write_fn;	/* f_op->write of trace_marker_raw */
const volatile __u64 marker_ino;	/* inode of our instance's marker */
const volatile __u64 stack_ns;		/* the stacks of waits this long
					   (wait_stack()); 0: none */
const volatile __u32 stack_bytes = RB_STACK_MAX * 8;	/* of a stack's
					   frames at most (--stack-depth) */
const volatile __u64 stack_gap_ns;	/* a CPU's budget of stacks: one
					   this often (--stack-rate), for the
					   waits under KSTACK_TIMES * stack_ns;
					   0: no budget */
const volatile int marker_exit;		/* on_sys_exit keeps libargus's
					   records alone (it runs for them
					   only: lean stays lean) */
const volatile int task_work;		/* the kernel has BPF task work:
					   the stack of a long wait of a
					   task without rseq is taken on its
					   return to user space (lean) */
#ifdef HAVE_BPF_TASK_WORK	/* and the vmlinux.h built with */
#define TASK_WORK task_work
#else
#define TASK_WORK 0
#endif

/* Bytes of frames a stack takes at most (--stack-depth), bounded for
   the verifier by the buffer of size max. */
#define STACK_BYTES(max) (stack_bytes > 0 && stack_bytes <= (max) ? \
	stack_bytes : (max))

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 24);	/* resized by the loader */
} rb SEC(".maps");

/* Per CPU: [LOST_EVENTS] records the full ring refused, [LOST_STACKS]
   stacks the budget left out (stk_budget()). */
#define LOST_EVENTS 0
#define LOST_STACKS 1
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

/* A CPU's budget of stacks: the credit, in nanoseconds of the refill,
   at time ts (stk_budget()). */
struct stkbud {
	__u64 ts;
	__u64 credit;
};
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stkbud);
} stkbud SEC(".maps");

/* Calls after a timed-out wait in which a failed attempt is looked for
   (a polling loop may check the clock or a file before it retries). */
#define RETRY_WINDOW 16

/* sched_yield calls of a thread kept at most this often. */
#define YIELD_GAP_NS 1000000ull

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct blk);
} blocked SEC(".maps");

/* lean: the inode each (tgid << 32 | fd) named when last seen in a
   blocked call, since without close events a number reused must be
   told (RB_FD_INO). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, __u64);
} fdino SEC(".maps");

struct mk {
	struct rb_head h;
	__u64 len;
	__u8 data[RB_MARKER_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mk);
} scratch SEC(".maps");

/*
 * Interrupt context per CPU. Without the preemption counter (a per-CPU
 * variable BPF cannot reach when the kernel lists no data symbols) it is
 * tracked by the entries and exits of hard interrupts (device handlers
 * and the x86 vectors: local timer, IPIs, irq work) and of softirqs; a
 * switch happens only in task context, so it resets both.
 */
struct ctxs {
	__s32 hard, soft;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ctxs);
} cpuctx SEC(".maps");

#define PF_KTHREAD 0x00200000
#define TASK_STOPPED_BIT 0x4	/* __TASK_STOPPED */
#define TASK_TRACED_BIT 0x8	/* __TASK_TRACED */
#define ENOSYS 38
#define S_IFMT 00170000
#define S_IFIFO 0010000
#define S_IFCHR 0020000
#define S_IFSOCK 0140000
#define PIPEFS_MAGIC 0x50495045

#define NR_read 0
#define NR_write 1
#define NR_close 3
#define NR_poll 7
#define NR_select 23
#define NR_nanosleep 35
#define NR_ioctl 16
#define NR_pread64 17
#define NR_pwrite64 18
#define NR_connect 42
#define NR_accept 43
#define NR_sendto 44
#define NR_recvfrom 45
#define NR_sendmsg 46
#define NR_recvmsg 47
#define NR_fsync 74
#define NR_fdatasync 75
#define NR_splice 275
#define NR_accept4 288
#define NR_recvmmsg 299
#define NR_sendmmsg 307
#define NR_fcntl 72
#define NR_flock 73
#define NR_futex 202
#define NR_clock_nanosleep 230
#define NR_epoll_wait 232
#define NR_pselect6 270
#define NR_ppoll 271
#define NR_epoll_pwait 281
#define NR_epoll_pwait2 441
#define ENOENT 2
#define EAGAIN 11
#define EBUSY 16
#define ECONNREFUSED 111
#define ETIMEDOUT 110
#define EALREADY 114
#define EINPROGRESS 115
#define NR_readv 19
#define NR_writev 20
#define NR_sched_yield 24
#define NR_exit 60
#define NR_exit_group 231

/* The loader drains the ring on a timer and never sleeps on it: no
   record needs to wake it (a wake-up costs an irq_work). */
#define RB_FLAGS BPF_RB_NO_WAKEUP

#define REC(n) struct { struct rb_head h; __u64 a[n]; }
#define RECS(n, sz) struct { struct rb_head h; __u64 a[n]; char s[sz]; }

static __always_inline void
lost_one(void)
{
	__u32 k = LOST_EVENTS;
	__u64 *v = bpf_map_lookup_elem(&lost, &k);

	if (v)
		(*v)++;
}

static __always_inline struct ctxs *
ctx_get(void)
{
	__u32 k = 0;

	return bpf_map_lookup_elem(&cpuctx, &k);
}

/* enum trace_ctx of the running code. */
static __always_inline __u8
ctx_now(void)
{
	struct ctxs *c = ctx_get();

	if (!c)
		return 0;
	return c->hard > 0 ? 2 : c->soft > 0 ? 1 : 0;
}

static __always_inline void
ctx_hard(int d)
{
	struct ctxs *c = ctx_get();

	if (c)
		c->hard = c->hard + d < 0 ? 0 : c->hard + d;
}

static __always_inline void
ctx_soft(int d)
{
	struct ctxs *c = ctx_get();

	if (c)
		c->soft = c->soft + d < 0 ? 0 : c->soft + d;
}

static __always_inline void
head(struct rb_head *h, __u8 kind, __u32 tid)
{
	h->ts = bpf_ktime_get_boot_ns();
	h->tid = tid;
	h->cpu = (__u16)bpf_get_smp_processor_id();
	h->kind = kind;
	h->ctx = ctx_now();
}

static __always_inline __u32
cur_tid(void)
{
	return (__u32)bpf_get_current_pid_tgid();
}

/* Reserve a record of type T as p, or count a loss and return 0. */
#define RESERVE(T, p, kind, tid) \
	T *p = bpf_ringbuf_reserve(&rb, sizeof(T), 0); \
	if (!p) { \
		lost_one(); \
		return 0; \
	} \
	head(&p->h, kind, tid)

/* Emit a record of n fields (n <= RB_FIELDS_MAX). */
#define EMIT(n, kind, tid, ...) do { \
	__u64 v_[n] = { __VA_ARGS__ }; \
	REC(n) *p_ = bpf_ringbuf_reserve(&rb, sizeof(*p_), 0); \
	if (!p_) { \
		lost_one(); \
		return 0; \
	} \
	head(&p_->h, kind, tid); \
	__builtin_memcpy(p_->a, v_, sizeof(v_)); \
	bpf_ringbuf_submit(p_, RB_FLAGS); \
} while (0)

/* The switch's prev_state as the sched_switch trace event reports it. */
static __always_inline __u64
sw_state(bool preempt, unsigned int ps, struct task_struct *p)
{
	unsigned int s;

	if (preempt)
		return 0x100;
	s = (ps | (unsigned int)p->exit_state) & 0x7f;
	if ((ps & 0x402) == 0x402)
		s = 0x80;
	if (ps & (0x1000 | 0x8000))
		s = 0x2;
	for (int b = 7; b >= 0; b--)
		if (s & (1u << b))
			return 1u << b;
	return 0;
}

/* The kernel's cast of an address to a typed, read-only pointer: its
   fields are then read by plain loads the verifier guards, not by a
   helper call each. */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;

#include "scope.bpf.h"

/* The file of descriptor fd of t, as a typed read-only pointer, or
   NULL: one helper call (the fd array's slot), the rest plain loads. */
static __always_inline struct file *
fd_file(struct task_struct *t, __u64 fd)
{
	struct fdtable *fdt = t->files->fdt;
	struct file *f = NULL;

	if (!fdt || fd >= fdt->max_fds)
		return NULL;
	bpf_probe_read_kernel(&f, sizeof(f), (void *)((__u64)fdt->fd +
	    fd * sizeof(f)));
	if (!f)
		return NULL;
	return bpf_rdonly_cast(f, bpf_core_type_id_kernel(struct file));
}

/* Whether call nr's first argument is a descriptor (as
   trace_syscall_fd_arg()). */
static __always_inline int
fd_call(long nr)
{
	switch (nr) {
	case NR_read: case NR_write: case NR_readv: case NR_writev:
	case NR_pread64: case NR_pwrite64: case NR_sendto: case NR_recvfrom:
	case NR_sendmsg: case NR_recvmsg: case NR_sendmmsg: case NR_recvmmsg:
	case NR_connect: case NR_accept: case NR_accept4: case NR_epoll_pwait:
	case NR_fsync: case NR_fdatasync: case NR_flock: case NR_fcntl:
	case NR_ioctl: case NR_splice: case NR_epoll_wait:
		return 1;
	}
	return 0;
}

/*
 * 1 pipe, FIFO or terminal, 2 eventfd, 3 our trace_marker_raw, 0 any
 * other file (f may be NULL). Plain loads only.
 */
static __always_inline int
file_kind(struct file *f)
{
	struct inode *in;
	__u64 w;
	__u32 mode;

	if (!f)
		return 0;
	in = f->f_inode;
	mode = in->i_mode & S_IFMT;
	if (mode == S_IFIFO)
		return 1;
	if (mode == S_IFCHR) {
		/* terminals: tty, console and ptmx (4, 5), pty ends (136-143) */
		__u32 major = in->i_rdev >> 20;

		if (major == 4 || major == 5 || (major >= 136 && major <= 143))
			return 1;
		return 0;
	}
	w = (__u64)f->f_op->write;
	if (w && w == eventfd_write_fn)
		return 2;
	if (w && w == marker_write_fn && in->i_ino == marker_ino)
		return 3;
	return 0;
}

/* file_kind() of descriptor fd of t. On every read and write of the
   system: one helper call (the fd array's slot), the rest plain loads. */
static __always_inline int
fd_kind(struct task_struct *t, __u64 fd)
{
	return file_kind(fd_file(t, fd));
}

/* lean: an RB_FD_INO when descriptor fd of t was never seen, or names
   another inode than when last seen. */
static __always_inline int
fd_check(struct task_struct *t, __u64 fd)
{
	struct file *f = fd_file(t, fd);
	struct inode *in;
	__u64 key, ino, *old, what;
	int kind;

	if (!f)
		return 0;
	in = f->f_inode;
	ino = in->i_ino;
	key = (__u64)(__u32)t->tgid << 32 | (__u32)fd;
	old = bpf_map_lookup_elem(&fdino, &key);
	if (old && *old == ino)
		return 0;
	bpf_map_update_elem(&fdino, &key, &ino, BPF_ANY);
	what = in->i_mode & S_IFMT;
	kind = file_kind(f);
	if (kind == 2)
		what |= RB_FD_EVENTFD;
	else if (kind == 1 && what == S_IFCHR)
		what |= RB_FD_TERMINAL;
	else if (what == S_IFIFO && in->i_sb->s_magic == PIPEFS_MAGIC)
		what |= RB_FD_ANONPIPE;
	else if (what == S_IFSOCK) {
		/* the family, so that the loader needs neither /proc nor
		   sock_diag (which walks every unix socket) */
		struct socket *so = bpf_rdonly_cast(f->private_data,
		    bpf_core_type_id_kernel(struct socket));

		if (so && so->sk)
			what |= (__u64)so->sk->__sk_common.skc_family << 16;
	}
	EMIT(4, RB_FD_INO, (__u32)t->pid, (__u64)(__u32)t->tgid, fd, ino,
	    what);
	return 0;
}

static __always_inline void defer_stack(struct task_struct *t);

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev,
    struct task_struct *next, unsigned int prev_state)
{
	__u32 ptid = (__u32)prev->pid;
	struct ctxs *c = ctx_get();
	struct pt_regs *bregs = NULL;	/* the call it blocks in, kept */
	long bnr = 0;

	if (c) {
		c->hard = 0;
		c->soft = 0;
	}
	SCOPE(task_in(prev) || task_in(next));
	if (blocking && !preempt && prev_state != 0 &&
	    !(prev->flags & PF_KTHREAD) && prev->tgid != (int)self_tgid) {
		struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(prev);
		long nr = regs->orig_ax;
		long ax = regs->ax;

		if (nr >= 0 && ax == -ENOSYS && nr != NR_exit &&
		    nr != NR_exit_group) {
			struct blk *b = bpf_task_storage_get(&blocked, prev, 0,
			    BPF_LOCAL_STORAGE_GET_F_CREATE);

			/* lean: a task without rseq never says when its
			   call returned; every wait of it gets its entry */
			if (stack_ns && b && !b->on)
				b->since = bpf_ktime_get_boot_ns();
			/* and since its return will not be seen, the stack
			   it blocks with is taken on its way back to user
			   space if the wait is long (deferred_stack()), or
			   without BPF task work, kept aside now
			   (waker_stack()) */
			if (stack_ns && b && lean && !prev->rseq &&
			    TASK_WORK) {
				b->defer = 1;
				b->nr = (__u64)nr;
			} else if (stack_ns && b && lean && !prev->rseq) {
				long n = bpf_get_stack(ctx, b->sstk,
				    STACK_BYTES(sizeof(b->sstk)),
				    BPF_F_USER_STACK);

				b->saved = n > 0 ? (__u64)n / 8 : 0;
			}
			if (b && (!b->on || (lean && !prev->rseq))) {
				if (!lean || prev->rseq)
					b->on = 1;
				if (lean && fd_call(nr))
					fd_check(prev, regs->di);
				bregs = regs;
				bnr = nr;
			}
		}
	}
	/* stopped outside a call (SIGSTOP, a tracer): a wait that its
	   resumption ends, whose stack is taken then (exit_of()) */
	if (stack_ns && !preempt && (prev_state & (TASK_STOPPED_BIT |
	    TASK_TRACED_BIT)) && !(prev->flags & PF_KTHREAD) &&
	    prev->tgid != (int)self_tgid) {
		struct blk *b = bpf_task_storage_get(&blocked, prev, 0,
		    BPF_LOCAL_STORAGE_GET_F_CREATE);

		if (b && !b->on && !b->stop) {
			b->since = bpf_ktime_get_boot_ns();
			b->stop = 1;
		}
	}
	/* lean: a sched_yield seen where it gives the CPU away, one a
	   millisecond a thread */
	if (lean && !preempt && prev_state == 0 &&
	    !(prev->flags & PF_KTHREAD) && prev->tgid != (int)self_tgid) {
		struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(prev);

		if (regs->orig_ax == NR_sched_yield && regs->ax == -ENOSYS) {
			struct blk *b = bpf_task_storage_get(&blocked, prev, 0,
			    BPF_LOCAL_STORAGE_GET_F_CREATE);
			__u64 now = bpf_ktime_get_boot_ns();

			if (b && now - b->yield_ts >= YIELD_GAP_NS) {
				b->yield_ts = now;
				EMIT(6, RB_SYS_ENTER, ptid, NR_sched_yield, 0, 0,
				    0, 0, 0);
				EMIT(2, RB_SYS_EXIT, ptid, NR_sched_yield, 0);
			}
		}
	}
	if (TASK_WORK && stack_ns && lean && !next->rseq &&
	    !(next->flags & PF_KTHREAD))
		defer_stack(next);
	if (bregs)
		EMIT(9, RB_BLOCK, ptid, (__u64)bnr, bregs->di, bregs->si,
		    bregs->dx, bregs->r10, bregs->r8,
		    sw_state(preempt, prev_state, prev),
		    (__u64)(__u32)next->pid, (__u64)(__u32)next->prio);
	else
		EMIT(3, RB_SWITCH, ptid, sw_state(preempt, prev_state, prev),
		    (__u64)(__u32)next->pid, (__u64)(__u32)next->prio);
	return 0;
}

#include "stacks.bpf.h"

#include "task.bpf.h"

#include "irq.bpf.h"

#include "sock.bpf.h"

#include "sys.bpf.h"
