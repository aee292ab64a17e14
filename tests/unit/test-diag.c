/*
 * test-diag.c: criterion tests of the diagnosis (engine/diag*.c) on
 * traces built in code (tests/unit/graph-fixture.h): the three kinds of
 * spinning node, similar nodes chosen for their wait result or their
 * duration, a diff that finds the blocked thread, a circular wait broken
 * by a timeout, picking another similar node, recursion on a vertex and
 * the JSON object.
 */
#include <errno.h>
#include <criterion/criterion.h>

#include "graph-fixture.h"

#define MS 1000000ULL

static struct fx F;

enum { M = 100, W = 101, IN = 102, B = 300 };
#define LOCK 0x1000
#define IDLE 0x2000
#define SLOW 0x3000
#define POLLA 0x4000
#define FB 0x5000

/* A time inside the last long wait of M (for --at). */
static uint64_t
diag_at_probe(const struct graph *g)
{
	uint32_t ti = graph_thread_find(g, M);
	const struct graph_thread *t = graph_thread(g, ti);
	uint64_t best = 0, at = 0;

	for (uint32_t i = 0; i + 1 < t->nevents; i++) {
		const struct graph_event *e = graph_event(g, ti, i);
		if (e->type != TT_SWITCH || !(e->flags & GRAPH_EVF_WAIT))
			continue;
		for (uint32_t j = i + 1; j < t->nevents; j++) {
			const struct graph_event *r = graph_event(g, ti, j);
			if (r->type != GRAPH_EV_RUN)
				continue;
			if (e->aux == SYS_futex && r->ts - e->ts >= best) {
				best = r->ts - e->ts;
				at = e->ts + best / 2;
			}
			break;
		}
	}
	return at;
}


static struct diag_opts
opts(void)
{
	struct diag_opts o = { .threshold_ns = 10 * MS };
	return o;
}

/* M waits on LOCK; W wakes it after wait_us. W idles on IDLE. */
static void
iteration(int hung, uint64_t wait_us)
{
	/* M comes out of its event loop (poll), woken by the input */
	fx_run(&F, 0, IN);
	fx_ev(&F, IN, TT_WAKING, M, 0, 120, 0);
	fx_block(&F, IN, M, SYS_nanosleep, 0);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_poll, 1, 0, 0);
	/* it asks W for something and waits on LOCK */
	fx_ev(&F, M, TT_WAKING, W, 0, 120, 0);
	fx_block(&F, M, W, SYS_futex, LOCK);
	fx_ev(&F, W, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	if (hung) {
		/* W blocks on SLOW for most of the hang */
		fx_block(&F, W, 0, SYS_futex, SLOW);
		F.ts += wait_us * 1000;
		fx_run(&F, 0, W);
		fx_ev(&F, W, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	} else {
		F.ts += wait_us * 1000;
	}
	fx_ev(&F, W, TT_WAKING, M, 0, 120, 0);
	fx_block(&F, W, M, SYS_futex, IDLE);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	/* back to the loop: idle for a while */
	fx_ev(&F, M, TT_SYS_ENTER, SYS_poll, POLLA, 0, 0);
	fx_ev(&F, M, TT_SWITCH, 1, 0, 120, 0);
	F.ts += 5 * MS;
}

static struct graph *
blocked_fixture(void)
{
	fx_init(&F);
	fx_thread(&F, M, M, "main");
	fx_thread(&F, W, M, "worker");
	fx_thread(&F, IN, M, "input");
	/* everybody starts blocked: M in poll, W on IDLE, input asleep */
	fx_ev(&F, M, TT_SYS_ENTER, SYS_poll, POLLA, 0, 0);
	fx_ev(&F, M, TT_SWITCH, 1, 0, 120, 0);
	fx_ev(&F, W, TT_SYS_ENTER, SYS_futex, IDLE, 0, 0);
	fx_ev(&F, W, TT_SWITCH, 1, 0, 120, 0);
	fx_ev(&F, IN, TT_SYS_ENTER, SYS_nanosleep, 0, 0, 0);
	fx_ev(&F, IN, TT_SWITCH, 1, 0, 120, 0);
	F.ts += 5 * MS;
	for (int i = 0; i < 4; i++)
		iteration(0, 100 + 20 * (uint64_t)i);
	iteration(1, 50000);
	return fx_build(&F, NULL);
}

Test(diag, blocked_hang_similar_and_culprit)
{
	struct graph *g = blocked_fixture();
	struct diag_opts o = opts();
	struct diag *d = NULL;
	char *cause = NULL;

	cr_assert_not_null(g);
	cr_assert_eq(diag_new(g, &o, &d, &cause), 0, "%s", cause);
	cr_assert_geq(diag_nhangs(d), 1);
	const struct diag_hang *h = diag_hang(d, 0);
	cr_assert_eq(h->th.tid, M);
	cr_assert_eq(h->kind, DIAG_BLOCKED);
	cr_assert_eq(h->source, DIAG_SRC_KERNEL);
	cr_assert_str_eq(h->wait.type, "futex");
	cr_assert_geq(h->end_ns - h->start_ns, 50 * MS);
	/* the four normal waits on LOCK, most recent first */
	cr_assert_eq(diag_nsimilar(d, 0), 4);
	for (size_t i = 1; i < 4; i++)
		cr_assert_gt(diag_similar(d, 0, i - 1)->start_ns,
		    diag_similar(d, 0, i)->start_ns);
	cr_assert_str_eq(diag_similar(d, 0, 0)->differs, "duration");
	cr_assert_eq(diag_picked(d, 0), 0);
	cr_assert(diag_picked_by_default(d, 0));
	/* the normal path: M woken by W */
	cr_assert_geq(diag_npath(d, 0), 2);
	cr_assert_eq(diag_path(d, 0, 0)->th.tid, M);
	cr_assert_eq(diag_path(d, 0, 1)->th.tid, W);
	cr_assert_eq(diag_path(d, 0, 1)->edge, GE_WAKEUP);
	/* the diff: W blocked on SLOW (not its idle wait) */
	cr_assert_geq(diag_nculprits(d, 0), 1);
	const struct diag_culprit *c = diag_culprit(d, 0, 0);
	cr_assert_eq(c->depth, 1);
	cr_assert_eq(c->th.tid, W);
	cr_assert_eq(c->kind, DIAG_BLOCKED);
	cr_assert_str_eq(c->wait.resource, "futex:0x3000");
	cr_assert_null(diag_cycle(d, 0));
	/* the critical path of the hang itself: woken by W */
	cr_assert_geq(diag_ncritical(d, 0), 2);
	cr_assert_eq(diag_critical(d, 0, 1)->th.tid, W);
	diag_free(d);
	graph_free(g);
}

Test(diag, pick_another_similar_node)
{
	struct graph *g = blocked_fixture();
	struct diag_opts o = opts();
	struct diag *d = NULL;

	o.pick = 2;
	cr_assert_eq(diag_new(g, &o, &d, NULL), 0);
	cr_assert_eq(diag_picked(d, 0), 1);
	cr_assert_not(diag_picked_by_default(d, 0));
	uint32_t first = diag_path(d, 0, 0)->node;
	cr_assert_eq(diag_pick(d, 0, 3), 0);
	cr_assert_eq(diag_picked(d, 0), 3);
	cr_assert_neq(diag_path(d, 0, 0)->node, first);
	cr_assert_eq(diag_culprit(d, 0, 0)->th.tid, W);
	cr_assert_eq(diag_pick(d, 0, 4), GRAPH_ERANGE);
	size_t notes = diag_nnotes(d, 0), dead = diag_ndead_ends(d, 0);
	cr_assert_eq(diag_pick(d, 0, 3), 0);
	cr_assert_eq(diag_nnotes(d, 0), notes, "picking again adds nothing");
	cr_assert_eq(diag_ndead_ends(d, 0), dead);
	diag_free(d);
	/* out of range: the first, and a note saying so */
	o.pick = 99;
	cr_assert_eq(diag_new(g, &o, &d, NULL), 0);
	cr_assert_eq(diag_picked(d, 0), 0);
	cr_assert_geq(diag_nnotes(d, 0), 1);
	cr_assert_not_null(strstr(diag_note(d, 0, diag_nnotes(d, 0) - 1),
	    "out of range"));
	diag_free(d);
	graph_free(g);
}

Test(diag, selectors_and_errors)
{
	struct graph *g = blocked_fixture();
	struct diag_opts o = opts();
	struct diag *d = NULL;
	char *cause = NULL;

	o.tid = 4242;
	cr_assert_eq(diag_new(g, &o, &d, &cause), GRAPH_ERANGE);
	cr_assert_not_null(cause);
	free(cause);
	cause = NULL;
	o = opts();
	o.comm = "nobody";
	cr_assert_eq(diag_new(g, &o, &d, &cause), GRAPH_ERANGE);
	free(cause);
	/* the worker alone: its long wait on SLOW has no short twin, but
	   the user says it hung: that wait is reported */
	o = opts();
	o.tid = W;
	cr_assert_eq(diag_new(g, &o, &d, NULL), 0);
	cr_assert_eq(diag_nhangs(d), 1);
	cr_assert_eq(diag_hang(d, 0)->th.tid, W);
	cr_assert_eq(diag_hang(d, 0)->kind, DIAG_BLOCKED);
	diag_free(d);
	/* --at inside the hang finds the same wait */
	o = opts();
	cr_assert_eq(diag_new(g, &o, &d, NULL), 0);
	uint64_t at = diag_hang(d, 0)->start_ns + 10 * MS;
	uint32_t node = diag_hang(d, 0)->node;
	diag_free(d);
	o.at = at;
	o.comm = "main";
	cr_assert_eq(diag_new(g, &o, &d, NULL), 0);
	cr_assert_eq(diag_nhangs(d), 1);
	cr_assert_eq(diag_hang(d, 0)->source, DIAG_SRC_USER);
	cr_assert_eq(diag_hang(d, 0)->node, node);
	cr_assert_eq(diag_hang(d, 0)->kind, DIAG_BLOCKED);
	diag_free(d);
	graph_free(g);
}

/* A wait that timed out: one earlier twin as long but successful (differs
   in result), one short one that also timed out (differs in duration). */
Test(diag, similar_by_result_and_by_duration)
{
	fx_init(&F);
	fx_thread(&F, M, M, "main");
	fx_thread(&F, W, M, "worker");
	/* twin 1: 40 ms, result 0 */
	fx_block(&F, M, 0, SYS_futex, LOCK);
	F.ts += 40 * MS;
	fx_run(&F, 0, M);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	fx_ev(&F, M, TT_SYS_ENTER, SYS_poll, POLLA, 0, 0);
	fx_ev(&F, M, TT_SWITCH, 1, 0, 120, 0);
	F.ts += 200 * MS;
	fx_run(&F, 0, M);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_poll, 1, 0, 0);
	/* twin 2: 1 ms, timed out */
	fx_block(&F, M, 0, SYS_futex, LOCK);
	F.ts += 1 * MS;
	fx_run(&F, 0, M);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_futex, (uint64_t)-ETIMEDOUT, 0, 0);
	fx_ev(&F, M, TT_SYS_ENTER, SYS_poll, POLLA, 0, 0);
	fx_ev(&F, M, TT_SWITCH, 1, 0, 120, 0);
	F.ts += 200 * MS;
	fx_run(&F, 0, M);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_poll, 1, 0, 0);
	/* the hang: 45 ms, timed out */
	fx_block(&F, M, 0, SYS_futex, LOCK);
	F.ts += 45 * MS;
	fx_run(&F, 0, M);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_futex, (uint64_t)-ETIMEDOUT, 0, 0);
	fx_ev(&F, M, TT_SYS_ENTER, SYS_poll, POLLA, 0, 0);
	fx_ev(&F, M, TT_SWITCH, 1, 0, 120, 0);
	F.ts += 200 * MS;
	fx_ev(&F, W, TT_SYS_ENTER, SYS_getpid, 0, 0, 0);

	struct graph *g = fx_build(&F, NULL);
	struct diag_opts o = opts();
	struct diag *d = NULL;
	cr_assert_not_null(g);
	o.threshold_ns = 30 * MS;
	o.at = diag_at_probe(g);
	cr_assert_eq(diag_new(g, &o, &d, NULL), 0);
	cr_assert_eq(diag_nhangs(d), 1);
	const struct diag_hang *h = diag_hang(d, 0);
	cr_assert_eq(h->kind, DIAG_BLOCKED);
	cr_assert(h->wait.timed_out);
	cr_assert_eq(h->wait.timeout_ns, h->end_ns - h->start_ns,
	    "a timed-out futex wait: its length is the timeout (%llu, %llu)",
	    (unsigned long long)h->wait.timeout_ns,
	    (unsigned long long)(h->end_ns - h->start_ns));
	cr_assert_eq(diag_nsimilar(d, 0), 2);
	/* most recent first: the short one that timed out too */
	cr_assert_str_eq(diag_similar(d, 0, 0)->differs, "duration");
	cr_assert_str_eq(diag_similar(d, 0, 1)->differs, "result");
	cr_assert_eq(diag_similar(d, 0, 1)->wait.result, 0);
	diag_free(d);
	graph_free(g);
}

/* A (browser) waits on LOCK for B (renderer), which waits on FB for A:
   broken by A's timeout. When hung == 2, B (woken on the other CPU)
   blocks before A does. */
static void
cycle_iteration(int hung)
{
	fx_run(&F, 0, M);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_poll, 1, 0, 0);
	fx_ev(&F, M, TT_WAKING, B, 0, 120, 0);
	if (hung == 2) {
		F.cpu = 1;
		fx_run(&F, 0, B);
		fx_ev(&F, B, TT_SYS_EXIT, SYS_poll, 1, 0, 0);
		fx_block(&F, B, 0, SYS_futex, FB);
		F.cpu = 0;
		fx_block(&F, M, 0, SYS_futex, LOCK);
	} else {
		fx_block(&F, M, B, SYS_futex, LOCK);
		fx_ev(&F, B, TT_SYS_EXIT, SYS_poll, 1, 0, 0);
	}
	if (!hung) {
		fx_ev(&F, B, TT_WAKING, M, 0, 120, 0);
		fx_block(&F, B, M, SYS_futex, FB);
		fx_ev(&F, M, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	} else {
		if (hung == 1)
			fx_block(&F, B, 0, SYS_futex, FB);
		F.ts += 50 * MS;
		fx_run(&F, 0, M);
		fx_ev(&F, M, TT_SYS_EXIT, SYS_futex, (uint64_t)-ETIMEDOUT, 0,
		    0);
	}
	fx_ev(&F, M, TT_WAKING, B, 0, 120, 0);
	fx_ev(&F, M, TT_SYS_ENTER, SYS_poll, POLLA, 0, 0);
	fx_ev(&F, M, TT_SWITCH, 1, B, 120, 0);
	fx_ev(&F, B, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	fx_ev(&F, B, TT_SYS_ENTER, SYS_poll, POLLA + 1, 0, 0);
	fx_ev(&F, B, TT_SWITCH, 1, 0, 120, 0);
	F.ts += 5 * MS;
}

/* Both threads in their event loops, three normal turns, then the turn
   cycle_iteration(hung). */
static void
cycle_fixture(int hung)
{
	fx_init(&F);
	fx_thread(&F, M, M, "browser");
	fx_thread(&F, B, B, "renderer");
	fx_ev(&F, M, TT_SYS_ENTER, SYS_poll, POLLA, 0, 0);
	fx_ev(&F, M, TT_SWITCH, 1, 0, 120, 0);
	fx_ev(&F, B, TT_SYS_ENTER, SYS_poll, POLLA + 1, 0, 0);
	fx_ev(&F, B, TT_SWITCH, 1, 0, 120, 0);
	for (int i = 0; i < 3; i++)
		cycle_iteration(0);
	cycle_iteration(hung);
}

Test(diag, cycle_broken_by_timeout)
{
	cycle_fixture(1);
	struct graph *g = fx_build(&F, NULL);
	struct diag_opts o = opts();
	struct diag *d = NULL;
	cr_assert_not_null(g);
	cr_assert_eq(diag_new(g, &o, &d, NULL), 0);
	cr_assert_geq(diag_nhangs(d), 1);
	cr_assert_eq(diag_hang(d, 0)->th.tid, M, "the hang explained by "
	    "the other comes first");
	cr_assert_eq(diag_nculprits(d, 0), 2);
	const struct diag_culprit *c1 = diag_culprit(d, 0, 0);
	const struct diag_culprit *c2 = diag_culprit(d, 0, 1);
	cr_assert_eq(c1->th.tid, B);
	cr_assert_eq(c1->depth, 1);
	cr_assert_str_eq(c1->wait.resource, "futex:0x5000");
	cr_assert_eq(c2->th.tid, M);
	cr_assert_eq(c2->depth, 2);
	cr_assert(c2->repeat);
	const struct diag_cycle *cy = diag_cycle(d, 0);
	cr_assert_not_null(cy);
	cr_assert_eq(cy->ntids, 2);
	cr_assert_eq(cy->tids[0], M);
	cr_assert_eq(cy->tids[1], B);
	cr_assert_eq(cy->timeout_tid, M);
	cr_assert_geq(cy->timeout_ns, 50 * MS);
	cr_assert_lt(cy->timeout_ns, 51 * MS);
	diag_free(d);
	graph_free(g);
}

/*
 * The same cycle, but B blocked first: which of two threads waiting for
 * each other blocks first is a race. The hang broken by its own timeout
 * (M) still comes first, in the whole graph's report and in the
 * streaming search's.
 */
Test(diag, cycle_first_blocked_is_not_first)
{
	cycle_fixture(2);
	struct graph *g = fx_build(&F, NULL);
	struct diag_opts o = opts();
	struct diag *d = NULL;
	cr_assert_not_null(g);
	cr_assert_eq(diag_new(g, &o, &d, NULL), 0);
	cr_assert_eq(diag_nhangs(d), 2, "both threads hang");
	cr_assert_lt(diag_hang(d, 1)->start_ns, diag_hang(d, 0)->start_ns,
	    "B blocked first");
	cr_assert_eq(diag_hang(d, 0)->th.tid, M, "the hang broken by its "
	    "timeout comes first");
	cr_assert(diag_hang(d, 0)->wait.timed_out);
	diag_free(d);
	graph_free(g);

	char dir[] = "/tmp/argus-cycle-XXXXXX", *out = NULL, *cause = NULL;
	size_t n = 0;
	struct trace_reader *r = fx_store(&F, dir);
	FILE *f = open_memstream(&out, &n);
	cr_assert_not_null(r);
	cr_assert_not_null(f);
	cr_assert_eq(diag_search(r, NULL, &o, 0, F.ev[0].ts, f, NULL,
	    NULL, &cause), 0,
	    "%s", cause);
	fclose(f);
	cr_assert(strncmp(out, "hang 1: browser", 15) == 0,
	    "the search's report starts with %.40s", out);
	cr_assert(strstr(out, "hang 2: renderer") != NULL);
	free(out);
	cr_assert_eq(fx_unstore(r, dir), 0);
}

/* M computes for 50 ms after the input thread woke it. */
Test(diag, busy_walks_back_to_the_sender)
{
	fx_init(&F);
	fx_thread(&F, M, M, "main");
	fx_thread(&F, IN, M, "input");
	fx_ev(&F, M, TT_SYS_ENTER, SYS_poll, POLLA, 0, 0);
	fx_ev(&F, M, TT_SWITCH, 1, 0, 120, 0);
	for (int i = 0; i < 3; i++) {
		fx_run(&F, 0, IN);
		fx_ev(&F, IN, TT_WAKING, M, 0, 120, 0);
		fx_block(&F, IN, M, SYS_nanosleep, 0);
		fx_ev(&F, M, TT_SYS_EXIT, SYS_poll, 1, 0, 0);
		F.ts += (i == 2 ? 25 : 1) * MS;
		fx_ev(&F, M, TT_SWITCH, 0, 0, 120, 0);	/* preempted */
		fx_run(&F, 0, M);
		F.ts += (i == 2 ? 25 : 1) * MS;
		fx_ev(&F, M, TT_SYS_ENTER, SYS_poll, POLLA, 0, 0);
		fx_ev(&F, M, TT_SWITCH, 1, 0, 120, 0);
		F.ts += 5 * MS;
	}
	struct graph *g = fx_build(&F, NULL);
	struct diag_opts o = opts();
	struct diag *d = NULL;
	cr_assert_not_null(g);
	cr_assert_eq(diag_new(g, &o, &d, NULL), 0);
	cr_assert_eq(diag_nhangs(d), 1);
	const struct diag_hang *h = diag_hang(d, 0);
	cr_assert_eq(h->kind, DIAG_BUSY);
	cr_assert_geq(h->end_ns - h->start_ns, 50 * MS);
	const struct diag_thread *ct = diag_cause_thread(d, 0);
	cr_assert_not_null(ct);
	cr_assert_eq(ct->tid, IN);
	cr_assert_eq(diag_nculprits(d, 0), 0);
	diag_free(d);
	graph_free(g);
}

/* M polls a flag with sched_yield for 30 ms. */
Test(diag, yield_loop_and_watch_hint)
{
	fx_init(&F);
	fx_thread(&F, M, M, "main");
	fx_run(&F, 0, M);
	for (int i = 0; i < 30; i++) {
		fx_ev(&F, M, TT_SYS_ENTER, SYS_sched_yield, 0, 0, 0);
		fx_ev(&F, M, TT_SWITCH, 0, 0, 120, 0);
		fx_run(&F, 0, M);
		fx_ev(&F, M, TT_SYS_EXIT, SYS_sched_yield, 0, 0, 0);
		F.ts += 1 * MS;
	}
	fx_ev(&F, M, TT_SYS_ENTER, SYS_poll, POLLA, 0, 0);
	fx_ev(&F, M, TT_SWITCH, 1, 0, 120, 0);
	struct graph *g = fx_build(&F, NULL);
	struct diag_opts o = opts();
	struct diag *d = NULL;
	cr_assert_not_null(g);
	cr_assert_eq(diag_new(g, &o, &d, NULL), 0);
	cr_assert_eq(diag_nhangs(d), 1);
	const struct diag_hang *h = diag_hang(d, 0);
	cr_assert_eq(h->kind, DIAG_YIELD);
	cr_assert_geq(h->yields, 30);
	cr_assert_not_null(diag_watch_hint(d, 0));
	cr_assert_not_null(strstr(diag_watch_hint(d, 0), "argus watch"));
	cr_assert_geq(diag_ndead_ends(d, 0), 1, "no flag write recorded");
	diag_free(d);
	graph_free(g);
}

Test(diag, add_node_and_reports)
{
	struct graph *g = blocked_fixture();
	struct diag_opts o = opts();
	struct diag *d = NULL;
	size_t h;
	char *buf = NULL;
	size_t len = 0;

	cr_assert_eq(diag_new(g, &o, &d, NULL), 0);
	size_t n = diag_nhangs(d);
	uint32_t v = diag_culprit(d, 0, 0)->node;
	cr_assert_eq(diag_add_node(d, v, &h), 0);
	cr_assert_eq(h, n);
	cr_assert_eq(diag_hang(d, h)->source, DIAG_SRC_NODE);
	cr_assert_eq(diag_hang(d, h)->th.tid, W);
	cr_assert_eq(diag_hang(d, h)->kind, DIAG_BLOCKED);
	cr_assert_eq(diag_picked(d, h), -1, "no twin of the slow wait");
	cr_assert_geq(diag_ndead_ends(d, h), 1);
	cr_assert_eq(diag_add_node(d, (uint32_t)graph_nvertices(g), &h),
	    GRAPH_ERANGE);
	FILE *f = open_memstream(&buf, &len);
	diag_write_json(d, f);
	fclose(f);
	cr_assert_eq(strncmp(buf, "{\"threshold_ns\":10000000,\"hangs\":[{", 35),
	    0, "%s", buf);
	cr_assert_not_null(strstr(buf, "\"culprits\":[{\"depth\":1,\"pid\":100,"
	    "\"tid\":101,\"comm\":\"worker\""));
	cr_assert_not_null(strstr(buf, "\"cycle\":null"));
	cr_assert_eq(buf[len - 1], '\n');
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	diag_write_text(d, f, graph_first_ts(g));
	fclose(f);
	cr_assert_eq(strncmp(buf, "hang 1: main (100) blocked for ", 31), 0,
	    "%s", buf);
	cr_assert_not_null(strstr(buf, "1. worker (101, process main 100) blocked"));
	free(buf);
	diag_free(d);
	graph_free(g);
}

/* The same loop ended by a flag write (a watchpoint) of a worker that
   slept through it: the worker is the culprit. */
Test(diag, yield_loop_flag_writer)
{
	fx_init(&F);
	fx_thread(&F, M, M, "main");
	fx_thread(&F, W, M, "worker");
	fx_ev(&F, W, TT_SYS_ENTER, SYS_read, 9, 0, 0);
	fx_ev(&F, W, TT_SWITCH, 1, 0, 120, 0);
	fx_run(&F, 0, M);
	for (int i = 0; i < 30; i++) {
		fx_ev(&F, M, TT_SYS_ENTER, SYS_sched_yield, 0, 0, 0);
		fx_ev(&F, M, TT_SWITCH, 0, 0, 120, 0);
		fx_run(&F, 0, M);
		fx_ev(&F, M, TT_SYS_EXIT, SYS_sched_yield, 0, 0, 0);
		F.ts += 1 * MS;
	}
	fx_run(&F, 0, W);
	fx_ev(&F, W, TT_SYS_EXIT, SYS_read, 8, 0, 0);
	fx_user(&F, W, TU_FLAG_WRITE, 0x601040);
	fx_ev(&F, M, TT_SYS_ENTER, SYS_poll, POLLA, 0, 0);
	fx_ev(&F, M, TT_SWITCH, 1, 0, 120, 0);
	struct graph *g = fx_build(&F, NULL);
	struct diag_opts o = opts();
	struct diag *d = NULL;
	cr_assert_not_null(g);
	cr_assert_eq(diag_new(g, &o, &d, NULL), 0);
	cr_assert_geq(diag_nhangs(d), 1);
	cr_assert_eq(diag_hang(d, 0)->kind, DIAG_YIELD);
	cr_assert_eq(diag_nculprits(d, 0), 1);
	const struct diag_culprit *c = diag_culprit(d, 0, 0);
	cr_assert_eq(c->th.tid, W);
	cr_assert_eq(c->kind, DIAG_BLOCKED);
	cr_assert_str_eq(c->wait.syscall, "read");
	diag_free(d);
	graph_free(g);
}

/*
 * A thread whose switch back in after a short socket read was lost, then
 * blocked long on a semaphore: its wait is the semaphore (the user-level
 * wait around the futex), not the read that ended unseen.
 */
Test(diag, wait_after_lost_switch_in)
{
	enum { R = 200 };
	const uint64_t sem = 0x7f0000001000ULL;

	fx_init(&F);
	fx_thread(&F, R, R, "renderer");
	uint64_t t0 = fx_run(&F, 0, R);
	fx_block(&F, R, 0, SYS_read, 9);
	/* its switch back in is lost: it just goes on */
	fx_ev(&F, R, TT_SYS_EXIT, SYS_read, 12, 0, 0);
	fx_ev(&F, R, TT_USER, TU_LOCK_WAIT, sem, 3, 10000 * MS);
	fx_block(&F, R, 0, SYS_futex, sem);
	F.ts += 50 * MS;
	fx_run(&F, 0, R);
	fx_ev(&F, R, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	fx_ev(&F, R, TT_USER, TU_LOCK_ACQUIRED, sem, 3, 0);
	/* the watchdog's mark: unresponsive since t0 */
	fx_ev(&F, R, TT_USER, TU_HANG_END, R, F.ts - t0, t0);
	fx_block(&F, R, 0, SYS_poll, 0);
	F.ts += 5 * MS;
	fx_run(&F, 0, R);
	struct graph *g = fx_build(&F, NULL);
	cr_assert_not_null(g);
	struct diag_opts o = opts();
	struct diag *d = NULL;
	cr_assert_eq(diag_new(g, &o, &d, NULL), 0);
	cr_assert_eq(diag_nhangs(d), 1);
	const struct diag_hang *h = diag_hang(d, 0);
	cr_assert_eq(h->source, DIAG_SRC_MARK);
	cr_assert_eq(h->kind, DIAG_BLOCKED);
	cr_assert_str_eq(h->wait.type, "semaphore");
	cr_assert_str_eq(h->wait.syscall, "futex");
	cr_assert_str_eq(h->wait.resource, "semaphore:0x7f0000001000");
	cr_assert_geq(h->end_ns - h->start_ns, 50 * MS);
	diag_free(d);
	graph_free(g);
}

/*
 * M's long wait is ended by a kernel worker running work that W queued
 * (and W also woke the worker): the wake-up is attributed to W through
 * the work, not through the worker's own wake-up; also when M's switch
 * back in was lost (lost_m).
 */
static void
work_wakeup(int lost_m)
{
	enum { K = 400 };
	const uint64_t work = 0xffff000000001000ULL;

	fx_init(&F);
	fx_thread(&F, M, M, "main");
	fx_thread(&F, W, W, "child");
	fx_thread(&F, K, 0, "kworker/0:1");
	F.th[F.nth - 1].flags = TRACE_THREAD_KERNEL;
	fx_run(&F, 0, K);
	fx_ev(&F, K, TT_SWITCH, 1, 0, 120, 0);
	uint64_t t0 = fx_run(&F, 0, M);
	fx_block(&F, M, 0, SYS_read, 8);
	fx_run(&F, 0, W);
	fx_block(&F, W, 0, SYS_read, 6);
	F.ts += 50 * MS;
	fx_run(&F, 0, W);
	fx_ev(&F, W, TT_SYS_EXIT, SYS_read, 8, 0, 0);
	fx_ev(&F, W, TT_SYS_ENTER, SYS_write, 9, 0, 0);
	fx_ev(&F, W, TT_WQ_QUEUE, work, 0, 0, 0);
	fx_ev(&F, W, TT_WAKING, K, 0, 120, 0);
	fx_ev(&F, W, TT_SYS_EXIT, SYS_write, 1, 0, 0);
	/* the worker's switch in is lost (as from idle on some CPUs):
	   its wake-up lands on the work's start too */
	fx_block(&F, W, 0, SYS_poll, 0);
	fx_ev(&F, K, TT_WQ_START, work, 0, 0, 0);
	fx_ev(&F, K, TT_WAKING, M, 0, 120, 0);
	fx_ev(&F, K, TT_WQ_END, work, 0, 0, 0);
	fx_ev(&F, K, TT_SWITCH, 1, lost_m ? 0 : M, 120, 0);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_read, 1, 0, 0);
	fx_ev(&F, M, TT_USER, TU_HANG_END, M, F.ts - t0, t0);
	fx_block(&F, M, 0, SYS_poll, POLLA);
	struct graph *g = fx_build(&F, NULL);
	cr_assert_not_null(g);
	struct diag_opts o = opts();
	struct diag *d = NULL;
	cr_assert_eq(diag_new(g, &o, &d, NULL), 0);
	cr_assert_geq(diag_nhangs(d), 1);
	cr_assert_eq(diag_hang(d, 0)->th.tid, M);
	int found = 0;
	for (size_t i = 0; i < diag_nwakeups(d, 0); i++) {
		const struct diag_wakeup *w = diag_wakeup(d, 0, i);
		if (w->woken.tid == M) {
			cr_assert_eq(w->via, GE_WORK);
			cr_assert_eq(w->cause.tid, W);
			found = 1;
		}
	}
	cr_assert(found, "the wake-up of main is attributed");
	diag_free(d);
	graph_free(g);
}

Test(diag, wakeup_through_work_not_waker)
{
	work_wakeup(0);
}

Test(diag, wakeup_with_lost_switch_in)
{
	work_wakeup(1);
}

/*
 * Found in kernel events alone: a thread that polled once (a start
 * barrier) and then computed is no event loop, so the hang of a real
 * event loop comes first even when it starts later.
 */
Test(diag, one_poll_is_no_event_loop)
{
	enum { X = 500 };

	fx_init(&F);
	fx_thread(&F, M, M, "app");
	fx_thread(&F, X, X, "bench");
	/* bench: one poll, then 60 ms of computing */
	fx_run(&F, 0, X);
	fx_block(&F, X, 0, SYS_poll, 0x77);
	F.ts += 1 * MS;
	fx_run(&F, 0, X);
	fx_ev(&F, X, TT_SYS_EXIT, SYS_poll, 1, 0, 0);
	/* app: an event loop with short iterations */
	for (int i = 0; i < 4; i++) {
		fx_run(&F, 0, M);
		fx_ev(&F, M, TT_SYS_EXIT, SYS_poll, 1, 0, 0);
		fx_block(&F, M, 0, SYS_poll, POLLA);
		F.ts += 1 * MS;
	}
	/* then app computes 60 ms out of its loop */
	fx_run(&F, 0, M);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_poll, 1, 0, 0);
	F.ts += 60 * MS;
	fx_block(&F, M, 0, SYS_poll, POLLA);
	fx_block(&F, X, 0, SYS_futex, 0x99);
	F.ts += 5 * MS;
	struct graph *g = fx_build(&F, NULL);
	cr_assert_not_null(g);
	struct diag_opts o = opts();
	struct diag *d = NULL;
	cr_assert_eq(diag_new(g, &o, &d, NULL), 0);
	cr_assert_geq(diag_nhangs(d), 2);
	cr_assert_eq(diag_hang(d, 0)->th.tid, M);
	cr_assert_eq(diag_hang(d, 0)->kind, DIAG_BUSY);
	cr_assert_eq(diag_hang(d, 1)->th.tid, X);
	diag_free(d);
	graph_free(g);
}

/* One key of a terminal reading its child through a pty master (fd 8, a
   tty): the child answers through a kernel worker, after 50 ms when
   hung. */
static void
pty_iteration(int hung, uint32_t K, uint64_t work)
{
	fx_run(&F, 0, M);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_poll, 1, 0, 0);
	fx_ev(&F, M, TT_SYS_ENTER, SYS_write, 8, 0, 0);
	fx_ev(&F, M, TT_WAKING, W, 0, 120, 0);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_write, 1, 0, 0);
	fx_block(&F, M, W, SYS_read, 8);
	fx_ev(&F, W, TT_SYS_EXIT, SYS_read, 1, 0, 0);
	if (hung) {
		fx_block(&F, W, 0, SYS_nanosleep, 0);
		F.ts += 50 * MS;
		fx_run(&F, 0, W);
		fx_ev(&F, W, TT_SYS_EXIT, SYS_nanosleep, 0, 0, 0);
	}
	fx_ev(&F, W, TT_SYS_ENTER, SYS_write, 9, 0, 0);
	fx_ev(&F, W, TT_WQ_QUEUE, work, 0, 0, 0);
	fx_ev(&F, W, TT_WAKING, K, 0, 120, 0);
	fx_ev(&F, W, TT_SYS_EXIT, SYS_write, 1, 0, 0);
	fx_block(&F, W, K, SYS_read, 10);
	fx_ev(&F, K, TT_WQ_START, work, 0, 0, 0);
	fx_ev(&F, K, TT_WAKING, M, 0, 120, 0);
	fx_ev(&F, K, TT_WQ_END, work, 0, 0, 0);
	fx_ev(&F, K, TT_SWITCH, 1, M, 120, 0);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_read, 1, 0, 0);
	fx_block(&F, M, 0, SYS_poll, POLLA);
	F.ts += 5 * MS;
}

/*
 * Under the default rules a tty read is an input event, and a pty
 * master is a tty: the normal node itself holds that "input". Its
 * wake-up chain is still followed back to the child that answered.
 */
Test(diag, slice_goes_past_a_pty_read)
{
	enum { K = 400 };
	const uint64_t work = 0xffff000000002000ULL;
	struct rules *rs = rules_new();

	cr_assert_eq(rules_add_defaults(rs, NULL), 0);
	fx_init(&F);
	fx_thread(&F, M, M, "term");
	fx_thread(&F, W, W, "child");
	fx_thread(&F, K, 0, "kworker/0:1");
	F.th[F.nth - 1].flags = TRACE_THREAD_KERNEL;
	fx_ev(&F, 0, TT_FD, M, 8, TFD_TTY, 91);
	fx_ev(&F, 0, TT_FD, W, 10, TFD_PIPE, 92);
	fx_run(&F, 0, K);
	fx_ev(&F, K, TT_SWITCH, 1, 0, 120, 0);
	fx_run(&F, 0, W);
	fx_block(&F, W, 0, SYS_read, 10);
	fx_run(&F, 0, M);
	fx_block(&F, M, 0, SYS_poll, POLLA);
	for (int i = 0; i < 4; i++)
		pty_iteration(0, K, work);
	uint64_t t0 = F.ts;
	pty_iteration(1, K, work);
	fx_run(&F, 0, M);
	fx_ev(&F, M, TT_USER, TU_HANG_END, M, 60 * MS, t0);
	struct graph *g = fx_build(&F, rs);
	cr_assert_not_null(g);
	struct diag_opts o = opts();
	struct diag *d = NULL;
	cr_assert_eq(diag_new(g, &o, &d, NULL), 0);
	cr_assert_geq(diag_nhangs(d), 1);
	cr_assert_eq(diag_hang(d, 0)->th.tid, M);
	cr_assert_eq(diag_hang(d, 0)->kind, DIAG_BLOCKED);
	cr_assert_str_eq(diag_hang(d, 0)->wait.type, "tty");
	int child = 0;
	for (size_t i = 1; i < diag_npath(d, 0); i++)
		child |= diag_path(d, 0, i)->th.tid == W;
	cr_assert(child, "the path reaches the child (%zu steps)",
	    diag_npath(d, 0));
	diag_free(d);
	graph_free(g);
	rules_free(rs);
}
