/*
 * cpath.c: the critical path of the current hang (key p), a list drawn
 * over the panes below the timeline, so that the timeline stays in view.
 *
 * The rows are the steps diag_cpath() returns, the hung thread first,
 * each with its wait, its blocked and running time during the hang, the
 * thread that ended its wait (the next row's) and how, and why the path
 * alone names it a culprit (or how it compares with the normal run).
 * Below the rows, the selected step in full with its times. The list
 * keeps its own selection (t->cp_sel, cp_top, reset when the hang
 * changes); the movement keys, Enter and the keys that close it are its
 * own, the others go on to the panes, so zoom, history and `w` work on
 * the timeline above while it is open. Enter moves the timeline to the
 * step's thread where its wait ended (where its waker woke it), the
 * window showing the step's part of the path when it fits.
 *
 * The timeline reads the steps' intervals (tui_cpath_span()) to mark the
 * path across the lanes.
 */
#include <string.h>

#include "tui-local.h"

#define DETAIL_ROWS 3		/* the selected step in full */

static size_t
count(const struct tui *t)
{
	return tui_hang(t) ? diag_ncpath(t->d, t->pos.hang) : 0;
}

/* The parts of the hang where step s is on the path: blocked [b0, b1),
   then running [r0, r1) until it ended the wait of the step before. */
static void
step_span(const struct diag_hang *hg, const struct diag_cstep *s,
    uint64_t *b0, uint64_t *b1, uint64_t *r0, uint64_t *r1)
{
	uint64_t a = hg->start_ns, u = s->until;

	*b0 = *b1 = *r0 = a;
	if (s->wait.type[0] != '\0') {
		*b0 = s->wait_start > a ? s->wait_start : a;
		*b1 = s->wait_end < u ? s->wait_end : u;
		if (*b1 < *b0)
			*b1 = *b0;
		*r0 = s->wait_end > a ? s->wait_end : a;
	}
	*r1 = u > *r0 ? u : *r0;
}

const struct diag_cstep *
tui_cpath_step(const struct tui *t, uint32_t th)
{
	size_t n = count(t);

	for (size_t k = 0; k < n; k++) {
		const struct diag_cstep *s = diag_cpath(t->d, t->pos.hang, k);
		if (s->th.thread == th)
			return s;
	}
	return NULL;
}

int
tui_cpath_span(const struct tui *t, uint32_t th, uint64_t *b0, uint64_t *b1,
    uint64_t *r0, uint64_t *r1)
{
	const struct diag_cstep *s = tui_cpath_step(t, th);

	if (s == NULL || s == diag_cpath(t->d, t->pos.hang, 0))
		return 0;
	step_span(tui_hang(t), s, b0, b1, r0, r1);
	return 1;
}

/* "mutex on mutex:0x5600 (futex)" (full) or "mutex (futex)", "-"
   without a wait. */
static void
wait_text(const struct diag_wait *w, int full, char *buf, size_t len)
{
	if (w->type[0] == '\0')
		snprintf(buf, len, "-");
	else if (full && w->resource[0] != '\0')
		snprintf(buf, len, "%s on %s%s%s%s", w->type, w->resource,
		    w->syscall[0] ? " (" : "", w->syscall, w->syscall[0] ?
		    ")" : "");
	else
		snprintf(buf, len, "%s%s%s%s", w->type, w->syscall[0] ? " (" :
		    "", w->syscall, w->syscall[0] ? ")" : "");
}

/* Who ended step s's wait: "lk-helper:14755 (wakeup)", "timer", "-". */
static void
waker_text(const struct tui *t, const struct diag_cstep *s, char *buf,
    size_t len)
{
	char lab[64];

	if (s->waker.tid != 0)
		snprintf(buf, len, "%s (%s)", tui_thread_label(t,
		    s->waker.thread, lab, sizeof(lab)),
		    diag_cedge_name(s->edge));
	else if (s->edge != DCE_NONE)
		snprintf(buf, len, "%s", diag_cedge_name(s->edge));
	else
		snprintf(buf, len, "-");
}

/* Why the path names step k: "culprit: ...", "[longer ...]" or "". */
static void
why_text(const struct diag_cstep *s, size_t k, char *buf, size_t len)
{
	if (s->culprit)
		snprintf(buf, len, "culprit: %s", diag_cwhy_name(s->culprit));
	else if (k > 0 && s->verdict != DCV_NONE)
		snprintf(buf, len, "[%s]", diag_cverdict_name(s->verdict));
	else
		buf[0] = '\0';
}

static void
row_text(struct tui *t, size_t k, char *buf, size_t len)
{
	const struct diag_cstep *s = diag_cpath(t->d, t->pos.hang, k);
	char lab[64], bl[16], rn[16], w[128], wk[96], why[96];

	tui_thread_label(t, s->th.thread, lab, sizeof(lab));
	fmt_duration(bl, sizeof(bl), s->blocked_ns);
	fmt_duration(rn, sizeof(rn), s->running_ns);
	wait_text(&s->wait, 0, w, sizeof(w));
	waker_text(t, s, wk, sizeof(wk));
	why_text(s, k, why, sizeof(why));
	snprintf(buf, len, "%2zu %-19.19s %9s %9s  %-23.23s <- %-25.25s %s", k,
	    lab, bl, rn, w, wk, why);
}

/* The selected step in full, with its times. */
static void
detail_text(struct tui *t, size_t k, char *buf, size_t len)
{
	const struct diag_cstep *s = diag_cpath(t->d, t->pos.hang, k);
	const struct diag_hang *hg = tui_hang(t);
	char lab[64], a[32], b[32], c[32], w[128], wk[96], why[96];
	uint64_t b0, b1, r0, r1;
	size_t l;

	step_span(hg, s, &b0, &b1, &r0, &r1);
	wait_text(&s->wait, 1, w, sizeof(w));
	waker_text(t, s, wk, sizeof(wk));
	why_text(s, k, why, sizeof(why));
	snprintf(buf, len, "step %zu: %s", k, tui_thread_label(t,
	    s->th.thread, lab, sizeof(lab)));
	l = strlen(buf);
	if (b1 > b0)
		snprintf(buf + l, len - l, ", blocked from %s to %s in %s",
		    tui_fmt_time(t, b0, a, sizeof(a)), tui_fmt_time(t, b1, b,
		    sizeof(b)), w);
	l = strlen(buf);
	snprintf(buf + l, len - l, ", running until %s; woken by %s%s%s",
	    tui_fmt_time(t, r1, c, sizeof(c)), wk, why[0] ? "; " : "", why);
}

void
tui_cpath_close(struct tui *t)
{
	t->cp_open = 0;
	if (t->cpwin != NULL)
		delwin(t->cpwin);
	t->cpwin = NULL;
	for (int i = 0; i < P_N; i++)
		if (t->panes[i].win != NULL)
			touchwin(t->panes[i].win);
}

int
tui_cpath_show(struct tui *t)
{
	if (tui_hang(t) == NULL) {
		tui_message(t, 1, "no hang");
		return R_STATUS;
	}
	if (count(t) == 0) {
		tui_message(t, 1, "hang %zu has no critical path",
		    t->pos.hang + 1);
		return R_STATUS;
	}
	if (t->cp_hang != t->pos.hang)
		t->cp_sel = t->cp_top = 0;
	t->cp_hang = t->pos.hang;
	t->cp_open = 1;
	return R_ALL;
}

/* Rows of steps the window shows. */
static size_t
list_rows(const struct tui *t)
{
	int h = t->cpwin != NULL ? getmaxy(t->cpwin) : LINES / 2;
	int r = h - 2 - (h >= 10 ? DETAIL_ROWS + 1 : 0);

	return r > 1 ? (size_t)r : 1;
}

/* Move the timeline to step k: its thread where its wait ended, or
   where it is first on the path. */
static int
go_step(struct tui *t, size_t k)
{
	const struct diag_cstep *s = diag_cpath(t->d, t->pos.hang, k);
	const struct diag_hang *hg = tui_hang(t);
	uint64_t b0, b1, r0, r1, ts, span;
	char lab[64], when[32];
	uint32_t v;

	step_span(hg, s, &b0, &b1, &r0, &r1);
	ts = b1 > b0 ? b1 : r0;
	v = graph_vertex_at(t->g, s->th.tid, ts);
	if (v == GRAPH_NONE) {
		tui_goto_time(t, ts, 0);
		tui_set_thread(t, s->th.thread);
		tui_hist_push(t);
	} else {
		tui_goto_vertex(t, v, 0);
		t->pos.cursor = t->pos.vts = ts;
		/* the step's part of the path in view when it fits */
		span = t->pos.t1 - t->pos.t0;
		if ((b0 < t->pos.t0 || r1 > t->pos.t1) && r1 - b0 < span) {
			uint64_t m = (span - (r1 - b0)) / 2;
			t->pos.t0 = b0 > m ? b0 - m : 0;
			if (t->pos.t0 < t->first_ts)
				t->pos.t0 = t->first_ts;
			t->pos.t1 = t->pos.t0 + span;
		} else if (ts < t->pos.t0 || ts >= t->pos.t1) {
			t->pos.t0 = ts > span / 4 ? ts - span / 4 : 0;
			t->pos.t1 = t->pos.t0 + span;
		}
		tui_hist_push(t);
	}
	tui_message(t, 0, "step %zu: %s at %s", k, tui_thread_label(t,
	    s->th.thread, lab, sizeof(lab)), tui_fmt_time(t, ts, when,
	    sizeof(when)));
	return R_ALL;
}

int
tui_cpath_key(struct tui *t, int ch, int *redraw)
{
	size_t n = count(t), rows = list_rows(t), old = t->cp_sel;
	enum action a = ch == 27 ? AC_QUIT : tui_key_action(ch);

	*redraw = 0;
	switch (a) {
	case AC_QUIT: case AC_CPATH:
		tui_cpath_close(t);
		*redraw = R_ALL;
		return 1;
	case AC_UP: if (t->cp_sel > 0) t->cp_sel--; break;
	case AC_DOWN: if (t->cp_sel + 1 < n) t->cp_sel++; break;
	case AC_PAGE_UP: t->cp_sel = t->cp_sel > rows ? t->cp_sel - rows : 0;
		break;
	case AC_PAGE_DOWN: t->cp_sel = t->cp_sel + rows < n ? t->cp_sel +
	    rows : (n ? n - 1 : 0); break;
	case AC_FIRST: t->cp_sel = 0; break;
	case AC_LAST: t->cp_sel = n ? n - 1 : 0; break;
	case AC_ENTER:
		if (t->cp_sel >= n) {
			tui_message(t, 1, "no step here");
			*redraw = R_STATUS;
			return 1;
		}
		*redraw = go_step(t, t->cp_sel);
		return 1;
	default:
		return 0;
	}
	*redraw = t->cp_sel != old ? R_ALL : 0;
	return 1;
}

/* The window below the timeline (over the other panes), made again when
   the screen's size changed. */
static WINDOW *
cp_window(struct tui *t)
{
	int H = LINES - 1, y0;
	const struct pane *tl = &t->panes[P_TIMELINE];

	y0 = tl->win == NULL ? 0 : tl->h <= H - 8 ? tl->h : H / 2;
	if (H - y0 < 3 || COLS < 20)
		return NULL;
	if (t->cpwin != NULL && (getbegy(t->cpwin) != y0 ||
	    getmaxy(t->cpwin) != H - y0 || getmaxx(t->cpwin) != COLS)) {
		delwin(t->cpwin);
		t->cpwin = NULL;
	}
	if (t->cpwin == NULL)
		t->cpwin = newwin(H - y0, COLS, y0, 0);
	return t->cpwin;
}

void
tui_cpath_draw(struct tui *t)
{
	WINDOW *w = cp_window(t);
	const struct diag_hang *hg = tui_hang(t);
	size_t n = count(t), rows;
	char buf[512], lab[64], d[16];
	int y;

	if (w == NULL)
		return;
	if (t->cp_hang != t->pos.hang) {
		t->cp_sel = t->cp_top = 0;
		t->cp_hang = t->pos.hang;
	}
	werase(w);
	wattrset(w, A_REVERSE | A_BOLD | (t->colour ? COLOR_PAIR(C_TITLE) :
	    0));
	mvwhline(w, 0, 0, ' ', COLS);
	if (hg == NULL)
		snprintf(buf, sizeof(buf), "Critical path: no hang");
	else
		snprintf(buf, sizeof(buf), ">Critical path, hang %zu/%zu: "
		    "%s %s %s, %zu step%s, ends at %s (Enter: go, q: close)",
		    t->pos.hang + 1, diag_nhangs(t->d),
		    tui_thread_label(t, hg->th.thread, lab, sizeof(lab)),
		    diag_kind_name(hg->kind), fmt_duration(d, sizeof(d),
		    hg->end_ns - hg->start_ns), n, n == 1 ? "" : "s",
		    diag_cstop_name(diag_cpath_stop(t->d, t->pos.hang)));
	tui_put(w, 0, 0, buf);
	wattrset(w, A_BOLD);
	snprintf(buf, sizeof(buf), "%2s %-19s %9s %9s  %-23s    %-25s %s", "#",
	    "thread", "blocked", "running", "wait", "woken by", "why");
	tui_put(w, 1, 0, buf);
	wattrset(w, A_NORMAL);
	rows = list_rows(t);
	if (n == 0) {
		tui_put(w, 2, 1, hg == NULL ? "no hang" : "no critical path");
		wnoutrefresh(w);
		return;
	}
	if (t->cp_sel >= n)
		t->cp_sel = n - 1;
	if (t->cp_sel < t->cp_top)
		t->cp_top = t->cp_sel;
	if (t->cp_sel >= t->cp_top + rows)
		t->cp_top = t->cp_sel - rows + 1;
	for (y = 2; (size_t)(y - 2) < rows && t->cp_top + (size_t)(y - 2) < n;
	    y++) {
		size_t k = t->cp_top + (size_t)(y - 2);
		const struct diag_cstep *s = diag_cpath(t->d, t->pos.hang, k);
		row_text(t, k, buf, sizeof(buf));
		wattrset(w, (k == t->cp_sel ? A_REVERSE : 0) | (s->culprit ?
		    A_BOLD | (t->colour ? COLOR_PAIR(C_CULPRIT) : 0) : 0));
		if (k == t->cp_sel)
			mvwhline(w, y, 0, ' ', COLS);
		tui_put(w, y, 0, buf);
		wattrset(w, A_NORMAL);
	}
	if (getmaxy(w) >= 10) {
		detail_text(t, t->cp_sel, buf, sizeof(buf));
		tui_put_wrapped(w, getmaxy(w) - DETAIL_ROWS, 0, buf);
	}
	wnoutrefresh(w);
}
