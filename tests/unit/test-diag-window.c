/*
 * test-diag-window.c: the diagnosis at a time over a window of the trace
 * (diag_at_window()) gives the answer of the whole trace.
 *
 * The fixture, written through the real store in small chunks: a main
 * thread M in an event loop asks a worker W for something and waits on
 * a lock, about a hundred and forty times; W is slow three times (M
 * hangs), the last time for good (the hang never ends). At times spread
 * over the whole trace, the windowed diagnosis (with windows of a few
 * hundred events, ARGUS_WINDOW_EVENTS) must name the same hangs, the
 * same picked similar node, the same paths and the same culprits as the
 * diagnosis of the whole graph; and some of those windows must stay
 * windows (not grow to the whole trace), or nothing was tested.
 *
 * A window that cuts a normal run so that it looks like the hang's must
 * grow.
 *
 * graph_build_window() itself: a timer armed and a work item queued by a
 * thread before the window opens, which fire inside it, are linked to
 * that thread as in the whole build, and so is a send to a socket whose
 * receiver the window does not see; what is open when it opens is the
 * same with its lead read on two threads as on one.
 */
#include <criterion/criterion.h>

#include "graph-fixture.h"

#define MS 1000000ULL

static struct fx F;

enum { M = 100, W = 101, IN = 102 };
#define LOCK 0x1000
#define IDLE 0x2000
#define SLOW 0x3000
#define POLLA 0x4000

/* One request of M to W; hung: W waits on SLOW for wait_us first (and
   for good when forever). */
static void
iteration(int hung, uint64_t wait_us, int forever)
{
	fx_run(&F, 0, IN);
	fx_ev(&F, IN, TT_WAKING, M, 0, 120, 0);
	fx_block(&F, IN, M, SYS_nanosleep, 0);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_poll, 1, 0, 0);
	if (!fx_lock_turn(&F, M, W, LOCK, SLOW, IDLE, hung, wait_us, forever))
		return;
	fx_ev(&F, M, TT_SYS_ENTER, SYS_poll, POLLA, 0, 0);
	fx_ev(&F, M, TT_SWITCH, 1, 0, 120, 0);
	F.ts += 5 * MS;
}

static void
fixture(void)
{
	fx_init(&F);
	fx_thread(&F, M, M, "main");
	fx_thread(&F, W, M, "worker");
	fx_thread(&F, IN, M, "input");
	fx_ev(&F, M, TT_SYS_ENTER, SYS_poll, POLLA, 0, 0);
	fx_ev(&F, M, TT_SWITCH, 1, 0, 120, 0);
	fx_ev(&F, W, TT_SYS_ENTER, SYS_futex, IDLE, 0, 0);
	fx_ev(&F, W, TT_SWITCH, 1, 0, 120, 0);
	fx_ev(&F, IN, TT_SYS_ENTER, SYS_nanosleep, 0, 0, 0);
	fx_ev(&F, IN, TT_SWITCH, 1, 0, 120, 0);
	F.ts += 5 * MS;
	for (int i = 0; i < 140; i++) {
		int hung = i == 50 || i == 100;
		iteration(hung, hung ? 60000 : 100 + 37 * (uint64_t)(i % 7),
		    0);
	}
	iteration(1, 80000, 1);
}

static void
same_steps(const struct diag *a, const struct diag *b, size_t h, int crit)
{
	size_t n = crit ? diag_ncritical(a, h) : diag_npath(a, h);

	cr_assert_eq(n, crit ? diag_ncritical(b, h) : diag_npath(b, h));
	for (size_t i = 0; i < n; i++) {
		const struct diag_step *x = crit ? diag_critical(a, h, i) :
		    diag_path(a, h, i), *y = crit ? diag_critical(b, h, i) :
		    diag_path(b, h, i);
		cr_assert_eq(x->th.tid, y->th.tid);
		cr_assert_eq(x->ts, y->ts);
		cr_assert_eq(x->edge, y->edge);
		cr_assert_eq(x->input, y->input);
	}
}

/* The answers of a and b are the same: hangs, picks, paths, culprits. */
static void
same_answer(const struct diag *a, const struct diag *b, uint64_t at)
{
	cr_assert_eq(diag_nhangs(a), diag_nhangs(b), "at %lu",
	    (unsigned long)at);
	for (size_t h = 0; h < diag_nhangs(a); h++) {
		const struct diag_hang *x = diag_hang(a, h),
		    *y = diag_hang(b, h);
		cr_assert_eq(x->th.tid, y->th.tid);
		cr_assert_eq(x->start_ns, y->start_ns, "at %lu",
		    (unsigned long)at);
		cr_assert_eq(x->end_ns, y->end_ns);
		cr_assert_eq(x->kind, y->kind);
		cr_assert_eq(x->ended, y->ended);
		cr_assert_str_eq(x->wait.resource, y->wait.resource);
		long p = diag_picked(a, h);
		cr_assert_eq(p, diag_picked(b, h), "at %lu",
		    (unsigned long)at);
		if (p >= 0) {
			const struct diag_similar *s = diag_similar(a, h,
			    (size_t)p), *t = diag_similar(b, h, (size_t)p);
			cr_assert_eq(s->start_ns, t->start_ns, "at %lu",
			    (unsigned long)at);
			cr_assert_eq(s->duration_ns, t->duration_ns);
			cr_assert_str_eq(s->differs, t->differs);
		}
		same_steps(a, b, h, 0);
		same_steps(a, b, h, 1);
		cr_assert_eq(diag_nculprits(a, h), diag_nculprits(b, h));
		for (size_t i = 0; i < diag_nculprits(a, h); i++) {
			const struct diag_culprit *c = diag_culprit(a, h, i),
			    *d = diag_culprit(b, h, i);
			cr_assert_eq(c->th.tid, d->th.tid);
			cr_assert_eq(c->kind, d->kind);
			cr_assert_eq(c->depth, d->depth);
			cr_assert_eq(c->parent, d->parent);
			cr_assert_eq(c->start_ns, d->start_ns);
			cr_assert_eq(c->end_ns, d->end_ns);
			cr_assert_str_eq(c->wait.resource, d->wait.resource);
		}
		cr_assert_eq(diag_cycle(a, h) == NULL, diag_cycle(b, h) == NULL);
	}
}

Test(diag_window, same_answers_as_the_whole_trace)
{
	char dir[] = "/tmp/argus-window-XXXXXX";
	struct trace_reader *r;
	char *cause = NULL;
	struct graph *whole;

	fixture();
	cr_assert_not_null(r = fx_store(&F, dir));
	cr_assert_eq(graph_build(r, NULL, &whole, &cause), 0, "%s", cause);

	cr_assert_eq(setenv("ARGUS_WINDOW_EVENTS", "300", 1), 0);
	uint64_t first = F.ev[0].ts, last = F.ev[F.n - 1].ts;
	unsigned windows = 0, wholes = 0, hangs = 0, hang_windows = 0;
	for (uint64_t at = first + 3 * MS; at < last; at += 7 * MS + 311) {
		struct diag_opts dop = { .threshold_ns = 10 * MS, .at = at };
		struct diag *dw, *dfull;
		struct graph *g;
		cr_assert_eq(diag_at_window(r, NULL, &dop, &g, &dw, &cause),
		    0, "%s", cause);
		cr_assert_eq(diag_new(whole, &dop, &dfull, &cause), 0);
		same_answer(dw, dfull, at);
		uint64_t a, b;
		graph_window(g, &a, &b);
		if (a == 0 && b == UINT64_MAX)
			wholes++;
		else
			windows++;
		if (diag_nhangs(dw) > 0 &&
		    diag_hang(dw, 0)->end_ns - diag_hang(dw, 0)->start_ns >
		    50 * MS) {
			hangs++;
			hang_windows += a != 0;
		}
		diag_free(dw);
		diag_free(dfull);
		graph_free(g);
	}
	unsetenv("ARGUS_WINDOW_EVENTS");
	/* the three hangs were asked about, and the two that ended were
	   diagnosed from windows (those of the idle loop have no similar
	   node in the window, and need the whole history) */
	cr_assert_geq(hangs, 3, "hangs %u", hangs);
	cr_assert_geq(hang_windows, 2, "hangs %u, in windows %u", hangs,
	    hang_windows);
	cr_assert_gt(windows, 0);
	cr_assert_gt(wholes, 0);
	graph_free(whole);
	cr_assert_eq(fx_unstore(r, dir), 0);
}

/* The edges of kind into the vertices of thread tid; src gets the tid of
   the last one's source. */
static unsigned
edges_into(const struct graph *g, uint32_t tid, unsigned kind, uint32_t *src)
{
	unsigned n = 0;

	for (uint32_t e = 0; e < graph_nedges(g); e++) {
		const struct graph_edge *x = graph_edge(g, e);
		const struct graph_vertex *d = graph_vertex(g, x->dst);
		if (x->kind != kind ||
		    graph_thread(g, d->thread)->tid != tid)
			continue;
		n++;
		*src = graph_thread(g, graph_vertex(g, x->src)->thread)->tid;
	}
	return n;
}

Test(graph_window, timer_and_work_set_before_it_link_into_it)
{
	enum { A = 10, B = 11, KW = 12 };
	char dir[] = "/tmp/argus-gwindow-XXXXXX";
	char *cause = NULL;
	struct trace_reader *r;
	struct graph *g;
	uint32_t src = 0;

	fx_init(&F);
	fx_thread(&F, A, A, "arm");
	fx_thread(&F, B, B, "filler");
	fx_thread(&F, KW, KW, "kworker/0:1");
	F.th[2].flags = TRACE_THREAD_KERNEL;
	fx_ev(&F, A, TT_SYS_ENTER, SYS_nanosleep, 0, 0, 0);
	fx_ev(&F, A, TT_TIMER_START, 0x77, 0, 0, 1);
	fx_ev(&F, A, TT_WQ_QUEUE, 0x88, 0, 0, 0);
	fx_blob(&F, "events");
	fx_ev(&F, A, TT_SWITCH, 1, 0, 120, 0);
	uint64_t from = F.ts + 20 * MS;
	for (int i = 0; i < 200; i++) {
		fx_ev(&F, B, TT_SYS_ENTER, SYS_getpid, 0, 0, 0);
		fx_ev(&F, B, TT_SYS_EXIT, SYS_getpid, B, 0, 0);
		F.ts += MS;
	}
	fx_timer_wake(&F, 0x77, A);
	fx_run(&F, 0, KW);
	fx_ev(&F, KW, TT_WQ_START, 0x88, 0, 0, 0);
	fx_ev(&F, KW, TT_WQ_END, 0x88, 0, 0, 0);
	fx_run(&F, KW, A);
	fx_ev(&F, A, TT_SYS_EXIT, SYS_nanosleep, 0, 0, 0);
	cr_assert_not_null(r = fx_store(&F, dir));

	/* the window opens 20 ms after both were set, its lead (a
	   quarter of it) reaches back to them */
	cr_assert_eq(graph_build_window(r, NULL, from, UINT64_MAX, &g,
	    &cause), 0, "%s", cause);
	uint64_t a, b;
	graph_window(g, &a, &b);
	cr_assert_eq(a, from);
	cr_assert_eq(edges_into(g, KW, GE_WORK, &src), 1);
	cr_assert_eq(src, A);
	size_t n = graph_nthreads(g);
	unsigned timers = 0;
	for (uint32_t ti = 0; ti < n; ti++)
		timers += edges_into(g, graph_thread(g, ti)->tid, GE_TIMER,
		    &src);
	cr_assert_eq(timers, 1);
	cr_assert_eq(src, A);
	graph_free(g);
	cr_assert_eq(fx_unstore(r, dir), 0);
}

/*
 * A send whose socket's receiver is known only from before the window:
 * S received from Q (its open vertex's peer is Q), then sends on the
 * socket P last received from, 20 ms before the window opens. The send
 * has another peer, so it begins a vertex of S, in the window's graph as
 * in the whole one (the lead tells the window who owns the socket). The
 * same for T, which writes to a pipe P read from before the window.
 */
Test(graph_window, send_to_a_socket_read_before_it_has_its_peer)
{
	enum { P = 20, Q = 30, S = 40, T = 50, B = 11 };
	char dir[] = "/tmp/argus-gwindow-XXXXXX";
	char *cause = NULL;
	struct trace_reader *r;
	struct graph *g;

	fx_init(&F);
	fx_thread(&F, P, P, "owner");
	fx_thread(&F, Q, Q, "asker");
	fx_thread(&F, S, S, "server");
	fx_thread(&F, T, T, "writer");
	fx_thread(&F, B, B, "filler");
	F.cpu = TRACE_CPU_META;
	fx_ev(&F, 0, TT_FD, P, 9, TFD_PIPE, 0x61);
	fx_ev(&F, 0, TT_FD, T, 4, TFD_PIPE, 0x61);
	F.cpu = 0;
	fx_ev(&F, P, TT_SYS_ENTER, SYS_read, 5, 0, 0);
	fx_ev(&F, P, TT_SOCK_RECV, 0x51, 1, 0, 12);
	fx_ev(&F, P, TT_SYS_EXIT, SYS_read, 12, 0, 0);
	fx_ev(&F, P, TT_SYS_ENTER, SYS_read, 9, 0, 0);
	fx_ev(&F, P, TT_SYS_EXIT, SYS_read, 8, 0, 0);
	uint64_t from = F.ts + 20 * MS;
	for (int i = 0; i < 30; i++) {
		fx_ev(&F, B, TT_SYS_ENTER, SYS_getpid, 0, 0, 0);
		fx_ev(&F, B, TT_SYS_EXIT, SYS_getpid, B, 0, 0);
		F.ts += MS;
	}
	fx_ev(&F, Q, TT_SK_DATA_READY, 0x52, 1, 0, 0);
	fx_ev(&F, S, TT_SYS_ENTER, SYS_read, 6, 0, 0);
	fx_ev(&F, S, TT_SOCK_RECV, 0x52, 1, 0, 12);
	fx_ev(&F, S, TT_SYS_EXIT, SYS_read, 12, 0, 0);
	fx_ev(&F, S, TT_SYS_ENTER, SYS_write, 7, 0, 0);
	uint64_t send = fx_ev(&F, S, TT_SK_DATA_READY, 0x51, 1, 0, 0);
	fx_ev(&F, S, TT_SYS_EXIT, SYS_write, 12, 0, 0);
	fx_ev(&F, Q, TT_SK_DATA_READY, 0x53, 1, 0, 0);
	fx_ev(&F, T, TT_SYS_ENTER, SYS_read, 6, 0, 0);
	fx_ev(&F, T, TT_SOCK_RECV, 0x53, 1, 0, 12);
	fx_ev(&F, T, TT_SYS_EXIT, SYS_read, 12, 0, 0);
	fx_ev(&F, T, TT_SYS_ENTER, SYS_write, 4, 0, 0);
	uint64_t wr = fx_ev(&F, T, TT_SYS_EXIT, SYS_write, 8, 0, 0);
	for (int i = 0; i < 200; i++) {
		fx_ev(&F, B, TT_SYS_ENTER, SYS_getpid, 0, 0, 0);
		fx_ev(&F, B, TT_SYS_EXIT, SYS_getpid, B, 0, 0);
		F.ts += MS;
	}
	cr_assert_not_null(r = fx_store(&F, dir));

	cr_assert_eq(graph_build(r, NULL, &g, &cause), 0, "%s", cause);
	cr_assert_eq(graph_vertex_start(g, graph_vertex_at(g, S, send)),
	    send, "the whole build splits at the send");
	cr_assert_eq(graph_vertex_start(g, graph_vertex_at(g, T, wr)), wr,
	    "and at the write");
	graph_free(g);
	cr_assert_eq(graph_build_window(r, NULL, from, UINT64_MAX, &g,
	    &cause), 0, "%s", cause);
	uint64_t a, b;
	graph_window(g, &a, &b);
	cr_assert_eq(a, from);
	cr_assert_eq(graph_vertex_start(g, graph_vertex_at(g, S, send)),
	    send);
	cr_assert_eq(graph_vertex_start(g, graph_vertex_at(g, T, wr)), wr);
	graph_free(g);
	cr_assert_eq(fx_unstore(r, dir), 0);
}

/* What a window's graph of r from from holds before from, per thread:
   "tid:type@ts" items, ARGUS_LOAD_THREADS as given (NULL: unset). */
static char *
before_window(struct trace_reader *r, uint64_t from, const char *threads)
{
	char *cause = NULL, *out = NULL;
	size_t len = 0;
	struct graph *g;
	FILE *f = open_memstream(&out, &len);

	cr_assert_not_null(f);
	if (threads != NULL)
		cr_assert_eq(setenv("ARGUS_LOAD_THREADS", threads, 1), 0);
	cr_assert_eq(graph_build_window(r, NULL, from, UINT64_MAX, &g,
	    &cause), 0, "%s", cause);
	unsetenv("ARGUS_LOAD_THREADS");
	for (uint32_t ti = 0; ti < graph_nthreads(g); ti++) {
		const struct graph_thread *t = graph_thread(g, ti);
		for (uint32_t i = 0; i < t->nevents; i++) {
			const struct graph_event *e = graph_event(g, ti, i);
			if (e->ts < from)
				fprintf(f, "%u:%u@%llu ", t->tid, e->type,
				    (unsigned long long)e->ts);
		}
	}
	fclose(f);
	graph_free(g);
	return out;
}

/*
 * The lead before a window is read chunk by chunk on two threads, each
 * chunk on one of them in turn: what is open when the window opens
 * follows the last event of each call, timer and work item as the time
 * merge orders them, across CPUs and chunks, even at equal times (the
 * lower CPU first). X's call closed on another CPU, Y's is open (an exit
 * before it), Z's exit and entry come at the same time on CPUs 0 and 1
 * (so the entry is last: open); a timer armed and cancelled from an
 * interrupt is not pending, one armed again after it fired is.
 */
Test(graph_window, lead_on_two_threads_as_on_one)
{
	enum { X = 20, Y = 21, Z = 22, FL = 23 };
	char dir[] = "/tmp/argus-glead-XXXXXX";
	struct trace_reader *r;

	fx_init(&F);
	fx_thread(&F, X, X, "x");
	fx_thread(&F, Y, Y, "y");
	fx_thread(&F, Z, Z, "z");
	fx_thread(&F, FL, FL, "filler");
	uint64_t t0 = F.ts;
	/* filler on both CPUs, so that the lead spans many chunks */
	for (int i = 0; i < 600; i++) {
		F.cpu = (unsigned)(i & 1);
		fx_ev(&F, FL, i & 2 ? TT_SYS_EXIT : TT_SYS_ENTER, SYS_getpid,
		    0, 0, 0);
		if (i == 100) {
			F.cpu = 0;
			fx_ev(&F, X, TT_SYS_ENTER, SYS_read, 3, 0, 0);
			fx_ev(&F, Y, TT_SYS_ENTER, SYS_read, 4, 0, 0);
			fx_ev(&F, X, TT_TIMER_START, 0x71, 0, 0, 1);
			fx_ev(&F, Y, TT_TIMER_START, 0x72, 0, 0, 1);
		}
		if (i == 300) {
			F.cpu = 1;
			fx_ev(&F, X, TT_SYS_EXIT, SYS_read, 0, 0, 0);
			fx_ev(&F, Y, TT_SYS_EXIT, SYS_read, 0, 0, 0);
			F.ctx = TRACE_CTX_HARDIRQ;
			fx_ev(&F, 0, TT_TIMER_CANCEL, 0x71, 0, 0, 0);
			fx_ev(&F, 0, TT_TIMER_EXPIRE, 0x72, 1, 0, 0);
			F.ctx = TRACE_CTX_TASK;
		}
		if (i == 400) {
			F.cpu = 0;
			fx_ev(&F, Y, TT_SYS_ENTER, SYS_write, 5, 0, 0);
			fx_ev(&F, Y, TT_TIMER_START, 0x72, 0, 0, 1);
			fx_ev(&F, Z, TT_SYS_ENTER, SYS_poll, 0, 0, 0);
			/* Z: an exit on CPU 0 and an entry on CPU 1 at one
			   time */
			fx_ev(&F, Z, TT_SYS_EXIT, SYS_poll, 0, 0, 0);
			F.cpu = 1;
			fx_ev(&F, Z, TT_SYS_ENTER, SYS_read, 6, 0, 0);
			F.ev[F.n - 1].ts = F.ev[F.n - 2].ts;
		}
	}
	uint64_t from = F.ts + 1000;
	for (int i = 0; i < 200; i++)
		fx_ev(&F, FL, TT_SYS_ENTER, SYS_getpid, 0, 0, 0);
	F.ts += 5 * MS;
	fx_ev(&F, FL, TT_SYS_ENTER, SYS_getpid, 0, 0, 0);
	cr_assert_not_null(r = fx_store(&F, dir));
	cr_assert_gt(trace_reader_nchunks(r), 8);
	/* the lead is a quarter of the window: it reaches back to t0 */
	cr_assert_lt(from - (F.ts - from) / 4, t0 + 1000);

	char *one = before_window(r, from, "1");
	char *two = before_window(r, from, NULL);
	cr_assert_str_eq(two, one);
	char want[64];
	snprintf(want, sizeof(want), "%u:%u@", X, TT_SYS_ENTER);
	cr_assert_null(strstr(one, want), "X's call closed: %s", one);
	snprintf(want, sizeof(want), "%u:%u@", Y, TT_SYS_ENTER);
	cr_assert_not_null(strstr(one, want), "Y's call open: %s", one);
	snprintf(want, sizeof(want), "%u:%u@", Z, TT_SYS_ENTER);
	cr_assert_not_null(strstr(one, want), "Z's call open: %s", one);
	snprintf(want, sizeof(want), "%u:%u@", X, TT_TIMER_START);
	cr_assert_null(strstr(one, want), "X's timer cancelled: %s", one);
	snprintf(want, sizeof(want), "%u:%u@", Y, TT_TIMER_START);
	cr_assert_not_null(strstr(one, want), "Y's timer pending: %s", one);
	free(one);
	free(two);
	cr_assert_eq(fx_unstore(r, dir), 0);
}

/* The span of nev events at the trace's average rate, least at least;
   ARGUS_WINDOW_EVENTS replaces nev and lifts least. */
Test(diag_window, span_of_events)
{
	char dir[] = "/tmp/argus-wspan-XXXXXX";
	struct trace_reader *r;

	fx_init(&F);
	fx_thread(&F, 10, 10, "t");
	for (int i = 0; i < 1000; i++)
		fx_ev(&F, 10, TT_SYS_ENTER, SYS_getpid, 0, 0, 0);
	cr_assert_not_null(r = fx_store(&F, dir));
	const struct trace_info *in = trace_reader_info(r);
	uint64_t span = in->last_ts - in->first_ts;
	unsetenv("ARGUS_WINDOW_EVENTS");
	uint64_t half = diag_window_span(r, 500.0, 0);
	cr_assert(half >= span / 2 - span / 100 && half <= span / 2 + span / 100,
	    "%lu of %lu", (unsigned long)half, (unsigned long)span);
	cr_assert_eq(diag_window_span(r, 500.0, 10 * span), 10 * span);
	cr_assert_eq(setenv("ARGUS_WINDOW_EVENTS", "100", 1), 0);
	uint64_t tenth = diag_window_span(r, 500.0, 10 * span);
	unsetenv("ARGUS_WINDOW_EVENTS");
	cr_assert(tenth >= span / 10 - span / 100 &&
	    tenth <= span / 10 + span / 100, "%lu", (unsigned long)tenth);
	cr_assert_eq(fx_unstore(r, dir), 0);
}

enum { P = 103 };
#define SKP 0x8001

/*
 * A run of M with the similar-node signature of the hang (calls getpid
 * and getuid after its poll) or not (getppid first), cut by P's message
 * (a vertex boundary: M talks to another process there), then a lock
 * turn with W, slow for wait_us. gap_us passes after the first call.
 * Returns the time of the first call.
 */
static uint64_t
cut_run(int like_hang, uint64_t gap_us, int hung, uint64_t wait_us)
{
	fx_run(&F, 0, IN);
	fx_ev(&F, IN, TT_WAKING, M, 0, 120, 0);
	fx_block(&F, IN, M, SYS_nanosleep, 0);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_poll, 1, 0, 0);
	uint64_t first = fx_ev(&F, M, TT_SYS_ENTER, like_hang ? SYS_getpid :
	    SYS_getppid, 0, 0, 0);
	fx_ev(&F, M, TT_SYS_EXIT, like_hang ? SYS_getpid : SYS_getppid, 0,
	    0, 0);
	F.ts += gap_us * 1000;
	if (gap_us != 0) {
		/* P wakes and waits again: its wait begins after the cut */
		fx_run(&F, M, P);
		fx_nap(&F, P, 0, 0, M);
	}
	if (!like_hang) {
		fx_ev(&F, M, TT_SYS_ENTER, SYS_getpid, 0, 0, 0);
		fx_ev(&F, M, TT_SYS_EXIT, SYS_getpid, 0, 0, 0);
	}
	fx_run(&F, M, P);
	fx_nap(&F, P, SKP, 0, M);
	fx_ev(&F, M, TT_SOCK_RECV, SKP, 1, 0, 10);
	fx_ev(&F, M, TT_SYS_ENTER, SYS_getuid, 0, 0, 0);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_getuid, 0, 0, 0);
	fx_lock_turn(&F, M, W, LOCK, SLOW, IDLE, hung, wait_us, 0);
	fx_block(&F, M, 0, SYS_poll, POLLA);
	F.ts += 5 * MS;
	return first;
}

/* A window that cuts a normal run after its first call makes it look
   like the hang's, and picks it: the answer rests on that run's start,
   and the window must grow (the whole trace picks the one run really
   like the hang). */
Test(diag_window, a_cut_run_grows_the_window)
{
	char dir[] = "/tmp/argus-wcut-XXXXXX";
	struct trace_reader *r;
	char *cause = NULL;
	struct graph *whole, *g;
	struct diag *dw, *dfull;

	fx_init(&F);
	fx_thread(&F, M, M, "main");
	fx_thread(&F, W, M, "worker");
	fx_thread(&F, IN, M, "input");
	fx_thread(&F, P, P, "peer");
	fx_block(&F, M, 0, SYS_poll, POLLA);
	fx_block(&F, W, 0, SYS_futex, IDLE);
	fx_block(&F, IN, 0, SYS_nanosleep, 0);
	fx_block(&F, P, 0, SYS_nanosleep, 0);
	F.ts += 5 * MS;
	uint64_t like = cut_run(1, 0, 0, 100);
	cut_run(0, 0, 0, 120);
	uint64_t cut = cut_run(0, 20000, 0, 140);
	cut_run(0, 0, 0, 160);
	cut_run(1, 0, 1, 60000);
	uint64_t at = F.ts - 35 * MS;	/* in the hang's wait */
	cut_run(0, 0, 0, 100);
	cr_assert_not_null(r = fx_store(&F, dir));
	cr_assert_eq(graph_build(r, NULL, &whole, &cause), 0, "%s", cause);

	struct diag_opts o = { .threshold_ns = 10 * MS, .at = at, .tid = M };
	cr_assert_eq(diag_new(whole, &o, &dfull, &cause), 0);
	cr_assert_eq(diag_nhangs(dfull), 1);
	cr_assert_geq(diag_picked(dfull, 0), 0, "kind %d, %zu similar, wait %s",
	    diag_hang(dfull, 0)->kind, diag_nsimilar(dfull, 0),
	    diag_hang(dfull, 0)->wait.resource);
	const struct diag_similar *s = diag_similar(dfull, 0,
	    (size_t)diag_picked(dfull, 0));
	cr_assert(s->start_ns <= like + 2 * MS && like < s->start_ns +
	    s->duration_ns, "the whole trace picks the run like the hang's "
	    "(got %llu, it began at %llu)", (unsigned long long)s->start_ns,
	    (unsigned long long)like);

	/* the window opens just after the cut run's first call */
	uint64_t from = cut + 1500, to = UINT64_MAX;
	cr_assert_eq(graph_build_window(r, NULL, from, UINT64_MAX, &g, &cause),
	    0, "%s", cause);
	cr_assert_eq(diag_new(g, &o, &dw, &cause), 0);
	cr_assert_eq(diag_nhangs(dw), 1);
	/* the window alone takes the cut run for one like the hang's */
	cr_assert_eq(diag_picked(dw, 0), 0);
	s = diag_similar(dw, 0, 0);
	cr_assert(s->start_ns > cut && s->start_ns < cut + 25 * MS,
	    "the window picks the cut run (got %llu, cut at %llu)",
	    (unsigned long long)s->start_ns, (unsigned long long)cut);
	cr_assert_eq(diag_window_short(dw, &from, &to), 1,
	    "the answer rests on the start of a run the window cut");
	diag_free(dw);
	graph_free(g);
	diag_free(dfull);
	graph_free(whole);
	cr_assert_eq(fx_unstore(r, dir), 0);
}
