/*
 * diag-pathdiff.c: the critical path of a hang against the normal run's,
 * and the culprits it adds (the stage after diag-path.c; it reads the
 * culprits the diff of diag-diff.c and diag-recurse.c found).
 *
 * Each step of the hang's path (struct diag_cstep in struct dhang's cp
 * array) gets a verdict against the path of the picked similar node's
 * wait, aligned by thread, else by process (a pool): as long there, far
 * longer in the hang, or not there at all. A step the path alone names
 * (a user thread other than the hung one that blocked or ran for a
 * quarter of the hang) is a culprit unless it took as long on the
 * normal path (a relay): the diagnosis adds each one the diff did not
 * name, or says why it left it out.
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

void
diag_path_compare(struct diag *d, struct dhang *h, const struct dwait *twin)
{
	uint64_t len = h->pub.end_ns - h->pub.start_ns;
	struct diag_cstep nv[32];
	size_t nn = 0;
	int stop;

	if (twin != NULL && twin->run != GRAPH_NONE)
		nn = diag_critical_path(d->g, twin->ti, twin->start, twin->end,
		    d->last_ts, nv, 32, &stop);
	for (size_t k = 1; k < h->cp.n; k++) {
		struct diag_cstep *s = &h->cp.v[k];
		s->verdict = twin != NULL ? verdict(s, nv, nn) : DCV_NONE;
		/* idle since before the hang and woken by a plain wake-up:
		   it relays its waker (with a message or data, it may have
		   held something while it waited for that input) */
		int relay = s->wait_start < h->pub.start_ns &&
		    (s->edge == DCE_WAKEUP || s->th.pid == h->pub.th.pid);
		s->culprit = s->th.thread != h->pub.th.thread &&
		    diag_user_thread(d->g, s->th.thread) &&
		    took(s) >= len / 4 && !relay;
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
		if (!s->culprit)
			continue;
		if (s->verdict == DCV_SAME) {
			dnote(h, "%s (%u) is on the critical path for %.0f ms, "
			    "as long as on the normal path: a relay, not a "
			    "culprit", s->th.comm, s->th.tid,
			    (double)took(s) / 1e6);
			continue;
		}
		struct diag_culprit c;
		memset(&c, 0, sizeof(c));
		c.th = s->th;
		diag_thread_fill(g, GRAPH_NONE, &c.serving);
		if (s->blocked_ns >= s->running_ns && s->wait.type[0] != 0) {
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
		unsigned depth = parent == SIZE_MAX ? 1 :
		    h->cul.v[parent].depth + 1;
		if (depth > (d->o.max_depth ? d->o.max_depth : 8))
			break;
		diag_add_culprit(h, &c, depth, parent);
		parent = h->cul.n - 1;
		dnote(h, "%s (%u) added from the critical path: %s %.0f ms "
		    "of the hang%s%s", s->th.comm, s->th.tid,
		    c.kind == DIAG_BLOCKED ? "blocked" : "running",
		    (double)took(s) / 1e6, s->verdict != DCV_NONE ? ", " : "",
		    diag_cverdict_name(s->verdict));
	}
}
