/*
 * chromium.c: the circular wait of the paper's Chromium spinning-cursor
 * case, turned into a livelock by a timeout.
 *
 * Processes and threads (names as set with prctl):
 *   browser    main thread of the browser process: an event loop polling
 *              the key presses (pipe from "input") and the renderer's help
 *              requests (a unix socket). On each key it asks the renderer
 *              for the text bounding box and waits on a condition variable
 *              with a 1,500 ms timeout.
 *   br-io      browser thread receiving the renderer's replies; it signals
 *              the condition variable.
 *   input      browser thread typing the keys (one at a time, each after the
 *              previous one was fully handled).
 *   renderer   main thread of the renderer process: asks "fontd" for glyph
 *              metrics, hands the box to "rd-worker", and runs a page script
 *              that needs the browser's help: a request to the browser main
 *              thread, the answer awaited on a process-shared semaphore.
 *   rd-worker  renderer thread sending the box back to the browser.
 *   fontd      font service process.
 *
 * Normal keys: the renderer answers first and runs the script afterwards,
 * when the browser main thread is back in its loop (all fast). From
 * --hang-at on (by default the last key) the script runs before the answer:
 * the renderer waits for the browser, the browser for the renderer, until
 * the browser's 1,500 ms timeout breaks the cycle.
 *
 * Expected diagnosis (chromium.expect): browser blocked on the condition
 * variable; culprit the renderer main thread waiting on its semaphore; its
 * culprit the browser main thread; a cycle broken by the 1,500 ms timeout.
 * Normal wake-up path: browser <- br-io <- rd-worker <- renderer <- fontd.
 */
#include "scn.h"

#include <semaphore.h>
#include <sys/mman.h>
#include <sys/socket.h>

#define CV_TIMEOUT_MS 1500
#define KEY_GAP_MS 80
#define SAFETY_MS 10000

enum { M_BBOX_REQ = 1, M_BBOX_REPLY, M_JS_REQ, M_FONT_REQ, M_FONT_REPLY,
       M_QUIT };

struct msg {
	int32_t type;
	int32_t seq;
	int32_t val;
};

/* Shared between browser and renderer (mapped before the fork). */
struct shared {
	sem_t js_done;
	int32_t js_result;
};

struct fds {
	int in_r, in_w;		/* input -> browser: key presses */
	int ack_r, ack_w;	/* browser -> input: key fully handled */
	int br_a, rd_a;		/* bbox requests and replies */
	int br_b, rd_b;		/* renderer -> browser help requests */
	int rd_f, fo_f;		/* renderer <-> fontd */
	int wk_r, wk_w;		/* renderer main -> rd-worker (renderer only) */
};

static struct fds fd;
static struct shared *shm;

/* Browser state shared by its main thread and br-io. */
static pthread_mutex_t reply_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t reply_cv;
static int32_t reply_seq;

static void
send_msg(int s, int32_t type, int32_t seq, int32_t val)
{
	struct msg m = { type, seq, val };

	scn_write_all(s, &m, sizeof(m));
}

static int
recv_msg(int s, struct msg *m)
{
	return scn_read_full(s, m, sizeof(*m));
}

static struct timespec
deadline_in(long ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

/* ---- fontd ---- */

static int32_t
glyph_metrics(int32_t seq)
{
	volatile uint32_t h = (uint32_t)seq;

	for (uint32_t i = 0; i < 20000; i++)
		h = h * 31 + i;
	return 12 + (int32_t)(h & 3);
}

static int
fontd_main(void *arg)
{
	struct msg m;

	(void)arg;
	while (recv_msg(fd.fo_f, &m) && m.type == M_FONT_REQ)
		send_msg(fd.fo_f, M_FONT_REPLY, m.seq, glyph_metrics(m.seq));
	return 0;
}

/* ---- renderer ---- */

static void *
rd_worker(void *arg)
{
	struct msg m;

	(void)arg;
	scn_name("rd-worker");
	while (recv_msg(fd.wk_r, &m))
		send_msg(fd.rd_a, M_BBOX_REPLY, m.seq, m.val);
	return NULL;
}

static int32_t
ask_fontd(int32_t seq)
{
	struct msg m;

	send_msg(fd.rd_f, M_FONT_REQ, seq, 0);
	if (!recv_msg(fd.rd_f, &m) || m.type != M_FONT_REPLY)
		scn_fail("fontd went away");
	return m.val;
}

/* The page script needs the browser main thread; wait for its answer. */
static void
run_script(int32_t seq)
{
	struct timespec dl = deadline_in(SAFETY_MS);

	send_msg(fd.rd_b, M_JS_REQ, seq, 0);
	while (sem_clockwait(&shm->js_done, CLOCK_MONOTONIC, &dl) != 0) {
		if (errno != EINTR)
			scn_die("semaphore wait for the browser's help");
	}
	if (shm->js_result != seq * 2)
		scn_fail("wrong script answer for key %d", seq);
}

static void
layout_box(int32_t seq)
{
	int32_t h = ask_fontd(seq);

	if (scn_is_hung(seq))
		run_script(seq);	/* the bug: script before the answer */
	send_msg(fd.wk_w, M_BBOX_REQ, seq, h * 8);
	if (!scn_is_hung(seq))
		run_script(seq);
}

static int
renderer_main(void *arg)
{
	pthread_t wk;
	struct msg m;

	(void)arg;
	scn_thread(&wk, rd_worker, NULL);
	for (;;) {
		scn_poll_in(fd.rd_a);
		if (!recv_msg(fd.rd_a, &m) || m.type == M_QUIT)
			break;
		if (m.type != M_BBOX_REQ)
			scn_fail("unexpected message %d", m.type);
		layout_box(m.seq);
	}
	scn_close(&fd.wk_w);
	scn_join(wk);
	scn_close(&fd.rd_f);
	return 0;
}

/* ---- browser ---- */

static void *
br_io(void *arg)
{
	struct msg m;

	(void)arg;
	scn_name("br-io");
	while (recv_msg(fd.br_a, &m)) {
		pthread_mutex_lock(&reply_lock);
		reply_seq = m.seq;	/* a late reply is ignored by seq */
		pthread_cond_signal(&reply_cv);
		pthread_mutex_unlock(&reply_lock);
	}
	return NULL;
}

static void *
input_main(void *arg)
{
	char ack;

	(void)arg;
	scn_name("input");
	for (int32_t i = 1; i <= scn.opt.iterations; i++) {
		scn_sleep_ms(KEY_GAP_MS);
		scn_write_all(fd.in_w, &i, sizeof(i));
		if (!scn_read_full(fd.ack_r, &ack, 1))
			break;
	}
	scn_close(&fd.in_w);
	return NULL;
}

/* Ask the renderer for the box; give up after CV_TIMEOUT_MS. */
static void
get_first_rect(int32_t seq)
{
	struct timespec dl = deadline_in(CV_TIMEOUT_MS);
	int rc = 0;

	send_msg(fd.br_a, M_BBOX_REQ, seq, 0);
	pthread_mutex_lock(&reply_lock);
	while (reply_seq != seq && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&reply_cv, &reply_lock, &dl);
	pthread_mutex_unlock(&reply_lock);
}

static void
serve_script(void)
{
	struct msg m;
	char ack = 'k';

	if (!recv_msg(fd.br_b, &m) || m.type != M_JS_REQ)
		scn_fail("renderer help channel closed");
	shm->js_result = m.seq * 2;
	if (sem_post(&shm->js_done) != 0)
		scn_die("sem_post");
	scn_write_all(fd.ack_w, &ack, 1);	/* the key is fully handled */
}

static int
handle_key(void)
{
	int32_t key;
	double t0;

	if (!scn_read_full(fd.in_r, &key, sizeof(key)))
		return 0;
	t0 = scn_now_ms();
	get_first_rect(key);
	scn_report(key, scn_now_ms() - t0);
	return 1;
}

static void
browser_loop(void)
{
	struct pollfd p[2] = { { .fd = fd.in_r, .events = POLLIN },
			       { .fd = fd.br_b, .events = POLLIN } };

	for (;;) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			scn_die("poll");
		}
		if (p[1].revents)
			serve_script();
		else if (p[0].revents && !handle_key())
			break;
	}
}

static void
make_channels(void)
{
	int s[2];

	scn_pipe(s), fd.in_r = s[0], fd.in_w = s[1];
	scn_pipe(s), fd.ack_r = s[0], fd.ack_w = s[1];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s) != 0)
		scn_die("socketpair");
	fd.br_a = s[0], fd.rd_a = s[1];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s) != 0)
		scn_die("socketpair");
	fd.br_b = s[0], fd.rd_b = s[1];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s) != 0)
		scn_die("socketpair");
	fd.rd_f = s[0], fd.fo_f = s[1];
	fd.wk_r = fd.wk_w = -1;
}

static void
init_shared(void)
{
	pthread_condattr_t ca;

	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shm == MAP_FAILED)
		scn_die("mmap");
	if (sem_init(&shm->js_done, 1, 0) != 0)
		scn_die("sem_init");
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&reply_cv, &ca);
	pthread_condattr_destroy(&ca);
}

/* Each process keeps only its own ends. */
static int
fontd_entry(void *arg)
{
	scn_close(&fd.in_r), scn_close(&fd.in_w), scn_close(&fd.ack_r);
	scn_close(&fd.ack_w), scn_close(&fd.br_a), scn_close(&fd.rd_a);
	scn_close(&fd.br_b), scn_close(&fd.rd_b), scn_close(&fd.rd_f);
	return fontd_main(arg);
}

static int
renderer_entry(void *arg)
{
	int s[2];

	scn_close(&fd.in_r), scn_close(&fd.in_w), scn_close(&fd.ack_r);
	scn_close(&fd.ack_w), scn_close(&fd.br_a), scn_close(&fd.br_b);
	scn_close(&fd.fo_f);
	scn_pipe(s), fd.wk_r = s[0], fd.wk_w = s[1];
	return renderer_main(arg);
}

int
main(int argc, char **argv)
{
	pthread_t io, in;
	pid_t font, rend;

	scn_init(argc, argv, "browser", 6);
	init_shared();
	make_channels();
	font = scn_fork("fontd", fontd_entry, NULL);
	rend = scn_fork("renderer", renderer_entry, NULL);
	scn_close(&fd.rd_a), scn_close(&fd.rd_b), scn_close(&fd.rd_f);
	scn_close(&fd.fo_f);
	scn_thread(&io, br_io, NULL);
	if (scn.opt.delay_ms)
		scn_sleep_ms(scn.opt.delay_ms);
	scn_thread(&in, input_main, NULL);
	browser_loop();
	scn_join(in);
	send_msg(fd.br_a, M_QUIT, 0, 0);
	scn_join(io);
	scn_reap(rend, "renderer");
	scn_reap(font, "fontd");
	scn_summary();
	return 0;
}
