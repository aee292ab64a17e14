/*
 * diff.c: the slice diff pane. In diff mode (mode 0) it puts the normal
 * wake-up path of the picked candidate and the hang side by side, one row
 * per step of the backward slice (diag_path()): the thread, the normal
 * vertex and, on the hang side, the culprit the diagnosis found on that
 * thread (marked '*') or the thread's state when the hang began; then the
 * culprits as a tree (each indented under the one it explains), the
 * cycle, attributed wake-ups, dead ends and notes.
 * In slice mode (mode 1) it lists the slice and the hang's own wake-up
 * chain step by step.
 *
 * Rows are rebuilt on each use into an array of struct drow (the text,
 * the vertex Enter goes to, the culprit `r` recurses into); their number
 * is small (a path, a few culprits).
 */
#include <stdlib.h>
#include <string.h>

#include "tui-local.h"

struct drow {
	char text[240];
	uint32_t node;		/* GRAPH_NONE: none */
	size_t culprit;		/* SIZE_MAX: none */
	int mark;		/* 1 culprit, 2 heading */
};

struct drows {
	struct drow *r;
	size_t n;
};

static struct drow *
add(struct drows *d, uint32_t node, size_t culprit, int mark,
    const char *fmt, ...) PRINTFLIKE(5, 6);

static struct drow *
add(struct drows *d, uint32_t node, size_t culprit, int mark,
    const char *fmt, ...)
{
	va_list ap;

	d->r = xreallocarray(d->r, d->n + 1, sizeof(*d->r));
	struct drow *r = &d->r[d->n++];
	va_start(ap, fmt);
	vsnprintf(r->text, sizeof(r->text), fmt, ap);
	va_end(ap);
	r->node = node;
	r->culprit = culprit;
	r->mark = mark;
	return r;
}

static void
culprit_text(struct tui *t, const struct diag_culprit *c, char *buf,
    size_t len)
{
	char d[32];

	snprintf(buf, len, "%s%s%s %s", diag_kind_name(c->kind),
	    c->kind == DIAG_BLOCKED ? " " : "", c->kind == DIAG_BLOCKED &&
	    c->wait.type ? c->wait.type : "", fmt_duration(d, sizeof(d),
	    c->end_ns - c->start_ns));
	if (c->kind == DIAG_BUSY && c->serving.tid != 0 && c->serving.comm) {
		size_t l = strlen(buf);
		snprintf(buf + l, len - l, " serving %s", c->serving.comm);
	}
	(void)t;
}

/* Rows of the culprits explaining culprit parent (SIZE_MAX: the hang),
   each followed by those explaining it: the tree of the text report,
   depth first, indented two spaces per level beyond the first. A row
   keeps its culprit's index, for Enter and `r`. Culprits come after the
   one they explain (the recursion is breadth first). */
static void
culprit_rows(struct tui *t, struct drows *d, size_t parent)
{
	size_t h = t->pos.hang, n = diag_nculprits(t->d, h);
	char lab[64], cu[96];

	for (size_t k = parent == SIZE_MAX ? 0 : parent + 1; k < n; k++) {
		const struct diag_culprit *c = diag_culprit(t->d, h, k);
		unsigned ind = c->depth > 1 ? c->depth - 1 : 0;
		if (c->parent != parent)
			continue;
		culprit_text(t, c, cu, sizeof(cu));
		add(d, c->node, k, 1, "  %*s*C%u %s %s%s",
		    (int)(ind < 16 ? 2 * ind : 32), "", c->depth,
		    tui_thread_label(t, c->th.thread, lab, sizeof(lab)), cu,
		    c->repeat ? " (repeat: cycle)" : "");
		culprit_rows(t, d, k);
	}
}

static void
build_diff(struct tui *t, struct drows *d)
{
	size_t h = t->pos.hang, np = diag_npath(t->d, h);
	const struct diag_hang *hg = diag_hang(t->d, h);
	long pk = diag_picked(t->d, h);
	char a[32], b[32], lab[64], cu[96];

	if (pk >= 0)
		add(d, diag_similar(t->d, h, (size_t)pk)->node, SIZE_MAX, 2,
		    "normal: candidate %ld at %s | hang at %s", pk + 1,
		    tui_fmt_time(t, diag_similar(t->d, h, (size_t)pk)->start_ns,
		    a, sizeof(a)), tui_fmt_time(t, hg->start_ns, b, sizeof(b)));
	else
		add(d, GRAPH_NONE, SIZE_MAX, 2, "no normal node picked: the "
		    "path below is the hang's own");
	/* column widths: narrower panes drop the step times */
	int wide = t->panes[P_DIFF].w >= 70 || t->zoomed;
	int tw = wide ? 16 : 12, nw = wide ? 18 : 8;
	add(d, GRAPH_NONE, SIZE_MAX, 2, "%-*s %-*s| %s", tw, "thread", nw,
	    wide ? "normal path" : "normal", "hang");
	uint64_t base = np ? diag_path(t->d, h, 0)->ts : 0;
	for (size_t i = 0; i < np; i++) {
		const struct diag_step *s = diag_path(t->d, h, i);
		size_t ci = SIZE_MAX;
		for (size_t k = 0; k < diag_nculprits(t->d, h); k++)
			if (diag_culprit(t->d, h, k)->th.thread == s->th.thread) {
				ci = k;
				break;
			}
		char nrm[48];
		/* narrow: the name alone, rather than a cut tid */
		const char *tl = wide ? tui_thread_label(t, s->th.thread, lab,
		    sizeof(lab)) : s->th.comm ? s->th.comm : "?";
		/* time of the step relative to the normal node */
		if (i == 0 || !wide)
			snprintf(nrm, sizeof(nrm), "#%u", s->node);
		else
			snprintf(nrm, sizeof(nrm), "#%u %c%s", s->node,
			    s->ts < base ? '-' : '+', fmt_duration(a,
			    sizeof(a), s->ts < base ? base - s->ts :
			    s->ts - base));
		if (ci != SIZE_MAX) {
			const struct diag_culprit *c = diag_culprit(t->d, h, ci);
			culprit_text(t, c, cu, sizeof(cu));
			add(d, s->node, ci, 1, "%-*.*s %-*.*s| *C%u %s", tw,
			    tw, tl, nw, nw, nrm, c->depth, cu);
		} else {
			unsigned st = view_state_at(t->vw, s->th.thread,
			    hg->start_ns);
			add(d, s->node, SIZE_MAX, 0, "%-*.*s %-*.*s| %s%s",
			    tw, tw, tl, nw, nw, nrm, view_state_name(st),
			    s->input ? " (input)" : "");
		}
	}
	add(d, GRAPH_NONE, SIZE_MAX, 2, "culprits (r recurses):");
	if (diag_nculprits(t->d, h) == 0)
		add(d, GRAPH_NONE, SIZE_MAX, 0, "  none found");
	culprit_rows(t, d, SIZE_MAX);
	const struct diag_cycle *cy = diag_cycle(t->d, h);
	if (cy != NULL) {
		struct drow *r = add(d, GRAPH_NONE, SIZE_MAX, 1, "cycle:");
		for (size_t i = 0; i < cy->ntids; i++) {
			uint32_t th = graph_thread_find(t->g, cy->tids[i]);
			size_t l = strlen(r->text);
			snprintf(r->text + l, sizeof(r->text) - l, "%s%s",
			    i ? " -> " : " ", tui_thread_label(t, th, lab,
			    sizeof(lab)));
		}
		if (cy->timeout_ns) {
			size_t l = strlen(r->text);
			snprintf(r->text + l, sizeof(r->text) - l, ", broken "
			    "by a %s timeout in %u", fmt_duration(a, sizeof(a),
			    cy->timeout_ns), cy->timeout_tid);
		}
	}
	for (size_t k = 0; k < diag_nwakeups(t->d, h); k++) {
		const struct diag_wakeup *w = diag_wakeup(t->d, h, k);
		add(d, GRAPH_NONE, SIZE_MAX, 0, "wake-up of %s via %s caused "
		    "by %s", w->woken.comm ? w->woken.comm : "?",
		    graph_edge_kind_name((unsigned)w->via),
		    w->cause.comm ? w->cause.comm : "?");
	}
	if (diag_cause_node(t->d, h) != GRAPH_NONE)
		add(d, diag_cause_node(t->d, h), SIZE_MAX, 1, "cause: input "
		    "#%u from %s", diag_cause_node(t->d, h),
		    diag_cause_thread(t->d, h)->tid ?
		    diag_cause_thread(t->d, h)->comm : "?");
	for (size_t k = 0; k < diag_ndead_ends(t->d, h); k++)
		add(d, GRAPH_NONE, SIZE_MAX, 0, "dead end: %s",
		    diag_dead_end(t->d, h, k));
	for (size_t k = 0; k < diag_nnotes(t->d, h); k++)
		add(d, GRAPH_NONE, SIZE_MAX, 0, "note: %s",
		    diag_note(t->d, h, k));
}

static void
steps(struct tui *t, struct drows *d, size_t n,
    const struct diag_step *(*get)(const struct diag *, size_t, size_t))
{
	char a[32], lab[64];

	for (size_t i = 0; i < n; i++) {
		const struct diag_step *s = get(t->d, t->pos.hang, i);
		add(d, s->node, SIZE_MAX, 0, "%2zu %-16.16s #%-8u %s%s%s%s", i,
		    tui_thread_label(t, s->th.thread, lab, sizeof(lab)),
		    s->node, tui_fmt_time(t, s->ts, a, sizeof(a)),
		    s->edge >= 0 ? " via " : "", s->edge >= 0 ?
		    graph_edge_kind_name((unsigned)s->edge) : "",
		    s->input ? " [input]" : "");
	}
}

static void
build(struct tui *t, struct pane *p, struct drows *d)
{
	memset(d, 0, sizeof(*d));
	if (tui_hang(t) == NULL)
		return;
	if (p->mode == 0) {
		build_diff(t, d);
		return;
	}
	add(d, GRAPH_NONE, SIZE_MAX, 2, "backward slice of the normal node:");
	steps(t, d, diag_npath(t->d, t->pos.hang), diag_path);
	add(d, GRAPH_NONE, SIZE_MAX, 2, "the hang's own wake-up chain:");
	steps(t, d, diag_ncritical(t->d, t->pos.hang), diag_critical);
}

static void
diff_draw(struct tui *t, struct pane *p)
{
	struct drows d;

	build(t, p, &d);
	tui_list_scroll(p, d.n);
	tui_pane_title(t, p, "%s  (s: %s)", p->mode ? "Slice" : "Slice diff",
	    p->mode ? "diff" : "slice");
	if (d.n == 0 && t->d != NULL && diag_nhangs(t->d) == 0 &&
	    diag_why_none(t->d) != NULL) {
		/* why none: the waits looked at, the slices a name would
		   make a hang */
		tui_put(p->win, 1, 1, "no hang found:");
		tui_put_wrapped(p->win, 2, 1, diag_why_none(t->d));
	} else if (d.n == 0) {
		tui_put(p->win, 1, 1, "no hang");
	}
	for (int y = 1; y < p->h; y++) {
		size_t i = p->top + (size_t)y - 1;
		if (i >= d.n)
			break;
		attr_t at = d.r[i].mark == 1 ? A_BOLD | (t->colour ?
		    COLOR_PAIR(C_CULPRIT) : 0) : d.r[i].mark == 2 ? A_UNDERLINE :
		    A_NORMAL;
		if (i == p->sel && p == &t->panes[t->focus])
			at |= A_REVERSE;
		wattrset(p->win, at);
		tui_put(p->win, y, 0, d.r[i].text);
		wattrset(p->win, A_NORMAL);
	}
	free(d.r);
}

int
tui_recurse(struct tui *t, size_t c)
{
	size_t h;

	if (tui_hang(t) == NULL || c >= diag_nculprits(t->d, t->pos.hang)) {
		tui_message(t, 1, "no culprit selected");
		return R_STATUS;
	}
	uint32_t node = diag_culprit(t->d, t->pos.hang, c)->node;
	if (diag_add_node(t->d, node, &h) != 0) {
		tui_message(t, 1, "cannot diagnose vertex #%u", node);
		return R_STATUS;
	}
	return tui_open_hang(t, h, 1);
}

static int
diff_key(struct tui *t, struct pane *p, enum action a)
{
	struct drows d;
	int r = 0;

	build(t, p, &d);
	if (a == AC_TOGGLE_SLICE) {
		p->mode = !p->mode;
		p->sel = p->top = 0;
		r = R_DIFF;
	} else if (a == AC_ENTER && p->sel < d.n) {
		if (d.r[p->sel].node != GRAPH_NONE)
			r = tui_goto_vertex(t, d.r[p->sel].node, 1);
	} else if (a == AC_RECURSE) {
		size_t c = p->sel < d.n ? d.r[p->sel].culprit : SIZE_MAX;
		if (c == SIZE_MAX)
			c = 0;	/* the first culprit by default */
		r = tui_recurse(t, c);
	} else {
		r = tui_list_key(p, d.n, a, R_DIFF);
	}
	free(d.r);
	return r;
}

static int
diff_search(struct tui *t, struct pane *p, const char *text, int dir)
{
	struct drows d;
	int r = R_STATUS;

	build(t, p, &d);
	for (size_t k = 1; k <= d.n; k++) {
		size_t i = dir > 0 ? (p->sel + k) % d.n :
		    (p->sel + d.n * 2 - k) % d.n;
		if (tui_match(d.r[i].text, text)) {
			p->sel = i;
			tui_list_scroll(p, d.n);
			r = R_DIFF;
			break;
		}
	}
	if (r == R_STATUS)
		tui_message(t, 1, "not found: %s", text);
	free(d.r);
	return r;
}

const struct pane_ops tui_diff_ops = {
	.name = "slice diff",
	.draw = diff_draw,
	.key = diff_key,
	.resize = NULL,
	.search = diff_search,
};
