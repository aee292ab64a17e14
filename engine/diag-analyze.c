/*
 * diag-analyze.c: the analysis of one hang, the stages after its hang
 * and similar nodes (argus-diagnose(1)): its critical path
 * (diag-path.c), the slice of the picked normal node (diag-slice.c), the
 * diff and the culprits, recursively (diag-diff.c, diag-recurse.c), the
 * path against the normal run's (diag-pathdiff.c), then the wake-ups
 * from other contexts and the stacks (diag-stacks.c).
 *
 * It fills the result arrays of struct dhang (diag-local.h), cleared
 * first; the stages it calls never call back into it.
 */
#include <stdlib.h>
#include <string.h>

#include "diag-local.h"

void
diag_clear_results(struct dhang *h)
{
	diag_free_symbols(h);
	h->path.n = h->crit.n = h->cul.n = h->wk.n = h->stk.n = 0;
	h->cp.n = 0;
	h->no_culprit = NULL;
	h->wk_lo = UINT64_MAX;
	h->deep_lo = UINT64_MAX;
	h->deep_hi = 0;
	for (size_t i = 0; i < h->dead.n; i++)
		free(h->dead.v[i]);
	h->dead.n = 0;
	for (size_t i = 0; i < h->notes.n; i++)
		free(h->notes.v[i]);
	h->notes.n = 0;
	h->has_cycle = 0;
	h->cause_node = GRAPH_NONE;
	memset(&h->cause_th, 0, sizeof(h->cause_th));
	h->cause_th.comm = h->cause_th.process = "";
}

static int
picked_twin(const struct diag *d, const struct dhang *h, struct dwait *twin)
{
	const struct graph *g = d->g;
	uint32_t ti = h->pub.th.thread;

	if (h->pub.kind != DIAG_BLOCKED || h->picked < 0)
		return 0;
	const struct graph_vertex *vx = &g->vx[h->sim.v[h->picked].node];
	uint32_t sw = vx->first + vx->nevents - 1;
	for (uint32_t i = sw + 1; i-- > vx->first;)
		if (g->th[ti].ev[i].type == TT_SWITCH &&
		    (g->th[ti].ev[i].flags & GRAPH_EVF_WAIT)) {
			sw = i;
			break;
		}
	diag_wait_at(g, ti, sw, d->last_ts, twin);
	return 1;
}

static void
analyze_blocked(struct diag *d, struct dhang *h)
{
	const struct graph *g = d->g;
	uint32_t ti = h->pub.th.thread;
	struct level lv = { .ti = ti, .node = h->pub.node, .dw = h->dw,
	    .a = h->pub.start_ns, .b = h->pub.end_ns };

	/* the hang's own wake-up chain: its critical path, walked over
	   the hang already when the hang is its wait */
	if (h->dw.run != GRAPH_NONE && h->dw.start == h->pub.start_ns &&
	    h->dw.end == h->pub.end_ns)
		diag_cpath_as_steps(g, &h->dw, h->cp.v, h->cp.n, &h->crit);
	else
		diag_cpath_steps(g, &h->dw, d->last_ts, &h->crit);
	if (h->dw.w.timed_out)
		dnote(h, "the wait ended by its timeout (%.0f ms)",
		    (double)h->dw.w.timeout_ns / 1e6);
	struct dwait twin;
	if (picked_twin(d, h, &twin)) {
		diag_slice_twin(d, h, &twin);
		diag_recurse(d, h, &lv, h->path.v, h->path.n);
		if (h->cul.n == 0 && h->crit.n > 0) {
			/* the normal exchange went through other threads
			   (a reply made by a worker this time): the hang's
			   own wake-up chain names who it waited for */
			diag_recurse(d, h, &lv, h->crit.v,
		    diag_diff_cut(d, &lv, h->crit.v, h->crit.n));
			if (h->cul.n > 0)
				dnote(h, "no culprit on the normal path; the "
				    "culprits are from the hang's own wake-up "
				    "chain");
		}
	} else {
		ddead(h, "no similar normal node of %s: used the hang's "
		    "own wake-up chain", h->pub.th.comm);
		if (h->crit.n > 0)
			diag_recurse(d, h, &lv, h->crit.v,
		    diag_diff_cut(d, &lv, h->crit.v, h->crit.n));
	}
}

static void
analyze_yield(struct diag *d, struct dhang *h)
{
	const struct graph *g = d->g;
	uint64_t a = h->pub.start_ns, b = h->pub.end_ns;

	if (h->pub.slices) {
		/* one futex waited on in timed slices until woken: the
		   thread that woke it held the lock or the turn */
		struct level lv = { .ti = h->pub.th.thread,
		    .node = h->pub.node, .dw = h->dw, .a = a, .b = b };
		dnote(h, "%s waited on %s in %u timed slices in %.0f ms, "
		    "each ended by its timeout and waited again at once, "
		    "until woken: a lock or a turn held by another thread "
		    "(a runtime's monitor, an interpreter's global lock)",
		    h->pub.th.comm, h->pub.wait.resource, h->pub.yields,
		    (double)(b - a) / 1e6);
		diag_cpath_steps(g, &h->dw, d->last_ts, &h->crit);
		diag_recurse(d, h, &lv, h->crit.v,
		    diag_diff_cut(d, &lv, h->crit.v, h->crit.n));
		return;
	}
	if (h->poll_exit != GRAPH_NONE) {
		/* retries of an operation the kernel refused */
		dnote(h, "%s retried %s on %s %u times in %.0f ms, each "
		    "refused (%s), with timed waits between",
		    h->pub.th.comm, h->pub.wait.syscall, h->pub.wait.resource,
		    h->pub.yields, (double)(b - a) / 1e6,
		    strerror((int)-h->pub.wait.result));
		/* its culprit: the holder, when it polls a file lock */
		struct level lv = { .ti = h->pub.th.thread,
		    .node = h->pub.node, .a = a, .b = b };
		lv.dw.ti = h->pub.th.thread;
		lv.dw.sw = lv.dw.run = lv.dw.enter = lv.dw.exit = GRAPH_NONE;
		lv.dw.uwait = lv.dw.udone = GRAPH_NONE;
		diag_recurse(d, h, &lv, NULL, 0);
		return;
	}
	free(h->watch);
	h->watch = xasprintf("argus watch --write %u VARIABLE",
	    h->pub.th.pid);
	dnote(h, "%s polled with %u yields or short sleeps in %.0f ms: "
	    "it is likely waiting on a flag; trace it with: %s",
	    h->pub.th.comm, h->pub.yields, (double)(b - a) / 1e6, h->watch);
	/* flag writes from watchpoints: the last one before the end */
	uint32_t wt = GRAPH_NONE;
	uint64_t wts = 0;
	for (uint32_t ti = 0; ti < g->nth; ti++) {
		const struct gthread *t = &g->th[ti];
		for (uint32_t i = diag_event_at(g, ti, a); i < t->nev &&
		    t->ev[i].ts <= b + (b - a) / 10; i++)
			if (t->ev[i].type == TT_USER &&
			    t->ev[i].sub == TU_FLAG_WRITE && t->ev[i].ts >= wts) {
				wts = t->ev[i].ts;
				wt = ti;
			}
	}
	if (wt == GRAPH_NONE) {
		ddead(h, "no flag write recorded during the yield loop "
		    "(no watchpoint)");
		return;
	}
	struct diag_culprit c;
	struct dwait w;
	uint64_t ov;
	memset(&c, 0, sizeof(c));
	diag_thread_fill(g, wt, &c.th);
	c.serving.comm = c.serving.process = "";
	c.start_ns = a;
	c.end_ns = wts;
	c.wait.syscall = "";
	c.wait.type = "";
	if (wt != h->pub.th.thread &&
	    diag_wait_overlapping(d, wt, a, wts, &w, &ov) &&
	    ov >= (wts - a) / 2) {
		c.kind = DIAG_BLOCKED;
		c.wait = w.w;
		c.node = graph_vertex_of_event(g, wt, w.sw);
		c.start_ns = w.start;
		c.end_ns = w.end;
	} else {
		c.kind = DIAG_BUSY;
		c.node = graph_vertex_at(g, c.th.tid, wts);
		c.wait.type = "cpu";
	}
	diag_add_culprit(h, &c, 1, SIZE_MAX);
	struct dwho wb;
	dnote(h, "the flag was written by %s at %.6f s",
	    diag_who(g, c.th.thread, &wb), (double)(wts - graph_first_ts(g)) / 1e9);
}

/* Events the recorder lost in [a, b] (a loss is stamped with the last
   event its CPU kept before it). */
static uint64_t
lost_during(const struct graph *g, uint64_t a, uint64_t b)
{
	uint64_t n = 0;

	for (size_t i = 0; i < g->nlosts; i++)
		if (g->losts[i].ts >= a && g->losts[i].ts <= b)
			n += g->losts[i].n;
	return n;
}

void
diag_analyze(struct diag *d, struct dhang *h)
{
	const struct graph *g = d->g;
	uint32_t ti = h->pub.th.thread;

	diag_clear_results(h);
	if (h->found != NULL)
		dnote(h, "%s", h->found);
	h->pub.lost = lost_during(g, h->pub.start_ns, h->pub.end_ns);
	/* the backbone: the critical path over the hang */
	DGROW(h->cp.v, h->cp.cap, 32, 32);
	h->cp.n = diag_critical_path(g, ti, h->pub.start_ns, h->pub.end_ns,
	    d->last_ts, h->cp.v, 32, &h->cp_stop);
	switch (h->pub.kind) {
	case DIAG_BLOCKED:
		analyze_blocked(d, h);
		break;
	case DIAG_BUSY:
		diag_slice_busy(d, h);
		break;
	case DIAG_YIELD:
		analyze_yield(d, h);
		break;
	}
	/* wake-ups from other contexts: the hung process's threads and
	   the culprits */
	for (uint32_t tj = 0; tj < g->nth; tj++) {
		int want = diag_user_thread(g, tj) &&
		    g->th[tj].pid == h->pub.th.pid;
		for (size_t i = 0; i < h->cul.n && !want; i++)
			want = h->cul.v[i].th.thread == tj;
		if (want)
			diag_wakeups_of(d, h, tj, h->pub.start_ns,
			    h->pub.end_ns);
	}
	/* the path against the normal run's: what the diff left out */
	struct dwait twin;
	int have_twin = picked_twin(d, h, &twin);
	diag_path_compare(d, h, have_twin ? &twin : NULL);
	diag_path_culprits(d, h);
	diag_stacks(d, h);
}
