/*
 * load.c: loading the model of argus debug on a helper thread, and
 * growing a window of the trace while the keys keep working.
 *
 * struct loader is one load: the reader, the rules and the diagnosis
 * options in; the graph, the diagnosis, an error and its cause out; the
 * chunks read of the total (the progress bar) and the damaged spots
 * counted on the way. tui_load() runs the first load behind a progress
 * screen; a trace of more than TUI_WHOLE_MAX_EVENTS opens on a window at
 * its end unless a time is asked. When the first graph holds a window of the trace (--at) and
 * a key scrolls or zooms the timeline past one of its edges,
 * tui_extend_poll() starts a load of a wider window on a thread of its
 * own (t->ext) and, once it is done, puts its model in place of the
 * current one, keeping the position; the status line shows its progress
 * meanwhile. A window never grows past TUI_WINDOW_MAX_EVENTS.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/trace.h"
#include "tui-local.h"

/* The most events a grown window may hold (about 40 bytes each). */
#define TUI_WINDOW_MAX_EVENTS 40e6
/* A trace of more events opens on a window at its end (when no time is
   asked), of about DIAG_WINDOW_EVENTS; ARGUS_DEBUG_WHOLE_MAX sets
   another bound (tests). */
#define TUI_WHOLE_MAX_EVENTS 20e6

struct loader {
	struct trace_reader *r;
	struct rules *rules;
	struct diag_opts dopts;
	uint64_t from, to;	/* a window (grow); 0, UINT64_MAX: as asked */
	int grow;		/* build [from, to) and diagnose it as is */
	struct graph *g;
	struct diag *d;
	char *cause;
	int err;
	const char *stage;
	volatile int done;
	uint64_t damaged;
	uint64_t pdone, ptotal;	/* chunks read of the total, atomics */
	pthread_t th;
};

static void *
load_main(void *arg)
{
	struct loader *l = arg;

	l->stage = "building the event graph";
	if (l->grow) {
		l->err = graph_build_window(l->r, l->rules, l->from, l->to,
		    &l->g, &l->cause);
		if (l->err == 0 && diag_new(l->g, &l->dopts, &l->d,
		    &l->cause) != 0)
			l->d = NULL;	/* the graph alone is shown */
	} else if (l->dopts.at != 0) {
		/* a window of the trace around the time, grown as the
		   diagnosis needs */
		l->err = diag_at_window(l->r, l->rules, &l->dopts, &l->g,
		    &l->d, &l->cause);
	} else {
		l->err = graph_build(l->r, l->rules, &l->g, &l->cause);
		if (l->err == 0) {
			l->stage = "diagnosing";
			l->err = diag_new(l->g, &l->dopts, &l->d, &l->cause);
		}
	}
	__atomic_store_n(&l->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* On any reading thread (a window's lead is decoded on two): a chunk
   found through a seek index is checked when first read, not at open. */
static void
on_damage(const struct trace_damage *dmg, void *arg)
{
	struct loader *l = arg;

	(void)dmg;
	__atomic_fetch_add(&l->damaged, 1, __ATOMIC_RELAXED);
}

/* On the reading thread: the chunks read so far. */
static void
on_progress(void *arg, uint64_t done, uint64_t total)
{
	struct loader *l = arg;

	__atomic_store_n(&l->ptotal, total, __ATOMIC_RELAXED);
	__atomic_store_n(&l->pdone, done, __ATOMIC_RELAXED);
}

/* Per cent of the chunks read, or -1 before anything is known. */
static int
percent(const struct loader *l)
{
	uint64_t d = __atomic_load_n(&l->pdone, __ATOMIC_RELAXED);
	uint64_t n = __atomic_load_n(&l->ptotal, __ATOMIC_RELAXED);

	if (n == 0)
		return -1;
	return (int)((d > n ? n : d) * 100 / n);
}

/* Start l on its thread, reporting to it; 0 or an errno. */
static int
start(struct loader *l)
{
	int err;

	trace_reader_on_damage(l->r, on_damage, l);
	trace_reader_on_progress(l->r, on_progress, l);
	err = pthread_create(&l->th, NULL, load_main, l);
	if (err != 0) {
		trace_reader_on_damage(l->r, NULL, NULL);
		trace_reader_on_progress(l->r, NULL, NULL);
	}
	return err;
}

/* Wait for l to end; the reader stops reporting to it. */
static void
finish(struct loader *l)
{
	pthread_join(l->th, NULL);
	trace_reader_on_damage(l->r, NULL, NULL);
	trace_reader_on_progress(l->r, NULL, NULL);
}

/* The loading screen's bar: "[####......]  42%" once anything is known. */
static void
draw_bar(int y, int x, int width, const struct loader *l)
{
	uint64_t done = __atomic_load_n(&l->pdone, __ATOMIC_RELAXED);
	uint64_t total = __atomic_load_n(&l->ptotal, __ATOMIC_RELAXED);
	int fill;

	if (total == 0 || width < 8)
		return;
	if (done > total)
		done = total;
	fill = (int)(done * (uint64_t)(width - 7) / total);
	mvaddch(y, x, '[');
	for (int i = 0; i < width - 7; i++)
		addch(i < fill ? '#' : '.');
	printw("] %3d%%", percent(l));
}

/*
 * Without a time asked, a trace too big to load at once opens on its end,
 * where a flight recorder's hang is: set l to grow a window from about
 * DIAG_WINDOW_EVENTS events (by the mean rate; ARGUS_WINDOW_EVENTS) before
 * the end. Returns 1 when it did.
 */
static int
at_end(struct loader *l)
{
	const struct trace_info *in = trace_reader_info(l->r);
	double max = TUI_WHOLE_MAX_EVENTS;
	const char *e = getenv("ARGUS_DEBUG_WHOLE_MAX");
	uint64_t v, span = in->last_ts - in->first_ts, back;

	if (e != NULL && parse_u64(e, &v) == 0)
		max = (double)v;
	if (l->dopts.at != 0 || (double)in->nevents <= max ||
	    in->last_ts <= in->first_ts)
		return 0;
	back = diag_window_span(l->r, DIAG_WINDOW_EVENTS, 0);
	if (back >= span)
		return 0;
	l->grow = 1;
	l->from = in->last_ts - back;
	l->to = UINT64_MAX;
	return 1;
}

int
tui_load(struct tui *t, struct tui_opts *o, char **cause)
{
	struct loader *l = xcalloc(1, sizeof(*l));
	const struct trace_info *info = trace_reader_info(o->reader);
	static const char spin[] = "|/-\\";
	uint64_t t0 = now_ns();
	unsigned k = 0;
	int err;

	t->reader = o->reader;
	l->r = o->reader;
	l->rules = t->rules;
	l->dopts = t->dopts;
	int end = at_end(l);
	if ((err = start(l)) != 0) {
		*cause = xasprintf("cannot start the loader: %s",
		    strerror(err));
		free(l);
		return 1;
	}
	while (!__atomic_load_n(&l->done, __ATOMIC_ACQUIRE)) {
		char el[32];

		if (tui_signalled())
			return -1;	/* the loader ends with the process */
		erase();
		mvprintw(LINES / 2 - 1, 2, "argus debug: loading %s", t->trace);
		mvprintw(LINES / 2, 2, "%c %s: %llu events in %u segment(s), "
		    "%s", spin[k++ % 4], l->stage ? l->stage : "reading",
		    (unsigned long long)info->nevents, info->nsegments,
		    fmt_duration(el, sizeof(el), now_ns() - t0));
		draw_bar(LINES / 2 + 1, 2, COLS - 4 < 60 ? COLS - 4 : 60, l);
		refresh();
		usleep(100000);
	}
	finish(l);
	err = l->err;
	if (err != 0) {
		*cause = l->cause ? l->cause : xstrdup(graph_strerror(err));
		if (l->g)
			graph_free(l->g);
		free(l);
		return err;
	}
	free(l->cause);
	t->g = l->g;
	t->d = l->d;
	graph_window(t->g, &t->win_from, &t->win_to);
	if (l->damaged)
		tui_message(t, 1, "warning: %llu damaged spot(s) skipped in "
		    "the trace", (unsigned long long)l->damaged);
	t->at_end = end;
	free(l);
	return 0;
}

/* --- growing the window ------------------------------------------------- */

/* The loaded window as times inside the trace. */
static void
loaded(const struct tui *t, uint64_t *lo, uint64_t *hi)
{
	*lo = t->win_from > t->first_ts ? t->win_from : t->first_ts;
	*hi = t->win_to < t->last_ts ? t->win_to : t->last_ts;
}

/* Does the view reach past an edge of a partial window? */
static int
past_edge(const struct tui *t)
{
	uint64_t lo, hi;

	if (t->g == NULL || t->ext_failed ||
	    (t->win_from == 0 && t->win_to == UINT64_MAX))
		return 0;
	loaded(t, &lo, &hi);
	return (lo > t->first_ts && t->pos.t0 < lo) ||
	    (hi < t->last_ts && t->pos.t1 > hi);
}

/* Would a window holding the view pass TUI_WINDOW_MAX_EVENTS (by the
   trace's mean rate)? Then say so, once, and grow no more. */
static int
too_big(struct tui *t)
{
	const struct trace_info *in = trace_reader_info(t->reader);
	uint64_t lo, hi, span = t->last_ts - t->first_ts;

	loaded(t, &lo, &hi);
	if (t->pos.t0 < lo)
		lo = t->pos.t0;
	if (t->pos.t1 > hi)
		hi = t->pos.t1;
	if (span == 0 || (double)in->nevents * (double)(hi - lo) /
	    (double)span <= TUI_WINDOW_MAX_EVENTS)
		return 0;
	t->ext_failed = 1;
	tui_message(t, 1, "the view holds more events than argus debug "
	    "loads at once; zoom in, or open at another time with --at");
	return 1;
}

/* Start loading the window [from, to) of the trace as t->ext: 0, or an
   errno when the loader cannot start. */
static int
load_window(struct tui *t, uint64_t from, uint64_t to)
{
	struct loader *l = xcalloc(1, sizeof(*l));
	int err;

	l->r = t->reader;
	l->rules = t->rules;
	l->dopts = t->dopts;
	l->grow = 1;
	l->from = from;
	l->to = to;
	if ((err = start(l)) != 0) {
		free(l);
		return err;
	}
	t->ext = l;
	return 0;
}

/* Start loading a window that holds the view with a view's width on
   each side, and at least twice the loaded one on a side it grows. */
static void
grow(struct tui *t)
{
	uint64_t lo, hi, w = t->pos.t1 > t->pos.t0 ? t->pos.t1 - t->pos.t0 : 1;
	uint64_t from = t->win_from, to = t->win_to;

	loaded(t, &lo, &hi);
	if (lo > t->first_ts && t->pos.t0 < lo) {
		uint64_t want = t->pos.t0 > w ? t->pos.t0 - w : 0;
		uint64_t twice = lo - t->first_ts > hi - lo ? lo - (hi - lo) :
		    t->first_ts;

		from = want < twice ? want : twice;
		if (from <= t->first_ts)
			from = 0;
	}
	if (hi < t->last_ts && t->pos.t1 > hi) {
		uint64_t want = t->pos.t1 + w, twice = hi + (hi - lo);

		to = want > twice ? want : twice;
		if (to >= t->last_ts)
			to = UINT64_MAX;
	}
	if (load_window(t, from, to) != 0) {
		t->ext_failed = 1;
		tui_message(t, 1, "cannot load more of the trace");
	}
}

/* Open the hang of t->want_tid that overlaps [want_from, want_to] the
   most, or go there on that thread; forget the wish. */
static void
open_wanted(struct tui *t)
{
	size_t best = SIZE_MAX;
	uint64_t bo = 0;

	for (size_t h = 0; t->d != NULL && h < diag_nhangs(t->d); h++) {
		const struct diag_hang *hg = diag_hang(t->d, h);
		uint64_t lo = hg->start_ns > t->want_from ? hg->start_ns :
		    t->want_from;
		uint64_t hi = hg->end_ns < t->want_to ? hg->end_ns :
		    t->want_to;
		if (hg->th.tid == t->want_tid && hi > lo && hi - lo > bo) {
			bo = hi - lo;
			best = h;
		}
	}
	if (best != SIZE_MAX) {
		tui_open_hang(t, best, 1);
	} else {
		uint32_t th = graph_thread_find(t->g, t->want_tid);
		tui_goto_time(t, t->want_from, 1);
		if (th != GRAPH_NONE)
			tui_set_thread(t, th);
	}
	t->want_tid = 0;
}

void
tui_say_window(struct tui *t, const char *more)
{
	char a[32], b[32];
	uint64_t lo, hi;

	loaded(t, &lo, &hi);
	if (t->win_from == 0 && t->win_to == UINT64_MAX)
		tui_message(t, 0, "loaded the whole trace%s", more);
	else
		tui_message(t, 0, "loaded %s to %s of the trace ([ ] on the "
		    "ruler)%s", tui_fmt_time(t, lo, a, sizeof(a)),
		    tui_fmt_time(t, hi, b, sizeof(b)), more);
}

/* Put the model of the finished load l in place. */
static void
install(struct tui *t, struct loader *l)
{
	if (l->err != 0) {
		t->ext_failed = 1;
		t->want_tid = 0;
		tui_message(t, 1, "loading more of the trace failed: %s",
		    l->cause ? l->cause : graph_strerror(l->err));
		free(l->cause);
		return;
	}
	free(l->cause);
	tui_set_model(t, l->g, l->d);
	graph_window(t->g, &t->win_from, &t->win_to);
	if (t->want_tid != 0)
		open_wanted(t);
	tui_say_window(t, "");
}

int
tui_load_around(struct tui *t, uint32_t tid, uint64_t a, uint64_t b)
{
	uint64_t lo, hi, back, from, to;

	loaded(t, &lo, &hi);
	t->want_tid = tid;
	t->want_from = a;
	t->want_to = b > a ? b : a + 1;
	if (a >= lo && b <= hi) {
		open_wanted(t);
		return R_ALL;
	}
	if (t->ext != NULL) {
		t->want_tid = 0;
		tui_message(t, 1, "more of the trace is loading: try again "
		    "when it is in place");
		return R_STATUS;
	}
	/* the history before the hang, as much as a window at the end of
	   the trace holds, and a quarter of that after it */
	back = diag_window_span(t->reader, DIAG_WINDOW_EVENTS, 0);
	from = a > back ? a - back : 0;
	to = b + back / 4 + 1;
	if (from <= t->first_ts)
		from = 0;
	if (to >= t->last_ts)
		to = UINT64_MAX;
	if (load_window(t, from, to) != 0) {
		t->want_tid = 0;
		tui_message(t, 1, "cannot load that part of the trace");
		return R_STATUS;
	}
	t->ext_failed = 0;
	tui_message(t, 0, "loading the part of the trace around that "
	    "hang...");
	return R_STATUS;
}

int
tui_extend_poll(struct tui *t, int key)
{
	struct loader *l = t->ext;
	int pct;

	if (l == NULL) {
		if (!key || !past_edge(t))
			return 0;
		if (too_big(t))
			return R_STATUS;
		grow(t);
		l = t->ext;
		if (l == NULL)
			return R_STATUS;
	}
	if (__atomic_load_n(&l->done, __ATOMIC_ACQUIRE)) {
		finish(l);
		t->ext = NULL;
		install(t, l);
		free(l);
		/* the view may still reach past an edge: the next poll
		   grows the window again */
		return R_ALL;
	}
	pct = percent(l);
	if (pct >= 0)
		tui_message(t, 0, "loading more of the trace... %d%%", pct);
	else
		tui_message(t, 0, "loading more of the trace...");
	return R_STATUS;
}

void
tui_extend_wait(struct tui *t, int keep)
{
	struct loader *l = t->ext;

	if (l == NULL)
		return;
	finish(l);
	t->ext = NULL;
	if (keep) {
		install(t, l);
	} else {
		free(l->cause);
		diag_free(l->d);
		if (l->g)
			graph_free(l->g);
	}
	free(l);
}
