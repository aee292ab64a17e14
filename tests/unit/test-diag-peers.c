/*
 * test-diag-peers.c: criterion tests of the diagnosis (engine/diag*.c)
 * on traces built in code: similar nodes must talk to the same peer
 * process, those whose wait the hang's waker ended rank first, a
 * user-level wait made of two kernel waits is one similar node,
 * every blocked thread of the normal path is a culprit, and so is the
 * idle thread that ended the wait by a plain wake-up (an idle holder,
 * in the waiter's process too when its input came from a process the
 * waiter did not serve), but not an event loop waiting in poll at both
 * ends of the recording; a mutex stored next to a condition variable is
 * another resource.
 */
#include <criterion/criterion.h>

#include "graph-fixture.h"

#define MS 1000000ULL

static struct fx F;

enum { M = 100, W = 101, X = 102, IN = 103, P = 200, Q = 300 };
#define LOCK 0x1000
#define IDLE 0x2000
#define SLOW 0x3000
#define POLLA 0x4000
#define WQ 0x5000
#define IDLE2 0x6000
#define COND 0x7000
#define SKP 0x8001
#define SKQ 0x8002

static struct diag_opts
opts(void)
{
	struct diag_opts o = { .threshold_ns = 10 * MS };
	return o;
}

/* peer sends a message on sk to M, which reads it and waits on LOCK for
   wait_us; returns when M blocked. */
static uint64_t
peer_iteration(uint32_t peer, uint64_t sk, uint64_t wait_us)
{
	return fx_lock_wait(&F, M, peer, sk, LOCK, POLLA, wait_us, NULL);
}

Test(diag_peers, similar_node_talks_to_the_same_peer)
{
	fx_init(&F);
	fx_thread(&F, M, M, "main");
	fx_thread(&F, P, P, "peer");
	fx_thread(&F, Q, Q, "other");
	fx_ev(&F, M, TT_SYS_ENTER, SYS_poll, POLLA, 0, 0);
	fx_ev(&F, M, TT_SWITCH, 1, 0, 120, 0);
	fx_ev(&F, P, TT_SYS_ENTER, SYS_nanosleep, 0, 0, 0);
	fx_ev(&F, P, TT_SWITCH, 1, 0, 120, 0);
	fx_ev(&F, Q, TT_SYS_ENTER, SYS_nanosleep, 0, 0, 0);
	fx_ev(&F, Q, TT_SWITCH, 1, 0, 120, 0);
	F.ts += 5 * MS;
	uint64_t tp = peer_iteration(P, SKP, 100);
	uint64_t tq = peer_iteration(Q, SKQ, 100);
	uint64_t th = peer_iteration(P, SKP, 50000);
	(void)tq;

	struct graph *g = fx_build(&F, NULL);
	struct diag_opts o = opts();
	struct diag *d = NULL;
	cr_assert_not_null(g);
	o.at = th + 20 * MS;
	o.tid = M;
	cr_assert_eq(diag_new(g, &o, &d, NULL), 0);
	cr_assert_eq(diag_nhangs(d), 1);
	cr_assert_eq(diag_hang(d, 0)->th.tid, M);
	cr_assert_eq(diag_hang(d, 0)->kind, DIAG_BLOCKED);
	cr_assert_str_eq(diag_hang(d, 0)->wait.resource, "futex:0x1000");
	cr_assert_eq(diag_nsimilar(d, 0), 1, "only the node talking to the "
	    "hang's peer is similar (got %zu)", diag_nsimilar(d, 0));
	const struct diag_similar *s = diag_similar(d, 0, 0);
	cr_assert_leq(s->start_ns, tp);
	cr_assert_gt(s->start_ns + s->duration_ns, tp - 1);
	diag_free(d);
	graph_free(g);
}

/* M, run from its poll, waits on LOCK until waker wakes it after
   wait_us; returns when M blocked. */
static uint64_t
woken_iteration(uint32_t waker, uint64_t wait_us)
{
	return fx_lock_wait(&F, M, waker, 0, LOCK, POLLA, wait_us, NULL);
}

/* Two normal waits alike but for their waker: P (older), then Q; P
   ends the hang, so the older one ranks first, and Q's is kept. */
Test(diag_peers, similar_node_woken_by_the_hangs_peer_first)
{
	fx_init(&F);
	fx_thread(&F, M, M, "main");
	fx_thread(&F, P, P, "peer");
	fx_thread(&F, Q, Q, "other");
	fx_ev(&F, M, TT_SYS_ENTER, SYS_poll, POLLA, 0, 0);
	fx_ev(&F, M, TT_SWITCH, 1, 0, 120, 0);
	fx_ev(&F, P, TT_SYS_ENTER, SYS_nanosleep, 0, 0, 0);
	fx_ev(&F, P, TT_SWITCH, 1, 0, 120, 0);
	fx_ev(&F, Q, TT_SYS_ENTER, SYS_nanosleep, 0, 0, 0);
	fx_ev(&F, Q, TT_SWITCH, 1, 0, 120, 0);
	F.ts += 5 * MS;
	uint64_t tp = woken_iteration(P, 100);
	uint64_t tq = woken_iteration(Q, 100);
	uint64_t th = woken_iteration(P, 50000);

	struct graph *g = fx_build(&F, NULL);
	struct diag_opts o = opts();
	struct diag *d = NULL;
	cr_assert_not_null(g);
	o.at = th + 20 * MS;
	o.tid = M;
	cr_assert_eq(diag_new(g, &o, &d, NULL), 0);
	cr_assert_eq(diag_nhangs(d), 1);
	cr_assert_eq(diag_hang(d, 0)->th.tid, M);
	cr_assert_str_eq(diag_hang(d, 0)->wait.resource, "futex:0x1000");
	cr_assert_eq(diag_nsimilar(d, 0), 2, "both waits are similar (got "
	    "%zu)", diag_nsimilar(d, 0));
	const struct diag_similar *s0 = diag_similar(d, 0, 0);
	const struct diag_similar *s1 = diag_similar(d, 0, 1);
	cr_assert(s0->start_ns <= tp && s0->start_ns + s0->duration_ns >= tp,
	    "the wait the hang's waker (peer) ended ranks first");
	cr_assert(s1->start_ns <= tq && s1->start_ns + s1->duration_ns >= tq,
	    "the more recent wait another process ended comes second");
	cr_assert_eq(diag_picked(d, 0), 0);
	diag_free(d);
	graph_free(g);
}

/* M waits on the condition variable COND: two kernel waits (a spurious
   wake-up in between) when normal, one long one in the hang. */
static uint64_t
cond_iteration(int hung)
{
	fx_run(&F, 0, M);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_poll, 1, 0, 0);
	fx_user(&F, M, TU_COND_WAIT, COND);
	uint64_t at = fx_block(&F, M, 0, SYS_futex, LOCK);
	if (!hung) {
		F.ts += 100000;
		fx_run(&F, 0, M);
		fx_ev(&F, M, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
		fx_block(&F, M, 0, SYS_futex, LOCK);
		F.ts += 100000;
	} else {
		F.ts += 50 * MS;
	}
	fx_run(&F, 0, M);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	fx_user(&F, M, TU_COND_DONE, COND);
	fx_ev(&F, M, TT_SYS_ENTER, SYS_poll, POLLA, 0, 0);
	fx_ev(&F, M, TT_SWITCH, 1, 0, 120, 0);
	F.ts += 5 * MS;
	return at;
}

Test(diag_peers, one_similar_node_per_moment)
{
	fx_init(&F);
	fx_thread(&F, M, M, "main");
	fx_ev(&F, M, TT_SYS_ENTER, SYS_poll, POLLA, 0, 0);
	fx_ev(&F, M, TT_SWITCH, 1, 0, 120, 0);
	F.ts += 5 * MS;
	for (int i = 0; i < 3; i++)
		cond_iteration(0);
	uint64_t th = cond_iteration(1);

	struct graph *g = fx_build(&F, NULL);
	struct diag_opts o = opts();
	struct diag *d = NULL;
	cr_assert_not_null(g);
	o.at = th + 20 * MS;
	cr_assert_eq(diag_new(g, &o, &d, NULL), 0);
	cr_assert_eq(diag_nhangs(d), 1);
	cr_assert_eq(diag_hang(d, 0)->th.tid, M);
	cr_assert_str_eq(diag_hang(d, 0)->wait.type, "condvar");
	cr_assert_eq(diag_nsimilar(d, 0), 3, "one similar node per normal "
	    "wait (got %zu)", diag_nsimilar(d, 0));
	for (size_t i = 1; i < diag_nsimilar(d, 0); i++)
		cr_assert_gt(diag_similar(d, 0, i - 1)->start_ns,
		    diag_similar(d, 0, i)->start_ns);
	diag_free(d);
	graph_free(g);
}

/* The input wakes M, which asks W, which asks X; X answers W, W answers
   M. In the hang W waits for X on WQ and X is blocked on SLOW. */
static uint64_t
chain_iteration(int hung)
{
	fx_run(&F, 0, IN);
	fx_ev(&F, IN, TT_WAKING, M, 0, 120, 0);
	fx_block(&F, IN, M, SYS_nanosleep, 0);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_poll, 1, 0, 0);
	fx_ev(&F, M, TT_WAKING, W, 0, 120, 0);
	uint64_t at = fx_block(&F, M, W, SYS_futex, LOCK);
	fx_ev(&F, W, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	fx_ev(&F, W, TT_WAKING, X, 0, 120, 0);
	fx_block(&F, W, X, SYS_futex, WQ);
	fx_ev(&F, X, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	if (hung) {
		fx_block(&F, X, 0, SYS_futex, SLOW);
		F.ts += 50 * MS;
		fx_run(&F, 0, X);
		fx_ev(&F, X, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	} else {
		F.ts += 100000;
	}
	fx_ev(&F, X, TT_WAKING, W, 0, 120, 0);
	fx_block(&F, X, W, SYS_futex, IDLE2);
	fx_ev(&F, W, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	fx_ev(&F, W, TT_WAKING, M, 0, 120, 0);
	fx_block(&F, W, M, SYS_futex, IDLE);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	fx_ev(&F, M, TT_SYS_ENTER, SYS_poll, POLLA, 0, 0);
	fx_ev(&F, M, TT_SWITCH, 1, 0, 120, 0);
	F.ts += 5 * MS;
	return at;
}

Test(diag_peers, every_blocked_path_thread_is_a_culprit)
{
	fx_init(&F);
	fx_thread(&F, M, M, "main");
	fx_thread(&F, W, M, "worker");
	fx_thread(&F, X, M, "helper");
	fx_thread(&F, IN, M, "input");
	fx_ev(&F, M, TT_SYS_ENTER, SYS_poll, POLLA, 0, 0);
	fx_ev(&F, M, TT_SWITCH, 1, 0, 120, 0);
	fx_ev(&F, W, TT_SYS_ENTER, SYS_futex, IDLE, 0, 0);
	fx_ev(&F, W, TT_SWITCH, 1, 0, 120, 0);
	fx_ev(&F, X, TT_SYS_ENTER, SYS_futex, IDLE2, 0, 0);
	fx_ev(&F, X, TT_SWITCH, 1, 0, 120, 0);
	fx_ev(&F, IN, TT_SYS_ENTER, SYS_nanosleep, 0, 0, 0);
	fx_ev(&F, IN, TT_SWITCH, 1, 0, 120, 0);
	F.ts += 5 * MS;
	for (int i = 0; i < 4; i++)
		chain_iteration(0);
	uint64_t th = chain_iteration(1);

	struct graph *g = fx_build(&F, NULL);
	struct diag_opts o = opts();
	struct diag *d = NULL;
	cr_assert_not_null(g);
	o.at = th + 20 * MS;
	cr_assert_eq(diag_new(g, &o, &d, NULL), 0);
	cr_assert_eq(diag_nhangs(d), 1);
	cr_assert_eq(diag_hang(d, 0)->th.tid, M);
	/* both W (waiting for X) and X (on SLOW) at depth 1, in path
	   order, each with its wait */
	const struct diag_culprit *cw = NULL, *cx = NULL;
	size_t iw = 0, ix = 0;
	for (size_t i = 0; i < diag_nculprits(d, 0); i++) {
		const struct diag_culprit *c = diag_culprit(d, 0, i);
		if (c->depth != 1)
			continue;
		if (c->th.tid == W && cw == NULL)
			cw = c, iw = i;
		if (c->th.tid == X && cx == NULL)
			cx = c, ix = i;
	}
	cr_assert_not_null(cw, "worker is a culprit at depth 1");
	cr_assert_not_null(cx, "helper is a culprit at depth 1 too");
	cr_assert_lt(iw, ix);
	cr_assert_eq(cw->kind, DIAG_BLOCKED);
	cr_assert_eq(cx->kind, DIAG_BLOCKED);
	cr_assert_str_eq(cw->wait.resource, "futex:0x5000");
	cr_assert_str_eq(cx->wait.resource, "futex:0x3000");
	cr_assert_eq(cx->parent, SIZE_MAX);
	/* the JSON lists them all */
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	diag_write_json(d, f);
	fclose(f);
	cr_assert_not_null(strstr(buf, "\"helper\""));
	cr_assert_not_null(strstr(buf, "\"worker\""));
	free(buf);
	diag_free(d);
	graph_free(g);
}

static int asker;	/* M takes a request of Q's before each wait */

/* M waits on LOCK until X wakes it; X wakes it as soon as the input
   thread wakes X out of its idle poll on POLLA, with a message when msg
   (X holds the lock across its wait for input), else by a plain wake-up
   (X merely relays the input thread). hold_ms: how long X's idle wait
   lasts. */
static void
holder_iteration(uint64_t hold_ms, int msg)
{
	fx_run(&F, 0, IN);
	fx_ev(&F, IN, TT_WAKING, M, 0, 120, 0);
	fx_block(&F, IN, M, SYS_nanosleep, 0);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_nanosleep, 0, 0, 0);
	if (asker) {
		fx_ev(&F, Q, TT_SK_DATA_READY, SKQ, 1, 0, 0);
		fx_ev(&F, M, TT_SOCK_RECV, SKQ, 1, 0, 10);
	}
	fx_block(&F, M, 0, SYS_futex, LOCK);
	F.ts += hold_ms * MS;
	fx_run(&F, 0, IN);
	if (msg)
		fx_ev(&F, IN, TT_SK_DATA_READY, SKP, 1, 0, 0);
	fx_ev(&F, IN, TT_WAKING, X, 0, 120, 0);
	fx_block(&F, IN, X, SYS_nanosleep, 0);
	fx_ev(&F, X, TT_SYS_EXIT, SYS_poll, 1, 0, 0);
	if (msg)
		fx_ev(&F, X, TT_SOCK_RECV, SKP, 1, 0, 10);
	fx_ev(&F, X, TT_WAKING, M, 0, 120, 0);
	fx_ev(&F, X, TT_SYS_ENTER, SYS_poll, POLLA, 0, 0);
	fx_ev(&F, X, TT_SWITCH, 1, M, 120, 0);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	fx_block(&F, M, 0, SYS_nanosleep, 0);
	F.ts += 5 * MS;
}

/* Diagnose M's last wait; the index of X among the culprits or -1. */
static long
holder_fixture(int msg, uint32_t xpid)
{
	fx_init(&F);
	fx_thread(&F, M, M, "main");
	fx_thread(&F, X, xpid, "holder");
	fx_thread(&F, IN, IN, "input");
	fx_thread(&F, Q, Q, "client");
	fx_ev(&F, X, TT_SYS_ENTER, SYS_poll, POLLA, 0, 0);
	fx_ev(&F, X, TT_SWITCH, 1, 0, 120, 0);
	fx_ev(&F, IN, TT_SYS_ENTER, SYS_nanosleep, 0, 0, 0);
	fx_ev(&F, IN, TT_SWITCH, 1, 0, 120, 0);
	fx_ev(&F, M, TT_SYS_ENTER, SYS_nanosleep, 0, 0, 0);
	fx_ev(&F, M, TT_SWITCH, 1, 0, 120, 0);
	for (int i = 0; i < 4; i++)
		holder_iteration(1, msg);
	holder_iteration(60, msg);
	struct graph *g = fx_build(&F, NULL);
	cr_assert_not_null(g);
	struct diag_opts o = opts();
	o.tid = M;
	struct diag *d = NULL;
	cr_assert_eq(diag_new(g, &o, &d, NULL), 0);
	cr_assert_geq(diag_nhangs(d), 1);
	const struct diag_hang *h = diag_hang(d, 0);
	cr_assert_eq(h->kind, DIAG_BLOCKED);
	cr_assert_geq(h->end_ns - h->start_ns, 60 * MS);
	long at = -1;
	for (size_t k = 0; k < diag_nculprits(d, 0); k++) {
		const struct diag_culprit *c = diag_culprit(d, 0, k);
		if (c->th.tid != X)
			continue;
		at = (long)k;
		cr_assert_eq(c->kind, DIAG_BLOCKED);
		cr_assert_eq(c->depth, 1);
		cr_assert_geq(c->end_ns - c->start_ns, 60 * MS);
	}
	diag_free(d);
	graph_free(g);
	return at;
}

Test(diag_peers, idle_holder_that_woke_the_waiter)
{
	cr_assert_geq(holder_fixture(1, X), 0,
	    "the holder, idle in poll until its input, is a culprit");
}

Test(diag_peers, idle_relay_is_no_holder)
{
	cr_assert_eq(holder_fixture(0, X), -1,
	    "a thread woken by a plain wake-up relays its waker");
	cr_assert_eq(holder_fixture(1, M), -1,
	    "a thread of the waiter's process relays its input to it");
}

/* M serves a request of Q's before each wait: a thread of M's own
   process whose input comes from another process (the input thread's)
   held what M needed, as a session of a thread-per-connection server
   holds a row lock until its own client commits. */
Test(diag_peers, idle_holder_of_the_waiters_process_with_other_input)
{
	asker = 1;
	long at = holder_fixture(1, M);
	asker = 0;
	cr_assert_geq(at, 0, "the holder of M's process is a culprit");
}

/*
 * A service's main loop, in poll when the recording starts, takes C's
 * request, wakes its worker and polls again until the recording ends:
 * none of its polls both began and ended in the recording. The worker
 * sleeps 60 ms on a timer, then answers C. Only the worker is a culprit
 * of C's wait: the main loop is idle.
 */
Test(diag_peers, loop_polling_at_both_ends_is_idle)
{
	enum { C = 600, SM = 700, SW = 701 };

	fx_init(&F);
	fx_thread(&F, C, C, "client");
	fx_thread(&F, SM, SM, "svc");
	fx_thread(&F, SW, SM, "svc-worker");
	fx_ev(&F, SW, TT_SYS_ENTER, SYS_futex, IDLE, 0, 0);
	fx_ev(&F, SW, TT_SWITCH, 1, 0, 120, 0);
	fx_run(&F, 0, C);
	fx_ev(&F, C, TT_SOCK_RECV, SKQ, 1, 0, 10);
	fx_ev(&F, C, TT_SK_DATA_READY, SKP, 1, 0, 0);
	fx_ev(&F, C, TT_WAKING, SM, 0, 120, 0);
	fx_block(&F, C, SM, SYS_recvfrom, SKQ);
	/* the main loop's poll ends: the first system call event seen */
	fx_ev(&F, SM, TT_SYS_EXIT, SYS_poll, 1, 0, 0);
	fx_ev(&F, SM, TT_SOCK_RECV, SKP, 1, 0, 10);
	fx_ev(&F, SM, TT_WAKING, SW, 0, 120, 0);
	fx_ev(&F, SM, TT_SYS_ENTER, SYS_poll, POLLA, 0, 0);
	fx_ev(&F, SM, TT_SWITCH, 1, SW, 120, 0);
	fx_ev(&F, SW, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	fx_ev(&F, SW, TT_TIMER_START, 0x77, 0xfff, 5, 1);
	fx_block(&F, SW, 0, SYS_nanosleep, 0);
	F.ts += 60 * MS;
	F.cpu = 1;
	fx_timer_wake(&F, 0x77, SW);
	F.cpu = 0;
	fx_run(&F, 0, SW);
	fx_ev(&F, SW, TT_SYS_EXIT, SYS_nanosleep, 0, 0, 0);
	fx_ev(&F, SW, TT_SK_DATA_READY, SKQ, 1, 0, 0);
	fx_ev(&F, SW, TT_WAKING, C, 0, 120, 0);
	fx_block(&F, SW, C, SYS_futex, IDLE);
	fx_ev(&F, C, TT_SYS_EXIT, SYS_recvfrom, 10, 0, 0);
	fx_ev(&F, C, TT_SOCK_RECV, SKQ, 1, 0, 10);
	fx_block(&F, C, 0, SYS_nanosleep, 0);
	F.ts += 5 * MS;
	struct graph *g = fx_build(&F, NULL);
	cr_assert_not_null(g);
	struct diag_opts o = opts();
	o.tid = C;
	struct diag *d = NULL;
	cr_assert_eq(diag_new(g, &o, &d, NULL), 0);
	cr_assert_geq(diag_nhangs(d), 1);
	cr_assert_eq(diag_hang(d, 0)->th.tid, C);
	cr_assert_eq(diag_hang(d, 0)->kind, DIAG_BLOCKED);
	int worker = 0;
	for (size_t k = 0; k < diag_nculprits(d, 0); k++) {
		const struct diag_culprit *c = diag_culprit(d, 0, k);
		worker |= c->th.tid == SW;
		cr_assert_neq(c->th.tid, SM, "the main loop polls idle");
	}
	cr_assert(worker, "the worker that slept is a culprit");
	diag_free(d);
	graph_free(g);
}

/* The stage S of a pipeline runs a child K for each item and waits for
   it (wait4), then wakes M, which waits on LOCK for the item; S has no
   other wait, so its usual wait is the wait for a child. hung: K sleeps
   50 ms. Returns when M blocked. */
enum { PM = 900, PS = 910, K0 = 920 };

static uint64_t
child_iteration(uint32_t k, int hung)
{
	uint64_t at = fx_block(&F, PM, PS, SYS_futex, LOCK);
	fx_ev(&F, PS, TT_SYS_EXIT, SYS_wait4, 1, 0, 0);
	fx_ev(&F, PS, TT_WAKEUP_NEW, k, 0, 0, 0);
	fx_block(&F, PS, k, SYS_wait4, (uint64_t)-1);
	if (hung) {
		fx_block(&F, k, 0, SYS_nanosleep, 0);
		F.ts += 50 * MS;
		fx_run(&F, 0, k);
		fx_ev(&F, k, TT_SYS_EXIT, SYS_nanosleep, 0, 0, 0);
	} else {
		F.ts += 100000;
	}
	fx_ev(&F, k, TT_WAKING, PS, 0, 120, 0);
	fx_ev(&F, k, TT_SWITCH, 0x20, PS, 120, 0);	/* exits */
	fx_ev(&F, PS, TT_SYS_EXIT, SYS_wait4, k, 0, 0);
	fx_ev(&F, PS, TT_WAKING, PM, 0, 120, 0);
	fx_block(&F, PS, PM, SYS_wait4, (uint64_t)-1);
	fx_ev(&F, PM, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	F.ts += 5 * MS;
	return at;
}

Test(diag_peers, a_wait_for_a_child_is_never_idle)
{
	fx_init(&F);
	fx_thread(&F, PM, PM, "main");
	fx_thread(&F, PS, PS, "stage");
	for (uint32_t i = 0; i < 6; i++)
		fx_thread(&F, K0 + i, K0 + i, "child");
	fx_ev(&F, PS, TT_SYS_ENTER, SYS_wait4, (uint64_t)-1, 0, 0);
	fx_ev(&F, PS, TT_SWITCH, 1, PM, 120, 0);
	F.ts += 5 * MS;
	for (uint32_t i = 0; i < 5; i++)
		child_iteration(K0 + i, 0);
	uint64_t th = child_iteration(K0 + 5, 1);

	struct graph *g = fx_build(&F, NULL);
	cr_assert_not_null(g);
	struct diag_opts o = opts();
	o.tid = PM;
	o.at = th + 20 * MS;
	struct diag *d = NULL;
	cr_assert_eq(diag_new(g, &o, &d, NULL), 0);
	cr_assert_eq(diag_nhangs(d), 1);
	int stage = 0;
	for (size_t i = 0; i < diag_nculprits(d, 0); i++) {
		const struct diag_culprit *c = diag_culprit(d, 0, i);
		if (c->th.tid == PS && c->depth == 1) {
			stage = 1;
			cr_assert_eq(c->kind, DIAG_BLOCKED);
			cr_assert_str_eq(c->wait.syscall, "wait4");
		}
	}
	cr_assert(stage, "the stage waiting for its child is a culprit");
	diag_free(d);
	graph_free(g);
}

/*
 * M asks W for something and waits on a condition variable (its group
 * signal at COND + 8) for the answer; when
 * W signals it, M takes the mutex stored right after the condition
 * (COND + 0x20) and waits for it briefly, W still holding it: the same
 * calls, the same 64-byte line, but another object. The hang on the
 * condition takes an earlier wait on the condition as its similar node,
 * not the more recent one on the mutex.
 */
#define CSIG (COND + 8)
#define CMUTEX (COND + 0x20)
Test(diag_peers, mutex_next_to_a_condition_is_another_resource)
{
	struct diag_opts o = opts();
	struct graph *g;
	struct diag *d;
	char *cause = NULL;

	fx_init(&F);
	fx_thread(&F, M, M, "main");
	fx_thread(&F, W, M, "worker");
	fx_ev(&F, W, TT_SYS_ENTER, SYS_futex, IDLE, 0, 0);
	fx_ev(&F, W, TT_SWITCH, 1, 0, 120, 0);
	for (int i = 0; i < 6; i++) {
		/* M asks W for something and waits for it */
		fx_ev(&F, M, TT_WAKING, W, 0, 120, 0);
		fx_block(&F, M, W, SYS_futex, CSIG);
		fx_ev(&F, W, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
		F.ts += (i == 5 ? 60000 : 2000 + 100 * (uint64_t)i) * 1000;
		fx_ev(&F, W, TT_WAKING, M, 0, 120, 0);
		fx_run(&F, W, M);
		fx_ev(&F, M, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
		fx_block(&F, M, W, SYS_futex, CMUTEX);
		fx_ev(&F, W, TT_WAKING, M, 0, 120, 0);
		fx_block(&F, W, M, SYS_futex, IDLE);
		fx_ev(&F, M, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	}
	cr_assert_not_null(g = fx_build(&F, NULL));
	cr_assert_eq(diag_new(g, &o, &d, &cause), 0, "%s", cause);
	cr_assert_geq(diag_nhangs(d), 1);
	const struct diag_hang *h = diag_hang(d, 0);
	cr_assert_eq(h->th.tid, M);
	cr_assert_geq(diag_picked(d, 0), 0);
	const struct diag_similar *s = diag_similar(d, 0,
	    (size_t)diag_picked(d, 0));
	char want[32];
	snprintf(want, sizeof(want), "futex:0x%x", CSIG);
	cr_assert_str_eq(s->wait.resource, want, "picked a wait on %s",
	    s->wait.resource);
	diag_free(d);
	graph_free(g);
}

/*
 * M asks peer P (socket SKP) and waits on condition variable COND; P
 * hands the work to its thread PW, whose reply (socket SKQ) reaches M's
 * I/O thread X, which takes M's mutex and wakes M. In the normal turns
 * M was preempted before its condition wait released the mutex, so X
 * waited for the lock, and M's release woke X. That release only
 * delayed X: the normal path goes on through the reply to PW and P, and
 * P, blocked on SLOW through the hang, is the culprit.
 */
enum { PW = 201 };
#define MUTEX 0x9000

static void
lock_turn(int hung)
{
	fx_run(&F, 0, IN);
	fx_ev(&F, IN, TT_WAKING, M, 0, 120, 0);
	fx_block(&F, IN, M, SYS_nanosleep, 0);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_poll, 1, 0, 0);
	fx_ev(&F, M, TT_SK_DATA_READY, SKP, 1, 0, 0);
	fx_ev(&F, M, TT_WAKING, P, 0, 120, 0);
	if (hung) {
		fx_ev(&F, M, TT_SYS_ENTER, SYS_futex, COND, 0x89, 0);
		fx_ev(&F, M, TT_SWITCH, 1, P, 120, 0);
	} else {
		fx_ev(&F, M, TT_SWITCH, 0, P, 120, 0);	/* preempted */
	}
	fx_ev(&F, P, TT_SOCK_RECV, SKP, 1, 0, 10);
	fx_ev(&F, P, TT_SYS_EXIT, SYS_read, 10, 0, 0);
	if (hung) {
		fx_block(&F, P, 0, SYS_futex, SLOW);
		F.ts += 60 * MS;
		fx_run(&F, 0, P);
		fx_ev(&F, P, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	}
	F.ts += 200000;
	fx_ev(&F, P, TT_WAKING, PW, 0, 120, 0);
	fx_block(&F, P, PW, SYS_read, 8);
	fx_ev(&F, PW, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	fx_ev(&F, PW, TT_SK_DATA_READY, SKQ, 1, 0, 0);
	fx_ev(&F, PW, TT_WAKING, X, 0, 120, 0);
	fx_block(&F, PW, X, SYS_futex, IDLE2);
	fx_ev(&F, X, TT_SOCK_RECV, SKQ, 1, 0, 10);
	fx_ev(&F, X, TT_SYS_EXIT, SYS_read, 10, 0, 0);
	if (!hung) {
		/* the mutex is M's: X waits for it */
		fx_ev(&F, X, TT_SYS_ENTER, SYS_futex, MUTEX, 0x80, 2);
		fx_ev(&F, X, TT_SWITCH, 1, M, 120, 0);
		fx_ev(&F, M, TT_WAKING, X, 0, 120, 0);
		fx_ev(&F, M, TT_SYS_ENTER, SYS_futex, COND, 0x89, 0);
		fx_ev(&F, M, TT_SWITCH, 1, X, 120, 0);
		fx_ev(&F, X, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	}
	fx_ev(&F, X, TT_WAKING, M, 0, 120, 0);
	fx_block(&F, X, M, SYS_read, 7);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	fx_ev(&F, M, TT_SYS_ENTER, SYS_poll, POLLA, 0, 0);
	fx_ev(&F, M, TT_SWITCH, 1, 0, 120, 0);
	F.ts += 5 * MS;
}

Test(diag_peers, lock_release_only_delayed_the_path)
{
	struct diag_opts o = opts();
	struct diag *d = NULL;
	char *cause = NULL;

	fx_init(&F);
	fx_thread(&F, M, M, "main");
	fx_thread(&F, X, M, "io");
	fx_thread(&F, IN, M, "input");
	fx_thread(&F, P, P, "peer");
	fx_thread(&F, PW, P, "peer-worker");
	fx_ev(&F, M, TT_SYS_ENTER, SYS_poll, POLLA, 0, 0);
	fx_ev(&F, M, TT_SWITCH, 1, 0, 120, 0);
	fx_block(&F, X, 0, SYS_read, 7);
	fx_block(&F, P, 0, SYS_read, 8);
	fx_block(&F, PW, 0, SYS_futex, IDLE2);
	fx_block(&F, IN, 0, SYS_nanosleep, 0);
	F.ts += 5 * MS;
	for (int i = 0; i < 4; i++)
		lock_turn(0);
	lock_turn(1);
	struct graph *g = fx_build(&F, NULL);
	cr_assert_not_null(g);
	cr_assert_eq(diag_new(g, &o, &d, &cause), 0, "%s", cause);
	cr_assert_geq(diag_nhangs(d), 1);
	cr_assert_eq(diag_hang(d, 0)->th.tid, M);
	cr_assert_str_eq(diag_hang(d, 0)->wait.resource, "futex:0x7000");
	char got[256] = "";
	int seen_p = 0, seen_pw = 0;
	for (size_t i = 0; i < diag_npath(d, 0); i++) {
		const struct diag_step *s = diag_path(d, 0, i);
		snprintf(got + strlen(got), sizeof(got) - strlen(got), " %s",
		    s->th.comm);
		seen_p |= s->th.tid == P;
		seen_pw |= s->th.tid == PW;
	}
	cr_assert(seen_p && seen_pw, "the path goes through the reply:%s",
	    got);
	cr_assert_geq(diag_nculprits(d, 0), 1);
	cr_assert_eq(diag_culprit(d, 0, 0)->th.tid, P);
	diag_free(d);
	graph_free(g);
}

/* M's run, woken in its poll by Q's message on SKQ: it reads it, calls
   c1, is preempted by P, which sends on SKP; M reads that one (its
   vertex splits there: another peer), calls gettid and waits on LOCK
   until P wakes it after wait_us. Returns when M blocked on LOCK. */
static uint64_t
split_iteration(unsigned c1, uint64_t wait_us)
{
	fx_run(&F, 0, Q);
	fx_nap(&F, Q, SKQ, M, M);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_poll, 1, 0, 0);
	fx_ev(&F, M, TT_SOCK_RECV, SKQ, 1, 0, 10);
	fx_ev(&F, M, TT_SYS_ENTER, c1, 0, 0, 0);
	fx_ev(&F, M, TT_SYS_EXIT, c1, 0, 0, 0);
	fx_run(&F, M, P);
	fx_nap(&F, P, SKP, 0, M);
	fx_ev(&F, M, TT_SOCK_RECV, SKP, 1, 0, 10);
	fx_ev(&F, M, TT_SYS_ENTER, SYS_gettid, 0, 0, 0);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_gettid, 0, 0, 0);
	uint64_t at = fx_block(&F, M, 0, SYS_futex, LOCK);
	F.ts += wait_us * 1000;
	fx_run(&F, 0, P);
	fx_nap(&F, P, 0, M, M);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	fx_block(&F, M, 0, SYS_poll, POLLA);
	F.ts += 5 * MS;
	return at;
}

/* The diagnosis of M at time at over the graph of F (in *g): one hang,
   on LOCK. */
static struct diag *
hang_of_m(struct graph **g, uint64_t at)
{
	struct diag_opts o = opts();
	struct diag *d = NULL;

	cr_assert_not_null(*g = fx_build(&F, NULL));
	o.at = at;
	o.tid = M;
	cr_assert_eq(diag_new(*g, &o, &d, NULL), 0);
	cr_assert_eq(diag_nhangs(d), 1);
	cr_assert_str_eq(diag_hang(d, 0)->wait.resource, "futex:0x1000");
	return d;
}

/* A node's signature covers the whole run since the thread's previous
   wait, not only the vertex after the message that split the run: of
   two normal waits alike after the message, the one whose run began as
   the hang's did ranks first, though the other is more recent. */
Test(diag_peers, signature_spans_the_run)
{
	fx_init(&F);
	fx_thread(&F, M, M, "main");
	fx_thread(&F, P, P, "peer");
	fx_thread(&F, Q, Q, "other");
	fx_block(&F, M, 0, SYS_poll, POLLA);
	fx_block(&F, P, 0, SYS_nanosleep, 0);
	fx_block(&F, Q, 0, SYS_nanosleep, 0);
	F.ts += 5 * MS;
	uint64_t ta = split_iteration(SYS_getpid, 100);
	uint64_t tb = split_iteration(SYS_getuid, 100);
	uint64_t th = split_iteration(SYS_getpid, 50000);

	struct graph *g;
	struct diag *d = hang_of_m(&g, th + 20 * MS);

	cr_assert_eq(diag_nsimilar(d, 0), 2, "both normal waits are similar "
	    "(got %zu)", diag_nsimilar(d, 0));
	const struct diag_similar *s0 = diag_similar(d, 0, 0);
	const struct diag_similar *s1 = diag_similar(d, 0, 1);
	cr_assert(s0->start_ns <= ta && ta < s0->start_ns + s0->duration_ns,
	    "the wait whose run began with getpid first (got the one at "
	    "%llu; getpid's at %llu, getuid's at %llu)",
	    (unsigned long long)s0->start_ns, (unsigned long long)ta,
	    (unsigned long long)tb);
	cr_assert(s1->start_ns <= tb && tb < s1->start_ns + s1->duration_ns);
	cr_assert_eq(diag_picked(d, 0), 0);
	diag_free(d);
	graph_free(g);
}
