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

/*
 * Where in the code a long wait was: the user stack of a task (current)
 * whose blocked call returns, when it blocked for stack_ns or more; the
 * waker's at the wake-up of such a task; and samples of a task that
 * ran that long without blocking. A cost bounded by the long waits and
 * the sampling rate, not by the events. Frame pointers unwind them
 * (bpf_get_stack); a binary without them gives a short stack.
 */

struct stk {
	struct rb_head h;
	__u64 n;
	__u64 kind;	/* enum trace_stack_kind */
	__u64 ip[RB_STACK_MAX];
};

/* A stack record of thread tid (task context) reserved in the ring, or
   NULL with a loss counted. */
static __always_inline struct stk *
stk_reserve(__u32 tid)
{
	struct stk *s = bpf_ringbuf_reserve(&rb, sizeof(*s), 0);

	if (!s) {
		lost_one();
		return NULL;
	}
	head(&s->h, RB_STACK, tid);
	s->h.ctx = 0;
	return s;
}

/* The kernel stack of a wait this many times stack_ns or longer. */
#define KSTACK_TIMES 10

/* Stacks a CPU's budget saves up at most. */
#define STK_BURST 64

/*
 * Whether a stack of a wait of wait_ns may be taken at now: always for a
 * wait KSTACK_TIMES * stack_ns or longer (a thread has a few such waits
 * a second at most), else when the CPU's budget has one (it earns one
 * each stack_gap_ns, STK_BURST at most); one left out is counted. A
 * storm of waits just over stack_ns (hundreds of threads sharing two
 * CPUs) thus costs a bounded share of a CPU.
 */
static __always_inline int
stk_budget(__u64 now, __u64 wait_ns)
{
	struct stkbud *sb;
	__u64 credit;
	__u32 k = 0;

	if (!stack_gap_ns || wait_ns >= KSTACK_TIMES * stack_ns)
		return 1;
	sb = bpf_map_lookup_elem(&stkbud, &k);
	if (!sb)
		return 1;
	credit = sb->credit;
	if (now > sb->ts) {	/* not a program this one interrupted */
		credit += now - sb->ts;
		sb->ts = now;
	}
	if (credit > STK_BURST * stack_gap_ns)
		credit = STK_BURST * stack_gap_ns;
	if (credit < stack_gap_ns) {
		__u64 *v;

		sb->credit = credit;
		k = LOST_STACKS;
		v = bpf_map_lookup_elem(&lost, &k);
		if (v)
			(*v)++;
		return 0;
	}
	sb->credit = credit - stack_gap_ns;
	return 1;
}

/* Write a stack of current (bpf_get_stack's flags: BPF_F_USER_STACK, or
   0 for its kernel stack) as a record of thread tid and stack kind kind,
   at time ts (0: now); ctx is the program's context. Returns the
   record's time, or 0 when none was written. */
static __always_inline __u64
write_stack(void *ctx, __u32 tid, __u64 kind, __u64 flags, __u64 ts)
{
	struct stk *s;
	long n;

	s = stk_reserve(tid);
	if (!s)
		return 0;
	n = bpf_get_stack(ctx, s->ip, STACK_BYTES(sizeof(s->ip)), flags);
	if (n <= 0) {
		bpf_ringbuf_discard(s, RB_FLAGS);
		return 0;
	}
	if (ts)
		s->h.ts = ts;
	ts = s->h.ts;
	s->n = (__u64)n / 8;
	s->kind = kind;
	bpf_ringbuf_submit(s, RB_FLAGS);
	return ts;
}

/* Write current's user stack as a record of thread tid and stack kind
   kind, in task context; ctx is the program's context. */
static __always_inline void
put_stack(void *ctx, __u32 tid, __u64 kind)
{
	write_stack(ctx, tid, kind, BPF_F_USER_STACK, 0);
}

#ifdef HAVE_BPF_TASK_WORK
/*
 * lean, a task without rseq, on a kernel with BPF task work: the stack
 * of its long wait, taken in its own context on its way back to user
 * space (its registers still those of the call, its stack as it blocked
 * with), by a task work scheduled at its switch in after the wake-up
 * that found the wait long (b->pend): a cost per long wait, not per
 * wait. Scheduled there, on the CPU it is about to run on with
 * interrupts off, the work is added (an irq_work of that CPU) as soon as
 * they are on again, before it can return. The map holds a task work
 * for each such thread (by tid).
 */
struct twv {
	struct bpf_task_work tw;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct twv);
} twork SEC(".maps");

extern int bpf_task_work_schedule_resume_impl(struct task_struct *task,
    struct bpf_task_work *tw, void *map__map,
    bpf_task_work_callback_t callback, void *aux__prog) __ksym __weak;

/* The task work: current's user stack, if its long wait is still the
   one it is returning from (the same call). */
static int
deferred_stack(struct bpf_map *map, void *key, void *value)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct blk *b = bpf_task_storage_get(&blocked, t, 0, 0);
	struct pt_regs *regs;
	struct stk *s;
	long n;

	if (!b || !b->pend)
		return 0;
	b->pend = 0;
	regs = (struct pt_regs *)bpf_task_pt_regs(t);
	if ((__u64)regs->orig_ax != b->nr)
		return 0;
	s = stk_reserve((__u32)t->pid);
	if (!s)
		return 0;
	n = bpf_get_task_stack(t, s->ip, STACK_BYTES(sizeof(s->ip)),
	    BPF_F_USER_STACK);
	if (n <= 0) {
		bpf_ringbuf_discard(s, RB_FLAGS);
		return 0;
	}
	s->n = (__u64)n / 8;
	s->kind = RB_STK_WAIT;
	bpf_ringbuf_submit(s, RB_FLAGS);
	return 0;
}

/* At the switch in of task t (without rseq): the task work that takes
   its stack, if its wait was found long at its wake-up. */
static __always_inline void
defer_stack(struct task_struct *t)
{
	struct blk *b = bpf_task_storage_get(&blocked, t, 0, 0);
	struct twv zero = {}, *v;
	__u32 tid = (__u32)t->pid;

	if (!b || b->pend != 1)
		return;		/* none, or scheduled already (it blocked
				   again in the kernel before its return) */
	v = bpf_map_lookup_elem(&twork, &tid);
	if (!v) {
		bpf_map_update_elem(&twork, &tid, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&twork, &tid);
		if (!v)
			return;
	}
	if (bpf_task_work_schedule_resume_impl(t, &v->tw, &twork,
	    deferred_stack, NULL) == 0)
		b->pend = 2;	/* else at its next switch in */
}
#else
static __always_inline void
defer_stack(struct task_struct *t)
{
}
#endif

/* A blocked call that ended by its own timeout. */
static __always_inline int
timed_out(long nr, long ret)
{
	if (nr == NR_nanosleep || nr == NR_clock_nanosleep)
		return 1;
	if (nr == NR_futex)
		return ret == -ETIMEDOUT;
	return ret == 0 && (nr == NR_poll || nr == NR_ppoll ||
	    nr == NR_select || nr == NR_pselect6 || nr == NR_epoll_wait ||
	    nr == NR_epoll_pwait || nr == NR_epoll_pwait2);
}

/* Wait stacks of a run of timed-out waits at most this often. */
#define SERIES_GAP_NS 1000000000ull

/*
 * The stack of a wait that blocked since b->since, when it is long, or
 * when it ends a run of waits that each ended by their timeout and that
 * lasted that long (one a second); nr and ret: its call and result; now:
 * the time of its exit's record.
 */
static __always_inline void
wait_stack(void *ctx, struct blk *b, __u32 tid, __u64 now, long nr, long ret)
{
	__u64 from;

	/* it ran longer between its last call and this one than it
	   waited: not a run of slices (a timer's thread) */
	if (b->series && b->since - b->exit_ts > now - b->since)
		b->series = 0;
	b->exit_ts = now;
	from = b->series ? b->series : b->since;

	if (timed_out(nr, ret)) {
		if (!b->series)
			b->series = b->since;
	} else {
		b->series = 0;
	}
	if (!stack_ns)
		return;
	if (now - b->since < stack_ns && (from == b->since ||
	    now - from < stack_ns || now - b->stk_ts < SERIES_GAP_NS))
		return;
	/* a run of slices is judged by its length once a second, a wait
	   by its own length else */
	if (!stk_budget(now, from != b->since &&
	    now - b->stk_ts >= SERIES_GAP_NS ? now - from : now - b->since))
		return;
	b->stk_ts = now;
	put_stack(ctx, tid, RB_STK_WAIT);
}

/* lean: the RB_SYS_EXIT of task t (current) if it was marked blocked:
   its saved registers hold the call's number and result; and the stack
   of a long wait. */
static __always_inline int
exit_of(void *ctx, struct task_struct *t)
{
	struct blk *b = bpf_task_storage_get(&blocked, t, 0, 0);
	struct pt_regs *regs;

	if (!b)
		return 0;
	if (b->stop && !b->on) {
		/* resumed: where it was stopped, if that was long */
		b->stop = 0;
		if (stack_ns && bpf_ktime_get_boot_ns() - b->since >=
		    stack_ns)
			put_stack(ctx, (__u32)t->pid, RB_STK_WAIT);
		return 0;
	}
	if (!b->on)
		return 0;
	b->on = 0;
	b->stop = 0;
	regs = (struct pt_regs *)bpf_task_pt_regs(t);
	RESERVE(REC(2), p, RB_SYS_EXIT, (__u32)t->pid);
	p->a[0] = (__u64)regs->orig_ax;
	p->a[1] = (__u64)regs->ax;
	__u64 now = p->h.ts;	/* one clock read for both */
	bpf_ringbuf_submit(p, RB_FLAGS);
	wait_stack(ctx, b, (__u32)t->pid, now, regs->orig_ax, regs->ax);
	return 0;
}

/*
 * lean: the exit of a call the task blocked in, on its way back to user
 * space. A task switched out gets TIF_NOTIFY_RESUME when it registered
 * rseq (glibc's threads do), and its return to user space then updates
 * rseq. Runs a few times for each switch, never for each system call.
 */
SEC("tp_btf/rseq_update")
int BPF_PROG(on_rseq, struct task_struct *t)
{
	SCOPE(task_in(t));
	return exit_of(ctx, t);
}

/*
 * At the wake-up of task p out of a wait of stack_ns or more, once a
 * wait: the stack p blocked with when its return will not be seen (kept
 * aside at its switch), its kernel stack (where it slept, still on its
 * kernel stack: bpf_get_task_stack), and the waker's user stack
 * (current's): in
 * task context, or in a softirq that runs inside one of current's
 * system calls (a loopback message's, on its sender); not in one that
 * interrupted user code.
 */
static __always_inline void
waker_stack(void *ctx, struct task_struct *p, __u64 now)
{
	struct task_struct *cur;
	struct blk *b;
	struct ctxs *c;
	struct stk *s;
	__u64 saved;
	__u32 defer;
	long n;

	b = bpf_task_storage_get(&blocked, p, 0, 0);
	if (!b || b->since == 0)
		return;
	/* resumed from a stop: exit_of() says it, where it runs (lean,
	   rseq); elsewhere the stop ends here */
	if (b->stop && !(lean && p->rseq))
		b->stop = 0;
	saved = b->saved;
	if (saved)
		b->saved = 0;	/* this wait's, whatever its length */
	defer = b->defer;
	if (defer)
		b->defer = 0;
	if ((!b->on && !saved && !defer) || b->wstk == b->since)
		return;
	if (now - b->since < stack_ns)
		return;
	b->wstk = b->since;
	if (defer && !b->pend && stk_budget(now, now - b->since))
		b->pend = 1;	/* taken on its return (defer_stack()) */
	if (saved && saved <= RB_STACK_MAX &&
	    stk_budget(now, now - b->since)) {
		s = stk_reserve((__u32)p->pid);
		if (!s)
			return;
		s->n = saved;
		s->kind = RB_STK_WAIT;
		__builtin_memcpy(s->ip, b->sstk, sizeof(s->ip));
		bpf_ringbuf_submit(s, RB_FLAGS);
	}
	/* where in the kernel it slept: its kernel stack, still there,
	   for a wait KSTACK_TIMES longer (an unwinding under the wakee's
	   lock, costlier than a user stack's) */
	if (now - b->since < KSTACK_TIMES * stack_ns)
		goto waker;
	s = stk_reserve((__u32)p->pid);
	if (!s)
		return;
	n = bpf_get_task_stack(p, s->ip, STACK_BYTES(sizeof(s->ip)), 0);
	if (n <= 0) {
		bpf_ringbuf_discard(s, RB_FLAGS);
	} else {
		s->n = (__u64)n / 8;
		s->kind = RB_STK_KWAIT;
		bpf_ringbuf_submit(s, RB_FLAGS);
	}
waker:
	cur = bpf_get_current_task_btf();
	if ((cur->flags & PF_KTHREAD) || cur->tgid == (int)self_tgid ||
	    cur->pid == 0)
		return;
	c = ctx_get();
	if (!c || c->hard > 0)
		return;
	if (c->soft > 0) {
		struct pt_regs *regs =
		    (struct pt_regs *)bpf_task_pt_regs(cur);

		if ((long)regs->orig_ax < 0 || (long)regs->ax != -ENOSYS)
			return;
	}
	if (!stk_budget(now, now - b->since))
		return;
	put_stack(ctx, (__u32)cur->pid, RB_STK_WAKER |
	    (__u64)(__u32)p->pid << 8);
}

SEC("tp_btf/sched_waking")
int BPF_PROG(on_waking, struct task_struct *p)
{
	SCOPE(task_in(p) || cur_in());
	RESERVE(REC(3), w, RB_WAKING, cur_tid());
	w->a[0] = (__u64)(__u32)p->pid;
	w->a[1] = (__u64)p->thread_info.cpu;
	w->a[2] = (__u64)(__u32)p->prio;
	__u64 now = w->h.ts;	/* one clock read for both */
	bpf_ringbuf_submit(w, RB_FLAGS);
	if (stack_ns)
		waker_stack(ctx, p, now);
	return 0;
}

/* Where the kernel's addresses begin (x86-64): an interrupted ip at or
   above it was in the kernel (the sampled task's registers' mode). */
#define KERNEL_ADDR 0xffff800000000000ULL

/*
 * The stacks of a sample of task tid (current): its user stack (RB_STK_SAMPLE)
 * and, when the sample interrupted it in the kernel, right after it and
 * with its time, its kernel stack from the interrupted registers
 * (RB_STK_KSAMPLE): what a thread busy in its system calls computes
 * there.
 */
static __always_inline void
sample_stacks(struct bpf_perf_event_data *ctx, __u32 tid)
{
	__u64 ts = write_stack(ctx, tid, RB_STK_SAMPLE, BPF_F_USER_STACK, 0);

	if (ts && ctx->regs.ip >= KERNEL_ADDR)	/* not in user code */
		write_stack(ctx, tid, RB_STK_KSAMPLE, 0, ts);
}

/*
 * A sample of the running task, RB_SAMPLE_HZ times a second on each CPU
 * (a CPU clock perf event the loader opens when stacks are on): its user
 * stack, and its kernel stack when it was in the kernel, each time it
 * has run stack_ns more since its window began (a window ends when the
 * task ran less than a quarter of it: a loaded CPU shares itself), so a
 * busy culprit shows what it computed, one sample per stack_ns of CPU.
 * CPU time, not the absence of switches: a runtime that hands a thread
 * back and forth (Go's preemption of a locked thread) blocks it for
 * microseconds, and that thread is still busy.
 */
SEC("perf_event")
int on_cpu_clock(struct bpf_perf_event_data *ctx)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct blk *b;
	__u64 now, cpu, dt, dc;

	if (!stack_ns || t->pid == 0 || (t->flags & PF_KTHREAD) ||
	    t->tgid == (int)self_tgid)
		return 0;
	SCOPE(task_in(t));
	b = bpf_task_storage_get(&blocked, t, 0,
	    BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!b)
		return 0;
	now = bpf_ktime_get_boot_ns();
	cpu = t->se.sum_exec_runtime;
	dt = now - b->run_ts;
	dc = cpu - b->run_cpu;
	if (b->run_ts == 0 || dc * 4 < dt) {
		/* not busy since it was last seen (it ran less than a
		   quarter of the time; a loaded CPU shares itself): a new
		   window */
		b->run_ts = now;
		b->run_cpu = cpu;
		return 0;
	}
	if (dc < stack_ns)
		return 0;	/* busy, not for long yet */
	b->run_ts = now;
	b->run_cpu = cpu;
	sample_stacks(ctx, (__u32)t->pid);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(on_wakeup_new, struct task_struct *p)
{
	SCOPE(task_in(p) || cur_in());
	EMIT(2, RB_WAKEUP_NEW, cur_tid(), (__u64)(__u32)p->pid,
	    (__u64)p->thread_info.cpu);
	return 0;
}

SEC("tp_btf/task_newtask")
int BPF_PROG(on_newtask, struct task_struct *task, __u64 clone_flags)
{
	SCOPE(task_in(task) || cur_in());
	RESERVE(RECS(2, 16), p, RB_FORK, cur_tid());
	p->a[0] = (__u32)task->pid;
	p->a[1] = clone_flags;
	bpf_probe_read_kernel_str(p->s, sizeof(p->s), task->comm);
	bpf_ringbuf_submit(p, RB_FLAGS);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *task, pid_t old_pid,
    struct linux_binprm *bprm)
{
	SCOPE(task_in(task));
	RESERVE(RECS(2, RB_PATH), p, RB_EXEC, cur_tid());
	p->a[0] = (__u32)task->pid;
	p->a[1] = (__u32)old_pid;
	bpf_probe_read_kernel_str(p->s, sizeof(p->s), BPF_CORE_READ(bprm,
	    filename));
	bpf_ringbuf_submit(p, RB_FLAGS);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *task, bool group_dead)
{
	SCOPE(task_in(task));
	EMIT(2, RB_EXIT, cur_tid(), (__u64)(__u32)task->pid,
	    (__u64)group_dead);
	/* killed while it waited long (the call never returns): the stack
	   it waited with, its memory still there */
	if (stack_ns && !(task->flags & PF_KTHREAD)) {
		struct blk *b = bpf_task_storage_get(&blocked, task, 0, 0);

		if (b && b->pend) {
			/* woken after a long wait, dying before its
			   return: its deferred stack now */
			b->pend = 0;
			put_stack(ctx, (__u32)task->pid, RB_STK_WAIT);
		} else if (b && (b->on || b->stop) &&
		    bpf_ktime_get_boot_ns() - b->since >= stack_ns)
			put_stack(ctx, (__u32)task->pid, RB_STK_WAIT);
	}
	return 0;
}

SEC("tp_btf/task_rename")
int BPF_PROG(on_rename, struct task_struct *task, const char *comm)
{
	SCOPE(task_in(task));
	RESERVE(RECS(1, 16), p, RB_RENAME, cur_tid());
	p->a[0] = (__u32)task->pid;
	bpf_probe_read_kernel_str(p->s, sizeof(p->s), comm);
	bpf_ringbuf_submit(p, RB_FLAGS);
	return 0;
}

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(on_irq_entry, int irq, struct irqaction *action)
{
	ctx_hard(1);
	RESERVE(RECS(1, RB_NAME), p, RB_IRQ_ENTRY, cur_tid());
	p->a[0] = (__u32)irq;
	bpf_probe_read_kernel_str(p->s, sizeof(p->s), BPF_CORE_READ(action,
	    name));
	bpf_ringbuf_submit(p, RB_FLAGS);
	return 0;
}

/* The exits' records, apart: a full ring returns from these, and the
   context must still be left (or the CPU would stay "in an interrupt",
   and in scope, until its next switch). */
static __always_inline int
irq_exit_rec(int irq, int ret)
{
	EMIT(2, RB_IRQ_EXIT, cur_tid(), (__u64)(__u32)irq, (__u64)(__s64)ret);
	return 0;
}

static __always_inline int
softirq_exit_rec(unsigned int vec)
{
	EMIT(1, RB_SOFTIRQ_EXIT, cur_tid(), (__u64)vec);
	return 0;
}

SEC("tp_btf/irq_handler_exit")
int BPF_PROG(on_irq_exit, int irq, struct irqaction *action, int ret)
{
	irq_exit_rec(irq, ret);
	ctx_hard(-1);
	return 0;
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(on_softirq_entry, unsigned int vec)
{
	ctx_soft(1);
	EMIT(1, RB_SOFTIRQ_ENTRY, cur_tid(), (__u64)vec);
	return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(on_softirq_exit, unsigned int vec)
{
	softirq_exit_rec(vec);
	ctx_soft(-1);
	return 0;
}

#define VECTOR(name) \
SEC("tp_btf/" #name "_entry") \
int BPF_PROG(on_##name##_entry, int vector) \
{ \
	ctx_hard(1); \
	return 0; \
} \
SEC("tp_btf/" #name "_exit") \
int BPF_PROG(on_##name##_exit, int vector) \
{ \
	ctx_hard(-1); \
	return 0; \
}

VECTOR(local_timer)
VECTOR(reschedule)
VECTOR(call_function)
VECTOR(call_function_single)
VECTOR(irq_work)

SEC("tp_btf/softirq_raise")
int BPF_PROG(on_softirq_raise, unsigned int vec)
{
	SCOPE(cur_in());
	EMIT(1, RB_SOFTIRQ_RAISE, cur_tid(), (__u64)vec);
	return 0;
}

SEC("tp_btf/ipi_send_cpu")
int BPF_PROG(on_ipi_cpu, unsigned int cpu, unsigned long callsite,
    void *callback)
{
	SCOPE(cur_in());
	EMIT(2, RB_IPI, cur_tid(), 0, (__u64)cpu);
	return 0;
}

SEC("tp_btf/ipi_send_cpumask")
int BPF_PROG(on_ipi_mask, const struct cpumask *mask, unsigned long callsite,
    void *callback)
{
	SCOPE(cur_in());
	__u64 w = 0;

	bpf_probe_read_kernel(&w, sizeof(w), mask);
	EMIT(2, RB_IPI, cur_tid(), 0, w | 1ull << 63);
	return 0;
}

SEC("tp_btf/hrtimer_start")
int BPF_PROG(on_hrt_start, struct hrtimer *t, enum hrtimer_mode mode)
{
	SCOPE(cur_in());
	EMIT(5, RB_TIMER_START, cur_tid(), (__u64)t,
	    (__u64)t->function,
	    (__u64)t->node.expires, 1, (__u64)mode);
	return 0;
}

SEC("tp_btf/hrtimer_cancel")
int BPF_PROG(on_hrt_cancel, struct hrtimer *t)
{
	SCOPE(cur_in());
	EMIT(2, RB_TIMER_CANCEL, cur_tid(), (__u64)t, 1);
	return 0;
}

SEC("tp_btf/hrtimer_expire_entry")
int BPF_PROG(on_hrt_expire, struct hrtimer *t)
{
	EMIT(3, RB_TIMER_EXPIRE, cur_tid(), (__u64)t, 1,
	    (__u64)t->function);
	return 0;
}

SEC("tp_btf/hrtimer_expire_exit")
int BPF_PROG(on_hrt_exit, struct hrtimer *t)
{
	EMIT(2, RB_TIMER_EXPIRE_EXIT, cur_tid(), (__u64)t, 1);
	return 0;
}

SEC("tp_btf/timer_start")
int BPF_PROG(on_tmr_start, struct timer_list *t)
{
	SCOPE(cur_in());
	EMIT(5, RB_TIMER_START, cur_tid(), (__u64)t,
	    (__u64)t->function,
	    (__u64)t->expires, 0,
	    (__u64)t->flags);
	return 0;
}

SEC("tp_btf/timer_cancel")
int BPF_PROG(on_tmr_cancel, struct timer_list *t)
{
	SCOPE(cur_in());
	EMIT(2, RB_TIMER_CANCEL, cur_tid(), (__u64)t, 0);
	return 0;
}

SEC("tp_btf/timer_expire_entry")
int BPF_PROG(on_tmr_expire, struct timer_list *t)
{
	EMIT(3, RB_TIMER_EXPIRE, cur_tid(), (__u64)t, 0,
	    (__u64)t->function);
	return 0;
}

SEC("tp_btf/timer_expire_exit")
int BPF_PROG(on_tmr_exit, struct timer_list *t)
{
	EMIT(2, RB_TIMER_EXPIRE_EXIT, cur_tid(), (__u64)t, 0);
	return 0;
}

SEC("tp_btf/workqueue_queue_work")
int BPF_PROG(on_wq_queue, int req_cpu, struct pool_workqueue *pwq,
    struct work_struct *work)
{
	SCOPE(cur_in());
	RESERVE(RECS(4, RB_NAME), p, RB_WQ_QUEUE, cur_tid());
	p->a[0] = (__u64)work;
	p->a[1] = (__u64)work->func;
	p->a[2] = (__u32)req_cpu;
	p->a[3] = (__u32)BPF_CORE_READ(pwq, pool, cpu);
	bpf_probe_read_kernel_str(p->s, sizeof(p->s), BPF_CORE_READ(pwq, wq,
	    name));
	bpf_ringbuf_submit(p, RB_FLAGS);
	return 0;
}

SEC("tp_btf/workqueue_execute_start")
int BPF_PROG(on_wq_start, struct work_struct *work)
{
	SCOPE(cur_in());
	EMIT(2, RB_WQ_START, cur_tid(), (__u64)work,
	    (__u64)work->func);
	return 0;
}

SEC("raw_tp/workqueue_execute_end")
int BPF_PROG(on_wq_end, struct work_struct *work, work_func_t function)
{
	SCOPE(cur_in());
	EMIT(2, RB_WQ_END, cur_tid(), (__u64)work, (__u64)function);
	return 0;
}

SEC("tp_btf/signal_generate")
int BPF_PROG(on_sig_gen, int sig, struct kernel_siginfo *info,
    struct task_struct *task, int group, int result)
{
	SCOPE(cur_in() || task_in(task));
	/* as the trace event: no info is SI_USER, a kernel one SI_KERNEL */
	__s64 code = (unsigned long)info == 0 ? 0 :
	    (unsigned long)info == 1 ? 0x80 : BPF_CORE_READ(info, si_code);

	EMIT(4, RB_SIGNAL_GEN, cur_tid(), (__u64)(__u32)sig,
	    (__u64)(__u32)task->pid, (__u64)code, (__u64)(__s64)result);
	return 0;
}

SEC("tp_btf/signal_deliver")
int BPF_PROG(on_sig_deliver, int sig, struct kernel_siginfo *info,
    struct k_sigaction *ka)
{
	SCOPE(cur_in());
	__s64 code = (unsigned long)info == 0 ? 0 :
	    (unsigned long)info == 1 ? 0x80 : BPF_CORE_READ(info, si_code);

	/* lean: a signal delivered ends the blocked call before
	   rseq_update, whose registers then hold the handler's */
	if (lean)
		exit_of(ctx, bpf_get_current_task_btf());
	EMIT(3, RB_SIGNAL_DELIVER, cur_tid(), (__u64)(__u32)sig, (__u64)code,
	    (__u64)BPF_CORE_READ(ka, sa.sa_handler));
	return 0;
}

/*
 * The identity of a TCP connection's messages, so that a send recorded
 * on one host pairs with its receive recorded on another: each
 * message's first sequence number (the sock_send or sock_recv record's
 * sixth field), and the connection's addresses and ports, written when
 * a socket first sends or receives (RB_SOCK_ADDR; the loader writes
 * them again into each segment before the socket's first message
 * there). The socket's storage says they were written, and to whom.
 *
 * A UDP datagram's identity is a hash of its first bytes instead (the
 * sixth field; UDP has no sequence), read from the buffer of the system
 * call that sends or received it, and the addresses are those of a
 * connected UDP socket (written again when it connects to another
 * peer): an unconnected one's peer is the datagram's, which the
 * tracepoints do not give (a receive's address is copied out after
 * them).
 */
struct skaddr {
	__u64 peer;	/* RB_SOCK_ADDR written for this peer: the ports
			   and the address's last word; 0: none */
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct skaddr);
} skaddr SEC(".maps");

#define AF_INET 2
#define AF_INET6 10
#define IPPROTO_TCP 6
#define IPPROTO_UDP 17
#define SOCK_STREAM 1
#define SOCK_DGRAM 2
#define MSG_PEEK_FLAG 2
#define UDP_HASH_BYTES 16

/* Hash the first bytes of UDP datagrams (ARGUS_BPF_SKIP=udp_hash: not,
   to measure what it costs). */
const volatile int udp_hash;

/* A TCP socket (a raw socket of protocol 6 is not one: it has no
   tcp_sock to read), as the kernel's sk_is_tcp() tells. */
static __always_inline int
is_tcp(struct sock *sk)
{
	return sk->sk_type == SOCK_STREAM && sk->sk_protocol == IPPROTO_TCP;
}

/* A UDP socket (of IPv4 or IPv6; not UDP-Lite). */
static __always_inline int
is_udp(struct sock *sk)
{
	return sk->sk_type == SOCK_DGRAM && sk->sk_protocol == IPPROTO_UDP;
}

/*
 * The hash of the first bytes (UDP_HASH_BYTES at most) of the ret bytes
 * the current task's system call just sent or received: 32 bits of
 * FNV-1a, never 0; 0 when the call is not one whose buffer is known
 * (read, write, recvfrom, sendto, readv, writev, recvmsg, sendmsg: the
 * first buffer; not the batches of recvmmsg and sendmmsg, nor io_uring)
 * or the bytes cannot be read. One helper call for the registers and
 * one to three user reads.
 */
static __always_inline __u64
payload_hash(int ret)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(
	    bpf_get_current_task_btf());
	__u8 b[UDP_HASH_BYTES] = {};
	__u64 p, iov;
	__u32 n = ret < UDP_HASH_BYTES ? (__u32)ret : UDP_HASH_BYTES;
	__u32 h = 2166136261u;

	if (!regs || ret <= 0)
		return 0;
	p = regs->si;
	switch (regs->orig_ax) {
	case 0: case 1: case 44: case 45:	/* read write sendto recvfrom */
		break;
	case 46: case 47:			/* sendmsg recvmsg: msg_iov */
		if (bpf_probe_read_user(&iov, 8, (void *)(p + 16)) != 0)
			return 0;
		p = iov;
		/* fall through: the first iovec's base */
	case 19: case 20:			/* readv writev */
		if (bpf_probe_read_user(&p, 8, (void *)p) != 0)
			return 0;
		break;
	default:
		return 0;
	}
	/* 1 to UDP_HASH_BYTES, as the verifier sees it too */
	if (n == 0 || bpf_probe_read_user(b, ((n - 1) &
	    (UDP_HASH_BYTES - 1)) + 1, (void *)p) != 0)
		return 0;
#pragma unroll
	for (int i = 0; i < UDP_HASH_BYTES; i++)
		h = (h ^ b[i]) * 16777619u;
	return h ? h : 1;
}

/* A message's identity, the sock_send or sock_recv record's sixth field:
   a TCP socket's first sequence number of the ret bytes just sent (or
   received), a UDP datagram's payload_hash(); 0 for another socket, or
   a receive that only peeked. */
static __always_inline __u64
msg_id(struct sock *sk, int ret, int send, int flags)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	__u32 end;

	if (ret <= 0 || (!send && (flags & MSG_PEEK_FLAG)))
		return 0;
	if (!is_tcp(sk))
		return udp_hash && is_udp(sk) ? payload_hash(ret) : 0;
	end = send ? BPF_CORE_READ(tp, write_seq) :
	    BPF_CORE_READ(tp, copied_seq);
	return (__u64)(__u32)(end - (__u32)ret);
}

/* A connected UDP socket (it has a peer). */
static __always_inline int
udp_connected(struct sock *sk)
{
	return is_udp(sk) && sk->__sk_common.skc_dport != 0;
}

/* Write sk's addresses, a TCP or connected UDP socket's, when not
   written yet for its peer (marked once the record is in the ring: a
   full ring tries again at the next message). */
static __always_inline int
sock_addr(struct sock *sk)
{
	__u16 fam = sk->__sk_common.skc_family;
	__u8 proto = is_tcp(sk) ? IPPROTO_TCP : IPPROTO_UDP;
	struct skaddr *a;
	__u64 peer, ports;

	if ((fam != AF_INET && fam != AF_INET6) ||
	    (proto == IPPROTO_UDP && !udp_connected(sk)))
		return 0;
	a = bpf_sk_storage_get(&skaddr, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!a)
		return 0;
	ports = (__u64)sk->__sk_common.skc_num |
	    (__u64)bpf_ntohs(sk->__sk_common.skc_dport) << 16;
	if (fam == AF_INET) {
		peer = ports << 32 | sk->__sk_common.skc_daddr;
		if (a->peer == peer)
			return 0;
		EMIT(8, RB_SOCK_ADDR, cur_tid(), (__u64)sk, (__u64)fam,
		    (__u64)proto, ports,
		    (__u64)sk->__sk_common.skc_rcv_saddr,
		    (__u64)sk->__sk_common.skc_daddr, 0, 0);
	} else {
		__u64 l[2], r[2];
		BPF_CORE_READ_INTO(&r, sk, __sk_common.skc_v6_daddr);
		peer = ports << 32 | (__u32)(r[1] >> 32);
		if (a->peer == peer)
			return 0;
		BPF_CORE_READ_INTO(&l, sk, __sk_common.skc_v6_rcv_saddr);
		EMIT(8, RB_SOCK_ADDR, cur_tid(), (__u64)sk, (__u64)fam,
		    (__u64)proto, ports, l[0], l[1], r[0], r[1]);
	}
	a->peer = peer;
	return 0;
}

/* Whether a TCP socket's peer is on this host (a loopback address, or
   its own): the receive's sk_data_ready then names the sender. */
static __always_inline int
peer_local(struct sock *sk)
{
	if (sk->__sk_common.skc_family == AF_INET) {
		__u32 d = sk->__sk_common.skc_daddr;
		return (d & 0xff) == 127 || d == sk->__sk_common.skc_rcv_saddr;
	}
	__u32 l[4], r[4];
	BPF_CORE_READ_INTO(&l, sk, __sk_common.skc_v6_rcv_saddr);
	BPF_CORE_READ_INTO(&r, sk, __sk_common.skc_v6_daddr);
	if ((r[0] | r[1] | r[2]) == 0 && r[3] == bpf_htonl(1))
		return 1;	/* ::1 */
	if ((r[0] | r[1]) == 0 && r[2] == bpf_htonl(0xffff) &&
	    (r[3] & 0xff) == 127)
		return 1;	/* ::ffff:127.x */
	return r[0] == l[0] && r[1] == l[1] && r[2] == l[2] && r[3] == l[3];
}

/* Loaded in the full set, or with argus record --net, which keeps the
   sends of TCP messages to another host only: on one host, the
   receive's sk_data_ready runs in the sender's context or is raised by
   it, and pairs them. */
SEC("tp_btf/sock_send_length")
int BPF_PROG(on_sock_send, struct sock *sk, int ret, int flags)
{
	if (!full && ((!is_tcp(sk) && !udp_connected(sk)) || ret <= 0 ||
	    peer_local(sk)))
		return 0;
	SCOPE(cur_in());
	sock_addr(sk);
	EMIT(6, RB_SOCK_SEND, cur_tid(), (__u64)sk,
	    (__u64)sk->__sk_common.skc_family,
	    (__u64)sk->sk_protocol, (__u64)(__s64)ret,
	    (__u64)(__u32)flags, msg_id(sk, ret, 1, flags));
	return 0;
}

/*
 * Messages in bursts: the default set records a message into a socket
 * only when the socket held no unread data (its receive queue holds
 * only this message), or none announced yet unread, and a receive only
 * when it takes an announced one. A burst of messages is then one
 * record each way: the engine's edge goes from the sender that filled
 * the empty socket to the receive that found it (a thread that waits
 * for a message always waits on an empty socket, so its wake-up always
 * has its message). A mark left by a message never read by a traced
 * receive (a kernel reader) goes stale after SK_STALE_NS.
 */
struct skq {
	__u64 ts;	/* the unread announced message, 0: none */
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct skq);
} skq SEC(".maps");

#define SK_STALE_NS 100000000ull
#define MSG_PEEK 2

SEC("tp_btf/sock_recv_length")
int BPF_PROG(on_sock_recv, struct sock *sk, int ret, int flags)
{
	if (!full && ret != 0) {
		struct skq *q;

		if (ret < 0 || (flags & MSG_PEEK))
			return 0;	/* nothing taken */
		q = bpf_sk_storage_get(&skq, sk, 0, 0);
		if (q && q->ts == 0)
			return 0;	/* the rest of a burst */
		if (q)
			q->ts = 0;
	}
	/* the burst's mark is kept whoever reads; the record only in the
	   scope */
	SCOPE(cur_in());
	sock_addr(sk);
	EMIT(6, RB_SOCK_RECV, cur_tid(), (__u64)sk,
	    (__u64)sk->__sk_common.skc_family,
	    (__u64)sk->sk_protocol, (__u64)(__s64)ret,
	    (__u64)(__u32)flags, msg_id(sk, ret, 0, flags));
	return 0;
}

SEC("tp_btf/sk_data_ready")
int BPF_PROG(on_sk_ready, const struct sock *sk)
{
	if (!full) {
		struct skq *q;

		/* more than the message just queued: the socket held unread
		   data already, the message joins it (a plain load) */
		if (sk->sk_receive_queue.qlen > 1)
			return 0;
		q = bpf_sk_storage_get(&skq, (struct sock *)sk, 0,
		    BPF_SK_STORAGE_GET_F_CREATE);
		__u64 now = bpf_ktime_get_boot_ns();

		if (q) {
			if (q->ts != 0 && now - q->ts < SK_STALE_NS)
				return 0;	/* joins the unread one */
			q->ts = now;
		}
	}
	/* its socket inside the scope, or its sender */
	SCOPE(cur_in() || sk_in((struct sock *)sk));
	EMIT(3, RB_SK_DATA_READY, cur_tid(), (__u64)sk,
	    (__u64)sk->__sk_common.skc_family,
	    (__u64)sk->sk_protocol);
	return 0;
}

static __always_inline int
emit_marker(__u32 tid, __u64 buf, long n)
{
	__u32 k = 0;
	struct mk *m = bpf_map_lookup_elem(&scratch, &k);

	if (!m || n <= 0)
		return 0;
	if (n > RB_MARKER_MAX)
		n = RB_MARKER_MAX;
	head(&m->h, RB_MARKER, tid);
	m->len = (__u64)n;
	if (bpf_probe_read_user(m->data, n & (RB_MARKER_MAX * 2 - 1) &
	    (RB_MARKER_MAX | (RB_MARKER_MAX - 1)), (void *)buf) != 0)
		return 0;
	if (bpf_ringbuf_output(&rb, m, sizeof(m->h) + 8 + (n &
	    (RB_MARKER_MAX | (RB_MARKER_MAX - 1))), RB_FLAGS) != 0)
		lost_one();
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(on_sys_enter, struct pt_regs *regs, long id)
{
	__u64 pt = bpf_get_current_pid_tgid();

	if ((__u32)(pt >> 32) == self_tgid)
		return 0;
	SCOPE(cur_in());
	EMIT(6, RB_SYS_ENTER, (__u32)pt, (__u64)id, regs->di,
	    regs->si, regs->dx,
	    regs->r10, regs->r8);
	return 0;
}

/* A result that says "not now, try again" (engine/diag-poll.c). */
static __always_inline int
try_again(long nr, long ret)
{
	if (ret == -EAGAIN || ret == -EBUSY || ret == -EALREADY)
		return 1;
	return nr == NR_connect && (ret == -ECONNREFUSED ||
	    ret == -ENOENT || ret == -EINPROGRESS);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(on_sys_exit, struct pt_regs *regs, long ret)
{
	__u64 pt = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pt;
	struct task_struct *t;
	long nr;
	int k;

	if ((__u32)(pt >> 32) == self_tgid)
		return 0;
	SCOPE(cur_in());
	nr = regs->orig_ax;
	if (marker_exit) {
		if (nr != NR_write || ret <= 0)
			return 0;
		goto marker;
	}
	if (full) {
		EMIT(2, RB_SYS_EXIT, tid, (__u64)nr, (__u64)ret);
		goto marker;
	}
	t = bpf_get_current_task_btf();
	if (blocking) {
		struct blk *b = bpf_task_storage_get(&blocked, t, 0, 0);

		if (b && b->on) {
			b->on = 0;
			b->retry = timed_out(nr, ret) ? RETRY_WINDOW : 0;
			EMIT(2, RB_SYS_EXIT, tid, (__u64)nr, (__u64)ret);
			if (stack_ns)
				wait_stack(ctx, b, tid,
				    bpf_ktime_get_boot_ns(), nr, ret);
			goto marker;
		}
		if (nr == NR_close) {
			/* a daemon may close every fd up to its limit: a
			   close that failed changed nothing */
			if (ret < 0)
				return 0;
			goto both;
		}
		if (nr == NR_sched_yield) {
			/* a yield loop: one kept a millisecond (a busy one
			   makes a million calls a second) */
			__u64 now = bpf_ktime_get_boot_ns();

			if (!b)
				b = bpf_task_storage_get(&blocked, t, 0,
				    BPF_LOCAL_STORAGE_GET_F_CREATE);
			if (b && now - b->yield_ts < YIELD_GAP_NS)
				return 0;
			if (b)
				b->yield_ts = now;
			goto both;
		}
		if (b && b->retry) {
			b->retry--;
			if (ret < 0 && try_again(nr, ret)) {
				b->retry = 0;
				goto both;
			}
		}
	}
	if (nr != NR_read && nr != NR_write && nr != NR_readv &&
	    nr != NR_writev)
		return 0;
	k = fd_kind(t, regs->di);

	if (k == 3 && nr == NR_write && ret > 0)
		return emit_marker(tid, regs->si, ret);
	if (!blocking || (k != 1 && k != 2))
		return 0;
both:
	EMIT(6, RB_SYS_ENTER, tid, (__u64)nr, regs->di,
	    regs->si, regs->dx,
	    regs->r10, regs->r8);
	EMIT(2, RB_SYS_EXIT, tid, (__u64)nr, (__u64)ret);
	return 0;
marker:
	if (nr == NR_write && ret > 0 && marker_write_fn &&
	    fd_kind(bpf_get_current_task_btf(), regs->di) == 3)
		return emit_marker(tid, regs->si, ret);
	return 0;
}

static __always_inline int
filelock(__u64 op, struct inode *inode, struct file_lock *fl, int ret)
{
	SCOPE(cur_in());
	__u64 type = 0, owner = 0;
	struct pt_regs *regs = NULL;
	__u32 tid = cur_tid();

	/* lean: a lock attempt refused at once (flock LOCK_NB, F_SETLK)
	   is a polling attempt, kept as its call: entry, lock, exit */
	if (lean && ret == -EAGAIN && op <= 2 && ctx_now() == 0) {
		struct task_struct *t = bpf_get_current_task_btf();
		struct blk *b = bpf_task_storage_get(&blocked, t, 0, 0);

		regs = (struct pt_regs *)bpf_task_pt_regs(t);
		if ((b && b->on) || regs->ax != -ENOSYS ||
		    (regs->orig_ax != NR_flock && regs->orig_ax != NR_fcntl)) {
			regs = NULL;
		} else {
			fd_check(t, regs->di);
			EMIT(6, RB_SYS_ENTER, tid, (__u64)regs->orig_ax,
			    regs->di, regs->si, regs->dx, regs->r10, regs->r8);
		}
	}
	if (fl) {
		type = (__u64)BPF_CORE_READ(fl, c.flc_type) |
		    (__u64)BPF_CORE_READ(fl, c.flc_flags) << 8;
		owner = (__u64)BPF_CORE_READ(fl, c.flc_owner);
	}
	EMIT(6, RB_FILELOCK, tid, op,
	    inode ? (__u64)BPF_CORE_READ(inode, i_ino) : 0,
	    inode ? (__u64)BPF_CORE_READ(inode, i_sb, s_dev) : 0, type,
	    (__u64)(__s64)ret, owner);
	if (regs)
		EMIT(2, RB_SYS_EXIT, tid, (__u64)regs->orig_ax,
		    (__u64)(__s64)ret);
	return 0;
}

SEC("tp_btf/posix_lock_inode")
int BPF_PROG(on_posix_lock, struct inode *inode, struct file_lock *fl, int ret)
{
	return filelock(1, inode, fl, ret);
}

SEC("tp_btf/flock_lock_inode")
int BPF_PROG(on_flock_lock, struct inode *inode, struct file_lock *fl, int ret)
{
	return filelock(2, inode, fl, ret);
}

SEC("tp_btf/fcntl_setlk")
int BPF_PROG(on_fcntl_setlk, struct inode *inode, struct file_lock *fl, int ret)
{
	return filelock(3, inode, fl, ret);
}

SEC("tp_btf/locks_remove_posix")
int BPF_PROG(on_remove_posix, struct inode *inode, struct file_lock *fl,
    int ret)
{
	return filelock(4, inode, fl, ret);
}
