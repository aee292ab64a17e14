/*
 * timerchain.c: a wait chain through a kernel work queue and a timer, both
 * of which wake threads from contexts that belong to neither thread.
 *
 * Processes and threads:
 *   tchain    main thread of a terminal-like program: an event loop polling
 *             key presses from "input"; each key is written as a command to
 *             the master side of a pseudo-terminal, and the main thread then
 *             reads the child's answer from the master (blocking read).
 *   input     thread of tchain typing the keys, one after the other was
 *             handled.
 *   tc-child  child process on the terminal's slave side: reads a command,
 *             arms a timerfd (10 ms normally, 2,500 ms from --hang-at on; by
 *             default the last key), waits for it, writes the answer.
 *   tc-noise  thread of tc-child pinned to the same CPU as tc-child: it
 *             spins on the CPU from 150 ms before each timer expiry to 30 ms
 *             after it, so the timer interrupt lands while tc-noise runs.
 *
 * Terminal data is not handed over by the writer: the kernel queues work
 * (flush_to_ldisc) that a kworker runs, and the kworker wakes the reader.
 * The timer expiry wakes tc-child from interrupt context, on top of
 * tc-noise. Both wake-ups must be attributed to their causes (the work
 * queued by tc-child's write; the timer armed by tc-child), never to the
 * kworker as a culprit nor to the interrupted tc-noise.
 *
 * Expected diagnosis (timerchain.expect): tchain blocked reading the
 * terminal; culprit tc-child, waiting on its 2,500 ms timer.
 */
#include "scn.h"

#include <sched.h>
#include <sys/timerfd.h>
#include <termios.h>

#define KEY_GAP_MS 80
#define NORMAL_TIMER_MS 10
#define SLOW_TIMER_MS 2500
#define NOISE_BEFORE_MS 150
#define NOISE_AFTER_MS 30

struct fds {
	int key_r, key_w;	/* input -> tchain */
	int ack_r, ack_w;	/* tchain -> input */
	int master, slave;	/* the pseudo-terminal */
	int nz_r, nz_w;		/* tc-child -> tc-noise: next expiry */
	int tfd;		/* tc-child's timer */
};

static struct fds fd;

/* ---- tc-child ---- */

static void
spin_until(double end)
{
	volatile uint32_t h = 1;

	while (scn_now_ms() < end)
		for (int i = 0; i < 5000; i++)
			h = h * 33 + (uint32_t)i;
}

static void *
noise_main(void *arg)
{
	double expiry;

	(void)arg;
	scn_name("tc-noise");
	while (scn_read_full(fd.nz_r, &expiry, sizeof(expiry))) {
		double start = expiry - NOISE_BEFORE_MS;
		double now = scn_now_ms();

		if (start > now)
			scn_sleep_ms((long)(start - now));
		spin_until(expiry + NOISE_AFTER_MS);
	}
	return NULL;
}

/* Run tc-child and its threads on one CPU (the first one allowed). */
static void
pin_to_one_cpu(void)
{
	cpu_set_t set, one;

	if (sched_getaffinity(0, sizeof(set), &set) != 0 || CPU_COUNT(&set) < 2)
		return;
	CPU_ZERO(&one);
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (CPU_ISSET(c, &set)) {
			CPU_SET(c, &one);
			break;
		}
	}
	if (sched_setaffinity(0, sizeof(one), &one) != 0)
		scn_die("sched_setaffinity");
}

static void
wait_timer(int ms)
{
	struct itimerspec its = { .it_value = { ms / 1000,
						(ms % 1000) * 1000000L } };
	double expiry = scn_now_ms() + ms;
	uint64_t n;

	scn_write_all(fd.nz_w, &expiry, sizeof(expiry));
	if (timerfd_settime(fd.tfd, 0, &its, NULL) != 0)
		scn_die("timerfd_settime");
	if (!scn_read_full(fd.tfd, &n, sizeof(n)))
		scn_die("timerfd read");
}

static int
child_main(void *arg)
{
	pthread_t nz;
	char cmd, answer = 'k';
	int s[2];

	(void)arg;
	scn_close(&fd.key_r), scn_close(&fd.key_w), scn_close(&fd.ack_r);
	scn_close(&fd.ack_w), scn_close(&fd.master);
	pin_to_one_cpu();
	scn_pipe(s), fd.nz_r = s[0], fd.nz_w = s[1];
	fd.tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (fd.tfd < 0)
		scn_die("timerfd_create");
	scn_thread(&nz, noise_main, NULL);
	for (;;) {
		scn_poll_in(fd.slave);
		if (!scn_read_full(fd.slave, &cmd, 1) || cmd == 'q')
			break;
		wait_timer(cmd == 'h' ? SLOW_TIMER_MS : NORMAL_TIMER_MS);
		scn_write_all(fd.slave, &answer, 1);
	}
	scn_close(&fd.nz_w);
	scn_join(nz);
	return 0;
}

/* ---- tchain ---- */

static void
open_pty(void)
{
	struct termios t;
	const char *name;

	fd.master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd.master < 0)
		scn_die("posix_openpt");
	if (grantpt(fd.master) != 0 || unlockpt(fd.master) != 0)
		scn_die("unlockpt");
	name = ptsname(fd.master);
	if (!name)
		scn_die("ptsname");
	fd.slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd.slave < 0)
		scn_die("open %s", name);
	if (tcgetattr(fd.slave, &t) != 0)
		scn_die("tcgetattr");
	cfmakeraw(&t);
	if (tcsetattr(fd.slave, TCSANOW, &t) != 0)
		scn_die("tcsetattr");
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

static void
run_command(int32_t seq)
{
	char cmd = scn_is_hung(seq) ? 'h' : 'n';
	char answer;

	scn_write_all(fd.master, &cmd, 1);
	if (!scn_read_full(fd.master, &answer, 1) || answer != 'k')
		scn_fail("tc-child went away");
}

static void
main_loop(void)
{
	scn_key_loop(fd.key_r, fd.ack_w, run_command);
}

int
main(int argc, char **argv)
{
	pthread_t in;
	pid_t child;
	char quit = 'q';
	int s[2];

	scn_init(argc, argv, "tchain", 6);
	scn_pipe(s), fd.key_r = s[0], fd.key_w = s[1];
	scn_pipe(s), fd.ack_r = s[0], fd.ack_w = s[1];
	open_pty();
	child = scn_fork("tc-child", child_main, NULL);
	scn_close(&fd.slave);
	if (scn.opt.delay_ms)
		scn_sleep_ms(scn.opt.delay_ms);
	scn_thread(&in, input_main, NULL);
	main_loop();
	scn_join(in);
	scn_write_all(fd.master, &quit, 1);
	scn_reap(child, "tc-child");
	scn_close(&fd.master);
	scn_summary();
	return 0;
}
