/*
 * diag-similar.c: FindSimilarNode (step 4 of argus-diagnose(1)).
 *
 * A node's signature is a hash of the semantic events (system calls by
 * name, user events by kind, the wait by type and resource) of the run
 * that ends in its wait, repeats collapsed, and of the processes that
 * run exchanged messages with. The run starts after the thread's
 * previous wait, not where the vertex starts: vertices split where
 * edges arrive, which rules change, and a streaming pass knows where a
 * run starts without the graph. The earlier
 * waits of the hung thread in the same system call that differ from the
 * hang (result or length) are the candidates; they are ranked by exact
 * signature, then by coming before the hang, then by being ended by the
 * process that ended (or usually ends) the hang's wait, nearest the hang
 * first among equals.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "diag-local.h"
static uint64_t
mix(uint64_t h, uint64_t x)
{
	h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	return h;
}

static uint64_t
str_hash(const char *s)
{
	return fnv64(s, strlen(s));
}

/* The futex words of one condition variable (it alternates between two
   group signals 4 bytes apart, in one 16-byte block however it is
   aligned) count as one resource, and a mutex next to it is another. */
static uint64_t
futex_block(uint64_t addr)
{
	return addr >> 4;
}

/* Hash of a wait resource. */
static uint64_t
res_hash(const struct dwait *dw)
{
	if (strncmp(dw->w.resource, "futex:", 6) == 0)
		return mix(11, futex_block(strtoull(dw->w.resource + 6, NULL,
		    16)));
	return str_hash(dw->w.resource);
}

/* Index of the first event of the run that ends at event sw of thread t:
   the one after its previous wait, or the first of its segment. */
static uint32_t
run_start(const struct gthread *t, uint32_t sw)
{
	uint32_t i = sw, first = gthread_seg_first(t, sw);

	while (i > first && !(t->ev[i - 1].type == TT_SWITCH &&
	    (t->ev[i - 1].flags & GRAPH_EVF_WAIT)))
		i--;
	return i;
}

uint32_t
diag_run_first(const struct graph *g, uint32_t ti, uint32_t sw)
{
	return run_start(&g->th[ti], sw);
}

uint64_t
diag_run_start(const struct graph *g, uint32_t v)
{
	const struct gthread *t = &g->th[g->vx[v].thread];

	return t->ev[run_start(t, g->vx[v].first)].ts;
}

/* Hash of the semantic events of thread ti's run that ends in wait dw
   (from event from, run_start()), repeats collapsed, and of the wait. */
static uint64_t
node_sig(const struct graph *g, uint32_t ti, uint32_t from,
    const struct dwait *dw)
{
	const struct gthread *t = &g->th[ti];
	uint64_t h = 7, prev = 0;

	for (uint32_t i = from; i < dw->sw; i++) {
		uint64_t item = diag_run_item(&t->ev[i]);
		if (item == 0 || item == prev)
			continue;
		prev = item;
		h = mix(h, item);
	}
	return mix(h, res_hash(dw));
}

/* Index of the event after vertex v. */
static uint32_t
vx_end(const struct graph *g, uint32_t v)
{
	return g->vx[v].first + g->vx[v].nevents;
}

size_t
diag_run_peers(const struct graph *g, uint32_t ti, uint32_t from,
    uint32_t sw, uint32_t *pid, size_t max)
{
	const struct gthread *t = &g->th[ti];
	uint32_t self = t->pid;
	size_t np = 0, n;

	for (uint32_t i = from, v; i < sw && np < max; i = vx_end(g, v)) {
		v = graph_vertex_of_event(g, ti, i);
		if (v == GRAPH_NONE)
			break;
		for (int dir = 0; dir < 2; dir++) {
			const uint32_t *es = dir ? graph_out_edges(g, v, &n) :
			    graph_in_edges(g, v, &n);
			for (size_t k = 0; k < n && np < max; k++) {
				const struct graph_edge *e = graph_edge(g, es[k]);
				uint32_t at = dir ? e->src_ev : e->dst_ev;
				if (e->kind != GE_MSG && e->kind != GE_REPLY &&
				    e->kind != GE_PIPE)
					continue;
				if (at < from || at >= sw)
					continue;
				uint32_t o = g->th[g->vx[dir ? e->dst :
				    e->src].thread].pid;
				if (o != self)
					pid[np++] = o;
			}
		}
	}
	for (size_t i = 1; i < np; i++)	/* a few: insertion sort */
		for (size_t j = i; j > 0 && pid[j] < pid[j - 1]; j--) {
			uint32_t x = pid[j];
			pid[j] = pid[j - 1];
			pid[j - 1] = x;
		}
	size_t k = 0;
	for (size_t i = 0; i < np; i++)
		if (i == 0 || pid[i] != pid[i - 1])
			pid[k++] = pid[i];
	return k;
}

/* Hash of the peers of thread ti's run from event from to event sw
   (diag_run_peers()), as a set; 0 when it has none. */
static uint64_t
peer_sig(const struct graph *g, uint32_t ti, uint32_t from, uint32_t sw)
{
	uint32_t pid[32];
	size_t np = diag_run_peers(g, ti, from, sw, pid, 32);
	uint64_t h = 0;

	for (size_t i = 0; i < np; i++)
		h = mix(h ? h : 13, pid[i]);
	return h;
}

static uint64_t
wait_sig(const struct dwait *dw)
{
	return mix(str_hash(dw->w.type), res_hash(dw));
}

static int
differs(const struct diag *d, const struct dwait *hang,
    const struct dwait *c, const char **why)
{
	uint64_t hd = hang->end - hang->start, cd = c->end - c->start;
	uint64_t th = d->o.threshold_ns;

	if (c->run == GRAPH_NONE)
		return 0;
	if (hang->w.has_result && c->w.has_result &&
	    (hang->w.result != c->w.result ||
	    hang->w.timed_out != c->w.timed_out)) {
		*why = "result";
		return 1;
	}
	if (hd > cd && (hd - cd >= th || hd - cd >= hd / 2)) {
		*why = "duration";
		return 1;
	}
	return 0;
}

struct cand {
	uint32_t v, sw, waker;	/* waker: see waker_pid() */
	int rank;		/* best 0 */
	uint64_t full, ws, peers;
	struct dwait c;
};

/* Process of the user thread whose wake-up ended wait dw (the wake-up
   edge into the event where its thread ran again); 0 when it did not
   end, timed out or no user thread woke it. */
static uint32_t
waker_pid(const struct graph *g, const struct dwait *dw)
{
	uint32_t v;
	size_t n;

	if (dw->run == GRAPH_NONE || dw->w.timed_out ||
	    (v = graph_vertex_of_event(g, dw->ti, dw->run)) == GRAPH_NONE)
		return 0;
	const uint32_t *in = graph_in_edges(g, v, &n);
	for (size_t k = 0; k < n; k++) {
		const struct graph_edge *e = graph_edge(g, in[k]);
		uint32_t st = g->vx[e->src].thread;
		if (e->kind == GE_WAKEUP && e->dst_ev == dw->run &&
		    diag_user_thread(g, st))
			return g->th[st].pid;
	}
	return 0;
}

/* The process the hang's wait waits on: the one that woke it, or, when
   none did, the one that woke the most recent earlier wait among the
   candidates cs (most recent first); 0 when unknown. */
static uint32_t
hang_peer(const struct graph *g, const struct dhang *h,
    const struct cand *cs, size_t n)
{
	uint32_t p = waker_pid(g, &h->dw);

	for (size_t k = 0; k < n && p == 0; k++)
		if (cs[k].c.start < h->dw.start)
			p = cs[k].waker;
	return p;
}

/* Whether the wait of a candidate overlaps one already taken (two
   vertices of one wait, the same moment): the first taken ranks better. */
static int
sim_overlaps(const struct dhang *h, const struct dwait *c)
{
	for (size_t i = 0; i < h->sim.n; i++) {
		const struct diag_similar *s = &h->sim.v[i];
		uint64_t e = s->start_ns + s->duration_ns;
		if (s->start_ns == c->start ||
		    (c->start < e && s->start_ns < c->end))
			return 1;
	}
	return 0;
}

/*
 * Whether a wait in the system call entered at ce may be on the resource
 * of the hang's, entered at he when the hang has no user-level wait: 0
 * only when the descriptions of both (diag_describe_sys(), res_hash())
 * would surely differ. Most waits of a busy thread fail this test, which
 * costs far less than describing them.
 */
static int
may_share(const struct graph_event *he, const struct graph_event *ce)
{
	if (he->aux == SYS_futex)
		return ce->aux == SYS_futex &&
		    futex_block(ce->key) == futex_block(he->key);
	if (he->flags & GRAPH_EVF_FDRES)
		return (ce->flags & GRAPH_EVF_FDRES) && ce->key == he->key;
	return 1;
}

void
diag_find_similar(struct diag *d, struct dhang *h)
{
	const struct graph *g = d->g;
	uint32_t ti = h->pub.th.thread;
	const struct gthread *t = &g->th[ti];
	uint32_t hv = h->pub.node;
	uint32_t hfrom = run_start(t, h->dw.sw);
	uint64_t full = node_sig(g, ti, hfrom, &h->dw), ws = wait_sig(&h->dw);
	uint64_t peers = peer_sig(g, ti, hfrom, h->dw.sw);
	uint32_t hnr = h->dw.enter != GRAPH_NONE ?
	    t->ev[h->dw.enter].aux : GRAPH_NONE;
	DARR(struct cand) cs = { 0 };

	h->sim.n = 0;
	h->sim_sure = 0;
	/* one pass over the thread's vertices, most recent first: those
	   ending in a wait in the same system call that differs from the
	   hang's (result or length) */
	for (uint32_t k = t->nvtx; k-- > 0;) {
		uint32_t v = t->vtx[k];
		const struct graph_vertex *vx = &g->vx[v];
		uint32_t last = vx->first + vx->nevents - 1, sw = GRAPH_NONE;
		if (v == hv || !(vx->flags & GRAPH_VF_WAIT))
			continue;
		for (uint32_t i = last + 1; i-- > vx->first;)
			if (t->ev[i].type == TT_SWITCH &&
			    (t->ev[i].flags & GRAPH_EVF_WAIT)) {
				sw = i;
				break;
			}
		if (sw == GRAPH_NONE)
			continue;
		/* never a part of the hang, and a wait in slices once,
		   whole, at its last */
		if ((t->ev[sw].ts >= h->dw.start && t->ev[sw].ts <= h->dw.end) ||
		    diag_swait_next(g, ti, sw) != GRAPH_NONE)
			continue;
		if (hnr != GRAPH_NONE) {
			uint32_t ce = GRAPH_NONE;
			for (uint32_t i = sw; i-- > vx->first && i + DIAG_SCAN > sw;) {
				if (t->ev[i].type == TT_SYS_EXIT)
					break;
				if (t->ev[i].type == TT_SYS_ENTER) {
					ce = i;
					break;
				}
			}
			if (ce != GRAPH_NONE && (t->ev[ce].aux != hnr ||
			    (h->dw.uwait == GRAPH_NONE &&
			    !may_share(&t->ev[h->dw.enter], &t->ev[ce]))))
				continue;
		}
		struct cand c = { .v = v, .sw = sw };
		uint32_t from = GRAPH_NONE;	/* its run's start, once */
		/* talking to another process is not the same work (the
		   candidate's peers matter only when the hang has some) */
		if (peers != 0) {
			uint64_t *pp = hmap_put(&d->peers, v, 0, NULL);
			if (*pp == 0)
				*pp = peer_sig(g, ti, from = run_start(t, sw),
				    sw) + 1;
			c.peers = *pp - 1;
			if (c.peers != 0 && c.peers != peers)
				continue;
		}
		diag_swait_at(g, ti, sw, d->last_ts, &c.c);
		c.ws = wait_sig(&c.c);
		if (c.ws != ws)
			continue;	/* level 1 is the looser test */
		if (from == GRAPH_NONE)
			from = run_start(t, sw);
		c.full = node_sig(g, ti, from, &c.c);
		c.waker = waker_pid(g, &c.c);
		DPUSH(cs, c);
	}
	/* exact signatures first, then those sharing only the wait; in
	   each, the nodes before the hang, then after; in each, those whose
	   wait the hang's peer ended; equal ranks nearest the hang first
	   (cs runs from the latest to the earliest) */
	uint32_t peer = hang_peer(g, h, cs.v, cs.n);
	for (size_t k = 0; k < cs.n; k++)
		cs.v[k].rank = (cs.v[k].full != full) * 4 +
		    (graph_vertex_start(g, cs.v[k].v) >= h->dw.start) * 2 +
		    (peer == 0 || cs.v[k].waker != peer);
	for (int rank = 0; rank < 8; rank++)
		for (size_t j = 0; j < cs.n; j++) {
			const struct cand *c =
			    &cs.v[rank & 2 ? cs.n - 1 - j : j];
			const char *why;
			if (c->rank != rank ||
			    !differs(d, &h->dw, &c->c, &why) ||
			    sim_overlaps(h, &c->c))
				continue;
			struct diag_similar sm = { .node = c->v,
			    .start_ns = c->c.start,
			    .duration_ns = c->c.end - c->c.start,
			    .differs = why, .wait = c->c.w };
			DPUSH(h->sim, sm);
			if (rank == 0 && peer != 0 &&
			    h->sim_sure + 1 == h->sim.n)
				h->sim_sure++;
		}
	free(cs.v);
}
