/*
 * wait-storm.c: a storm of waits just over the recorder's default stack
 * threshold (tests/cli/stacks-budget.sh): NTHREADS threads each sleep
 * 15 ms at a time for about 1.5 s, so that every wait is long enough
 * for a stack and the recorder's budget of stacks (--stack-rate) must
 * hold them back. Exits 0.
 */
#include <pthread.h>
#include <time.h>

#define NTHREADS 32
#define ROUNDS 100

static void *
sleeper(void *arg)
{
	struct timespec ts = { 0, 15 * 1000 * 1000 };

	(void)arg;
	for (int i = 0; i < ROUNDS; i++)
		nanosleep(&ts, NULL);
	return NULL;
}

int
main(void)
{
	pthread_t t[NTHREADS];
	int n = 0;

	for (int i = 0; i < NTHREADS; i++)
		if (pthread_create(&t[i], NULL, sleeper, NULL) == 0)
			n++;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return n == NTHREADS ? 0 : 1;
}
