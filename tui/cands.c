/*
 * cands.c: the candidates pane: the normal nodes the diagnosis found
 * similar to the hang's spinning node, ranked as diag_similar() returns
 * them, one row each (time, duration, what differs). The picked one is
 * marked '*'; Enter confirms the selected one with diag_pick(), which
 * recomputes the slice, the diff and the culprits, and moves to it so
 * that `w` walks its wake-up path.
 */
#include <stdlib.h>
#include <string.h>

#include "tui-local.h"

static size_t
count(const struct tui *t)
{
	return tui_hang(t) ? diag_nsimilar(t->d, t->pos.hang) : 0;
}

static void
row_text(struct tui *t, size_t i, char *buf, size_t len)
{
	const struct diag_similar *s = diag_similar(t->d, t->pos.hang, i);
	char a[32], b[32];

	snprintf(buf, len, "%c%zu #%u at %s %s, %s%s", diag_picked(t->d,
	    t->pos.hang) == (long)i ? '*' : ' ', i + 1, s->node,
	    tui_fmt_time(t, s->start_ns, a, sizeof(a)), fmt_duration(b,
	    sizeof(b), s->duration_ns), s->differs && s->differs[0] ?
	    "differs: " : "same", s->differs ? s->differs : "");
	if (s->wait.type != NULL && s->wait.type[0] != '\0') {
		size_t l = strlen(buf);
		snprintf(buf + l, len - l, " (%s)", s->wait.type);
	}
}

static void
cands_draw(struct tui *t, struct pane *p)
{
	size_t n = count(t);
	char buf[256];

	tui_list_scroll(p, n);
	if (tui_hang(t) == NULL) {
		tui_pane_title(t, p, "Candidates");
		tui_put(p->win, 1, 1, "no hang");
		return;
	}
	tui_pane_title(t, p, "Candidates: %zu similar%s", n,
	    n && diag_picked_by_default(t->d, t->pos.hang) ?
	    " (default pick: Enter confirms)" : "");
	if (n == 0)
		tui_put(p->win, 1, 1, "no similar normal node found");
	for (int y = 1; y < p->h; y++) {
		size_t i = p->top + (size_t)y - 1;
		if (i >= n)
			break;
		row_text(t, i, buf, sizeof(buf));
		wattrset(p->win, i == p->sel ? A_REVERSE : A_NORMAL);
		if (diag_picked(t->d, t->pos.hang) == (long)i)
			wattron(p->win, A_BOLD);
		tui_put(p->win, y, 0, buf);
		wattrset(p->win, A_NORMAL);
	}
}

/* Confirm candidate i of the current hang. */
static int
confirm(struct tui *t, size_t i)
{
	size_t h = t->pos.hang;
	int err = diag_pick(t->d, h, i);

	if (err != 0) {
		tui_message(t, 1, "cannot pick candidate %zu: %s", i + 1,
		    graph_strerror(err));
		return R_STATUS;
	}
	tui_lanes(t);
	t->panes[P_DIFF].sel = t->panes[P_DIFF].top = 0;
	tui_goto_vertex(t, diag_similar(t->d, h, i)->node, 1);
	tui_message(t, 0, "picked candidate %zu: slice of %zu vertices, %zu "
	    "culprit(s)", i + 1, diag_npath(t->d, h), diag_nculprits(t->d, h));
	return R_ALL;
}

int
tui_pick(struct tui *t, size_t i)
{
	if (tui_hang(t) == NULL) {
		tui_message(t, 1, "no hang");
		return R_STATUS;
	}
	if (i >= count(t)) {
		tui_message(t, 1, "no candidate %zu (there are %zu)", i + 1,
		    count(t));
		return R_STATUS;
	}
	t->panes[P_CANDS].sel = i;
	return confirm(t, i);
}

static int
cands_key(struct tui *t, struct pane *p, enum action a)
{
	if (a == AC_ENTER)
		return tui_pick(t, p->sel);
	return tui_list_key(p, count(t), a, R_CANDS);
}

static int
cands_search(struct tui *t, struct pane *p, const char *text, int dir)
{
	size_t n = count(t);
	char buf[256];

	for (size_t k = 1; k <= n; k++) {
		size_t i = dir > 0 ? (p->sel + k) % n : (p->sel + n * 2 - k) %
		    n;
		row_text(t, i, buf, sizeof(buf));
		if (tui_match(buf, text)) {
			p->sel = i;
			tui_list_scroll(p, n);
			return R_CANDS;
		}
	}
	tui_message(t, 1, "not found: %s", text);
	return R_STATUS;
}

const struct pane_ops tui_cands_ops = {
	.name = "candidates",
	.draw = cands_draw,
	.key = cands_key,
	.resize = NULL,
	.search = cands_search,
};
