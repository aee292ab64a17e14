/*
 * instrument-calls.c: cost of interposed calls. Run it plain, with
 * libargus preloaded and off, and preloaded and on (ARGUS_MARKER set);
 * tests/bench/instrument.sh does the three runs and compares.
 *
 * Prints "NAME ns_per_call" lines:
 *   mutex       pthread_mutex_lock + unlock, uncontended (per pair)
 *   cond_signal pthread_cond_signal without waiters
 *   mark        argus_mark() (when libargus is loaded), i.e. a record
 *   raw_write   the same record written with write() to $ARGUS_MARKER
 *               (the raw marker cost); mark and raw_write: best of 5
 *   contended   ms for 4 threads x 100000 lock/unlock of one mutex
 *               (best of 5)
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "trace/user-protocol.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static volatile long shared;

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void *
hammer(void *arg)
{
	(void)arg;
	for (int i = 0; i < 100000; i++) {
		pthread_mutex_lock(&mu);
		shared++;
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

int
main(void)
{
	const long N = 5000000, M = 200000;
	void (*mark)(const char *, uint64_t) =
	    (void (*)(const char *, uint64_t))dlsym(RTLD_DEFAULT, "argus_mark");
	const char *mk = getenv("ARGUS_MARKER");
	double t;

	for (int rep = 0; rep < 2; rep++) {	/* first round warms up */
		t = now();
		for (long i = 0; i < N; i++) {
			pthread_mutex_lock(&mu);
			pthread_mutex_unlock(&mu);
		}
		t = (now() - t) / N;
	}
	printf("mutex %.2f\n", t);
	t = now();
	for (long i = 0; i < N; i++)
		pthread_cond_signal(&cv);
	printf("cond_signal %.2f\n", (now() - t) / N);
	/* records against raw writes, alternating, best of 5 rounds each */
	int fd = mk && *mk ? open(mk, O_WRONLY | O_CLOEXEC) : -1;
	double best_mark = 1e300, best_raw = 1e300;
	for (int rep = 0; rep < 5; rep++) {
		if (mark) {
			t = now();
			for (long i = 0; i < M / 5; i++)
				mark("bench", (uint64_t)i);
			t = (now() - t) / (M / 5);
			if (t < best_mark)
				best_mark = t;
		}
		if (fd >= 0) {
			struct argus_marker_hdr h = { ARGUS_MARKER_ID, 1, 5, 0, 0, 0 };
			char rec[sizeof(h) + 5];

			memcpy(rec, &h, sizeof(h));
			memcpy(rec + sizeof(h), "bench", 5);
			t = now();
			for (long i = 0; i < M / 5; i++)
				if (write(fd, rec, sizeof(rec)) < 0)
					break;
			t = (now() - t) / (M / 5);
			if (t < best_raw)
				best_raw = t;
		}
	}
	if (mark)
		printf("mark %.1f\n", best_mark);
	if (fd >= 0) {
		printf("raw_write %.1f\n", best_raw);
		close(fd);
	}
	double best = 1e300;
	for (int rep = 0; rep < 5; rep++) {	/* best of 5: noisy */
		pthread_t th[4];

		t = now();
		for (int i = 0; i < 4; i++)
			pthread_create(&th[i], NULL, hammer, NULL);
		for (int i = 0; i < 4; i++)
			pthread_join(th[i], NULL);
		t = (now() - t) / 1e6;
		if (t < best)
			best = t;
	}
	printf("contended %.1f\n", best);
	return 0;
}
