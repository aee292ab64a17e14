/*
 * irq.bpf.h: part of record.bpf.c, included in its place: interrupt
 * contexts (IRQs, softirqs and their raises, IPIs), timers and work
 * items started, run and ended, and signals generated and delivered.
 */

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
