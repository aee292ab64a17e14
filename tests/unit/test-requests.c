/*
 * test-requests.c: criterion tests of the request boundary rule of the
 * graph build (engine/graph-conn.c) and of the slice through it
 * (engine/diag-slice.c), on traces built in code (graph-fixture.h).
 *
 * The fixture is a server thread taking two requests from one client
 * process without blocking between them: both are queued on its socket
 * before it runs; it answers the first, then takes the second. The
 * client process has two threads, one request each, so that following
 * the wrong request names the wrong thread.
 */
#include <criterion/criterion.h>

#include "graph-fixture.h"

#define MS 1000000ULL

static struct fx F;

enum { P = 10, T1 = 11, T2 = 12, S = 40 };
#define SK_T1 0x1001	/* T1's socket, where its answer arrives */
#define SK_T2 0x1002
#define SK_S 0x4001	/* the server's socket */

struct times {
	uint64_t rq1, rp1, rq2, rp2;
};

/*
 * T1 and T2 each send one request to S and wait for the answer. S was
 * asleep; it takes request 1, works work1_ms, answers, takes request 2
 * at once and works work2_ms before answering (reply2 0: it never
 * answers and blocks elsewhere).
 */
static void
two_requests(uint64_t work1_ms, uint64_t work2_ms, struct times *tm)
{
	fx_init(&F);
	fx_thread(&F, T1, P, "pool-1");
	fx_thread(&F, T2, P, "pool-2");
	fx_thread(&F, S, S, "srv");
	/* S waits for requests */
	fx_block(&F, S, 0, SYS_recvmsg, SK_S);
	F.ts += 5 * MS;
	F.cpu = 1;
	fx_run(&F, 0, T1);
	/* T1's and T2's sockets are theirs once they have read on them */
	fx_ev(&F, T1, TT_SOCK_RECV, SK_T1, 1, 0, 10);
	fx_ev(&F, T1, TT_SK_DATA_READY, SK_S, 1, 0, 0);
	fx_ev(&F, T1, TT_WAKING, S, 0, 120, 0);
	fx_block(&F, T1, T2, SYS_recvmsg, SK_T1);
	fx_ev(&F, T2, TT_SOCK_RECV, SK_T2, 1, 0, 10);
	fx_ev(&F, T2, TT_SK_DATA_READY, SK_S, 1, 0, 0);
	fx_block(&F, T2, 0, SYS_recvmsg, SK_T2);
	F.cpu = 0;
	fx_run(&F, 0, S);
	fx_ev(&F, S, TT_SYS_EXIT, SYS_recvmsg, 10, 0, 0);
	tm->rq1 = fx_ev(&F, S, TT_SOCK_RECV, SK_S, 1, 0, 10);
	F.ts += work1_ms * MS;
	tm->rp1 = fx_ev(&F, S, TT_SK_DATA_READY, SK_T1, 1, 0, 0);
	fx_ev(&F, S, TT_WAKING, T1, 0, 120, 0);
	tm->rq2 = fx_ev(&F, S, TT_SOCK_RECV, SK_S, 1, 0, 10);
	F.ts += work2_ms * MS;
	tm->rp2 = fx_ev(&F, S, TT_SK_DATA_READY, SK_T2, 1, 0, 0);
	fx_ev(&F, S, TT_WAKING, T2, 0, 120, 0);
	fx_block(&F, S, 0, SYS_recvmsg, SK_S);
	F.ts += 5 * MS;
}

/* The tid of the thread of vertex v. */
static uint32_t
tid_of(const struct graph *g, uint32_t v)
{
	if (v == GRAPH_NONE)
		return 0;
	return graph_thread(g, graph_vertex(g, v)->thread)->tid;
}

Test(requests, one_vertex_per_answered_request)
{
	struct times tm;

	two_requests(1, 1, &tm);
	struct graph *g = fx_build(&F, NULL);
	cr_assert_not_null(g);
	uint32_t v1 = graph_vertex_at(g, S, tm.rq1);
	uint32_t v2 = graph_vertex_at(g, S, tm.rq2);
	cr_assert_neq(v1, GRAPH_NONE);
	cr_assert_neq(v1, v2, "the second request after an answer begins "
	    "a new vertex");
	cr_assert_eq(graph_vertex_at(g, S, tm.rp1), v1,
	    "the answer stays with its request");
	cr_assert_eq(graph_vertex_at(g, S, tm.rp2), v2);
	cr_assert_eq(graph_vertex_start(g, v2), tm.rq2);
	cr_assert(graph_vertex(g, v2)->flags & GRAPH_VF_SPLIT);
	cr_assert_eq(fx_in_src(g, v2, GE_SEQ), v1,
	    "request segments of one thread are joined by a weak edge");
	/* each request segment holds exactly its own message */
	cr_assert_eq(fx_in_kind(g, v1, GE_MSG), 1);
	cr_assert_eq(fx_in_kind(g, v2, GE_MSG), 1);
	cr_assert_eq(tid_of(g, fx_in_src(g, v1, GE_MSG)), T1);
	cr_assert_eq(tid_of(g, fx_in_src(g, v2, GE_MSG)), T2);
	graph_free(g);
}

/* Two receives before any answer are one request batch: not cut. */
Test(requests, no_cut_without_an_answer)
{
	fx_init(&F);
	fx_thread(&F, T1, P, "pool-1");
	fx_thread(&F, S, S, "srv");
	F.cpu = 1;
	fx_run(&F, 0, T1);
	fx_ev(&F, T1, TT_SOCK_RECV, SK_T1, 1, 0, 10);
	fx_ev(&F, T1, TT_SK_DATA_READY, SK_S, 1, 0, 0);
	fx_ev(&F, T1, TT_SK_DATA_READY, SK_S, 1, 0, 0);
	F.cpu = 0;
	fx_run(&F, 0, S);
	uint64_t a = fx_ev(&F, S, TT_SOCK_RECV, SK_S, 1, 0, 10);
	uint64_t b = fx_ev(&F, S, TT_SOCK_RECV, SK_S, 1, 0, 10);
	/* the answer to both, then a receive on its own socket from
	   itself (a wake-up pipe of its own process is no request) */
	fx_ev(&F, S, TT_SK_DATA_READY, SK_T1, 1, 0, 0);
	fx_ev(&F, S, TT_SK_DATA_READY, 0x7001, 1, 0, 0);
	uint64_t c = fx_ev(&F, S, TT_SOCK_RECV, 0x7001, 1, 0, 10);
	struct graph *g = fx_build(&F, NULL);
	cr_assert_not_null(g);
	uint32_t v = graph_vertex_at(g, S, a);
	cr_assert_eq(graph_vertex_at(g, S, b), v);
	cr_assert_eq(graph_vertex_at(g, S, c), v,
	    "a message from its own process is not another request");
	/* the two requests (a message to itself is no edge) */
	cr_assert_eq(fx_in_kind(g, v, GE_MSG), 2);
	graph_free(g);
}

/*
 * S runs 60 ms on request 2 (T2's), after 30 ms on request 1 (T1's):
 * a busy hang. The walk back from the spinning node must reach T2, who
 * sent the work, although T2's message waited 30 ms in the queue and
 * T1's did not.
 */
Test(requests, busy_slice_follows_the_second_request)
{
	struct times tm;

	two_requests(30, 60, &tm);
	struct graph *g = fx_build(&F, NULL);
	cr_assert_not_null(g);
	struct diag_opts o = { .threshold_ns = 10 * MS, .tid = S };
	struct diag *d = NULL;
	cr_assert_eq(diag_new(g, &o, &d, NULL), 0);
	size_t hb = SIZE_MAX;
	for (size_t h = 0; h < diag_nhangs(d); h++)
		if (diag_hang(d, h)->kind == DIAG_BUSY &&
		    diag_hang(d, h)->th.tid == S)
			hb = h;
	cr_assert_neq(hb, SIZE_MAX, "the server's run is a busy hang");
	const struct diag_hang *h = diag_hang(d, hb);
	cr_assert_eq(graph_vertex_start(g, h->node), tm.rq2,
	    "the spinning node is the second request's");
	const struct diag_thread *ct = diag_cause_thread(d, hb);
	cr_assert_not_null(ct);
	cr_assert_eq(ct->tid, T2, "the work came from %u, not %u", T2,
	    ct->tid);
	/* the path: the spinning node, then T2's request */
	cr_assert_geq(diag_npath(d, hb), 2);
	cr_assert_eq(diag_path(d, hb, 1)->th.tid, T2);
	diag_free(d);
	graph_free(g);
}
