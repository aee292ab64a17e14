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
#include <sys/syscall.h>

#include "tests/tools/fixture-writer.h"

#define NTHREADS 64
#define FIRST 1000
#define STRANGER 5000

int
main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: mkwake DIR\n");
		return 2;
	}
	if (fw_open("mkwake", argv[1], 1) != 0)
		return 1;
	for (uint32_t i = 0; i < NTHREADS; i++) {
		char comm[TRACE_COMM_LEN];

		snprintf(comm, sizeof(comm), "w%u", (unsigned)i);
		fw_thread(FIRST + i, FIRST, comm);
	}
	fw_ev(FIRST, 0, TT_SYS_ENTER, SYS_futex, 0x7f0000001000ULL, 1, 0);
	fw_ev(FIRST, 0, TT_WAKING, STRANGER, 0, 120, 0);
	fw_ev(FIRST, 0, TT_SYS_EXIT, SYS_futex, 1, 0, 0);
	fw_ev(FIRST, 0, TT_SYS_ENTER, SYS_futex, 0x7f0000002000ULL, 0, 0);
	fw_ev(FIRST, 0, TT_SWITCH, 1, STRANGER, 120, 0);
	fw_ev(STRANGER, 0, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	return fw_close("mkwake", argv[1]);
}
