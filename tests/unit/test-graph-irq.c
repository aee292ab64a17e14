/*
 * test-graph-irq.c: criterion tests of the graph's interrupt contexts on
 * traces built in code (tests/unit/graph-fixture.h): a loopback
 * delivery in the softirq its sender raised, and one a tick's timer
 * interrupts.
 */
#include <criterion/criterion.h>

#include "graph-fixture.h"
#include "engine/diag-local.h"

static struct fx F;

/* Loopback: receiver 20 blocks in recvfrom on CPU 1; sender 10, on CPU
   0, calls sendto and raises the softirq that delivers, the fixture
   left in softirq context for the delivery. Returns the raise's time. */
static uint64_t
loopback_send(void)
{
	fx_init(&F);
	fx_thread(&F, 10, 10, "sender");
	fx_thread(&F, 20, 20, "receiver");
	F.cpu = 1;
	fx_run(&F, 0, 20);
	fx_block(&F, 20, 0, SYS_recvfrom, 4);
	F.cpu = 0;
	fx_run(&F, 0, 10);
	fx_ev(&F, 10, TT_SYS_ENTER, SYS_sendto, 3, 0, 0);
	uint64_t t = fx_ev(&F, 10, TT_SOFTIRQ_RAISE, 3, 0, 0, 0);
	F.ctx = TRACE_CTX_SOFTIRQ;
	return t;
}

/* The delivery's end, sendto's return, and the receiver running again
   on CPU 1 (the time it runs). */
static uint64_t
loopback_received(void)
{
	fx_ev(&F, 10, TT_SOFTIRQ_EXIT, 3, 0, 0, 0);
	F.ctx = TRACE_CTX_TASK;
	fx_ev(&F, 10, TT_SYS_EXIT, SYS_sendto, 100, 0, 0);
	F.cpu = 1;
	return fx_run(&F, 0, 20);
}

/* Loopback networking: the sender raises the softirq that delivers. */
Test(graph, softirq_raise_chain)
{
	uint64_t t_raise = loopback_send();
	uint64_t t_sirq = fx_ev(&F, 10, TT_SOFTIRQ_ENTRY, 3, 0, 0, 0);
	fx_ev(&F, 10, TT_SK_DATA_READY, 0x8000, 2, 6, 0);
	fx_ev(&F, 10, TT_WAKING, 20, 1, 120, 0);
	uint64_t t_run = loopback_received();
	uint64_t t_rx = fx_ev(&F, 20, TT_SOCK_RECV, 0x8000, 2, 6, 100);

	struct graph *g = fx_build(&F, NULL);
	cr_assert_not_null(g);
	uint32_t vs = graph_vertex_at(g, GRAPH_IRQ_TID_BASE + 0, t_sirq);
	cr_assert_eq(graph_vertex(g, vs)->kind, GV_SOFTIRQ);
	cr_assert_eq(fx_in_src(g, vs, GE_RAISE), graph_vertex_at(g, 10,
	    t_raise));
	uint32_t vr = graph_vertex_at(g, 20, t_rx);
	cr_assert_eq(graph_vertex_at(g, 20, t_run), vr);
	cr_assert_eq(fx_in_src(g, vr, GE_MSG), vs);
	cr_assert_eq(fx_in_src(g, vr, GE_WAKEUP), vs);
	graph_free(g);
}

/* A tick's timer interrupts the softirq that delivers: the rest of the
   delivery is still a softirq's, raised by the sender, and what it
   wakes was woken by the sender, not by the tick. */
Test(graph, softirq_resumed_after_nested_timer)
{
	uint64_t t_raise = loopback_send();
	fx_ev(&F, 10, TT_SOFTIRQ_ENTRY, 3, 0, 0, 0);
	F.ctx = TRACE_CTX_HARDIRQ;
	uint64_t t_tick = fx_ev(&F, 10, TT_TIMER_EXPIRE, 0x7000, 1, 0, 0);
	fx_ev(&F, 10, TT_SOFTIRQ_RAISE, 7, 0, 0, 0);
	fx_ev(&F, 10, TT_TIMER_EXPIRE_EXIT, 0x7000, 1, 0, 0);
	F.ctx = TRACE_CTX_SOFTIRQ;
	uint64_t t_ready = fx_ev(&F, 10, TT_SK_DATA_READY, 0x8000, 2, 6, 0);
	fx_ev(&F, 10, TT_WAKING, 20, 1, 120, 0);
	uint64_t t_run = loopback_received();
	fx_ev(&F, 20, TT_SOCK_RECV, 0x8000, 2, 6, 100);

	struct graph *g = fx_build(&F, NULL);
	cr_assert_not_null(g);
	uint32_t irq = GRAPH_IRQ_TID_BASE + 0;
	uint32_t vt = graph_vertex_at(g, irq, t_tick);
	cr_assert_eq(graph_vertex(g, vt)->kind, GV_TIMER);
	uint32_t vd = graph_vertex_at(g, irq, t_ready);
	cr_assert_neq(vd, vt);
	cr_assert_eq(graph_vertex(g, vd)->kind, GV_SOFTIRQ,
	    "the delivery after the tick is a %u vertex",
	    graph_vertex(g, vd)->kind);
	cr_assert_eq(fx_in_src(g, vd, GE_RAISE), graph_vertex_at(g, 10,
	    t_raise));
	uint32_t ri = graph_thread_find(g, 20);
	uint64_t wts = 0;
	int edge, stop;
	uint32_t w = diag_waker_of(g, ri, diag_event_at(g, ri, t_run), &wts,
	    &edge, &stop);
	cr_assert_eq(w, graph_thread_find(g, 10), "woken by thread %u", w);
	graph_free(g);
}
