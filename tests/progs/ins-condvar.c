/*
 * ins-condvar.c: a condition-variable handoff. The main thread waits on
 * a condition; a worker sets the value and signals after 100 ms. Prints
 * "cond=ADDR mutex=ADDR worker=TID".
 */
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int ready;
static volatile long worker_tid;

static void *
worker(void *arg)
{
	(void)arg;
	worker_tid = syscall(SYS_gettid);
	usleep(100000);
	pthread_mutex_lock(&mu);
	ready = 1;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mu);
	return NULL;
}

int
main(void)
{
	pthread_t t;

	pthread_create(&t, NULL, worker, NULL);
	pthread_mutex_lock(&mu);
	while (!ready)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	pthread_join(t, NULL);
	printf("cond=%p mutex=%p worker=%ld\n", (void *)&cv, (void *)&mu,
	    worker_tid);
	return 0;
}
