/*
 * diag-api.c: the life of a struct diag and its accessors.
 *
 * diag_new() copies the options and runs the stages in order: the hangs
 * (diag-hang.c, on semantic waits of diag-swait.c), for each its similar
 * nodes and pick (diag-similar.c), then its analysis (diag-analyze.c:
 * critical path, slice, diff, culprits); last, the hangs explained by
 * another go after it. The accessors only read the arrays of struct
 * dhang (diag-local.h). diag_pick() and diag_add_node() are the
 * two ways to compute again: another similar node for a hang, or a new
 * hang from any vertex.
 */
#include <stdlib.h>
#include <string.h>

#include "diag-local.h"
#include "common/elfaddr.h"


const char *
diag_kind_name(int kind)
{
	switch (kind) {
	case DIAG_BUSY: return "busy";
	case DIAG_BLOCKED: return "blocked";
	case DIAG_YIELD: return "yield";
	}
	return "none";
}

const char *
diag_source_name(int src)
{
	switch (src) {
	case DIAG_SRC_MARK: return "mark";
	case DIAG_SRC_KERNEL: return "kernel";
	case DIAG_SRC_USER: return "user";
	case DIAG_SRC_NODE: return "node";
	}
	return "?";
}

/* Whether hang x is explained by hang y: x's thread is a culprit of y
   during x. */
static int
explained_by(const struct dhang *x, const struct dhang *y)
{
	for (size_t i = 0; i < y->cul.n; i++)
		if (y->cul.v[i].th.thread == x->pub.th.thread &&
		    y->cul.v[i].start_ns <= x->pub.end_ns &&
		    y->cul.v[i].end_ns >= x->pub.start_ns)
			return 1;
	return 0;
}

/*
 * The stages after the hangs, for each hang of d: its similar nodes
 * (the pick), then its analysis (critical path, diff, culprits); then
 * the hangs explained by another one (their thread is its culprit) go
 * after the others.
 */
static void
analyze_hangs(struct diag *d)
{
	for (size_t i = 0; i < d->h.n; i++) {
		struct dhang *h = &d->h.v[i];
		int range = 0;
		if (h->pub.kind == DIAG_BLOCKED) {
			diag_find_similar(d, h);
			if (h->sim.n > 0) {
				size_t p = d->o.pick > 0 ? d->o.pick - 1 : 0;
				if (p >= h->sim.n) {
					range = 1;
					p = 0;
				}
				h->picked = (long)p;
				h->by_default = d->o.pick == 0 || range;
			}
		}
		diag_analyze(d, h);
		if (range)
			dnote(h, "--pick %u is out of range (%zu similar "
			    "nodes); took the first", d->o.pick, h->sim.n);
	}
	/* hangs explained by another one (their thread is its culprit)
	   come after the others */
	if (d->h.n > 1 && d->o.at == 0 && d->cand == NULL) {
		size_t n = d->h.n, k = 0;
		struct dhang *v = xmalloc(n * sizeof(*v));
		char *later = xcalloc(n, 1);
		/* latest first, so that of two hangs explaining each other
		   (a circular wait) the one broken by its own timeout
		   stays first, else the earlier one: the order of their
		   starts is a race between the two threads */
		for (size_t i = n; i-- > 0;)
			for (size_t j = 0; j < n && !later[i]; j++)
				if (i != j && !later[j] &&
				    explained_by(&d->h.v[i], &d->h.v[j]) &&
				    diag_goes_after(explained_by(&d->h.v[j],
				    &d->h.v[i]), d->h.v[i].dw.w.timed_out,
				    d->h.v[j].dw.w.timed_out))
					later[i] = 1;
		for (int pass = 0; pass < 2; pass++)
			for (size_t i = 0; i < n; i++)
				if (later[i] == pass)
					v[k++] = d->h.v[i];
		memcpy(d->h.v, v, n * sizeof(*v));
		free(v);
		free(later);
		diag_hangs_moved(d);
	}
}

int
diag_new(struct graph *g, const struct diag_opts *o, struct diag **out,
    char **cause)
{
	return diag_new_listed(g, o, NULL, NULL, 0, out, cause);
}

int
diag_new_listed(struct graph *g, const struct diag_opts *o,
    const struct dscan *hist, const struct dcand *cand, size_t ncand,
    struct diag **out, char **cause)
{
	struct diag *d;

	*out = NULL;
	if (o != NULL && o->tid != 0 && graph_thread_find(g, o->tid) ==
	    GRAPH_NONE) {
		if (cause != NULL)
			*cause = xasprintf("no thread %u in the trace", o->tid);
		return GRAPH_ERANGE;
	}
	d = xcalloc(1, sizeof(*d));
	d->g = g;
	hmap_init(&d->idle);
	hmap_init(&d->peers);
	hmap_init(&d->loops);
	if (o != NULL)
		d->o = *o;
	if (d->o.threshold_ns == 0)
		d->o.threshold_ns = 1000000000ULL;
	for (uint32_t ti = 0; ti < g->nth; ti++)
		if (g->th[ti].nev > 0 &&
		    g->th[ti].ev[g->th[ti].nev - 1].ts > d->last_ts)
			d->last_ts = g->th[ti].ev[g->th[ti].nev - 1].ts;
	if (d->o.pid != 0 || d->o.comm != NULL) {
		int any = 0;
		for (uint32_t ti = 0; ti < g->nth && !any; ti++) {
			const struct graph_thread *t = graph_thread(g, ti);
			any = (d->o.pid == 0 || t->pid == d->o.pid) &&
			    (d->o.comm == NULL || strcmp(t->comm,
			    d->o.comm) == 0 || strcmp(t->process,
			    d->o.comm) == 0);
		}
		if (!any) {
			if (cause != NULL)
				*cause = d->o.comm != NULL ?
				    xasprintf("no thread or process named %s%s",
				    d->o.comm, d->o.pid ? " in that process" :
				    "") : xasprintf("no process %u in the "
				    "trace", d->o.pid);
			free(d);
			return GRAPH_ERANGE;
		}
	}
	if (d->o.comm != NULL)
		d->o.comm = xstrdup(d->o.comm);
	d->hist = hist;
	d->cand = cand;
	d->ncand = cand != NULL ? ncand : 0;
	diag_find_hangs(d);
	analyze_hangs(d);
	*out = d;
	return 0;
}

static void
hang_free(struct dhang *h)
{
	diag_clear_results(h);
	free(h->found);
	free(h->notes.v);
	free(h->sim.v);
	free(h->path.v);
	free(h->crit.v);
	free(h->cp.v);
	free(h->cul.v);
	free(h->wk.v);
	free(h->dead.v);
	free(h->stk.v);
	free(h->syms.v);
	free(h->watch);
}

void
diag_free(struct diag *d)
{
	if (d == NULL)
		return;
	for (size_t i = 0; i < d->h.n; i++)
		hang_free(&d->h.v[i]);
	free(d->h.v);
	hmap_free(&d->idle);
	hmap_free(&d->peers);
	hmap_free(&d->loops);
	for (size_t i = 0; i < d->elfs.n; i++)
		elfaddr_free(d->elfs.v[i].e);
	free(d->elfs.v);
	free(d->why);
	free((char *)d->o.comm);
	free(d);
}

const struct diag_opts *
diag_options(const struct diag *d)
{
	return &d->o;
}

struct graph *
diag_graph(const struct diag *d)
{
	return d->g;
}

size_t
diag_nhangs(const struct diag *d)
{
	return d->h.n;
}

const char *
diag_why_none(const struct diag *d)
{
	return d->h.n == 0 ? d->why : NULL;
}

const struct diag_hang *
diag_hang(const struct diag *d, size_t h)
{
	return h < d->h.n ? &d->h.v[h].pub : NULL;
}

size_t
diag_nsimilar(const struct diag *d, size_t h)
{
	return h < d->h.n ? d->h.v[h].sim.n : 0;
}

const struct diag_similar *
diag_similar(const struct diag *d, size_t h, size_t i)
{
	return i < diag_nsimilar(d, h) ? &d->h.v[h].sim.v[i] : NULL;
}

size_t
diag_npath(const struct diag *d, size_t h)
{
	return h < d->h.n ? d->h.v[h].path.n : 0;
}

const struct diag_step *
diag_path(const struct diag *d, size_t h, size_t i)
{
	return i < diag_npath(d, h) ? &d->h.v[h].path.v[i] : NULL;
}

size_t
diag_ncpath(const struct diag *d, size_t h)
{
	return h < d->h.n ? d->h.v[h].cp.n : 0;
}

const struct diag_cstep *
diag_cpath(const struct diag *d, size_t h, size_t i)
{
	return i < diag_ncpath(d, h) ? &d->h.v[h].cp.v[i] : NULL;
}

int
diag_cpath_stop(const struct diag *d, size_t h)
{
	return h < d->h.n ? d->h.v[h].cp_stop : DCS_UNKNOWN;
}

size_t
diag_ncritical(const struct diag *d, size_t h)
{
	return h < d->h.n ? d->h.v[h].crit.n : 0;
}

const struct diag_step *
diag_critical(const struct diag *d, size_t h, size_t i)
{
	return i < diag_ncritical(d, h) ? &d->h.v[h].crit.v[i] : NULL;
}

size_t
diag_nculprits(const struct diag *d, size_t h)
{
	return h < d->h.n ? d->h.v[h].cul.n : 0;
}

const char *
diag_why_no_culprit(const struct diag *d, size_t h)
{
	return h < d->h.n ? d->h.v[h].no_culprit : NULL;
}

size_t
diag_culprit_first(const struct diag *d, size_t h, size_t i)
{
	return h < d->h.n ? diag_cul_first(&d->h.v[h], i) : i;
}

const struct diag_culprit *
diag_culprit(const struct diag *d, size_t h, size_t i)
{
	return i < diag_nculprits(d, h) ? &d->h.v[h].cul.v[i] : NULL;
}

size_t
diag_nwakeups(const struct diag *d, size_t h)
{
	return h < d->h.n ? d->h.v[h].wk.n : 0;
}

const struct diag_wakeup *
diag_wakeup(const struct diag *d, size_t h, size_t i)
{
	return i < diag_nwakeups(d, h) ? &d->h.v[h].wk.v[i] : NULL;
}

size_t
diag_nstacks(const struct diag *d, size_t h)
{
	return h < d->h.n ? d->h.v[h].stk.n : 0;
}

const struct diag_stack *
diag_stack(const struct diag *d, size_t h, size_t i)
{
	return i < diag_nstacks(d, h) ? &d->h.v[h].stk.v[i] : NULL;
}

size_t
diag_ndead_ends(const struct diag *d, size_t h)
{
	return h < d->h.n ? d->h.v[h].dead.n : 0;
}

const char *
diag_dead_end(const struct diag *d, size_t h, size_t i)
{
	if (h >= d->h.n || i >= d->h.v[h].dead.n)
		return NULL;
	return d->h.v[h].dead.v[i];
}

size_t
diag_nnotes(const struct diag *d, size_t h)
{
	return h < d->h.n ? d->h.v[h].notes.n : 0;
}

const char *
diag_note(const struct diag *d, size_t h, size_t i)
{
	if (h >= d->h.n || i >= d->h.v[h].notes.n)
		return NULL;
	return d->h.v[h].notes.v[i];
}

long
diag_picked(const struct diag *d, size_t h)
{
	return h < d->h.n ? d->h.v[h].picked : -1;
}

int
diag_picked_by_default(const struct diag *d, size_t h)
{
	return h < d->h.n ? d->h.v[h].by_default : 0;
}

const struct diag_cycle *
diag_cycle(const struct diag *d, size_t h)
{
	if (h >= d->h.n || !d->h.v[h].has_cycle)
		return NULL;
	return &d->h.v[h].cycle;
}

uint32_t
diag_cause_node(const struct diag *d, size_t h)
{
	return h < d->h.n ? d->h.v[h].cause_node : GRAPH_NONE;
}

const struct diag_thread *
diag_cause_thread(const struct diag *d, size_t h)
{
	if (h >= d->h.n || d->h.v[h].cause_th.tid == 0)
		return NULL;
	return &d->h.v[h].cause_th;
}

const char *
diag_watch_hint(const struct diag *d, size_t h)
{
	return h < d->h.n ? d->h.v[h].watch : NULL;
}

int
diag_pick(struct diag *d, size_t h, size_t i)
{
	if (h >= d->h.n || i >= d->h.v[h].sim.n)
		return GRAPH_ERANGE;
	struct dhang *x = &d->h.v[h];
	x->picked = (long)i;
	x->by_default = 0;
	diag_analyze(d, x);
	return 0;
}

int
diag_add_node(struct diag *d, uint32_t v, size_t *hp)
{
	struct graph *g = d->g;
	struct dhang z;

	if (v >= g->nvx)
		return GRAPH_ERANGE;
	const struct graph_vertex *vx = &g->vx[v];
	const struct gthread *t = &g->th[vx->thread];
	memset(&z, 0, sizeof(z));
	DPUSH(d->h, z);
	struct dhang *h = &d->h.v[d->h.n - 1];
	diag_thread_fill(g, vx->thread, &h->pub.th);
	h->pub.source = DIAG_SRC_NODE;
	h->pub.node = v;
	h->picked = -1;
	h->cause_node = GRAPH_NONE;
	h->pub.wait.syscall = "";
	h->pub.wait.type = "cpu";
	snprintf(h->pub.wait.resource, sizeof(h->pub.wait.resource), "cpu");
	h->pub.start_ns = graph_vertex_start(g, v);
	h->pub.end_ns = graph_vertex_end(g, v);
	uint32_t sw = GRAPH_NONE;
	for (uint32_t i = vx->first + vx->nevents; i-- > vx->first;)
		if (t->ev[i].type == TT_SWITCH &&
		    (t->ev[i].flags & GRAPH_EVF_WAIT)) {
			sw = i;
			break;
		}
	if (sw != GRAPH_NONE) {
		diag_wait_at(g, vx->thread, sw, d->last_ts, &h->dw);
		h->pub.kind = DIAG_BLOCKED;
		h->pub.wait = h->dw.w;
		h->pub.start_ns = h->dw.start;
		h->pub.end_ns = h->dw.end;
		diag_find_similar(d, h);
		if (h->sim.n > 0) {
			h->picked = 0;
			h->by_default = 1;
		}
	} else {
		h->pub.kind = DIAG_BUSY;
		h->pub.cpu_ns = diag_cpu_time(g, vx->thread, h->pub.start_ns,
		    h->pub.end_ns);
	}
	h->pub.ended = h->pub.end_ns < d->last_ts;
	diag_analyze(d, h);
	*hp = d->h.n - 1;
	return 0;
}

void
diag_stats_add_graph(struct diag_stats *st, const struct graph *g)
{
	struct graph_stats gs;

	if (st == NULL || g == NULL)
		return;
	graph_get_stats(g, &gs);
	st->graphs++;
	st->graph_events += gs.trace_events;
	st->load_ns += gs.load_ns;
	st->build_ns += gs.build_ns;
}
