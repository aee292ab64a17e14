/*
 * ins-api-workq.c: a work queue served by a pool of four threads, with
 * argus.h tracing points: the main thread submits 40 tasks (task ids
 * 1000..1039 on queue 7) and the workers mark each task's begin and end.
 * The queue lock is contended on purpose. Also writes a named mark, an
 * input event, a flag write and read, and a run-loop callout. Prints
 * "done N".
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "instrument/argus.h"

#define NTASK 40
#define NWORK 4

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static unsigned long queue[NTASK];
static int head, tail, quit, done;
static volatile int flag;

static void *
worker(void *arg)
{
	(void)arg;
	for (;;) {
		unsigned long t;

		pthread_mutex_lock(&mu);
		while (head == tail && !quit)
			pthread_cond_wait(&cv, &mu);
		if (head == tail && quit) {
			pthread_mutex_unlock(&mu);
			return NULL;
		}
		t = queue[head++ % NTASK];
		pthread_mutex_unlock(&mu);
		argus_task_begin(t, 7);
		usleep(2000);
		pthread_mutex_lock(&mu);
		done++;
		usleep(200);	/* hold the lock: others contend */
		pthread_mutex_unlock(&mu);
		argus_task_end(t, 7);
	}
}

int
main(void)
{
	pthread_t th[NWORK];

	for (int i = 0; i < NWORK; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	argus_mark("start", 42);
	argus_input(1, "key");
	for (unsigned long i = 0; i < NTASK; i++) {
		pthread_mutex_lock(&mu);
		queue[tail++ % NTASK] = 1000 + i;
		argus_task_submit(1000 + i, 7);
		pthread_cond_signal(&cv);
		pthread_mutex_unlock(&mu);
		usleep(500);
	}
	pthread_mutex_lock(&mu);
	quit = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < NWORK; i++)
		pthread_join(th[i], NULL);
	flag = 1;
	argus_flag_write(&flag, 1);
	argus_flag_read(&flag, flag);
	argus_runloop_submit(5);
	argus_callout_begin(5);
	argus_callout_end(5);
	printf("done %d\n", done);
	return 0;
}
