/*
 * test-graph.c: criterion tests of the event graph's vertex and edge
 * heuristics on traces built in code (tests/unit/graph-fixture.h).
 */
#include <criterion/criterion.h>

#include "graph-fixture.h"

static struct fx F;

/* A queued task that waits inside stays one vertex (callout_level). */
static void
task_fixture(int with_task, uint64_t *t_begin, uint64_t *t_end)
{
	fx_init(&F);
	fx_thread(&F, 10, 10, "pool");
	fx_thread(&F, 20, 10, "helper");
	fx_run(&F, 0, 10);
	*t_begin = with_task ? fx_user(&F, 10, TU_TASK_BEGIN, 7) :
	    fx_ev(&F, 10, TT_SYS_ENTER, SYS_getpid, 0, 0, 0);
	fx_block(&F, 10, 20, SYS_futex, 0xabc);
	fx_ev(&F, 20, TT_WAKING, 10, 0, 120, 0);
	fx_block(&F, 20, 10, SYS_futex, 0xdef);
	fx_ev(&F, 10, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	*t_end = with_task ? fx_user(&F, 10, TU_TASK_END, 7) :
	    fx_ev(&F, 10, TT_SYS_ENTER, SYS_getpid, 0, 0, 0);
}

Test(graph, callout_level_keeps_task_whole)
{
	uint64_t b, e;

	task_fixture(1, &b, &e);
	struct graph *g = fx_build(&F, NULL);
	cr_assert_not_null(g);
	uint32_t v = graph_vertex_at(g, 10, b);
	cr_assert_neq(v, GRAPH_NONE);
	cr_assert_eq(graph_vertex_at(g, 10, e), v,
	    "the wait inside the task must not cut it");
	cr_assert_eq(graph_vertex(g, v)->kind, GV_TASK);
	cr_assert(graph_vertex(g, v)->flags & GRAPH_VF_WAIT);
	uint32_t src = fx_in_src(g, v, GE_WAKEUP);
	cr_assert_neq(src, GRAPH_NONE);
	cr_assert_eq(graph_thread(g, graph_vertex(g, src)->thread)->tid, 20);
	graph_free(g);
}

Test(graph, wait_ends_vertex_outside_callout)
{
	uint64_t b, e;

	task_fixture(0, &b, &e);
	struct graph *g = fx_build(&F, NULL);
	cr_assert_not_null(g);
	uint32_t v1 = graph_vertex_at(g, 10, b), v2 = graph_vertex_at(g, 10, e);
	cr_assert_neq(v1, v2, "a wait outside a callout ends the vertex");
	cr_assert_eq(fx_in_kind(g, v2, GE_WAKEUP), 1);
	cr_assert_eq(fx_in_kind(g, v2, GE_SEQ), 0,
	    "vertices cut by a wait are not joined by a weak edge");
	/* weak edge from the wait to the wake-up */
	uint32_t waker = fx_in_src(g, v2, GE_WAKEUP);
	cr_assert_eq(fx_in_src(g, waker, GE_WAIT), v1);
	cr_assert(graph_edge_kind_weak(GE_WAIT));
	cr_assert(!graph_edge_kind_weak(GE_WAKEUP));
	graph_free(g);
}

/* A server receiving from two clients in one go: the peer set splits. */
static void
server_fixture(uint32_t second_client, uint64_t *t1, uint64_t *t2)
{
	fx_init(&F);
	fx_thread(&F, 100, 100, "srv");
	fx_thread(&F, 200, 200, "client1");
	fx_thread(&F, 300, 300, "client2");
	F.cpu = 1;
	fx_run(&F, 0, 200);
	fx_ev(&F, 200, TT_SK_DATA_READY, 0x5001, 1, 0, 0);
	if (second_client != 200)
		fx_run(&F, 200, second_client);
	fx_ev(&F, second_client, TT_SK_DATA_READY, second_client == 300 ?
	    0x5002 : 0x5001, 1, 0, 0);
	F.cpu = 0;
	fx_run(&F, 0, 100);
	*t1 = fx_ev(&F, 100, TT_SOCK_RECV, 0x5001, 1, 0, 10);
	fx_ev(&F, 100, TT_SYS_ENTER, SYS_getpid, 0, 0, 0);
	*t2 = fx_ev(&F, 100, TT_SOCK_RECV, second_client == 300 ? 0x5002 :
	    0x5001, 1, 0, 10);
}

Test(graph, peer_set_splits_batch_loop)
{
	uint64_t t1, t2;

	server_fixture(300, &t1, &t2);
	struct graph *g = fx_build(&F, NULL);
	cr_assert_not_null(g);
	uint32_t v1 = graph_vertex_at(g, 100, t1), v2 = graph_vertex_at(g,
	    100, t2);
	cr_assert_neq(v1, v2, "a second peer process starts a new vertex");
	cr_assert_eq(graph_vertex_start(g, v2), t2);
	cr_assert(graph_vertex(g, v2)->flags & GRAPH_VF_SPLIT);
	cr_assert_eq(fx_in_src(g, v2, GE_SEQ), v1,
	    "split segments are joined by a weak edge");
	uint32_t s1 = fx_in_src(g, v1, GE_MSG), s2 = fx_in_src(g, v2, GE_MSG);
	cr_assert_eq(graph_thread(g, graph_vertex(g, s1)->thread)->tid, 200);
	cr_assert_eq(graph_thread(g, graph_vertex(g, s2)->thread)->tid, 300);
	struct graph_stats st;
	graph_get_stats(g, &st);
	cr_assert_eq(st.messages, 2);
	graph_free(g);
}

/* A connection's addresses (a sock_addr record of the metadata stream)
   change nothing in the graph: same events, vertices, edges, messages. */
Test(graph, sock_addr_records_change_nothing)
{
	struct graph_stats st[2];
	uint64_t t1, t2;

	for (int with = 0; with < 2; with++) {
		server_fixture(300, &t1, &t2);
		if (with) {
			unsigned cpu = F.cpu;
			F.cpu = TRACE_CPU_META;
			fx_ev(&F, 100, TT_SOCK_ADDR, 0x5001, 2, 6, 0);
			F.cpu = cpu;
			fx_ev(&F, 100, TT_SOCK_RECV, 0x5001, 1, 0, 10);
		} else {
			fx_ev(&F, 100, TT_SOCK_RECV, 0x5001, 1, 0, 10);
		}
		struct graph *g = fx_build(&F, NULL);
		cr_assert_not_null(g);
		graph_get_stats(g, &st[with]);
		graph_free(g);
	}
	cr_assert_eq(st[0].events, st[1].events);
	cr_assert_eq(st[0].vertices, st[1].vertices);
	cr_assert_eq(st[0].edges, st[1].edges);
	cr_assert_eq(st[0].messages, st[1].messages);
	cr_assert_eq(st[1].trace_events, st[0].trace_events + 1,
	    "the record was read");
}

Test(graph, peer_set_keeps_one_peer_together)
{
	uint64_t t1, t2;

	server_fixture(200, &t1, &t2);
	struct graph *g = fx_build(&F, NULL);
	cr_assert_not_null(g);
	uint32_t v = graph_vertex_at(g, 100, t1);
	cr_assert_eq(graph_vertex_at(g, 100, t2), v);
	cr_assert_eq(fx_in_kind(g, v, GE_MSG), 2);
	/* two messages from one vertex of one peer: not a suspect */
	uint32_t sus[4];
	cr_assert_eq(graph_suspects(g, sus, 4), 0);
	graph_free(g);
}

Test(graph, suspects_two_processes)
{
	fx_init(&F);
	fx_thread(&F, 10, 10, "a");
	fx_thread(&F, 20, 20, "b");
	fx_thread(&F, 30, 30, "s");
	fx_run(&F, 0, 10);
	fx_user(&F, 10, TU_FLAG_WRITE, 1);
	F.cpu = 1;
	fx_run(&F, 0, 20);
	fx_user(&F, 20, TU_FLAG_WRITE, 2);
	F.cpu = 2;
	fx_run(&F, 0, 30);
	uint64_t t = fx_user(&F, 30, TU_FLAG_READ, 1);
	fx_user(&F, 30, TU_FLAG_READ, 2);
	struct graph *g = fx_build(&F, NULL);
	uint32_t v = graph_vertex_at(g, 30, t), sus[4];
	cr_assert_eq(graph_vertex_peers(g, v), 2);
	cr_assert_eq(graph_vertex_strong_in(g, v), 2);
	cr_assert_eq(graph_suspects(g, sus, 4), 1);
	cr_assert_eq(sus[0], v);
	graph_free(g);
}

Test(graph, batch_rule_splits_each_request)
{
	uint64_t t1, t2;
	struct rules *rs = rules_new();

	cr_assert_eq(rules_parse(rs, "batch process srv\n", "t", NULL), 0);
	server_fixture(200, &t1, &t2);
	struct graph *g = fx_build(&F, rs);
	cr_assert_not_null(g);
	cr_assert_neq(graph_vertex_at(g, 100, t1), graph_vertex_at(g, 100,
	    t2));
	graph_free(g);
	rules_free(rs);
}

/* A wake-up in interrupt context belongs to the timer, not to the task. */
Test(graph, irq_wakeup_goes_to_timer)
{
	fx_init(&F);
	fx_thread(&F, 10, 10, "busy");
	fx_thread(&F, 20, 20, "sleeper");
	fx_run(&F, 0, 20);
	uint64_t t_arm = fx_ev(&F, 20, TT_TIMER_START, 0x77, 0xfff, 5, 1);
	fx_block(&F, 20, 10, SYS_nanosleep, 0);
	fx_ev(&F, 10, TT_SYS_ENTER, SYS_getpid, 0, 0, 0);
	F.ctx = TRACE_CTX_HARDIRQ;
	fx_ev(&F, 10, TT_IRQ_ENTRY, 0, 0, 0, 0);
	fx_blob(&F, "apic_timer");
	uint64_t t_exp = fx_ev(&F, 10, TT_TIMER_EXPIRE, 0x77, 1, 0xfff, 0);
	fx_ev(&F, 10, TT_WAKING, 20, 0, 120, 0);
	fx_ev(&F, 10, TT_TIMER_EXPIRE_EXIT, 0x77, 1, 0, 0);
	fx_ev(&F, 10, TT_IRQ_EXIT, 0, 1, 0, 0);
	F.ctx = TRACE_CTX_TASK;
	fx_ev(&F, 10, TT_SYS_EXIT, SYS_getpid, 10, 0, 0);
	uint64_t t_run = fx_run(&F, 10, 20);

	struct graph *g = fx_build(&F, NULL);
	cr_assert_not_null(g);
	uint32_t vy = graph_vertex_at(g, 20, t_run);
	uint32_t vt = fx_in_src(g, vy, GE_WAKEUP);
	cr_assert_neq(vt, GRAPH_NONE);
	const struct graph_thread *it = graph_thread(g,
	    graph_vertex(g, vt)->thread);
	cr_assert_eq(it->tid, GRAPH_IRQ_TID_BASE + 0);
	cr_assert(it->flags & GRAPH_THREAD_IRQ);
	cr_assert_eq(graph_vertex(g, vt)->kind, GV_TIMER);
	cr_assert_eq(graph_vertex_start(g, vt), t_exp);
	/* timer arm to expiry */
	cr_assert_eq(fx_in_src(g, vt, GE_TIMER), graph_vertex_at(g, 20,
	    t_arm));
	/* the interrupted task holds none of the interrupt's events */
	uint32_t tx = graph_thread_find(g, 10);
	const struct graph_thread *xt = graph_thread(g, tx);
	for (uint32_t i = 0; i < xt->nevents; i++) {
		const struct graph_event *ev = graph_event(g, tx, i);
		cr_assert_neq(ev->type, TT_WAKING);
		cr_assert_neq(ev->type, TT_TIMER_EXPIRE);
	}
	size_t nv;
	const uint32_t *vs = graph_thread_vertices(g, tx, &nv);
	for (size_t i = 0; i < nv; i++)
		cr_assert_eq(fx_out_kind(g, vs[i], GE_WAKEUP), 0);
	graph_free(g);
}

Test(graph, flag_write_then_read)
{
	fx_init(&F);
	fx_thread(&F, 10, 10, "writer");
	fx_thread(&F, 20, 10, "reader");
	F.cpu = 1;
	fx_run(&F, 0, 20);
	uint64_t t_early = fx_user(&F, 20, TU_FLAG_READ, 0x1000);
	F.cpu = 0;
	fx_run(&F, 0, 10);
	uint64_t t_w = fx_user(&F, 10, TU_FLAG_WRITE, 0x1000);
	F.cpu = 1;
	fx_block(&F, 20, 0, SYS_poll, 0);
	F.cpu = 1;
	fx_run(&F, 0, 20);
	uint64_t t_r = fx_user(&F, 20, TU_FLAG_READ, 0x1000);
	fx_block(&F, 20, 0, SYS_poll, 0);
	fx_run(&F, 0, 20);
	uint64_t t_r2 = fx_user(&F, 20, TU_FLAG_READ, 0x1000);

	struct graph *g = fx_build(&F, NULL);
	cr_assert_not_null(g);
	uint32_t vr = graph_vertex_at(g, 20, t_r);
	cr_assert_eq(fx_in_src(g, vr, GE_FLAG), graph_vertex_at(g, 10, t_w));
	cr_assert_eq(fx_in_kind(g, graph_vertex_at(g, 20, t_early), GE_FLAG),
	    0, "a read before any write has no edge");
	cr_assert_eq(fx_in_kind(g, graph_vertex_at(g, 20, t_r2), GE_FLAG), 0,
	    "only the next read after a write is connected");
	struct graph_stats st;
	graph_get_stats(g, &st);
	cr_assert_eq(st.edges_by_kind[GE_FLAG], 1);
	graph_free(g);
}

static void
mark_fixture(uint64_t *t0, uint64_t *t_mark)
{
	fx_init(&F);
	fx_thread(&F, 10, 10, "app");
	*t0 = fx_run(&F, 0, 10);
	fx_ev(&F, 10, TT_SYS_ENTER, SYS_getpid, 0, 0, 0);
	fx_ev(&F, 10, TT_SYS_EXIT, SYS_getpid, 10, 0, 0);
	*t_mark = fx_user(&F, 10, TU_MARK, 0);
	fx_blob(&F, "frame");
	fx_ev(&F, 10, TT_SYS_ENTER, SYS_getpid, 0, 0, 0);
}

Test(graph, rules_line_splits_vertex)
{
	uint64_t t0, tm;
	struct rules *rs = rules_new();
	char *cause = NULL;

	mark_fixture(&t0, &tm);
	struct graph *g = fx_build(&F, NULL);
	cr_assert_not_null(g);
	cr_assert_eq(fx_nvtx(g, 10), 1);
	cr_assert_eq(graph_vertex_at(g, 10, tm), graph_vertex_at(g, 10, t0));
	cr_assert_eq(rules_parse(rs, "split symbol fra*\n", "t", NULL), 0);
	cr_assert_eq(graph_rebuild(g, rs, &cause), 0);
	cr_assert_eq(fx_nvtx(g, 10), 2);
	uint32_t v2 = graph_vertex_at(g, 10, tm);
	cr_assert_eq(graph_vertex_start(g, v2), tm);
	cr_assert_eq(fx_in_src(g, v2, GE_SEQ), graph_vertex_at(g, 10, t0));
	/* and back */
	cr_assert_eq(graph_rebuild(g, NULL, &cause), 0);
	cr_assert_eq(fx_nvtx(g, 10), 1);
	graph_free(g);
	rules_free(rs);
}

Test(graph, rules_split_event_selector)
{
	uint64_t t0, tm;
	struct rules *rs = rules_new();

	cr_assert_eq(rules_parse(rs, "split event user:mark=frame", "t",
	    NULL), 0);
	mark_fixture(&t0, &tm);
	struct graph *g = fx_build(&F, rs);
	cr_assert_eq(fx_nvtx(g, 10), 2);
	graph_free(g);
	rules_free(rs);
	rs = rules_new();
	cr_assert_eq(rules_parse(rs, "split event user:mark=other", "t",
	    NULL), 0);
	g = fx_build(&F, rs);
	cr_assert_eq(fx_nvtx(g, 10), 1);
	graph_free(g);
	rules_free(rs);
}

/* Producer 10 writes fd 4, consumer 20 reads fd 3: one pipe. */
static void
pipe_fixture(void)
{
	fx_init(&F);
	fx_thread(&F, 10, 10, "producer");
	fx_thread(&F, 20, 20, "consumer");
	F.cpu = TRACE_CPU_META;
	fx_ev(&F, 0, TT_FD, 10, 4, TFD_PIPE, 999);
	fx_ev(&F, 0, TT_FD, 20, 3, TFD_PIPE, 999);
	F.cpu = 0;
}

/*
 * Pipes: a reader already blocked in read when the recording began
 * takes the first write unseen (its exit has no entry). Its next read
 * blocks, so the pipe was empty then: that first write is not queued
 * any more, and each later read is connected to the write of its turn,
 * not to the one before.
 */
Test(graph, pipe_read_blocked_finds_it_empty)
{
	uint64_t w[3], r[3];

	pipe_fixture();
	fx_ev(&F, 20, TT_SWITCH, 1, 0, 120, 0);	/* asleep before */
	for (int k = 0; k < 3; k++) {
		fx_run(&F, 0, 10);
		fx_ev(&F, 10, TT_SYS_ENTER, SYS_write, 4, 0, 1);
		fx_ev(&F, 10, TT_WAKING, 20, 0, 120, 0);
		w[k] = fx_ev(&F, 10, TT_SYS_EXIT, SYS_write, 1, 0, 0);
		fx_block(&F, 10, 20, SYS_nanosleep, 0);
		r[k] = fx_ev(&F, 20, TT_SYS_EXIT, SYS_read, 1, 0, 0);
		fx_block(&F, 20, 0, SYS_read, 3);
		F.ts += 1000000;
	}
	struct graph *g = fx_build(&F, NULL);
	cr_assert_not_null(g);
	for (int k = 1; k < 3; k++)
		cr_assert_eq(fx_in_src(g, graph_vertex_at(g, 20, r[k]),
		    GE_PIPE), graph_vertex_at(g, 10, w[k]), "read %d takes "
		    "write %d", k, k);
	graph_free(g);
}

/*
 * Sockets: reader 20 blocks in read on socket 0x51. Peer 30 reads from
 * its own end, which wakes every waiter of the socket (buffer space
 * freed), then its thread 31 sends the data while 20 is still waiting to
 * run. The read returns 31's data: 31, not 30, woke it, and the wait
 * edge of 20 leads to 31. With poll instead of a blocking read, or when
 * the waker sent the data itself, the wake-up stays where it was.
 */
static uint64_t spur_wake, spur_send;	/* the waking, the data sent */

static void
spurious_fixture(int blocking_read, int waker_sends)
{
	fx_init(&F);
	fx_thread(&F, 20, 20, "reader");
	fx_thread(&F, 30, 30, "peer");
	fx_thread(&F, 31, 30, "peer-send");
	fx_run(&F, 0, 20);
	fx_block(&F, 20, 0, blocking_read ? SYS_read : SYS_poll, 3);
	fx_run(&F, 0, 30);
	fx_ev(&F, 30, TT_SOCK_RECV, 0x52, 1, 0, 10);
	if (waker_sends)
		spur_send = fx_ev(&F, 30, TT_SK_DATA_READY, 0x51, 1, 0, 0);
	spur_wake = fx_ev(&F, 30, TT_WAKING, 20, 0, 120, 0);
	fx_block(&F, 30, 31, SYS_nanosleep, 0);
	if (!waker_sends)
		spur_send = fx_ev(&F, 31, TT_SK_DATA_READY, 0x51, 1, 0, 0);
	fx_block(&F, 31, 20, SYS_nanosleep, 0);
	if (!blocking_read) {
		fx_ev(&F, 20, TT_SYS_EXIT, SYS_poll, 1, 0, 0);
		fx_ev(&F, 20, TT_SYS_ENTER, SYS_read, 3, 0, 0);
	}
	fx_ev(&F, 20, TT_SOCK_RECV, 0x51, 1, 0, 10);
	fx_ev(&F, 20, TT_SYS_EXIT, SYS_read, 10, 0, 0);
}

Test(graph, data_sender_woke_the_blocked_read)
{
	for (int c = 0; c < 3; c++) {
		int blocking = c != 1, waker_sends = c == 2;
		spurious_fixture(blocking, waker_sends);
		struct graph *g = fx_build(&F, NULL);
		cr_assert_not_null(g);
		size_t n;
		const uint32_t *t = graph_thread_vertices(g,
		    graph_thread_find(g, 20), &n);
		cr_assert_eq(n, 2);
		uint32_t wv = t[0], rv = t[1];
		uint32_t peer = graph_vertex_at(g, 30, spur_wake);
		uint32_t sender = graph_vertex_at(g, waker_sends ? 30 : 31,
		    spur_send);
		cr_assert_eq(fx_in_src(g, rv, GE_MSG), sender, "case %d", c);
		uint32_t want = c == 0 ? sender : peer;
		cr_assert_eq(fx_in_src(g, rv, GE_WAKEUP), want,
		    "case %d: woken by %u, not %u", c,
		    fx_in_src(g, rv, GE_WAKEUP), want);
		cr_assert_eq(fx_in_src(g, want, GE_WAIT), wv, "case %d", c);
		graph_free(g);
	}
}

/* A contended glibc lock (FUTEX_WAIT for the value 2) or a PI lock marks
   its futex entry and the switch of its wait; a condition variable's or
   a semaphore's wait does not. */
Test(graph, futex_lock_waits_are_marked)
{
	static const struct { uint64_t op, val; int lock; } c[] = {
		{ 0x80, 2, 1 },		/* FUTEX_WAIT_PRIVATE, "waiters" */
		{ 0, 2, 1 },		/* FUTEX_WAIT */
		{ 0x86, 0, 1 },		/* FUTEX_LOCK_PI_PRIVATE */
		{ 0x89, 2, 0 },		/* FUTEX_WAIT_BITSET_PRIVATE */
		{ 0x80, 1, 0 },		/* a one-shot flag */
	};
	uint64_t at[5];

	fx_init(&F);
	fx_thread(&F, 10, 10, "app");
	for (int k = 0; k < 5; k++) {
		fx_run(&F, 0, 10);
		fx_ev(&F, 10, TT_SYS_ENTER, SYS_futex, 0x1000, c[k].op,
		    c[k].val);
		at[k] = fx_ev(&F, 10, TT_SWITCH, 1, 0, 120, 0);
		F.ts += 1000000;
	}
	struct graph *g = fx_build(&F, NULL);
	cr_assert_not_null(g);
	uint32_t ti = graph_thread_find(g, 10), k = 0;
	for (uint32_t i = 0; i < graph_thread(g, ti)->nevents; i++) {
		const struct graph_event *e = graph_event(g, ti, i);
		if (e->type != TT_SWITCH || !(e->flags & GRAPH_EVF_WAIT))
			continue;
		cr_assert_eq(e->ts, at[k]);
		cr_assert_eq((e->flags & GRAPH_EVF_LOCK) != 0, c[k].lock,
		    "case %u (op 0x%llx, value %llu)", k,
		    (unsigned long long)c[k].op,
		    (unsigned long long)c[k].val);
		cr_assert_eq((graph_event(g, ti, i - 1)->flags &
		    GRAPH_EVF_LOCK) != 0, c[k].lock);
		k++;
	}
	cr_assert_eq(k, 5, "%u waits", k);
	graph_free(g);
}

/* Pipes: a read is connected to the write holding its first byte. */
Test(graph, pipe_byte_order)
{
	pipe_fixture();
	fx_run(&F, 0, 10);
	fx_ev(&F, 10, TT_SYS_ENTER, SYS_write, 4, 0, 10);
	uint64_t w1 = fx_ev(&F, 10, TT_SYS_EXIT, SYS_write, 10, 0, 0);
	fx_block(&F, 10, 0, SYS_nanosleep, 0);
	fx_run(&F, 0, 10);
	fx_ev(&F, 10, TT_SYS_ENTER, SYS_write, 4, 0, 5);
	uint64_t w2 = fx_ev(&F, 10, TT_SYS_EXIT, SYS_write, 5, 0, 0);
	F.cpu = 1;
	fx_run(&F, 0, 20);
	fx_ev(&F, 20, TT_SYS_ENTER, SYS_read, 3, 0, 12);
	uint64_t r1 = fx_ev(&F, 20, TT_SYS_EXIT, SYS_read, 12, 0, 0);
	fx_block(&F, 20, 0, SYS_nanosleep, 0);
	fx_run(&F, 0, 20);
	fx_ev(&F, 20, TT_SYS_ENTER, SYS_read, 3, 0, 12);
	uint64_t r2 = fx_ev(&F, 20, TT_SYS_EXIT, SYS_read, 3, 0, 0);

	struct graph *g = fx_build(&F, NULL);
	cr_assert_not_null(g);
	uint32_t v1 = graph_vertex_at(g, 20, r1), v2 = graph_vertex_at(g, 20,
	    r2);
	cr_assert_neq(v1, v2);
	cr_assert_eq(fx_in_src(g, v1, GE_PIPE), graph_vertex_at(g, 10, w1));
	cr_assert_eq(fx_in_src(g, v2, GE_PIPE), graph_vertex_at(g, 10, w2),
	    "bytes 12..14 came from the second write");
	/* the edge names the exact events */
	size_t n;
	const uint32_t *in = graph_in_edges(g, v2, &n);
	cr_assert_eq(n, 1);
	const struct graph_edge *e = graph_edge(g, in[0]);
	cr_assert_eq(graph_event(g, graph_vertex(g, e->src)->thread,
	    e->src_ev)->ts, w2);
	cr_assert_eq(graph_event(g, graph_vertex(g, e->dst)->thread,
	    e->dst_ev)->ts, r2);
	graph_free(g);
}

Test(graph, enqueue_to_execute_edges)
{
	fx_init(&F);
	fx_thread(&F, 10, 10, "app");
	fx_thread(&F, 11, 10, "worker");
	fx_thread(&F, 12, 12, "kworker/0:1");
	F.cpu = 0;
	fx_run(&F, 0, 10);
	uint64_t ts = fx_user(&F, 10, TU_TASK_SUBMIT, 5);
	fx_user(&F, 10, TU_RUNLOOP_SUBMIT, 6);
	fx_ev(&F, 10, TT_WQ_QUEUE, 0xbeef, 0xf00, 0, 0);
	fx_blob(&F, "events");
	F.cpu = 1;
	fx_run(&F, 0, 11);
	uint64_t tb = fx_user(&F, 11, TU_TASK_BEGIN, 5);
	fx_user(&F, 11, TU_TASK_END, 5);
	uint64_t tc = fx_user(&F, 11, TU_CALLOUT_BEGIN, 6);
	fx_user(&F, 11, TU_CALLOUT_END, 6);
	uint64_t tafter = fx_ev(&F, 11, TT_SYS_ENTER, SYS_getpid, 0, 0, 0);
	fx_run(&F, 11, 12);
	uint64_t tw = fx_ev(&F, 12, TT_WQ_START, 0xbeef, 0xf00, 0, 0);
	fx_ev(&F, 12, TT_WQ_END, 0xbeef, 0xf00, 0, 0);

	struct graph *g = fx_build(&F, NULL);
	cr_assert_not_null(g);
	uint32_t vs = graph_vertex_at(g, 10, ts);
	uint32_t vb = graph_vertex_at(g, 11, tb), vc = graph_vertex_at(g, 11,
	    tc), vw = graph_vertex_at(g, 12, tw);
	cr_assert_eq(fx_in_src(g, vb, GE_TASK), vs);
	cr_assert_eq(fx_in_src(g, vc, GE_RUNLOOP), vs);
	cr_assert_eq(fx_in_src(g, vw, GE_WORK), vs);
	cr_assert_eq(graph_vertex(g, vb)->kind, GV_TASK);
	cr_assert_eq(graph_vertex(g, vc)->kind, GV_CALLOUT);
	cr_assert_eq(graph_vertex(g, vw)->kind, GV_WORK);
	cr_assert_neq(vb, vc, "task and callout boundaries divide vertices");
	uint32_t va = graph_vertex_at(g, 11, tafter);
	cr_assert_neq(va, vc);
	cr_assert_eq(fx_in_src(g, va, GE_SEQ), vc);
	graph_free(g);
}

/* Request receive to reply send, reply send to reply receive. */
Test(graph, request_reply)
{
	fx_init(&F);
	fx_thread(&F, 100, 100, "srv");
	fx_thread(&F, 200, 200, "client");
	F.cpu = 1;
	fx_run(&F, 0, 200);
	fx_ev(&F, 200, TT_SK_DATA_READY, 0x5001, 1, 0, 0);
	fx_block(&F, 200, 0, SYS_recvmsg, 7);
	F.cpu = 0;
	fx_run(&F, 0, 100);
	uint64_t trq = fx_ev(&F, 100, TT_SOCK_RECV, 0x5001, 1, 0, 10);
	fx_user(&F, 100, TU_CALLOUT_BEGIN, 1);
	uint64_t trp = fx_ev(&F, 100, TT_SK_DATA_READY, 0x6001, 1, 0, 0);
	fx_ev(&F, 100, TT_WAKING, 200, 1, 120, 0);
	fx_user(&F, 100, TU_CALLOUT_END, 1);
	F.cpu = 1;
	fx_run(&F, 0, 200);
	uint64_t tcl = fx_ev(&F, 200, TT_SOCK_RECV, 0x6001, 1, 0, 10);

	/* the client's socket 0x6001 is owned by pid 200 only once it has
	   received; teach it by a first exchange in the other direction */
	struct graph *g = fx_build(&F, NULL);
	cr_assert_not_null(g);
	uint32_t vq = graph_vertex_at(g, 100, trq), vp = graph_vertex_at(g,
	    100, trp), vc = graph_vertex_at(g, 200, tcl);
	cr_assert_neq(vq, vp);
	cr_assert_eq(fx_in_src(g, vc, GE_MSG), vp);
	cr_assert_eq(fx_in_src(g, vc, GE_WAKEUP), vp);
	graph_free(g);
}

Test(graph, ignore_and_cull_rules)
{
	uint64_t b, e;
	struct rules *rs = rules_new();

	task_fixture(0, &b, &e);
	cr_assert_eq(rules_parse(rs, "cull thread helper\n", "t", NULL), 0);
	struct graph *g = fx_build(&F, rs);
	cr_assert_not_null(g);
	cr_assert_eq(fx_in_kind(g, graph_vertex_at(g, 10, e), GE_WAKEUP), 0);
	cr_assert_gt(fx_nvtx(g, 20), 0, "culled threads keep vertices");
	graph_free(g);
	rules_free(rs);
	rs = rules_new();
	cr_assert_eq(rules_parse(rs, "ignore process pool\n", "t", NULL), 0);
	g = fx_build(&F, rs);
	cr_assert_eq(fx_nvtx(g, 10), 0);
	cr_assert_eq(fx_nvtx(g, 20), 0, "the process holds both threads");
	cr_assert_eq(graph_nedges(g), 0);
	graph_free(g);
	rules_free(rs);
}

Test(graph, input_rule_marks_vertex)
{
	uint64_t t0, tm;
	struct rules *rs = rules_new();

	cr_assert_eq(rules_add_defaults(rs, NULL), 0);
	mark_fixture(&t0, &tm);
	F.ev[F.n - 2].arg[0] = TU_INPUT;
	struct graph *g = fx_build(&F, rs);
	cr_assert(graph_vertex(g, graph_vertex_at(g, 10, tm))->flags &
	    GRAPH_VF_INPUT);
	graph_free(g);
	rules_free(rs);
	rs = rules_new();
	cr_assert_eq(rules_parse(rs, "input sys_enter:getpid", "t", NULL),
	    0);
	mark_fixture(&t0, &tm);
	g = fx_build(&F, rs);
	cr_assert(graph_vertex(g, graph_vertex_at(g, 10, t0))->flags &
	    GRAPH_VF_INPUT);
	graph_free(g);
	rules_free(rs);
}

Test(graph, connect_rule)
{
	fx_init(&F);
	fx_thread(&F, 10, 10, "a");
	fx_thread(&F, 20, 20, "b");
	fx_run(&F, 0, 10);
	uint64_t t1 = fx_user(&F, 10, TU_PROBE, 42);
	fx_blob(&F, "send_req");
	F.cpu = 1;
	fx_run(&F, 0, 20);
	uint64_t t2 = fx_user(&F, 20, TU_PROBE, 42);
	fx_blob(&F, "got_req");
	struct rules *rs = rules_new();
	cr_assert_eq(rules_parse(rs, "connect user:probe=send_* "
	    "user:probe=got_* key\n", "t", NULL), 0);
	struct graph *g = fx_build(&F, rs);
	cr_assert_eq(fx_in_src(g, graph_vertex_at(g, 20, t2), GE_USER),
	    graph_vertex_at(g, 10, t1));
	graph_free(g);
	rules_free(rs);
}

Test(graph, dot_output)
{
	uint64_t b, e;
	char *buf = NULL;
	size_t len = 0;

	task_fixture(0, &b, &e);
	struct graph *g = fx_build(&F, NULL);
	FILE *f = open_memstream(&buf, &len);
	graph_write_dot(g, graph_vertex_at(g, 10, e), 2, f);
	fclose(f);
	cr_assert(strstr(buf, "digraph") != NULL);
	cr_assert(strstr(buf, "wakeup") != NULL);
	cr_assert(strstr(buf, "style=dashed") != NULL);
	free(buf);
	graph_free(g);
}

/* A name learnt at the end of the trace applies to the whole thread, as
   a rebuild would apply it (the streamed build is replayed). */
Test(graph, late_thread_name_applies_everywhere)
{
	uint64_t b, e;
	struct rules *rs = rules_new();

	cr_assert_eq(rules_parse(rs, "cull thread late-helper\n", "t", NULL),
	    0);
	task_fixture(0, &b, &e);
	snprintf(F.th[1].comm, sizeof(F.th[1].comm), "late-helper");
	struct graph *g1 = fx_build(&F, rs);
	cr_assert_eq(fx_in_kind(g1, graph_vertex_at(g1, 10, e), GE_WAKEUP), 0);

	task_fixture(0, &b, &e);
	F.nth = 1;			/* thread 20 unknown at the start */
	F.cpu = TRACE_CPU_META;
	fx_ev(&F, 0, TT_THREAD, 20, 10, 10, 0);
	fx_blob(&F, "late-helper");
	struct graph *g2 = fx_build(&F, rs);
	cr_assert_eq(fx_in_kind(g2, graph_vertex_at(g2, 10, e), GE_WAKEUP), 0,
	    "the cull rule must hold before the name was seen");
	cr_assert_eq(graph_nedges(g2), graph_nedges(g1));
	cr_assert_str_eq(graph_thread(g2, graph_thread_find(g2, 20))->comm,
	    "late-helper");
	graph_free(g1);
	graph_free(g2);
	rules_free(rs);
}

/* A task whose end was lost does not glue the loop's later waits. */
Test(graph, loop_wait_closes_lost_callout)
{
	fx_init(&F);
	fx_thread(&F, 10, 10, "loop");
	fx_run(&F, 0, 10);
	fx_user(&F, 10, TU_CALLOUT_BEGIN, 1);
	uint64_t t1 = fx_user(&F, 10, TU_LOOP_WAIT, 0);
	fx_block(&F, 10, 0, SYS_poll, 0);
	uint64_t t2 = fx_run(&F, 0, 10);
	struct graph *g = fx_build(&F, NULL);
	cr_assert_neq(graph_vertex_at(g, 10, t1), graph_vertex_at(g, 10, t2));
	graph_free(g);
}

/*
 * A wake-up whose switch back in was lost (the thread acts again without
 * a switch naming it) still connects the waker to what the thread does
 * next; without a recorded wake-up nothing is guessed.
 */
Test(graph, wakeup_with_lost_switch_in)
{
	fx_init(&F);
	fx_thread(&F, 10, 10, "waiter");
	fx_thread(&F, 20, 20, "waker");
	fx_thread(&F, 30, 30, "alone");
	fx_run(&F, 0, 10);
	fx_block(&F, 10, 0, SYS_read, 5);
	fx_block(&F, 30, 0, SYS_read, 6);
	fx_run(&F, 0, 20);
	fx_ev(&F, 20, TT_WAKING, 10, 0, 120, 0);
	fx_block(&F, 20, 0, SYS_futex, 0xabc);
	/* no switch to 10 or 30: both simply go on */
	uint64_t t1 = fx_ev(&F, 10, TT_SYS_EXIT, SYS_read, 12, 0, 0);
	uint64_t t2 = fx_ev(&F, 30, TT_SYS_EXIT, SYS_read, 12, 0, 0);
	struct graph *g = fx_build(&F, NULL);
	cr_assert_not_null(g);
	uint32_t v1 = graph_vertex_at(g, 10, t1);
	uint32_t v2 = graph_vertex_at(g, 30, t2);
	cr_assert_neq(v1, GRAPH_NONE);
	cr_assert_eq(fx_in_kind(g, v1, GE_WAKEUP), 1);
	cr_assert_eq(graph_vertex(g, fx_in_src(g, v1, GE_WAKEUP))->thread,
	    graph_thread_find(g, 20));
	cr_assert_eq(fx_in_kind(g, v2, GE_WAKEUP), 0);
	graph_free(g);
}

/*
 * The watchdog's hang begin (and its stack), written on behalf of a
 * thread that is blocked, is no sign that the thread ran: the wake-up
 * that ends its wait is still connected.
 */
Test(graph, proxy_hang_mark_keeps_wait)
{
	fx_init(&F);
	fx_thread(&F, 10, 10, "main");
	fx_thread(&F, 20, 10, "watchdog");
	fx_run(&F, 0, 10);
	fx_block(&F, 10, 20, SYS_read, 5);
	/* the watchdog marks the hang for 10 while 10 waits */
	fx_ev(&F, 10, TT_USER, TU_HANG_BEGIN, 10, 0, 0);
	fx_ev(&F, 20, TT_WAKING, 10, 0, 120, 0);
	fx_block(&F, 20, 10, SYS_futex, 0xabc);
	uint64_t t1 = fx_ev(&F, 10, TT_SYS_EXIT, SYS_read, 1, 0, 0);
	struct graph *g = fx_build(&F, NULL);
	cr_assert_not_null(g);
	uint32_t v1 = graph_vertex_at(g, 10, t1);
	cr_assert_neq(v1, GRAPH_NONE);
	cr_assert_eq(fx_in_kind(g, v1, GE_WAKEUP), 1);
	graph_free(g);
}
