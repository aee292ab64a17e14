/*
 * stack-busy.c: a hang whose culprit computes, for the stacks of
 * tests/cli/stacks-busy.sh: the main thread sends a request down one
 * pipe to a worker and blocks in wait_for_reply() reading the reply from
 * another (through read_reply(), its own frame: the C library's read()
 * keeps none); the worker, woken by the request, computes for about
 * 1.5 s in compute_hard() without a system call, then writes the reply
 * in send_reply() (through write_reply()). Built with frame pointers; noinline keeps each frame.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

static int req[2], rep[2];

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
	send_reply(compute_hard(n));
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
main(void)
{
	pthread_t t;
	uint64_t n = ROUNDS, v = 0;

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
