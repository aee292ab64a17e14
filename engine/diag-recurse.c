/*
 * diag-recurse.c: the culprit of the culprit (step 7 of argus-diagnose(1)).
 *
 * The diff of the hang against its normal path gives the culprits of
 * depth 1. Every blocked one is then diagnosed the same way: the slice
 * of its own normal wait (or of its wake-up chain) diffed against its
 * wait gives the culprits of the next depth, each explaining it (its
 * parent). The culprits are followed breadth first: depth by depth, and
 * at one depth in the order they were found, which keeps the result
 * deterministic.
 *
 * A followed culprit is a branch; its chain is the hung thread and the
 * threads of the culprits it explains, down to its own. The first culprit
 * of a diff whose thread is in that chain is a repeat: a circular wait,
 * kept and not followed; the first repeat found defines the hang's cycle.
 * A later thread of the chain in the same diff merely waits for the one
 * it explains, and is left out.
 *
 * A thread already a culprit in another branch is neither added nor
 * followed again: culprits waiting on one thread share it. As a diff
 * lists every blocked thread of a path, a thread may also be found
 * beside a culprit it explains (both of depth 1, say); it is then listed
 * again under that culprit, so that the tree shows who waits for whom,
 * but followed only once, where first found. The recursion stops at
 * max_depth and after MAXFOLLOW followed culprits. Two threads found
 * under each other in different branches (neither chain holds the
 * other) wait for each other: when no chain repeated, the tree's
 * waits-for edges are searched for such a cycle.
 */
#include <stdlib.h>
#include <string.h>

#include "diag-local.h"

#define MAXFOLLOW 64	/* culprits followed, all branches together */
#define MAXCHAIN 64	/* threads of a chain (and of a cycle) */

/* A blocked culprit to follow. */
struct branch {
	size_t cul;		/* its index in h->cul */
	size_t up;		/* the branch it explains; SIZE_MAX: the hang */
	unsigned depth;		/* its depth */
	uint32_t ti;		/* its thread */
	struct dwait w;		/* its wait */
	int sliced;		/* w: timed slices (struct dculprit) */
};

/* The state of one recursion. */
struct rec {
	struct diag *d;
	struct dhang *h;
	unsigned maxd;
	DARR(struct branch) br;		/* queue, in the order followed */
	DARR(struct dculprit) dc;	/* the diff of the current level */
	DARR(struct diag_step) sub;	/* the slice of the current level */
	uint32_t *sl;			/* its event limits */
	size_t nsl;
};

void
diag_add_culprit(struct dhang *h, struct diag_culprit *c, unsigned depth,
    size_t parent)
{
	c->depth = depth;
	c->parent = parent;
	DPUSH(h->cul, *c);
}

/* A branch's chain: the hung thread first, b's own thread last. */
struct chain {
	uint32_t ti[MAXCHAIN];
	size_t cul[MAXCHAIN];	/* index in h->cul; SIZE_MAX: the hang */
	size_t n;
};

/* The chain of branch b (SIZE_MAX: the hang itself). At most MAXCHAIN
   long: the depth is kept below it. */
static void
branch_chain(const struct rec *r, size_t b, struct chain *ch)
{
	size_t n = 0;

	for (size_t k = b; k != SIZE_MAX && n < MAXCHAIN - 1;
	    k = r->br.v[k].up)
		n++;
	ch->n = n + 1;
	ch->ti[0] = r->h->pub.th.thread;
	ch->cul[0] = SIZE_MAX;
	for (; b != SIZE_MAX && n > 0; b = r->br.v[b].up, n--) {
		ch->ti[n] = r->br.v[b].ti;
		ch->cul[n] = r->br.v[b].cul;
	}
}

/* Index of thread ti in chain ch, or SIZE_MAX. */
static size_t
chain_find(const struct chain *ch, uint32_t ti)
{
	for (size_t i = 0; i < ch->n; i++)
		if (ch->ti[i] == ti)
			return i;
	return SIZE_MAX;
}

/* Whether thread ti is a culprit of h already: 0 not at all, 1 only
   explaining the hang or culprits of chain ch (beside them in a diff),
   2 in another branch. */
static int
listed(const struct dhang *h, const struct chain *ch, uint32_t ti)
{
	int r = 0;

	for (size_t i = 0; i < h->cul.n; i++) {
		if (h->cul.v[i].th.thread != ti)
			continue;
		r = 1;
		size_t k = 0;
		while (k < ch->n && ch->cul[k] != h->cul.v[i].parent)
			k++;
		if (k == ch->n)
			return 2;
	}
	return r;
}

/* The cycle of h: the threads of chain ch from index at to the end. */
static void
set_cycle(struct diag *d, struct dhang *h, const struct chain *ch,
    size_t at)
{
	h->has_cycle = 1;
	h->cycle.ntids = 0;
	for (size_t k = at; k < ch->n && h->cycle.ntids < MAXCHAIN; k++)
		h->cyc_tids[h->cycle.ntids++] = d->g->th[ch->ti[k]].tid;
}

/*
 * The culprits of one level: the hang's (b SIZE_MAX) or branch b's wait,
 * lv, diffed against path p (n steps). Adds each new one explaining b's
 * culprit, marks a repeat (and the cycle, when the first), and queues
 * the blocked new ones.
 */
static void
level(struct rec *r, const struct level *lv, const struct diag_step *p,
    size_t n, size_t b)
{
	struct dhang *h = r->h;
	struct chain ch;
	unsigned depth = b == SIZE_MAX ? 1 : r->br.v[b].depth + 1;
	size_t parent = b == SIZE_MAX ? SIZE_MAX : r->br.v[b].cul;

	branch_chain(r, b, &ch);
	diag_diff_path(r->d, lv, p, n, &r->dc);
	for (size_t j = 0; j < r->dc.n; j++) {
		struct dculprit *x = &r->dc.v[j];
		size_t at = chain_find(&ch, x->c.th.thread);
		if (at != SIZE_MAX) {
			/* the first is a circular wait; a later one
			   only waits for the thread it explains */
			if (j > 0)
				continue;
			x->c.repeat = 1;
			if (!h->has_cycle)
				set_cycle(r->d, h, &ch, at);
			diag_add_culprit(h, &x->c, depth, parent);
			continue;
		}
		int again = listed(h, &ch, x->c.th.thread);
		if (again == 2)
			continue;	/* shared with another branch */
		diag_add_culprit(h, &x->c, depth, parent);
		if (x->holder)
		{
			struct dwho wa, wb;
			dnote(h, "%s woke %s after its own idle wait: it held "
			    "what that wait needed meanwhile",
			    diag_who(r->d->g, x->c.th.thread, &wa),
			    diag_who(r->d->g, lv->ti, &wb));
		}
		if (again || x->c.kind != DIAG_BLOCKED)
			continue;	/* followed where first found */
		struct branch nb = { .cul = h->cul.n - 1, .up = b,
		    .depth = depth, .ti = x->c.th.thread, .w = x->w,
		    .sliced = x->sliced };
		DPUSH(r->br, nb);
	}
}

/*
 * Follow branch b: slice its culprit's normal wait (or, without a
 * similar node, its own wake-up chain) and find the culprits of the next
 * depth from it.
 */
static void
follow(struct rec *r, size_t b)
{
	struct branch x = r->br.v[b];
	const struct diag_culprit *c = &r->h->cul.v[x.cul];
	struct level nl = { .ti = x.ti, .node = c->node, .dw = x.w,
	    .a = x.w.start, .b = x.w.end };
	struct dwho wb;
	const char *who = diag_who(r->d->g, c->th.thread, &wb);
	const char *comm = c->th.comm;
	struct dwait twin;
	uint64_t hz;
	char what[96];

	r->sub.n = 0;
	/* timed slices: their twins would be the slices before the last,
	   ended by a timer; the last one's wake-up names who let go. A
	   wait for a child or a signal that ended: its own wake-up names
	   the child it waited for, where an earlier such wait (a twin)
	   waited for another */
	const struct graph *g = r->d->g;
	int own = x.w.enter != GRAPH_NONE && x.w.run != GRAPH_NONE &&
	    (diag_sys_child(g->th[x.ti].ev[x.w.enter].aux) ||
	    diag_sys_sigwait(g->th[x.ti].ev[x.w.enter].aux));
	if (!x.sliced && !own &&
	    diag_culprit_twin(r->d, &nl, &twin, &hz)) {
		snprintf(what, sizeof(what), "slice of %s's normal wait "
		    "(depth %u)", comm, x.depth + 1);
		diag_slice_wait(r->d, r->h, &twin, nl.ti, twin.start, hz,
		    &r->sub, &r->sl, &r->nsl, what);
	} else if (diag_cpath_steps(g, &x.w, r->d->last_ts, &r->sub) == 0) {
		/* no twin: its own critical path */
		ddead(r->h, "%s was still waiting at the end of "
		    "the trace and has no similar normal node", who);
	} else {
		r->sub.n = diag_diff_cut(r->d, &nl, r->sub.v, r->sub.n);
	}
	diag_span_steps(r->d, r->sub.v, r->sub.n, &r->h->deep_lo,
	    &r->h->deep_hi);
	level(r, &nl, r->sub.v, r->sub.n, b);
}

/* The timeout that breaks the cycle of h: the first wait of its threads
   (the hung one first, then the culprits) that timed out with a known
   timeout, else the first with a known timeout. */
static void
cycle_timeout(struct dhang *h)
{
	const struct diag_wait *ws[MAXCHAIN + 1];
	uint32_t wt[MAXCHAIN + 1];
	size_t nw = 0;

	h->cycle.tids = h->cyc_tids;
	h->cycle.timeout_ns = 0;
	if (h->pub.kind == DIAG_BLOCKED) {
		wt[nw] = h->pub.th.tid;
		ws[nw++] = &h->pub.wait;
	}
	for (size_t i = 0; i < h->cul.n && nw < MAXCHAIN + 1; i++) {
		int in = 0;	/* only the threads of the cycle */
		for (size_t k = 0; k < h->cycle.ntids; k++)
			in |= h->cyc_tids[k] == h->cul.v[i].th.tid;
		if (!in)
			continue;
		wt[nw] = h->cul.v[i].th.tid;
		ws[nw++] = &h->cul.v[i].wait;
	}
	for (int pass = 0; pass < 2 && h->cycle.timeout_ns == 0; pass++)
		for (size_t i = 0; i < nw; i++)
			if (ws[i]->timeout_ns != 0 &&
			    (pass == 1 || ws[i]->timed_out)) {
				h->cycle.timeout_ns = ws[i]->timeout_ns;
				h->cycle.timeout_tid = wt[i];
				break;
			}
}

/* The thread culprit i explains: its parent's, or the hung thread. */
static uint32_t
explained(const struct dhang *h, size_t i)
{
	size_t p = h->cul.v[i].parent;

	return p == SIZE_MAX ? h->pub.th.thread : h->cul.v[p].th.thread;
}

/* The cycle found by wf_search: its threads in order, its closing
   culprit. */
struct wf_cycle {
	uint32_t ti[MAXCHAIN];
	size_t n;
	size_t closing;
};

/* Depth-first search of the waits-for edges from thread u, on the stack
   st (ns deep); each edge is walked once (done). Returns 1 with *cy
   filled when an edge leads back onto the stack. */
static int
wf_search(const struct dhang *h, uint32_t u, uint32_t *st, size_t ns,
    unsigned char *done, struct wf_cycle *cy)
{
	st[ns++] = u;
	for (size_t i = 0; i < h->cul.n; i++) {
		if (done[i] || explained(h, i) != u)
			continue;
		done[i] = 1;
		uint32_t v = h->cul.v[i].th.thread;
		for (size_t k = 0; k < ns; k++) {
			if (st[k] != v)
				continue;
			cy->n = 0;
			for (size_t j = k; j < ns && cy->n < MAXCHAIN; j++)
				cy->ti[cy->n++] = st[j];
			cy->closing = i;
			return 1;
		}
		if (wf_search(h, v, st, ns, done, cy))
			return 1;
	}
	return 0;
}

/*
 * A circular wait across branches: A found under B and B under A, each
 * followed once, where first found, so neither chain holds the other.
 * The tree's edges (the thread a culprit explains waits for the
 * culprit's thread) then hold the cycle; its closing culprit becomes a
 * repeat.
 */
static void
cross_cycle(struct diag *d, struct dhang *h)
{
	size_t n = h->cul.n;
	struct wf_cycle cy;

	if (h->has_cycle || n == 0)
		return;
	/* each edge is walked once: the stack is at most n + 1 deep */
	uint32_t *st = xreallocarray(NULL, n + 1, sizeof(*st));
	unsigned char *done = xcalloc(n, 1);
	if (wf_search(h, h->pub.th.thread, st, 0, done, &cy)) {
		h->cul.v[cy.closing].repeat = 1;
		h->has_cycle = 1;
		h->cycle.ntids = 0;
		for (size_t k = 0; k < cy.n; k++)
			h->cyc_tids[h->cycle.ntids++] = d->g->th[cy.ti[k]].tid;
	}
	free(done);
	free(st);
}

void
diag_recurse(struct diag *d, struct dhang *h, const struct level *lv,
    const struct diag_step *p, size_t n)
{
	struct rec r;
	size_t b;

	memset(&r, 0, sizeof(r));
	r.d = d;
	r.h = h;
	r.maxd = d->o.max_depth ? d->o.max_depth : 8;
	if (r.maxd > MAXCHAIN - 1)
		r.maxd = MAXCHAIN - 1;
	level(&r, lv, p, n, SIZE_MAX);
	/* the holder of the file lock the hang waits for or polls is a
	   culprit of depth 1, followed like the others */
	struct dculprit x;
	if (diag_lock_culprit(d, h, &x.c, &x.w)) {
		struct chain ch;
		branch_chain(&r, SIZE_MAX, &ch);
		if (!listed(h, &ch, x.c.th.thread)) {
			diag_add_culprit(h, &x.c, 1, SIZE_MAX);
			if (x.c.kind == DIAG_BLOCKED) {
				struct branch nb = { .cul = h->cul.n - 1,
				    .up = SIZE_MAX, .depth = 1,
				    .ti = x.c.th.thread, .w = x.w };
				DPUSH(r.br, nb);
			}
		}
	}
	/* breadth first: the queue is in depth order */
	for (b = 0; b < r.br.n && b < MAXFOLLOW; b++) {
		if (r.br.v[b].depth >= r.maxd)
			break;
		follow(&r, b);
	}
	if (b < r.br.n && b == MAXFOLLOW && r.br.v[b].depth < r.maxd)
		dnote(h, "the recursion stopped after %d culprits; the "
		    "blocked culprits found after them were not followed",
		    MAXFOLLOW);
	cross_cycle(d, h);
	if (h->has_cycle)
		cycle_timeout(h);
	free(r.br.v);
	free(r.dc.v);
	free(r.sub.v);
	free(r.sl);
}
