/*
 * timeline.c: the timeline pane: a time ruler, then one lane per thread
 * (t->lanes, pinned lanes first) with time on the horizontal axis.
 *
 * Each lane is a row of cells summarised by view_lane() (engine/view.c),
 * so a redraw costs lanes x columns whatever the zoom: a cell shows the
 * state that held most of its time, '|' where exactly one vertex starts,
 * and '!' over the hang intervals the diagnosis found on that thread.
 * Over the part of the current hang where a thread is a step of its
 * critical path (cpath.c), its cells show '#' where it ran and '~' where
 * it was blocked, in the path's colour. Idle kernel threads and the
 * recorder are folded away (fold.c) unless `f` shows them; the lanes are
 * folded again when the window moves.
 * The cursor is a column (reverse video) at t->pos.cursor; the current
 * vertex is underlined on the current lane. This pane also handles the
 * navigation actions that make sense from any pane (zoom, chain steps,
 * history), which tui.c forwards when the focused pane ignores them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tui-local.h"

static const char state_ch[VS_NSTATES] = { ' ', '=', '-', '.', '!' };

/* Summaries of the lanes drawn last, reused while the window, the width
   and the model stay the same (moving the cursor, changing lanes). */
struct lane_cache {
	unsigned gen;		/* t->gen: the model it was made from */
	uint64_t t0, t1;
	unsigned nc;
	uint32_t thread;
	struct view_cell *cells;
};
#define LANE_CACHE 256
static struct lane_cache cache[LANE_CACHE];

static void
cached_lane(struct tui *t, uint32_t th, unsigned nc, struct view_cell *out)
{
	struct lane_cache *c = &cache[th % LANE_CACHE];

	if (c->cells == NULL || c->gen != t->gen || c->t0 != t->pos.t0 ||
	    c->t1 != t->pos.t1 || c->nc != nc || c->thread != th) {
		if (c->nc != nc || c->cells == NULL) {
			free(c->cells);
			c->cells = xcalloc(nc, sizeof(*c->cells));
		}
		view_lane(t->vw, th, t->pos.t0, t->pos.t1, nc, c->cells);
		c->gen = t->gen;
		c->t0 = t->pos.t0;
		c->t1 = t->pos.t1;
		c->nc = nc;
		c->thread = th;
	}
	memcpy(out, c->cells, nc * sizeof(*out));
}

static int
name_width(const struct pane *p)
{
	int nw = p->w / 4;

	return nw > 22 ? 22 : nw < 8 ? 8 : nw;
}

static unsigned
ncols(const struct pane *p)
{
	int n = p->w - name_width(p) - 1;

	return n > 1 ? (unsigned)n : 1;
}

static size_t
lane_index(const struct tui *t)
{
	for (size_t i = 0; i < t->nlanes; i++)
		if (t->lanes[i] == t->thread)
			return i;
	return SIZE_MAX;
}

/* Ruler: ticks at a 1-2-5 step, labels relative to the trace start. */
static void
ruler(struct tui *t, struct pane *p, int y)
{
	int x0 = name_width(p) + 1;
	unsigned nc = ncols(p);
	uint64_t span = t->pos.t1 - t->pos.t0;
	double want = (double)span * 12.0 / nc, step = 1;
	int dec;

	while (step < want) {
		if (step * 2 >= want) { step *= 2; break; }
		if (step * 5 >= want) { step *= 5; break; }
		step *= 10;
	}
	dec = 9 - (int)floor(log10(step));
	if (dec < 0)
		dec = 0;
	if (dec > 9)
		dec = 9;
	/* a step past 2^63 ns (a span of centuries) draws no ticks */
	uint64_t st = step < 9.2e18 ? (uint64_t)step : 0;
	uint64_t rel0 = t->pos.t0 - t->first_ts;
	uint64_t k = st ? (rel0 + st - 1) / st : 0;
	mvwhline(p->win, y, x0, '-', (int)nc);
	for (unsigned n = 0; st != 0 && n <= nc; k++, n++) {
		uint64_t ts = t->first_ts + k * st;
		if (ts >= t->pos.t1)
			break;
		int c = (int)((ts - t->pos.t0) * nc / span);
		char lab[32];
		snprintf(lab, sizeof(lab), "%.*fs", dec, (double)(k * st) / 1e9);
		mvwaddch(p->win, y, x0 + c, '+');
		if (c + 1 + (int)strlen(lab) < (int)nc)
			tui_put(p->win, y, x0 + c + 1, lab);
	}
	/* the edges of the loaded window: nothing is loaded past them */
	if (t->win_from > t->first_ts && t->win_from >= t->pos.t0 &&
	    t->win_from < t->pos.t1)
		mvwaddch(p->win, y, x0 + (int)((t->win_from - t->pos.t0) *
		    nc / span), '[' | A_BOLD);
	if (t->win_to < t->last_ts && t->win_to >= t->pos.t0 &&
	    t->win_to < t->pos.t1)
		mvwaddch(p->win, y, x0 + (int)((t->win_to - t->pos.t0) *
		    nc / span), ']' | A_BOLD);
	/* the cursor's column */
	if (t->pos.cursor >= t->pos.t0 && t->pos.cursor < t->pos.t1) {
		int c = (int)((t->pos.cursor - t->pos.t0) * nc / span);
		mvwaddch(p->win, y, x0 + c, (mvwinch(p->win, y, x0 + c) &
		    A_CHARTEXT) | A_REVERSE);
	}
	char u[32], d[16];
	snprintf(u, sizeof(u), "%s/col", fmt_duration(d, sizeof(d), span / nc));
	wattrset(p->win, A_DIM);
	tui_put(p->win, y, 0, u);
	wattrset(p->win, A_NORMAL);
}

/* Tag of a lane: H hang thread, C culprit (of the diagnosis or named by
   the critical path), P on the critical path, S on the slice, ' '
   else. */
static char
lane_tag(const struct tui *t, uint32_t th)
{
	const struct diag_hang *hg = tui_hang(t);
	size_t h = t->pos.hang;

	if (hg == NULL)
		return ' ';
	if (hg->th.thread == th)
		return 'H';
	for (size_t i = 0; i < diag_nculprits(t->d, h); i++)
		if (diag_culprit(t->d, h, i)->th.thread == th)
			return 'C';
	const struct diag_cstep *cs = tui_cpath_step(t, th);
	if (cs != NULL)
		return cs->culprit ? 'C' : 'P';
	for (size_t i = 0; i < diag_npath(t->d, h); i++)
		if (diag_path(t->d, h, i)->th.thread == th)
			return 'S';
	return ' ';
}

static attr_t
state_attr(const struct tui *t, unsigned s)
{
	if (!t->colour)
		return s == VS_HANG ? A_BOLD : 0;
	switch (s) {
	case VS_RUNNING: return COLOR_PAIR(C_RUN);
	case VS_RUNNABLE: return COLOR_PAIR(C_RUNNABLE);
	case VS_BLOCKED: return COLOR_PAIR(C_BLOCKED);
	case VS_HANG: return COLOR_PAIR(C_HANG) | A_BOLD;
	default: return 0;
	}
}

/* Mark the columns of [a, b) in mark[]: 1 blocked on the critical path,
   2 running on it. */
static void
path_mark(const struct tui *t, unsigned nc, uint64_t a, uint64_t b,
    int running, unsigned char *mark)
{
	uint64_t t0 = t->pos.t0, span = t->pos.t1 - t->pos.t0;

	if (b <= a || b <= t0 || a >= t->pos.t1)
		return;
	uint64_t x = a > t0 ? a - t0 : 0;
	uint64_t y = b - t0 < span ? b - t0 : span;
	for (uint64_t c = x * nc / span; c <= (y - 1) * nc / span && c < nc;
	    c++)
		mark[c] = running ? 2 : 1;
}

static void
draw_lane(struct tui *t, struct pane *p, int y, uint32_t th,
    struct view_cell *cells, unsigned char *mark)
{
	unsigned nc = ncols(p);
	int x0 = name_width(p) + 1, cur = th == t->thread;
	uint64_t t0 = t->pos.t0, span = t->pos.t1 - t->pos.t0;
	char lab[64], name[80];
	char tag = lane_tag(t, th);

	cached_lane(t, th, nc, cells);
	/* hang intervals of this thread */
	for (size_t h = 0; t->d && h < diag_nhangs(t->d); h++) {
		const struct diag_hang *hg = diag_hang(t->d, h);
		if (hg->th.thread != th || hg->end_ns <= t0 ||
		    hg->start_ns >= t->pos.t1)
			continue;
		uint64_t a = hg->start_ns > t0 ? hg->start_ns - t0 : 0;
		uint64_t b = hg->end_ns - t0 < span ? hg->end_ns - t0 : span;
		for (uint64_t c = a * nc / span; c <= b * nc / span && c < nc;
		    c++)
			cells[c].state = VS_HANG;
	}
	/* its part of the critical path: '#' running, '~' blocked */
	uint64_t b0, b1, r0, r1;
	memset(mark, 0, nc);
	if (tui_cpath_span(t, th, &b0, &b1, &r0, &r1)) {
		path_mark(t, nc, b0, b1, 0, mark);
		path_mark(t, nc, r0, r1, 1, mark);
	}
	snprintf(name, sizeof(name), "%c%s", tag,
	    tui_thread_label(t, th, lab, sizeof(lab)));
	wattrset(p->win, (cur ? A_REVERSE : 0) | (t->colour ? (tag == 'C' ||
	    tag == 'H' ? COLOR_PAIR(C_CULPRIT) : tag == 'S' ?
	    COLOR_PAIR(C_PATH) : 0) : 0));
	mvwprintw(p->win, y, 0, "%-*.*s", x0 - 1, x0 - 1, name);
	wattrset(p->win, A_NORMAL);
	/* the current vertex's columns on the current lane */
	long vs = -1, ve = -1;
	if (cur && t->vertex != GRAPH_NONE) {
		uint64_t s = graph_vertex_start(t->g, t->vertex);
		uint64_t e = graph_vertex_end(t->g, t->vertex);
		if (e >= t0 && s < t->pos.t1) {
			vs = s > t0 ? (long)((s - t0) * nc / span) : 0;
			ve = e - t0 < span ? (long)((e - t0) * nc / span) :
			    (long)nc - 1;
		}
	}
	long cc = t->pos.cursor >= t0 && t->pos.cursor < t->pos.t1 ?
	    (long)((t->pos.cursor - t0) * nc / span) : -1;
	for (unsigned c = 0; c < nc; c++) {
		unsigned s = cells[c].state;
		chtype ch = (chtype)(unsigned char)state_ch[s];
		attr_t at = state_attr(t, s);
		if (mark[c] != 0 && s != VS_HANG) {
			/* on the critical path: running or blocked */
			ch = mark[c] == 2 && s != VS_BLOCKED ? '#' : '~';
			at = A_BOLD | (t->colour ? COLOR_PAIR(C_CPATH) : 0);
		} else if (cells[c].vertices == 1 && s != VS_HANG) {
			ch = '|';
			at = t->colour ? COLOR_PAIR(C_BOUND) : 0;
		}
		if ((long)c >= vs && (long)c <= ve)
			at |= A_UNDERLINE | A_BOLD;
		if ((long)c == cc)
			at |= A_REVERSE;
		mvwaddch(p->win, y, x0 + (int)c, ch | at);
	}
}

static void
tl_draw(struct tui *t, struct pane *p)
{
	char a[32], b[32], s[32];
	int rows = p->h - 2;
	size_t li = lane_index(t);
	unsigned nc = ncols(p);
	struct view_cell *cells;
	unsigned char *mark;

	/* the idle kernel threads of another window are others */
	if (!t->unfold && (t->fold_t0 != t->pos.t0 ||
	    t->fold_t1 != t->pos.t1)) {
		tui_lanes(t);
		li = lane_index(t);
	}
	char fold[48] = "";
	if (!t->unfold && t->nfolded > 0)
		snprintf(fold, sizeof(fold), " (%zu folded: f)", t->nfolded);
	tui_pane_title(t, p,
	    "Timeline %s .. %s (%s)  lanes %zu%s%s%s%s", tui_fmt_time(t,
	    t->pos.t0, a, sizeof(a)), tui_fmt_time(t, t->pos.t1, b, sizeof(b)),
	    fmt_duration(s, sizeof(s), t->pos.t1 - t->pos.t0), t->nlanes,
	    fold, t->filter[0] ? " filter '" : "", t->filter, t->filter[0] ?
	    "'" : "");
	if (rows <= 0)
		return;
	ruler(t, p, 1);
	if (li != SIZE_MAX) {
		if (li < t->lane_top)
			t->lane_top = li;
		if (li >= t->lane_top + (size_t)rows)
			t->lane_top = li - (size_t)rows + 1;
	}
	if (t->lane_top >= t->nlanes)
		t->lane_top = 0;
	cells = xcalloc(nc, sizeof(*cells));
	mark = xmalloc(nc);
	for (int r = 0; r < rows && t->lane_top + (size_t)r < t->nlanes; r++)
		draw_lane(t, p, 2 + r, t->lanes[t->lane_top + (size_t)r],
		    cells, mark);
	free(mark);
	free(cells);
}

/* Move the cursor to ts, panning by a quarter screen when it leaves the
   window; the current vertex follows the cursor. */
static int
cursor_to(struct tui *t, uint64_t ts)
{
	uint64_t span = t->pos.t1 - t->pos.t0;

	if (ts < t->first_ts)
		ts = t->first_ts;
	if (ts > t->last_ts)
		ts = t->last_ts;
	if (ts < t->pos.t0) {
		uint64_t d = t->pos.t0 - ts + span / 4;
		t->pos.t0 = t->pos.t0 > d ? t->pos.t0 - d : 0;
		t->pos.t1 = t->pos.t0 + span;
	} else if (ts >= t->pos.t1) {
		uint64_t d = ts - t->pos.t1 + span / 4;
		t->pos.t0 += d;
		t->pos.t1 += d;
	}
	t->pos.cursor = ts;
	t->pos.vts = ts;
	t->vertex = graph_vertex_at(t->g, t->pos.tid, ts);
	return R_ALL;
}

static int
zoom(struct tui *t, int in)
{
	uint64_t span = t->pos.t1 - t->pos.t0, all = t->last_ts -
	    t->first_ts + 1, c = t->pos.cursor, ns, left;

	if (c < t->pos.t0 || c >= t->pos.t1)
		c = t->pos.t0 + span / 2;
	if (in) {
		ns = span / 2;
		if (ns < 64) {
			tui_message(t, 1, "cannot zoom in further");
			return R_STATUS;
		}
		left = (c - t->pos.t0) / 2;
	} else {
		ns = span * 2 > all ? all : span * 2;
		left = (c - t->pos.t0) * 2;
		if (left > ns)
			left = ns / 2;
	}
	t->pos.t0 = c > left ? c - left : 0;
	if (t->pos.t0 < t->first_ts)
		t->pos.t0 = t->first_ts;
	t->pos.t1 = t->pos.t0 + ns;
	if (t->pos.t1 > t->first_ts + all) {
		t->pos.t1 = t->first_ts + all;
		t->pos.t0 = t->pos.t1 - ns;
	}
	return R_ALL;
}

static int
step_vertex(struct tui *t, int dir)
{
	size_t n;
	const uint32_t *vs;

	if (t->thread == GRAPH_NONE)
		return 0;
	vs = graph_thread_vertices(t->g, t->thread, &n);
	if (n == 0)
		return 0;
	size_t lo = 0, hi = n;	/* first vertex starting after the cursor */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (graph_vertex_start(t->g, vs[mid]) <= t->pos.cursor)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (dir > 0) {
		if (lo >= n)
			return R_STATUS;
		return tui_goto_vertex(t, vs[lo], 0);
	}
	/* lo - 1 holds the cursor: go to the one before it */
	if (lo < 2)
		return lo == 1 ? tui_goto_vertex(t, vs[0], 0) : R_STATUS;
	return tui_goto_vertex(t, vs[lo - 2], 0);
}

static int
chain_step(struct tui *t, int back)
{
	uint32_t v;
	char buf[160];

	if (t->vertex == GRAPH_NONE) {
		tui_message(t, 1, "no vertex at the cursor");
		return R_STATUS;
	}
	v = back ? tui_waker(t, t->vertex) : view_wakee(t->g, t->vertex);
	if (v == GRAPH_NONE) {
		tui_message(t, 1, "%s", back ? "dead end: nothing woke this "
		    "vertex in the trace" : "this vertex wakes nothing");
		return R_STATUS;
	}
	tui_goto_vertex(t, v, 1);
	graph_vertex_describe(t->g, v, buf, sizeof(buf));
	tui_message(t, 0, "%s %s", back ? "waker:" : "wakes:", buf);
	return R_ALL;
}

static int
tl_key(struct tui *t, struct pane *p, enum action a)
{
	uint64_t span = t->pos.t1 - t->pos.t0;
	uint64_t col = span / ncols(p) ? span / ncols(p) : 1;
	size_t li = lane_index(t), rows = p->h > 2 ? (size_t)p->h - 2 : 1;
	const struct diag_hang *hg;

	switch (a) {
	case AC_UP: case AC_DOWN: case AC_PAGE_UP: case AC_PAGE_DOWN:
		if (t->nlanes == 0)
			return 0;
		if (li == SIZE_MAX)
			li = 0;
		else if (a == AC_UP)
			li = li ? li - 1 : 0;
		else if (a == AC_DOWN)
			li = li + 1 < t->nlanes ? li + 1 : li;
		else if (a == AC_PAGE_UP)
			li = li > rows ? li - rows : 0;
		else
			li = li + rows < t->nlanes ? li + rows : t->nlanes - 1;
		return tui_set_thread(t, t->lanes[li]);
	case AC_LEFT:
		return cursor_to(t, t->pos.cursor > col ? t->pos.cursor - col :
		    0);
	case AC_RIGHT:
		return cursor_to(t, t->pos.cursor + col);
	case AC_FIRST:
		return cursor_to(t, t->first_ts);
	case AC_LAST:
		return cursor_to(t, t->last_ts);
	case AC_PAN_LEFT: case AC_PAN_RIGHT: {
		uint64_t d = span / 2;
		if (a == AC_PAN_LEFT)
			d = t->pos.t0 - t->first_ts < d ? t->pos.t0 -
			    t->first_ts : d;
		else
			d = t->last_ts + 1 > t->pos.t1 ? (t->last_ts + 1 -
			    t->pos.t1 < d ? t->last_ts + 1 - t->pos.t1 : d) : 0;
		if (a == AC_PAN_LEFT) {
			t->pos.t0 -= d; t->pos.t1 -= d;
			return cursor_to(t, t->pos.cursor - d);
		}
		t->pos.t0 += d; t->pos.t1 += d;
		return cursor_to(t, t->pos.cursor + d);
	}
	case AC_PREV_VERTEX: return step_vertex(t, -1);
	case AC_NEXT_VERTEX: return step_vertex(t, 1);
	case AC_ZOOM_IN: return zoom(t, 1);
	case AC_ZOOM_OUT: return zoom(t, 0);
	case AC_ZOOM_ALL:
		t->pos.t0 = t->first_ts;
		t->pos.t1 = t->last_ts + 1;
		return R_ALL;
	case AC_ENTER:
		if (t->vertex == GRAPH_NONE)
			return 0;
		tui_goto_vertex(t, t->vertex, 1);
		char buf[160];
		graph_vertex_describe(t->g, t->vertex, buf, sizeof(buf));
		tui_message(t, 0, "%s", buf);
		return R_ALL;
	case AC_WAKER: return chain_step(t, 1);
	case AC_WAKEE: return chain_step(t, 0);
	case AC_BACK: return tui_hist_move(t, -1);
	case AC_FORWARD: return tui_hist_move(t, 1);
	case AC_SPINNING:
		if ((hg = tui_hang(t)) == NULL || hg->node == GRAPH_NONE) {
			tui_message(t, 1, "no hang");
			return R_STATUS;
		}
		return tui_goto_vertex(t, hg->node, 1);
	case AC_CPATH:
		return tui_cpath_show(t);
	case AC_FOLD:
		t->unfold = !t->unfold;
		tui_lanes(t);
		if (t->unfold)
			tui_message(t, 0, "all %zu lanes shown (f folds idle "
			    "kernel threads and the recorder)", t->nlanes);
		else
			tui_message(t, 0, "%zu idle kernel thread and recorder "
			    "lane(s) folded (f shows them)", t->nfolded);
		return R_ALL;
	case AC_NEXT_HANG: case AC_PREV_HANG: {
		size_t n = t->d ? diag_nhangs(t->d) : 0, h = t->pos.hang;
		if (n == 0) {
			tui_message(t, 1, "no hang");
			return R_STATUS;
		}
		h = h == SIZE_MAX ? 0 : a == AC_NEXT_HANG ? (h + 1) % n :
		    (h + n - 1) % n;
		return tui_open_hang(t, h, 1);
	}
	default:
		return 0;
	}
}

void
tui_timeline_free(void)
{
	for (size_t i = 0; i < LANE_CACHE; i++) {
		free(cache[i].cells);
		cache[i].cells = NULL;
	}
}

static int
tl_search(struct tui *t, struct pane *p, const char *text, int dir)
{
	size_t n = graph_nthreads(t->g), li = lane_index(t);
	char lab[64];

	(void)p;
	/* lanes first (in their order), from the current one */
	for (size_t k = 1; k <= t->nlanes; k++) {
		size_t i = dir > 0 ? (li + k) % t->nlanes :
		    (li + t->nlanes * 2 - k) % t->nlanes;
		if (tui_match(tui_thread_label(t, t->lanes[i], lab,
		    sizeof(lab)), text))
			return tui_set_thread(t, t->lanes[i]);
	}
	/* then filtered-out threads: clear the filter to show it */
	for (uint32_t i = 0; i < n; i++) {
		if (tui_match(tui_thread_label(t, i, lab, sizeof(lab)), text)) {
			t->filter[0] = '\0';
			tui_set_thread(t, i);
			tui_lanes(t);
			return R_ALL;
		}
	}
	tui_message(t, 1, "no thread matches '%s'", text);
	return R_STATUS;
}

const struct pane_ops tui_timeline_ops = {
	.name = "timeline",
	.draw = tl_draw,
	.key = tl_key,
	.resize = NULL,
	.search = tl_search,
};
