/*
 * tui.c: the screen and the main loop of argus debug.
 *
 * tui_run() starts curses, loads the graph and the diagnosis on a helper
 * thread while showing progress (load.c), then loops: lay out the windows when
 * needed, draw what the last handler asked for (werase + draw +
 * wnoutrefresh per pane, one doupdate), read one key, turn it into an
 * action through the key table and hand it to the global handler or the
 * focused pane. Signals (INT, TERM, HUP) only set a flag; the loop sees
 * it within one read timeout and leaves through the same endwin path as
 * `q`. Any other signal that ends argus restores the terminal and stderr
 * first (crash.c). Messages go to the status line while curses is up; a
 * fatal error is printed after endwin.
 */
#include <errno.h>
#include <locale.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "trace/trace.h"
#include "tui-local.h"

#define READ_TIMEOUT_MS 200

static volatile sig_atomic_t tui_sig;

static void
on_signal(int sig)
{
	tui_sig = sig;
}

int
tui_signalled(void)
{
	return tui_sig != 0;
}

static void
set_signals(void (*fn)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

void
tui_message(struct tui *t, int err, const char *fmt, ...)
{
	va_list ap;

	/* an error or warning not seen yet stays (a key clears it) */
	if (!err && t->msg_err && t->msg[0] != '\0')
		return;
	va_start(ap, fmt);
	vsnprintf(t->msg, sizeof(t->msg), fmt, ap);
	va_end(ap);
	t->msg_err = err;
}

void
tui_put(WINDOW *w, int y, int x, const char *s)
{
	int maxx = getmaxx(w);

	if (y < 0 || y >= getmaxy(w) || x >= maxx)
		return;
	mvwaddnstr(w, y, x, s, maxx - x);
}

int
tui_put_wrapped(WINDOW *w, int y, int x, const char *s)
{
	int maxx = getmaxx(w), maxy = getmaxy(w), width = maxx - x;

	if (width <= 0)
		return y;
	while (*s != '\0' && y < maxy) {
		int n = (int)strlen(s);
		if (n > width) {
			/* break at the last space that fits, else mid-word */
			n = width;
			while (n > 0 && s[n] != ' ')
				n--;
			if (n == 0)
				n = width;
		}
		mvwaddnstr(w, y++, x, s, n);
		s += n;
		while (*s == ' ')
			s++;
	}
	return y;
}

void
tui_pane_title(struct tui *t, struct pane *p, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int focused = p == &t->panes[t->focus];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	wattrset(p->win, A_REVERSE | (focused ? A_BOLD : 0) |
	    (t->colour && focused ? COLOR_PAIR(C_TITLE) : 0));
	mvwhline(p->win, 0, 0, ' ', p->w);
	tui_put(p->win, 0, 0, focused ? ">" : " ");
	tui_put(p->win, 0, 1, buf);
	wattrset(p->win, A_NORMAL);
}

int
tui_match(const char *hay, const char *needle)
{
	return strcasestr(hay, needle) != NULL;
}

void
tui_list_scroll(struct pane *p, size_t n)
{
	size_t rows = p->h > 1 ? (size_t)p->h - 1 : 1;

	if (n == 0) {
		p->sel = p->top = 0;
		return;
	}
	if (p->sel >= n)
		p->sel = n - 1;
	if (p->sel < p->top)
		p->top = p->sel;
	if (p->sel >= p->top + rows)
		p->top = p->sel - rows + 1;
}

int
tui_list_key(struct pane *p, size_t n, enum action a, int bit)
{
	size_t rows = p->h > 2 ? (size_t)p->h - 1 : 1, old = p->sel;

	switch (a) {
	case AC_UP: if (p->sel > 0) p->sel--; break;
	case AC_DOWN: if (p->sel + 1 < n) p->sel++; break;
	case AC_PAGE_UP: p->sel = p->sel > rows ? p->sel - rows : 0; break;
	case AC_PAGE_DOWN: p->sel = n && p->sel + rows < n ? p->sel + rows :
	    (n ? n - 1 : 0); break;
	case AC_FIRST: p->sel = 0; break;
	case AC_LAST: p->sel = n ? n - 1 : 0; break;
	default: return 0;
	}
	tui_list_scroll(p, n);
	return p->sel != old ? bit : 0;
}

const char *
tui_fmt_time(const struct tui *t, uint64_t ts, char *buf, size_t len)
{
	if (ts >= t->first_ts)
		snprintf(buf, len, "%.6f s", (double)(ts - t->first_ts) / 1e9);
	else
		snprintf(buf, len, "-%.6f s", (double)(t->first_ts - ts) / 1e9);
	return buf;
}

const char *
tui_thread_label(const struct tui *t, uint32_t th, char *buf, size_t len)
{
	const struct graph_thread *gt = graph_thread(t->g, th);
	const char *host = graph_thread_host(t->g, th);

	if (gt == NULL)
		snprintf(buf, len, "?");
	else if (gt->flags & GRAPH_THREAD_IRQ)
		snprintf(buf, len, "%s%s%s", host ? host : "", host ? "/" : "",
		    gt->comm);
	else
		snprintf(buf, len, "%s%s%s:%u", host ? host : "",
		    host ? "/" : "", gt->comm, trace_tid_local(gt->tid));
	return buf;
}

int
tui_open_again(const char *trace, const char *const *traces, size_t ntraces,
    struct trace_reader **r, char **cause)
{
	struct hosts_report *rep = NULL;

	if (ntraces <= 1)
		return trace_reader_open(r, trace, cause);
	int err = hosts_open(traces, ntraces, r, &rep, cause);
	hosts_report_free(rep);
	return err;
}

char **
tui_split_lines(const char *buf, size_t *n)
{
	char **v = NULL;
	size_t k = 0;
	const char *p = buf;

	while (*p != '\0') {
		const char *e = strchr(p, '\n');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		v = xreallocarray(v, k + 1, sizeof(*v));
		v[k] = xmalloc(l + 1);
		memcpy(v[k], p, l);
		v[k][l] = '\0';
		/* tabs would break the clipping: expand to one space */
		for (char *c = v[k]; *c; c++)
			if (*c == '\t')
				*c = ' ';
		k++;
		p += l + (e != NULL);
	}
	*n = k;
	return v;
}

static void
close_text(struct tui *t)
{
	for (size_t i = 0; i < t->ntext; i++)
		free(t->text[i]);
	free(t->text);
	t->text = NULL;
	t->ntext = t->text_top = 0;
	if (t->textwin != NULL)
		delwin(t->textwin);
	t->textwin = NULL;
}

void
tui_show_text(struct tui *t, const char *title, char **lines, size_t n)
{
	close_text(t);
	t->text = lines;
	t->ntext = n;
	snprintf(t->text_title, sizeof(t->text_title), "%s", title);
}

/* The help screen, generated from the key and command tables: one line
   per action with all its keys. */
static void
show_help(struct tui *t)
{
	char **lines = NULL;
	size_t n = 0;
	int done[AC_NACTIONS] = { 0 };

#define ADD(...) do { lines = xreallocarray(lines, n + 1, sizeof(*lines)); \
	lines[n++] = xasprintf(__VA_ARGS__); } while (0)
	ADD("argus debug: keys (q or Esc closes this screen)");
	ADD("%s", "");
	for (size_t i = 0; i < tui_nkeys; i++) {
		enum action a = tui_keys[i].action;
		char keys[64] = "";
		if (done[a])
			continue;
		done[a] = 1;
		for (size_t j = i; j < tui_nkeys; j++) {
			if (tui_keys[j].action != a)
				continue;
			size_t l = strlen(keys);
			snprintf(keys + l, sizeof(keys) - l, "%s%s",
			    l ? " " : "", tui_keys[j].name);
		}
		ADD("  %-16s %s", keys, tui_keys[i].help);
	}
	ADD("%s", "");
	ADD("Commands (after :, Tab completes):");
	for (size_t i = 0; i < tui_ncommands; i++) {
		char c[64];
		snprintf(c, sizeof(c), "%s %s", tui_commands[i].name,
		    tui_commands[i].args);
		ADD("  %-28s %s", c, tui_commands[i].help);
	}
	ADD("%s", "");
	ADD("Timeline: = running  - runnable  . blocked  ! hang  "
	    "| vertex start  # ~ on the critical path (running, blocked)");
#undef ADD
	tui_show_text(t, "help", lines, n);
}

/* --- layout and drawing ------------------------------------------------ */

static void
place(struct pane *p, int y, int x, int h, int w)
{
	if (p->win != NULL)
		delwin(p->win);
	p->win = NULL;
	p->h = p->w = 0;
	if (h <= 0 || w <= 0)
		return;
	p->win = newwin(h, w, y, x);
	if (p->win == NULL)
		return;
	p->h = h;
	p->w = w;
}

static void
layout(struct tui *t)
{
	int H = LINES - 1, W = COLS;

	for (int i = 0; i < P_N; i++)
		place(&t->panes[i], 0, 0, 0, 0);
	if (t->status != NULL)
		delwin(t->status);
	t->status = newwin(1, W, LINES - 1, 0);
	if (t->status != NULL) {
		keypad(t->status, TRUE);
		wtimeout(t->status, READ_TIMEOUT_MS);
	}
	if (t->textwin != NULL)
		delwin(t->textwin);
	t->textwin = NULL;
	if (H < 4 || W < 20)
		return;
	if (t->zoomed) {
		place(&t->panes[t->focus], 0, 0, H, W);
	} else {
		int th = H * 45 / 100, bh, lw = W / 2, ch;
		if (th < 5)
			th = 5;
		bh = H - th;
		ch = bh / 3 < 3 ? 3 : bh / 3;
		if (ch > 10)
			ch = 10;
		place(&t->panes[P_TIMELINE], 0, 0, th, W);
		place(&t->panes[P_NODE], th, 0, bh - ch, lw);
		place(&t->panes[P_CANDS], th + bh - ch, 0, ch, lw);
		place(&t->panes[P_DIFF], th, lw, bh, W - lw);
	}
	for (int i = 0; i < P_N; i++)
		if (t->panes[i].win != NULL && t->panes[i].ops->resize)
			t->panes[i].ops->resize(t, &t->panes[i]);
}

static void
draw_status(struct tui *t)
{
	char right[160], when[32], lab[64];
	WINDOW *w = t->status;
	int rl;

	if (w == NULL)
		return;
	werase(w);
	wbkgdset(w, ' ');
	char vx[32] = "no vertex";
	if (t->vertex != GRAPH_NONE)
		snprintf(vx, sizeof(vx), "vertex #%u", t->vertex);
	snprintf(right, sizeof(right), " %s | %s | %s ",
	    tui_thread_label(t, t->thread, lab, sizeof(lab)), vx,
	    tui_fmt_time(t, t->pos.cursor, when, sizeof(when)));
	rl = (int)strlen(right);
	if (t->msg[0] != '\0') {
		wattrset(w, t->msg_err ? (t->colour ? COLOR_PAIR(C_ERROR) |
		    A_BOLD : A_BOLD) : A_NORMAL);
		tui_put(w, 0, 0, t->msg);
	} else {
		tui_put(w, 0, 0, "? help  q quit  : command  Tab pane  "
		    "w/W waker/wakee");
	}
	wattrset(w, A_REVERSE);
	if (COLS - rl > 0)
		tui_put(w, 0, COLS - rl, right);
	wattrset(w, A_NORMAL);
	wnoutrefresh(w);
}

static void
draw_text(struct tui *t)
{
	int H = LINES - 1;

	if (t->textwin == NULL)
		t->textwin = newwin(H > 0 ? H : 1, COLS, 0, 0);
	if (t->textwin == NULL)
		return;
	WINDOW *w = t->textwin;
	werase(w);
	wattrset(w, A_REVERSE | A_BOLD);
	mvwhline(w, 0, 0, ' ', COLS);
	tui_put(w, 0, 1, t->text_title);
	wattrset(w, A_NORMAL);
	for (int y = 1; y < H; y++) {
		size_t i = t->text_top + (size_t)y - 1;
		if (i >= t->ntext)
			break;
		tui_put(w, y, 0, t->text[i]);
	}
	wnoutrefresh(w);
}

static void
draw(struct tui *t, int what)
{
	if (t->text != NULL) {
		draw_text(t);
	} else if (t->panes[P_TIMELINE].win == NULL &&
	    t->panes[t->focus].win == NULL) {
		erase();
		mvaddstr(0, 0, "terminal too small");
		wnoutrefresh(stdscr);
	} else {
		for (int i = 0; i < P_N; i++) {
			struct pane *p = &t->panes[i];
			if (p->win == NULL || !(what & (R_TIMELINE << i)))
				continue;
			werase(p->win);
			p->ops->draw(t, p);
			wnoutrefresh(p->win);
		}
		if (t->cp_open)
			tui_cpath_draw(t);
	}
	draw_status(t);
	doupdate();
}

/* --- global actions ---------------------------------------------------- */

static int
text_key(struct tui *t, int ch)
{
	size_t rows = LINES > 2 ? (size_t)LINES - 2 : 1;
	size_t max = t->ntext > rows ? t->ntext - rows : 0;

	switch (ch == 27 ? AC_QUIT : tui_key_action(ch)) {
	case AC_QUIT: case AC_HELP:
		close_text(t);
		for (int i = 0; i < P_N; i++)
			if (t->panes[i].win)
				touchwin(t->panes[i].win);
		return R_ALL;
	case AC_UP: if (t->text_top > 0) t->text_top--; break;
	case AC_DOWN: if (t->text_top < max) t->text_top++; break;
	case AC_PAGE_UP: t->text_top = t->text_top > rows ?
	    t->text_top - rows : 0; break;
	case AC_PAGE_DOWN: t->text_top = t->text_top + rows < max ?
	    t->text_top + rows : max; break;
	case AC_FIRST: t->text_top = 0; break;
	case AC_LAST: t->text_top = max; break;
	default: return 0;
	}
	return R_ALL;
}

static int
do_search(struct tui *t, int dir, int ask)
{
	struct pane *p = &t->panes[t->focus];

	if (ask) {
		char *s = tui_readline(t, "/");
		if (s == NULL)
			return R_ALL;
		if (*s != '\0')
			snprintf(t->search, sizeof(t->search), "%s", s);
		free(s);
	}
	if (t->search[0] == '\0') {
		tui_message(t, 1, "no previous search");
		return R_ALL;
	}
	if (p->ops->search == NULL) {
		tui_message(t, 1, "the %s pane cannot be searched",
		    p->ops->name);
		return R_ALL;
	}
	return R_ALL | p->ops->search(t, p, t->search, dir);
}

static int
global_key(struct tui *t, enum action a)
{
	switch (a) {
	case AC_QUIT:
		t->quit = 1;
		return 0;
	case AC_HELP:
		show_help(t);
		return R_ALL;
	case AC_NEXT_PANE: case AC_PREV_PANE:
		t->focus = (t->focus + (a == AC_NEXT_PANE ? 1 : P_N - 1)) % P_N;
		return t->zoomed ? R_ALL | R_LAYOUT : R_ALL;
	case AC_ZOOM_PANE:
		t->zoomed = !t->zoomed;
		return R_ALL | R_LAYOUT;
	case AC_REDRAW:
		clearok(curscr, TRUE);
		return R_ALL;
	case AC_COMMAND: {
		char *s = tui_readline(t, ":");
		int r = R_ALL;
		if (s != NULL)
			r |= tui_command(t, s);
		free(s);
		return r;
	}
	case AC_SEARCH: return do_search(t, 1, 1);
	case AC_SEARCH_NEXT: return do_search(t, 1, 0);
	case AC_SEARCH_PREV: return do_search(t, -1, 0);
	default:
		break;
	}
	if (a == AC_RECURSE || a == AC_TOGGLE_SLICE)
		return t->panes[P_DIFF].ops->key(t, &t->panes[P_DIFF], a);
	/* the rest goes to the focused pane, then to the timeline (zoom,
	   history and chain steps work from any pane) */
	struct pane *p = &t->panes[t->focus];
	int r = p->ops->key(t, p, a);
	if (r == 0 && t->focus != P_TIMELINE)
		r = t->panes[P_TIMELINE].ops->key(t, &t->panes[P_TIMELINE], a);
	return r;
}

static void
colours(struct tui *t)
{
	t->colour = has_colors() && getenv("NO_COLOR") == NULL;
	if (!t->colour)
		return;
	start_color();
	use_default_colors();
	init_pair(C_RUN, COLOR_GREEN, -1);
	init_pair(C_RUNNABLE, COLOR_YELLOW, -1);
	init_pair(C_BLOCKED, COLOR_BLUE, -1);
	init_pair(C_HANG, COLOR_WHITE, COLOR_RED);
	init_pair(C_BOUND, COLOR_MAGENTA, -1);
	init_pair(C_TITLE, COLOR_CYAN, -1);
	init_pair(C_ERROR, COLOR_RED, -1);
	init_pair(C_PATH, COLOR_CYAN, -1);
	init_pair(C_CULPRIT, COLOR_RED, -1);
	init_pair(C_CURSOR, COLOR_BLACK, COLOR_WHITE);
	init_pair(C_CPATH, COLOR_BLACK, COLOR_CYAN);
}

static void
free_model(struct tui *t)
{
	view_free(t->vw);
	diag_free(t->d);
	if (t->g)
		graph_free(t->g);
	rules_free(t->rules);
	hosts_report_free(t->hosts);
	free(t->lanes);
}

int
tui_run(struct tui_opts *o)
{
	static const struct pane_ops *const ops[P_N] = {
		&tui_timeline_ops, &tui_node_ops, &tui_cands_ops,
		&tui_diff_ops,
	};
	struct tui *t = xcalloc(1, sizeof(*t));
	char *cause = NULL;
	int rc = 0, err, redraw;

	setlocale(LC_ALL, "");
	t->trace = o->trace;
	t->traces = o->traces;
	t->ntraces = o->ntraces;
	t->hosts = o->hosts;
	t->dopts.hosts = o->hosts;
	t->rules = o->rules;
	t->dopts.pid = o->pid;
	t->dopts.tid = o->tid;
	t->dopts.comm = o->comm;
	t->dopts.at = o->at;
	t->first_ts = trace_reader_info(o->reader)->first_ts;
	t->last_ts = trace_reader_info(o->reader)->last_ts;
	t->vertex = GRAPH_NONE;
	t->pos.hang = SIZE_MAX;
	for (int i = 0; i < P_N; i++)
		t->panes[i].ops = ops[i];

	tui_sig = 0;
	set_signals(on_signal);
	tui_stderr_capture();
	tui_crash_save_tty();
	/* newterm, unlike initscr, returns on an unknown terminal */
	SCREEN *scr = newterm(NULL, stdout, stdin);
	if (scr == NULL) {
		tui_stderr_release();
		fprintf(stderr, "argus debug: cannot use the terminal "
		    "(TERM=%s)\n", getenv("TERM") ? getenv("TERM") : "");
		trace_reader_close(o->reader);
		free_model(t);
		free(t);
		return 1;
	}
	cbreak();
	noecho();
	nonl();
	/*
	 * C-s must not freeze the screen: no flow control while curses runs.
	 * C-c and C-z are keys, not signals: the terminal turns them into
	 * signals as they are typed, before argus reads what came first, so
	 * a C-c typed just after ':' would end the session instead of the
	 * line. The main loop quits on C-c and suspends on C-z itself.
	 */
	{
		struct termios tio;

		if (tcgetattr(STDIN_FILENO, &tio) == 0) {
			tio.c_iflag &= ~(tcflag_t)(IXON | IXOFF);
			tio.c_lflag &= ~(tcflag_t)ISIG;
			tcsetattr(STDIN_FILENO, TCSANOW, &tio);
			def_prog_mode();
		}
	}
	tui_crash_install();
	keypad(stdscr, TRUE);
	curs_set(0);
	set_escdelay(50);
	colours(t);

	err = tui_load(t, o, &cause);
	if (err == 0) {
		uint64_t f = graph_first_ts(t->g);
		if (f != 0 && (t->first_ts == 0 || f < t->first_ts))
			t->first_ts = f;
		t->vw = view_new(t->g);
		tui_open_hang(t, 0, 1);
		if (t->win_from != 0 || t->win_to != UINT64_MAX)
			tui_say_window(t, t->at_end ? ", its end; the whole "
			    "trace is searched for hangs (:hangs)" : "");
		tui_search_start(t);
		redraw = R_ALL | R_LAYOUT;
		while (!t->quit && !tui_sig) {
			if (redraw & R_LAYOUT)
				layout(t);
			if (redraw)
				draw(t, redraw);
			redraw = 0;
			int ch = t->status ? wgetch(t->status) : getch();
			if (ch == ERR) {
				redraw |= tui_extend_poll(t, 0);
				redraw |= tui_search_poll(t);
				continue;
			}
			if (ch == KEY_RESIZE) {
				redraw = R_ALL | R_LAYOUT;
				continue;
			}
			if (ch == 3) {		/* C-c: as SIGINT did */
				tui_sig = SIGINT;
				break;
			}
			if (ch == 26) {		/* C-z: curses handles the stop */
				raise(SIGTSTP);
				redraw = R_ALL | R_LAYOUT;
				continue;
			}
			if (t->msg[0] != '\0') {
				t->msg[0] = '\0';
				redraw |= R_STATUS;
			}
			if (t->text != NULL) {
				redraw |= text_key(t, ch);
				continue;
			}
			int r;
			if (t->cp_open && tui_cpath_key(t, ch, &r)) {
				redraw |= r;
				continue;
			}
			enum action a = tui_key_action(ch);
			if (a == AC_NONE) {
				tui_message(t, 1, "unknown key (? for help)");
				redraw |= R_STATUS;
				continue;
			}
			redraw |= global_key(t, a);
			redraw |= tui_extend_poll(t, 1);
		}
	}
	tui_extend_wait(t, 0);
	tui_search_free(t);
	close_text(t);
	tui_cpath_close(t);
	tui_timeline_free();
	for (int i = 0; i < P_N; i++)
		if (t->panes[i].win)
			delwin(t->panes[i].win);
	if (t->status)
		delwin(t->status);
	tui_readline_end();	/* el_end() sets the tty: before endwin */
	tui_crash_remove();
	endwin();
	delscreen(scr);
	tui_stderr_release();
	tui_readline_warn();
	set_signals(SIG_DFL);
	if (err > 0) {
		fprintf(stderr, "argus debug: %s: %s\n", t->trace, cause);
		rc = 1;
	} else if (err < 0 || tui_sig) {
		rc = 128 + (tui_sig ? tui_sig : SIGINT);
	}
	free(cause);
	if (err < 0)
		t->rules = NULL;	/* the loader still uses them */
	else
		trace_reader_close(o->reader);
	free_model(t);
	free(t);
	return rc;
}
