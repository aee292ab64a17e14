/*
 * test-diag-recurse.c: criterion tests of the culprit recursion
 * (engine/diag-recurse.c) on traces built in code: every blocked culprit
 * of a depth is followed (each with its parent), a branch that comes
 * back to the hung thread is a cycle while another branch is still
 * followed, a thread two branches wait on is a culprit once, and two
 * culprits waiting for each other across branches are a cycle.
 *
 * In each normal iteration the input wakes M, M asks A and waits on
 * LOCK, A asks B, B answers M: the normal path is M <- B <- A. In the
 * hung iteration A and B block on something else for 50 ms.
 */
#include <criterion/criterion.h>

#include "graph-fixture.h"

#define MS 1000000ULL

static struct fx F;

enum { M = 100, A = 101, B = 102, C = 103, D = 104, E = 105, IN = 106 };
#define LOCK 0x1000
#define POLLA 0x2000
#define FA 0x3000	/* A waits for M to release it (test 2) */
#define SA 0x4000
#define SB 0x5000
#define SE 0x6000
#define SLOWC 0x7000
#define SLOWD 0x8000
#define IDLE(t) (0x10000 + (t))	/* each thread's idle wait */

static struct diag_opts
opts(void)
{
	struct diag_opts o = { .threshold_ns = 10 * MS };
	return o;
}

/* tid comes out of its wait (a futex). */
static void
wake_up(uint32_t tid)
{
	fx_ev(&F, tid, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
}

static void
waking(uint32_t by, uint32_t tid)
{
	fx_ev(&F, by, TT_WAKING, tid, 0, 120, 0);
}

/* Every thread starts blocked in its idle wait (M in its event loop). */
static void
start(void)
{
	static const uint32_t tids[] = { M, A, B, C, D, E, IN };
	static const char *const names[] = { "main", "a", "b", "c", "d",
	    "e", "input" };

	fx_init(&F);
	for (size_t i = 0; i < 7; i++)
		fx_thread(&F, tids[i], M, names[i]);
	fx_block(&F, M, 0, SYS_poll, POLLA);
	fx_block(&F, IN, 0, SYS_nanosleep, 0);
	for (uint32_t t = A; t <= E; t++)
		fx_block(&F, t, 0, SYS_futex, IDLE(t));
	F.ts += 5 * MS;
}

/* The input wakes M, which wakes A and blocks on LOCK; returns when. */
static uint64_t
ask(void)
{
	fx_run(&F, 0, IN);
	waking(IN, M);
	fx_block(&F, IN, M, SYS_nanosleep, 0);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_poll, 1, 0, 0);
	waking(M, A);
	uint64_t at = fx_block(&F, M, A, SYS_futex, LOCK);
	wake_up(A);
	return at;
}

/* B answers M, which goes back to its event loop. */
static void
answer(void)
{
	waking(B, M);
	fx_block(&F, B, M, SYS_futex, IDLE(B));
	wake_up(M);
	fx_block(&F, M, 0, SYS_poll, POLLA);
	F.ts += 5 * MS;
}

/* A normal iteration; fa: A then waits on FA until M is answered. */
static void
normal(int fa)
{
	ask();
	waking(A, B);
	fx_block(&F, A, B, SYS_futex, fa ? FA : IDLE(A));
	wake_up(B);
	if (!fa) {
		answer();
		return;
	}
	waking(B, M);
	fx_block(&F, B, M, SYS_futex, IDLE(B));
	wake_up(M);
	waking(M, A);
	fx_block(&F, M, A, SYS_poll, POLLA);
	wake_up(A);
	fx_block(&F, A, 0, SYS_futex, IDLE(A));
	F.ts += 5 * MS;
}

static struct diag *
diagnose(struct graph *g, uint64_t at)
{
	struct diag_opts o = opts();
	struct diag *d = NULL;

	cr_assert_not_null(g);
	o.at = at + 20 * MS;
	o.tid = M;
	cr_assert_eq(diag_new(g, &o, &d, NULL), 0);
	cr_assert_eq(diag_nhangs(d), 1);
	cr_assert_eq(diag_hang(d, 0)->th.tid, M);
	cr_assert_eq(diag_hang(d, 0)->kind, DIAG_BLOCKED);
	return d;
}

/* Index of the culprit of thread tid at depth (0: any), or SIZE_MAX. */
static size_t
find(const struct diag *d, uint32_t tid, unsigned depth)
{
	for (size_t i = 0; i < diag_nculprits(d, 0); i++) {
		const struct diag_culprit *c = diag_culprit(d, 0, i);
		if (c->th.tid == tid && (depth == 0 || c->depth == depth))
			return i;
	}
	return SIZE_MAX;
}

static unsigned
count(const struct diag *d, uint32_t tid)
{
	unsigned n = 0;

	for (size_t i = 0; i < diag_nculprits(d, 0); i++)
		n += diag_culprit(d, 0, i)->th.tid == tid;
	return n;
}

/*
 * 1. In the hang A waits on SA for C and B waits on SB for D, both slow:
 * A and B are culprits of depth 1, C explains A and D explains B.
 */
Test(diag_recurse, every_blocked_culprit_is_followed)
{
	start();
	for (int i = 0; i < 4; i++)
		normal(0);
	uint64_t th = ask();
	waking(A, B);
	waking(A, C);
	fx_block(&F, A, B, SYS_futex, SA);
	wake_up(B);
	waking(B, D);
	fx_block(&F, B, C, SYS_futex, SB);
	wake_up(C);
	fx_block(&F, C, D, SYS_futex, SLOWC);
	wake_up(D);
	fx_block(&F, D, 0, SYS_futex, SLOWD);
	F.ts += 50 * MS;
	fx_run(&F, 0, C);
	wake_up(C);
	waking(C, A);
	fx_block(&F, C, A, SYS_futex, IDLE(C));
	wake_up(A);
	fx_block(&F, A, 0, SYS_futex, IDLE(A));
	fx_run(&F, 0, D);
	wake_up(D);
	waking(D, B);
	fx_block(&F, D, B, SYS_futex, IDLE(D));
	wake_up(B);
	answer();

	struct graph *g = fx_build(&F, NULL);
	struct diag *d = diagnose(g, th);
	size_t ia = find(d, A, 1), ib = find(d, B, 1);
	size_t ic = find(d, C, 0), id = find(d, D, 0);
	cr_assert_neq(ia, SIZE_MAX, "a is a culprit of depth 1");
	cr_assert_neq(ib, SIZE_MAX, "b is a culprit of depth 1");
	cr_assert_lt(ib, ia, "in path order: b, then a");
	cr_assert_eq(diag_culprit(d, 0, ia)->parent, SIZE_MAX);
	cr_assert_eq(diag_culprit(d, 0, ib)->parent, SIZE_MAX);
	cr_assert_str_eq(diag_culprit(d, 0, ia)->wait.resource,
	    "futex:0x4000");
	cr_assert_str_eq(diag_culprit(d, 0, ib)->wait.resource,
	    "futex:0x5000");
	cr_assert_neq(id, SIZE_MAX, "d explains b");
	cr_assert_neq(ic, SIZE_MAX, "c explains a (the second culprit "
	    "followed too)");
	const struct diag_culprit *cc = diag_culprit(d, 0, ic);
	const struct diag_culprit *cd = diag_culprit(d, 0, id);
	cr_assert_eq(cd->depth, 2);
	cr_assert_eq(cd->parent, ib);
	cr_assert_eq(cd->kind, DIAG_BLOCKED);
	cr_assert_str_eq(cd->wait.resource, "futex:0x8000");
	cr_assert_eq(cc->depth, 2);
	cr_assert_eq(cc->parent, ia);
	cr_assert_eq(cc->kind, DIAG_BLOCKED);
	cr_assert_str_eq(cc->wait.resource, "futex:0x7000");
	cr_assert_eq(count(d, C), 1);
	cr_assert_eq(count(d, D), 1);
	cr_assert_null(diag_cycle(d, 0));
	/* breadth first: every depth 1 culprit before any of depth 2, and
	   every parent before its children */
	for (size_t i = 1; i < diag_nculprits(d, 0); i++) {
		const struct diag_culprit *c = diag_culprit(d, 0, i);
		cr_assert_geq(c->depth, diag_culprit(d, 0, i - 1)->depth);
		cr_assert(c->parent == SIZE_MAX || c->parent < i);
	}
	/* the text shows the tree: each under the culprit it explains */
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	diag_write_text(d, f, graph_first_ts(g));
	fclose(f);
	const char *pb = strstr(buf, "\n    1. b (");
	const char *pd = strstr(buf, "\n      2. d (");
	const char *pa = strstr(buf, "\n    1. a (");
	const char *pc = strstr(buf, "\n      2. c (");
	cr_assert(pb && pd && pa && pc, "%s", buf);
	cr_assert(pb < pd && pd < pa && pa < pc, "%s", buf);
	free(buf);
	/* and the JSON names the parents */
	buf = NULL;
	f = open_memstream(&buf, &len);
	diag_write_json(d, f);
	fclose(f);
	char want[64];
	snprintf(want, sizeof(want),
	    "\"repeat\":false,\"first\":null,\"parent\":%zu}", ia);
	cr_assert_not_null(strstr(buf, want), "%s", buf);
	cr_assert_not_null(strstr(buf,
	    "\"repeat\":false,\"first\":null,\"parent\":null}"));
	free(buf);
	diag_free(d);
	graph_free(g);
}

/*
 * 2. A waits on FA until M is answered (as it does normally: a circular
 * wait back to the hung thread) while B waits on SB for D: the cycle is
 * main -> a, and b's branch is still followed to d.
 */
Test(diag_recurse, cycle_in_one_branch)
{
	start();
	for (int i = 0; i < 4; i++)
		normal(1);
	uint64_t th = ask();
	waking(A, B);
	fx_block(&F, A, B, SYS_futex, FA);
	wake_up(B);
	waking(B, D);
	fx_block(&F, B, D, SYS_futex, SB);
	wake_up(D);
	fx_block(&F, D, 0, SYS_futex, SLOWD);
	F.ts += 50 * MS;
	fx_run(&F, 0, D);
	wake_up(D);
	waking(D, B);
	fx_block(&F, D, B, SYS_futex, IDLE(D));
	wake_up(B);
	waking(B, M);
	fx_block(&F, B, M, SYS_futex, IDLE(B));
	wake_up(M);
	waking(M, A);
	fx_block(&F, M, A, SYS_poll, POLLA);
	wake_up(A);
	fx_block(&F, A, 0, SYS_futex, IDLE(A));
	F.ts += 5 * MS;

	struct graph *g = fx_build(&F, NULL);
	struct diag *d = diagnose(g, th);
	size_t ia = find(d, A, 1), ib = find(d, B, 1);
	cr_assert_neq(ia, SIZE_MAX, "a is a culprit of depth 1");
	cr_assert_neq(ib, SIZE_MAX, "b is a culprit of depth 1");
	cr_assert_str_eq(diag_culprit(d, 0, ia)->wait.resource,
	    "futex:0x3000");
	/* a's branch comes back to main */
	size_t im = find(d, M, 2);
	cr_assert_neq(im, SIZE_MAX, "main explains a");
	const struct diag_culprit *cm = diag_culprit(d, 0, im);
	cr_assert(cm->repeat);
	cr_assert_eq(cm->parent, ia);
	cr_assert_str_eq(cm->wait.resource, "futex:0x1000");
	const struct diag_cycle *cy = diag_cycle(d, 0);
	cr_assert_not_null(cy);
	cr_assert_eq(cy->ntids, 2);
	cr_assert_eq(cy->tids[0], M);
	cr_assert_eq(cy->tids[1], A);
	cr_assert_eq(cy->timeout_ns, 0, "no wait of the cycle timed out");
	/* b's branch: d, not a repeat, and no cycle of its own */
	size_t id = find(d, D, 0);
	cr_assert_neq(id, SIZE_MAX, "d explains b");
	cr_assert_eq(diag_culprit(d, 0, id)->depth, 2);
	cr_assert_eq(diag_culprit(d, 0, id)->parent, ib);
	cr_assert_not(diag_culprit(d, 0, id)->repeat);
	cr_assert_eq(count(d, D), 1, "b is followed once");
	/* b, beside a on a's normal path, is listed again under a */
	size_t ib2 = find(d, B, 2);
	cr_assert_neq(ib2, SIZE_MAX);
	cr_assert_eq(diag_culprit(d, 0, ib2)->parent, ia);
	/* only main repeats: the hung thread is no culprit elsewhere */
	cr_assert_eq(count(d, M), 1);
	for (size_t i = 0; i < diag_nculprits(d, 0); i++)
		cr_assert_eq(diag_culprit(d, 0, i)->repeat, i == im);
	diag_free(d);
	graph_free(g);
}

/*
 * 3. B waits on SB for C; A waits on SA for E, which waits on SE for C:
 * c is a culprit once (explaining b, found first), e explains a, and the
 * branches through e do not list c again.
 */
Test(diag_recurse, shared_thread_listed_once)
{
	start();
	for (int i = 0; i < 4; i++)
		normal(0);
	uint64_t th = ask();
	waking(A, B);
	waking(A, E);
	fx_block(&F, A, B, SYS_futex, SA);
	wake_up(B);
	waking(B, C);
	fx_block(&F, B, E, SYS_futex, SB);
	wake_up(E);
	fx_block(&F, E, C, SYS_futex, SE);
	wake_up(C);
	fx_block(&F, C, 0, SYS_futex, SLOWC);
	F.ts += 50 * MS;
	fx_run(&F, 0, C);
	wake_up(C);
	waking(C, E);
	waking(C, B);
	fx_block(&F, C, E, SYS_futex, IDLE(C));
	wake_up(E);
	waking(E, A);
	fx_block(&F, E, A, SYS_futex, IDLE(E));
	wake_up(A);
	fx_block(&F, A, B, SYS_futex, IDLE(A));
	wake_up(B);
	answer();

	struct graph *g = fx_build(&F, NULL);
	struct diag *d = diagnose(g, th);
	size_t ia = find(d, A, 1), ib = find(d, B, 1);
	cr_assert_neq(ia, SIZE_MAX, "a is a culprit of depth 1");
	cr_assert_neq(ib, SIZE_MAX, "b is a culprit of depth 1");
	cr_assert_lt(ib, ia);
	cr_assert_eq(count(d, C), 1, "c is listed once (got %u)",
	    count(d, C));
	size_t ic = find(d, C, 0), ie = find(d, E, 0);
	cr_assert_eq(diag_culprit(d, 0, ic)->depth, 2);
	cr_assert_eq(diag_culprit(d, 0, ic)->parent, ib, "c explains b, "
	    "the first followed");
	cr_assert_str_eq(diag_culprit(d, 0, ic)->wait.resource,
	    "futex:0x7000");
	cr_assert_neq(ie, SIZE_MAX, "e explains a (a's branch followed)");
	cr_assert_eq(diag_culprit(d, 0, ie)->depth, 2);
	cr_assert_eq(diag_culprit(d, 0, ie)->parent, ia);
	cr_assert_str_eq(diag_culprit(d, 0, ie)->wait.resource,
	    "futex:0x6000");
	cr_assert_eq(count(d, E), 1);
	cr_assert_null(diag_cycle(d, 0));
	diag_free(d);
	graph_free(g);
}

/*
 * The depth bound: with max_depth 1 only the culprits of the hang are
 * listed (and none is followed).
 */
Test(diag_recurse, max_depth_bounds_the_recursion)
{
	start();
	for (int i = 0; i < 4; i++)
		normal(0);
	uint64_t th = ask();
	waking(A, B);
	waking(A, C);
	fx_block(&F, A, B, SYS_futex, SA);
	wake_up(B);
	fx_block(&F, B, C, SYS_futex, SB);
	wake_up(C);
	fx_block(&F, C, 0, SYS_futex, SLOWC);
	F.ts += 50 * MS;
	fx_run(&F, 0, C);
	wake_up(C);
	waking(C, A);
	waking(C, B);
	fx_block(&F, C, A, SYS_futex, IDLE(C));
	wake_up(A);
	fx_block(&F, A, B, SYS_futex, IDLE(A));
	wake_up(B);
	answer();

	struct graph *g = fx_build(&F, NULL);
	struct diag_opts o = opts();
	struct diag *d = NULL;
	cr_assert_not_null(g);
	o.at = th + 20 * MS;
	o.tid = M;
	o.max_depth = 1;
	cr_assert_eq(diag_new(g, &o, &d, NULL), 0);
	cr_assert_eq(diag_nhangs(d), 1);
	cr_assert_geq(diag_nculprits(d, 0), 2);
	for (size_t i = 0; i < diag_nculprits(d, 0); i++)
		cr_assert_eq(diag_culprit(d, 0, i)->depth, 1);
	diag_free(d);
	/* by default c explains both, listed once */
	o.max_depth = 0;
	cr_assert_eq(diag_new(g, &o, &d, NULL), 0);
	cr_assert_eq(count(d, C), 1);
	cr_assert_eq(diag_culprit(d, 0, find(d, C, 0))->depth, 2);
	diag_free(d);
	graph_free(g);
}

/*
 * 5. Normally A waits on SA until B wakes it, and B on SB until A does.
 * In the hang A and B block on SA and SB at once, each waiting for the
 * other, until C lets A go: both are culprits of depth 1, each is found
 * again under the other and followed only once, and the circular wait
 * between them is still the hang's cycle.
 */
static void
normal_ab(void)
{
	ask();
	waking(A, B);
	fx_block(&F, A, B, SYS_futex, SA);
	wake_up(B);
	waking(B, A);
	fx_block(&F, B, A, SYS_futex, SB);
	wake_up(A);
	waking(A, B);
	fx_block(&F, A, B, SYS_futex, IDLE(A));
	wake_up(B);
	answer();
}

Test(diag_recurse, cycle_between_two_branches)
{
	start();
	for (int i = 0; i < 4; i++)
		normal_ab();
	uint64_t th = ask();
	waking(A, B);
	fx_block(&F, A, B, SYS_futex, SA);
	wake_up(B);
	fx_block(&F, B, 0, SYS_futex, SB);
	F.ts += 50 * MS;
	fx_run(&F, 0, C);
	wake_up(C);
	waking(C, A);
	fx_block(&F, C, A, SYS_futex, IDLE(C));
	wake_up(A);
	waking(A, B);
	fx_block(&F, A, B, SYS_futex, IDLE(A));
	wake_up(B);
	answer();

	struct graph *g = fx_build(&F, NULL);
	struct diag *d = diagnose(g, th);
	size_t ia = find(d, A, 1), ib = find(d, B, 1);
	cr_assert_neq(ia, SIZE_MAX, "a is a culprit of depth 1");
	cr_assert_neq(ib, SIZE_MAX, "b is a culprit of depth 1");
	size_t ia2 = find(d, A, 2), ib2 = find(d, B, 2);
	cr_assert_neq(ia2, SIZE_MAX, "a is found again under b");
	cr_assert_neq(ib2, SIZE_MAX, "b is found again under a");
	cr_assert_eq(diag_culprit(d, 0, ia2)->parent, ib);
	cr_assert_eq(diag_culprit(d, 0, ib2)->parent, ia);
	const struct diag_cycle *cy = diag_cycle(d, 0);
	cr_assert_not_null(cy, "the circular wait of a and b is a cycle");
	cr_assert_eq(cy->ntids, 2);
	cr_assert((cy->tids[0] == A && cy->tids[1] == B) ||
	    (cy->tids[0] == B && cy->tids[1] == A));
	cr_assert(diag_culprit(d, 0, ia2)->repeat ||
	    diag_culprit(d, 0, ib2)->repeat, "the closing one repeats");
	diag_free(d);
	graph_free(g);
}
