/*
 * stacks.bpf.h: part of record.bpf.c, included in its place: the
 * stacks of long waits (struct stk records, RB_STACK): the blocked
 * task's user stack at its return, its kernel stack and its waker's at
 * its wake-up, and the samples of a task that runs long.
 */

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
