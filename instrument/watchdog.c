/*
 * watchdog.c: the hang watchdog thread.
 *
 * State: hang_state (0 none, 1 a hang begin was written and no end yet),
 * the wake stamp of the main-thread loop wait the hang belongs to, and a
 * one-slot mailbox the main thread's signal handler fills with its stack.
 *
 * Every tick (a quarter of the threshold, at most 500 ms) the thread looks
 * at the main thread's loop state (wrap-loop.c). When the main thread has
 * been out of its loop wait for longer than the threshold, it captures
 * the main thread's user stack and writes, on the main thread's behalf
 * (ARGUS_MK_PROXY), TU_HANG_BEGIN (key main tid, arg threshold ns, arg2
 * CLOCK_BOOTTIME ns when the main thread left its wait) and the stack.
 * The main thread writes TU_HANG_END itself when it re-enters a loop
 * wait (exact time; arg = hang length ns).
 *
 * Capturing the stack: if the main thread runs (/proc/self/task/T/syscall
 * says "running"), a signal (ARGUS_SIGNAL, default SIGRTMAX-2) makes it
 * walk its own frame pointers from the interrupted context. If it is
 * blocked in a system call, signalling could cut a sleep short, so the
 * watchdog instead takes pc and sp from that file and scans the stack
 * above sp for a frame-pointer chain (heuristic, no fault possible: the
 * scan stays inside the main stack mapping).
 *
 * The signal is the program's as soon as it shows any interest in it:
 * the wrappers of sigaction, signal, bsd_signal, sysv_signal and sigset
 * note every signal the program sets an action for (prog_sigs), under
 * sig_lock, which the watchdog holds from its checks until its signal
 * was handled. The watchdog signals only when the signal is not among
 * them, its action still is on_signal (not changed by the bare system
 * call) and the main thread does not block it (a program reading it from
 * a signalfd). Our action reads as the default to the program.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "instrument-local.h"

static pthread_t wd_thread;
static int hang_state;
static uint64_t hang_wake_ns;
static int wd_signal;		/* ours, its action on_signal; 0 none */
static uint64_t prog_sigs;	/* bit s - 1: the program set s's action */
static int sig_lock;		/* over wd_signal, prog_sigs and a send */

INS_REAL(int, sigaction, (int, const struct sigaction *, struct sigaction *))
INS_REAL(sighandler_t, signal, (int, sighandler_t))
/* glibc declares it only for older X/Open levels */
sighandler_t bsd_signal(int, sighandler_t);
INS_REAL(sighandler_t, bsd_signal, (int, sighandler_t))
INS_REAL(sighandler_t, sysv_signal, (int, sighandler_t))
INS_REAL(sighandler_t, __sysv_signal, (int, sighandler_t))
INS_REAL(sighandler_t, sigset, (int, sighandler_t))

/* mailbox filled by the signal handler in the main thread */
static uint64_t mb_frames[ARGUS_MARKER_MAX_FRAMES];
static volatile unsigned mb_n;
static volatile int mb_done;

int ins_hang_end_if_active(void);

int
ins_hang_end_if_active(void)
{
	if (!__atomic_load_n(&hang_state, __ATOMIC_ACQUIRE))
		return 0;
	if (__atomic_exchange_n(&hang_state, 0, __ATOMIC_ACQ_REL) != 1)
		return 0;
	ins_emit(TU_HANG_END, (uint64_t)ins.main_tid,
	    ins_mono_ns() - hang_wake_ns, ins.wake_boot_ns, NULL);
	return 1;
}

static void
on_signal(int sig, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;
	uintptr_t pc = 0, fp = 0, sp = 0;

	(void)sig;
	(void)si;
	if (ins_tid() != ins.main_tid)
		return;
#if defined(__x86_64__)
	pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	fp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
	sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
#elif defined(__aarch64__)
	pc = (uintptr_t)uc->uc_mcontext.pc;
	fp = (uintptr_t)uc->uc_mcontext.regs[29];
	sp = (uintptr_t)uc->uc_mcontext.sp;
#else
	(void)uc;
#endif
	mb_n = pc && sp >= ins.main_stack_lo && sp < ins.main_stack_hi ?
	    ins_walk_from(pc, sp, fp, ins.main_stack_hi, mb_frames,
	    ARGUS_MARKER_MAX_FRAMES) : 0;
	__atomic_store_n(&mb_done, 1, __ATOMIC_RELEASE);
}

/* Read "nr ... sp pc" or "running" from the main thread's syscall file. */
static int
main_syscall(uintptr_t *sp, uintptr_t *pc)
{
	char path[64], buf[256];
	ssize_t r;
	int fd;
	char *tok[16], *p, *save;
	int nt = 0;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall",
	    (int)ins.main_tid);
	if (!ins_fd_enter(&ins.tmp_guard))
		return -1;	/* the program is closing descriptors */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	r = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	ins_fd_leave(&ins.tmp_guard);
	if (r <= 0)
		return -1;
	buf[r] = 0;
	if (strncmp(buf, "running", 7) == 0)
		return 0;
	for (p = strtok_r(buf, " \n", &save); p && nt < 16;
	    p = strtok_r(NULL, " \n", &save))
		tok[nt++] = p;
	if (nt < 9)
		return -1;
	*sp = (uintptr_t)strtoull(tok[nt - 2], NULL, 16);
	*pc = (uintptr_t)strtoull(tok[nt - 1], NULL, 16);
	return 1;
}

/*
 * Stack of a thread blocked in a system call: pc, the first code address
 * found above sp (the return into the caller of the libc wrapper), then
 * the first plausible frame-pointer chain in the next 64 KiB.
 */
static unsigned
scan_stack(uintptr_t sp, uintptr_t pc, uint64_t *frames, unsigned max)
{
	uintptr_t hi = ins.main_stack_hi, end, a;
	unsigned n = 0;

	if (sp < ins.main_stack_lo || sp >= hi)
		return pc ? (frames[0] = pc, 1) : 0;
	sp &= ~(uintptr_t)7;
	end = sp + 65536 < hi - 16 ? sp + 65536 : hi - 16;
	for (a = sp; a < end; a += 8) {
		uintptr_t next = *(uintptr_t *)a;
		uintptr_t ret = *(uintptr_t *)(a + 8);

		if (next <= a || next >= hi - 16 || (next & 7) ||
		    !ins_is_text(ret))
			continue;
		/* one more link must look right too (or end the chain) */
		uintptr_t n2 = *(uintptr_t *)next;
		uintptr_t r2 = *(uintptr_t *)(next + 8);
		if (!(n2 == 0 || ins_is_text(r2)))
			continue;
		return ins_walk_from(pc, sp, a, hi, frames, max);
	}
	frames[n++] = pc;
	return n;
}

static void
sig_lock_take(void)
{
	while (__atomic_exchange_n(&sig_lock, 1, __ATOMIC_ACQUIRE))
		syscall(SYS_sched_yield);	/* not our sched_yield */
}

static void
sig_lock_give(void)
{
	__atomic_store_n(&sig_lock, 0, __ATOMIC_RELEASE);
}

static uint64_t
sig_bit(int sig)
{
	return sig >= 1 && sig <= 64 ? 1ull << (sig - 1) : 0;
}

/* Is sig blocked in the main thread (or its mask unknown)? */
static int
main_blocks(int sig)
{
	char path[64], buf[4096], *p;
	ssize_t r = -1;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status",
	    (int)ins.main_tid);
	if (!ins_fd_enter(&ins.tmp_guard))
		return 1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		r = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	ins_fd_leave(&ins.tmp_guard);
	if (r <= 0)
		return 1;
	buf[r] = 0;
	p = strstr(buf, "\nSigBlk:");
	return p == NULL || (strtoull(p + 8, NULL, 16) & sig_bit(sig)) != 0;
}

/*
 * Interrupt the running main thread with our signal and wait (50 ms at
 * most) for its handler to fill the mailbox; 1 when it did. Nothing when
 * the signal became the program's.
 */
static int
signal_main(void)
{
	struct sigaction cur;
	int sig, done = 0;

	sig_lock_take();
	sig = wd_signal;
	if (sig && (__atomic_load_n(&prog_sigs, __ATOMIC_RELAXED) &
	    sig_bit(sig)) == 0 && get_sigaction()(sig, NULL, &cur) == 0 &&
	    (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_signal) {
		if (!main_blocks(sig)) {
			mb_done = 0;
			if (syscall(SYS_tgkill, ins.pid, ins.main_tid,
			    sig) == 0) {
				for (int i = 0; i < 100 && !(done =
				    __atomic_load_n(&mb_done,
				    __ATOMIC_ACQUIRE)); i++) {
					struct timespec ts = { 0, 500000 };

					nanosleep(&ts, NULL);
				}
			}
		}
	} else {
		wd_signal = 0;	/* the program has it now, for good */
	}
	sig_lock_give();
	return done;
}

static unsigned
main_stack(uint64_t *frames, unsigned max)
{
	uintptr_t sp = 0, pc = 0;
	int st = main_syscall(&sp, &pc);

	if (st == 1)
		return scan_stack(sp, pc, frames, max);
	if (st < 0 || !signal_main())
		return 0;
	memcpy(frames, mb_frames, mb_n * sizeof(*frames));
	return mb_n;
}

static void
check_hang(void)
{
	uint64_t frames[ARGUS_MARKER_MAX_FRAMES];
	uint64_t wake, now;
	unsigned n;

	if (!ins.loop_seen || ins.in_wait ||
	    __atomic_load_n(&hang_state, __ATOMIC_ACQUIRE))
		return;
	wake = ins.wake_ns;
	now = ins_mono_ns();
	if (now - wake < ins.hang_ns)
		return;
	n = main_stack(frames, ARGUS_MARKER_MAX_FRAMES);
	if (ins.in_wait || ins.wake_ns != wake)
		return;		/* came back meanwhile: no hang */
	hang_wake_ns = wake;
	ins_emit_proxy(ins.main_tid, TU_HANG_BEGIN, (uint64_t)ins.main_tid,
	    ins.hang_ns, ins.wake_boot_ns, NULL, 0);
	ins_emit_stack(ins.main_tid, TU_HANG_BEGIN, frames, n);
	__atomic_store_n(&hang_state, 1, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	/* the main thread may have re-entered its wait before seeing it */
	if (ins.in_wait || ins.wake_ns != wake) {
		if (__atomic_exchange_n(&hang_state, 0, __ATOMIC_ACQ_REL) == 1)
			ins_emit_proxy(ins.main_tid, TU_HANG_END,
			    (uint64_t)ins.main_tid, ins_mono_ns() - wake,
			    ins.wake_boot_ns, NULL, 0);
	}
}

static void *
watchdog(void *arg)
{
	uint64_t tick = ins.hang_ns / 4;
	sigset_t all;

	(void)arg;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	if (tick > 500000000ull)
		tick = 500000000ull;
	if (tick < 1000000ull)
		tick = 1000000ull;
	for (;;) {
		struct timespec ts = { (time_t)(tick / 1000000000ull),
		    (long)(tick % 1000000000ull) };

		nanosleep(&ts, NULL);
		ins_recheck();
		if (ins.on)
			check_hang();
	}
	return NULL;
}

static void
install_signal(void)
{
	struct sigaction sa, old;
	int sig = ins_env_signal();

	if (sig <= 0)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&sa.sa_mask);
	sig_lock_take();
	/* unless the program uses it: then no signal stacks */
	if ((__atomic_load_n(&prog_sigs, __ATOMIC_RELAXED) &
	    sig_bit(sig)) == 0 && get_sigaction()(sig, NULL, &old) == 0 &&
	    old.sa_handler == SIG_DFL && get_sigaction()(sig, &sa, NULL) == 0)
		wd_signal = sig;
	sig_lock_give();
}

void
ins_watchdog_start(void)
{
	pthread_attr_t a;
	sigset_t all, old;

	if (__atomic_exchange_n(&ins.watchdog_started, 1, __ATOMIC_ACQ_REL))
		return;
	if (!wd_signal)
		install_signal();
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&a, 64 * 1024);
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	if (pthread_create(&wd_thread, &a, watchdog, NULL) != 0)
		ins.watchdog_started = 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&a);
}

void
ins_watchdog_atfork_child(void)
{
	/* the thread did not survive fork; the next loop wait restarts it */
	ins.watchdog_started = 0;
	ins.loop_seen = 0;
	ins.in_wait = 0;
	hang_state = 0;
}

/* --- the program's signal actions ------------------------------------------- */

/*
 * The program sets the action of sig (set is 0 for a mere query): the
 * watchdog leaves sig alone from now on. A vfork child, sharing our
 * memory but soon another program, changes nothing.
 */
static void
program_takes(int sig, int set)
{
	uint64_t bit = sig_bit(sig);

	if (!set || bit == 0 || (__atomic_load_n(&prog_sigs,
	    __ATOMIC_RELAXED) & bit) || (ins.pid && getpid() != ins.pid))
		return;
	sig_lock_take();
	__atomic_or_fetch(&prog_sigs, bit, __ATOMIC_RELAXED);
	if (wd_signal == sig)
		wd_signal = 0;
	sig_lock_give();
}

/* Our handler shows as the default action. */
static sighandler_t
shown(sighandler_t h)
{
	return (void *)h == (void *)on_signal ? SIG_DFL : h;
}

INS_EXPORT int
sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	int r;

	program_takes(sig, act != NULL);
	r = get_sigaction()(sig, act, old);
	if (r == 0 && old && (old->sa_flags & SA_SIGINFO) &&
	    old->sa_sigaction == on_signal) {
		memset(old, 0, sizeof(*old));
		old->sa_handler = SIG_DFL;
	}
	return r;
}

INS_EXPORT sighandler_t
signal(int sig, sighandler_t h)
{
	program_takes(sig, 1);
	return shown(get_signal()(sig, h));
}

INS_EXPORT sighandler_t
bsd_signal(int sig, sighandler_t h)
{
	program_takes(sig, 1);
	return shown(get_bsd_signal()(sig, h));
}

INS_EXPORT sighandler_t
sysv_signal(int sig, sighandler_t h)
{
	program_takes(sig, 1);
	return shown(get_sysv_signal()(sig, h));
}

INS_EXPORT sighandler_t
__sysv_signal(int sig, sighandler_t h)
{
	program_takes(sig, 1);
	return shown(get___sysv_signal()(sig, h));
}

INS_EXPORT sighandler_t
sigset(int sig, sighandler_t h)
{
	program_takes(sig, 1);
	return shown(get_sigset()(sig, h));
}
