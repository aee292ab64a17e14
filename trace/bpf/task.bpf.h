/*
 * task.bpf.h: part of record.bpf.c, included in its place: wake-ups
 * (RB_WAKING, with the stacks of a long wait's end), new tasks, exec,
 * exit and renames, and the perf-event sampler's program.
 */

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
