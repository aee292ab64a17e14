/*
 * lockio.c: a lock holder doing slow I/O.
 *
 * Threads and processes:
 *   lockio     main thread: an event loop polling key presses from "input";
 *              each key needs the cache, guarded by a mutex.
 *   lk-worker  refreshes the cache: takes the mutex, then asks the helper
 *              process over a pipe and waits for the answer, mutex held.
 *   lk-helper  helper process answering over a pipe: 10 ms normally,
 *              2,500 ms from --hang-at on (by default the last key).
 *   input      types the keys; before each key it starts a refresh and
 *              waits until lk-worker holds the mutex, so the main thread
 *              always contends (briefly in the normal keys).
 *
 * Expected diagnosis (lockio.expect): lockio blocked on the mutex; culprit
 * lk-worker, waiting on its pipe read; its culprit lk-helper (asleep).
 */
#include "scn.h"

#define KEY_GAP_MS 80
#define NORMAL_IO_MS 10
#define SLOW_IO_MS 2500

struct fds {
	int key_r, key_w;	/* input -> lockio */
	int ack_r, ack_w;	/* lockio -> input */
	int job_r, job_w;	/* input -> lk-worker: refresh the cache */
	int held_r, held_w;	/* lk-worker -> input: mutex taken */
	int req_r, req_w;	/* lk-worker -> lk-helper */
	int rsp_r, rsp_w;	/* lk-helper -> lk-worker */
};

static struct fds fd;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static int32_t cache_value;

/* ---- lk-helper ---- */

static int
helper_main(void *arg)
{
	int32_t seq;

	(void)arg;
	scn_close(&fd.req_w), scn_close(&fd.rsp_r);
	scn_close(&fd.key_r), scn_close(&fd.key_w), scn_close(&fd.ack_r);
	scn_close(&fd.ack_w), scn_close(&fd.job_r), scn_close(&fd.job_w);
	scn_close(&fd.held_r), scn_close(&fd.held_w);
	while (scn_read_full(fd.req_r, &seq, sizeof(seq))) {
		scn_sleep_ms(scn_is_hung(seq) ? SLOW_IO_MS : NORMAL_IO_MS);
		seq *= 3;
		scn_write_all(fd.rsp_w, &seq, sizeof(seq));
	}
	return 0;
}

/* ---- lockio process ---- */

static void
refresh_cache(int32_t seq)
{
	char held = 'h';
	int32_t v;

	pthread_mutex_lock(&cache_lock);
	scn_write_all(fd.held_w, &held, 1);
	scn_write_all(fd.req_w, &seq, sizeof(seq));
	if (!scn_read_full(fd.rsp_r, &v, sizeof(v)))
		scn_fail("lk-helper went away");
	cache_value = v;
	pthread_mutex_unlock(&cache_lock);
}

static void *
worker_main(void *arg)
{
	int32_t seq;

	(void)arg;
	scn_name("lk-worker");
	while (scn_read_full(fd.job_r, &seq, sizeof(seq)))
		refresh_cache(seq);
	scn_close(&fd.req_w);
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
		scn_write_all(fd.job_w, &i, sizeof(i));
		if (!scn_read_full(fd.held_r, &c, 1))
			break;
		scn_write_all(fd.key_w, &i, sizeof(i));
		if (!scn_read_full(fd.ack_r, &c, 1))
			break;
	}
	scn_close(&fd.job_w);
	scn_close(&fd.key_w);
	return NULL;
}

static int32_t
read_cache(void)
{
	int32_t v;

	pthread_mutex_lock(&cache_lock);
	v = cache_value;
	pthread_mutex_unlock(&cache_lock);
	return v;
}

static void
handle_key(int32_t key)
{
	(void)key;
	if (read_cache() < 0)
		scn_fail("bad cache");
}

static void
main_loop(void)
{
	scn_key_loop(fd.key_r, fd.ack_w, handle_key);
}

static void
make_pipes(void)
{
	int s[2];

	scn_pipe(s), fd.key_r = s[0], fd.key_w = s[1];
	scn_pipe(s), fd.ack_r = s[0], fd.ack_w = s[1];
	scn_pipe(s), fd.job_r = s[0], fd.job_w = s[1];
	scn_pipe(s), fd.held_r = s[0], fd.held_w = s[1];
	scn_pipe(s), fd.req_r = s[0], fd.req_w = s[1];
	scn_pipe(s), fd.rsp_r = s[0], fd.rsp_w = s[1];
}

int
main(int argc, char **argv)
{
	pthread_t wk, in;
	pid_t helper;

	scn_init(argc, argv, "lockio", 6);
	make_pipes();
	helper = scn_fork("lk-helper", helper_main, NULL);
	scn_close(&fd.req_r), scn_close(&fd.rsp_w);
	scn_thread(&wk, worker_main, NULL);
	if (scn.opt.delay_ms)
		scn_sleep_ms(scn.opt.delay_ms);
	scn_thread(&in, input_main, NULL);
	main_loop();
	scn_join(in);
	scn_join(wk);
	scn_reap(helper, "lk-helper");
	scn_summary();
	return 0;
}
