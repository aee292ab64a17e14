/*
 * mkhang.c: writes a small deterministic trace shaped like a hang, for
 * the debugger tests: mkhang DIR [ITERATIONS].
 *
 * Process "app" (pid 500): main thread "app" (500) handles a request per
 * iteration by waiting on a futex until its thread "app-worker" (501)
 * wakes it; app-worker is itself woken by "server" (600, another
 * process), which runs on and off without waiting (a dead end of the
 * chain). So the wake-up chain of every wait of app is app <- app-worker
 * <- server. The normal iterations wait 2 ms; the last one waits 2.5 s
 * (a hang found from kernel events alone). "app-watchdog" (502) only has
 * a name. Everything runs on CPU 0; timestamps are fixed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>

#include "tests/tools/fixture-writer.h"

#define MAIN 500
#define WORKER 501
#define WDOG 502
#define SERVER 600
#define FUTEX_A 0x7f0000001000ULL	/* app waits here */
#define FUTEX_C 0x7f0000002000ULL	/* app-worker waits here */

/* tid waits on a futex and the CPU goes to next. */
static void
block(uint32_t tid, uint64_t futex, uint32_t next)
{
	fw_ev(tid, 0, TT_SYS_ENTER, SYS_futex, futex, 0, 0);
	fw_ev(tid, 0, TT_SWITCH, 1, next, 120, 0);
}

/* One request: app waits, server wakes app-worker after delay ns,
   app-worker wakes app. The server is on the CPU when this starts. */
static void
iteration(uint64_t delay)
{
	fw_ev(SERVER, 0, TT_SWITCH, 0, MAIN, 120, 0);	/* preempted */
	fw_ev(MAIN, 0, TT_SYS_EXIT, SYS_read, 8, 0, 0);
	block(MAIN, FUTEX_A, SERVER);
	fw_now += delay;
	fw_ev(SERVER, 0, TT_SYS_ENTER, SYS_write, 5, 0, 0);
	fw_ev(SERVER, 0, TT_WAKING, WORKER, 0, 120, 0);
	fw_ev(SERVER, 0, TT_SYS_EXIT, SYS_write, 8, 0, 0);
	fw_ev(SERVER, 0, TT_SWITCH, 0, WORKER, 120, 0);	/* preempted */
	fw_ev(WORKER, 0, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	fw_ev(WORKER, 0, TT_SYS_ENTER, SYS_futex, FUTEX_A, 1, 0);
	fw_ev(WORKER, 0, TT_WAKING, MAIN, 0, 120, 0);
	fw_ev(WORKER, 0, TT_SYS_EXIT, SYS_futex, 1, 0, 0);
	block(WORKER, FUTEX_C, MAIN);
	fw_ev(MAIN, 0, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	fw_ev(MAIN, 0, TT_SYS_ENTER, SYS_read, 3, 0, 0);
	fw_ev(MAIN, 0, TT_SWITCH, 1, SERVER, 120, 0);	/* back to its loop */
	fw_now += 50000000ULL;				/* 50 ms idle */
}

int
main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 6;

	if (argc < 2 || n < 2) {
		fprintf(stderr, "usage: mkhang DIR [ITERATIONS >= 2]\n");
		return 2;
	}
	if (fw_open("mkhang", argv[1], 2) != 0)
		return 1;
	fw_thread(MAIN, MAIN, "app");
	fw_thread(WORKER, MAIN, "app-worker");
	fw_thread(WDOG, MAIN, "app-watchdog");
	fw_thread(SERVER, SERVER, "server");
	/* app-worker waits first; the server has the CPU */
	fw_ev(WORKER, 0, TT_SYS_ENTER, SYS_futex, FUTEX_C, 0, 0);
	fw_ev(WORKER, 0, TT_SWITCH, 1, SERVER, 120, 0);
	fw_ev(SERVER, 0, TT_SYS_ENTER, SYS_nanosleep, 0, 0, 0);
	fw_ev(SERVER, 0, TT_SYS_EXIT, SYS_nanosleep, 0, 0, 0);
	fw_ev(MAIN, 0, TT_SYS_ENTER, SYS_read, 3, 0, 0);
	for (int i = 0; i < n; i++)
		iteration(i == n - 1 ? 2500000000ULL : 2000000ULL);
	fw_ev(SERVER, 0, TT_EXIT, SERVER, 0, 0, 0);
	return fw_close("mkhang", argv[1]);
}
