/*
 * ins-decode.c: test helper. Reads a tracefs instance's `trace` text on
 * stdin and prints each argus marker record (trace/user-protocol.h) as one line:
 *   TS PID KIND key=0x.. arg=N arg2=0x.. [tid=N] [name=TEXT | frames=N F...]
 * KIND is the enum trace_user name, "stack", "mmap" or a number.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/user-protocol.h"
#include "trace/trace.h"

static const char *names[] = {
	[TU_MARK] = "mark", [TU_TASK_SUBMIT] = "task_submit",
	[TU_TASK_BEGIN] = "task_begin", [TU_TASK_END] = "task_end",
	[TU_RUNLOOP_SUBMIT] = "runloop_submit",
	[TU_CALLOUT_BEGIN] = "callout_begin", [TU_CALLOUT_END] = "callout_end",
	[TU_FLAG_WRITE] = "flag_write", [TU_FLAG_READ] = "flag_read",
	[TU_INPUT] = "input", [TU_HANG_BEGIN] = "hang_begin",
	[TU_HANG_END] = "hang_end", [TU_LOCK_WAIT] = "lock_wait",
	[TU_LOCK_ACQUIRED] = "lock_acquired", [TU_LOCK_RELEASE] = "lock_release",
	[TU_COND_WAIT] = "cond_wait", [TU_COND_DONE] = "cond_done",
	[TU_COND_SIGNAL] = "cond_signal", [TU_LOOP_WAIT] = "loop_wait",
	[TU_LOOP_WAKE] = "loop_wake", [TU_PROBE] = "probe",
};

static uint64_t
le(const unsigned char *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

int
main(void)
{
	char line[8192];

	while (fgets(line, sizeof(line), stdin)) {
		char *hash = strstr(line, ": # 41524755 buf:");
		unsigned char b[2048];
		size_t n = 0;
		char *p, *q;
		unsigned kind, len;
		long pid = 0;

		if (!hash)
			continue;
		*hash = 0;
		/* "comm-PID [cpu] flags TS" */
		q = strstr(line, " [");
		if (q) {
			p = q;
			while (p > line && p[-1] != '-')
				p--;
			pid = strtol(p, NULL, 10);
		}
		p = strrchr(line, ' ');
		const char *ts = p ? p + 1 : "0";
		for (p = hash + 17; n < sizeof(b);) {
			char *e;
			unsigned long v = strtoul(p, &e, 16);
			if (e == p)
				break;
			b[n++] = (unsigned char)v;
			p = e;
		}
		if (n < sizeof(struct argus_marker_hdr) - 4)
			continue;
		/* the kernel shows the id apart: b starts at kind */
		kind = (unsigned)le(b, 2);
		len = (unsigned)le(b + 2, 2);
		unsigned char *pay = b + 28;
		if (28 + len > n)
			len = (unsigned)(n - 28);
		printf("%s %ld ", ts, pid);
		unsigned k = kind & ~ARGUS_MK_PROXY;
		if (k == ARGUS_MK_STACK)
			printf("stack");
		else if (k == ARGUS_MK_MMAP)
			printf("mmap");
		else if (k < TU_NKINDS && names[k])
			printf("%s", names[k]);
		else
			printf("%u", k);
		printf(" key=0x%llx arg=%lld arg2=0x%llx",
		    (unsigned long long)le(b + 4, 8),
		    (long long)le(b + 12, 8), (unsigned long long)le(b + 20, 8));
		if (kind & ARGUS_MK_PROXY) {
			printf(" tid=%u", (unsigned)le(pay, 4));
			pay += 8;
			len -= 8;
		}
		if (k == ARGUS_MK_STACK) {
			printf(" frames=%u", len / 8);
			for (unsigned i = 0; i + 8 <= len; i += 8)
				printf(" 0x%llx", (unsigned long long)le(pay + i, 8));
		} else if (len) {
			printf(" name=%.*s", (int)len, (char *)pay);
		}
		putchar('\n');
	}
	return 0;
}
