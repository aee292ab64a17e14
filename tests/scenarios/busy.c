/*
 * busy.c: a main thread busy on the CPU after an input event.
 *
 * Threads:
 *   busy   main thread: an event loop polling input events from "input";
 *          each event carries an amount of text to lay out, and the main
 *          thread lays it out in layout_text(), on the CPU, without any
 *          system call: 5 ms normally, 2,500 ms for the event of
 *          --hang-at (by default the last one).
 *   input  sends the events over a pipe, one after the other was handled.
 *
 * Expected diagnosis (busy.expect): a busy hang of the main thread, traced
 * back to the input event read just before it (from the input thread).
 */
#include "scn.h"

#define KEY_GAP_MS 80
#define NORMAL_WORK_MS 5
#define LONG_WORK_MS 2500

struct event {
	int32_t seq;
	int32_t work_ms;	/* how much text, in milliseconds of layout */
};

struct fds {
	int ev_r, ev_w;		/* input -> busy */
	int ack_r, ack_w;	/* busy -> input */
};

static struct fds fd;

static void *
input_main(void *arg)
{
	char c;

	(void)arg;
	scn_name("input");
	for (int32_t i = 1; i <= scn.opt.iterations; i++) {
		struct event ev = { i, scn_is_hung(i) ? LONG_WORK_MS
						      : NORMAL_WORK_MS };

		scn_sleep_ms(KEY_GAP_MS);
		scn_write_all(fd.ev_w, &ev, sizeof(ev));
		if (!scn_read_full(fd.ack_r, &c, 1))
			break;
	}
	scn_close(&fd.ev_w);
	return NULL;
}

/* Break lines of a synthetic text; stops after work_ms of CPU time. The
 * clock is read through the vDSO, so this loop makes no system call. */
static uint32_t __attribute__((noinline))
layout_text(int work_ms)
{
	double end = scn_now_ms() + work_ms;
	uint32_t h = 2166136261u;

	do {
		for (int i = 0; i < 20000; i++)
			h = (h ^ (uint32_t)i) * 16777619u;
	} while (scn_now_ms() < end);
	return h;
}

static void
main_loop(void)
{
	struct event ev;
	char ack = 'k';
	double t0;
	uint32_t sink = 0;

	for (;;) {
		scn_poll_in(fd.ev_r);
		if (!scn_read_full(fd.ev_r, &ev, sizeof(ev)))
			break;
		t0 = scn_now_ms();
		sink ^= layout_text(ev.work_ms);
		scn_report(ev.seq, scn_now_ms() - t0);
		scn_write_all(fd.ack_w, &ack, 1);
	}
	if (sink == 1)
		fputc('\n', stderr);	/* keep the result alive */
}

int
main(int argc, char **argv)
{
	pthread_t in;
	int s[2];

	scn_init(argc, argv, "busy", 6);
	scn_pipe(s), fd.ev_r = s[0], fd.ev_w = s[1];
	scn_pipe(s), fd.ack_r = s[0], fd.ack_w = s[1];
	if (scn.opt.delay_ms)
		scn_sleep_ms(scn.opt.delay_ms);
	scn_thread(&in, input_main, NULL);
	main_loop();
	scn_join(in);
	scn_summary();
	return 0;
}
