/*
 * test-diag-real.c: criterion tests, on traces built in code, of the
 * heuristics added for unmodified programs (issue 12): a wait for an
 * answer after handing work to another thread is a hang even when it is
 * the thread's only wait; a plain idle wait is not, and the report says
 * why; a thread the user names gets its longest wait; a polling loop of
 * refused non-blocking lock attempts between sleeps is a yield hang
 * whose culprit is the lock's holder (from the file lock events); a
 * reply sent after another thread of the process woke the sender is not
 * tied to the request it answers; a wait after a call returned is in no
 * call (a thread blocked on its way out); a thread that did its part in
 * the wake-up chain and only then waited for the hung one is no culprit;
 * a futex waited on in timed slices until another thread lets go is a
 * yield hang of the thread named whose culprit is that thread, while
 * slices that are never woken (a timer's tick), that other calls
 * separate, or of a thread not named are none; a lock holder stopped by
 * a signal is a culprit, described as stopped, and so is what continued
 * it; an open that blocks (a FIFO's) is a wait of type open, a
 * sigsuspend one of type signal; a culprit waiting for a child is
 * explained by that child, not by an earlier wait for another.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>

#include <criterion/criterion.h>

#include "graph-fixture.h"

#define MS 1000000ULL

static struct fx F;

enum { M = 100, W = 101, H = 200, P = 300, C = 400 };
#define POLLA 0x4000
#define INO 77

static struct diag_opts
opts(void)
{
	struct diag_opts o = { .threshold_ns = 100 * MS };
	return o;
}

/* M waits in poll for 500 ms; with handoff, it woke W just before. */
static void
one_long_poll(int handoff)
{
	fx_init(&F);
	fx_thread(&F, M, M, "main");
	fx_thread(&F, W, W, "worker");
	fx_ev(&F, W, TT_SYS_ENTER, SYS_read, 9, 0, 0);
	fx_ev(&F, W, TT_SWITCH, 1, 0, 120, 0);
	fx_run(&F, 0, M);
	fx_ev(&F, M, TT_SYS_ENTER, SYS_write, 3, 0, 0);
	if (handoff)
		fx_ev(&F, M, TT_WAKING, W, 0, 120, 0);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_write, 8, 0, 0);
	fx_block(&F, M, 0, SYS_poll, POLLA);
	F.ts += 500 * MS;
	fx_run(&F, 0, W);
	fx_ev(&F, W, TT_SYS_EXIT, SYS_read, 8, 0, 0);
	fx_ev(&F, W, TT_WAKING, M, 0, 120, 0);
	fx_block(&F, W, M, SYS_read, 9);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_poll, 1, 0, 0);
	fx_ev(&F, M, TT_SYS_ENTER, SYS_write, 1, 0, 0);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_write, 1, 0, 0);
}

Test(diag_real, request_reply_wait_is_a_hang)
{
	one_long_poll(1);
	struct graph *g = fx_build(&F, NULL);
	struct diag_opts o = opts();
	struct diag *d = NULL;
	cr_assert_not_null(g);
	cr_assert_eq(diag_new(g, &o, &d, NULL), 0);
	cr_assert_eq(diag_nhangs(d), 1, "the wait for the worker's answer "
	    "is a hang (got %zu)", diag_nhangs(d));
	cr_assert_eq(diag_hang(d, 0)->th.tid, M);
	cr_assert_eq(diag_hang(d, 0)->kind, DIAG_BLOCKED);
	cr_assert_geq(diag_hang(d, 0)->end_ns - diag_hang(d, 0)->start_ns,
	    500 * MS);
	diag_free(d);
	graph_free(g);
}

Test(diag_real, idle_wait_is_not_a_hang_and_says_why)
{
	one_long_poll(0);
	struct graph *g = fx_build(&F, NULL);
	struct diag_opts o = opts();
	struct diag *d = NULL;
	cr_assert_not_null(g);
	cr_assert_eq(diag_new(g, &o, &d, NULL), 0);
	cr_assert_eq(diag_nhangs(d), 0);
	cr_assert_not_null(diag_why_none(d));
	cr_assert_not_null(strstr(diag_why_none(d), "idle wait"), "why: %s",
	    diag_why_none(d));
	cr_assert_not_null(strstr(diag_why_none(d), "500 ms"), "why: %s",
	    diag_why_none(d));
	diag_free(d);
	graph_free(g);
}

/* The diagnosis of F with thread tid named (--tid): one hang, its
   graph in *gp. */
static struct diag *
diag_of(uint32_t tid, struct graph **gp)
{
	struct graph *g = fx_build(&F, NULL);
	struct diag_opts o = opts();
	struct diag *d = NULL;

	cr_assert_not_null(g);
	o.tid = tid;
	cr_assert_eq(diag_new(g, &o, &d, NULL), 0);
	cr_assert_eq(diag_nhangs(d), 1);
	*gp = g;
	return d;
}

static struct diag *
diag_of_m(struct graph **gp)
{
	return diag_of(M, gp);
}

/* The diagnosis of M (named, *d, of graph *g), whose one hang must be
   of kind kind: that hang. */
static const struct diag_hang *
hang_of_m(int kind, struct graph **g, struct diag **d)
{
	*d = diag_of_m(g);
	const struct diag_hang *h = diag_hang(*d, 0);
	cr_assert_eq(h->kind, kind);
	return h;
}

Test(diag_real, named_thread_gets_its_longest_wait)
{
	one_long_poll(0);
	struct graph *g;
	struct diag *d;
	cr_assert_str_eq(hang_of_m(DIAG_BLOCKED, &g, &d)->wait.syscall,
	    "poll");
	cr_assert_null(diag_why_none(d));
	diag_free(d);
	graph_free(g);
}

/* A file lock event of tid: op, type, ret, owner. */
static void
filelock(uint32_t tid, unsigned op, unsigned type, int ret, uint64_t owner)
{
	fx_ev(&F, tid, TT_FILELOCK, op, INO, 8, type);
	F.ev[F.n - 1].arg[4] = (uint64_t)(int64_t)ret;
	F.ev[F.n - 1].arg[5] = owner;
}

Test(diag_real, polling_lock_names_the_holder)
{
	fx_init(&F);
	fx_thread(&F, H, H, "holder");
	fx_thread(&F, P, P, "poller");
	fx_thread(&F, C, C, "other");
	/* another owner took and released it first */
	fx_run(&F, 0, C);
	fx_ev(&F, C, TT_SYS_ENTER, SYS_flock, 4, 0, 0);
	filelock(C, TFL_FLOCK, TRACE_FL_WR, 0, 0xc000);
	filelock(C, TFL_FLOCK, TRACE_FL_UN, 0, 0xc000);
	fx_ev(&F, C, TT_SYS_EXIT, SYS_flock, 0, 0, 0);
	fx_block(&F, C, H, SYS_nanosleep, 0);
	/* H takes it and sleeps */
	fx_ev(&F, H, TT_SYS_ENTER, SYS_flock, 3, 0, 0);
	filelock(H, TFL_FLOCK, TRACE_FL_WR, 0, 0xa000);
	fx_ev(&F, H, TT_SYS_EXIT, SYS_flock, 0, 0, 0);
	fx_block(&F, H, P, SYS_nanosleep, 0);
	/* P retries a non-blocking flock every 20 ms for 600 ms */
	for (int i = 0; i < 30; i++) {
		if (i > 0) {
			fx_run(&F, 0, P);
			fx_ev(&F, P, TT_SYS_EXIT, SYS_nanosleep, 0, 0, 0);
		}
		fx_ev(&F, P, TT_SYS_ENTER, SYS_flock, 5, 6, 0);
		filelock(P, TFL_FLOCK, TRACE_FL_WR, -EAGAIN, 0xb000);
		fx_ev(&F, P, TT_SYS_EXIT, SYS_flock, (uint64_t)-EAGAIN, 0, 0);
		fx_block(&F, P, 0, SYS_nanosleep, 0);
		F.ts += 20 * MS;
	}
	fx_run(&F, 0, H);
	fx_ev(&F, H, TT_SYS_EXIT, SYS_nanosleep, 0, 0, 0);
	filelock(H, TFL_FLOCK, TRACE_FL_UN, 0, 0xa000);
	fx_block(&F, H, P, SYS_nanosleep, 0);
	fx_ev(&F, P, TT_SYS_EXIT, SYS_nanosleep, 0, 0, 0);
	fx_ev(&F, P, TT_SYS_ENTER, SYS_flock, 5, 6, 0);
	filelock(P, TFL_FLOCK, TRACE_FL_WR, 0, 0xb000);
	fx_ev(&F, P, TT_SYS_EXIT, SYS_flock, 0, 0, 0);

	struct graph *g = fx_build(&F, NULL);
	struct diag_opts o = opts();
	struct diag *d = NULL;
	cr_assert_not_null(g);
	o.pid = P;
	cr_assert_eq(diag_new(g, &o, &d, NULL), 0);
	cr_assert_eq(diag_nhangs(d), 1);
	const struct diag_hang *h = diag_hang(d, 0);
	cr_assert_eq(h->kind, DIAG_YIELD, "kind %s", diag_kind_name(h->kind));
	cr_assert_str_eq(h->wait.syscall, "flock");
	cr_assert_geq(h->yields, 25);
	cr_assert_geq(h->end_ns - h->start_ns, 550 * MS);
	int found = 0;
	for (size_t i = 0; i < diag_nculprits(d, 0); i++) {
		cr_assert_neq(diag_culprit(d, 0, i)->th.tid, C,
		    "the owner that released the lock is no culprit");
		found |= diag_culprit(d, 0, i)->th.tid == H;
	}
	cr_assert(found, "the holder is a culprit");
	diag_free(d);
	graph_free(g);
}

Test(diag_real, reply_relayed_from_a_sibling_is_not_a_reply)
{
	/* M (pid M) receives a request from C, waits; its worker W wakes
	   it, and M sends the answer to C */
	fx_init(&F);
	fx_thread(&F, M, M, "server");
	fx_thread(&F, W, M, "worker");
	fx_thread(&F, C, C, "client");
	fx_ev(&F, W, TT_SYS_ENTER, SYS_nanosleep, 0, 0, 0);
	fx_ev(&F, W, TT_SWITCH, 1, 0, 120, 0);
	fx_run(&F, 0, C);
	/* C reads its socket 0x52 once: the kernel's record of who owns
	   it */
	fx_ev(&F, C, TT_SYS_ENTER, SYS_recvfrom, 3, 0, 0);
	fx_ev(&F, C, TT_SOCK_RECV, 0x52, 1, 0, 8);
	fx_ev(&F, C, TT_SYS_EXIT, SYS_recvfrom, 8, 0, 0);
	fx_ev(&F, C, TT_SYS_ENTER, SYS_sendto, 3, 0, 0);
	fx_ev(&F, C, TT_SK_DATA_READY, 0x51, 1, 0, 0);
	fx_ev(&F, C, TT_WAKING, M, 0, 120, 0);
	fx_ev(&F, C, TT_SYS_EXIT, SYS_sendto, 8, 0, 0);
	fx_block(&F, C, M, SYS_poll, POLLA);
	fx_ev(&F, M, TT_SYS_ENTER, SYS_recvfrom, 4, 0, 0);
	fx_ev(&F, M, TT_SOCK_RECV, 0x51, 1, 0, 8);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_recvfrom, 8, 0, 0);
	fx_ev(&F, M, TT_WAKING, W, 0, 120, 0);
	fx_block(&F, M, W, SYS_poll, POLLA + 1);
	fx_ev(&F, W, TT_SYS_EXIT, SYS_nanosleep, 0, 0, 0);
	fx_ev(&F, W, TT_WAKING, M, 0, 120, 0);
	fx_block(&F, W, M, SYS_nanosleep, 0);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_poll, 1, 0, 0);
	fx_ev(&F, M, TT_SYS_ENTER, SYS_sendto, 4, 0, 0);
	fx_ev(&F, M, TT_SK_DATA_READY, 0x52, 1, 0, 0);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_sendto, 8, 0, 0);

	struct graph *g = fx_build(&F, NULL);
	struct graph_stats st;
	cr_assert_not_null(g);
	graph_get_stats(g, &st);
	cr_assert_eq(st.edges_by_kind[GE_MSG], 1);
	cr_assert_eq(st.edges_by_kind[GE_REPLY], 0, "the worker made the "
	    "answer: no request/reply edge (got %llu)",
	    (unsigned long long)st.edges_by_kind[GE_REPLY]);
	graph_free(g);
}

/*
 * M joins worker W, which sleeps 500 ms, wakes M and blocks a moment on
 * its way out, after its last call returned (a thread's exit path). That
 * moment is in no call: were it taken for one more sleep, the sleep
 * would be W's idle wait, and W no culprit.
 */
Test(diag_real, wait_after_a_call_returned_is_in_no_call)
{
	fx_init(&F);
	fx_thread(&F, M, M, "main");
	fx_thread(&F, W, M, "worker");
	fx_block(&F, W, M, SYS_clock_nanosleep, 1);
	fx_block(&F, M, 0, SYS_futex, 0x7000);
	F.ts += 500 * MS;
	fx_run(&F, 0, W);
	fx_ev(&F, W, TT_SYS_EXIT, SYS_clock_nanosleep, 0, 0, 0);
	fx_ev(&F, W, TT_WAKING, M, 0, 120, 0);
	fx_ev(&F, W, TT_SWITCH, 2, M, 120, 0);	/* D, outside any call */
	fx_ev(&F, M, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	fx_ev(&F, M, TT_SWITCH, 1, W, 120, 0);
	fx_exit(&F, W, 0);

	struct graph *g;
	struct diag *d = diag_of_m(&g);
	cr_assert_str_eq(diag_hang(d, 0)->wait.syscall, "futex");
	int found = 0;
	for (size_t i = 0; i < diag_nculprits(d, 0); i++) {
		const struct diag_culprit *c = diag_culprit(d, 0, i);
		if (c->th.tid == W && c->kind == DIAG_BLOCKED)
			found = 1;
	}
	cr_expect(found, "the worker is no culprit (%zu culprits)",
	    diag_nculprits(d, 0));
	diag_free(d);
	graph_free(g);
}

/*
 * M waits 500 ms in read for H. P forks H and then waits in wait4 for M
 * (a parent that starts a helper, then waits for the child that hung);
 * H sleeps 500 ms on a timer and wakes M, whose exit wakes P. P is on
 * M's wake-up chain (it started H), but its wait began after its part
 * in it: P waits for the hang, it is no culprit, and there is no
 * circular wait. H, blocked in its sleep, is.
 */
Test(diag_real, starter_waiting_for_the_hang_is_no_culprit)
{
	fx_init(&F);
	fx_thread(&F, M, M, "main");
	fx_thread(&F, P, P, "starter");
	/* P's idle wait: short polls */
	for (int i = 0; i < 3; i++) {
		fx_block(&F, P, 0, SYS_poll, POLLA);
		F.ts += MS;
		fx_run(&F, 0, P);
		fx_ev(&F, P, TT_SYS_EXIT, SYS_poll, 1, 0, 0);
	}
	fx_block(&F, P, M, SYS_poll, POLLA);
	fx_block(&F, M, 0, SYS_read, 5);
	F.ts += MS;
	fx_run(&F, 0, P);
	fx_ev(&F, P, TT_SYS_EXIT, SYS_poll, 1, 0, 0);
	fx_fork(&F, P, H, "helper");
	fx_block(&F, P, H, SYS_wait4, (uint64_t)-1);
	fx_ev(&F, H, TT_TIMER_START, 0x77, 0xfff, 5, 1);
	fx_block(&F, H, 0, SYS_nanosleep, 0);
	F.ts += 500 * MS;
	F.cpu = 1;
	fx_timer_wake(&F, 0x77, H);
	F.cpu = 0;
	fx_run(&F, 0, H);
	fx_ev(&F, H, TT_SYS_EXIT, SYS_nanosleep, 0, 0, 0);
	fx_ev(&F, H, TT_WAKING, M, 0, 120, 0);
	fx_exit(&F, H, M);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_read, 8, 0, 0);
	fx_ev(&F, M, TT_WAKING, P, 0, 120, 0);
	fx_exit(&F, M, P);
	fx_ev(&F, P, TT_SYS_EXIT, SYS_wait4, M, 0, 0);
	fx_block(&F, P, 0, SYS_poll, POLLA);

	struct graph *g;
	struct diag *d = diag_of_m(&g);
	cr_assert_str_eq(diag_hang(d, 0)->wait.syscall, "read");
	int helper = 0, starter = 0;
	for (size_t i = 0; i < diag_nculprits(d, 0); i++) {
		const struct diag_culprit *c = diag_culprit(d, 0, i);
		helper |= c->th.tid == H && c->kind == DIAG_BLOCKED;
		starter |= c->th.tid == P;
	}
	cr_expect(helper, "the helper is a culprit");
	cr_expect(!starter, "the starter, waiting for the hang, is no "
	    "culprit");
	cr_expect_null(diag_cycle(d, 0), "no circular wait");
	diag_free(d);
	graph_free(g);
}

#define FUTEX_W 0x7100

/* tid waits on FUTEX_W 5 ms, until the wait's timeout. */
static void
timed_slice(uint32_t tid)
{
	fx_timed_slice(&F, tid, FUTEX_W);
}

/* M waits on FUTEX_W in n slices of 5 ms, each ended by its timeout,
   with its calls between every few slices when other_calls; W, on CPU
   1, runs the whole time and wakes M after them when wakes. */
static void
sliced(unsigned n, int other_calls, int wakes)
{
	fx_init(&F);
	fx_thread(&F, M, M, "main");
	fx_thread(&F, W, M, "worker");
	fx_sliced(&F, M, W, FUTEX_W, n, other_calls, wakes);
}

Test(diag_real, timed_slices_woken_are_a_yield_hang)
{
	sliced(40, 0, 1);

	struct graph *g;
	struct diag *d;
	const struct diag_hang *x = hang_of_m(DIAG_YIELD, &g, &d);
	cr_expect(x->slices);
	cr_expect_eq(x->yields, 40);
	cr_expect_str_eq(x->wait.syscall, "futex");
	cr_expect_geq(x->end_ns - x->start_ns, 200 * MS);
	cr_expect(fx_culprit(d, 0, W, DIAG_BUSY),
	    "the worker, running, is the culprit");
	diag_free(d);
	graph_free(g);
}

/* The same, the thread not named: slices may be a main loop waiting
   for work (a queue read with a timeout, again and again), idle. */
Test(diag_real, timed_slices_need_a_name)
{
	sliced(40, 0, 1);

	struct graph *g = fx_build(&F, NULL);
	struct diag_opts o = opts();
	struct diag *d = NULL;
	cr_assert_not_null(g);
	cr_assert_eq(diag_new(g, &o, &d, NULL), 0);
	for (size_t i = 0; i < diag_nhangs(d); i++)
		cr_expect(!diag_hang(d, i)->slices, "hang %zu", i);
	diag_free(d);
	graph_free(g);
}

static size_t
slice_hangs(void)
{
	struct graph *g = fx_build(&F, NULL);
	struct diag_opts o = opts();
	struct diag *d = NULL;
	size_t n = 0;

	cr_assert_not_null(g);
	o.tid = M;
	cr_assert_eq(diag_new(g, &o, &d, NULL), 0);
	for (size_t i = 0; i < diag_nhangs(d); i++)
		n += diag_hang(d, i)->slices;
	diag_free(d);
	graph_free(g);
	return n;
}

Test(diag_real, timed_slices_never_woken_or_split_are_none)
{
	sliced(40, 0, 0);
	cr_expect_eq(slice_hangs(), 0, "a tick never woken is no hang");
	sliced(40, 1, 1);
	cr_expect_eq(slice_hangs(), 0, "slices other calls separate are "
	    "no hang");
	sliced(10, 0, 1);
	cr_expect_eq(slice_hangs(), 0, "50 ms of slices: under the "
	    "threshold");
}

/*
 * M waits on FUTEX_W in 40 slices of 5 ms, taking another lock (a quick
 * futex wait on the interpreter's word, as CPython retakes its global
 * lock) after every fourth: the slices go on; W wakes M after them.
 */
Test(diag_real, timed_slices_with_a_lock_taken_between)
{
	fx_init(&F);
	fx_thread(&F, M, M, "main");
	fx_thread(&F, W, M, "worker");
	F.cpu = 1;
	fx_run(&F, 0, W);
	F.cpu = 0;
	for (unsigned k = 0; k < 40; k++) {
		if (k % 4 == 3) {
			fx_block(&F, M, 0, SYS_futex, 0x7300);
			F.ts += 100000ULL;
			fx_run(&F, 0, M);
			fx_ev(&F, M, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
		}
		timed_slice(M);
	}
	fx_block(&F, M, 0, SYS_futex, FUTEX_W);
	F.ts += 3 * MS;
	F.cpu = 1;
	fx_ev(&F, W, TT_WAKING, M, 0, 120, 0);
	F.cpu = 0;
	fx_run(&F, 0, M);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	fx_block(&F, M, 0, SYS_read, 5);
	F.ts += 5 * MS;
	F.cpu = 1;
	fx_block(&F, W, 0, SYS_nanosleep, 0);
	F.cpu = 0;

	struct graph *g;
	struct diag *d;
	const struct diag_hang *x = hang_of_m(DIAG_YIELD, &g, &d);
	cr_expect(x->slices);
	cr_expect_geq(x->yields, 40);
	cr_expect_geq(x->end_ns - x->start_ns, 200 * MS);
	diag_free(d);
	graph_free(g);
}

/*
 * P joins W (a futex wait); W waits on FUTEX_W in 40 slices of 5 ms,
 * each ended by its timeout, while H runs on CPU 1; H then wakes W,
 * whose exit wakes P. W, waiting in slices most of P's wait, is blocked
 * there (not idle, not busy), and H, running, is its culprit.
 */
Test(diag_real, culprit_waiting_in_timed_slices_is_blocked)
{
	fx_init(&F);
	fx_thread(&F, P, P, "main");
	fx_thread(&F, W, P, "worker");
	fx_thread(&F, H, P, "holder");
	F.cpu = 1;
	fx_run(&F, 0, H);
	F.cpu = 0;
	fx_run(&F, 0, P);
	fx_block(&F, P, W, SYS_futex, 0x7200);
	for (unsigned k = 0; k < 40; k++)
		timed_slice(W);
	fx_block(&F, W, 0, SYS_futex, FUTEX_W);
	F.ts += 3 * MS;
	F.cpu = 1;
	fx_ev(&F, H, TT_WAKING, W, 0, 120, 0);
	F.cpu = 0;
	fx_run(&F, 0, W);
	fx_ev(&F, W, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	fx_ev(&F, W, TT_WAKING, P, 0, 120, 0);
	fx_exit(&F, W, P);
	fx_ev(&F, P, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	fx_block(&F, P, 0, SYS_read, 5);
	F.cpu = 1;
	F.ts += 5 * MS;
	fx_block(&F, H, 0, SYS_nanosleep, 0);
	F.cpu = 0;

	struct graph *g;
	struct diag *d = diag_of(P, &g);
	int worker = 0, holder = 0;
	for (size_t i = 0; i < diag_nculprits(d, 0); i++) {
		const struct diag_culprit *c = diag_culprit(d, 0, i);
		if (c->th.tid == W && c->kind == DIAG_BLOCKED &&
		    c->end_ns - c->start_ns >= 200 * MS)
			worker = 1;
		if (c->th.tid == H && c->kind == DIAG_BUSY)
			holder = 1;
	}
	cr_expect(worker, "the worker, in slices, is blocked for all of them");
	cr_expect(holder, "the holder, running, is a culprit");
	diag_free(d);
	graph_free(g);
}

/* The last call of the slices returns at once (the word changed before
   it slept): the hang still ends there, read from the last slice. */
Test(diag_real, timed_slices_ended_without_a_wait)
{
	sliced(40, 0, 0);
	/* sliced() left M blocked in one more slice: it times out, and
	   the next call finds the word changed */
	F.ts += 2 * MS;
	fx_run(&F, 0, M);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_futex, (uint64_t)-ETIMEDOUT, 0, 0);
	fx_ev(&F, M, TT_SYS_ENTER, SYS_futex, FUTEX_W, 0, 0);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_futex, (uint64_t)-EAGAIN, 0, 0);
	fx_block(&F, M, 0, SYS_read, 5);
	F.ts += 5 * MS;

	struct graph *g;
	struct diag *d;
	const struct diag_hang *x = hang_of_m(DIAG_YIELD, &g, &d);
	cr_expect(x->slices);
	cr_expect_eq(x->yields, 41);
	for (size_t i = 0; i < diag_nculprits(d, 0); i++)
		cr_expect_neq(diag_culprit(d, 0, i)->th.tid, M);
	diag_free(d);
	graph_free(g);
}

/* by wakes M and blocks in system call nr on key; M returns ret from
   its call mnr and enters the next. */
static void
wakes_m(uint32_t by, unsigned nr, uint64_t key, unsigned mnr, uint64_t ret)
{
	fx_ev(&F, by, TT_WAKING, M, 0, 120, 0);
	fx_block(&F, by, M, nr, key);
	fx_ev(&F, M, TT_SYS_EXIT, mnr, ret, 0, 0);
	fx_ev(&F, M, TT_SYS_ENTER, SYS_getpid, 0, 0, 0);
}

/*
 * M waits in flock(2) for a lock H holds; H is stopped (by SIGSTOP out
 * of its sleep, or by a tracer inside it) until P, after a sleep,
 * continues it, and H then lets M go. M's wait is a file lock; H, a
 * culprit, is blocked "stopped" on resource res, and P is H's own
 * culprit.
 */
static void
stopped_holder(int traced, const char *res)
{
	fx_init(&F);
	fx_thread(&F, M, M, "main");
	fx_thread(&F, H, H, "holder");
	fx_thread(&F, P, P, "shell");
	fx_ev(&F, H, TT_SYS_ENTER, SYS_nanosleep, 0, 0, 0);
	if (traced) {
		fx_ev(&F, H, TT_SWITCH, 0x8, M, 120, 0);	/* t */
	} else {
		fx_ev(&F, H, TT_SYS_EXIT, SYS_nanosleep, (uint64_t)-514, 0,
		    0);
		fx_ev(&F, H, TT_SIGNAL_DELIVER, SIGSTOP, 0, 0, 0);
		fx_ev(&F, H, TT_SWITCH, 0x4, M, 120, 0);	/* T */
	}
	fx_block(&F, M, P, SYS_flock, 3);
	fx_ev(&F, P, TT_SYS_ENTER, SYS_nanosleep, 0, 0, 0);
	fx_ev(&F, P, TT_TIMER_START, 0x77, 0xfff, 5, 1);
	fx_ev(&F, P, TT_SWITCH, 1, 0, 120, 0);
	F.ts += 500 * MS;
	fx_timer_wake(&F, 0x77, P);
	fx_run(&F, 0, P);
	fx_ev(&F, P, TT_SYS_EXIT, SYS_nanosleep, 0, 0, 0);
	fx_ev(&F, P, TT_SYS_ENTER, SYS_kill, H, SIGCONT, 0);
	fx_ev(&F, P, TT_WAKING, H, 0, 120, 0);
	fx_ev(&F, P, TT_SYS_EXIT, SYS_kill, 0, 0, 0);
	fx_block(&F, P, H, SYS_wait4, (uint64_t)-1);
	if (traced)
		fx_ev(&F, H, TT_SYS_EXIT, SYS_nanosleep, 0, 0, 0);
	wakes_m(H, SYS_nanosleep, 0, SYS_flock, 0);

	struct graph *g;
	struct diag *d;
	const struct diag_hang *h = hang_of_m(DIAG_BLOCKED, &g, &d);
	cr_assert_str_eq(h->wait.type, "filelock");
	cr_assert_str_eq(h->wait.resource, "flock:fd3");
	int holder = 0, shell = 0;
	for (size_t i = 0; i < diag_nculprits(d, 0); i++) {
		const struct diag_culprit *c = diag_culprit(d, 0, i);
		if (c->th.tid == H && c->kind == DIAG_BLOCKED) {
			holder = 1;
			cr_expect_str_eq(c->wait.type, "stopped");
			cr_expect_str_eq(c->wait.resource, res);
		}
		shell |= c->th.tid == P && c->depth == 2;
	}
	cr_expect(holder, "the stopped holder is a culprit");
	cr_expect(shell, "what continued it is the holder's culprit");
	diag_free(d);
	graph_free(g);
}

Test(diag_real, holder_stopped_by_a_signal_says_so)
{
	stopped_holder(0, "signal:SIGSTOP");
}

Test(diag_real, holder_stopped_by_a_tracer_in_a_call_says_so)
{
	stopped_holder(1, "ptrace");
}

/* M blocks in system call nr (first argument a0) until W, after a
   sleep of 500 ms, does the same call and wakes it; M's wait as
   diagnosed (named). */
static void
woken_in(unsigned nr, uint64_t a0, struct diag_wait *w)
{
	fx_init(&F);
	fx_thread(&F, M, M, "main");
	fx_thread(&F, W, W, "other");
	fx_block(&F, W, M, SYS_nanosleep, 0);
	fx_block(&F, M, 0, nr, a0);
	F.ts += 500 * MS;
	fx_run(&F, 0, W);
	fx_ev(&F, W, TT_SYS_EXIT, SYS_nanosleep, 0, 0, 0);
	fx_ev(&F, W, TT_SYS_ENTER, nr, a0, 0, 0);
	fx_ev(&F, W, TT_SYS_EXIT, nr, 3, 0, 0);
	wakes_m(W, SYS_write, 3, nr, 3);

	struct graph *g;
	struct diag *d;
	*w = hang_of_m(DIAG_BLOCKED, &g, &d)->wait;
	diag_free(d);
	graph_free(g);
}

/* An open that blocks (a FIFO's, relative to the working directory) is
   a wait of type open; sigsuspend, of type signal. */
Test(diag_real, blocked_open_and_signal_waits_are_named)
{
	struct diag_wait w;

	woken_in(SYS_openat, (uint64_t)(uint32_t)AT_FDCWD, &w);
	cr_assert_str_eq(w.type, "open");
	cr_assert_str_eq(w.resource, "openat:cwd");
	woken_in(SYS_rt_sigsuspend, 0x7ffe0000, &w);
	cr_assert_str_eq(w.type, "signal");
	cr_assert_str_eq(w.resource, "rt_sigsuspend:0x7ffe0000");
}

/*
 * P, a shell, waits for its children: first for C0, which M woke, then
 * for C1, a sleep of 500 ms, after which P writes to M, which waited
 * for that. M's culprit P waits for C1, not for whatever ended its
 * earlier wait for C0: P's culprit is C1, and M is no culprit of P (an
 * earlier wait for another child would make it one, and a cycle).
 */
Test(diag_real, child_wait_of_a_culprit_names_its_child)
{
	enum { C0 = 500, C1 = 501 };

	fx_init(&F);
	fx_thread(&F, M, M, "main");
	fx_thread(&F, P, P, "shell");
	fx_ev(&F, M, TT_TIMER_START, 0x78, 0xfff, 5, 1);
	fx_block(&F, M, P, SYS_nanosleep, 0);
	fx_fork(&F, P, C0, "child");
	fx_block(&F, P, C0, SYS_wait4, (uint64_t)-1);
	fx_block(&F, C0, 0, SYS_read, 4);
	F.ts += 200 * MS;
	fx_timer_wake(&F, 0x78, M);
	fx_run(&F, 0, M);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_nanosleep, 0, 0, 0);
	fx_ev(&F, M, TT_WAKING, C0, 0, 120, 0);
	fx_block(&F, M, C0, SYS_nanosleep, 0);
	fx_ev(&F, C0, TT_SYS_EXIT, SYS_read, 1, 0, 0);
	fx_ev(&F, C0, TT_WAKING, P, 0, 120, 0);
	fx_exit(&F, C0, P);
	fx_ev(&F, P, TT_SYS_EXIT, SYS_wait4, C0, 0, 0);
	fx_fork(&F, P, C1, "sleep");
	fx_block(&F, P, C1, SYS_wait4, (uint64_t)-1);
	fx_ev(&F, C1, TT_TIMER_START, 0x77, 0xfff, 5, 1);
	fx_block(&F, C1, M, SYS_nanosleep, 0);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_nanosleep, 0, 0, 0);
	fx_block(&F, M, 0, SYS_read, 5);
	F.ts += 500 * MS;
	fx_timer_wake(&F, 0x77, C1);
	fx_run(&F, 0, C1);
	fx_ev(&F, C1, TT_SYS_EXIT, SYS_nanosleep, 0, 0, 0);
	fx_ev(&F, C1, TT_WAKING, P, 0, 120, 0);
	fx_exit(&F, C1, P);
	fx_ev(&F, P, TT_SYS_EXIT, SYS_wait4, C1, 0, 0);
	fx_ev(&F, P, TT_SYS_ENTER, SYS_write, 5, 0, 0);
	fx_ev(&F, P, TT_WAKING, M, 0, 120, 0);
	fx_ev(&F, P, TT_SYS_EXIT, SYS_write, 1, 0, 0);
	fx_block(&F, P, M, SYS_wait4, (uint64_t)-1);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_read, 1, 0, 0);
	fx_ev(&F, M, TT_SYS_ENTER, SYS_getpid, 0, 0, 0);

	struct graph *g;
	struct diag *d;
	hang_of_m(DIAG_BLOCKED, &g, &d);
	int shell = 0, child = 0, main_again = 0;
	for (size_t i = 0; i < diag_nculprits(d, 0); i++) {
		const struct diag_culprit *c = diag_culprit(d, 0, i);
		shell |= c->th.tid == P && c->depth == 1;
		child |= c->th.tid == C1 && c->depth == 2;
		main_again |= c->th.tid == M;
	}
	cr_expect(shell, "the shell is M's culprit");
	cr_expect(child, "the child it waited for is the shell's");
	cr_expect(!main_again, "M is no culprit of the shell");
	cr_expect_null(diag_cycle(d, 0), "no circular wait");
	diag_free(d);
	graph_free(g);
}

/*
 * M starts H (fork) and waits in wait4 for it; H runs 500 ms and exits.
 * H is M's culprit, busy; it runs its own program, not a request of M's:
 * the fork that started it is no request it serves.
 */
Test(diag_real, forked_child_busy_serves_no_one)
{
	fx_init(&F);
	fx_thread(&F, M, M, "main");
	fx_fork(&F, M, H, "child");
	fx_block(&F, M, H, SYS_wait4, (uint64_t)-1);
	F.ts += 500 * MS;
	fx_ev(&F, H, TT_WAKING, M, 0, 120, 0);
	fx_exit(&F, H, M);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_wait4, H, 0, 0);
	fx_block(&F, M, 0, SYS_read, 5);

	struct graph *g;
	struct diag *d = diag_of_m(&g);
	cr_assert_str_eq(diag_hang(d, 0)->wait.syscall, "wait4");
	cr_assert_eq(diag_nculprits(d, 0), 1);
	const struct diag_culprit *c = diag_culprit(d, 0, 0);
	cr_assert_eq(c->th.tid, H);
	cr_assert_eq(c->kind, DIAG_BUSY);
	cr_assert_str_eq(c->serving.comm, "", "serving %s", c->serving.comm);
	diag_free(d);
	graph_free(g);
}

/*
 * M hands work to W and waits on a futex until W wakes it, three times;
 * then it waits 500 ms on the same futex while H runs, until H wakes it
 * (a runtime that runs its tasks on a pool of threads: the lock's holder
 * ran on another thread than the normal path's). W, after its last
 * turn, parks on another futex than its usual one, for the whole wait.
 * H, busy, is the culprit, although the normal path does not go through
 * it; W, of the normal path, is not (what is behind a busy waker only
 * fed it earlier).
 */
Test(diag_real, busy_waker_off_the_normal_path_is_the_culprit)
{
	fx_init(&F);
	fx_thread(&F, M, M, "main");
	fx_thread(&F, W, M, "pool");
	fx_thread(&F, H, M, "holder");
	fx_block(&F, W, M, SYS_futex, 0x7400);
	for (int i = 0; i < 3; i++) {
		fx_ev(&F, M, TT_WAKING, W, 0, 120, 0);
		fx_block(&F, M, W, SYS_futex, 0x7300);
		fx_ev(&F, W, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
		F.ts += 2 * MS;
		fx_ev(&F, W, TT_WAKING, M, 0, 120, 0);
		fx_block(&F, W, M, SYS_futex, i < 2 ? 0x7400 : 0x7500);
		fx_ev(&F, M, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
		F.ts += MS;
	}
	fx_block(&F, M, H, SYS_futex, 0x7300);
	F.ts += 500 * MS;
	fx_ev(&F, H, TT_WAKING, M, 0, 120, 0);
	fx_block(&F, H, M, SYS_nanosleep, 0);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	fx_block(&F, M, 0, SYS_read, 5);

	struct graph *g;
	struct diag *d;
	hang_of_m(DIAG_BLOCKED, &g, &d);
	cr_assert_eq(diag_nculprits(d, 0), 1);
	const struct diag_culprit *c = diag_culprit(d, 0, 0);
	cr_expect_eq(c->th.tid, H, "culprit %u", c->th.tid);
	cr_expect_eq(c->kind, DIAG_BUSY);
	diag_free(d);
	graph_free(g);
}
