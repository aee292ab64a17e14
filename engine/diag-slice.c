/*
 * diag-slice.c: backward slicing of the picked normal node, and the walk
 * back from a busy hang's node (diag-analyze.c runs them).
 *
 * The slice is a beam search backwards over in-edges. A search state
 * (struct bnode, kept in one pool with parent links) is a vertex plus the
 * last event of it that may have caused what follows (only edges into
 * the vertex at or before that event count). Strong edges cost less than
 * wake-ups, which cost less than the weak joins of split segments, and
 * an edge costs more the longer it spans (a message queued while its
 * receiver was busy with an earlier request counts from when the
 * receiver was free); the frontier is cut to the beam width after every
 * step. A path ends at a vertex holding an input event, at the diagnosed
 * thread earlier than its node (where the request came from), or where
 * no edge leads further (a dead end, reported as such). The node a
 * baseline slice starts from may itself hold an input (a terminal read,
 * which may be a pty master fed by a child): its wake-up chain is
 * followed first, and the node counts as the input only when that chain
 * reaches no goal.
 *
 * The diff (diag-diff.c) walks the threads of the slice in order and
 * finds every one that was busy or blocked on something other than its
 * idle wait during the hang: the culprits of that depth. Each blocked one
 * is diagnosed again the same way (diag-recurse.c, which calls back
 * here for a culprit's normal twin) until a thread repeats (a circular
 * wait) or a node is not blocked.
 */
#include <stdlib.h>
#include <string.h>

#include "diag-local.h"

#define MAXDEPTH 48
#define HORIZON (10ULL * 1000000000ULL)	/* slices look back at most 10 s */
#define GAP_UNIT 5000000ULL	/* cost of an edge: +1 per 5 ms it spans */
#define LOCK_RELEASE_COST 12	/* extra cost of a lock's release as the
				   cause of what its waiter does next */

struct bnode {
	uint32_t v, lim;
	uint32_t parent;
	int edge;
	uint32_t cost;
	uint32_t depth;
};

struct slice {
	DARR(struct bnode) pool;
	DARR(uint32_t) front, next;
	struct hmap seen;
	uint32_t leaf;		/* chosen leaf in pool */
	int goal;		/* 2 input, 1 back at the thread, 0 dead end */
	int depth_cut;		/* the search stopped at MAXDEPTH */
};

static unsigned
edge_cost(unsigned kind)
{
	switch (kind) {
	case GE_WAKEUP: return 2;
	case GE_SEQ: return 5;
	case GE_SPAWN: return 5;
	}
	return 1;
}

static int
cmp_cost(const void *x, const void *y, void *arg)
{
	const struct bnode *p = arg;
	const struct bnode *a = &p[*(const uint32_t *)x];
	const struct bnode *b = &p[*(const uint32_t *)y];

	if (a->cost != b->cost)
		return a->cost < b->cost ? -1 : 1;
	return a->v < b->v ? -1 : a->v > b->v;
}

/* The vertex of v's thread that ended in the uninterruptible wait
   (I/O) that v begins after, when an interrupt ended that wait; else
   GRAPH_NONE. */
static uint32_t
io_wait_before(const struct graph *g, uint32_t v)
{
	const struct graph_vertex *vx = &g->vx[v];
	const struct gthread *t = &g->th[vx->thread];

	if (vx->first == gthread_seg_first(t, vx->first) ||
	    (g->th[vx->thread].flags & GRAPH_THREAD_IRQ))
		return GRAPH_NONE;
	const struct graph_event *sw = &t->ev[vx->first - 1];
	if (sw->type != TT_SWITCH || !(sw->flags & GRAPH_EVF_WAIT) ||
	    !(sw->sub & 2))	/* TASK_UNINTERRUPTIBLE */
		return GRAPH_NONE;
	size_t n;
	const uint32_t *in = graph_in_edges(g, v, &n);
	int irq = 0;
	for (size_t k = 0; k < n; k++) {
		const struct graph_edge *e = graph_edge(g, in[k]);
		if (e->kind == GE_WAKEUP)
			irq |= (g->th[g->vx[e->src].thread].flags &
			    GRAPH_THREAD_IRQ) != 0;
	}
	if (!irq)
		return GRAPH_NONE;
	return graph_vertex_of_event(g, vx->thread, vx->first - 1);
}

/* The vertex of v's thread that ended in the contended lock acquisition
   v begins after; else GRAPH_NONE. */
static uint32_t
lock_wait_before(const struct graph *g, uint32_t v)
{
	const struct graph_vertex *vx = &g->vx[v];
	const struct graph_event *sw;

	if (vx->first == gthread_seg_first(&g->th[vx->thread], vx->first))
		return GRAPH_NONE;
	sw = &g->th[vx->thread].ev[vx->first - 1];
	if (sw->type != TT_SWITCH || (sw->flags & (GRAPH_EVF_WAIT |
	    GRAPH_EVF_LOCK)) != (GRAPH_EVF_WAIT | GRAPH_EVF_LOCK))
		return GRAPH_NONE;
	return graph_vertex_of_event(g, vx->thread, vx->first - 1);
}

/*
 * When the cause of edge e into v (sent at ts) could first have been
 * taken: a message or pipe write that begins a vertex cut at a split (a
 * request boundary, a second peer) waited in its queue while the thread
 * was busy with the segment before, so its wait counts only from the end
 * of that segment.
 */
static uint64_t
queued_since(const struct graph *g, uint32_t v, const struct graph_edge *e,
    uint64_t ts)
{
	const struct graph_vertex *vx = &g->vx[v];

	if ((e->kind != GE_MSG && e->kind != GE_PIPE) ||
	    !(vx->flags & GRAPH_VF_SPLIT) || e->dst_ev != vx->first ||
	    vx->first == gthread_seg_first(&g->th[vx->thread], vx->first))
		return ts;
	uint64_t free_at = g->th[vx->thread].ev[vx->first - 1].ts;
	return free_at > ts ? free_at : ts;
}

/*
 * Slice backwards from vertex v (events up to lim). self: the diagnosed
 * thread, whose earlier vertices (before since) end a path.
 */
static void
slice_run(struct diag *d, struct slice *s, uint32_t v, uint32_t lim,
    uint32_t self, uint64_t since, uint64_t horizon, int self_stops)
{
	const struct graph *g = d->g;
	unsigned beam = d->o.beam ? d->o.beam : 8;
	uint32_t best_goal = GRAPH_NONE, best_dead = GRAPH_NONE;
	int best_kind = -1, root_input = 0;
	if (horizon == 0)
		horizon = since > HORIZON ? since - HORIZON : 0;

	memset(s, 0, sizeof(*s));
	hmap_init(&s->seen);
	struct bnode root = { .v = v, .lim = lim, .parent = GRAPH_NONE,
	    .edge = -1 };
	DPUSH(s->pool, root);
	DPUSH(s->front, 0);
	*hmap_put(&s->seen, pack2(v, lim), 0, NULL) = 0;
	for (unsigned depth = 0; s->front.n > 0; depth++) {
		s->next.n = 0;
		for (size_t fi = 0; fi < s->front.n; fi++) {
			uint32_t bi = s->front.v[fi];
			struct bnode b = s->pool.v[bi];
			const struct graph_vertex *vx = &g->vx[b.v];
			int kind = -1;
			if ((vx->flags & GRAPH_VF_INPUT) && b.depth == 0 &&
			    self_stops == 1)
				root_input = 1;	/* only if nothing else */
			else if (vx->flags & GRAPH_VF_INPUT)
				kind = 2;
			else if (self_stops == 1 && b.depth > 0 &&
			    vx->thread == self &&
			    graph_vertex_start(g, b.v) <= since)
				kind = 1;
			else if (self_stops == 2 && vx->thread != self &&
			    diag_user_thread(g, vx->thread))
				kind = 1;	/* the sender of the work */
			if (kind >= 0) {
				if (kind > best_kind || (kind == best_kind &&
				    b.cost < s->pool.v[best_goal].cost)) {
					best_kind = kind;
					best_goal = bi;
				}
				continue;
			}
			if (depth >= MAXDEPTH) {
				s->depth_cut = 1;
				continue;
			}
			size_t n, added = 0;
			unsigned later = 0;	/* eligible edges landing later */
			/* past the root, a thread that waited for a lock
			   goes on with what it was doing: the work before
			   the wait is the cause, the lock's release only
			   delayed it */
			uint32_t lockp = b.depth > 0 ?
			    lock_wait_before(g, b.v) : GRAPH_NONE;
			const uint32_t *in = graph_in_edges(g, b.v, &n);
			uint32_t *order = xmalloc((n ? n : 1) * sizeof(*order));
			size_t no = 0;
			for (size_t k = 0; k < n; k++) {
				const struct graph_edge *e = graph_edge(g, in[k]);
				if (e->kind != GE_WAIT && e->dst_ev <= b.lim)
					order[no++] = in[k];
			}
			/* the dependency satisfied last is the critical one:
			   latest landing first */
			for (size_t a = 1; a < no; a++)
				for (size_t c2 = a; c2 > 0 && graph_edge(g,
				    order[c2])->dst_ev > graph_edge(g,
				    order[c2 - 1])->dst_ev; c2--) {
					uint32_t x = order[c2];
					order[c2] = order[c2 - 1];
					order[c2 - 1] = x;
				}
			for (size_t k = 0; k < no; k++) {
				const struct graph_edge *e = graph_edge(g, order[k]);
				if (k > 0 && e->dst_ev < graph_edge(g,
				    order[k - 1])->dst_ev)
					later = (unsigned)k;
				if (graph_vertex_end(g, e->src) < horizon)
					continue;
				/* a cause long before its effect is less
				   likely than one just before it */
				uint64_t ts = g->th[g->vx[e->src].thread].ev[
				    e->src_ev].ts, td = g->th[vx->thread].ev[
				    e->dst_ev].ts, gap;
				ts = queued_since(g, b.v, e, ts);
				gap = td > ts ? td - ts : 0;
				unsigned late = gap / GAP_UNIT > 20 ? 20 :
				    (unsigned)(gap / GAP_UNIT);
				uint32_t cost = b.cost + edge_cost(e->kind) +
				    late + 3 * later;
				if (lockp != GRAPH_NONE &&
				    e->kind == GE_WAKEUP && e->dst_ev == vx->first)
					cost += LOCK_RELEASE_COST;
				/* a state is expanded again only when reached
				   more cheaply */
				uint64_t *sc = hmap_put(&s->seen,
				    pack2(e->src, e->src_ev), UINT64_MAX, NULL);
				if (*sc <= cost)
					continue;
				*sc = cost;
				struct bnode c = { .v = e->src,
				    .lim = e->src_ev, .parent = bi,
				    .edge = e->kind,
				    .cost = cost,
				    .depth = b.depth + 1 };
				DPUSH(s->pool, c);
				DPUSH(s->next, (uint32_t)(s->pool.n - 1));
				added++;
			}
			free(order);
			/* woken from an interrupt out of an uninterruptible
			   wait: I/O the thread started itself, so what it
			   did before that wait is the cause; so too before
			   a lock's wait (a strong step) */
			uint32_t pv = io_wait_before(g, b.v);
			if (pv == GRAPH_NONE)
				pv = lockp;
			if (pv != GRAPH_NONE) {
				uint32_t plim = g->vx[pv].first +
				    g->vx[pv].nevents - 1;
				uint32_t cost = b.cost + (pv == lockp ? 1 :
				    edge_cost(GE_SEQ));
				uint64_t *sc = hmap_put(&s->seen,
				    pack2(pv, plim), UINT64_MAX, NULL);
				if (*sc > cost) {
					*sc = cost;
					struct bnode c = { .v = pv, .lim = plim,
					    .parent = bi, .edge = GE_SEQ,
					    .cost = cost, .depth = b.depth + 1 };
					DPUSH(s->pool, c);
					DPUSH(s->next,
					    (uint32_t)(s->pool.n - 1));
					added++;
				}
			}
			if (added == 0 && (best_dead == GRAPH_NONE ||
			    b.depth > s->pool.v[best_dead].depth))
				best_dead = bi;
		}
		if (best_kind == 2)
			break;
		if (s->next.n > 1)	/* next.v is NULL when none was */
			qsort_r(s->next.v, s->next.n, sizeof(*s->next.v),
			    cmp_cost, s->pool.v);
		if (s->next.n > beam)
			s->next.n = beam;
		s->front.n = 0;
		for (size_t i = 0; i < s->next.n; i++)
			DPUSH(s->front, s->next.v[i]);
	}
	if (best_goal != GRAPH_NONE) {
		s->leaf = best_goal;
		s->goal = best_kind;
	} else if (root_input) {
		s->leaf = 0;
		s->goal = 2;
	} else {
		s->leaf = best_dead != GRAPH_NONE ? best_dead : 0;
		s->goal = 0;
	}
}

static void
slice_free(struct slice *s)
{
	free(s->pool.v);
	free(s->front.v);
	free(s->next.v);
	hmap_free(&s->seen);
}

/* Why the chain of a slice ends where it does, as a sentence. */
static void
slice_dead_end(struct diag *d, struct dhang *h, const struct slice *s,
    const char *what)
{
	const struct graph *g = d->g;
	const struct bnode *b = &s->pool.v[s->leaf];
	const struct graph_vertex *vx = &g->vx[b->v];
	const struct gthread *t = &g->th[vx->thread];
	double at = (double)(graph_vertex_start(g, b->v) -
	    graph_first_ts(g)) / 1e9;

	if (s->goal != 0)
		return;
	if (s->depth_cut) {
		ddead(h, "%s: stopped after %d steps without reaching an "
		    "input event", what, MAXDEPTH);
		return;
	}
	struct dwho wb;
	const char *who = diag_who(g, vx->thread, &wb);
	if (t->nvtx > 0 && t->vtx[0] == b->v &&
	    t->ev[vx->first].type == GRAPH_EV_RUN)
		ddead(h, "%s: ends at %s at %.6f s: the recording "
		    "started while it was waiting", what, who, at);
	else if (t->ev[vx->first].type == GRAPH_EV_RUN)
		ddead(h, "%s: ends at %s at %.6f s: nothing recorded "
		    "woke it", what, who, at);
	else
		ddead(h, "%s: ends at %s at %.6f s: no recorded "
		    "cause", what, who, at);
}

/* Steps of the slice, leaf last reversed: root first. */
static void
slice_steps(const struct diag *d, const struct slice *s, void *arr,
    uint32_t **lims, size_t *nlims)
{
	DARR(struct diag_step) *out = arr;
	const struct graph *g = d->g;
	uint32_t chain[MAXDEPTH + 2];
	size_t n = 0;

	for (uint32_t i = s->leaf; i != GRAPH_NONE && n < MAXDEPTH + 2;
	    i = s->pool.v[i].parent)
		chain[n++] = i;
	*lims = xreallocarray(*lims, n + 1, sizeof(**lims));
	*nlims = 0;
	for (size_t k = n; k-- > 0;) {
		const struct bnode *b = &s->pool.v[chain[k]];
		struct diag_step st = { .node = b->v, .edge = b->edge,
		    .ts = graph_vertex_start(g, b->v),
		    .input = (g->vx[b->v].flags & GRAPH_VF_INPUT) != 0 };
		diag_thread_fill(g, g->vx[b->v].thread, &st.th);
		DPUSH(*out, st);
		(*lims)[(*nlims)++] = b->lim;
	}
}

int
diag_slice_wait(struct diag *d, struct dhang *h, const struct dwait *from,
    uint32_t self, uint64_t since, uint64_t horizon, void *out,
    uint32_t **lims, size_t *nlims, const char *what)
{
	DARR(struct diag_step) *arr = out;
	const struct graph *g = d->g;
	struct slice s;

	if (from->run == GRAPH_NONE)
		return 0;
	uint32_t wv = graph_vertex_of_event(g, from->ti, from->run);
	if (wv == GRAPH_NONE)
		return 0;
	slice_run(d, &s, wv, from->run, self, since, horizon, 1);
	/* the waiting node first, then its waker chain */
	struct diag_step first = { .node = graph_vertex_of_event(g, from->ti,
	    from->sw), .edge = -1 };
	first.ts = graph_vertex_start(g, first.node);
	diag_thread_fill(g, from->ti, &first.th);
	DPUSH(*arr, first);
	size_t base = arr->n;
	uint32_t *l2 = NULL;
	size_t n2 = 0;
	slice_steps(d, &s, arr, &l2, &n2);
	/* drop the woken vertex itself (same thread as the first step) */
	if (arr->n > base) {
		memmove(&arr->v[base], &arr->v[base + 1],
		    (arr->n - base - 1) * sizeof(*arr->v));
		arr->n--;
	}
	*lims = xreallocarray(*lims, n2 + 1, sizeof(**lims));
	(*lims)[0] = from->sw;
	for (size_t i = 1; i < n2; i++)
		(*lims)[i] = l2[i];
	*nlims = n2 > 0 ? n2 : 1;
	free(l2);
	slice_dead_end(d, h, &s, what);
	slice_free(&s);
	return 1;
}

/* Midpoint between the end of the previous episode and a start. */
static uint64_t
episode(uint64_t prev_end, uint64_t start)
{
	return prev_end < start ? prev_end + (start - prev_end) / 2 : 0;
}

/* Horizon of a slice from similar node i: halfway back to the similar
   node before it (the previous normal episode), or 0 (the default). */
static uint64_t
twin_horizon(const struct diag_similar *s, size_t n, size_t i)
{
	for (size_t k = i + 1; k < n; k++)
		if (s[k].start_ns < s[i].start_ns)
			return episode(s[k].start_ns + s[k].duration_ns,
			    s[i].start_ns);
	return 0;
}

int
diag_culprit_twin(struct diag *d, const struct level *lv,
    struct dwait *twin, uint64_t *hz)
{
	struct dhang tmp;

	memset(&tmp, 0, sizeof(tmp));
	diag_thread_fill(d->g, lv->ti, &tmp.pub.th);
	tmp.pub.node = lv->node;
	tmp.dw = lv->dw;
	diag_find_similar(d, &tmp);
	int ok = tmp.sim.n > 0;
	*hz = ok ? twin_horizon(tmp.sim.v, tmp.sim.n, 0) : 0;
	if (ok) {
		const struct graph_vertex *vx = &d->g->vx[tmp.sim.v[0].node];
		uint32_t last = vx->first + vx->nevents - 1;
		diag_wait_at(d->g, lv->ti, last, d->last_ts, twin);
		for (uint32_t i = last + 1; i-- > vx->first;)
			if (d->g->th[lv->ti].ev[i].type == TT_SWITCH &&
			    (d->g->th[lv->ti].ev[i].flags & GRAPH_EVF_WAIT)) {
				diag_wait_at(d->g, lv->ti, i, d->last_ts, twin);
				break;
			}
	}
	free(tmp.sim.v);
	return ok;
}

void
diag_slice_twin(struct diag *d, struct dhang *h, const struct dwait *twin)
{
	uint32_t *lims = NULL;
	size_t nl = 0;

	diag_slice_wait(d, h, twin, twin->ti, twin->start,
	    twin_horizon(h->sim.v, h->sim.n, (size_t)h->picked), &h->path,
	    &lims, &nl, "slice of the normal node");
	free(lims);
}

/* The wait of hang h's picked similar node in *twin: 0 when none was
   picked. */
void
diag_slice_busy(struct diag *d, struct dhang *h)
{
	const struct graph *g = d->g;
	uint32_t v = h->pub.node;
	struct slice s;
	uint32_t *lims = NULL;
	size_t nl = 0;

	if (v == GRAPH_NONE)
		return;
	const struct graph_vertex *vx = &g->vx[v];
	const struct gthread *t = &g->th[vx->thread];
	/* what started the work: edges into the node up to the hang's
	   start (a signal in the middle of it did not start it) */
	uint32_t lim = vx->first, last = vx->first + vx->nevents - 1;
	while (lim < last && t->ev[lim + 1].ts <= h->pub.start_ns + 1000000)
		lim++;
	slice_run(d, &s, v, lim, h->pub.th.thread, h->pub.start_ns, 0, 2);
	slice_steps(d, &s, &h->path, &lims, &nl);
	for (size_t i = 0; i < h->path.n; i++) {
		const struct diag_step *st = &h->path.v[i];
		/* past the thread's own timer (its own sleep's, its own
		   pacing) or the fork that started it, what came before
		   did not start this work */
		if ((st->edge == GE_TIMER && st->th.thread ==
		    h->pub.th.thread) || st->edge == GE_SPAWN) {
			ddead(h, "walk back from the busy node: it began "
			    "after %s at %.6f s", st->edge == GE_SPAWN ?
			    "its thread started" : "its own timer",
			    (double)(st->ts - graph_first_ts(g)) / 1e9);
			break;
		}
		if (st->input && h->cause_node == GRAPH_NONE)
			h->cause_node = st->node;
		if (st->th.thread != h->pub.th.thread &&
		    diag_user_thread(g, st->th.thread) &&
		    h->cause_th.tid == 0)
			h->cause_th = st->th;
		if (h->cause_node != GRAPH_NONE && h->cause_th.tid != 0)
			break;
	}
	if (h->cause_node == GRAPH_NONE && h->cause_th.tid != 0)
		ddead(h, "walk back from the busy node: no input event "
		    "recorded; the work was started by %s",
		    h->cause_th.comm);
	else
		slice_dead_end(d, h, &s, "walk back from the busy node");
	slice_free(&s);
	free(lims);
}

/*
 * The steps of a path, and whether the thread of the last one (where
 * the slice stopped) was seen blocking before it: a thread whose wait
 * began before the window has lost the wake-up that ended it, which the
 * whole graph has (the build joins a waker to a wait it saw begin) and
 * the slice would have followed, so the answer rests on the window's
 * start then: when the event before the step is the entry of a system
 * call open when the window opened (graph_build_window() loads those,
 * found in a lead before it), or when it shows no event before the step
 * and that lead began after the trace did.
 */
void
diag_span_steps(const struct diag *d, const struct diag_step *v, size_t n,
    uint64_t *lo, uint64_t *hi)
{
	const struct graph *g = d->g;
	uint64_t a, b;

	graph_window(g, &a, &b);
	for (size_t i = 0; i < n; i++) {
		if (v[i].ts < *lo)
			*lo = v[i].ts;
		if (v[i].ts > *hi)
			*hi = v[i].ts;
		if (i + 1 < n || v[i].node == GRAPH_NONE || v[i].node >= g->nvx)
			continue;
		const struct graph_vertex *vx = &g->vx[v[i].node];
		const struct gthread *t = &g->th[vx->thread];
		/* cut by the start of the graph, or of one of its windows
		   (a segment of the thread's events) */
		uint32_t f = gthread_seg_first(t, vx->first);
		if ((vx->first > f ? t->ev[vx->first - 1].ts < a : f > 0 ||
		    graph_lead_from(g) > g->first_ts) && a < *lo)
			*lo = a;
	}
}
