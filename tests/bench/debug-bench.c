/*
 * debug-bench.c: drives `argus debug` in a pseudo-terminal and measures
 * how long each keystroke takes to redraw: debug-bench ARGUS TRACE
 * [COLS ROWS]. After the first screen, each key of the list below is sent
 * REPEAT times; its latency is from writing the key to the last byte of
 * the screen update (the output then stays quiet for QUIET_MS). Prints,
 * per key, the median and the maximum, and checks them against the
 * targets: 50 ms per key, 100 ms to zoom out to the whole trace (key 0).
 * With DEBUG_BENCH_AT set, the debugger opens with --at that time.
 * Exit status 1 when a target is missed.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define QUIET_MS 150
#define REPEAT 7
#define KEY_MS 50
#define ZOOM_ALL_MS 100

static uint64_t
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* Read until quiet for quiet_ms (or max_ms in all); returns the time of
   the last byte read (0 if none). If want is set, keep reading until it
   has been seen too. */
static uint64_t
drain(int fd, int quiet_ms, int max_ms, const char *want, size_t *bytes)
{
	static char tail[8192];
	static size_t ntail;
	uint64_t start = now_us(), last = 0;
	int seen = want == NULL;
	char buf[65536];

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		uint64_t t = now_us();
		if ((t - start) / 1000 >= (uint64_t)max_ms)
			break;
		int r = poll(&p, 1, quiet_ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0) {
			if (seen)
				break;
			continue;
		}
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n <= 0)
			break;
		last = now_us();
		if (bytes)
			*bytes += (size_t)n;
		if (!seen) {
			/* keep a tail to find want across reads */
			size_t k = (size_t)n < sizeof(tail) / 2 ? (size_t)n :
			    sizeof(tail) / 2;
			if (ntail + k > sizeof(tail)) {
				memmove(tail, tail + ntail - sizeof(tail) / 2,
				    sizeof(tail) / 2);
				ntail = sizeof(tail) / 2;
			}
			memcpy(tail + ntail, buf + n - k, k);
			ntail += k;
			if (memmem(tail, ntail, want, strlen(want)) != NULL)
				seen = 1;
		}
	}
	return seen ? last : 0;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

int
main(int argc, char **argv)
{
	static const struct { const char *key, *name; } keys[] = {
		{ "j", "j (next lane)" }, { "k", "k (previous lane)" },
		{ "l", "l (cursor right)" }, { "h", "h (cursor left)" },
		{ "+", "+ (zoom in)" }, { "-", "- (zoom out)" },
		{ "L", "L (pan right)" }, { "H", "H (pan left)" },
		{ "w", "w (waker)" }, { "[", "[ (back)" }, { "]", "] (forward)" },
		{ "W", "W (wakee)" }, { "\t", "Tab (next pane)" },
		{ "0", "0 (zoom out to the whole trace)" },
		{ "l", "l at the whole trace" },
		{ "j", "j at the whole trace" },
	};
	struct winsize ws = { .ws_row = 40, .ws_col = 120 };
	int fd, status, fail = 0;
	pid_t pid;
	uint64_t t0;
	size_t bytes = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: debug-bench ARGUS TRACE [COLS ROWS]\n");
		return 2;
	}
	if (argc > 4) {
		ws.ws_col = (unsigned short)atoi(argv[3]);
		ws.ws_row = (unsigned short)atoi(argv[4]);
	}
	t0 = now_us();
	pid = forkpty(&fd, NULL, NULL, &ws);
	if (pid < 0) {
		perror("debug-bench: forkpty");
		return 1;
	}
	if (pid == 0) {
		setenv("TERM", "xterm-256color", 1);
		setenv("HOME", "/nonexistent", 1);
		unsetenv("XDG_STATE_HOME");
		/* DEBUG_BENCH_AT: open on that time (a window of the trace) */
		if (getenv("DEBUG_BENCH_AT") != NULL)
			execl(argv[1], "argus", "debug", "--at",
			    getenv("DEBUG_BENCH_AT"), argv[2], (char *)NULL);
		else
			execl(argv[1], "argus", "debug", argv[2], (char *)NULL);
		_exit(127);
	}
	/* the first screen: the status line of a hang, or "no hang" */
	if (drain(fd, 500, 600000, "Candidates", &bytes) == 0) {
		fprintf(stderr, "debug-bench: the debugger did not come up\n");
		kill(pid, SIGTERM);
		waitpid(pid, &status, 0);
		return 1;
	}
	printf("debug-bench: %s at %ux%u: first screen after %.1f s\n",
	    argv[2], ws.ws_col, ws.ws_row, (double)(now_us() - t0) / 1e6);
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		uint64_t lat[REPEAT];
		int n = 0, reps = keys[k].key[0] == '0' ? 1 : REPEAT;
		for (int r = 0; r < reps; r++) {
			uint64_t s = now_us(), e;
			if (keys[k].key[0] == '0' && r > 0)
				break;
			if (write(fd, keys[k].key, strlen(keys[k].key)) < 0)
				break;
			e = drain(fd, QUIET_MS, 5000, NULL, &bytes);
			if (e > s)
				lat[n++] = e - s;
		}
		if (n == 0) {
			printf("  %-34s no redraw\n", keys[k].name);
			continue;
		}
		qsort(lat, (size_t)n, sizeof(lat[0]), cmp_u64);
		unsigned limit = keys[k].key[0] == '0' ? ZOOM_ALL_MS : KEY_MS;
		int bad = lat[n - 1] > limit * 1000ULL;
		printf("  %-34s median %6.1f ms  max %6.1f ms  (%d redraws, "
		    "target %u ms)%s\n", keys[k].name, lat[n / 2] / 1000.0,
		    lat[n - 1] / 1000.0, n, limit, bad ? "  MISSED" : "");
		fail |= bad;
	}
	if (write(fd, "q", 1) < 0)
		fail = 1;
	drain(fd, QUIET_MS, 3000, NULL, NULL);
	waitpid(pid, &status, 0);
	printf("debug-bench: %zu bytes of screen output; %s\n", bytes,
	    fail ? "some targets missed" : "every target met");
	return fail;
}
