/*
 * yieldflag.c: a main thread spinning on a flag with sched_yield.
 *
 * Threads:
 *   yieldflag  main thread: an event loop polling key presses from "input";
 *              for each key it clears the global flag yf_done, posts a job
 *              to yf-worker over a pipe, then runs
 *              `while (!yf_done) sched_yield();`.
 *   yf-worker  reads the job, arms a timerfd (5 ms normally, 2,500 ms from
 *              --hang-at on; by default the last key), waits for it and
 *              sets yf_done.
 *   input      types the keys, one after the other was handled.
 *
 * The flag is a global symbol so that `argus watch PID yf_done` can find
 * it; unless -q, the program prints its pid and the flag's address first.
 *
 * Expected diagnosis (yieldflag.expect): a yield-loop hang of yieldflag;
 * with a watchpoint on yf_done, the writer yf-worker, whose culprit is its
 * timer (armed by itself, 2,500 ms).
 */
#include "scn.h"

#include <sched.h>
#include <sys/timerfd.h>

#define KEY_GAP_MS 80
#define NORMAL_TIMER_MS 5
#define SLOW_TIMER_MS 2500

/* The flag (watched by name; keep it global and not static). */
volatile int yf_done;

struct fds {
	int key_r, key_w;	/* input -> yieldflag */
	int ack_r, ack_w;	/* yieldflag -> input */
	int job_r, job_w;	/* yieldflag -> yf-worker */
	int tfd;		/* yf-worker's timer */
};

static struct fds fd;

static void
wait_timer(int ms)
{
	struct itimerspec its = { .it_value = { ms / 1000,
						(ms % 1000) * 1000000L } };
	uint64_t n;

	if (timerfd_settime(fd.tfd, 0, &its, NULL) != 0)
		scn_die("timerfd_settime");
	if (!scn_read_full(fd.tfd, &n, sizeof(n)))
		scn_die("timerfd read");
}

static void *
worker_main(void *arg)
{
	int32_t seq;

	(void)arg;
	scn_name("yf-worker");
	while (scn_read_full(fd.job_r, &seq, sizeof(seq))) {
		wait_timer(scn_is_hung(seq) ? SLOW_TIMER_MS : NORMAL_TIMER_MS);
		__atomic_store_n(&yf_done, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void *
input_main(void *arg)
{
	char c;

	(void)arg;
	scn_name("input");
	for (int32_t i = 1; i <= scn.opt.iterations; i++) {
		scn_sleep_ms(KEY_GAP_MS);
		scn_write_all(fd.key_w, &i, sizeof(i));
		if (!scn_read_full(fd.ack_r, &c, 1))
			break;
	}
	scn_close(&fd.key_w);
	return NULL;
}

/* The yield loop: the worker's write of yf_done ends it. */
static void __attribute__((noinline))
wait_for_flag(int32_t seq)
{
	__atomic_store_n(&yf_done, 0, __ATOMIC_RELAXED);
	scn_write_all(fd.job_w, &seq, sizeof(seq));
	while (!__atomic_load_n(&yf_done, __ATOMIC_ACQUIRE))
		sched_yield();
}

static void
main_loop(void)
{
	scn_key_loop(fd.key_r, fd.ack_w, wait_for_flag);
}

int
main(int argc, char **argv)
{
	pthread_t wk, in;
	int s[2];

	scn_init(argc, argv, "yieldflag", 6);
	scn_pipe(s), fd.key_r = s[0], fd.key_w = s[1];
	scn_pipe(s), fd.ack_r = s[0], fd.ack_w = s[1];
	scn_pipe(s), fd.job_r = s[0], fd.job_w = s[1];
	fd.tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (fd.tfd < 0)
		scn_die("timerfd_create");
	if (!scn.opt.quiet)
		fprintf(stderr, "yieldflag: pid=%d flag=yf_done addr=%p\n",
			(int)getpid(), (void *)&yf_done);
	scn_thread(&wk, worker_main, NULL);
	if (scn.opt.delay_ms)
		scn_sleep_ms(scn.opt.delay_ms);
	scn_thread(&in, input_main, NULL);
	main_loop();
	scn_join(in);
	scn_close(&fd.job_w);
	scn_join(wk);
	scn_summary();
	return 0;
}
