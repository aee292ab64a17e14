/*
 * test-diag-path.c: criterion tests, on traces built in code, of the
 * diagnosis backbone (issue 29): semantic waits (a wait cut into timed
 * slices of poll or epoll is one wait, whole, timed out only when its
 * last slice was; a slice another thread ended by a signal ends it), the
 * critical path (wake-ups walked back from the end of a hang, through a
 * thread idle since before it and past a thread's own short I/O, to a
 * thread's own timer or its run, or to the one thread on a CPU when a
 * futex wait its timer woke returned 0) and
 * the culprits the path names that the diff did not.
 *
 * Threads: M the client that hangs; S a server thread of another
 * process; R a relay of S's process, idle in its event loop; X another
 * thread of S's process; W and W2 threads of M's process.
 */
#include <errno.h>
#include <signal.h>

#include <criterion/criterion.h>

#include "graph-fixture.h"

#define MS 1000000ULL

static struct fx F;

enum { M = 100, S = 200, R = 201, X = 202 };
#define POLLA 0x4000	/* M's poll set */
#define EPA 0x4100	/* M's epoll descriptor */
#define LOOP 0x4200	/* R's event loop */
#define SK 0x8001	/* the reply's socket */
#define TIMER 0x9000

static struct diag_opts
opts(void)
{
	struct diag_opts o = { .threshold_ns = 100 * MS, .tid = M };
	return o;
}

/* M blocks in nr on res for ms, then the slice returns ret. */
static void
slice(unsigned nr, uint64_t res, uint64_t ms, int64_t ret)
{
	fx_slice(&F, M, nr, res, ms, ret);
}

/* M's request to S, answered after 3 slices of poll and 30 ms more. */
static void
sliced_request(unsigned n)
{
	fx_init(&F);
	fx_thread(&F, M, M, "client");
	fx_thread(&F, S, S, "server");
	fx_poll_slices(&F, M, S, n);
}

static struct diag *
diagnose(struct graph **g)
{
	struct diag_opts o = opts();
	struct diag *d = NULL;

	*g = fx_build(&F, NULL);
	cr_assert_not_null(*g);
	cr_assert_eq(diag_new(*g, &o, &d, NULL), 0);
	return d;
}

Test(diag_path, poll_slices_are_one_wait)
{
	struct graph *g;

	sliced_request(3);
	struct diag *d = diagnose(&g);
	cr_assert_eq(diag_nhangs(d), 1, "one hang, of the whole wait");
	const struct diag_hang *h = diag_hang(d, 0);
	cr_expect_eq(h->kind, DIAG_BLOCKED);
	cr_expect_geq(h->end_ns - h->start_ns, 260 * MS);
	cr_expect_eq(h->wait.slices, 4);
	cr_expect(!h->wait.timed_out, "the last slice did not time out");
	int server = 0;
	for (size_t i = 0; i < diag_nculprits(d, 0); i++)
		server |= diag_culprit(d, 0, i)->th.tid == S;
	cr_expect(server, "the server is the culprit");
	/* its critical path: the client, then the server, running */
	cr_assert_geq(diag_ncpath(d, 0), 2);
	const struct diag_cstep *s0 = diag_cpath(d, 0, 0);
	const struct diag_cstep *s1 = diag_cpath(d, 0, 1);
	cr_expect_eq(s0->th.tid, M);
	cr_expect_eq(s0->waker.tid, S);
	cr_expect_eq(s0->wait.slices, 4);
	cr_expect_eq(s1->th.tid, S);
	cr_expect_eq(s1->culprit, DCW_BUSY);
	cr_expect_geq(s1->running_ns, 250 * MS);
	diag_free(d);
	graph_free(g);
}

/* A slice that another thread's signal interrupted (EINTR) ended the
   wait: the next poll is another wait. */
Test(diag_path, slice_ended_by_another_threads_signal_ends_the_wait)
{
	struct graph *g;

	fx_init(&F);
	fx_thread(&F, M, M, "client");
	fx_thread(&F, S, S, "server");
	fx_run(&F, 0, M);
	slice(SYS_epoll_wait, EPA, 150, 0);
	fx_block(&F, M, 0, SYS_epoll_wait, EPA);
	F.ts += 150 * MS;
	F.cpu = 1;
	fx_run(&F, 0, S);
	fx_ev(&F, S, TT_SIGNAL_GEN, M, SIGURG, 0, 0);
	fx_ev(&F, S, TT_WAKING, M, 0, 120, 0);
	fx_block(&F, S, 0, SYS_read, 9);
	F.cpu = 0;
	fx_run(&F, 0, M);
	fx_ev(&F, M, TT_SIGNAL_DELIVER, SIGURG, 0, 0, 0);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_epoll_wait, (uint64_t)-EINTR, 0, 0);
	fx_block(&F, M, 0, SYS_epoll_wait, EPA);
	F.ts += 150 * MS;
	fx_timer_wake(&F, TIMER, M);
	fx_run(&F, 0, M);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_epoll_wait, 0, 0, 0);
	fx_block(&F, M, 0, SYS_nanosleep, 0);
	F.ts += 5 * MS;
	struct diag *d = diagnose(&g);
	cr_assert_geq(diag_nhangs(d), 1);
	const struct diag_hang *h = diag_hang(d, 0);
	cr_expect_eq(h->wait.slices, 2, "the timed-out slice and the one the "
	    "signal ended: %u", h->wait.slices);
	cr_expect_leq(h->end_ns - h->start_ns, 320 * MS);
	cr_expect_eq(diag_ncpath(d, 0) > 0 ?
	    diag_cpath(d, 0, 0)->waker.tid : 0, S, "the signal's sender "
	    "ended it");
	diag_free(d);
	graph_free(g);
}

/* M hands a request to X (idle in a read), then waits on a futex; X
   sleeps 300 ms on its own timer and runs again. */
static void
request_to_a_sleeper(void)
{
	fx_ev(&F, X, TT_SYS_ENTER, SYS_read, 9, 0, 0);
	fx_ev(&F, X, TT_SWITCH, 1, 0, 120, 0);
	fx_run(&F, 0, M);
	fx_ev(&F, M, TT_WAKING, X, 0, 120, 0);
	fx_block(&F, M, X, SYS_futex, 0x7100);
	fx_ev(&F, X, TT_SYS_EXIT, SYS_read, 8, 0, 0);
	fx_block(&F, X, 0, SYS_nanosleep, 0);
	F.ts += 300 * MS;
	fx_timer_wake(&F, TIMER, X);
	fx_run(&F, 0, X);
	fx_ev(&F, X, TT_SYS_EXIT, SYS_nanosleep, 0, 0, 0);
}

/* M the client, R (named r) of S's process idle in its event loop after
   a few turns, X a worker of it. */
static void
service_fixture(const char *r)
{
	fx_init(&F);
	fx_thread(&F, M, M, "client");
	fx_thread(&F, R, S, r);
	fx_thread(&F, X, S, "worker");
	for (int k = 0; k < 4; k++) {	/* R's loop: its idle wait */
		fx_block(&F, R, 0, SYS_epoll_wait, LOOP);
		F.ts += 2 * MS;
		fx_run(&F, 0, R);
		fx_ev(&F, R, TT_SYS_EXIT, SYS_epoll_wait, 1, 0, 0);
	}
}

/* R answers M and goes back to its loop; the diagnosis, whose first
   hang's critical path is M, R, X. */
static struct diag *
answered_by_r(struct graph **g)
{
	fx_ev(&F, R, TT_WAKING, M, 0, 120, 0);
	fx_block(&F, R, M, SYS_epoll_wait, LOOP);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	fx_block(&F, M, 0, SYS_nanosleep, 0);
	F.ts += 5 * MS;
	struct diag *d = diagnose(g);
	cr_assert_geq(diag_nhangs(d), 1);
	cr_assert_eq(diag_ncpath(d, 0), 3, "client, R, worker: %zu",
	    diag_ncpath(d, 0));
	cr_expect_eq(diag_cpath(d, 0, 1)->th.tid, R);
	cr_expect_eq(diag_cpath(d, 0, 2)->th.tid, X);
	return d;
}

/* Whether thread tid is among the first hang's culprits. */
static int
culprit_named(const struct diag *d, uint32_t tid)
{
	return fx_culprit(d, 0, tid, -1);
}

/*
 * M waits for a reply (futex, the reply handed by R); R, idle in its
 * event loop since before the hang, is woken by a plain wake-up from X,
 * which slept 300 ms on its own timer after taking M's request. The
 * path goes through the relay R to X, named where the path ends; R, in
 * its idle wait, is not a culprit.
 */
Test(diag_path, path_goes_through_an_idle_relay_to_its_root)
{
	struct graph *g;

	service_fixture("relay");
	fx_block(&F, R, 0, SYS_epoll_wait, LOOP);
	request_to_a_sleeper();
	fx_ev(&F, X, TT_WAKING, R, 0, 120, 0);
	fx_block(&F, X, R, SYS_read, 9);
	fx_ev(&F, R, TT_SYS_EXIT, SYS_epoll_wait, 1, 0, 0);
	struct diag *d = answered_by_r(&g);
	const struct diag_cstep *r = diag_cpath(d, 0, 1);
	const struct diag_cstep *x = diag_cpath(d, 0, 2);
	cr_expect_eq(r->culprit, DCW_NONE, "the relay idles in its loop");
	cr_expect_eq(x->culprit, DCW_ROOT);
	cr_expect_eq(diag_cpath_stop(d, 0), DCS_TIMER);
	cr_expect(culprit_named(d, X), "the worker that slept is a culprit");
	cr_expect(!culprit_named(d, R), "the relay is not");
	diag_free(d);
	graph_free(g);
}

/*
 * M waits on a futex until X wakes it. X had slept 300 ms on its own
 * timer, then flushed a file (fdatasync, 1 ms, ended by a disk's
 * interrupt) before it woke M: the flush is X's own work, so the path
 * ends at X's sleep (its own timer), not at the disk.
 */
Test(diag_path, own_io_wait_is_part_of_the_work)
{
	struct graph *g;

	fx_init(&F);
	fx_thread(&F, M, M, "client");
	fx_thread(&F, X, S, "worker");
	request_to_a_sleeper();
	fx_ev(&F, X, TT_SYS_ENTER, SYS_fdatasync, 5, 0, 0);
	fx_ev(&F, X, TT_SWITCH, 2, 0, 120, 0);	/* D: uninterruptible */
	F.ts += 1 * MS;
	F.ctx = TRACE_CTX_HARDIRQ;
	fx_ev(&F, 0, TT_IRQ_ENTRY, 30, 0, 0, 0);
	fx_blob(&F, "nvme0q1");
	fx_ev(&F, 0, TT_WAKING, X, 0, 120, 0);
	fx_ev(&F, 0, TT_IRQ_EXIT, 30, 1, 0, 0);
	F.ctx = TRACE_CTX_TASK;
	fx_run(&F, 0, X);
	fx_ev(&F, X, TT_SYS_EXIT, SYS_fdatasync, 0, 0, 0);
	fx_ev(&F, X, TT_WAKING, M, 0, 120, 0);
	fx_block(&F, X, M, SYS_read, 9);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	fx_block(&F, M, 0, SYS_nanosleep, 0);
	F.ts += 5 * MS;
	struct diag *d = diagnose(&g);
	cr_assert_geq(diag_nhangs(d), 1);
	cr_assert_eq(diag_ncpath(d, 0), 2, "%zu steps", diag_ncpath(d, 0));
	const struct diag_cstep *x = diag_cpath(d, 0, 1);
	cr_expect_eq(x->th.tid, X);
	cr_expect_str_eq(x->wait.type, "sleep");
	cr_expect_geq(x->io_ns, 900000);
	cr_expect_eq(x->culprit, DCW_ROOT);
	cr_expect_eq(diag_cpath_stop(d, 0), DCS_TIMER, "ends at %s",
	    diag_cstop_name(diag_cpath_stop(d, 0)));
	diag_free(d);
	graph_free(g);
}

/*
 * M asks R, the main thread of S's process, which starts X and joins
 * it: R waits 300 ms on the join, which X ends when its sleep is over,
 * runs 20 us, and waits again, briefly, for a lock X hands back (a
 * runtime's lock); then it answers M. The two waits, both ended by X
 * with little run between, are one wait on X: R is a culprit, blocked
 * far longer than a quarter of the hang outside its idle loop, and X is
 * where the path ends.
 */
Test(diag_path, wait_split_by_a_lock_of_its_waker_is_one_wait)
{
	struct graph *g;

	service_fixture("service");
	fx_block(&F, X, 0, SYS_read, 9);
	fx_block(&F, R, 0, SYS_epoll_wait, LOOP);
	fx_run(&F, 0, M);
	fx_ev(&F, M, TT_WAKING, R, 0, 120, 0);
	fx_block(&F, M, R, SYS_futex, 0x7100);
	fx_ev(&F, R, TT_SYS_EXIT, SYS_epoll_wait, 1, 0, 0);
	fx_ev(&F, R, TT_WAKING, X, 0, 120, 0);
	fx_block(&F, R, X, SYS_futex, 0x7200);		/* the join */
	fx_ev(&F, X, TT_SYS_EXIT, SYS_read, 8, 0, 0);
	fx_block(&F, X, 0, SYS_nanosleep, 0);
	F.ts += 300 * MS;
	fx_timer_wake(&F, TIMER, X);
	fx_run(&F, 0, X);
	fx_ev(&F, X, TT_SYS_EXIT, SYS_nanosleep, 0, 0, 0);
	fx_ev(&F, X, TT_WAKING, R, 0, 120, 0);
	fx_ev(&F, X, TT_SWITCH, 0, R, 120, 0);		/* preempted */
	fx_ev(&F, R, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	F.ts += 20000;
	fx_block(&F, R, X, SYS_futex, 0x7300);		/* the lock */
	F.ts += 100000;
	fx_ev(&F, X, TT_WAKING, R, 0, 120, 0);
	fx_block(&F, X, R, SYS_futex, 0x7400);
	fx_ev(&F, R, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	F.ts += 5 * MS;
	struct diag *d = answered_by_r(&g);
	const struct diag_cstep *r = diag_cpath(d, 0, 1);
	const struct diag_cstep *x = diag_cpath(d, 0, 2);
	cr_expect_geq(r->blocked_ns, 300 * MS, "%llu ns",
	    (unsigned long long)r->blocked_ns);
	cr_expect_eq(r->culprit, DCW_BLOCKED, "%s",
	    diag_cwhy_name(r->culprit));
	cr_expect_eq(x->culprit, DCW_ROOT);
	cr_expect(culprit_named(d, X) && culprit_named(d, R), "both the "
	    "joining service and the worker are culprits");
	diag_free(d);
	graph_free(g);
}

/* --critical-path: the report holds the path and nothing of the diff. */
Test(diag_path, report_of_the_path_alone)
{
	struct graph *g;

	sliced_request(3);
	g = fx_build(&F, NULL);
	cr_assert_not_null(g);
	struct diag_opts o = opts();
	o.cpath_only = 1;
	struct diag *d = NULL;
	cr_assert_eq(diag_new(g, &o, &d, NULL), 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	diag_write_text(d, f, 0);
	fclose(f);
	cr_expect_not_null(strstr(buf, "critical path"));
	cr_expect_not_null(strstr(buf, "in 4 timed slices"));
	cr_expect_not_null(strstr(buf, "server (200)"));
	cr_expect_null(strstr(buf, "culprits:"));
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	diag_write_json(d, f);
	fclose(f);
	cr_expect_not_null(strstr(buf, "\"critical_path_steps\":[{"));
	cr_expect_not_null(strstr(buf, "\"culprit\":\"running"));
	free(buf);
	diag_free(d);
	graph_free(g);
}

/* The recorder's loss of n events stamped just after event i (a TT_LOST
   record, as the recorder writes one when its buffer overflowed). */
static void
lose_after(size_t i, uint64_t n)
{
	cr_assert_lt(F.n, FX_MAX);
	memmove(&F.ev[i + 2], &F.ev[i + 1], (F.n - i - 1) * sizeof(F.ev[0]));
	F.n++;
	memset(&F.ev[i + 1], 0, sizeof(F.ev[0]));
	F.ev[i + 1].ts = F.ev[i].ts;
	F.ev[i + 1].type = TT_LOST;
	F.ev[i + 1].arg[0] = n;
}

/* Events lost during a hang are counted in it and reported (the chain
   may stop short there); a loss before it is not. */
Test(diag_path, events_lost_during_the_hang_are_reported)
{
	struct graph *g;

	sliced_request(3);
	lose_after(F.n / 2, 7);
	lose_after(0, 1000);
	struct diag *d = diagnose(&g);
	cr_assert_eq(diag_nhangs(d), 1);
	cr_expect_eq(diag_hang(d, 0)->lost, 7);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	diag_write_text(d, f, 0);
	fclose(f);
	cr_expect_not_null(strstr(buf, "the recorder lost 7 events during "
	    "this hang"), "%s", buf);
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	diag_write_json(d, f);
	fclose(f);
	cr_expect_not_null(strstr(buf, "\"lost_events\":7,"), "%s", buf);
	free(buf);
	diag_free(d);
	graph_free(g);
}

/*
 * M waits on futex word 0x7100 in 40 slices of 5 ms, each ended by its
 * timeout; its last slice, on a timer of its own, is woken by that timer
 * and returns 0: a FUTEX_WAKE took it off the queue in the meantime, and
 * that wake made no wake-up event (M was runnable already). W, a thread
 * of M's process, runs on CPU 1 the whole time, then sleeps; W2, of M's
 * process too, with other 1 does the same on CPU 2, with other 2 makes a
 * call at the start, never seen to switch (running since before the
 * trace, or in a call: not known). Q, of another process, runs on CPU 3:
 * it may have made that wake only when the futex is not private.
 */
enum { W = 101, W2 = 102, Q = 300 };

static void
lost_wake_fixture(int other, int private)
{
	int two = other == 1;

	fx_init(&F);
	fx_thread(&F, M, M, "main");
	fx_thread(&F, W, M, "worker");
	fx_thread(&F, W2, M, "other");
	fx_thread(&F, Q, Q, "elsewhere");
	F.cpu = 3;
	fx_run(&F, 0, Q);
	F.cpu = 1;
	fx_run(&F, 0, W);
	F.cpu = 2;
	if (two)
		fx_run(&F, 0, W2);
	if (other == 2)
		fx_ev(&F, W2, TT_SYS_ENTER, SYS_getpid, 0, 0, 0);
	F.cpu = 0;
	for (int k = 0; k < 40; k++)
		fx_timed_slice(&F, M, 0x7100);
	fx_run(&F, 0, M);
	fx_ev(&F, M, TT_TIMER_START, TIMER, 0xfff, 5, 1);
	/* FUTEX_WAIT_BITSET, private or not */
	fx_ev(&F, M, TT_SYS_ENTER, SYS_futex, 0x7100,
	    private ? 0x89 : 0x9, 0);
	fx_ev(&F, M, TT_SWITCH, 1, 0, 120, 0);
	F.ts += 3 * MS;
	fx_timer_wake(&F, TIMER, M);
	fx_run(&F, 0, M);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	fx_block(&F, M, 0, SYS_read, 5);
	F.ts += 5 * MS;
	for (int k = 1; k <= 3; k++) {
		F.cpu = k;
		if (k != 2 || two)
			fx_block(&F, k == 1 ? W : k == 2 ? W2 : Q, 0,
			    SYS_nanosleep, 0);
	}
	F.cpu = 0;
}

/* The one thread of M's process on a CPU then made that wake (the futex
   is private): it ended the wait, and is the culprit. */
Test(diag_path, a_wake_lost_to_the_timer_came_from_the_thread_running)
{
	struct graph *g;

	lost_wake_fixture(0, 1);
	struct diag *d = diagnose(&g);
	cr_assert_eq(diag_nhangs(d), 1);
	cr_expect_eq(diag_hang(d, 0)->kind, DIAG_YIELD);
	cr_assert_geq(diag_ncpath(d, 0), 2);
	cr_expect_eq(diag_cpath(d, 0, 0)->waker.tid, W,
	    "the worker ended it, not %u", diag_cpath(d, 0, 0)->waker.tid);
	cr_expect(fx_culprit(d, 0, W, DIAG_BUSY),
	    "the worker, running, is the culprit");
	diag_free(d);
	graph_free(g);
}

/* Two threads of M's process on a CPU, or one and another whose state
   is not known, or, the futex not private, W and Q: which one woke it is
   not known, and the path ends at M's own timer. */
Test(diag_path, a_wake_lost_to_the_timer_names_none_when_unsure)
{
	for (int other = 0; other <= 2; other++) {
		struct graph *g;
		lost_wake_fixture(other, other != 0);
		struct diag *d = diagnose(&g);
		cr_assert_eq(diag_nhangs(d), 1);
		cr_assert_geq(diag_ncpath(d, 0), 1);
		cr_expect_eq(diag_cpath(d, 0, 0)->waker.tid, 0,
		    "other %d: ended by %u", other,
		    diag_cpath(d, 0, 0)->waker.tid);
		diag_free(d);
		graph_free(g);
	}
}
