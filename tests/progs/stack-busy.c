/*
 * stack-busy.c: a hang whose culprit computes, for the stacks of
 * tests/cli/stacks-busy.sh: the main thread sends a request down one
 * pipe to a worker and blocks in wait_for_reply() reading the reply from
 * another (through read_reply(), its own frame: the C library's read()
 * keeps none); the worker, woken by the request, computes for about
 * 1.5 s in compute_hard() without a system call, then writes the reply
 * in send_reply() (through write_reply()). Built with frame pointers; noinline keeps each frame.
 * With the argument "kernel", the worker computes in the kernel instead:
 * for about 1.5 s in compute_in_kernel(), which asks the kernel for
 * random bytes in 1 MiB blocks (getrandom(2) through syscall(2), never
 * the C library's, which may make them in user space).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int req[2], rep[2];
static int in_kernel;	/* compute_in_kernel() rather than compute_hard() */

/*
 * Iterations of compute_hard()'s loop that take about 1.5 s on the test
 * machines (a fixed count, not a clock: the loop makes no system call).
 */
#define ROUNDS 1100000000UL

/* A number from n rounds of an xorshift generator (pure CPU). */
__attribute__((noinline)) static uint64_t
compute_hard(unsigned long n)
{
	uint64_t x = 88172645463325252ULL;

	for (unsigned long i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	return x;
}

/* The nanoseconds of the monotonic clock. */
static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* not a tail call: the frame stays while syscall() runs (it keeps
   none, so the unwinder shows the caller of this one,
   compute_in_kernel) */
__attribute__((noinline)) static long
kernel_random(void *buf, size_t len)
{
	long got = syscall(SYS_getrandom, buf, len, 0);

	if (got < 0)
		perror("getrandom");
	return got;
}

/* A number from the random bytes the kernel makes, in 1 MiB blocks, for
   ms milliseconds (its time spent in the kernel). */
__attribute__((noinline)) static uint64_t
compute_in_kernel(unsigned long ms)
{
	static unsigned char buf[1 << 20];
	uint64_t end = now_ns() + ms * 1000000u, x = 0, v;

	while (now_ns() < end) {
		if (kernel_random(buf, sizeof(buf)) < 0)
			break;
		memcpy(&v, buf, sizeof(v));
		x ^= v;
	}
	return x;
}

/* not a tail call: the frame stays while write() runs (it keeps none,
   so the unwinder shows the caller of this one, send_reply) */
__attribute__((noinline)) static ssize_t
write_reply(const uint64_t *v)
{
	ssize_t put = write(rep[1], v, sizeof(*v));

	if (put < 0)
		perror("write");
	return put;
}

__attribute__((noinline)) static int
send_reply(uint64_t v)
{
	return write_reply(&v) == (ssize_t)sizeof(v) ? 0 : -1;
}

static void *
worker(void *arg)
{
	uint64_t n;

	(void)arg;
	if (read(req[0], &n, sizeof(n)) != (ssize_t)sizeof(n))
		return NULL;
	send_reply(in_kernel ? compute_in_kernel(1500) : compute_hard(n));
	return NULL;
}

/* not a tail call: the frame stays while read() runs */
__attribute__((noinline)) static ssize_t
read_reply(uint64_t *v)
{
	ssize_t got = read(rep[0], v, sizeof(*v));

	if (got < 0)
		perror("read");
	return got;
}

__attribute__((noinline)) static int
wait_for_reply(uint64_t *v)
{
	return read_reply(v) == (ssize_t)sizeof(*v) ? 0 : 1;
}

int
main(int argc, char **argv)
{
	pthread_t t;
	uint64_t n = ROUNDS, v = 0;

	in_kernel = argc > 1 && strcmp(argv[1], "kernel") == 0;
	if (pipe(req) != 0 || pipe(rep) != 0 ||
	    pthread_create(&t, NULL, worker, NULL) != 0)
		return 1;
	usleep(100000);		/* the worker blocks in its read first */
	if (write(req[1], &n, sizeof(n)) != (ssize_t)sizeof(n))
		return 1;
	int rc = wait_for_reply(&v);
	pthread_join(t, NULL);
	printf("%s %llx\n", rc == 0 ? "replied" : "no reply",
	    (unsigned long long)v);
	return rc;
}
