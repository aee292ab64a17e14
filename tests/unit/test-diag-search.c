/*
 * test-diag-search.c: the whole-trace search in one streaming pass
 * (diag_search()) gives the report of the whole graph's diagnosis.
 *
 * Fixtures built in code and written through the real store in small
 * chunks, each diagnosed twice: diag_search() with windows of a few
 * hundred events (ARGUS_WINDOW_EVENTS), and diag_new() on the graph of
 * the whole trace, both as text. The reports must be the same, hang for
 * hang: the same hangs in the same order, the same picked similar node,
 * paths, culprits and notes (only the number of similar nodes may differ:
 * a window lists those it holds past the one picked).
 *
 * - kernel: a main thread M in an event loop asks a worker W and waits on
 *   a lock, W slow three times (M hangs, the last time for good); a
 *   second process whose main thread P polls a busy resource (refused
 *   attempts after timed sleeps: a polling hang), then runs past the
 *   threshold (a busy hang), and once waits long in its idle loop, which
 *   is no hang of its own but makes one of M's waits in its loop.
 * - sparse: the same, M asking W one time in ten only, so that the
 *   similar nodes of its hangs lie outside the first windows.
 * - marks: the same with the watchdog's hang marks, which take over.
 * - none: no thread hangs (the why of an empty report), and with --tid
 *   the longest wait of the thread named.
 * - slices: a main thread waiting in timed slices, which only a name
 *   makes a hang (the why tells of them).
 * - held: the sparse fixture with windows held to a few hundred events
 *   (ARGUS_WINDOW_MAX_EVENTS): the hangs whose answer asked for more
 *   say which part of the trace answered.
 * In all of them a ticker thread TK of M's process sleeps on a timer it
 * armed long before each of M's first two hangs and is woken by it
 * after that hang (a wake-up of the hung process; the window must reach
 * back to the start of that sleep); P blocks out of any system call
 * after each turn of its loop (a wait that no search counts).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "engine/diag-local.h"
#include "graph-fixture.h"
#include "search-fixture.h"

#define MS 1000000ULL

static struct fx F;

enum { M = 100, W = 101, IN = 102, TK = 103, P = 200 };
#define LOCK 0x1000
#define IDLE 0x2000
#define SLOW 0x3000
#define POLLA 0x4000
#define BUSYFD 7

static int sparse;	/* M asks W only one time in ten */

/* The search's text report of the fixture's trace r. */
static char *
search_text(struct trace_reader *r, const struct diag_opts *o,
    const char *max)
{
	return search_text_at(r, o, max, F.ev[0].ts);
}


static void
iteration(int hung, uint64_t wait_us, int forever, int marks, int i)
{
	fx_run(&F, 0, IN);
	fx_ev(&F, IN, TT_WAKING, M, 0, 120, 0);
	fx_block(&F, IN, M, SYS_nanosleep, 0);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_poll, 1, 0, 0);
	if (sparse && !hung && i % 10 != 0) {
		for (int k = 0; k < 8; k++) {
			fx_ev(&F, M, TT_SYS_ENTER, SYS_getpid, 0, 0, 0);
			fx_ev(&F, M, TT_SYS_EXIT, SYS_getpid, M, 0, 0);
		}
		fx_ev(&F, M, TT_SYS_ENTER, SYS_poll, POLLA, 0, 0);
		fx_ev(&F, M, TT_SWITCH, 1, 0, 120, 0);
		F.ts += 5 * MS;
		return;
	}
	if (hung && marks)
		fx_user(&F, M, TU_HANG_BEGIN, 1);
	if (!fx_lock_turn(&F, M, W, LOCK, SLOW, IDLE, hung, wait_us, forever))
		return;
	if (hung && marks)
		fx_user(&F, M, TU_HANG_END, 1);
	fx_ev(&F, M, TT_SYS_ENTER, SYS_poll, POLLA, 0, 0);
	fx_ev(&F, M, TT_SWITCH, 1, 0, 120, 0);
	F.ts += 5 * MS;
}

/* P: refused attempts on a descriptor after timed sleeps (n of them). */
static void
polling(int n)
{
	fx_run(&F, 0, P);
	for (int i = 0; i < n; i++) {
		fx_ev(&F, P, TT_SYS_ENTER, SYS_read, BUSYFD, 0, 0);
		fx_ev(&F, P, TT_SYS_EXIT, SYS_read, (uint64_t)-EAGAIN, 0, 0);
		fx_block(&F, P, 0, SYS_nanosleep, 0);
		F.ts += 4 * MS;
		fx_run(&F, 0, P);
		fx_ev(&F, P, TT_SYS_EXIT, SYS_nanosleep, 0, 0, 0);
	}
	fx_ev(&F, P, TT_SYS_ENTER, SYS_read, BUSYFD, 0, 0);
	fx_ev(&F, P, TT_SYS_EXIT, SYS_read, 10, 0, 0);
	/* then busy past the threshold, then its idle loop */
	for (int i = 0; i < 30; i++) {
		fx_ev(&F, P, TT_SYS_ENTER, SYS_getpid, 0, 0, 0);
		fx_ev(&F, P, TT_SYS_EXIT, SYS_getpid, P, 0, 0);
		F.ts += MS;
	}
	fx_block(&F, P, 0, SYS_epoll_wait, 3);
}

/* TK arms timer key and sleeps on it. */
static void
tick_arm(uint64_t key)
{
	fx_run(&F, 0, TK);
	fx_ev(&F, TK, TT_SYS_EXIT, SYS_nanosleep, 0, 0, 0);
	fx_ev(&F, TK, TT_TIMER_START, key, 0, 0, 1);
	fx_block(&F, TK, 0, SYS_nanosleep, 0);
}

/* The timer key fires in an interrupt and wakes TK, which blocks once
   out of any call before it sleeps again. */
static void
tick_fire(uint64_t key)
{
	F.ctx = TRACE_CTX_HARDIRQ;
	fx_ev(&F, 0, TT_IRQ_ENTRY, 0, 0, 0, 0);
	fx_blob(&F, "apic_timer");
	fx_ev(&F, 0, TT_TIMER_EXPIRE, key, 1, 0xfff, 0);
	fx_ev(&F, 0, TT_WAKING, TK, 0, 120, 0);
	fx_ev(&F, 0, TT_TIMER_EXPIRE_EXIT, key, 1, 0, 0);
	fx_ev(&F, 0, TT_IRQ_EXIT, 0, 1, 0, 0);
	F.ctx = TRACE_CTX_TASK;
	fx_run(&F, 0, TK);
	fx_ev(&F, TK, TT_SYS_EXIT, SYS_nanosleep, 0, 0, 0);
	fx_ev(&F, TK, TT_SWITCH, 1, 0, 120, 0);
	F.ts += 2 * MS;
	fx_run(&F, 0, TK);
	fx_block(&F, TK, 0, SYS_nanosleep, 0);
}

static void
p_loop(uint64_t wait_ms)
{
	fx_run(&F, 0, P);
	fx_ev(&F, P, TT_SYS_EXIT, SYS_epoll_wait, 1, 0, 0);
	/* a wait out of any call (a fault), which no search counts */
	fx_ev(&F, P, TT_SWITCH, 1, 0, 120, 0);
	F.ts += MS;
	fx_run(&F, 0, P);
	fx_block(&F, P, 0, SYS_epoll_wait, 3);
	F.ts += wait_ms * MS;
}

static void
fixture(int marks, int quiet)
{
	fx_init(&F);
	fx_thread(&F, M, M, "main");
	fx_thread(&F, W, M, "worker");
	fx_thread(&F, IN, M, "input");
	fx_thread(&F, TK, M, "ticker");
	fx_thread(&F, P, P, "poller");
	fx_ev(&F, M, TT_SYS_ENTER, SYS_poll, POLLA, 0, 0);
	fx_ev(&F, M, TT_SWITCH, 1, 0, 120, 0);
	fx_ev(&F, W, TT_SYS_ENTER, SYS_futex, IDLE, 0, 0);
	fx_ev(&F, W, TT_SWITCH, 1, 0, 120, 0);
	fx_ev(&F, IN, TT_SYS_ENTER, SYS_nanosleep, 0, 0, 0);
	fx_ev(&F, IN, TT_SWITCH, 1, 0, 120, 0);
	fx_block(&F, P, 0, SYS_epoll_wait, 3);
	fx_block(&F, TK, 0, SYS_nanosleep, 0);
	F.ts += 5 * MS;
	for (int i = 0; i < 140; i++) {
		int hung = !quiet && (i == 50 || i == 100);
		if (i == 2 || i == 52)
			tick_arm(0x5000 + (uint64_t)i);
		iteration(hung, hung ? 60000 : 100 + 37 * (uint64_t)(i % 7),
		    0, marks, i);
		if (i == 50 || i == 100)
			tick_fire(0x5000 + (uint64_t)i - 48);
		if (i % 10 == 3)
			p_loop(i == 73 && !quiet ? 40 : 2);
		if (i == 30 && !quiet)
			polling(8);
	}
	if (!quiet)
		iteration(1, 80000, 1, marks, 140);
}

/* The search's report and the whole graph's are the same; returns the
   number of hangs. */
static unsigned
same_report(const struct diag_opts *o, const char *what)
{
	char dir[] = "/tmp/argus-search-XXXXXX";
	struct trace_reader *r = fx_store(&F, dir);
	unsigned n;

	cr_assert_not_null(r);
	char *b = whole_text(r, o, &n);
	char *a = search_text(r, o, NULL);
	cr_assert_str_eq(normal(a), normal(b), "%s: the search says\n%s\n"
	    "the whole graph says\n%s", what, a, b);
	free(a);
	free(b);
	cr_assert_eq(fx_unstore(r, dir), 0);
	return n;
}

Test(diag_search, kernel_hangs_as_the_whole_graph)
{
	struct diag_opts o = { .threshold_ns = 10 * MS };

	fixture(0, 0);
	/* M's three lock waits, P's polling and busy stretches */
	unsigned n = same_report(&o, "kernel");
	cr_assert_geq(n, 5, "%u hangs", n);
	o.pick = 2;
	same_report(&o, "kernel, --pick 2");
	/* past the similar nodes of a window, not of the whole trace */
	o.pick = 30;
	same_report(&o, "kernel, --pick 30");
	o.pick = 0;
	o.pid = M;
	cr_assert_geq(same_report(&o, "kernel, --pid"), 3);
}

/* The similar nodes of M's hangs lie ten turns away, outside the first
   windows: they grow. */
Test(diag_search, sparse_hangs_as_the_whole_graph)
{
	struct diag_opts o = { .threshold_ns = 10 * MS };

	sparse = 1;
	fixture(0, 0);
	sparse = 0;
	unsigned n = same_report(&o, "sparse");
	cr_assert_geq(n, 5, "%u hangs", n);
}

Test(diag_search, marks_as_the_whole_graph)
{
	struct diag_opts o = { .threshold_ns = 10 * MS };

	fixture(1, 0);
	unsigned n = same_report(&o, "marks");
	cr_assert_eq(n, 3, "%u hangs", n);
}

Test(diag_search, no_hang_as_the_whole_graph)
{
	struct diag_opts o = { .threshold_ns = 10 * MS };

	fixture(0, 1);
	unsigned n = same_report(&o, "none");
	cr_assert_eq(n, 0, "%u", n);
	/* the thread named: its longest wait */
	o.tid = P;
	o.threshold_ns = MS;
	cr_assert_eq(same_report(&o, "none, --tid"), 1);
	o.tid = 0;
	o.threshold_ns = 5000 * MS;
	cr_assert_eq(same_report(&o, "none, threshold"), 0);
}

/*
 * A main thread S waits on a futex in 40 timed slices of 5 ms until its
 * holder H lets go: no hang while no thread is named, but both reports
 * without hangs tell of the slices, alike; with --tid, the same hang.
 */
Test(diag_search, timed_slices_as_the_whole_graph)
{
	enum { S = 300, H = 301 };
	struct diag_opts o = { .threshold_ns = 100 * MS };
	char dir[] = "/tmp/argus-search-XXXXXX";
	unsigned n;

	fx_init(&F);
	fx_thread(&F, S, S, "slicer");
	fx_thread(&F, H, S, "holder");
	fx_sliced(&F, S, H, 0x7100, 40, 0, 1);

	cr_assert_eq(same_report(&o, "slices"), 0);
	struct trace_reader *r = fx_store(&F, dir);
	cr_assert_not_null(r);
	char *b = whole_text(r, &o, &n);
	cr_assert_not_null(strstr(b, "slicer (300) waited 203 ms in 40 timed "
	    "slices on futex:0x7100 (a hang when its thread is named: "
	    "--tid 300)"), "%s", b);
	free(b);
	cr_assert_eq(fx_unstore(r, dir), 0);
	o.tid = S;
	cr_assert_eq(same_report(&o, "slices, --tid"), 1);
}

/* M waits for S's reply in 3 poll slices of 80 ms, then 30 ms more: one
   wait of 270 ms for the thread named, found alike by both. */
Test(diag_search, poll_slices_as_the_whole_graph)
{
	enum { PM = 310, PS = 311 };
	struct diag_opts o = { .threshold_ns = 100 * MS, .tid = PM };
	char dir[] = "/tmp/argus-search-XXXXXX";
	char dir2[] = "/tmp/argus-search-XXXXXX";
	unsigned n;

	fx_init(&F);
	fx_thread(&F, PM, PM, "client");
	fx_thread(&F, PS, PS, "server");
	fx_poll_slices(&F, PM, PS, 3);
	cr_assert_eq(same_report(&o, "poll slices, --tid"), 1);
	struct trace_reader *r = fx_store(&F, dir);
	cr_assert_not_null(r);
	char *b = whole_text(r, &o, &n);
	cr_assert_not_null(strstr(b, "in 4 timed slices"), "%s", b);
	free(b);
	cr_assert_eq(fx_unstore(r, dir), 0);
	/* not named: four short waits and no hang of the client (the
	   server's run is one), alike */
	o.tid = 0;
	same_report(&o, "poll slices");
	r = fx_store(&F, dir2);
	cr_assert_not_null(r);
	b = whole_text(r, &o, &n);
	cr_assert_null(strstr(b, ": client (310)"), "%s", b);
	free(b);
	cr_assert_eq(fx_unstore(r, dir2), 0);
}

/* The sparse fixture, stored in dir (a mkdtemp template). */
static struct trace_reader *
sparse_store(char *dir)
{
	struct trace_reader *r;

	sparse = 1;
	fixture(0, 0);
	sparse = 0;
	r = fx_store(&F, dir);
	cr_assert_not_null(r);
	return r;
}

/* Windows may not grow past ARGUS_WINDOW_MAX_EVENTS: the hangs whose
   similar nodes lie further say so rather than load the whole trace. */
Test(diag_search, held_windows_say_so)
{
	struct diag_opts o = { .threshold_ns = 10 * MS };
	char dir[] = "/tmp/argus-search-XXXXXX";

	struct trace_reader *r = sparse_store(dir);
	char *a = search_text(r, &o, "300");
	cr_assert_not_null(strstr(a, "hang 1: "), "%s", a);
	cr_assert_not_null(strstr(a, "of the trace only: it may rest on more"),
	    "%s", a);
	free(a);
	cr_assert_eq(fx_unstore(r, dir), 0);
}

/*
 * A hang that runs to the end of the trace, with other threads busy
 * long after it began: its window, held to ARGUS_WINDOW_MAX_EVENTS, ends
 * well before the trace, and still the hang lasts to the end of the
 * trace, as in the whole graph's report.
 */
Test(diag_search, held_hang_to_the_end_lasts_to_the_end)
{
	struct diag_opts o = { .threshold_ns = 10 * MS };
	char dir[] = "/tmp/argus-search-XXXXXX";

	fixture(0, 1);
	iteration(1, 80000, 1, 0, 140);
	for (int i = 0; i < 100; i++)
		p_loop(2);
	struct trace_reader *r = fx_store(&F, dir);
	cr_assert_not_null(r);
	char *b = whole_text(r, &o, NULL);
	char *a = search_text(r, &o, "300");
	/* the first line of each: thread, kind, length, start, end */
	cr_assert_not_null(strstr(b, "(still at the end of the trace)"), "%s",
	    b);
	cr_assert(strncmp(a, b, strcspn(b, "\n")) == 0,
	    "the search says\n%.200s\nthe whole graph\n%.200s", a, b);
	cr_assert_not_null(strstr(a, "of the trace only: it may rest on more"),
	    "%s", a);
	free(a);
	free(b);
	cr_assert_eq(fx_unstore(r, dir), 0);
}

/* What diag_opts.progress was told. */
struct told {
	unsigned calls;
	uint64_t done, total;
	int backwards;		/* done went down, or past total */
	int total_changed;
};

static void
on_progress(void *arg, uint64_t done, uint64_t total)
{
	struct told *t = arg;

	if (done < t->done || done > total)
		t->backwards = 1;
	if (t->calls > 0 && total != t->total)
		t->total_changed = 1;
	t->calls++;
	t->done = done;
	t->total = total;
}

/* The progress of the search: the candidates of the pass settled, from
   0 once the pass is over, never back, to all of them; windows that
   grow (the sparse fixture) settle their candidates later. */
Test(diag_search, progress_counts_the_candidates_settled)
{
	struct told t = { 0 };
	struct diag_opts o = { .threshold_ns = 10 * MS,
	    .progress = on_progress, .progress_arg = &t };
	char dir[] = "/tmp/argus-search-XXXXXX";

	struct trace_reader *r = sparse_store(dir);
	free(search_text(r, &o, NULL));
	cr_assert_geq(t.calls, 3, "%u calls", t.calls);
	cr_assert_geq(t.total, 5, "%llu candidates",
	    (unsigned long long)t.total);
	cr_assert_eq(t.done, t.total, "ended at %llu of %llu",
	    (unsigned long long)t.done, (unsigned long long)t.total);
	cr_assert_not(t.backwards);
	cr_assert_not(t.total_changed);
	cr_assert_eq(fx_unstore(r, dir), 0);
}

/* The critical path's lines of the text report s (from "critical path"
   up to the culprits), allocated. */
static char *
path_lines(const char *s)
{
	const char *a = strstr(s, "critical path"), *b;

	if (a == NULL)
		return strdup("");
	b = strstr(a, "  culprits");
	return strndup(a, b != NULL ? (size_t)(b - a) : strlen(a));
}

/*
 * A wait that begins in the last step of its group's tile and goes on
 * past the tile's end (windows held to ARGUS_WINDOW_MAX_EVENTS, so that
 * it is answered in a tile): the search answers it in the next tile,
 * which holds it whole, and its critical path is the whole graph's. A
 * busy thread on another CPU keeps the events even over the trace.
 */
Test(diag_search, wait_past_its_tile_answered_whole)
{
	enum { A = 100, B = 101, BUSY = 300 };
	struct diag_opts o = { .threshold_ns = 50 * MS };
	char dir[] = "/tmp/argus-search-XXXXXX";
	const uint64_t slot = MS;
	uint64_t t0;

	fx_init(&F);
	fx_thread(&F, A, A, "app");
	fx_thread(&F, B, A, "holder");
	fx_thread(&F, BUSY, BUSY, "busy");
	t0 = F.ts;
	/* A's short waits on the lock, each ended by B (10 ms), then one
	   of 200 ms from 650 ms: B sleeps first */
	for (int s = 0; s < 1000; s++) {
		int ms10 = s % 100 == 0, at = s / 10;
		F.ts = t0 + (uint64_t)s * slot;
		F.cpu = 1;
		fx_ev(&F, BUSY, TT_SYS_ENTER, SYS_getpid, 0, 0, 0);
		fx_ev(&F, BUSY, TT_SYS_EXIT, SYS_getpid, BUSY, 0, 0);
		F.cpu = 0;
		if (ms10 && at < 50) {
			fx_run(&F, 0, A);
			fx_block(&F, A, B, SYS_futex, LOCK);
		} else if (s % 100 == 10 && at < 51) {
			fx_ev(&F, B, TT_WAKING, A, 0, 120, 0);
			fx_block(&F, B, A, SYS_futex, IDLE);
			fx_ev(&F, A, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
			fx_ev(&F, A, TT_SYS_ENTER, SYS_poll, POLLA, 0, 0);
			fx_ev(&F, A, TT_SWITCH, 1, 0, 120, 0);
		} else if (s == 640) {
			fx_run(&F, 0, B);
			fx_block(&F, B, 0, SYS_nanosleep, 0);
		} else if (s == 650) {
			fx_run(&F, 0, A);
			fx_ev(&F, A, TT_SYS_EXIT, SYS_poll, 1, 0, 0);
			fx_block(&F, A, 0, SYS_futex, LOCK);
		} else if (s == 850) {
			fx_run(&F, 0, B);
			fx_ev(&F, B, TT_SYS_EXIT, SYS_nanosleep, 0, 0, 0);
			fx_ev(&F, B, TT_WAKING, A, 0, 120, 0);
			fx_block(&F, B, A, SYS_futex, IDLE);
			fx_ev(&F, A, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
			fx_ev(&F, A, TT_SYS_ENTER, SYS_poll, POLLA, 0, 0);
			fx_ev(&F, A, TT_SWITCH, 1, 0, 120, 0);
		}
	}
	struct trace_reader *r = fx_store(&F, dir);
	cr_assert_not_null(r);
	char *b = whole_text(r, &o, NULL);
	cr_assert_not_null(strstr(b, "hang 1: app (100) blocked"), "%s", b);
	char *pb = path_lines(b);
	cr_assert_not_null(strstr(pb, "holder (101, "), "%s", b);
	/* graphs of a third of the trace to all of it (those of less
	   cannot hold the wait, its chunks counted whole): the tiles of
	   many end inside the 200 ms wait */
	char bad[512] = "";
	for (int max = 650; max <= 2100; max += 50) {
		char m[16];
		snprintf(m, sizeof(m), "%d", max);
		char *a = search_text(r, &o, m);
		char *pa = path_lines(a);
		if (strcmp(pa, pb) != 0)
			snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad),
			    " %d", max);
		free(pa);
		free(a);
	}
	cr_assert_str_eq(bad, "", "windows held to%s events", bad);
	free(pb);
	free(b);
	cr_assert_eq(fx_unstore(r, dir), 0);
}

/*
 * Windows held to 300 events, far fewer than the turns between M's hangs
 * and the waits of the same class before them: the pass names those
 * waits (its library of similar nodes), and each hang's graph holds a
 * window around them, so that the hangs pick the similar nodes the
 * whole graph picks.
 */
Test(diag_search, held_windows_pick_as_the_whole_graph)
{
	struct diag_opts o = { .threshold_ns = 10 * MS };
	char dir[] = "/tmp/argus-search-XXXXXX";
	unsigned n;

	struct trace_reader *r = sparse_store(dir);
	char *b = whole_text(r, &o, &n);
	char *a = search_text(r, &o, "300");
	char *pa = picks(a), *pb = picks(b);
	cr_assert_geq(strlen(pb), 3 * strlen("picked #1"), "%s", b);
	cr_assert_str_eq(pa, pb, "the search says\n%s\nthe whole graph says\n"
	    "%s", a, b);
	free(pa);
	free(pb);
	free(a);
	free(b);
	cr_assert_eq(fx_unstore(r, dir), 0);
}
