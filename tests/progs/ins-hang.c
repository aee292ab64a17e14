/*
 * ins-hang.c: an event loop whose main thread stops answering. It polls
 * (10 ms) five times, then runs hang_here() for MS milliseconds (argv[2],
 * default 1500) spinning ("spin", argv[1]) or asleep ("sleep"), then
 * polls five more times. Prints "hang_here=ADDR" first.
 */
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

__attribute__((noinline)) static void
hang_here(int spin, unsigned ms)
{
	if (spin) {
		uint64_t end = mono_ms() + ms;
		volatile unsigned long x = 0;

		/* mostly in this frame, rarely in clock_gettime */
		while (mono_ms() < end)
			for (int i = 0; i < 1000000; i++)
				x++;
	} else {
		struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

		while (nanosleep(&ts, &ts) != 0)
			;
	}
	__asm__ volatile("" ::: "memory");
}

int
main(int argc, char **argv)
{
	int spin = argc < 2 || strcmp(argv[1], "sleep") != 0;
	unsigned ms = argc > 2 ? (unsigned)atoi(argv[2]) : 1500;

	printf("hang_here=%p\n", (void *)hang_here);
	fflush(stdout);
	for (int i = 0; i < 5; i++)
		poll(NULL, 0, 10);
	hang_here(spin, ms);
	for (int i = 0; i < 5; i++)
		poll(NULL, 0, 10);
	return 0;
}
