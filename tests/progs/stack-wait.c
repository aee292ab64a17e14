/*
 * stack-wait.c: a wait whose place in the code a kernel-only recording
 * must name (tests/cli/stacks.sh): the main thread blocks in
 * wait_for_reply(), reading a pipe (through get_bytes(): the C library's
 * read() keeps no frame pointer, so the unwinder skips the function that
 * called it and shows that function's caller), while a second thread
 * computes in compute_reply() for 1.5 s before it writes. Built with
 * frame pointers; noinline so that each function keeps its frame.
 * "stack-wait fork": a process forked without exec does it, renamed
 * stack-child, after its parent waited 50 ms (its own stack first); it
 * prints "child PID".
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int fds[2];

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static unsigned long
compute_reply(double secs)
{
	volatile unsigned long x = 0;
	double end = now() + secs;

	while (now() < end)
		for (int i = 0; i < 100000; i++)
			x += (unsigned long)i * 2654435761u;
	return x;
}

static void *
replier(void *arg)
{
	unsigned long x;

	(void)arg;
	usleep(200000);
	x = compute_reply(1.5);
	if (write(fds[1], &x, sizeof(x)) != (ssize_t)sizeof(x))
		return NULL;
	return NULL;
}

/* not a tail call: the frame stays while read() runs */
__attribute__((noinline)) static ssize_t
get_bytes(void *p, size_t n)
{
	ssize_t got = read(fds[0], p, n);

	if (got < 0)
		perror("read");
	return got;
}

__attribute__((noinline)) static int
wait_for_reply(void)
{
	unsigned long x;

	return get_bytes(&x, sizeof(x)) == (ssize_t)sizeof(x) ? 0 : 1;
}

int
main(int argc, char **argv)
{
	pthread_t t;

	if (argc > 1 && strcmp(argv[1], "fork") == 0) {
		int st;
		pid_t pid;

		usleep(50000);
		fflush(stdout);
		if ((pid = fork()) < 0)
			return 1;
		if (pid > 0) {
			printf("child %d\n", (int)pid);
			fflush(stdout);
			if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
				return 1;
			return WEXITSTATUS(st);
		}
		prctl(PR_SET_NAME, "stack-child");
	}
	if (pipe(fds) != 0 || pthread_create(&t, NULL, replier, NULL) != 0)
		return 1;
	int rc = wait_for_reply();
	pthread_join(t, NULL);
	printf("%s\n", rc == 0 ? "replied" : "no reply");
	return rc;
}
