/*
 * diag-pathdiff.c: the critical path of a hang against the normal run's,
 * and the culprits it adds (the stage after diag-path.c; it reads the
 * culprits the diff of diag-diff.c and diag-recurse.c found).
 *
 * Each step of the hang's path (struct diag_cstep in struct dhang's cp
 * array) gets a verdict against the path of the picked similar node's
 * wait, aligned by thread, else by process (a pool): as long there, far
 * longer in the hang, or not there at all. The path alone names a step
 * (enum diag_cwhy) when the time it blames on it is a quarter of the
 * hang: its run, its wait at the root of the path, or a wait that is
 * not its idle one. Such a step is a culprit unless it took as long on
 * the normal path (a relay): the diagnosis adds each one the diff did
 * not name, or says why it left it out.
 */
#include <stdlib.h>
#include <string.h>

#include "diag-local.h"

const char *
diag_cverdict_name(int v)
{
	switch (v) {
	case DCV_SAME: return "as on the normal path";
	case DCV_LONGER: return "far longer than on the normal path";
	case DCV_EXTRA: return "not on the normal path";
	default: return "";
	}
}

const char *
diag_cwhy_name(int why)
{
	switch (why) {
	case DCW_BUSY: return "running while the hang waited for it";
	case DCW_ROOT: return "where the path ends";
	case DCW_LONGER: return "blocked far longer than on the normal path";
	case DCW_BLOCKED: return "blocked in a wait other than its idle one";
	default: return "";
	}
}

static uint64_t
took(const struct diag_cstep *s)
{
	return s->blocked_ns + s->running_ns;
}

/* The verdict of hang step s against the normal path nv[0..nn). */
static int
verdict(const struct diag_cstep *s, const struct diag_cstep *nv, size_t nn)
{
	const struct diag_cstep *m = NULL;

	for (size_t k = 1; k < nn && m == NULL; k++)
		if (nv[k].th.thread == s->th.thread)
			m = &nv[k];
	for (size_t k = 1; k < nn && m == NULL; k++)
		if (nv[k].th.pid == s->th.pid)
			m = &nv[k];	/* the same role: another of a pool */
	if (m == NULL)
		return DCV_EXTRA;
	return took(s) > 2 * took(m) + 10000000ULL ? DCV_LONGER : DCV_SAME;
}

/* Whether step s waited in its thread's idle wait (for work or input). */
static int
idle_step(struct diag *d, const struct diag_cstep *s)
{
	const struct gthread *t = &d->g->th[s->th.thread];

	return s->wait_enter != GRAPH_NONE && s->wait_enter < t->nev &&
	    diag_res_key(&t->ev[s->wait_enter]) ==
	    diag_idle_key(d, s->th.thread);
}

void
diag_path_compare(struct diag *d, struct dhang *h, const struct dwait *twin)
{
	uint64_t len = h->pub.end_ns - h->pub.start_ns, q = len / 4;
	struct diag_cstep nv[32];
	size_t nn = 0;
	int stop;

	if (twin != NULL && twin->run != GRAPH_NONE)
		nn = diag_critical_path(d->g, twin->ti, twin->start, twin->end,
		    d->last_ts, nv, 32, &stop);
	for (size_t k = 1; k < h->cp.n; k++) {
		struct diag_cstep *s = &h->cp.v[k];
		int root = k + 1 == h->cp.n && h->cp_stop != DCS_CYCLE &&
		    h->cp_stop != DCS_DEPTH;
		s->verdict = twin != NULL ? verdict(s, nv, nn) : DCV_NONE;
		s->culprit = DCW_NONE;
		if (s->th.thread == h->pub.th.thread ||
		    !diag_user_thread(d->g, s->th.thread))
			continue;
		/* the time the path blames on it: its own run, and at the
		   root its wait too; a wait in between is explained by the
		   steps after it, unless it took far longer than normal or
		   is not one the thread idles in */
		if (s->running_ns >= q)
			s->culprit = DCW_BUSY;
		else if (root && took(s) >= q)
			s->culprit = DCW_ROOT;
		else if (s->blocked_ns >= q && !idle_step(d, s))
			s->culprit = s->verdict == DCV_LONGER ? DCW_LONGER :
			    DCW_BLOCKED;
	}
}

/* The index of hang h's culprit of thread ti, or SIZE_MAX. */
static size_t
culprit_of(const struct dhang *h, uint32_t ti)
{
	for (size_t i = 0; i < h->cul.n; i++)
		if (h->cul.v[i].th.thread == ti)
			return i;
	return SIZE_MAX;
}

void
diag_path_culprits(struct diag *d, struct dhang *h)
{
	const struct graph *g = d->g;
	size_t parent = SIZE_MAX;

	for (size_t k = 1; k < h->cp.n; k++) {
		const struct diag_cstep *s = &h->cp.v[k];
		size_t have = culprit_of(h, s->th.thread);
		if (have != SIZE_MAX) {
			parent = have;
			continue;
		}
		if (s->culprit == DCW_NONE)
			continue;
		if (s->verdict == DCV_SAME) {
			struct dwho wb;
			dnote(h, "%s is on the critical path for %.0f ms, "
			    "as long as on the normal path: a relay, not a "
			    "culprit", diag_who(d->g, s->th.thread, &wb),
			    (double)took(s) / 1e6);
			continue;
		}
		unsigned depth = parent == SIZE_MAX ? 1 :
		    h->cul.v[parent].depth + 1;
		if (depth > (d->o.max_depth ? d->o.max_depth : 8))
			break;
		struct diag_culprit c;
		memset(&c, 0, sizeof(c));
		c.th = s->th;
		diag_thread_fill(g, GRAPH_NONE, &c.serving);
		if (s->culprit != DCW_BUSY && s->wait.type[0] != 0) {
			c.kind = DIAG_BLOCKED;
			c.wait = s->wait;
			c.start_ns = s->wait_start;
			c.end_ns = s->wait_end;
			c.node = graph_vertex_of_event(g, s->th.thread,
			    s->wait.wait_ev);
		} else {
			c.kind = DIAG_BUSY;
			c.wait.syscall = "";
			c.wait.type = "cpu";
			snprintf(c.wait.resource, sizeof(c.wait.resource),
			    "cpu");
			c.start_ns = s->wait_end > h->pub.start_ns ?
			    s->wait_end : h->pub.start_ns;
			c.end_ns = s->until;
			c.node = graph_vertex_at(g, s->th.tid, s->until);
		}
		diag_add_culprit(h, &c, depth, parent);
		parent = h->cul.n - 1;
		struct dwho wb;
		dnote(h, "%s added from the critical path: %s, %.0f ms "
		    "of the hang%s%s", diag_who(d->g, s->th.thread, &wb),
		    diag_cwhy_name(s->culprit), (double)took(s) / 1e6,
		    s->verdict != DCV_NONE ? ", " : "",
		    diag_cverdict_name(s->verdict));
	}
	if (h->cul.n > 0 || h->pub.kind != DIAG_BLOCKED)
		h->no_culprit = NULL;
	else if (h->cp.n <= 1 && h->cp_stop == DCS_TIMER)
		h->no_culprit = "the wait ended by its own timeout, and "
		    "nothing on its path differs from normal";
	else if (h->cp.n <= 1)
		h->no_culprit = "its critical path ends at the hung thread";
	else
		h->no_culprit = "no thread on its critical path blocked or "
		    "ran for a quarter of the hang but in its idle wait, and "
		    "none differs from normal";
}
