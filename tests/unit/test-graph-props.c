/*
 * test-graph-props.c: graph properties on a deterministic simulated
 * trace: 12 threads in 4 processes on 2 CPUs taking random but consistent
 * steps (syscalls, blocking waits, wake-ups, preemption, tasks, timer
 * interrupts, socket messages). Checks: every wake-up edge points forward
 * in time, no vertex spans a wait outside a callout, every event of a
 * thread is in exactly one vertex, a rebuild gives the same graph, and
 * a graph of two windows is the two graphs of each window.
 */
#include <criterion/criterion.h>

#include "graph-fixture.h"

#define NT 12
#define NCPU 2

static struct fx F;

static uint64_t rng = 88172645463325252ULL;

static unsigned
rnd(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

enum { RUNNING, RUNNABLE, WAITING };

static void
simulate(void)
{
	int state[NT + 1], intask[NT + 1];
	uint32_t cur[NCPU] = { 0 };

	fx_init(&F);
	for (uint32_t t = 1; t <= NT; t++) {
		char name[16];
		snprintf(name, sizeof(name), "t%u", t);
		fx_thread(&F, 100 + t, 100 + (t - 1) / 3 * 3 + 1, name);
		state[t] = RUNNABLE;
		intask[t] = 0;
	}
	while (F.n < FX_MAX - 16) {
		unsigned c = rnd(NCPU);
		F.cpu = c;
		uint32_t me = cur[c];
		if (me == 0) {
			uint32_t t = 1 + rnd(NT);
			if (state[t] == WAITING && rnd(4) == 0) {
				/* a device interrupt during idle */
				F.ctx = TRACE_CTX_HARDIRQ;
				fx_ev(&F, 0, TT_IRQ_ENTRY, 5, 0, 0, 0);
				fx_ev(&F, 0, TT_WAKING, 100 + t, c, 120, 0);
				fx_ev(&F, 0, TT_IRQ_EXIT, 5, 1, 0, 0);
				F.ctx = TRACE_CTX_TASK;
				state[t] = RUNNABLE;
			} else if (state[t] == RUNNABLE) {
				fx_run(&F, 0, 100 + t);
				state[t] = RUNNING;
				cur[c] = t;
			}
			continue;
		}
		uint32_t tid = 100 + me;
		uint32_t o = 1 + rnd(NT);
		switch (rnd(9)) {
		case 0:
			fx_ev(&F, tid, TT_SYS_ENTER, SYS_getpid, 0, 0, 0);
			fx_ev(&F, tid, TT_SYS_EXIT, SYS_getpid, tid, 0, 0);
			break;
		case 1: case 2:		/* block, maybe to another thread */
			fx_ev(&F, tid, TT_SYS_ENTER, SYS_futex, 0x1000 + o,
			    0, 0);
			state[me] = WAITING;
			if (state[o] == RUNNABLE) {
				fx_ev(&F, tid, TT_SWITCH, 1, 100 + o, 120, 0);
				state[o] = RUNNING;
				cur[c] = o;
			} else {
				fx_ev(&F, tid, TT_SWITCH, 1, 0, 120, 0);
				cur[c] = 0;
			}
			break;
		case 3:
			if (state[o] == WAITING) {
				fx_ev(&F, tid, TT_WAKING, 100 + o, 0, 120, 0);
				state[o] = RUNNABLE;
			}
			break;
		case 4:			/* preempted */
			if (state[o] == RUNNABLE) {
				fx_ev(&F, tid, TT_SWITCH, 0, 100 + o, 120, 0);
				state[me] = RUNNABLE;
				state[o] = RUNNING;
				cur[c] = o;
			}
			break;
		case 5:
			fx_user(&F, tid, intask[me] ? TU_TASK_END :
			    TU_TASK_BEGIN, me);
			intask[me] = !intask[me];
			break;
		case 6:			/* timer interrupt waking someone */
			F.ctx = TRACE_CTX_HARDIRQ;
			fx_ev(&F, tid, TT_TIMER_EXPIRE, 0x9000 + o, 1, 0, 0);
			if (state[o] == WAITING) {
				fx_ev(&F, tid, TT_WAKING, 100 + o, 0, 120, 0);
				state[o] = RUNNABLE;
			}
			fx_ev(&F, tid, TT_TIMER_EXPIRE_EXIT, 0x9000 + o, 1, 0,
			    0);
			F.ctx = TRACE_CTX_TASK;
			break;
		case 7:
			fx_ev(&F, tid, TT_SK_DATA_READY, 0x7000 + o, 1, 0, 0);
			fx_ev(&F, tid, TT_TIMER_START, 0x9000 + o, 0, 0, 1);
			break;
		case 8:
			fx_ev(&F, tid, TT_SOCK_RECV, 0x7000 + me, 1, 0, 8);
			break;
		}
	}
}

static void
check(const struct graph *g)
{
	size_t nwake = 0;
	char *cause = NULL;

	cr_assert_eq(graph_check(g, &cause), 0, "%s", cause);

	for (uint32_t e = 0; e < graph_nedges(g); e++) {
		const struct graph_edge *ed = graph_edge(g, e);
		const struct graph_event *s = graph_event(g,
		    graph_vertex(g, ed->src)->thread, ed->src_ev);
		const struct graph_event *d = graph_event(g,
		    graph_vertex(g, ed->dst)->thread, ed->dst_ev);
		cr_assert_not_null(s);
		cr_assert_not_null(d);
		cr_assert_eq(graph_vertex_of_event(g,
		    graph_vertex(g, ed->src)->thread, ed->src_ev), ed->src);
		cr_assert_eq(graph_vertex_of_event(g,
		    graph_vertex(g, ed->dst)->thread, ed->dst_ev), ed->dst);
		if (ed->kind == GE_WAKEUP) {
			nwake++;
			cr_assert_leq(s->ts, d->ts, "wake-up edge %u goes "
			    "back in time", e);
			cr_assert_eq(d->type, GRAPH_EV_RUN);
		}
		if (ed->kind == GE_WAIT)
			cr_assert_leq(s->ts, d->ts);
	}
	cr_assert_gt(nwake, 50, "the simulation must exercise wake-ups");
	for (uint32_t ti = 0; ti < graph_nthreads(g); ti++) {
		size_t nv;
		const uint32_t *vs = graph_thread_vertices(g, ti, &nv);
		uint32_t next = 0;
		for (size_t k = 0; k < nv; k++) {
			const struct graph_vertex *v = graph_vertex(g, vs[k]);
			cr_assert_eq(v->first, next, "events in one vertex");
			next = v->first + v->nevents;
			for (uint32_t i = v->first; i + 1 < next; i++) {
				const struct graph_event *ev = graph_event(g,
				    ti, i);
				if (ev->type == TT_SWITCH &&
				    (ev->flags & GRAPH_EVF_WAIT))
					cr_assert_eq(v->kind, GV_TASK, "vertex "
					    "%u spans a wait", vs[k]);
			}
		}
		cr_assert_eq(next, graph_thread(g, ti)->nevents);
	}
}

Test(graph_props, simulated_trace)
{
	simulate();
	struct graph *g = fx_build(&F, NULL);
	cr_assert_not_null(g);
	check(g);
	/* the build streamed with the load equals a replay */
	size_t nv = graph_nvertices(g), ne = graph_nedges(g);
	struct graph_vertex *vs = malloc(nv * sizeof(*vs));
	struct graph_edge *es = malloc(ne * sizeof(*es));
	for (uint32_t v = 0; v < nv; v++)
		vs[v] = *graph_vertex(g, v);
	for (uint32_t e = 0; e < ne; e++)
		es[e] = *graph_edge(g, e);
	cr_assert_eq(graph_rebuild(g, NULL, NULL), 0);
	cr_assert_eq(graph_nvertices(g), nv);
	cr_assert_eq(graph_nedges(g), ne);
	for (uint32_t v = 0; v < nv; v++)
		cr_assert_eq(memcmp(&vs[v], graph_vertex(g, v), sizeof(*vs)),
		    0, "vertex %u differs", v);
	for (uint32_t e = 0; e < ne; e++)
		cr_assert_eq(memcmp(&es[e], graph_edge(g, e), sizeof(*es)),
		    0, "edge %u differs", e);
	free(vs);
	free(es);
	check(g);
	struct graph_stats st;
	graph_get_stats(g, &st);
	cr_assert_eq(st.threads, NT);
	cr_assert_eq(st.processes, 4);
	cr_assert_gt(st.edges_by_kind[GE_TIMER], 0);
	cr_assert_gt(st.edges_by_kind[GE_MSG], 0);
	graph_free(g);
}

/* The same simulated trace through the real store gives the same graph. */
Test(graph_props, through_the_store)
{
	char dir[] = "/tmp/argus-graph-XXXXXX";
	struct trace_writer *w;
	struct trace_reader *r;
	char *cause = NULL;
	struct graph *g1, *g2;

	simulate();
	cr_assert_not_null(mkdtemp(dir));
	struct trace_writer_opts o = { .ncpus = NCPU, .hostname = "t",
	    .release = "t", .boot_id = "t" };
	cr_assert_eq(trace_writer_open(&w, dir, &o, &cause), 0, "%s", cause);
	for (size_t i = 0; i < F.nth; i++)
		cr_assert_eq(trace_writer_thread(w, 1, &F.th[i]), 0);
	for (size_t i = 0; i < F.n; i++)
		cr_assert_eq(trace_writer_add(w, &F.ev[i]), 0);
	cr_assert_eq(trace_writer_close(w), 0);
	cr_assert_eq(trace_reader_open(&r, dir, &cause), 0, "%s", cause);
	cr_assert_eq(graph_build(r, NULL, &g2, &cause), 0);
	g1 = fx_build(&F, NULL);
	cr_assert_eq(graph_nvertices(g2), graph_nvertices(g1));
	cr_assert_eq(graph_nedges(g2), graph_nedges(g1));
	check(g2);
	uint32_t t = graph_thread_find(g2, 101);
	cr_assert_str_eq(graph_thread(g2, t)->comm, "t1");
	graph_free(g1);
	graph_free(g2);
	cr_assert_eq(fx_unstore(r, dir), 0);
}

/* Whether two graphs hold the same threads, events, vertices and edges. */
static void
same_graph(const struct graph *a, const struct graph *b)
{
	cr_assert_eq(graph_nthreads(a), graph_nthreads(b));
	for (uint32_t t = 0; t < graph_nthreads(a); t++) {
		const struct graph_thread *x = graph_thread(a, t),
		    *y = graph_thread(b, t);
		cr_assert_eq(x->tid, y->tid);
		cr_assert_eq(x->nevents, y->nevents, "thread %u", x->tid);
		for (uint32_t i = 0; i < x->nevents; i++)
			cr_assert_eq(memcmp(graph_event(a, t, i),
			    graph_event(b, t, i), sizeof(struct graph_event)),
			    0, "event %u of thread %u differs", i, x->tid);
	}
	cr_assert_eq(graph_nvertices(a), graph_nvertices(b));
	cr_assert_eq(graph_nedges(a), graph_nedges(b));
	for (uint32_t v = 0; v < graph_nvertices(a); v++)
		cr_assert_eq(memcmp(graph_vertex(a, v), graph_vertex(b, v),
		    sizeof(struct graph_vertex)), 0, "vertex %u differs", v);
	for (uint32_t e = 0; e < graph_nedges(a); e++)
		cr_assert_eq(memcmp(graph_edge(a, e), graph_edge(b, e),
		    sizeof(struct graph_edge)), 0, "edge %u differs", e);
}

/* The simulated trace written copies times over into a new store in dir,
   each copy span after the one before, in chunks of 4 KiB. */
static void
write_copies(char *dir, unsigned copies, uint64_t span)
{
	struct trace_writer *w;
	char *cause = NULL;

	cr_assert_not_null(mkdtemp(dir));
	struct trace_writer_opts o = { .ncpus = NCPU, .hostname = "t",
	    .release = "t", .boot_id = "t", .chunk_size = 4096 };
	cr_assert_eq(trace_writer_open(&w, dir, &o, &cause), 0, "%s", cause);
	for (size_t i = 0; i < F.nth; i++)
		cr_assert_eq(trace_writer_thread(w, 1, &F.th[i]), 0);
	for (unsigned c = 0; c < copies; c++)
		for (size_t i = 0; i < F.n; i++) {
			struct trace_event e = F.ev[i];
			e.ts += c * span;
			cr_assert_eq(trace_writer_add(w, &e), 0);
		}
	cr_assert_eq(trace_writer_close(w), 0);
}

/*
 * The load on two threads (a reading thread filling a ring of batches)
 * gives the graph of the load on one, on a trace of many batches: the
 * simulated trace written 12 times over, one copy after another.
 */
Test(graph_props, two_thread_load_is_the_one_thread_load)
{
	char dir[] = "/tmp/argus-graph-XXXXXX";
	struct trace_reader *r;
	char *cause = NULL;
	struct graph *g1, *g2;
	enum { COPIES = 12 };

	simulate();
	write_copies(dir, COPIES, F.ev[F.n - 1].ts + 1000);
	cr_assert_gt(F.n * COPIES, 2 * 8 * 1024, "more events than the ring");

	cr_assert_eq(setenv("ARGUS_LOAD_THREADS", "1", 1), 0);
	cr_assert_eq(trace_reader_open(&r, dir, &cause), 0, "%s", cause);
	cr_assert_eq(graph_build(r, NULL, &g1, &cause), 0);
	trace_reader_close(r);
	cr_assert_eq(setenv("ARGUS_LOAD_THREADS", "2", 1), 0);
	cr_assert_eq(trace_reader_open(&r, dir, &cause), 0, "%s", cause);
	cr_assert_eq(graph_build(r, NULL, &g2, &cause), 0);
	trace_reader_close(r);
	unsetenv("ARGUS_LOAD_THREADS");
	struct graph_stats st;
	graph_get_stats(g1, &st);
	cr_assert_eq(st.trace_events, F.n * COPIES + F.nth);
	same_graph(g1, g2);
	graph_free(g1);
	graph_free(g2);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

/*
 * A window's lead read from the time merge after a seek to its start
 * (as a short lead is) gives the graph of the lead decoded chunk by
 * chunk on two threads (as a long one is): windows of one and of two
 * parts, cut at places of the simulated trace written 3 times over.
 */
Test(graph_props, merged_lead_is_the_lead_by_chunks)
{
	char dir[] = "/tmp/argus-graph-XXXXXX";
	struct trace_reader *r;
	char *cause = NULL;
	enum { COPIES = 3 };

	simulate();
	uint64_t t0 = F.ev[0].ts, span = F.ev[F.n - 1].ts - t0 + 1000;
	write_copies(dir, COPIES, span);
	const uint64_t win[][2][2] = {
		{ { t0 + span * 3 / 10, t0 + span * 7 / 10 } },
		{ { t0 + span / 2, t0 + span + span / 3 } },
		{ { t0 + span / 7, t0 + span / 5 },
		  { t0 + span + span / 2, t0 + 2 * span + span / 4 } },
	};
	const size_t nwin[] = { 1, 1, 2 };
	cr_assert_eq(trace_reader_open(&r, dir, &cause), 0, "%s", cause);
	for (size_t k = 0; k < sizeof(nwin) / sizeof(nwin[0]); k++) {
		struct graph *gc, *gm;
		cr_assert_eq(setenv("ARGUS_LEAD", "chunks", 1), 0);
		cr_assert_eq(graph_build_windows(r, NULL, win[k], nwin[k], &gc,
		    &cause), 0, "%s", cause);
		cr_assert_eq(setenv("ARGUS_LEAD", "merged", 1), 0);
		cr_assert_eq(graph_build_windows(r, NULL, win[k], nwin[k], &gm,
		    &cause), 0, "%s", cause);
		unsetenv("ARGUS_LEAD");
		cr_assert_gt(graph_nedges(gc), 100, "windows %zu", k);
		same_graph(gc, gm);
		graph_free(gc);
		graph_free(gm);
	}
	cr_assert_eq(fx_unstore(r, dir), 0);
}

/* An edge told by its ends' threads (tid) and events, in the graph of
   one window or, with off[] the events of each thread in an earlier
   window (by thread index), of several. */
struct xedge {
	uint32_t stid, sev, dtid, dev;
	uint8_t kind, flags;
};

static int
xedge_cmp(const void *x, const void *y)
{
	return memcmp(x, y, sizeof(struct xedge));
}

static size_t
xedges(const struct graph *g, const uint32_t *off, struct xedge *out)
{
	size_t n = graph_nedges(g);

	for (uint32_t e = 0; e < n; e++) {
		const struct graph_edge *ed = graph_edge(g, e);
		uint32_t st = graph_vertex(g, ed->src)->thread;
		uint32_t dt = graph_vertex(g, ed->dst)->thread;
		memset(&out[e], 0, sizeof(out[e]));
		out[e].stid = graph_thread(g, st)->tid;
		out[e].sev = ed->src_ev + (off ? off[st] : 0);
		out[e].dtid = graph_thread(g, dt)->tid;
		out[e].dev = ed->dst_ev + (off ? off[dt] : 0);
		out[e].kind = ed->kind;
		out[e].flags = ed->flags;
	}
	return n;
}

/*
 * A graph of two windows far apart is the graphs of each window alone,
 * side by side: each thread's events of the first then of the second,
 * the same vertices, and the same edges, none from one window into the
 * other. The simulated trace written 3 times over; a window in the
 * first copy and one in the third.
 */
Test(graph_props, two_windows_are_each_window_alone)
{
	char dir[] = "/tmp/argus-graph-XXXXXX";
	struct trace_reader *r;
	char *cause = NULL;
	struct graph *ga, *gb, *gab;
	enum { COPIES = 3 };

	simulate();
	uint64_t t0 = F.ev[0].ts, span = F.ev[F.n - 1].ts - t0 + 1000;
	write_copies(dir, COPIES, span);
	const uint64_t win[2][2] = {
		{ t0 + span * 3 / 10, t0 + span * 7 / 10 },
		{ t0 + 2 * span + span * 3 / 10, t0 + 2 * span + span * 7 / 10 },
	};
	cr_assert_eq(trace_reader_open(&r, dir, &cause), 0, "%s", cause);
	cr_assert_eq(graph_build_window(r, NULL, win[0][0], win[0][1], &ga,
	    &cause), 0, "%s", cause);
	cr_assert_eq(graph_build_window(r, NULL, win[1][0], win[1][1], &gb,
	    &cause), 0, "%s", cause);
	cr_assert_eq(graph_build_windows(r, NULL, win, 2, &gab, &cause), 0,
	    "%s", cause);
	const uint64_t bad[2][2] = { { win[0][0], win[1][0] },
	    { win[0][1], win[1][1] } };
	cr_assert_eq(graph_build_windows(r, NULL, bad, 2, &ga, &cause),
	    GRAPH_ERANGE, "overlapping windows are refused");
	free(cause);
	trace_reader_close(r);

	/* events and vertices, thread by thread */
	size_t nth = graph_nthreads(gab);
	uint32_t *off = calloc(nth, sizeof(*off));
	cr_assert_eq(graph_nthreads(ga), nth);
	cr_assert_eq(graph_nthreads(gb), nth);
	for (uint32_t t = 0; t < nth; t++) {
		const struct graph_thread *x = graph_thread(ga, t),
		    *y = graph_thread(gb, t), *z = graph_thread(gab, t);
		cr_assert_eq(x->tid, z->tid);
		cr_assert_eq(y->tid, z->tid);
		cr_assert_eq(z->nevents, x->nevents + y->nevents,
		    "thread %u", z->tid);
		off[t] = x->nevents;
		for (uint32_t i = 0; i < z->nevents; i++)
			cr_assert_eq(memcmp(graph_event(gab, t, i), i < off[t] ?
			    graph_event(ga, t, i) : graph_event(gb, t,
			    i - off[t]), sizeof(struct graph_event)), 0,
			    "event %u of thread %u", i, z->tid);
		size_t na, nb, nz;
		const uint32_t *va = graph_thread_vertices(ga, t, &na);
		const uint32_t *vb = graph_thread_vertices(gb, t, &nb);
		const uint32_t *vz = graph_thread_vertices(gab, t, &nz);
		cr_assert_eq(nz, na + nb, "vertices of thread %u", z->tid);
		for (size_t k = 0; k < nz; k++) {
			struct graph_vertex p = k < na ? *graph_vertex(ga,
			    va[k]) : *graph_vertex(gb, vb[k - na]);
			if (k >= na)
				p.first += off[t];
			cr_assert_eq(memcmp(&p, graph_vertex(gab, vz[k]),
			    sizeof(p)), 0, "vertex %zu of thread %u", k,
			    z->tid);
		}
	}
	/* the edges, as sets */
	size_t na = graph_nedges(ga), nb = graph_nedges(gb);
	size_t nz = graph_nedges(gab);
	cr_assert_eq(nz, na + nb);
	cr_assert_gt(na, 100);
	cr_assert_gt(nb, 100);
	struct xedge *xs = calloc(nz, sizeof(*xs)), *zs = calloc(nz,
	    sizeof(*zs));
	xedges(ga, NULL, xs);
	xedges(gb, off, xs + na);
	xedges(gab, NULL, zs);
	qsort(xs, nz, sizeof(*xs), xedge_cmp);
	qsort(zs, nz, sizeof(*zs), xedge_cmp);
	for (size_t e = 0; e < nz; e++)
		cr_assert_eq(xedge_cmp(&xs[e], &zs[e]), 0, "edge %zu differs",
		    e);
	/* a rebuild (a replay of the loaded events) keeps the gap */
	cr_assert_eq(graph_rebuild(gab, NULL, NULL), 0);
	cr_assert_eq(graph_nedges(gab), nz);
	xedges(gab, NULL, zs);
	qsort(zs, nz, sizeof(*zs), xedge_cmp);
	for (size_t e = 0; e < nz; e++)
		cr_assert_eq(xedge_cmp(&xs[e], &zs[e]), 0, "edge %zu differs "
		    "after the rebuild", e);
	check(gab);
	free(xs);
	free(zs);
	free(off);
	graph_free(ga);
	graph_free(gb);
	graph_free(gab);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

/* The hash map against a plain array, with deletions in probe runs. */
#include "engine/engine-local.h"

Test(graph_props, hmap_matches_reference)
{
	enum { N = 5000 };
	static uint64_t ref[N];
	static uint8_t in[N];
	struct hmap m;

	hmap_init(&m);
	memset(in, 0, sizeof(in));
	for (int round = 0; round < 200000; round++) {
		unsigned k = rnd(N);
		uint64_t key = (uint64_t)k * 64;	/* clustered keys */
		switch (rnd(3)) {
		case 0: case 1:
			*hmap_put(&m, key, 0, NULL) = round;
			ref[k] = (uint64_t)round;
			in[k] = 1;
			break;
		case 2: {
			uint64_t v;
			int had = hmap_del(&m, key, &v);
			cr_assert_eq(had, in[k]);
			if (had)
				cr_assert_eq(v, ref[k]);
			in[k] = 0;
			break;
		}
		}
	}
	size_t n = 0;
	for (unsigned k = 0; k < N; k++) {
		uint64_t *p = hmap_get(&m, (uint64_t)k * 64);
		cr_assert_eq(p != NULL, in[k], "key %u", k);
		if (p != NULL)
			cr_assert_eq(*p, ref[k]);
		n += in[k];
	}
	cr_assert_eq(m.n, n);
	hmap_free(&m);
}
