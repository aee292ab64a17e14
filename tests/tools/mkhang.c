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
#include <string.h>
#include <sys/syscall.h>

#include "trace/trace.h"

#define MAIN 500
#define WORKER 501
#define WDOG 502
#define SERVER 600
#define FUTEX_A 0x7f0000001000ULL	/* app waits here */
#define FUTEX_C 0x7f0000002000ULL	/* app-worker waits here */

static struct trace_writer *w;
static uint64_t now = 1000000000ULL;	/* 1 s on the trace clock */
static int failed;

static void
ev(uint32_t tid, unsigned cpu, unsigned type, uint64_t a0, uint64_t a1,
    uint64_t a2, uint64_t a3)
{
	struct trace_event e;

	memset(&e, 0, sizeof(e));
	e.ts = now;
	e.tid = tid;
	e.type = (uint16_t)type;
	e.cpu = (uint16_t)cpu;
	e.arg[0] = a0;
	e.arg[1] = a1;
	e.arg[2] = a2;
	e.arg[3] = a3;
	if (trace_writer_add(w, &e) != 0)
		failed = 1;
	now += 10000;		/* 10 us between events */
}

static void
thread(uint32_t tid, uint32_t pid, const char *comm)
{
	struct trace_thread t;

	memset(&t, 0, sizeof(t));
	t.tid = tid;
	t.pid = pid;
	t.ppid = 1;
	snprintf(t.comm, sizeof(t.comm), "%s", comm);
	trace_writer_thread(w, 1, &t);
}

/* tid waits on a futex and the CPU goes to next. */
static void
block(uint32_t tid, uint64_t futex, uint32_t next)
{
	ev(tid, 0, TT_SYS_ENTER, SYS_futex, futex, 0, 0);
	ev(tid, 0, TT_SWITCH, 1, next, 120, 0);
}

/* One request: app waits, server wakes app-worker after delay ns,
   app-worker wakes app. The server is on the CPU when this starts. */
static void
iteration(uint64_t delay)
{
	ev(SERVER, 0, TT_SWITCH, 0, MAIN, 120, 0);	/* preempted */
	ev(MAIN, 0, TT_SYS_EXIT, SYS_read, 8, 0, 0);
	block(MAIN, FUTEX_A, SERVER);
	now += delay;
	ev(SERVER, 0, TT_SYS_ENTER, SYS_write, 5, 0, 0);
	ev(SERVER, 0, TT_WAKING, WORKER, 0, 120, 0);
	ev(SERVER, 0, TT_SYS_EXIT, SYS_write, 8, 0, 0);
	ev(SERVER, 0, TT_SWITCH, 0, WORKER, 120, 0);	/* preempted */
	ev(WORKER, 0, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	ev(WORKER, 0, TT_SYS_ENTER, SYS_futex, FUTEX_A, 1, 0);
	ev(WORKER, 0, TT_WAKING, MAIN, 0, 120, 0);
	ev(WORKER, 0, TT_SYS_EXIT, SYS_futex, 1, 0, 0);
	block(WORKER, FUTEX_C, MAIN);
	ev(MAIN, 0, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	ev(MAIN, 0, TT_SYS_ENTER, SYS_read, 3, 0, 0);
	ev(MAIN, 0, TT_SWITCH, 1, SERVER, 120, 0);	/* back to its loop */
	now += 50000000ULL;				/* 50 ms idle */
}

int
main(int argc, char **argv)
{
	struct trace_writer_opts o;
	char *cause = NULL;
	int n = argc > 2 ? atoi(argv[2]) : 6;

	if (argc < 2 || n < 2) {
		fprintf(stderr, "usage: mkhang DIR [ITERATIONS >= 2]\n");
		return 2;
	}
	memset(&o, 0, sizeof(o));
	o.ncpus = 2;
	o.group = (gid_t)-1;
	o.hostname = "testhost";
	o.release = "6.18.0-test";
	o.boot_id = "00000000-mkhang";
	if (trace_writer_open(&w, argv[1], &o, &cause) != 0) {
		fprintf(stderr, "mkhang: %s\n", cause);
		free(cause);
		return 1;
	}
	thread(MAIN, MAIN, "app");
	thread(WORKER, MAIN, "app-worker");
	thread(WDOG, MAIN, "app-watchdog");
	thread(SERVER, SERVER, "server");
	/* app-worker waits first; the server has the CPU */
	ev(WORKER, 0, TT_SYS_ENTER, SYS_futex, FUTEX_C, 0, 0);
	ev(WORKER, 0, TT_SWITCH, 1, SERVER, 120, 0);
	ev(SERVER, 0, TT_SYS_ENTER, SYS_nanosleep, 0, 0, 0);
	ev(SERVER, 0, TT_SYS_EXIT, SYS_nanosleep, 0, 0, 0);
	ev(MAIN, 0, TT_SYS_ENTER, SYS_read, 3, 0, 0);
	for (int i = 0; i < n; i++)
		iteration(i == n - 1 ? 2500000000ULL : 2000000ULL);
	ev(SERVER, 0, TT_EXIT, SERVER, 0, 0, 0);
	if (trace_writer_close(w) != 0 || failed) {
		fprintf(stderr, "mkhang: writing %s failed\n", argv[1]);
		return 1;
	}
	return 0;
}
