/*
 * ins-flag.c: a shared flag. The main thread polls it with
 * `while (!flag) sched_yield();`; a setter thread sets it after argv[1]
 * milliseconds (default 1500). Prints "pid=PID flag=ADDR" first and
 * "setter=TID main=TID" at the end.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile int flag;
static volatile long setter_tid;

static void *
setter(void *arg)
{
	setter_tid = syscall(SYS_gettid);
	usleep((useconds_t)(long)arg * 1000);
	flag = 1;
	return NULL;
}

int
main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 1500;
	pthread_t t;

	printf("pid=%d flag=%p\n", (int)getpid(), (void *)&flag);
	fflush(stdout);
	pthread_create(&t, NULL, setter, (void *)ms);
	while (!flag)
		sched_yield();
	pthread_join(t, NULL);
	printf("setter=%ld main=%ld\n", setter_tid, (long)syscall(SYS_gettid));
	return 0;
}
