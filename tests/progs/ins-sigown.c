/*
 * ins-sigown.c: a program that takes SIGRTMAX-2 for itself after an
 * instrumentation library's watchdog started, then stops answering.
 *
 * Usage: ins-sigown HOW [MS]. The main thread polls (10 ms) five times,
 * then takes the signal, HOW being one of
 *   sigaction  installs a counting handler with sigaction(), and
 *              prints "old action default" or "old action set"
 *   signal     installs it with signal()
 *   syscall    installs it with the rt_sigaction system call itself
 *   blocked    blocks the signal (as a program reading it from a
 *              signalfd would) and counts the pending ones at the end
 * then spins for MS milliseconds (default 1000) without waiting, polls
 * five more times and prints "handler ran N times".
 */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t ran;

static void
on_sig(int sig)
{
	(void)sig;
	ran++;
}

static long
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The kernel's struct sigaction for rt_sigaction (x86-64 and arm64). */
struct ksigaction {
	void (*handler)(int);
	unsigned long flags;
	void (*restorer)(void);
	unsigned long mask;
};

static int
take_by_syscall(int sig)
{
	struct ksigaction ka;

	/* the current action's flags and restorer (libc's), our handler */
	if (syscall(SYS_rt_sigaction, sig, NULL, &ka, sizeof(ka.mask)) != 0)
		return -1;
	ka.handler = on_sig;
	ka.mask = 0;
	ka.flags &= ~(unsigned long)SA_SIGINFO;
	return (int)syscall(SYS_rt_sigaction, sig, &ka, NULL, sizeof(ka.mask));
}

int
main(int argc, char **argv)
{
	int sig = SIGRTMAX - 2;
	const char *how = argc > 1 ? argv[1] : "sigaction";
	long ms = argc > 2 ? atol(argv[2]) : 1000, end;
	volatile unsigned long x = 0;
	int r = 0;

	for (int i = 0; i < 5; i++)
		poll(NULL, 0, 10);
	if (strcmp(how, "sigaction") == 0) {
		struct sigaction sa, old;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_sig;
		r = sigaction(sig, &sa, &old);
		printf("old action %s\n", old.sa_handler == SIG_DFL &&
		    !(old.sa_flags & SA_SIGINFO) ? "default" : "set");
	} else if (strcmp(how, "signal") == 0) {
		r = signal(sig, on_sig) == SIG_ERR ? -1 : 0;
	} else if (strcmp(how, "syscall") == 0) {
		r = take_by_syscall(sig);
	} else if (strcmp(how, "blocked") == 0) {
		sigset_t s;

		sigemptyset(&s);
		sigaddset(&s, sig);
		r = sigprocmask(SIG_BLOCK, &s, NULL);
	} else {
		fprintf(stderr, "ins-sigown: unknown HOW %s\n", how);
		return 2;
	}
	if (r != 0) {
		perror(how);
		return 1;
	}
	end = mono_ms() + ms;
	while (mono_ms() < end)
		for (int i = 0; i < 100000; i++)
			x++;
	if (strcmp(how, "blocked") == 0) {
		sigset_t p;

		sigpending(&p);
		ran = sigismember(&p, sig);
	}
	for (int i = 0; i < 5; i++)
		poll(NULL, 0, 10);
	printf("handler ran %d times\n", (int)ran);
	return 0;
}
