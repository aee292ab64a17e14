/*
 * mkwake.c: writes a small trace whose threads fill the streaming scan's
 * first table of threads (64) exactly, then has one of them wake a
 * thread the trace has not named, for the sanitizer tests: mkwake DIR.
 *
 * Threads "w0" to "w63" (tids 1000 to 1063, one process) are in the
 * thread table. On CPU 0, w0 runs, wakes tid 5000 (the 65th thread, so
 * the scan's table grows while it holds w0's entry), waits on a futex,
 * and 5000 runs. Timestamps are fixed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "trace/trace.h"

#define NTHREADS 64
#define FIRST 1000
#define STRANGER 5000

static struct trace_writer *w;
static uint64_t now = 1000000000ULL;	/* 1 s on the trace clock */
static int failed;

static void
ev(uint32_t tid, unsigned type, uint64_t a0, uint64_t a1, uint64_t a2)
{
	struct trace_event e;

	memset(&e, 0, sizeof(e));
	e.ts = now;
	e.tid = tid;
	e.type = (uint16_t)type;
	e.arg[0] = a0;
	e.arg[1] = a1;
	e.arg[2] = a2;
	if (trace_writer_add(w, &e) != 0)
		failed = 1;
	now += 10000;		/* 10 us between events */
}

int
main(int argc, char **argv)
{
	struct trace_writer_opts o;
	char *cause = NULL;

	if (argc != 2) {
		fprintf(stderr, "usage: mkwake DIR\n");
		return 2;
	}
	memset(&o, 0, sizeof(o));
	o.ncpus = 1;
	o.group = (gid_t)-1;
	o.hostname = "testhost";
	o.release = "6.18.0-test";
	o.boot_id = "00000000-mkwake";
	if (trace_writer_open(&w, argv[1], &o, &cause) != 0) {
		fprintf(stderr, "mkwake: %s\n", cause);
		free(cause);
		return 1;
	}
	for (uint32_t i = 0; i < NTHREADS; i++) {
		struct trace_thread t;

		memset(&t, 0, sizeof(t));
		t.tid = FIRST + i;
		t.pid = FIRST;
		t.ppid = 1;
		snprintf(t.comm, sizeof(t.comm), "w%u", (unsigned)i);
		if (trace_writer_thread(w, 1, &t) != 0)
			failed = 1;
	}
	ev(FIRST, TT_SYS_ENTER, SYS_futex, 0x7f0000001000ULL, 1);
	ev(FIRST, TT_WAKING, STRANGER, 0, 120);
	ev(FIRST, TT_SYS_EXIT, SYS_futex, 1, 0);
	ev(FIRST, TT_SYS_ENTER, SYS_futex, 0x7f0000002000ULL, 0);
	ev(FIRST, TT_SWITCH, 1, STRANGER, 120);
	ev(STRANGER, TT_SYS_EXIT, SYS_futex, 0, 0);
	if (trace_writer_close(w) != 0 || failed) {
		fprintf(stderr, "mkwake: writing %s failed\n", argv[1]);
		return 1;
	}
	return 0;
}
