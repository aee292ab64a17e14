/*
 * batchserver.c: a daemon serving two clients in one loop; one client's
 * slow request makes the other client hang.
 *
 * Processes and threads:
 *   cl-ui    main thread of the interactive client: an event loop polling
 *            key presses from "input"; each key sends a small request to
 *            batchd over a unix socket and waits for the reply (recv).
 *   input    thread of cl-ui; before each key it makes cl-bulk send its
 *            request and waits until it is sent, so batchd always has the
 *            bulk request first.
 *   cl-bulk  batch client process: one request per key, 5 ms of work
 *            normally, 2,500 ms from --hang-at on (by default the last key).
 *   batchd   the daemon: polls both client sockets and serves the pending
 *            requests in a fixed order (cl-bulk first), computing each
 *            request's work on the CPU in compress_batch().
 *
 * Expected diagnosis (batchserver.expect): cl-ui blocked in recv on its
 * socket; culprit batchd, busy with the slow request's work (from cl-bulk).
 * cl-bulk itself, also waiting for batchd and also a peer of batchd's loop,
 * must stay out of cl-ui's chain (the peer-set rule).
 */
#include "scn.h"

#include <sys/socket.h>

#define KEY_GAP_MS 80
#define UI_WORK_MS 1
#define BULK_WORK_MS 5
#define SLOW_WORK_MS 2500

struct req {
	int32_t seq;
	int32_t work_ms;
};

struct fds {
	int key_r, key_w;	/* input -> cl-ui */
	int ack_r, ack_w;	/* cl-ui -> input */
	int go_r, go_w;		/* input -> cl-bulk: send a request */
	int sent_r, sent_w;	/* cl-bulk -> input: request sent */
	int ui_c, ui_d;		/* cl-ui <-> batchd */
	int bulk_c, bulk_d;	/* cl-bulk <-> batchd */
};

static struct fds fd;

static void
make_pair(int *a, int *b)
{
	int s[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s) != 0)
		scn_die("socketpair");
	*a = s[0];
	*b = s[1];
}

/* ---- batchd ---- */

static uint32_t __attribute__((noinline))
compress_batch(int work_ms)
{
	double end = scn_now_ms() + work_ms;
	uint32_t h = 2166136261u;

	do {
		for (int i = 0; i < 20000; i++)
			h = (h ^ (uint32_t)i) * 16777619u;
	} while (scn_now_ms() < end);
	return h;
}

/* Serve one request on fd s; returns 0 when the client has gone. */
static int
serve(int s)
{
	struct req r;

	if (!scn_read_full(s, &r, sizeof(r)))
		return 0;
	r.work_ms = (int32_t)(compress_batch(r.work_ms) & 0xff);
	scn_write_all(s, &r, sizeof(r));
	return 1;
}

static int
batchd_main(void *arg)
{
	struct pollfd p[2] = { { .fd = fd.bulk_d, .events = POLLIN },
			       { .fd = fd.ui_d, .events = POLLIN } };
	int open = 2;

	(void)arg;
	while (open > 0) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			scn_die("poll");
		}
		for (int i = 0; i < 2; i++) {
			if (p[i].revents && !serve(p[i].fd)) {
				p[i].fd = -1;
				open--;
			}
		}
	}
	return 0;
}

static int
batchd_entry(void *arg)
{
	scn_close(&fd.key_r), scn_close(&fd.key_w), scn_close(&fd.ack_r);
	scn_close(&fd.ack_w), scn_close(&fd.go_r), scn_close(&fd.go_w);
	scn_close(&fd.sent_r), scn_close(&fd.sent_w), scn_close(&fd.ui_c);
	scn_close(&fd.bulk_c);
	return batchd_main(arg);
}

/* ---- cl-bulk ---- */

static int
bulk_main(void *arg)
{
	struct req r;
	char sent = 's';
	int32_t seq;

	(void)arg;
	while (scn_read_full(fd.go_r, &seq, sizeof(seq))) {
		r.seq = seq;
		r.work_ms = scn_is_hung(seq) ? SLOW_WORK_MS : BULK_WORK_MS;
		scn_write_all(fd.bulk_c, &r, sizeof(r));
		scn_write_all(fd.sent_w, &sent, 1);
		if (!scn_read_full(fd.bulk_c, &r, sizeof(r)))
			scn_fail("batchd went away");
	}
	return 0;
}

static int
bulk_entry(void *arg)
{
	scn_close(&fd.key_r), scn_close(&fd.key_w), scn_close(&fd.ack_r);
	scn_close(&fd.ack_w), scn_close(&fd.go_w), scn_close(&fd.sent_r);
	scn_close(&fd.ui_c), scn_close(&fd.ui_d), scn_close(&fd.bulk_d);
	return bulk_main(arg);
}

/* ---- cl-ui ---- */

static void *
input_main(void *arg)
{
	char c;

	(void)arg;
	scn_name("input");
	for (int32_t i = 1; i <= scn.opt.iterations; i++) {
		scn_sleep_ms(KEY_GAP_MS);
		scn_write_all(fd.go_w, &i, sizeof(i));
		if (!scn_read_full(fd.sent_r, &c, 1))
			scn_fail("cl-bulk went away");
		scn_write_all(fd.key_w, &i, sizeof(i));
		if (!scn_read_full(fd.ack_r, &c, 1))
			break;
	}
	scn_close(&fd.go_w);
	scn_close(&fd.key_w);
	return NULL;
}

static void
ask_batchd(int32_t seq)
{
	struct req r = { seq, UI_WORK_MS };

	scn_write_all(fd.ui_c, &r, sizeof(r));
	if (!scn_read_full(fd.ui_c, &r, sizeof(r)))
		scn_fail("batchd went away");
}

static void
ui_loop(void)
{
	int32_t key;
	char ack = 'k';
	double t0;

	for (;;) {
		scn_poll_in(fd.key_r);
		if (!scn_read_full(fd.key_r, &key, sizeof(key)))
			break;
		t0 = scn_now_ms();
		ask_batchd(key);
		scn_report(key, scn_now_ms() - t0);
		scn_write_all(fd.ack_w, &ack, 1);
	}
}

int
main(int argc, char **argv)
{
	pthread_t in;
	pid_t daemon, bulk;
	int s[2];

	scn_init(argc, argv, "cl-ui", 6);
	scn_pipe(s), fd.key_r = s[0], fd.key_w = s[1];
	scn_pipe(s), fd.ack_r = s[0], fd.ack_w = s[1];
	scn_pipe(s), fd.go_r = s[0], fd.go_w = s[1];
	scn_pipe(s), fd.sent_r = s[0], fd.sent_w = s[1];
	make_pair(&fd.ui_c, &fd.ui_d);
	make_pair(&fd.bulk_c, &fd.bulk_d);
	daemon = scn_fork("batchd", batchd_entry, NULL);
	bulk = scn_fork("cl-bulk", bulk_entry, NULL);
	scn_close(&fd.ui_d), scn_close(&fd.bulk_d), scn_close(&fd.bulk_c);
	scn_close(&fd.go_r), scn_close(&fd.sent_w);
	if (scn.opt.delay_ms)
		scn_sleep_ms(scn.opt.delay_ms);
	scn_thread(&in, input_main, NULL);
	ui_loop();
	scn_join(in);
	scn_close(&fd.ui_c);
	scn_reap(bulk, "cl-bulk");
	scn_reap(daemon, "batchd");
	scn_summary();
	return 0;
}
