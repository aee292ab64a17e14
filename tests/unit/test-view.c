/*
 * test-view.c: criterion tests of the viewer queries (engine/view.c):
 * thread states over time, lane summaries per column, and the single
 * steps to the waker and the wakee, on a chain built in code
 * (tests/unit/graph-fixture.h): c wakes b, b wakes a.
 */
#include <criterion/criterion.h>

#include "graph-fixture.h"

static struct fx F;

struct chain_ts {
	uint64_t a_wait, c_wakes_b, b_runs, b_wakes_a, a_runs, end;
};

static struct graph *
chain(struct chain_ts *ts)
{
	fx_init(&F);
	fx_thread(&F, 10, 10, "a");
	fx_thread(&F, 20, 10, "b");
	fx_thread(&F, 30, 30, "c");
	fx_run(&F, 0, 20);
	fx_block(&F, 20, 10, SYS_futex, 0xb);		/* b waits */
	ts->a_wait = fx_block(&F, 10, 30, SYS_futex, 0xa); /* a waits */
	for (int i = 0; i < 20; i++)			/* c runs a while */
		fx_ev(&F, 30, TT_SYS_ENTER, SYS_getpid, 0, 0, 0);
	ts->c_wakes_b = fx_ev(&F, 30, TT_WAKING, 20, 0, 120, 0);
	ts->b_runs = fx_run(&F, 30, 20);		/* c preempted */
	fx_ev(&F, 20, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	ts->b_wakes_a = fx_ev(&F, 20, TT_WAKING, 10, 0, 120, 0);
	fx_block(&F, 20, 10, SYS_futex, 0xb);
	ts->a_runs = F.ts;
	ts->end = fx_ev(&F, 10, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	return fx_build(&F, NULL);
}

Test(view, thread_states)
{
	struct chain_ts ts;
	struct graph *g = chain(&ts);
	cr_assert_not_null(g);
	struct view *vw = view_new(g);
	uint32_t a = graph_thread_find(g, 10), b = graph_thread_find(g, 20);

	cr_assert_eq(view_state_at(vw, a, ts.a_wait + 500), VS_BLOCKED);
	cr_assert_eq(view_state_at(vw, a, ts.b_wakes_a + 500), VS_RUNNABLE,
	    "woken but not yet on a CPU");
	cr_assert_eq(view_state_at(vw, a, ts.end), VS_RUNNING);
	cr_assert_eq(view_state_at(vw, b, ts.c_wakes_b - 2000), VS_BLOCKED);
	cr_assert_eq(view_state_at(vw, b, ts.b_runs + 500), VS_RUNNING);
	cr_assert_eq(view_state_at(vw, a, 0), VS_NONE);
	view_free(vw);
	graph_free(g);
}

Test(view, lane_columns)
{
	struct chain_ts ts;
	struct graph *g = chain(&ts);
	struct view *vw = view_new(g);
	uint32_t a = graph_thread_find(g, 10);
	struct view_cell cells[4];

	/* four columns over a's long wait: all blocked, no vertex start */
	uint64_t t0 = ts.a_wait + 100, t1 = ts.c_wakes_b - 100;
	view_lane(vw, a, t0, t1, 4, cells);
	for (int i = 0; i < 4; i++) {
		cr_assert_eq(cells[i].state, VS_BLOCKED);
		cr_assert_eq(cells[i].vertices, 0);
	}
	/* one column over everything: a vertex of a starts after its wait */
	view_lane(vw, a, ts.a_wait, ts.end + 1, 1, cells);
	cr_assert_geq(cells[0].vertices, 1);
	cr_assert_geq(cells[0].changes, 2);
	view_free(vw);
	graph_free(g);
}

Test(view, waker_and_wakee)
{
	struct chain_ts ts;
	struct graph *g = chain(&ts);
	uint32_t va = graph_vertex_at(g, 10, ts.end);
	uint32_t vb = graph_vertex_at(g, 20, ts.b_wakes_a);
	uint32_t vc = graph_vertex_at(g, 30, ts.c_wakes_b);

	cr_assert_neq(va, GRAPH_NONE);
	cr_assert_eq(view_waker(g, va), vb, "b woke a");
	cr_assert_eq(view_waker(g, vb), vc, "c woke b");
	cr_assert_eq(view_wakee(g, vc), vb);
	cr_assert_eq(view_wakee(g, vb), va);
	graph_free(g);
}
