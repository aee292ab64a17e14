/*
 * diag-search.c: the diagnosis of a whole trace without the graph of
 * the whole trace (diag_search()).
 *
 * The streaming search (diag-scan.c) gives the candidate hangs. Each
 * candidate gets a window of the trace around it (struct wcand: the
 * candidate and its window); neighbours whose windows overlap share one
 * graph, as long as the merged window stays a few windows long (a
 * group, group_of()). In each graph the candidates are made into hangs
 * as the search of the whole graph makes them (diag_listed_hangs()) and
 * analyzed; a hang whose answer rests on nothing near the window's edges
 * is written out at once (struct done: where its report, text or JSON,
 * lies in a temporary file, and what the order of the report needs),
 * the others go back with a grown window, up to the whole trace. A wait
 * that the graph says is no hang must have been decided well inside the
 * window too. When a quarter of the candidates tried need the whole
 * trace (similar nodes that need the thread's whole history), the rest
 * go straight to that one graph.
 *
 * The hangs done are then put in the order diag_find_hangs() gives
 * those of the whole graph (diag-search-report.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "diag-search-local.h"

#define SEARCH_EVENTS 300000.0		/* events before a candidate */
#define TILE_STEPS 3			/* steps of candidates in a tile */

static int tile(const struct search *s, uint64_t at, uint64_t max,
    uint64_t *from, uint64_t *to);

/* The first window of candidate k, into s->todo; or, when it would hold
   more than the bound of a graph (a long hang in a busy trace), its tile,
   into s->tiles. */
static void
first_window(struct search *s, size_t k)
{
	const struct dcand *c = &s->c[k];
	uint64_t lo = cand_lo(c), len = c->b - c->a, want;
	struct wcand w = { .c = k, .from = 0, .to = UINT64_MAX };

	if (lo > s->first + s->back)
		w.from = lo - s->back;
	if (c->b + len + s->back / 4 < s->last)
		w.to = c->b + len + s->back / 4;
	if (s->max != UINT64_MAX &&
	    (want = diag_window_events(s->r, w.from, w.to)) > s->max &&
	    tile(s, c->a, s->max, &w.from, &w.to)) {
		w.want = want;
		DPUSH(s->tiles, w);
		return;
	}
	DPUSH(s->todo, w);
}

static int
by_from(const void *x, const void *y)
{
	const struct wcand *a = x, *b = y;

	if (a->from != b->from)
		return a->from < b->from ? -1 : 1;
	return a->c < b->c ? -1 : a->c > b->c;
}

/* Tell the caller how far the search is (o->progress). */
static void
progress(struct search *s)
{
	if (s->settled > s->total)
		s->total = s->settled;
	if (s->o->progress != NULL)
		s->o->progress(s->o->progress_arg, s->settled, s->total);
}

/*
 * What the graph of one group gave (run_group()), put into the search
 * by apply(): the reports kept (written to the spill file), the
 * candidates sent back to a larger window, and the counts.
 */
struct gres {
	DARR(struct done) done;
	DARR(struct wcand) next, tiles;
	size_t tried, wholes, unsure;
	uint64_t settled;
	int err;
	char *cause;
};

static void
gres_free(struct gres *x)
{
	for (size_t i = 0; i < x->done.n; i++)
		free(x->done.v[i].cul.v);
	free(x->done.v);
	free(x->next.v);
	free(x->tiles.v);
	free(x->cause);
	memset(x, 0, sizeof(*x));
}

/* Keep hang i of d: its report and what orders it. */
static void
keep(const struct search *s, FILE *f, struct gres *out, const struct diag *d,
    size_t i)
{
	const struct dhang *h = &d->h.v[i];
	struct done x;

	memset(&x, 0, sizeof(x));
	x.source = h->pub.source;
	x.rank = h->rank;
	x.loop = h->loop;
	x.start = h->pub.start_ns;
	x.end = h->pub.end_ns;
	x.tid = h->pub.th.tid;
	x.timed_out = h->dw.w.timed_out;
	for (size_t k = 0; k < diag_nculprits(d, i); k++) {
		const struct diag_culprit *c = diag_culprit(d, i, k);
		struct dcul u = { c->th.tid, c->start_ns, c->end_ns };
		DPUSH(x.cul, u);
	}
	x.off = ftell(f);
	if (s->json)
		diag_write_hang_json(d, i, f);
	else
		diag_write_hang_text_n(d, i, 0, f, s->base);
	x.len = (size_t)(ftell(f) - x.off);
	DPUSH(out->done, x);
}

/*
 * The largest window allowed for candidate time at: the trace cut in
 * steps of a (TILE_STEPS + 1)th of the span of max events (at its
 * average rate), in groups of TILE_STEPS; the tile of a group is its
 * steps and the one before, so that the candidates of a group share one
 * graph with a step of history at least, and each step is built
 * (TILE_STEPS + 1) / TILE_STEPS times. Steps shrink by an eighth while
 * the tile holds more than max events (the chunks cut by its edges
 * count whole, and events may come faster there than on average): the
 * candidates of one group still share it. 0 when the trace has no time.
 */
static int
tile(const struct search *s, uint64_t at, uint64_t max, uint64_t *from,
    uint64_t *to)
{
	const struct trace_info *in = trace_reader_info(s->r);
	uint64_t first = in->first_ts, last = in->last_ts, step, k;

	if (last <= first || in->nevents == 0 || at < first)
		return 0;
	step = (uint64_t)((double)(last - first) * (double)max /
	    (double)in->nevents / (TILE_STEPS + 1));
	for (; step > 0; step -= step / 8 > 0 ? step / 8 : 1) {
		k = (at - first) / step / TILE_STEPS * TILE_STEPS;
		*from = k > 0 ? first + (k - 1) * step : 0;
		*to = first + (k + TILE_STEPS) * step;
		if (*to >= last)
			*to = UINT64_MAX;
		if (diag_window_events(s->r, *from, *to) <= max)
			return 1;
	}
	return diag_budget_window(s->r, at, max, from, to);
}

/*
 * Window w (of candidate time at) asked to grow past the events a window
 * may hold (diag_window_max()): 0 with w set to the largest window
 * allowed when that is larger than [a, b], the graph's; 1 when the
 * answer of [a, b] must do (w->want says what it asked for).
 */
static int
held(const struct search *s, struct wcand *w, uint64_t at, uint64_t a, uint64_t b)
{
	uint64_t max = s->max, f, t;
	uint64_t want = diag_window_events(s->r, w->from, w->to);

	/* a trace past the bound: a window that must grow goes to its
	   tile at once (growing by steps costs a pass over the trace a
	   step) */
	if (want <= max && (w->want != 0 || s->nevents <= max))
		return 0;
	if (w->want == 0 && tile(s, at, max, &f, &t) && (f < a || t > b)) {
		w->from = f;
		w->to = t;
		w->want = want;
		return 0;
	}
	if (w->want == 0)
		w->want = want;
	return 1;
}

/* The candidates v[0..n) in the graph of window [from, to], into out,
   their reports to f: those done are kept, the others go to out->next
   or out->tiles with a grown window (up to the bound of a window's
   events). Reads s, changes nothing of it. */
static void
run_group(const struct search *s, const struct wcand *v, size_t n,
    uint64_t from, uint64_t to, FILE *f, struct gres *out)
{
	struct graph *g;
	struct diag *d;
	struct dcand *cs = xmalloc(n * sizeof(*cs));
	char *made = xcalloc(n, 1);

	memset(out, 0, sizeof(*out));
	for (size_t k = 0; k < n; k++)
		cs[k] = s->c[v[k].c];
	int err = graph_build_window(s->r, s->rules, from, to, &g,
	    &out->cause);
	if (err == 0)
		err = diag_new_listed(g, s->o, &s->sc, cs, n, &d, &out->cause);
	else
		g = NULL;
	if (err) {
		graph_free(g);
		free(cs);
		free(made);
		out->err = err;
		return;
	}
	for (size_t i = 0; i < d->h.n; i++) {
		size_t k = d->h.v[i].cand;
		struct wcand w = v[k];
		made[k] = 1;
		if (!diag_window_short_hang(d, i, cand_lo(&cs[k]), &w.from,
		    &w.to)) {
			keep(s, f, out, d, i);
			continue;
		}
		out->wholes += w.from == 0 && w.to == UINT64_MAX;
		if (held(s, &w, cs[k].a, from, to)) {
			diag_note_limited(d, i, s->first, s->last, w.want,
			    s->max);
			keep(s, f, out, d, i);
		} else if (w.want != 0) {
			DPUSH(out->tiles, w);
		} else {
			DPUSH(out->next, w);
		}
	}
	out->tried = n;
	for (size_t k = 0; k < n; k++) {
		struct wcand w = v[k];
		/* not a hang: so be it when decided well inside, or in
		   the largest window allowed */
		if (!made[k] && diag_window_short_span(d, cand_lo(&cs[k]),
		    cs[k].b, &w.from, &w.to)) {
			if (held(s, &w, cs[k].a, from, to))
				out->unsure++;
			else if (w.want != 0)
				DPUSH(out->tiles, w);
			else
				DPUSH(out->next, w);
		}
	}
	/* those not sent back to a larger window are settled */
	out->settled = n - (out->next.n + out->tiles.n);
	diag_free(d);
	graph_free(g);
	free(cs);
	free(made);
}

/* Put group result x into the search (and free it): 0, or its error. */
static int
apply(struct search *s, struct gres *x, char **cause)
{
	int err = x->err;

	if (err) {
		if (cause != NULL) {
			*cause = x->cause;
			x->cause = NULL;
		}
		gres_free(x);
		return err;
	}
	for (size_t i = 0; i < x->done.n; i++)
		DPUSH(s->done, x->done.v[i]);
	x->done.n = 0;		/* theirs now */
	for (size_t i = 0; i < x->next.n; i++)
		DPUSH(s->next, x->next.v[i]);
	for (size_t i = 0; i < x->tiles.n; i++)
		DPUSH(s->tiles, x->tiles.v[i]);
	s->tried += x->tried;
	s->wholes += x->wholes;
	s->unsure += x->unsure;
	s->settled += x->settled;
	progress(s);
	gres_free(x);
	return 0;
}

/* The end of the group of s->todo that starts at i, and its window. */
static size_t
group_of(const struct search *s, size_t i, uint64_t *gfrom, uint64_t *gto)
{
	/* neighbours share a window a few windows long at most */
	uint64_t most = 4 * s->back;
	uint64_t from = s->todo.v[i].from, to = s->todo.v[i].to;
	uint64_t lim = to - from > most ? to - from : most;
	size_t j = i + 1;

	/* a window inside a larger one costs nothing more */
	while (j < s->todo.n && s->todo.v[j].from <= to) {
		const struct wcand *w = &s->todo.v[j];
		uint64_t t = w->to > to ? w->to : to;
		if (w->to - w->from > lim)
			lim = w->to - w->from;
		if (t - from > lim)
			break;
		to = t;
		j++;
	}
	*gfrom = from;
	*gto = to;
	return j;
}

/* Whether a quarter of the candidates tried need the whole trace (their
   similar nodes need the thread's history), after a group of window
   [from, to]: the others then share that graph rather than try windows,
   or the largest windows allowed; they go from s->todo's i on. */
static int
redirect(struct search *s, size_t i, uint64_t from, uint64_t to)
{
	if (!(s->tried >= 32 && s->wholes * 4 >= s->tried &&
	    (from != 0 || to != UINT64_MAX)))
		return 0;
	for (; i < s->todo.n; i++) {
		struct wcand w = s->todo.v[i];
		if (w.want == 0) {
			w.from = 0;
			w.to = UINT64_MAX;
			(void)held(s, &w, s->c[w.c].a, 1, 0);
		}
		if (w.want != 0)
			DPUSH(s->tiles, w);
		else
			DPUSH(s->next, w);
	}
	return 1;
}

static int run_rounds(struct search *s, char **cause);

/* Every candidate of s->todo, in windows, until none is left; then
   those sent to their tiles, together. */
static int
run_all(struct search *s, char **cause)
{
	for (;;) {
		int err = run_rounds(s, cause);
		if (err || s->tiles.n == 0)
			return err;
		for (size_t i = 0; i < s->tiles.n; i++)
			DPUSH(s->todo, s->tiles.v[i]);
		s->tiles.n = 0;
	}
}

/* The rounds of s->todo: each grows what needs a larger window. */
static int
run_rounds(struct search *s, char **cause)
{
	while (s->todo.n > 0) {
		qsort(s->todo.v, s->todo.n, sizeof(*s->todo.v), by_from);
		s->next.n = 0;
		for (size_t i = 0; i < s->todo.n;) {
			uint64_t from, to;
			size_t j = group_of(s, i, &from, &to);
			struct gres a;
			run_group(s, &s->todo.v[i], j - i, from, to, s->spill,
			    &a);
			int err = apply(s, &a, cause);
			if (err)
				return err;
			if (redirect(s, j, from, to))
				break;
			i = j;
		}
		/* swap: what needs a larger window is the next round */
		struct wcand *tv = s->todo.v;
		size_t tc = s->todo.cap;
		s->todo.v = s->next.v;
		s->todo.n = s->next.n;
		s->todo.cap = s->next.cap;
		s->next.v = tv;
		s->next.cap = tc;
		s->next.n = 0;
	}
	return 0;
}

int
diag_search(struct trace_reader *r, const struct rules *rules,
    const struct diag_opts *o, int json, uint64_t base_ts, FILE *f,
    struct diag_found **found, size_t *nfound, char **cause)
{
	struct search s;
	int err;
	char *why = NULL;

	memset(&s, 0, sizeof(s));
	s.r = r;
	s.rules = rules;
	s.o = o;
	s.json = json;
	s.base = base_ts;
	if ((s.spill = tmpfile()) == NULL) {
		if (cause)
			*cause = xasprintf("a temporary file: %s",
			    strerror(errno));
		return GRAPH_ETRACE;
	}
	if ((err = trace_reader_seek(r, 0)) != 0) {
		fclose(s.spill);
		if (cause)
			*cause = xstrdup(trace_strerror(err));
		return GRAPH_ETRACE;
	}
	diag_scan(r, rules, o, &s.sc);
	s.first = s.sc.first_ts;
	s.last = s.sc.last_ts;
	/* windows of about SEARCH_EVENTS events before each candidate,
	   a second at least */
	s.back = diag_window_span(r, SEARCH_EVENTS, SEC);
	s.nevents = diag_window_events(r, 0, UINT64_MAX);
	s.max = getenv("ARGUS_WINDOW_MAX_EVENTS") != NULL ? diag_window_max() :
	    o->max_events ? o->max_events : UINT64_MAX;
	s.c = s.sc.c;
	s.total = s.sc.nc;
	progress(&s);
	for (size_t k = 0; k < s.sc.nc; k++)
		first_window(&s, k);
	err = run_all(&s, cause);
	uint64_t th = o->threshold_ns ? o->threshold_ns : SEC;
	if (!err && s.done.n == 0 && (o->pid != 0 || o->tid != 0 ||
	    o->comm != NULL) && s.sc.lg_set && s.sc.lg_dt >= th) {
		/* the user says it hung: its longest wait */
		s.sc.lg.why = s.sc.lg_why;
		s.c = &s.sc.lg;
		s.total++;
		first_window(&s, 0);
		err = run_all(&s, cause);
	}
	if (!err && s.done.n == 0)
		why = diag_search_why_none(&s, cause, &err);
	if (!err) {
		diag_search_order(&s);
		diag_search_write(&s, why, f);
	}
	if (!err && found != NULL) {
		*found = xcalloc(s.done.n ? s.done.n : 1, sizeof(**found));
		*nfound = s.done.n;
		for (size_t i = 0; i < s.done.n; i++)
			(*found)[i] = (struct diag_found){ .tid = s.done.v[i].tid,
			    .start_ns = s.done.v[i].start,
			    .end_ns = s.done.v[i].end };
	}
	for (size_t i = 0; i < s.done.n; i++)
		free(s.done.v[i].cul.v);
	fclose(s.spill);
	free(s.done.v);
	free(s.todo.v);
	free(s.next.v);
	free(s.tiles.v);
	free(why);
	diag_scan_free(&s.sc);
	return err;
}
