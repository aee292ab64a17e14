/*
 * record-bpf.h: the records the BPF programs (record.bpf.c) write into
 * the ring buffer, shared by the programs and the loader (record-bpf.c).
 *
 * A record is a fixed 16-byte head (time on the boot clock, the thread
 * current on the CPU, the CPU, the record's kind and the interrupt
 * context) followed by the kind's numeric fields, already in the order
 * of the fields of the trace type it becomes (see trace/schema.c), and
 * for some kinds a fixed-size string (a comm, a name) or, for RB_MARKER,
 * the bytes a process wrote into the recorder's trace_marker_raw. The
 * loader gives each kind its count of fields and string size
 * (rb_kinds in record-bpf.c); the ring's own header carries the length.
 */
#ifndef ARGUS_RECORD_BPF_H
#define ARGUS_RECORD_BPF_H

/*
 * A task's state in the task storage map "blocked" (written by the
 * programs, and by the loader for the threads already asleep in a
 * system call when recording starts, so that their exit is kept).
 */
struct blk {
	__u32 on;	/* the current call blocked: its exit is kept */
	__u32 retry;	/* calls left, after a timed-out wait, whose "try
			   again" failure is kept (a polling attempt) */
	__u64 yield_ts;	/* the last sched_yield kept */
	__u64 since;	/* when the call blocked first (0: before the
			   recording): a wait longer than stack_ns gets
			   the user stack it blocked with (RB_STACK) */
	__u64 wstk;	/* the since of the wait whose waker's stack was
			   taken: one a wait */
	__u64 run_ts;	/* when the sampler last saw the task running */
	__u64 run_cpu;	/* and its CPU time then: a sample that finds it
			   ran most of the time since, stack_ns or more,
			   keeps its stack */
	__u64 series;	/* the start of a run of waits that each ended by
			   their timeout (a lock taken in timed slices),
			   0: none: a run that lasts stack_ns gets the
			   stack too, one a second */
	__u64 stk_ts;	/* when its last wait stack was taken */
	__u64 exit_ts;	/* when its last marked call returned: a run of
			   slices ends when it ran longer than it waited */
	__u32 stop;	/* stopped (a signal, a tracer) outside a call:
			   its resumption ends a wait */
	__u32 pad;
	__u64 saved;	/* frames in sstk, 0: none */
	__u64 sstk[32];	/* lean, a task without rseq (whose calls'
			   returns are not seen): the user stack it
			   blocked with, kept until it is woken; written
			   out then if the wait was long (a kernel
			   without BPF task work) */
	__u32 defer;	/* lean, a task without rseq, a kernel with
			   BPF task work: its wait's stack is taken on
			   its return to user space if the wait was
			   long (instead of sstk) */
	__u32 pend;	/* that wait was long: 1, at its switch in a
			   task work is to take the stack; 2, it is
			   scheduled */
	__u64 nr;	/* the call it blocked in */
};

#define RB_FIELDS_MAX 9	/* numeric fields of a record at most */

enum rb_kind {
	RB_NONE = 0,
	RB_SWITCH,		/* prev_state, next_tid, next_prio */
	RB_WAKING,		/* wakee, target_cpu, prio */
	RB_WAKEUP_NEW,		/* wakee, target_cpu */
	RB_FORK,		/* child, clone_flags; comm[16] */
	RB_EXEC,		/* pid, old_tid; filename[RB_PATH] */
	RB_EXIT,		/* tid, group_dead */
	RB_RENAME,		/* tid; comm[16] */
	RB_IRQ_ENTRY,		/* irq; name[RB_NAME] */
	RB_IRQ_EXIT,		/* irq, ret */
	RB_SOFTIRQ_ENTRY,	/* vec */
	RB_SOFTIRQ_EXIT,	/* vec */
	RB_SOFTIRQ_RAISE,	/* vec */
	RB_IPI,			/* kind (TIPI_SEND), cpu or mask | 1 << 63 */
	RB_TIMER_START,		/* timer, function, expires, kind, mode */
	RB_TIMER_CANCEL,	/* timer, kind */
	RB_TIMER_EXPIRE,	/* timer, kind, function */
	RB_TIMER_EXPIRE_EXIT,	/* timer, kind */
	RB_WQ_QUEUE,		/* work, function, req_cpu, cpu; name[RB_NAME] */
	RB_WQ_START,		/* work, function */
	RB_WQ_END,		/* work, function */
	RB_SIGNAL_GEN,		/* sig, target tid, code, result */
	RB_SIGNAL_DELIVER,	/* sig, code, handler */
	RB_SOCK_SEND,		/* sk, family, protocol, ret, flags, seq */
	RB_SOCK_RECV,		/* sk, family, protocol, ret, flags, seq */
	RB_SK_DATA_READY,	/* sk, family, protocol */
	RB_SYS_ENTER,		/* nr, a0..a4 */
	RB_SYS_EXIT,		/* nr, ret */
	RB_MARKER,		/* len; len bytes written to trace_marker_raw */
	RB_PROBE,		/* tracefs event id of the uprobe, ip */
	RB_FILELOCK,		/* op, ino, dev, type | flags << 8, ret, owner */
	RB_FD_INO,		/* tgid, fd, ino, what (RB_FD_*): the file fd
				   names when first seen blocking, or when it
				   names another than last seen (lean: no
				   close events) */
	RB_BLOCK,		/* nr, a0..a4, prev_state, next_tid,
				   next_prio: the entry of the call a task
				   blocks in and its switch, in one record
				   (one write into the ring, not two) */
	RB_SOCK_ADDR,		/* sk, family, protocol, lport | rport << 16,
				   then the local and remote addresses
				   (IPv4: one field each, then two of 0;
				   IPv6: the local address's two fields,
				   then the remote's, bytes in network
				   order), for
				   the first message of a TCP socket in a
				   segment (sock_gen) */
	RB_STACK,		/* n, kind (enum trace_stack_kind; a
				   waker's: | the tid woken << 8), then n
				   user return addresses, innermost first:
				   the stack a task blocked with, at the end
				   of a long wait (stack_ns); a waker's at
				   the wake-up of a task blocked that long;
				   a busy task's, sampled, and its kernel
				   stack when the sample found it there
				   (kernel addresses) */
	RB_NKINDS
};

#define RB_STACK_MAX 32		/* frames of a stack at most */
/* RB_STACK's kind: the values of enum trace_stack_kind (trace.h) */
#define RB_STK_WAIT 0
#define RB_STK_WAKER 0x40
#define RB_STK_SAMPLE 0x41
#define RB_STK_KWAIT 0x42
#define RB_STK_KSAMPLE 0x43
#define RB_SAMPLE_HZ 49		/* samples a second and CPU, of busy tasks */

/* RB_FD_INO's what: the inode's S_IFMT bits, and these; a socket's
   family in bits 16-31 */
#define RB_FD_EVENTFD 1
#define RB_FD_TERMINAL 2
#define RB_FD_ANONPIPE 4	/* a pipe of pipe(2), not a named FIFO */
#define RB_FD_FAMILY(w) ((unsigned)((w) >> 16) & 0xffff)	/* sockets:
				   the address family (0: unknown) */

#define RB_NAME 32		/* irq handler and work queue names */
#define RB_PATH 128		/* exec file names (longer ones are cut) */
#define RB_MARKER_MAX 512	/* bytes of a marker write kept */

struct rb_head {
	__u64 ts;		/* CLOCK_BOOTTIME ns */
	__u32 tid;		/* current thread (0: idle) */
	__u16 cpu;
	__u8 kind;		/* enum rb_kind */
	__u8 ctx;		/* enum trace_ctx */
};

/* Kinds of file a read or write is on, for the wake-up edges kept. */
#define RB_SYSCALL_MAX 512	/* syscall numbers the bitmaps cover */

#endif
