/*
 * node.c: the spinning node pane: the current vertex (at first the hung
 * vertex of the hang), its kind, what the diagnosis says about it, its
 * edges, its events and the user stack.
 *
 * The pane is a list of rows produced on demand from a small header (a
 * few formatted lines kept in struct nrows), then one row per event of
 * the vertex (graph_event_describe()), then one row per stack frame; only
 * the rows on screen are formatted, so a vertex of a million events
 * scrolls as fast as a small one.
 */
#include <stdlib.h>
#include <string.h>

#include "tui-local.h"

#define NHEAD 12

struct nrows {
	char head[NHEAD][200];
	size_t nhead;
	uint32_t thread, first, nevents;
	uint64_t start;
	/* stack: symbolized (from the diagnosis) or raw frames */
	const struct diag_stack *st;
	const uint64_t *frames;
	size_t nframes;
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
		if (diag_nstacks(t->d, t->pos.hang) > 0)
			r->st = diag_stack(t->d, t->pos.hang, 0);
	}
	edges_text(t, t->vertex, 1, r->head[r->nhead++], 200);
	edges_text(t, t->vertex, 0, r->head[r->nhead++], 200);
	snprintf(r->head[r->nhead++], 200, "events:");
	if (r->st == NULL) {
		/* the last stack recorded in the vertex, unsymbolized */
		for (uint32_t i = gv->nevents; i-- > 0;) {
			const struct graph_event *ev = graph_event(t->g,
			    gv->thread, gv->first + i);
			if (ev->type == TT_STACK) {
				r->frames = graph_stack(t->g, ev, &r->nframes);
				break;
			}
			if (gv->nevents - i > 4096)
				break;
		}
	} else {
		r->nframes = r->st->nframes;
		r->frames = r->st->frames;
	}
}

static size_t
nrows_total(const struct nrows *r)
{
	return r->nhead + r->nevents + (r->nframes ? r->nframes + 1 : 0);
}

static void
row_text(struct tui *t, const struct nrows *r, size_t i, char *buf,
    size_t len)
{
	char d[160];

	if (i < r->nhead) {
		snprintf(buf, len, "%s", r->head[i]);
		return;
	}
	i -= r->nhead;
	if (i < r->nevents) {
		const struct graph_event *ev = graph_event(t->g, r->thread,
		    r->first + (uint32_t)i);
		graph_event_describe(t->g, ev, d, sizeof(d));
		snprintf(buf, len, "  +%-10.6f %s", (double)(ev->ts -
		    r->start) / 1e9, d);
		return;
	}
	i -= r->nevents;
	if (i == 0) {
		snprintf(buf, len, "user stack%s:", r->st ? "" :
		    " (unsymbolized)");
		return;
	}
	i--;
	if (r->st != NULL && r->st->symbols != NULL &&
	    r->st->symbols[i] != NULL)
		snprintf(buf, len, "  #%zu %s", i, r->st->symbols[i]);
	else
		snprintf(buf, len, "  #%zu 0x%llx", i,
		    (unsigned long long)r->frames[i]);
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
		row_text(t, &r, i, buf, sizeof(buf));
		if (i == p->sel && p == &t->panes[t->focus])
			wattrset(p->win, A_REVERSE);
		else if (i == 2 && is_spinning(t))
			wattrset(p->win, A_BOLD | (t->colour ?
			    COLOR_PAIR(C_CULPRIT) : 0));
		tui_put(p->win, y, 0, buf);
		wattrset(p->win, A_NORMAL);
	}
}

static int
node_key(struct tui *t, struct pane *p, enum action a)
{
	struct nrows r;

	rows(t, &r);
	if (a == AC_ENTER && p->sel >= r.nhead &&
	    p->sel < r.nhead + r.nevents) {
		/* the cursor to the event's time */
		const struct graph_event *ev = graph_event(t->g, r.thread,
		    r.first + (uint32_t)(p->sel - r.nhead));
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
