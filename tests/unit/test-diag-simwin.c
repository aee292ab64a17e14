/*
 * test-diag-simwin.c: the events of a span told from the chunk index
 * (struct diag_rate) and the windows of a tile's graph around similar
 * nodes held within the graph's bound (diag_sim_windows(),
 * engine/diag-simwin.c).
 *
 * The fixture: one thread making a system call every millisecond for
 * about 2 s (two events a call), written through the real store in
 * chunks of 1 KiB, so that a chunk spans tens of milliseconds.
 */
#include <criterion/criterion.h>
#include <sys/syscall.h>

#include "engine/diag-local.h"
#include "graph-fixture.h"

#define MS 1000000ULL

static struct fx F;
static char dir[] = "/tmp/argus-simwin-XXXXXX";
static struct trace_reader *R;
static struct diag_rate *DR;
static uint64_t T0, T1;		/* the first and last events' times */

static void
setup(void)
{
	fx_init(&F);
	fx_thread(&F, 10, 10, "steady");
	fx_run(&F, 0, 10);
	while (F.n + 2 < FX_MAX) {
		fx_ev(&F, 10, TT_SYS_ENTER, SYS_getpid, 0, 0, 0);
		fx_ev(&F, 10, TT_SYS_EXIT, SYS_getpid, 10, 0, 0);
		F.ts += MS;
	}
	T0 = F.ev[0].ts;
	T1 = F.ev[F.n - 1].ts;
	cr_assert_not_null(R = fx_store(&F, dir));
	DR = diag_rate_new(R);
}

static void
teardown(void)
{
	diag_rate_free(DR);
	cr_assert_eq(fx_unstore(R, dir), 0);
}

TestSuite(diag_simwin, .init = setup, .fini = teardown);

/* What the chunks hold, all of them. */
Test(diag_simwin, the_whole_trace_is_its_events)
{
	double all = diag_rate_events(DR, 0, UINT64_MAX);
	uint64_t n = diag_window_events(R, 0, UINT64_MAX);

	cr_assert_gt(n, 4000);
	cr_assert(all > (double)n - 1 && all < (double)n + 1, "%f of %lu",
	    all, (unsigned long)n);
}

/* A span of 100 ms holds about 200 events; the chunks whole say more. */
Test(diag_simwin, a_short_span_is_told_closely)
{
	uint64_t a = T0 + 1000 * MS, b = a + 100 * MS;
	double ev = diag_rate_events(DR, a, b);

	cr_assert(ev > 180 && ev < 220, "%f", ev);
	cr_assert_gt(diag_window_events(R, a, b), 220);
	/* and half the trace half its events */
	double half = diag_rate_events(DR, T0, T0 + (T1 - T0) / 2);
	double all = diag_rate_events(DR, 0, UINT64_MAX);
	cr_assert(half > 0.45 * all && half < 0.55 * all, "%f of %f", half,
	    all);
}

static int
sorted_apart(const uint64_t (*w)[2], size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (w[i][0] > w[i][1] || (i > 0 && w[i][0] <= w[i - 1][1]))
			return 0;
	return 1;
}

static double
held(const uint64_t (*w)[2], size_t n)
{
	double t = 0;

	for (size_t i = 0; i < n; i++)
		t += diag_rate_events(DR, w[i][0], w[i][1]);
	return t;
}

/*
 * A tile of the last half second, and similar nodes every 200 ms before
 * it, each a window of about 40 events: a bound that leaves room for
 * about 100 events past the tile takes two, and the windows' events stay
 * within it.
 */
Test(diag_simwin, windows_stay_within_the_room_the_tile_leaves)
{
	struct dcand c[3];
	const struct dcand *cp[3] = { &c[0], &c[1], &c[2] };
	uint64_t from = T1 - 500 * MS;
	double tile = diag_rate_events(DR, from, UINT64_MAX);
	struct diag_simwin o = { .from = from, .to = UINT64_MAX,
	    .pad = 5 * MS, .after = 5 * MS, .least = 1, .last = T1,
	    .max = (uint64_t)tile + 100 };
	size_t n;

	memset(c, 0, sizeof(c));
	for (int k = 0; k < 3; k++) {
		for (int i = 0; i < 2; i++) {
			uint64_t end = T0 + (uint64_t)(200 + 400 * k +
			    200 * i) * MS;
			c[k].sim[i][0] = end - 10 * MS;
			c[k].sim[i][1] = end;
		}
		c[k].nsim = 2;
	}
	uint64_t (*w)[2] = diag_sim_windows(DR, cp, 3, &o, &n);
	cr_assert_eq(n, 3, "the tile and two windows, not %zu", n);
	cr_assert(sorted_apart((const uint64_t (*)[2])w, n));
	cr_assert_eq(w[n - 1][0], from);
	cr_assert_eq(w[n - 1][1], UINT64_MAX);
	cr_assert_leq(held((const uint64_t (*)[2])w, n) - tile, 100.0);
	free(w);
	/* room for all six */
	o.max = (uint64_t)tile + 1000;
	w = diag_sim_windows(DR, cp, 3, &o, &n);
	cr_assert_eq(n, 7, "%zu", n);
	free(w);
}

/*
 * Two similar nodes of 100 ms, their windows (20 ms of pad before, 1 ms
 * after) 19 ms apart: they join (the second's lead, a quarter of it but
 * the pad at most, reaches into the first), and the joined window holds
 * the gap too, so a room for the two windows alone but not the gap takes
 * the first only.
 */
Test(diag_simwin, a_joined_window_counts_its_gap)
{
	struct dcand c;
	const struct dcand *cp[1] = { &c };
	uint64_t from = T1 - 1000 * MS;
	double tile = diag_rate_events(DR, from, T1);
	uint64_t e1 = T0 + 300 * MS, e2 = e1 + 140 * MS;
	struct diag_simwin o = { .from = from, .to = T1, .pad = 20 * MS,
	    .after = MS, .least = 1, .last = T1 };
	size_t n;

	memset(&c, 0, sizeof(c));
	c.sim[0][0] = e1 - 100 * MS;	/* a window of 121 ms */
	c.sim[0][1] = e1;
	c.sim[1][0] = e2 - 100 * MS;	/* 19 ms after the first's end */
	c.sim[1][1] = e2;
	c.nsim = 2;
	/* both: 261 ms joined, about 520 events */
	o.max = (uint64_t)tile + 560;
	uint64_t (*w)[2] = diag_sim_windows(DR, cp, 1, &o, &n);
	cr_assert_eq(n, 2, "one joined window and the tile, not %zu", n);
	cr_assert_eq(w[0][0], e1 - 120 * MS);
	cr_assert_eq(w[0][1], e2 + MS);
	free(w);
	/* room for the two alone (242 ms, about 485 events) but not
	   joined */
	o.max = (uint64_t)tile + 500;
	w = diag_sim_windows(DR, cp, 1, &o, &n);
	cr_assert_eq(n, 2, "%zu", n);
	cr_assert_eq(w[0][1], e1 + MS, "the first window alone");
	cr_assert_leq(held((const uint64_t (*)[2])w, n) - tile, 500.0);
	free(w);
}

/*
 * A similar node 100 ms before a tile of 1 s, whose lead (a quarter of
 * it) reaches 250 ms back: room for the node's window (12 ms, about 25
 * events) but not for the gap to the tile (about 200 more). The window
 * is taken apart from the tile: the lead counts the pad at most, or the
 * gap filled would spend the room of the windows of similar nodes.
 */
Test(diag_simwin, a_tiles_lead_does_not_fill_the_gap)
{
	struct dcand c;
	const struct dcand *cp[1] = { &c };
	uint64_t from = T1 - 1000 * MS, end = from - 100 * MS;
	double tile = diag_rate_events(DR, from, T1);
	struct diag_simwin o = { .from = from, .to = T1, .pad = MS,
	    .after = MS, .least = 1, .last = T1,
	    .max = (uint64_t)tile + 60 };
	size_t n;

	memset(&c, 0, sizeof(c));
	c.sim[0][0] = end - 10 * MS;
	c.sim[0][1] = end;
	c.nsim = 1;
	uint64_t (*w)[2] = diag_sim_windows(DR, cp, 1, &o, &n);
	cr_assert_eq(n, 2, "the window and the tile, not %zu", n);
	cr_assert_eq(w[0][0], end - 11 * MS);
	cr_assert_eq(w[0][1], end + MS);
	cr_assert_eq(w[1][0], from);
	cr_assert_leq(held((const uint64_t (*)[2])w, n) - tile, 60.0);
	free(w);
}

/*
 * Room for one window, and two candidates: the first's similar node is
 * one the graph ranks low (of runs that talked to none), the second's
 * one its peer ended. The second's is taken: the nodes the graph may
 * rank first, of every candidate, come first.
 */
Test(diag_simwin, the_peers_node_first)
{
	struct dcand c[2];
	const struct dcand *cp[2] = { &c[0], &c[1] };
	uint64_t from = T1 - 500 * MS;
	double tile = diag_rate_events(DR, from, UINT64_MAX);
	struct diag_simwin o = { .from = from, .to = UINT64_MAX,
	    .pad = 5 * MS, .after = 5 * MS, .least = 1, .last = T1,
	    .max = (uint64_t)tile + 50 };
	uint64_t end[2] = { T0 + 300 * MS, T0 + 900 * MS };
	size_t n;

	memset(c, 0, sizeof(c));
	for (int k = 0; k < 2; k++) {
		c[k].sim[0][0] = end[k] - 10 * MS;
		c[k].sim[0][1] = end[k];
		c[k].nsim = 1;
	}
	c[0].simprio[0] = DS_LOOSE;
	c[1].simprio[0] = DS_PEER;
	uint64_t (*w)[2] = diag_sim_windows(DR, cp, 2, &o, &n);
	cr_assert_eq(n, 2, "the tile and one window, not %zu", n);
	cr_assert(w[0][0] < end[1] && w[0][1] >= end[1],
	    "the peer's node's window, not [%llu, %llu]",
	    (unsigned long long)w[0][0], (unsigned long long)w[0][1]);
	free(w);
}
