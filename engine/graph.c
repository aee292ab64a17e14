/*
 * graph.c: building entry points and queries of the event graph.
 *
 * See engine.h for the model and engine-local.h for struct graph. The
 * queries here only read the arrays built by graph-load.c and
 * graph-build.c; a vertex's events are th[vx.thread].ev[first..first+n).
 * Building from a trace is graph-read.c.
 */
#include <stdlib.h>
#include <string.h>

#include "engine-local.h"

const char *
graph_strerror(int err)
{
	switch (err) {
	case 0: return "success";
	case GRAPH_ESYNTAX: return "malformed rules";
	case GRAPH_ERANGE: return "index out of range";
	case GRAPH_ETOOBIG: return "graph too big";
	case GRAPH_ETRACE: return "trace read failed";
	}
	if (err > 0 && err < GRAPH_EBASE)
		return strerror(err);
	return "unknown error";
}

int
graph_rebuild(struct graph *g, const struct rules *rules, char **cause)
{
	return graph_do_build(g, rules, cause);
}

void
graph_free(struct graph *g)
{
	if (g == NULL)
		return;
	graph_clear_built(g);
	free(g->vx);
	free(g->ed);
	for (uint32_t i = 0; i < g->nth; i++) {
		free(g->th[i].ev);
		free(g->th[i].vtx);
		free(g->th[i].seg);
	}
	free(g->gap_order);
	for (size_t i = 0; i < g->nseeds; i++) {
		hmap_free(&g->seeds[i][0]);
		hmap_free(&g->seeds[i][1]);
	}
	free(g->seeds);
	free(g->th);
	for (size_t i = 0; i < g->nhosts; i++)
		free(g->hosts[i].name);
	free(g->hosts);
	free(g->order);
	for (uint32_t i = 0; i < g->nstrs; i++)
		free(g->strs[i]);
	free(g->strs);
	free(g->frames);
	free(g->maps);
	free(g->losts);
	free(g->leader);
	free(g->pub);
	hmap_free(&g->tidmap);
	free(g->tiddirect);
	hmap_free(&g->strmap);
	hmap_free(&g->fdmap);
	hmap_free(&g->mapfrom);
	free(g->images);
	hmap_free(&g->lastimage);
	free(g->ksyms);
	hmap_free(&g->ksymset);
	hmap_free(&g->uargs);
	hmap_free(&g->skseed);
	hmap_free(&g->pipeseed);
	free(g->uargv);
	free(g);
}

/* --- threads and events ------------------------------------------------ */

size_t
graph_nthreads(const struct graph *g)
{
	return g->nth;
}

const struct graph_thread *
graph_thread(const struct graph *g, uint32_t i)
{
	return i < g->nth && g->pub != NULL ? &g->pub[i] : NULL;
}

uint32_t
graph_thread_find(const struct graph *g, uint32_t tid)
{
	uint64_t *v = hmap_get(&g->tidmap, tid);

	return v ? (uint32_t)*v : GRAPH_NONE;
}

const uint32_t *
graph_thread_vertices(const struct graph *g, uint32_t thread, size_t *n)
{
	if (thread >= g->nth) {
		*n = 0;
		return NULL;
	}
	*n = g->th[thread].nvtx;
	return g->th[thread].vtx;
}

const struct graph_event *
graph_event(const struct graph *g, uint32_t thread, uint32_t idx)
{
	if (thread >= g->nth || idx >= g->th[thread].nev)
		return NULL;
	return &g->th[thread].ev[idx];
}

const char *
graph_string(const struct graph *g, uint32_t id)
{
	return id < g->nstrs ? g->strs[id] : "";
}

const uint64_t *
graph_stack(const struct graph *g, const struct graph_event *ev, size_t *n)
{
	uint32_t nf = ev->aux & ((1u << GRAPH_STACK_NBITS) - 1);

	if (ev->type != TT_STACK || ev->key + nf > g->nframes) {
		*n = 0;
		return NULL;
	}
	*n = nf;
	return g->frames + ev->key;
}

const struct graph_event *
graph_wait_stack(const struct graph *g, uint32_t thread, uint32_t idx)
{
	const struct gthread *t = thread < g->nth ? &g->th[thread] : NULL;
	int exited = 0;

	for (uint32_t i = idx; t != NULL && i < t->nev &&
	    i <= idx + GRAPH_WAIT_STACK_SCAN; i++) {
		const struct graph_event *e = &t->ev[i];

		if (e->type == TT_STACK && e->sub == TSK_WAIT)
			return e;
		if (e->type == TT_SYS_EXIT)
			exited = 1;
		else if ((e->type == TT_SWITCH && exited) ||
		    (e->type == TT_SYS_ENTER && i > idx))
			break;	/* it ran and left the CPU again, or made
				   another call (a thread whose returns are
				   not seen) */
	}
	return NULL;
}

uint32_t
graph_stack_about(const struct graph_event *ev)
{
	uint32_t w = ev->aux >> GRAPH_STACK_NBITS;

	return ev->type == TT_STACK && ev->sub == TSK_WAKER && w != 0 ?
	    w - 1 : GRAPH_NONE;
}

static const char *
sysname(uint32_t nr, char *buf, size_t len)
{
	const char *s = trace_syscall_name(nr);

	if (s != NULL)
		return s;
	snprintf(buf, len, "syscall_%u", nr);
	return buf;
}

void
graph_event_describe(const struct graph *g, const struct graph_event *ev,
    char *buf, size_t len)
{
	char nr[32];
	const char *tn = ev->type == GRAPH_EV_RUN ? "run" :
	    trace_type_name(ev->type);

	switch (ev->type) {
	case TT_SWITCH:
		if (ev->flags & GRAPH_EVF_INSYS)
			snprintf(buf, len, "%s in %s on 0x%llx",
			    ev->flags & GRAPH_EVF_WAIT ? "wait" : "preempted",
			    sysname(ev->aux, nr, sizeof(nr)),
			    (unsigned long long)ev->key);
		else
			snprintf(buf, len, "%s", ev->flags & GRAPH_EVF_WAIT ?
			    "wait" : "preempted");
		break;
	case TT_WAKING: case TT_WAKEUP_NEW: case TT_FORK: case TT_SIGNAL_GEN:
		snprintf(buf, len, "%s %u", tn, ev->key < g->nth ?
		    g->th[ev->key].tid : 0);
		break;
	case TT_SYS_ENTER:
		if (ev->flags & GRAPH_EVF_FDRES)
			snprintf(buf, len, "%s %s %s:%llu", tn, sysname(ev->aux,
			    nr, sizeof(nr)), trace_fd_kind_name(ev->sub),
			    (unsigned long long)ev->key);
		else
			snprintf(buf, len, "%s %s 0x%llx", tn, sysname(ev->aux,
			    nr, sizeof(nr)), (unsigned long long)ev->key);
		break;
	case TT_SYS_EXIT:
		snprintf(buf, len, "%s %s = %lld", tn, sysname(ev->aux, nr,
		    sizeof(nr)), (long long)ev->key);
		break;
	case TT_USER:
		snprintf(buf, len, "%s %s 0x%llx %s", tn,
		    trace_user_kind_name(ev->sub) ?
		    trace_user_kind_name(ev->sub) : "?",
		    (unsigned long long)ev->key, graph_string(g, ev->aux));
		break;
	case TT_IRQ_ENTRY: case TT_WQ_QUEUE:
		snprintf(buf, len, "%s 0x%llx %s", tn,
		    (unsigned long long)ev->key, graph_string(g, ev->aux));
		break;
	default:
		snprintf(buf, len, "%s 0x%llx", tn ? tn : "?",
		    (unsigned long long)ev->key);
		break;
	}
}

/* --- vertices ---------------------------------------------------------- */

size_t
graph_nvertices(const struct graph *g)
{
	return g->nvx;
}

const struct graph_vertex *
graph_vertex(const struct graph *g, uint32_t v)
{
	return v < g->nvx ? &g->vx[v] : NULL;
}

uint64_t
graph_vertex_start(const struct graph *g, uint32_t v)
{
	if (v >= g->nvx)
		return 0;
	return g->th[g->vx[v].thread].ev[g->vx[v].first].ts;
}

uint64_t
graph_vertex_end(const struct graph *g, uint32_t v)
{
	if (v >= g->nvx)
		return 0;
	const struct graph_vertex *x = &g->vx[v];
	return g->th[x->thread].ev[x->first + x->nevents - 1].ts;
}

uint32_t
graph_vertex_at(const struct graph *g, uint32_t tid, uint64_t ts)
{
	uint32_t ti = graph_thread_find(g, tid);

	if (ti == GRAPH_NONE)
		return GRAPH_NONE;
	const struct gthread *t = &g->th[ti];
	size_t lo = 0, hi = t->nvtx;	/* first vertex starting after ts */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (t->ev[g->vx[t->vtx[mid]].first].ts <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo == 0 ? GRAPH_NONE : t->vtx[lo - 1];
}

uint32_t
graph_vertex_of_event(const struct graph *g, uint32_t thread, uint32_t idx)
{
	if (thread >= g->nth)
		return GRAPH_NONE;
	const struct gthread *t = &g->th[thread];
	size_t lo = 0, hi = t->nvtx;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (g->vx[t->vtx[mid]].first <= idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return GRAPH_NONE;
	uint32_t v = t->vtx[lo - 1];
	return idx < g->vx[v].first + g->vx[v].nevents ? v : GRAPH_NONE;
}

const char *
graph_vertex_kind_name(unsigned kind)
{
	static const char *const n[GV_NKINDS] = {
		"plain", "task", "work", "callout", "irq", "softirq", "timer",
	};
	return kind < GV_NKINDS ? n[kind] : "?";
}

/* --- edges ------------------------------------------------------------- */

size_t
graph_nedges(const struct graph *g)
{
	return g->ned;
}

const struct graph_edge *
graph_edge(const struct graph *g, uint32_t e)
{
	return e < g->ned ? &g->ed[e] : NULL;
}

const uint32_t *
graph_out_edges(const struct graph *g, uint32_t v, size_t *n)
{
	if (v >= g->nvx) {
		*n = 0;
		return NULL;
	}
	*n = g->out_off[v + 1] - g->out_off[v];
	return g->out_idx + g->out_off[v];
}

const uint32_t *
graph_in_edges(const struct graph *g, uint32_t v, size_t *n)
{
	if (v >= g->nvx) {
		*n = 0;
		return NULL;
	}
	*n = g->in_off[v + 1] - g->in_off[v];
	return g->in_idx + g->in_off[v];
}

const char *
graph_edge_kind_name(unsigned kind)
{
	static const char *const n[GE_NKINDS] = {
		"wakeup", "wait", "seq", "msg", "reply", "pipe", "work",
		"task", "runloop", "timer", "flag", "signal", "spawn", "user",
		"raise",
	};
	return kind < GE_NKINDS ? n[kind] : "?";
}

int
graph_edge_kind_weak(unsigned kind)
{
	return kind == GE_WAIT || kind == GE_SEQ;
}

/* --- summaries --------------------------------------------------------- */

void
graph_get_stats(const struct graph *g, struct graph_stats *st)
{
	struct hmap pids;

	memset(st, 0, sizeof(*st));
	hmap_init(&pids);
	st->events = g->nevents;
	st->trace_events = g->trace_events;
	st->vertices = g->nvx;
	st->edges = g->ned;
	st->lost = g->lost;
	st->load_ns = g->load_ns;
	st->build_ns = g->build_ns;
	for (size_t e = 0; e < g->ned; e++)
		st->edges_by_kind[g->ed[e].kind]++;
	st->messages = g->nmsg;
	for (uint32_t v = 0; v < g->nvx; v++)
		st->vertices_by_kind[g->vx[v].kind]++;
	uint64_t mem = sizeof(*g) + (uint64_t)g->capth * sizeof(*g->th) +
	    g->caporder * sizeof(*g->order) + (uint64_t)g->capvx *
	    sizeof(*g->vx) + g->caped * sizeof(*g->ed) + g->ned * 8 +
	    (uint64_t)g->nvx * 8 + g->capframes * 8;
	for (uint32_t i = 0; i < g->nth; i++) {
		const struct gthread *t = &g->th[i];
		mem += (uint64_t)t->cap * sizeof(*t->ev) + t->capvtx * 4;
		if (t->nev == 0 || (t->flags & GRAPH_THREAD_IRQ))
			continue;
		st->threads++;
		hmap_put(&pids, t->pid, 0, NULL);
	}
	st->processes = pids.n;
	st->memory = mem;
	hmap_free(&pids);
}

static uint32_t
proc_of(const struct graph *g, uint32_t v)
{
	const struct gthread *t = &g->th[g->vx[v].thread];

	if (t->flags & (GRAPH_THREAD_IRQ | GRAPH_THREAD_KERNEL))
		return 0;
	return t->pid;
}

static unsigned
note_peer(const struct graph *g, uint32_t u, uint32_t own, uint32_t *seen,
    unsigned n, unsigned max)
{
	uint32_t p = proc_of(g, u);
	unsigned j;

	if (p == 0 || p == own)
		return n;
	for (j = 0; j < n && seen[j] != p; j++)
		;
	if (j == n && n < max)
		seen[n++] = p;
	return n;
}

unsigned
graph_vertex_peers(const struct graph *g, uint32_t v)
{
	uint32_t seen[8];
	unsigned n = 0;
	uint32_t own = proc_of(g, v);
	size_t k;

	const uint32_t *out = graph_out_edges(g, v, &k);
	for (size_t i = 0; i < k; i++)
		if (!(g->ed[out[i]].flags & GRAPH_EF_WEAK))
			n = note_peer(g, g->ed[out[i]].dst, own, seen, n,
			    ARRAY_SIZE(seen));
	const uint32_t *in = graph_in_edges(g, v, &k);
	for (size_t i = 0; i < k; i++)
		if (!(g->ed[in[i]].flags & GRAPH_EF_WEAK))
			n = note_peer(g, g->ed[in[i]].src, own, seen, n,
			    ARRAY_SIZE(seen));
	return n;
}

unsigned
graph_vertex_strong_in(const struct graph *g, uint32_t v)
{
	size_t k;
	unsigned n = 0;
	const uint32_t *in = graph_in_edges(g, v, &k);

	/* distinct source vertices: a message and the wake-up it causes
	   count once */
	for (size_t i = 0; i < k; i++) {
		const struct graph_edge *e = &g->ed[in[i]];
		if (e->flags & GRAPH_EF_WEAK)
			continue;
		size_t j;
		/* (past 64 edges every source counts: bounded cost) */
		for (j = 0; j < i && i < 64; j++)
			if (!(g->ed[in[j]].flags & GRAPH_EF_WEAK) &&
			    g->ed[in[j]].src == e->src)
				break;
		if (j == i || i >= 64)
			n++;
	}
	return n;
}

struct suspect {
	uint32_t v;
	unsigned score;
};

static int
cmp_suspect(const void *a, const void *b)
{
	const struct suspect *x = a, *y = b;

	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return x->v < y->v ? -1 : x->v > y->v;
}

size_t
graph_suspects(const struct graph *g, uint32_t *out, size_t max)
{
	struct suspect *s = NULL;
	size_t n = 0, cap = 0;

	for (uint32_t v = 0; v < g->nvx; v++) {
		unsigned in = graph_vertex_strong_in(g, v);
		unsigned peers = graph_vertex_peers(g, v);
		if (in < 2 && peers < 2)
			continue;
		DGROW(s, cap, n + 1, 64);
		s[n++] = (struct suspect){ v, peers * 4 + in };
	}
	if (n)
		qsort(s, n, sizeof(*s), cmp_suspect);
	for (size_t i = 0; i < n && i < max; i++)
		out[i] = s[i].v;
	free(s);
	return n;
}

void
graph_vertex_describe(const struct graph *g, uint32_t v, char *buf,
    size_t len)
{
	char d[32];

	if (v >= g->nvx) {
		snprintf(buf, len, "?");
		return;
	}
	const struct graph_vertex *x = &g->vx[v];
	const struct gthread *t = &g->th[x->thread];
	char tid[16] = "";
	uint64_t st = graph_vertex_start(g, v);
	if (!(t->flags & GRAPH_THREAD_IRQ))
		snprintf(tid, sizeof(tid), "%u ", t->tid);
	snprintf(buf, len, "#%u %s%s %s at %.6f s, %s, %u ev%s", v, tid,
	    t->comm, graph_vertex_kind_name(x->kind),
	    (double)(st - (st >= g->first_ts ? g->first_ts : st)) / 1e9,
	    fmt_duration(d, sizeof(d), graph_vertex_end(g, v) - st),
	    x->nevents, x->flags & GRAPH_VF_INPUT ? " input" : "");
}

static int
check_fail(char **cause, const char *msg, uint32_t a, uint32_t b)
{
	if (cause)
		*cause = xasprintf("%s (%u, %u)", msg, a, b);
	return GRAPH_ERANGE;
}

int
graph_check(const struct graph *g, char **cause)
{
	for (uint32_t ti = 0; ti < g->nth; ti++) {
		const struct gthread *t = &g->th[ti];
		uint32_t next = 0;
		if (t->nvtx == 0)
			continue;
		for (uint32_t k = 0; k < t->nvtx; k++) {
			const struct graph_vertex *v = &g->vx[t->vtx[k]];
			if (v->thread != ti || v->first != next ||
			    v->nevents == 0)
				return check_fail(cause, "vertex out of place "
				    "(thread, vertex)", t->tid, t->vtx[k]);
			next = v->first + v->nevents;
			int inside = v->kind == GV_TASK ||
			    v->kind == GV_CALLOUT || v->kind == GV_WORK;
			for (uint32_t i = v->first; i + 1 < next && !inside;
			    i++)
				if (t->ev[i].type == TT_SWITCH &&
				    (t->ev[i].flags & GRAPH_EVF_WAIT))
					return check_fail(cause, "vertex spans "
					    "a wait outside a callout (tid, "
					    "vertex)", t->tid, t->vtx[k]);
		}
		if (next != t->nev)
			return check_fail(cause, "events outside vertices "
			    "(tid, event)", t->tid, next);
	}
	for (uint32_t e = 0; e < g->ned; e++) {
		const struct graph_edge *ed = &g->ed[e];
		if (ed->src >= g->nvx || ed->dst >= g->nvx)
			return check_fail(cause, "edge to nowhere (edge, "
			    "vertex)", e, ed->dst);
		const struct graph_vertex *s = &g->vx[ed->src];
		const struct graph_vertex *d = &g->vx[ed->dst];
		if (ed->src_ev < s->first || ed->src_ev >= s->first +
		    s->nevents || ed->dst_ev < d->first || ed->dst_ev >=
		    d->first + d->nevents)
			return check_fail(cause, "edge event outside its "
			    "vertex (edge, kind)", e, ed->kind);
		uint64_t ts = g->th[s->thread].ev[ed->src_ev].ts;
		uint64_t td = g->th[d->thread].ev[ed->dst_ev].ts;
		if (ed->kind != GE_USER && ts > td)
			return check_fail(cause, "edge back in time (edge, "
			    "kind)", e, ed->kind);
	}
	return 0;
}
