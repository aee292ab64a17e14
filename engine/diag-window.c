/*
 * diag-window.c: the diagnosis at a time over a window of the trace.
 *
 * diag_at_window() builds the graph of a window around the time asked
 * (graph_build_window()), diagnoses it and asks diag_window_short()
 * whether anything the answer rests on lies near the window's edges or
 * outside: the hang's wait, the similar nodes taken, every step of the
 * slices and chains (those of the recursion's deeper levels too), the
 * culprits, and the state at that time of every
 * thread the hang was chosen among. When it does, the window grows
 * (four times further back, or to the end of the trace; to the whole
 * trace at once when the similar nodes need the thread's history) and the
 * diagnosis starts over; a window holding the whole trace is the whole
 * build, so the answer is always the one of the whole trace.
 *
 * struct span gathers the earliest and latest times an answer rests on;
 * need_end says it rests on the end of the trace (a hang that never
 * ended), need_history on waits outside the window (similar nodes
 * that older or later ones could outrank); d->needs_ends, set by the
 * rules that read what a thread did when the recording began or ended,
 * asks for the whole trace.
 *
 * diag_window_short_hang() and diag_window_short_span() ask the same of
 * one hang, or of the times a decision read, for the windows of the
 * streaming search (diag-search.c).
 */
#include <stdlib.h>
#include <string.h>

#include "diag-local.h"

struct span {
	uint64_t lo, hi;
	int need_end;
	int need_history;
};

static void
span_add(struct span *s, uint64_t ts)
{
	if (ts < s->lo)
		s->lo = ts;
	if (ts > s->hi)
		s->hi = ts;
}

/* The steps of a path: diag_span_steps() (diag-slice.c). */
static void
span_steps(const struct diag *d, struct span *s, const struct diag_step *v,
    size_t n)
{
	diag_span_steps(d, v, n, &s->lo, &s->hi);
}

/* The times hang h rests on. */
static void
span_hang(const struct diag *d, const struct dhang *h, struct span *s)
{
	const struct graph *g = d->g;

	span_add(s, h->pub.start_ns);
	if (!h->pub.ended)
		s->need_end = 1;
	else
		span_add(s, h->pub.end_ns);
	if (h->pub.node != GRAPH_NONE && h->pub.node < g->nvx)
		span_add(s, graph_vertex_start(g, h->pub.node));
	if (h->pub.kind == DIAG_BLOCKED) {
		/* the similar nodes up to the one taken must rank first
		   whatever older waits the thread had */
		size_t upto = h->picked >= 0 ? (size_t)h->picked + 1 : 1;
		/* a --pick past the list found may be in range over the
		   thread's whole history */
		if (d->o.pick > upto)
			upto = d->o.pick;
		if (h->sim.n == 0 || h->sim_sure < upto)
			s->need_history = 1;
		/* the signatures cover the runs up to each wait */
		if (h->pub.node != GRAPH_NONE && h->pub.node < g->nvx)
			span_add(s, diag_run_start(g, h->pub.node));
		for (size_t i = 0; i < upto && i < h->sim.n; i++) {
			span_add(s, diag_run_start(g, h->sim.v[i].node));
			span_add(s, h->sim.v[i].start_ns +
			    h->sim.v[i].duration_ns);
		}
	}
	span_steps(d, s, h->path.v, h->path.n);
	span_steps(d, s, h->crit.v, h->crit.n);
	if (h->deep_lo != UINT64_MAX) {
		span_add(s, h->deep_lo);
		span_add(s, h->deep_hi);
	}
	for (size_t i = 0; i < h->cul.n; i++) {
		span_add(s, h->cul.v[i].start_ns);
		span_add(s, h->cul.v[i].end_ns);
		if (h->cul.v[i].node != GRAPH_NONE &&
		    h->cul.v[i].node < g->nvx)
			span_add(s, graph_vertex_start(g, h->cul.v[i].node));
	}
	for (size_t i = 0; i < h->wk.n; i++)
		span_add(s, h->wk.v[i].ts);
	if (h->wk_lo != UINT64_MAX)
		span_add(s, h->wk_lo);
	for (size_t i = 0; i < h->stk.n; i++)
		span_add(s, h->stk.v[i].ts);
}

/*
 * The hang at a time is the longest wait at that time among the
 * threads selected: each of them must be seen from well inside the
 * window (a thread with no event in [from, at] may have been blocked
 * since before it, in a wait longer than any the window shows).
 */
static void
span_at(const struct diag *d, uint64_t from, struct span *s)
{
	const struct graph *g = d->g;
	uint64_t at = d->o.at;

	for (uint32_t ti = 0; ti < g->nth; ti++) {
		struct dwait dw;
		uint64_t ov;
		if (!diag_selected(d, ti, d->o.tid == 0 && d->o.comm == NULL))
			continue;
		if (diag_wait_overlapping(d, ti, at, at + 1, &dw, &ov)) {
			span_add(s, dw.start);
			continue;
		}
		const struct gthread *t = &g->th[ti];
		uint32_t i = diag_event_at(g, ti, at + 1);
		/* the last event at or before at, else it is unseen */
		span_add(s, i > 0 && t->ev[i - 1].ts > from ?
		    t->ev[i - 1].ts : from);
	}
}

int
diag_window_short(const struct diag *d, uint64_t *from, uint64_t *to)
{
	uint64_t a, b;

	graph_window(d->g, &a, &b);
	if (a == 0 && b == UINT64_MAX)
		return 0;
	struct span s = { UINT64_MAX, 0, 0, 0 };
	for (size_t i = 0; i < d->h.n; i++)
		span_hang(d, &d->h.v[i], &s);
	if (d->o.at != 0)
		span_at(d, a, &s);
	/* a margin of an eighth of each side: vertices cut by the
	   window's edge are never the ones an answer rests on */
	uint64_t at = d->o.at != 0 ? d->o.at : a + (b - a) / 2;
	uint64_t lm = a + (at - a) / 8, hm = b - (b - at) / 8;
	int back = a != 0 && (s.need_history || s.lo <= lm || d->h.n == 0 ||
	    d->needs_ends);
	/* candidates after the hang rank too, below those before it */
	int fwd = b != UINT64_MAX && (s.need_end || s.need_history ||
	    d->needs_ends || s.hi >= hm);
	if (!back && !fwd)
		return 0;
	*from = a;
	*to = b;
	if (back)
		*from = a > 0 && at - a < at / 4 ? at - 4 * (at - a) : 0;
	/* a thread's whole history has no bound in time */
	if (s.need_history || d->needs_ends)
		*from = 0;
	if (fwd)
		*to = UINT64_MAX;
	return 1;
}

/* The next window of a hang at time at whose answer rests on span s
   in window [a, b]: 1 and the window in *from, *to when s comes near
   the edges (an eighth of each side) or needs what lies outside. */
static int
grow(const struct diag *d, const struct span *s, uint64_t at, uint64_t a,
    uint64_t b, uint64_t *from, uint64_t *to)
{
	if (at < a)
		at = a;
	if (at > b)
		at = b;
	uint64_t lm = a + (at - a) / 8, hm = b - (b - at) / 8;
	int all = s->need_history || d->needs_ends;
	int back = a != 0 && (all || s->lo <= lm);
	int fwd = b != UINT64_MAX && (all || s->need_end || s->hi >= hm);
	/* four times further, a quarter of the window at least */
	uint64_t q = (b - a) / 4 + 1, db = at - a, df = b - at;

	if (!back && !fwd)
		return 0;
	db = db < q ? q : db;
	df = df < q ? q : df;
	*from = a;
	*to = b;
	if (back)
		*from = at / 4 > db ? at - 4 * db : 0;
	if (all)
		*from = 0;
	if (fwd)
		*to = all || s->need_end || (UINT64_MAX - at) / 4 < df ?
		    UINT64_MAX : at + 4 * df;
	return 1;
}

int
diag_window_short_hang(const struct diag *d, size_t i, uint64_t lo,
    uint64_t *from, uint64_t *to)
{
	uint64_t a, b;

	graph_window(d->g, &a, &b);
	if (a == 0 && b == UINT64_MAX)
		return 0;
	struct span s = { UINT64_MAX, 0, 0, 0 };
	const struct dhang *h = &d->h.v[i];
	span_hang(d, h, &s);
	span_add(&s, lo);
	return grow(d, &s, h->pub.start_ns, a, b, from, to);
}

int
diag_window_short_span(const struct diag *d, uint64_t lo, uint64_t hi,
    uint64_t *from, uint64_t *to)
{
	uint64_t a, b;

	graph_window(d->g, &a, &b);
	if (a == 0 && b == UINT64_MAX)
		return 0;
	struct span s = { lo, hi, 0, 0 };
	return grow(d, &s, lo + (hi - lo) / 2, a, b, from, to);
}

uint64_t
diag_window_span(struct trace_reader *r, double nev, uint64_t least)
{
	const struct trace_info *in = trace_reader_info(r);
	const char *e = getenv("ARGUS_WINDOW_EVENTS");
	uint64_t v, span = in->last_ts > in->first_ts ?
	    in->last_ts - in->first_ts : 0, back = span;

	if (e != NULL && parse_u64(e, &v) == 0 && v > 0) {
		nev = (double)v;
		least = 1;
	}
	if (in->nevents > 0 && span > 0)
		back = (uint64_t)(nev * (double)span / (double)in->nevents);
	return back < least ? least : back;
}

uint64_t
diag_window_events(struct trace_reader *r, uint64_t from, uint64_t to)
{
	uint64_t n = 0;

	for (size_t i = 0; i < trace_reader_nchunks(r); i++) {
		const struct trace_chunk_info *c = trace_reader_chunk(r, i);
		if (c->last_ts >= from && c->first_ts < to)
			n += c->count;
	}
	return n;
}

uint64_t
diag_window_max(void)
{
	const char *e = getenv("ARGUS_WINDOW_MAX_EVENTS");
	uint64_t v;

	if (e != NULL && parse_u64(e, &v) == 0 && v > 0)
		return v;
	return (uint64_t)DIAG_WINDOW_MAX_EVENTS;
}

int
diag_budget_window(struct trace_reader *r, uint64_t at, uint64_t max,
    uint64_t *from, uint64_t *to)
{
	const struct trace_info *in = trace_reader_info(r);
	uint64_t lo = in->first_ts, hi = in->last_ts, span;

	if (hi <= lo || at < lo)
		return 0;
	/* halve a window that starts as the whole trace until it fits */
	span = hi - lo;
	for (;;) {
		uint64_t back = span / 5 * 4, fwd = span / 5;
		*from = at - lo > back ? at - back : 0;
		*to = hi - at > fwd ? at + fwd : UINT64_MAX;
		if (span < 1000 || diag_window_events(r, *from, *to) <= max)
			return 1;
		span /= 2;
	}
}

void
diag_note_limited(struct diag *d, size_t i, uint64_t first, uint64_t last,
    uint64_t want, uint64_t max)
{
	uint64_t a, b;

	graph_window(d->g, &a, &b);
	a = a > first ? a : first;
	b = b < last ? b : last;
	char asked[40] = "";

	if (want > max)
		snprintf(asked, sizeof(asked), "%llu events ",
		    (unsigned long long)want);
	dnote(&d->h.v[i], "answer from %.3f s to %.3f s of the trace only: "
	    "it may rest on more, %swhere argus loads %llu events at most",
	    (double)(a - first) / 1e9, (double)(b - first) / 1e9, asked,
	    (unsigned long long)max);
}

int
diag_at_window(struct trace_reader *r, const struct rules *rules,
    const struct diag_opts *o, struct graph **gp, struct diag **dp,
    char **cause)
{
	const struct trace_info *in = trace_reader_info(r);
	uint64_t at = o->at, first = in->first_ts, last = in->last_ts;
	uint64_t from = 0, to = UINT64_MAX, capped_want = 0;
	int capped = 0;

	*gp = NULL;
	*dp = NULL;
	if (at > first && last > first && in->nevents > 0) {
		/* about DIAG_WINDOW_EVENTS events before the time and a
		   quarter of that after, and a second at least */
		uint64_t back = diag_window_span(r, DIAG_WINDOW_EVENTS,
		    1000000000ULL);
		from = at - first > back ? at - back : 0;
		to = last - at > back / 4 ? at + back / 4 : UINT64_MAX;
	}
	for (;;) {
		struct graph *g;
		struct diag *d;
		int err = graph_build_window(r, rules, from, to, &g, cause);
		if (err)
			return err;
		diag_stats_add_graph(o->stats, g);
		uint64_t t0 = now_ns();
		err = diag_new(g, o, &d, cause);
		if (o->stats != NULL)
			o->stats->analysis_ns += now_ns() - t0;
		if (err && (from != 0 || to != UINT64_MAX)) {
			/* a thread the options name may lie outside */
			if (cause != NULL) {
				free(*cause);
				*cause = NULL;
			}
			graph_free(g);
			from = 0;
			to = UINT64_MAX;
			continue;
		}
		if (err) {
			graph_free(g);
			return err;
		}
		if (!diag_window_short(d, &from, &to)) {
			*gp = g;
			*dp = d;
			return 0;
		}
		uint64_t want = diag_window_events(r, from, to), max = diag_window_max();
		if (want > max) {
			/* more than memory allows: the answer of the
			   largest window allowed, said to be one */
			uint64_t f2, t2, ga, gb;
			graph_window(g, &ga, &gb);
			if (!capped && diag_budget_window(r, at, max, &f2, &t2) &&
			    (f2 < ga || t2 > gb)) {
				capped = 1;
				diag_free(d);
				graph_free(g);
				from = f2;
				to = t2;
				capped_want = want;
				continue;
			}
			for (size_t i = 0; i < d->h.n; i++)
				diag_note_limited(d, i, first, last, capped ?
				    capped_want : want, max);
			*gp = g;
			*dp = d;
			return 0;
		}
		diag_free(d);
		graph_free(g);
	}
}
