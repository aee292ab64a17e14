/*
 * nav.c: the user's position and its history, the lane order of the
 * timeline, and rebuilding the model in place.
 *
 * The history is an array of positions hist[0..nhist) with hcur the
 * current one, as in a web browser: moving somewhere new drops the
 * entries after hcur and appends; `[` and `]` move hcur. Positions name a
 * thread by tid and a vertex by a time inside it, so they stay meaningful
 * after a rule rebuilds the graph.
 */
#include <stdlib.h>
#include <string.h>

#include "tui-local.h"

const struct diag_hang *
tui_hang(const struct tui *t)
{
	if (t->d == NULL || t->pos.hang == SIZE_MAX ||
	    t->pos.hang >= diag_nhangs(t->d))
		return NULL;
	return diag_hang(t->d, t->pos.hang);
}

/* Look the thread and the vertex of pos up again. */
static void
resolve(struct tui *t)
{
	t->thread = graph_thread_find(t->g, t->pos.tid);
	t->vertex = t->thread == GRAPH_NONE ? GRAPH_NONE :
	    graph_vertex_at(t->g, t->pos.tid, t->pos.vts);
}

static void
hist_save(struct tui *t)
{
	if (t->nhist == 0) {
		t->hist[0] = t->pos;
		t->nhist = 1;
		t->hcur = 0;
	} else {
		t->hist[t->hcur] = t->pos;
	}
}

void
tui_hist_push(struct tui *t)
{
	if (t->nhist == 0) {
		hist_save(t);
		return;
	}
	if (t->hcur + 1 >= HIST_MAX) {
		memmove(t->hist, t->hist + 1, (HIST_MAX - 1) *
		    sizeof(t->hist[0]));
		t->hcur--;
	}
	t->hcur++;
	t->nhist = t->hcur + 1;
	t->hist[t->hcur] = t->pos;
}

int
tui_hist_move(struct tui *t, int dir)
{
	if (t->nhist == 0 || (dir < 0 && t->hcur == 0) ||
	    (dir > 0 && t->hcur + 1 >= t->nhist)) {
		tui_message(t, 1, "%s of the navigation history",
		    dir < 0 ? "at the start" : "at the end");
		return R_STATUS;
	}
	hist_save(t);
	t->hcur = dir < 0 ? t->hcur - 1 : t->hcur + 1;
	size_t hang = t->pos.hang;
	t->pos = t->hist[t->hcur];
	resolve(t);
	if (hang != t->pos.hang)
		tui_lanes(t);
	return R_ALL;
}

/* Keep [t0, t1) inside the trace and at least 1 ns per column. */
static void
clamp_window(struct tui *t)
{
	uint64_t span = t->pos.t1 - t->pos.t0, all;

	if (t->last_ts <= t->first_ts)
		t->last_ts = t->first_ts + 1000000;
	all = t->last_ts - t->first_ts + 1;
	if (t->pos.t1 <= t->pos.t0 || span > all) {
		t->pos.t0 = t->first_ts;
		t->pos.t1 = t->first_ts + all;
		return;
	}
	if (t->pos.t0 < t->first_ts) {
		t->pos.t0 = t->first_ts;
		t->pos.t1 = t->pos.t0 + span;
	}
	if (t->pos.t1 > t->first_ts + all) {
		t->pos.t1 = t->first_ts + all;
		t->pos.t0 = t->pos.t1 - span;
	}
}

/* Make the window show ts (and up to len after it), keeping the zoom
   unless the window is empty. */
static void
follow(struct tui *t, uint64_t ts, uint64_t len)
{
	uint64_t span = t->pos.t1 - t->pos.t0;

	if (span == 0) {
		/* first time: a window four times the vertex, 10 ms at least */
		span = len * 4 > 10000000 ? len * 4 : 10000000;
		t->pos.t0 = ts > span / 4 ? ts - span / 4 : 0;
		t->pos.t1 = t->pos.t0 + span;
	} else if (ts < t->pos.t0 || ts >= t->pos.t1) {
		t->pos.t0 = ts > span / 4 ? ts - span / 4 : 0;
		t->pos.t1 = t->pos.t0 + span;
	}
	clamp_window(t);
}

int
tui_goto_vertex(struct tui *t, uint32_t v, int record)
{
	const struct graph_vertex *gv = graph_vertex(t->g, v);

	if (gv == NULL)
		return 0;
	hist_save(t);
	uint64_t s = graph_vertex_start(t->g, v);
	uint64_t e = graph_vertex_end(t->g, v);
	t->pos.tid = graph_thread(t->g, gv->thread)->tid;
	t->pos.vts = s;
	t->pos.cursor = s;
	follow(t, s, e - s);
	resolve(t);
	if (record)
		tui_hist_push(t);
	/* a thread not yet pinned joins the chain lanes */
	int pinned = 0;
	for (size_t i = 0; i < t->npinned; i++)
		if (t->lanes[i] == t->thread)
			pinned = 1;
	if (!pinned)
		tui_lanes(t);
	return R_ALL;
}

int
tui_goto_time(struct tui *t, uint64_t ts, int record)
{
	hist_save(t);
	t->pos.cursor = ts;
	t->pos.vts = ts;
	follow(t, ts, 0);
	resolve(t);
	if (record)
		tui_hist_push(t);
	return R_ALL;
}

int
tui_set_thread(struct tui *t, uint32_t th)
{
	const struct graph_thread *gt = graph_thread(t->g, th);

	if (gt == NULL)
		return 0;
	t->pos.tid = gt->tid;
	t->pos.vts = t->pos.cursor;
	resolve(t);
	return R_ALL;
}

int
tui_open_hang(struct tui *t, size_t h, int record)
{
	const struct diag_hang *hg;

	if (t->d == NULL || h >= diag_nhangs(t->d)) {
		if (t->pos.t1 == 0) {
			/* no hang: open on the whole trace, or on all
			   of a window loaded */
			uint32_t best = 0;
			for (uint32_t i = 0; i < graph_nthreads(t->g); i++)
				if (graph_thread(t->g, i)->nevents >
				    graph_thread(t->g, best)->nevents)
					best = i;
			t->pos.t0 = t->win_from > t->first_ts ? t->win_from :
			    t->first_ts;
			t->pos.t1 = t->win_to < t->last_ts ? t->win_to + 1 :
			    t->last_ts + 1;
			clamp_window(t);
			t->pos.cursor = t->pos.vts = t->pos.t0;
			if (graph_nthreads(t->g) > 0)
				t->pos.tid = graph_thread(t->g, best)->tid;
			resolve(t);
			hist_save(t);
			tui_lanes(t);
			tui_message(t, 0, "no hang found (why: the slice "
			    "diff pane): %zu vertices, %zu threads (:goto, "
			    ":diagnose)", graph_nvertices(t->g),
			    graph_nthreads(t->g));
		}
		return R_ALL;
	}
	hist_save(t);
	hg = diag_hang(t->d, h);
	t->pos.hang = h;
	/* show the whole hang with some context */
	uint64_t len = hg->end_ns > hg->start_ns ? hg->end_ns - hg->start_ns :
	    1000000;
	t->pos.t0 = hg->start_ns > len / 2 ? hg->start_ns - len / 2 : 0;
	t->pos.t1 = hg->end_ns + len / 2;
	clamp_window(t);
	if (hg->node != GRAPH_NONE) {
		tui_goto_vertex(t, hg->node, 0);
	} else {
		t->pos.tid = hg->th.tid;
		t->pos.cursor = t->pos.vts = hg->start_ns;
		resolve(t);
	}
	if (record)
		tui_hist_push(t);
	else
		hist_save(t);
	tui_lanes(t);
	for (int i = 0; i < P_N; i++)
		t->panes[i].sel = t->panes[i].top = 0;
	if (diag_picked(t->d, h) >= 0)
		t->panes[P_CANDS].sel = (size_t)diag_picked(t->d, h);
	char b[32];
	tui_message(t, 0, "hang %zu/%zu: %s %s for %s", h + 1,
	    diag_nhangs(t->d), hg->th.comm, diag_kind_name(hg->kind),
	    fmt_duration(b, sizeof(b), hg->end_ns - hg->start_ns));
	return R_ALL;
}

uint32_t
tui_waker(struct tui *t, uint32_t v)
{
	size_t h = t->pos.hang;

	if (tui_hang(t) != NULL) {
		size_t n = diag_npath(t->d, h);
		for (size_t i = 0; i + 1 < n; i++)
			if (diag_path(t->d, h, i)->node == v)
				return diag_path(t->d, h, i + 1)->node;
		n = diag_ncritical(t->d, h);
		for (size_t i = 0; i + 1 < n; i++)
			if (diag_critical(t->d, h, i)->node == v)
				return diag_critical(t->d, h, i + 1)->node;
	}
	return view_waker(t->g, v);
}

/* --- lanes ------------------------------------------------------------- */

static const struct graph *sort_g;

static int
by_events(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint32_t nx = graph_thread(sort_g, x)->nevents;
	uint32_t ny = graph_thread(sort_g, y)->nevents;

	return nx != ny ? (nx < ny ? 1 : -1) : (x > y) - (x < y);
}

static void
pin(struct tui *t, uint32_t th, char *seen)
{
	if (th == GRAPH_NONE || th >= graph_nthreads(t->g) || seen[th])
		return;
	seen[th] = 1;
	t->lanes[t->nlanes++] = th;
}

void
tui_lanes(struct tui *t)
{
	size_t n = graph_nthreads(t->g);
	char *seen = xcalloc(n ? n : 1, 1);
	const struct diag_hang *hg = tui_hang(t);
	uint32_t *rest;
	size_t nrest = 0;

	free(t->lanes);
	t->lanes = xcalloc(n ? n : 1, sizeof(*t->lanes));
	t->nlanes = 0;
	/* the hang and its critical path, its slice, its culprits, its own
	   chain, then the threads the user walked through */
	if (hg != NULL) {
		size_t h = t->pos.hang;
		pin(t, hg->th.thread, seen);
		for (size_t i = 0; i < diag_ncpath(t->d, h); i++)
			pin(t, diag_cpath(t->d, h, i)->th.thread, seen);
		for (size_t i = 0; i < diag_npath(t->d, h); i++)
			pin(t, diag_path(t->d, h, i)->th.thread, seen);
		for (size_t i = 0; i < diag_nculprits(t->d, h); i++)
			pin(t, diag_culprit(t->d, h, i)->th.thread, seen);
		for (size_t i = 0; i < diag_ncritical(t->d, h); i++)
			pin(t, diag_critical(t->d, h, i)->th.thread, seen);
	}
	for (size_t i = 0; i < t->nhist; i++)
		pin(t, graph_thread_find(t->g, t->hist[i].tid), seen);
	pin(t, t->thread, seen);
	t->npinned = t->nlanes;
	t->nfolded = 0;
	t->fold_t0 = t->pos.t0;
	t->fold_t1 = t->pos.t1;
	rest = xcalloc(n ? n : 1, sizeof(*rest));
	for (uint32_t i = 0; i < n; i++) {
		const struct graph_thread *gt = graph_thread(t->g, i);
		char lab[64];
		if (seen[i] || gt->nevents == 0)
			continue;
		if (t->filter[0] != '\0' &&
		    !tui_match(tui_thread_label(t, i, lab, sizeof(lab)),
		    t->filter) && !tui_match(gt->process, t->filter))
			continue;
		if (!t->unfold && tui_fold_lane(t, i)) {
			t->nfolded++;
			continue;
		}
		rest[nrest++] = i;
	}
	sort_g = t->g;
	qsort(rest, nrest, sizeof(*rest), by_events);
	memcpy(t->lanes + t->nlanes, rest, nrest * sizeof(*rest));
	t->nlanes += nrest;
	free(rest);
	free(seen);
}

/* --- rebuild ----------------------------------------------------------- */

/* The hang and pick that stay across a change of the model. */
struct keep {
	size_t hang;
	long picked;
	int by_default;
};

static struct keep
keep_of(const struct tui *t)
{
	struct keep k = { t->pos.hang, -1, 1 };

	if (t->d != NULL && k.hang != SIZE_MAX && k.hang < diag_nhangs(t->d)) {
		k.picked = (long)diag_picked(t->d, k.hang);
		k.by_default = diag_picked_by_default(t->d, k.hang);
	}
	return k;
}

/* After the diagnosis changed: the hang and the pick again where they
   still exist, the position resolved, the lanes ordered. */
static void
restore(struct tui *t, struct keep k)
{
	if (t->d == NULL || k.hang >= diag_nhangs(t->d))
		t->pos.hang = t->d && diag_nhangs(t->d) ? 0 : SIZE_MAX;
	else if (!k.by_default && k.picked >= 0 &&
	    (size_t)k.picked < diag_nsimilar(t->d, k.hang))
		diag_pick(t->d, k.hang, (size_t)k.picked);
	/* history entries name hangs by index too: drop stale ones */
	for (size_t i = 0; i < t->nhist; i++)
		if (t->d == NULL || t->hist[i].hang >= diag_nhangs(t->d))
			t->hist[i].hang = t->pos.hang;
	resolve(t);
	tui_lanes(t);
}

int
tui_rebuild(struct tui *t)
{
	char *cause = NULL;
	struct keep k;
	int err;

	tui_extend_wait(t, 1);	/* the rules apply to the newest graph */
	k = keep_of(t);
	view_free(t->vw);
	t->vw = NULL;
	diag_free(t->d);
	t->d = NULL;
	err = graph_rebuild(t->g, t->rules, &cause);
	t->vw = view_new(t->g);
	t->gen++;
	if (err != 0) {
		tui_message(t, 1, "rebuild failed: %s", cause ? cause :
		    graph_strerror(err));
		free(cause);
		resolve(t);
		return R_ALL;
	}
	err = diag_new(t->g, &t->dopts, &t->d, &cause);
	if (err != 0) {
		tui_message(t, 1, "diagnosis failed: %s", cause ? cause :
		    graph_strerror(err));
		free(cause);
		t->d = NULL;
	}
	restore(t, k);
	return R_ALL;
}

void
tui_set_model(struct tui *t, struct graph *g, struct diag *d)
{
	struct keep k = keep_of(t);

	view_free(t->vw);
	diag_free(t->d);
	graph_free(t->g);
	t->g = g;
	t->d = d;
	t->vw = view_new(g);
	t->gen++;
	restore(t, k);
}
