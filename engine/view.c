/*
 * view.c: queries for interactive viewers of an event graph (the "view"
 * section of engine.h), built on the public graph API only.
 *
 * struct view caches, per thread and built on first use, the thread's
 * scheduling state as a sorted array of transitions (time, state): running
 * from a "run" event, blocked from a wait, runnable from a preemption or
 * from the wake-up that ended a wait (the source of the wake-up edge into
 * the vertex that follows the wait). Lanes of a timeline are summarised
 * per column from these arrays, so the cost of a column is bounded
 * whatever the zoom: at most VIEW_SCAN transitions are visited, beyond
 * that the column is sampled at VIEW_SAMPLES points.
 */
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/common.h"
#include "engine.h"

#define VIEW_SCAN 128
#define VIEW_SAMPLES 16

struct vtrans {
	uint64_t ts;
	uint8_t state;		/* enum view_state */
};

struct vlane {
	struct vtrans *tr;
	size_t n;
	int built;
};

struct view {
	const struct graph *g;
	struct vlane *lanes;
	size_t nlanes;
};

struct view *
view_new(const struct graph *g)
{
	struct view *vw = xcalloc(1, sizeof(*vw));

	vw->g = g;
	vw->nlanes = graph_nthreads(g);
	vw->lanes = xcalloc(vw->nlanes ? vw->nlanes : 1, sizeof(*vw->lanes));
	return vw;
}

void
view_free(struct view *vw)
{
	if (vw == NULL)
		return;
	for (size_t i = 0; i < vw->nlanes; i++)
		free(vw->lanes[i].tr);
	free(vw->lanes);
	free(vw);
}

const char *
view_state_name(unsigned state)
{
	static const char *const n[VS_NSTATES] = {
		"none", "running", "runnable", "blocked", "hang",
	};
	return state < VS_NSTATES ? n[state] : "?";
}

/* Time of the wake-up that ended the wait before event run of thread t,
   or 0 when no wake-up edge leads there. */
static uint64_t
wake_time(const struct graph *g, uint32_t t, uint32_t run)
{
	uint32_t v = graph_vertex_of_event(g, t, run);
	size_t n;
	const uint32_t *in;

	if (v == GRAPH_NONE)
		return 0;
	in = graph_in_edges(g, v, &n);
	for (size_t i = 0; i < n; i++) {
		const struct graph_edge *e = graph_edge(g, in[i]);
		if (e->kind != GE_WAKEUP || e->dst_ev > run)
			continue;
		const struct graph_vertex *sv = graph_vertex(g, e->src);
		const struct graph_event *se = graph_event(g, sv->thread,
		    e->src_ev);
		if (se != NULL)
			return se->ts;
	}
	return 0;
}

static void
push(struct vlane *l, size_t *cap, uint64_t ts, unsigned state)
{
	if (l->n > 0 && l->tr[l->n - 1].state == state)
		return;
	DGROW(l->tr, *cap, l->n + 1, 64);
	l->tr[l->n].ts = ts;
	l->tr[l->n].state = (uint8_t)state;
	l->n++;
}

static struct vlane *
lane(struct view *vw, uint32_t t)
{
	const struct graph *g = vw->g;
	const struct graph_thread *th;
	struct vlane *l;
	size_t cap = 0;
	int blocked = 0;

	if (t >= vw->nlanes)
		return NULL;
	l = &vw->lanes[t];
	if (l->built)
		return l;
	l->built = 1;
	th = graph_thread(g, t);
	for (uint32_t i = 0; i < th->nevents; i++) {
		const struct graph_event *ev = graph_event(g, t, i);
		if (i == 0)
			push(l, &cap, ev->ts, VS_RUNNING);
		if (ev->type == GRAPH_EV_RUN) {
			if (blocked) {
				uint64_t w = wake_time(g, t, i);
				if (w != 0 && w < ev->ts &&
				    w > l->tr[l->n - 1].ts)
					push(l, &cap, w, VS_RUNNABLE);
			}
			push(l, &cap, ev->ts, VS_RUNNING);
			blocked = 0;
		} else if (ev->type == TT_SWITCH) {
			blocked = (ev->flags & GRAPH_EVF_WAIT) != 0;
			push(l, &cap, ev->ts, blocked ? VS_BLOCKED :
			    VS_RUNNABLE);
		} else if (ev->type == TT_EXIT) {
			push(l, &cap, ev->ts, VS_NONE);
		}
	}
	return l;
}

/* Index of the last transition at or before ts, or SIZE_MAX. */
static size_t
find(const struct vlane *l, uint64_t ts)
{
	size_t lo = 0, hi = l->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (l->tr[mid].ts <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo == 0 ? SIZE_MAX : lo - 1;
}

unsigned
view_state_at(struct view *vw, uint32_t thread, uint64_t ts)
{
	struct vlane *l = lane(vw, thread);
	size_t i;

	if (l == NULL || l->n == 0)
		return VS_NONE;
	i = find(l, ts);
	return i == SIZE_MAX ? VS_NONE : l->tr[i].state;
}

/* First index in the thread's vertex list starting at or after ts. */
static size_t
first_vertex_from(const struct graph *g, const uint32_t *vs, size_t n,
    uint64_t ts)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (graph_vertex_start(g, vs[mid]) < ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void
view_lane(struct view *vw, uint32_t thread, uint64_t t0, uint64_t t1,
    unsigned ncols, struct view_cell *out)
{
	struct vlane *l = lane(vw, thread);
	size_t nv = 0;
	const uint32_t *vs;
	uint64_t span;

	memset(out, 0, ncols * sizeof(*out));
	if (l == NULL || ncols == 0 || t1 <= t0)
		return;
	vs = graph_thread_vertices(vw->g, thread, &nv);
	span = t1 - t0;
	for (unsigned c = 0; c < ncols; c++) {
		uint64_t a = t0 + span * c / ncols;
		uint64_t b = t0 + span * (c + 1) / ncols;
		uint64_t time[VS_NSTATES] = { 0 };
		size_t i = find(l, a);
		unsigned cur = i == SIZE_MAX ? VS_NONE : l->tr[i].state;
		uint64_t at = a;
		unsigned k;

		if (b <= a)
			b = a + 1;
		i = i == SIZE_MAX ? 0 : i + 1;
		for (k = 0; k < VIEW_SCAN && i < l->n && l->tr[i].ts < b;
		    k++, i++) {
			time[cur] += l->tr[i].ts - at;
			at = l->tr[i].ts;
			cur = l->tr[i].state;
		}
		if (k == VIEW_SCAN) {
			/* too many changes: sample instead */
			memset(time, 0, sizeof(time));
			for (unsigned s = 0; s < VIEW_SAMPLES; s++) {
				size_t j = find(l, a + (b - a) * s /
				    VIEW_SAMPLES);
				time[j == SIZE_MAX ? VS_NONE :
				    l->tr[j].state]++;
			}
			out[c].changes = 0xffff;
		} else {
			time[cur] += b - at;
			out[c].changes = (uint16_t)k;
		}
		unsigned best = VS_NONE;
		for (unsigned s = 1; s < VS_NSTATES; s++)
			if (time[s] > time[best])
				best = s;
		out[c].state = (uint8_t)best;
		if (nv > 0) {
			size_t lo = first_vertex_from(vw->g, vs, nv, a);
			size_t hi = first_vertex_from(vw->g, vs, nv, b);
			out[c].vertices = hi - lo > 0xffff ? 0xffff :
			    (uint16_t)(hi - lo);
		}
	}
}

/* Edges a viewer steps along: not the weak same-thread ones. */
static int
steppable(const struct graph_edge *e)
{
	return e->kind != GE_SEQ && e->kind != GE_WAIT;
}

uint32_t
view_waker(const struct graph *g, uint32_t v)
{
	size_t n;
	const uint32_t *in = graph_in_edges(g, v, &n);
	uint32_t best = GRAPH_NONE, best_ev = UINT32_MAX;
	int best_strong = 0;

	for (size_t i = 0; i < n; i++) {
		const struct graph_edge *e = graph_edge(g, in[i]);
		int strong = !graph_edge_kind_weak(e->kind) &&
		    e->kind != GE_WAKEUP;
		if (!steppable(e) || e->src == v)
			continue;
		/* the edge that started the vertex: earliest target event;
		   at the same event a strong edge (message, work) wins */
		if (e->dst_ev < best_ev ||
		    (e->dst_ev == best_ev && strong && !best_strong)) {
			best = e->src;
			best_ev = e->dst_ev;
			best_strong = strong;
		}
	}
	return best;
}

uint32_t
view_wakee(const struct graph *g, uint32_t v)
{
	size_t n;
	const uint32_t *out = graph_out_edges(g, v, &n);

	/* out-edges come in time order of their targets: the first one */
	for (size_t i = 0; i < n; i++) {
		const struct graph_edge *e = graph_edge(g, out[i]);
		if (steppable(e) && e->dst != v)
			return e->dst;
	}
	return GRAPH_NONE;
}
