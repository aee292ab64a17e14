/*
 * diag-diff.c: the diff of a level of the culprit recursion against the
 * threads of a normal path (step 6 of argus-diagnose(1), the
 * AssistedGraphDiff).
 *
 * First, the thread that ended the diagnosed wait by waking it directly
 * and ran most of the window is the culprit, busy, on the path or not
 * (a runtime's pool of threads: the lock's holder ran on another thread
 * than the normal case's waker); the path is then not looked at.
 *
 * Else each thread of the path (in path order, the diagnosed one excepted,
 * once each) is looked at over the window the diagnosed thread waited:
 * running most of it (busy), or blocked most of it on a wait other than
 * its idle one (the wait it spends its idle time in, for work or input:
 * a thread idle there merely waits for the one before it in the chain).
 * Every blocked such thread is a culprit: when several threads wait on
 * one resource, the last one to wake the others does not take all the
 * blame alone. Timed slices on one futex that cover most of the window
 * (diag_slices_overlapping()) are a wait like one. A busy thread ends
 * the list (what is behind it in the path only fed it its work
 * earlier). After the first culprit, only the threads whose part in the
 * path came while the diagnosed thread waited in the normal case count:
 * the thread the input came from, or one that sent the request before
 * the wait began, waits for its own reasons.
 *
 * One idle thread is a culprit all the same: the thread that ended the
 * diagnosed wait by waking it directly (a wake-up or a signal, no
 * message or pipe data with it), after sitting in its own idle wait for
 * most of the window until input came (a message or pipe data; a thread
 * woken by a plain wake-up only relays its waker), from another process
 * or, for a thread of the waiter's own, from one the waiter did not
 * exchange with (idle_holder()). It held what the waiter needed across
 * its wait for input (a database session idle in its transaction holding
 * a row lock, a process holding a lock while it polls), and is listed
 * after the others.
 */
#include <stdlib.h>
#include <string.h>

#include "diag-local.h"

/* The thread whose request a busy vertex ran (another process's): a
   message, a wake-up or a pipe from it, not the fork that started the
   process (a child runs its own program, not a request). */
static void
serving(const struct diag *d, uint32_t ti, uint64_t at,
    struct diag_thread *out)
{
	const struct graph *g = d->g;
	uint32_t v = graph_vertex_at(g, g->th[ti].tid, at);

	memset(out, 0, sizeof(*out));
	out->comm = out->process = "";
	for (int hop = 0; hop < 4 && v != GRAPH_NONE; hop++) {
		size_t n;
		const uint32_t *in = graph_in_edges(g, v, &n);
		for (size_t k = n; k-- > 0;) {
			const struct graph_edge *e = graph_edge(g, in[k]);
			uint32_t st = g->vx[e->src].thread;
			if (graph_edge_kind_weak(e->kind) ||
			    e->kind == GE_SPAWN ||
			    !diag_user_thread(g, st) ||
			    g->th[st].pid == g->th[ti].pid ||
			    g->th[ti].ev[e->dst_ev].ts > at)
				continue;
			diag_thread_fill(g, st, out);
			return;
		}
		/* the previous vertex of the thread */
		const struct gthread *t = &g->th[ti];
		uint32_t lo = 0, hi = t->nvtx;
		while (lo < hi) {
			uint32_t mid = (lo + hi) / 2;
			if (t->vtx[mid] < v)
				lo = mid + 1;
			else
				hi = mid;
		}
		v = lo > 0 ? t->vtx[lo - 1] : GRAPH_NONE;
	}
}

/* The user thread that ended level lv's wait by waking it directly
   (its first wake-up or signal in), at *wts; GRAPH_NONE when none did.
   *v is the vertex where the wait ended. */
static uint32_t
direct_waker(const struct diag *d, const struct level *lv, uint32_t *v,
    uint64_t *wts)
{
	const struct graph *g = d->g;
	size_t n;

	*v = GRAPH_NONE;
	if (lv->dw.run == GRAPH_NONE || lv->dw.ti != lv->ti ||
	    (*v = graph_vertex_of_event(g, lv->ti, lv->dw.run)) == GRAPH_NONE)
		return GRAPH_NONE;
	const uint32_t *in = graph_in_edges(g, *v, &n);
	for (size_t k = 0; k < n; k++) {
		const struct graph_edge *e = graph_edge(g, in[k]);
		if (e->kind != GE_WAKEUP && e->kind != GE_SIGNAL)
			continue;
		uint32_t waker = g->vx[e->src].thread;
		*wts = g->th[waker].ev[e->src_ev].ts;
		return diag_user_thread(g, waker) ? waker : GRAPH_NONE;
	}
	return GRAPH_NONE;
}

/*
 * The idle holder of level lv's wait: the user thread that woke the
 * thread where its wait ended, by a wake-up or a signal only, and sat in
 * its idle wait for at least half of [lv->a, lv->b] until before that
 * wake-up, a wait that ended with input (a message or pipe data): from
 * anywhere when it is of another process; when of the waiter's own, from
 * a process other than those the waiter exchanged with before it waited
 * (and it did exchange with some). Returns its thread index, or
 * GRAPH_NONE; *w is its idle wait.
 */
static uint32_t
idle_holder(struct diag *d, const struct level *lv, struct dwait *w)
{
	const struct graph *g = d->g;
	uint64_t len = lv->b - lv->a, ov, wts = 0;
	uint32_t v, waker = direct_waker(d, lv, &v, &wts);
	size_t n;
	const uint32_t *in;

	if (waker == GRAPH_NONE)
		return GRAPH_NONE;
	in = graph_in_edges(g, v, &n);
	int kin = g->th[waker].pid == g->th[lv->ti].pid;
	/* what it sent came with a message: it answered, it held nothing */
	for (size_t k = 0; k < n; k++) {
		const struct graph_edge *e = graph_edge(g, in[k]);
		if ((e->kind == GE_MSG || e->kind == GE_PIPE) &&
		    g->vx[e->src].thread == waker)
			return GRAPH_NONE;
	}
	if (!diag_wait_overlapping(d, waker, lv->a, lv->b, w, &ov) ||
	    ov < len / 2 || w->end > wts || w->run == GRAPH_NONE ||
	    (g->th[waker].ev[w->sw].sub & 0x30) ||	/* exited */
	    diag_wait_key(g, w) != diag_idle_key(d, waker))
		return GRAPH_NONE;
	/* its idle wait ended with input (a message or pipe data); one
	   ended by a plain wake-up only relayed that waker's work. A
	   thread of the waiter's own process relays to it when that input
	   came from a process the waiter exchanged with before it waited
	   (the I/O thread of a client library handing over the reply of
	   the waiter's server), or when the waiter exchanged with none
	   (the library's thread did its I/O); one whose input came from
	   elsewhere held what it needed (the session of a
	   thread-per-connection server, idle in a transaction, until its
	   own client commits) */
	uint32_t peers[32];
	size_t np = kin ? diag_run_peers(g, lv->ti, diag_run_first(g,
	    lv->ti, lv->dw.sw), lv->dw.sw, peers, 32) : 0;
	v = graph_vertex_of_event(g, waker, w->run);
	in = v != GRAPH_NONE ? graph_in_edges(g, v, &n) : NULL;
	for (size_t k = 0; in != NULL && k < n; k++) {
		const struct graph_edge *e = graph_edge(g, in[k]);
		if (e->kind != GE_MSG && e->kind != GE_PIPE)
			continue;
		uint32_t src = g->th[g->vx[e->src].thread].pid;
		int known = src == g->th[lv->ti].pid;
		for (size_t i = 0; i < np; i++)
			known |= peers[i] == src;
		if (!kin || (np > 0 && !known))
			return waker;
	}
	return GRAPH_NONE;
}

/*
 * Whether a thread did its part in the path (step s, its latest there)
 * inside the diagnosed window and only then blocked in wait w (its
 * switch out at or after the end of the step's vertex): a wait after
 * its part cannot have delayed it (a parent that starts a helper and
 * then waits for the child that hung waits for the hang, not the other
 * way round).
 */
static int
done_before(const struct graph *g, const struct diag_step *s,
    const struct level *lv, const struct dwait *w)
{
	return s->node != GRAPH_NONE && s->ts >= lv->a &&
	    g->th[w->ti].ev[w->sw].ts >= graph_vertex_end(g, s->node);
}

/* x busy: thread ti ran most of level lv's window. */
static void
set_busy(const struct diag *d, uint32_t ti, const struct level *lv,
    struct dculprit *x)
{
	uint64_t mid = lv->a + (lv->b - lv->a) / 2;

	x->c.kind = DIAG_BUSY;
	x->c.node = graph_vertex_at(d->g, x->c.th.tid, mid);
	x->c.wait.type = "cpu";
	snprintf(x->c.wait.resource, sizeof(x->c.wait.resource), "cpu");
	serving(d, ti, mid, &x->c.serving);
}

/* A culprit of level lv, thread ti, over the window, neither busy nor
   blocked yet. */
static void
culprit_init(const struct graph *g, uint32_t ti, const struct level *lv,
    struct dculprit *x)
{
	memset(x, 0, sizeof(*x));
	diag_thread_fill(g, ti, &x->c.th);
	x->c.serving.comm = x->c.serving.process = "";
	x->c.wait.syscall = "";
	x->c.wait.type = "";
	x->c.start_ns = lv->a;
	x->c.end_ns = lv->b;
}

/* x blocked in wait w of thread ti. */
static void
set_blocked(const struct graph *g, uint32_t ti, const struct dwait *w,
    struct dculprit *x)
{
	x->c.kind = DIAG_BLOCKED;
	x->c.node = graph_vertex_of_event(g, ti, w->sw);
	x->c.start_ns = w->start;
	x->c.end_ns = w->end;
	x->c.wait = w->w;
	x->w = *w;
}

/*
 * Whether the diff names the thread of step st of level lv's path, into
 * *x: busy for half the window, or blocked that long on a wait other
 * than its idle one (a stopped thread never waits for work) that it did
 * not begin after its part in the path, or waiting in timed slices.
 */
static int
names(struct diag *d, const struct level *lv, const struct diag_step *st,
    struct dculprit *x)
{
	const struct graph *g = d->g;
	uint32_t ti = st->th.thread;
	uint64_t len = lv->b - lv->a, ov, from;
	struct dwait w;

	culprit_init(g, ti, lv, x);
	if (diag_cpu_time(g, ti, lv->a, lv->b) >= len / 2) {
		set_busy(d, ti, lv, x);
		return 1;
	}
	if (diag_wait_overlapping(d, ti, lv->a, lv->b, &w, &ov) &&
	    ov >= len / 2 &&
	    !(g->th[ti].ev[w.sw].sub & 0x30) &&	/* exited */
	    (diag_wait_key(g, &w) != diag_idle_key(d, ti) ||
	    (g->th[ti].ev[w.sw].sub & (DIAG_TASK_STOPPED |
	    DIAG_TASK_TRACED))) &&
	    !done_before(g, st, lv, &w)) {
		set_blocked(g, ti, &w, x);
		return 1;
	}
	if (diag_slices_overlapping(d, ti, lv->a, lv->b, &w, &from, &ov) &&
	    ov >= len / 2 && !done_before(g, st, lv, &w)) {
		/* waiting in timed slices most of the window (for a lock
		   or a turn): blocked, from the first */
		set_blocked(g, ti, &w, x);
		x->c.start_ns = x->w.start = from;
		x->sliced = 1;
		return 1;
	}
	return 0;
}

size_t
diag_diff_cut(struct diag *d, const struct level *lv,
    const struct diag_step *p, size_t n)
{
	struct dculprit x;

	for (size_t i = 1; i < n; i++)
		if (p[i].th.thread != lv->ti &&
		    diag_user_thread(d->g, p[i].th.thread) &&
		    names(d, lv, &p[i], &x))
			return i + 1;
	return n;
}

size_t
diag_diff_path(struct diag *d, const struct level *lv,
    const struct diag_step *p, size_t n, void *out)
{
	DARR(struct dculprit) *cs = out;
	const struct graph *g = d->g;
	uint64_t len = lv->b - lv->a;
	DARR(uint32_t) done = { 0 };
	/* when the normal wait began: the end of the waiting node */
	uint64_t normal = n > 0 && p[0].node != GRAPH_NONE ?
	    graph_vertex_end(g, p[0].node) : 0;

	cs->n = 0;
	/* the thread that woke the waiter, running most of the window,
	   whether on the normal path or not: it held what the waiter
	   needed while it worked (a lock whose holder computes; in a
	   runtime that runs its tasks on a pool of threads, the normal
	   path goes through other threads of the pool) */
	uint64_t wts;
	uint32_t wv, wk = direct_waker(d, lv, &wv, &wts);
	if (wk != GRAPH_NONE && wk != lv->ti &&
	    diag_cpu_time(g, wk, lv->a, lv->b) >= len / 2) {
		struct dculprit x;
		culprit_init(g, wk, lv, &x);
		set_busy(d, wk, lv, &x);
		DPUSH(*cs, x);
		n = 0;	/* what is behind it only fed it earlier */
	}
	for (size_t i = 1; i < n; i++) {
		uint32_t ti = p[i].th.thread;
		int dup = 0, input = 0;
		if (ti == lv->ti || !diag_user_thread(g, ti))
			continue;
		/* after the first culprit, only the threads that took part
		   while the diagnosed thread waited in the normal case:
		   those before it (the source of the input, a request sent
		   earlier) wait for their own reasons */
		for (size_t k = 0; k < n && cs->n > 0; k++)
			input |= p[k].input && p[k].th.thread == ti;
		if (cs->n > 0 && (input || p[i].ts < normal))
			continue;
		for (size_t k = 0; k < done.n; k++)
			dup |= done.v[k] == ti;
		if (dup)
			continue;
		DPUSH(done, ti);
		struct dculprit x;
		if (!names(d, lv, &p[i], &x))
			continue;
		if (x.c.kind == DIAG_BUSY && cs->n > 0)
			break;	/* only blocked ones follow the first */
		DPUSH(*cs, x);
		if (x.c.kind == DIAG_BUSY)
			break;	/* it ran the whole time: what is behind it
				   in the path only fed it earlier */
	}
	struct dwait w;
	uint32_t ih = idle_holder(d, lv, &w);
	int dup = ih == GRAPH_NONE;
	for (size_t k = 0; k < cs->n && !dup; k++)
		dup = cs->v[k].c.th.thread == ih;
	if (!dup) {
		struct dculprit x;
		culprit_init(g, ih, lv, &x);
		set_blocked(g, ih, &w, &x);
		x.holder = 1;
		DPUSH(*cs, x);
	}
	free(done.v);
	return cs->n;
}
