/*
 * node.c: the spinning node pane: the current vertex (at first the hung
 * vertex of the hang), its kind, what the diagnosis says about it, its
 * edges, its user stacks and its events.
 *
 * The pane is a list of rows produced on demand from a small header (a
 * few formatted lines kept in struct nrows), then the stacks (a label row
 * each, then one row per frame, named when drawn), then one row per
 * event of the vertex (graph_event_describe()); only the rows on screen
 * are formatted, so a vertex of a million events scrolls as fast as a
 * small one.
 *
 * The stacks are the diagnosis' for the spinning node of a hang (its
 * own, its waker's, its culprits'); for any other vertex, a bounded pick
 * of the TT_STACK events in and around it (struct nstack), found by one
 * scan of its events kept for the next draws in a one-entry cache (the
 * vertex, the model it belongs to, and the thread the user came from).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tui-local.h"

#define NHEAD 12
#define NSTK 12		/* stacks shown at most */
#define NWAKING 3	/* stacks of wake-ups made by the vertex, at most */
#define NSAMPLE 2	/* places of its samples, at most */
#define NUSER 2		/* instrumentation library's stacks (the last) */
#define NGROUP 32	/* sample places told apart in one vertex */

/* A waker's stack is taken a few µs after its wake-up: looked for this
   close to it. */
#define WAKER_NEAR_NS 2000000ULL
/* Events looked at around a wake-up, or after a vertex for the stack its
   wait left, at most. */
#define NEAR_SCAN 4096

/* One stack shown: a label row then its frames, innermost first. */
struct nstack {
	char label[240];
	uint32_t pid;			/* whose process maps the frames */
	uint64_t ts;			/* when they were taken */
	const uint64_t *frames;
	size_t nframes;
	const char *const *symbols;	/* the diagnosis' names, or NULL */
};

struct nrows {
	char head[NHEAD][200];
	size_t nhead;
	uint32_t thread, first, nevents;
	uint64_t start;
	struct nstack stk[NSTK];
	size_t nstk, nstkrows;	/* stacks, and their rows */
};

static int
is_spinning(const struct tui *t)
{
	const struct diag_hang *hg = tui_hang(t);

	return hg != NULL && hg->node != GRAPH_NONE && hg->node == t->vertex;
}

static void
wait_text(const struct diag_wait *w, char *buf, size_t len)
{
	char to[32];
	size_t l;

	snprintf(buf, len, "waits on %s %s (%s)", w->type ? w->type : "?",
	    w->resource, w->syscall && w->syscall[0] ? w->syscall : "-");
	if (w->has_result) {
		l = strlen(buf);
		snprintf(buf + l, len - l, ", result %lld",
		    (long long)w->result);
	}
	if (w->timed_out) {
		l = strlen(buf);
		snprintf(buf + l, len - l, ", timed out");
	}
	if (w->timeout_ns) {
		l = strlen(buf);
		snprintf(buf + l, len - l, ", timeout %s",
		    fmt_duration(to, sizeof(to), w->timeout_ns));
	}
}

static void
edges_text(struct tui *t, uint32_t v, int in, char *buf, size_t len)
{
	size_t n, l;
	const uint32_t *es = in ? graph_in_edges(t->g, v, &n) :
	    graph_out_edges(t->g, v, &n);
	char lab[64];

	snprintf(buf, len, "%s %zu:", in ? "in " : "out", n);
	for (size_t i = 0; i < n && i < 4; i++) {
		const struct graph_edge *e = graph_edge(t->g, es[i]);
		uint32_t o = in ? e->src : e->dst;
		l = strlen(buf);
		snprintf(buf + l, len - l, " %s %s #%u",
		    graph_edge_kind_name(e->kind), tui_thread_label(t,
		    graph_vertex(t->g, o)->thread, lab, sizeof(lab)), o);
	}
	if (n > 4) {
		l = strlen(buf);
		snprintf(buf + l, len - l, " ...");
	}
}

/* --- stacks ------------------------------------------------------------ */

/* Append the stack of TT_STACK event ev of thread th to v[*n] (when
   there is room), labelled from fmt; NULL when full or the stack is
   empty. */
static struct nstack *
push_stack(struct tui *t, struct nstack *v, size_t *n, uint32_t th,
    const struct graph_event *ev, const char *fmt, ...) PRINTFLIKE(6, 7);

static struct nstack *
push_stack(struct tui *t, struct nstack *v, size_t *n, uint32_t th,
    const struct graph_event *ev, const char *fmt, ...)
{
	struct nstack *s;
	va_list ap;

	if (*n >= NSTK || ev == NULL)
		return NULL;
	s = &v[*n];
	memset(s, 0, sizeof(*s));
	s->frames = graph_stack(t->g, ev, &s->nframes);
	if (s->nframes == 0)
		return NULL;
	s->pid = graph_thread(t->g, th)->pid;
	s->ts = ev->ts;
	va_start(ap, fmt);
	vsnprintf(s->label, sizeof(s->label), fmt, ap);
	va_end(ap);
	size_t l = strlen(s->label);
	if (s->nframes >= TRACE_STACK_MAX && l > 0 && l + 7 < sizeof(s->label))
		snprintf(s->label + l - 1, sizeof(s->label) - l + 1, " (cut):");
	(*n)++;
	return s;
}

/* The stack thread th took at its wake-up event idx (TSK_WAKER), or
   NULL. The recorder writes it just after the wake-up (its stack walk
   makes its time a few µs later), only for a wait that lasted 10 ms or
   more: looked for until another wake-up by the same thread. */
static const struct graph_event *
waker_stack_at(const struct graph *g, uint32_t th, uint32_t idx)
{
	const struct graph_thread *gt = graph_thread(g, th);
	const struct graph_event *at = graph_event(g, th, idx);

	if (gt == NULL || at == NULL)
		return NULL;
	for (uint32_t i = idx + 1; i < gt->nevents && i <= idx + NEAR_SCAN;
	    i++) {
		const struct graph_event *e = graph_event(g, th, i);

		if (e->ts > at->ts + WAKER_NEAR_NS || e->type == TT_WAKING ||
		    e->type == TT_WAKEUP_NEW)
			break;
		if (e->type == TT_STACK && e->sub == TSK_WAKER)
			return e;
	}
	return NULL;
}

/* The stack of the waker at the end of the wait of edge e (a wake-up
   edge, from the waker, or a wait edge, to it), labelled with lead. */
static void
edge_waker(struct tui *t, const struct graph_edge *e, const char *lead,
    struct nstack *v, size_t *n)
{
	uint32_t wv = e->kind == GE_WAIT ? e->dst : e->src;
	uint32_t wi = e->kind == GE_WAIT ? e->dst_ev : e->src_ev;
	const struct graph_vertex *gv = graph_vertex(t->g, wv);
	const struct graph_event *ev;
	char lab[64], a[32];

	if (gv == NULL || (ev = waker_stack_at(t->g, gv->thread, wi)) ==
	    NULL)
		return;
	push_stack(t, v, n, gv->thread, ev, "%s %s at %s:", lead,
	    tui_thread_label(t, gv->thread, lab, sizeof(lab)),
	    tui_fmt_time(t, ev->ts, a, sizeof(a)));
}

struct sgroup {
	uint64_t hash;
	unsigned count;
	const struct graph_event *last;
};

/* Its samples' place: the callers, wherever the innermost frame hit. */
static uint64_t
sample_hash(const struct graph *g, const struct graph_event *e)
{
	size_t nf;
	const uint64_t *f = graph_stack(g, e, &nf);

	if (nf == 0)
		return 0;
	return nf > 1 ? fnv64(f + 1, (nf - 1) * sizeof(*f)) :
	    fnv64(f, sizeof(*f));
}

/* Count sample e in its place among gs[*ng]. */
static void
group_sample(const struct graph *g, struct sgroup *gs, size_t *ng,
    const struct graph_event *e)
{
	uint64_t h = sample_hash(g, e);
	size_t i;

	for (i = 0; i < *ng && gs[i].hash != h; i++)
		;
	if (i == *ng) {
		if (*ng == NGROUP)
			return;
		gs[(*ng)++] = (struct sgroup){ .hash = h };
	}
	gs[i].count++;
	gs[i].last = e;
}

/* The thread a waker's stack at event idx of thread th was taken for:
   the target of the wake-up just before it (GRAPH_NONE if none). */
static uint32_t
wakee_of(const struct graph *g, uint32_t th, uint32_t idx)
{
	const struct graph_event *at = graph_event(g, th, idx);

	for (uint32_t i = idx; i-- > 0 && idx - i <= NEAR_SCAN;) {
		const struct graph_event *e = graph_event(g, th, i);

		if (at->ts - e->ts > WAKER_NEAR_NS)
			break;
		if (e->type == TT_WAKING || e->type == TT_WAKEUP_NEW)
			return (uint32_t)e->key;
	}
	return GRAPH_NONE;
}

/* Append stack e of thread th, taken waking thread index wakee, to
   v[*n]. */
static void
push_waking(struct tui *t, uint32_t th, const struct graph_event *e,
    uint32_t wakee, struct nstack *v, size_t *n)
{
	char lab[64], a[32];

	if (graph_thread(t->g, wakee) != NULL)
		push_stack(t, v, n, th, e, "waking %s at %s:", tui_thread_label(t,
		    wakee, lab, sizeof(lab)), tui_fmt_time(t, e->ts, a,
		    sizeof(a)));
	else
		push_stack(t, v, n, th, e, "waking at %s:", tui_fmt_time(t,
		    e->ts, a, sizeof(a)));
}

/* Is thread index th the thread of tid (0: none)? */
static int
is_tid(const struct graph *g, uint32_t th, uint32_t tid)
{
	const struct graph_thread *gt = graph_thread(g, th);

	return tid != 0 && gt != NULL && gt->tid == tid;
}

/*
 * The stacks of vertex vi, user having come from the thread of tid from:
 * first the stack it took waking that thread (after `w`, the wake-up
 * just followed), then in time order the waker's at the wake-up that
 * began it, those among its events (where the wait before it waited,
 * the library's, the most frequent places of its samples and of those
 * that found it in the kernel, the other wake-ups it made), where its
 * wait at the end blocked and the waker's that ended it.
 */
static size_t
vertex_stacks(struct tui *t, uint32_t vi, uint32_t from, struct nstack *v)
{
	const struct graph_vertex *gv = graph_vertex(t->g, vi);
	const struct graph_event *waking[NWAKING], *user[NUSER];
	const struct graph_event *waited = NULL, *back = NULL, *slept = NULL;
	uint32_t wakee[NWAKING], back_wakee = GRAPH_NONE;
	struct sgroup gs[NGROUP], ks[NGROUP];
	size_t n = 0, nw = 0, nu = 0, ng = 0, nk = 0, ne, nsamples = 0;
	const uint32_t *es;
	char a[32];

	for (uint32_t i = 0; i < gv->nevents; i++) {
		const struct graph_event *e = graph_event(t->g, gv->thread,
		    gv->first + i);

		if (e->type != TT_STACK)
			continue;
		if (e->sub == TSK_WAIT) {
			if (waited == NULL)
				waited = e;
		} else if (e->sub == TSK_KWAIT) {
			if (slept == NULL)
				slept = e;
		} else if (e->sub == TSK_SAMPLE) {
			nsamples++;
			group_sample(t->g, gs, &ng, e);
		} else if (e->sub == TSK_KSAMPLE) {
			group_sample(t->g, ks, &nk, e);
		} else if (e->sub == TSK_WAKER) {
			/* whom it woke: the record says it (older traces:
			   the wake-up just before it) */
			uint32_t w = graph_stack_about(e);
			if (w == GRAPH_NONE)
				w = wakee_of(t->g, gv->thread, gv->first + i);
			if (back == NULL && is_tid(t->g, w, from)) {
				back = e;
				back_wakee = w;
			} else if (nw < NWAKING) {
				wakee[nw] = w;
				waking[nw++] = e;
			}
		} else {
			/* the library's: the last ones */
			if (nu == NUSER) {
				memmove(user, user + 1, (NUSER - 1) *
				    sizeof(*user));
				nu--;
			}
			user[nu++] = e;
		}
	}
	if (back != NULL)
		push_waking(t, gv->thread, back, back_wakee, v, &n);
	/* woken by: the waker's stack at the wake-up before it */
	es = graph_in_edges(t->g, vi, &ne);
	for (size_t i = 0; i < ne; i++) {
		const struct graph_edge *e = graph_edge(t->g, es[i]);
		if (e->kind == GE_WAKEUP) {
			edge_waker(t, e, "woken by", v, &n);
			break;
		}
	}
	if (waited != NULL)
		push_stack(t, v, &n, gv->thread, waited, "where it waited, "
		    "returned at %s:", tui_fmt_time(t, waited->ts, a,
		    sizeof(a)));
	for (size_t i = 0; i < nu; i++)
		push_stack(t, v, &n, gv->thread, user[i], "user stack at %s:",
		    tui_fmt_time(t, user[i]->ts, a, sizeof(a)));
	/* the most frequent places of its samples */
	for (size_t k = 0; k < NSAMPLE && ng > 0; k++) {
		size_t best = 0;
		for (size_t i = 1; i < ng; i++)
			if (gs[i].count > gs[best].count)
				best = i;
		push_stack(t, v, &n, gv->thread, gs[best].last, "running, "
		    "sample %u/%zu here, last at %s:", gs[best].count,
		    nsamples, tui_fmt_time(t, gs[best].last->ts, a,
		    sizeof(a)));
		gs[best] = gs[--ng];
	}
	/* and where in the kernel, when samples found it there */
	if (nk > 0) {
		size_t best = 0;
		for (size_t i = 1; i < nk; i++)
			if (ks[i].count > ks[best].count)
				best = i;
		push_stack(t, v, &n, gv->thread, ks[best].last, "running in "
		    "the kernel, sample %u/%zu here, last at %s:",
		    ks[best].count, nsamples, tui_fmt_time(t,
		    ks[best].last->ts, a, sizeof(a)));
	}
	for (size_t i = 0; i < nw; i++)
		push_waking(t, gv->thread, waking[i], wakee[i], v, &n);
	if (slept != NULL)
		push_stack(t, v, &n, gv->thread, slept, "where it slept in the "
		    "kernel, woken at %s:", tui_fmt_time(t, slept->ts, a,
		    sizeof(a)));
	/* its wait at the end: where it blocked, and who ended it */
	if (gv->flags & GRAPH_VF_WAIT) {
		const struct graph_event *e = graph_wait_stack(t->g,
		    gv->thread, gv->first + gv->nevents);
		if (e != NULL)
			push_stack(t, v, &n, gv->thread, e, "where its wait "
			    "at the end blocked, returned at %s:",
			    tui_fmt_time(t, e->ts, a, sizeof(a)));
		es = graph_out_edges(t->g, vi, &ne);
		for (size_t i = 0; i < ne; i++) {
			const struct graph_edge *x = graph_edge(t->g, es[i]);
			if (x->kind == GE_WAIT) {
				edge_waker(t, x, "its wait ended by", v, &n);
				break;
			}
		}
	}
	return n;
}

/* The last vertex's stacks (one scan of its events per visit). */
static struct {
	const struct graph *g;
	unsigned gen;
	uint32_t vertex, from;
	struct nstack stk[NSTK];
	size_t n;
} cache;

static size_t
vertex_stacks_cached(struct tui *t, struct nstack *v)
{
	/* the thread the user came from, for a step back along a chain */
	uint32_t from = t->hcur > 0 && t->hcur < t->nhist ?
	    t->hist[t->hcur - 1].tid : 0;

	if (cache.g != t->g || cache.gen != t->gen ||
	    cache.vertex != t->vertex || cache.from != from) {
		cache.g = t->g;
		cache.gen = t->gen;
		cache.vertex = t->vertex;
		cache.from = from;
		cache.n = vertex_stacks(t, t->vertex, from, cache.stk);
	}
	memcpy(v, cache.stk, cache.n * sizeof(*v));
	return cache.n;
}

/* What a stack of the diagnosis is, in the story of its hang. */
static void
diag_stack_label(struct tui *t, const struct diag_stack *s, char *buf,
    size_t len)
{
	char who[96], what[64], lab[64], a[32];

	tui_thread_label(t, s->th.thread, lab, sizeof(lab));
	switch (s->role) {
	case DIAG_STACK_HANG:
		snprintf(who, sizeof(who), "hang");
		break;
	case DIAG_STACK_WAKER:
		snprintf(who, sizeof(who), "its waker %s", lab);
		break;
	case DIAG_STACK_CULPRIT:
		snprintf(who, sizeof(who), "culprit %zu %s", s->culprit + 1,
		    lab);
		break;
	default:
		snprintf(who, sizeof(who), "culprit %zu's waker %s",
		    s->culprit + 1, lab);
		break;
	}
	if (s->kind == TSK_WAIT)
		snprintf(what, sizeof(what), "where it waited");
	else if (s->kind == TSK_WAKER)
		snprintf(what, sizeof(what), "waking");
	else if (s->kind == TSK_SAMPLE && s->of > 0)
		snprintf(what, sizeof(what), "running, sample %u/%u",
		    s->samples, s->of);
	else if (s->kind == TSK_SAMPLE)
		snprintf(what, sizeof(what), "running, sample");
	else if (s->kind == TSK_KWAIT)
		snprintf(what, sizeof(what), "where it slept in the kernel");
	else if (s->kind == TSK_KSAMPLE)
		snprintf(what, sizeof(what), "running in the kernel, sample "
		    "%u/%u", s->samples, s->of);
	else
		snprintf(what, sizeof(what), "user stack");
	snprintf(buf, len, "%s, %s at %s%s:", who, what, tui_fmt_time(t,
	    s->ts, a, sizeof(a)), s->cut ? " (cut)" : "");
}

/* Frame i of stack s as text. */
static void
frame_text(struct tui *t, const struct nstack *s, size_t i, char *buf,
    size_t len)
{
	if (s->symbols != NULL && s->symbols[i] != NULL)
		snprintf(buf, len, "%s", s->symbols[i]);
	else if (t->d != NULL)
		diag_frame_text(t->d, s->pid, s->ts, s->frames[i], buf,
		    len);
	else
		snprintf(buf, len, "0x%llx", (unsigned long long)s->frames[i]);
}

static void
rows(struct tui *t, struct nrows *r)
{
	const struct graph_vertex *gv = graph_vertex(t->g, t->vertex);
	const struct diag_hang *hg = tui_hang(t);
	char a[32], b[32], lab[64];

	memset(r, 0, sizeof(*r));
	if (gv == NULL) {
		snprintf(r->head[r->nhead++], 200, "no vertex at the cursor "
		    "on this thread");
		return;
	}
	const struct graph_thread *gt = graph_thread(t->g, gv->thread);
	uint64_t s = graph_vertex_start(t->g, t->vertex);
	uint64_t e = graph_vertex_end(t->g, t->vertex);
	r->thread = gv->thread;
	r->first = gv->first;
	r->nevents = gv->nevents;
	r->start = s;
	snprintf(r->head[r->nhead++], 200, "#%u %s vertex of %s (%s)%s%s",
	    t->vertex, graph_vertex_kind_name(gv->kind), tui_thread_label(t,
	    gv->thread, lab, sizeof(lab)), gt->process,
	    gv->flags & GRAPH_VF_INPUT ? " input" : "",
	    gv->flags & GRAPH_VF_WAIT ? " wait" : "");
	snprintf(r->head[r->nhead++], 200, "at %s for %s, %u events",
	    tui_fmt_time(t, s, a, sizeof(a)), fmt_duration(b, sizeof(b),
	    e - s), gv->nevents);
	if (is_spinning(t)) {
		snprintf(r->head[r->nhead++], 200, "HANG %s (%s), %s%s, on "
		    "CPU %s", diag_kind_name(hg->kind),
		    diag_source_name(hg->source), fmt_duration(a, sizeof(a),
		    hg->end_ns - hg->start_ns), hg->ended ? "" :
		    " (not ended)", fmt_duration(b, sizeof(b), hg->cpu_ns));
		if (hg->kind == DIAG_BLOCKED)
			wait_text(&hg->wait, r->head[r->nhead++], 200);
		else if (hg->kind == DIAG_YIELD && hg->slices)
			snprintf(r->head[r->nhead++], 200, "waiting on %s in "
			    "timed slices, %u ended by their timeout",
			    hg->wait.resource, hg->yields);
		else if (hg->kind == DIAG_YIELD && diag_yield_polls(hg))
			snprintf(r->head[r->nhead++], 200, "retrying %s on %s, "
			    "%u attempts refused", hg->wait.syscall,
			    hg->wait.resource, hg->yields);
		else if (hg->kind == DIAG_YIELD)
			snprintf(r->head[r->nhead++], 200, "%u yields or "
			    "short sleeps", hg->yields);
		if (hg->lost > 0)
			snprintf(r->head[r->nhead++], 200, "warning: the "
			    "recorder lost %llu events during this hang",
			    (unsigned long long)hg->lost);
		if (diag_watch_hint(t->d, t->pos.hang) != NULL)
			snprintf(r->head[r->nhead++], 200, "hint: %s",
			    diag_watch_hint(t->d, t->pos.hang));
		size_t ns = diag_nstacks(t->d, t->pos.hang);
		/* the user stacks first, then the kernel's (where each
		   slept, or ran): two passes */
		for (size_t k = 0; k < 2 * ns && r->nstk < NSTK; k++) {
			size_t i = k % ns;
			const struct diag_stack *ds = diag_stack(t->d,
			    t->pos.hang, i);
			struct nstack *st = &r->stk[r->nstk];
			if (ds->nframes == 0 || (ds->kind == TSK_KWAIT ||
			    ds->kind == TSK_KSAMPLE) != (k >= ns))
				continue;
			diag_stack_label(t, ds, st->label, sizeof(st->label));
			st->pid = ds->th.pid;
			st->ts = ds->ts;
			st->frames = ds->frames;
			st->nframes = ds->nframes;
			st->symbols = ds->symbols;
			r->nstk++;
		}
	} else {
		r->nstk = vertex_stacks_cached(t, r->stk);
	}
	edges_text(t, t->vertex, 1, r->head[r->nhead++], 200);
	edges_text(t, t->vertex, 0, r->head[r->nhead++], 200);
	for (size_t i = 0; i < r->nstk; i++)
		r->nstkrows += 1 + r->stk[i].nframes;
}

/* Rows before the first event's: the header, the stacks, "events:"
   (when there is a vertex). */
static size_t
ev_row0(const struct nrows *r)
{
	return r->nhead + r->nstkrows + (r->nevents > 0);
}

static size_t
nrows_total(const struct nrows *r)
{
	return ev_row0(r) + r->nevents;
}

/* Row i as text into buf; 1 for a stack's label row, else 0. */
static int
row_text(struct tui *t, const struct nrows *r, size_t i, char *buf,
    size_t len)
{
	char d[160];

	if (i < r->nhead) {
		snprintf(buf, len, "%s", r->head[i]);
		return 0;
	}
	i -= r->nhead;
	for (size_t k = 0; k < r->nstk; k++) {
		const struct nstack *s = &r->stk[k];
		if (i == 0) {
			snprintf(buf, len, "%s", s->label);
			return 1;
		}
		if (i <= s->nframes) {
			frame_text(t, s, i - 1, d, sizeof(d));
			snprintf(buf, len, "  #%zu %s", i - 1, d);
			return 0;
		}
		i -= 1 + s->nframes;
	}
	if (i == 0) {
		snprintf(buf, len, "events:");
		return 0;
	}
	i--;
	const struct graph_event *ev = graph_event(t->g, r->thread,
	    r->first + (uint32_t)i);
	graph_event_describe(t->g, ev, d, sizeof(d));
	snprintf(buf, len, "  +%-10.6f %s", (double)(ev->ts - r->start) / 1e9,
	    d);
	return 0;
}

static void
node_draw(struct tui *t, struct pane *p)
{
	struct nrows r;
	char buf[256];

	rows(t, &r);
	size_t n = nrows_total(&r);
	tui_list_scroll(p, n);
	tui_pane_title(t, p, "%s  (%zu rows)", is_spinning(t) ?
	    "Spinning node" : "Vertex (x: spinning node)", n);
	for (int y = 1; y < p->h; y++) {
		size_t i = p->top + (size_t)y - 1;
		if (i >= n)
			break;
		int label = row_text(t, &r, i, buf, sizeof(buf));
		if (i == p->sel && p == &t->panes[t->focus])
			wattrset(p->win, A_REVERSE);
		else if (i == 2 && is_spinning(t))
			wattrset(p->win, A_BOLD | (t->colour ?
			    COLOR_PAIR(C_CULPRIT) : 0));
		else if (label)
			wattrset(p->win, A_BOLD);
		tui_put(p->win, y, 0, buf);
		wattrset(p->win, A_NORMAL);
	}
}

static int
node_key(struct tui *t, struct pane *p, enum action a)
{
	struct nrows r;

	rows(t, &r);
	if (a == AC_ENTER && p->sel >= ev_row0(&r) &&
	    p->sel < nrows_total(&r)) {
		/* the cursor to the event's time */
		const struct graph_event *ev = graph_event(t->g, r.thread,
		    r.first + (uint32_t)(p->sel - ev_row0(&r)));
		t->pos.cursor = ev->ts;
		return R_ALL;
	}
	return tui_list_key(p, nrows_total(&r), a, R_NODE);
}

static void
node_resize(struct tui *t, struct pane *p)
{
	(void)t;
	p->top = 0;
}

static int
node_search(struct tui *t, struct pane *p, const char *text, int dir)
{
	struct nrows r;
	char buf[256];

	rows(t, &r);
	size_t n = nrows_total(&r);
	for (size_t k = 1; k <= n; k++) {
		size_t i = dir > 0 ? (p->sel + k) % n : (p->sel + n * 2 - k) %
		    n;
		row_text(t, &r, i, buf, sizeof(buf));
		if (tui_match(buf, text)) {
			p->sel = i;
			tui_list_scroll(p, n);
			return R_NODE;
		}
	}
	tui_message(t, 1, "not found: %s", text);
	return R_STATUS;
}

const struct pane_ops tui_node_ops = {
	.name = "node",
	.draw = node_draw,
	.key = node_key,
	.resize = node_resize,
	.search = node_search,
};
