/*
 * diag-search.c: the diagnosis of a whole trace without the graph of
 * the whole trace (diag_search()).
 *
 * The streaming search (diag-scan.c) gives the candidate hangs, and for
 * each one the waits of its thread that may be its similar nodes in the
 * whole graph (diag-scan-sim.c): its graph holds a short window around
 * each of them too (windows()). Each
 * candidate gets a window of the trace around it (struct wcand: the
 * candidate and its window); neighbours whose windows overlap share one
 * graph, as long as the merged window stays a few windows long (struct
 * group). In each graph the candidates are made into hangs as the search
 * of the whole graph makes them (diag_listed_hangs()) and analyzed; a
 * hang whose answer rests on nothing near the window's edges is written
 * out at once (struct done: where its report, text or JSON, lies in a
 * temporary file, and what the order of the report needs), the others go back with a grown window, up to
 * the whole trace. A wait that the graph says is no hang must have been
 * decided well inside the window too. When a quarter of the candidates
 * tried need the whole trace (similar nodes that need the thread's
 * whole history), the rest go straight to that one graph. The hangs
 * done are then put in
 * the order diag_find_hangs() gives those of the whole graph: by
 * source, rank, event loop, start and thread, those explained by
 * another one (their thread is its culprit) after the others.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "diag-local.h"

#define SEC 1000000000ULL
#define LOOKBACK (50 * 1000000ULL)	/* diag_outstanding()'s */
#define SEARCH_EVENTS 300000.0		/* events before a candidate */
#define TILE_STEPS 6			/* steps of candidates in a tile: six
					   rather than three build 240 M events
					   rather than 280 M of 200 M (a
					   seventh of history before a step
					   at least rather than a quarter; the
					   windows of similar nodes make up for
					   it) */
#define TILE_AFTER (10 * 1000000ULL)	/* what a tile holds after a wait */
#define SIM_BUDGET 100000		/* events of windows around similar
					   nodes a graph may hold at least
					   (about 5 MB) */

struct wcand {
	size_t c;		/* index in the scan's candidates */
	uint64_t from, to;	/* its window */
	uint64_t want;		/* 0, or the events its answer asked for
				   past the bound (the window is then the
				   largest allowed) */
};

struct dcul {
	uint32_t tid;
	uint64_t start, end;
};

struct done {
	int source, rank, loop;
	uint64_t start, end;
	uint32_t tid;
	int timed_out;		/* its wait ended by its timeout */
	DARR(struct dcul) cul;
	long off;		/* its report, in the spill file */
	size_t len;
};

struct search {
	struct trace_reader *r;
	const struct rules *rules;
	const struct diag_opts *o;
	struct dscan sc;
	struct diag_rate *rate;	/* the trace's events over time */
	const struct dcand *c;	/* the candidates (sc.c, or sc.lg) */
	int json;
	uint64_t base;
	DARR(struct wcand) todo, next;
	DARR(struct wcand) tiles;	/* candidates sent to their tile: tried
					   together once the rest is done */
	DARR(struct done) done;
	FILE *spill;		/* the reports done, out of memory (a JSON
				   report of hundreds of hangs is hundreds of
				   megabytes) */
	uint64_t back;		/* window length before a candidate */
	uint64_t nevents;	/* the trace's events */
	uint64_t max;		/* the most events a graph may hold:
				   o->max_events (the memory; 0: no
				   bound), or ARGUS_WINDOW_MAX_EVENTS when
				   set (tests) */
	size_t tried, wholes;	/* candidates tried in windows, and those
				   of them that need the whole trace */
	size_t unsure;		/* candidates found no hang in a window
				   held to the bound, which said it would
				   need more */
	uint64_t settled, total;	/* candidates settled of all (the
					   progress) */
	uint64_t first, last;
};

/* The earliest time the making of candidate c reads. */
static uint64_t
cand_lo(const struct dcand *c)
{
	uint64_t lo = c->a;

	if ((c->what == DC_WAIT || c->what == DC_LONGEST) && c->enter_ts < lo)
		lo = c->enter_ts;
	return lo > LOOKBACK ? lo - LOOKBACK : 0;
}

static int tile(struct search *s, const struct dcand *c, uint64_t max,
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
	    tile(s, c, s->max, &w.from, &w.to)) {
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

/* Keep hang i of d: its report and what orders it. */
static void
keep(struct search *s, const struct diag *d, size_t i)
{
	const struct dhang *h = &d->h.v[i];
	struct done x;
	FILE *f;

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
	f = s->spill;
	x.off = ftell(f);
	if (s->json)
		diag_write_hang_json(d, i, f);
	else
		diag_write_hang_text_n(d, i, 0, f, s->base);
	x.len = (size_t)(ftell(f) - x.off);
	DPUSH(s->done, x);
}

/*
 * The largest window allowed for candidate c: the trace cut in steps of
 * a (TILE_STEPS + 1)th of the span of max events (at its average rate),
 * in groups of TILE_STEPS; the tile of a group is its steps and the one
 * before, so that the candidates of a group share one graph with a step
 * of history at least, and each step is built (TILE_STEPS + 1) /
 * TILE_STEPS times. A candidate whose wait goes on past the end of its
 * group's tile goes to the next tile when that one holds what its
 * making reads (cand_lo()), else to a window of its own that ends a
 * little after its wait: a wait cut by the end of its graph has no
 * answer (its wait whole, with as much history before as fits). Steps
 * shrink by an eighth while the tile holds more than max
 * events (the chunks cut by its edges count whole, and events may come
 * faster there than on average): the candidates of one group still
 * share it. 0 when the trace has no time.
 */
static int
tile(struct search *s, const struct dcand *c, uint64_t max, uint64_t *from,
    uint64_t *to)
{
	const struct trace_info *in = trace_reader_info(s->r);
	uint64_t first = in->first_ts, last = in->last_ts, step, k;
	uint64_t at = c->a, lo = cand_lo(c), end = c->b + TILE_AFTER;

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
			break;
	}
	if (step == 0 && !diag_budget_window(s->r, at, max, from, to))
		return 0;
	if (end <= *to || step == 0)
		return 1;
	/* past its tile: the next one, which begins a step before its
	   own group */
	uint64_t f = first + (k + TILE_STEPS - 1) * step;
	uint64_t t = first + (k + 2 * TILE_STEPS) * step;
	if (t >= last)
		t = UINT64_MAX;
	if (f <= lo && end <= t && diag_window_events(s->r, f, t) <= max) {
		*from = f;
		*to = t;
		return 1;
	}
	/* else a window of its own to a little after its wait, from what
	   its making reads, or from its wait only; as much history as
	   fits before */
	t = end < last ? end : UINT64_MAX;
	f = diag_window_events(s->r, lo, t) <= max ? lo :
	    at > first + TILE_AFTER ? at - TILE_AFTER : first;
	if (diag_window_events(s->r, f, t) > max)
		f = at;		/* its wait, and what fits before */
	/* the wait alone is more: its tile; or, a wait in one call that
	   is a hang whatever came before its entry (rank 0), its end and
	   what fits before, its graph loading its start (seeds()): who
	   ended it rather than what its making reads */
	if (diag_window_events(s->r, f, t) > max) {
		if (c->nsd == 0 || c->rank != 0 ||
		    diag_window_events(s->r, c->b, t) > max)
			return 1;
		f = c->b;
	}
	for (uint64_t back = t == UINT64_MAX ? last - f : t - f;
	    f > first && back > 0; back /= 2)
		while (f > first && diag_window_events(s->r, f > first + back ?
		    f - back : first, t) <= max)
			f = f > first + back ? f - back : first;
	*from = f > first ? f : 0;
	*to = t;
	return 1;
}

/*
 * Window w (of candidate c) asked to grow past the events a window
 * may hold (diag_window_max()): 0 with w set to the largest window
 * allowed when that is larger than [a, b], the graph's; 1 when the
 * answer of [a, b] must do (w->want says what it asked for).
 */
static int
held(struct search *s, struct wcand *w, const struct dcand *c, uint64_t a,
    uint64_t b)
{
	uint64_t max = s->max, f, t;
	uint64_t want = diag_window_events(s->r, w->from, w->to);

	/* a trace past the bound: a window that must grow goes to its
	   tile at once (growing by steps costs a pass over the trace a
	   step) */
	if (want <= max && (w->want != 0 || s->nevents <= max))
		return 0;
	if (w->want == 0 && tile(s, c, max, &f, &t) && (f < a || t > b)) {
		w->from = f;
		w->to = t;
		w->want = want;
		return 0;
	}
	if (w->want == 0)
		w->want = want;
	return 1;
}

/* The windows of the graph of candidates v[0..nv) held to their tile
   [from, to] (diag_sim_windows()); how many into *n. */
static uint64_t (*
windows(struct search *s, const struct wcand *v, size_t nv, uint64_t from,
    uint64_t to, size_t *n))[2]
{
	const struct dcand **c = xmalloc((nv ? nv : 1) * sizeof(*c));
	size_t nc = 0;
	/* a quarter of a window before, TILE_AFTER at least (tests with
	   windows of a few events: the turn before a run) */
	struct diag_simwin o = { .from = from, .to = to,
	    .pad = s->back / 4 > TILE_AFTER ? s->back / 4 : TILE_AFTER,
	    .after = TILE_AFTER, .max = s->max, .least = SIM_BUDGET,
	    .last = s->last };

	for (size_t k = 0; k < nv; k++)
		if (v[k].want != 0)	/* not a window that may grow */
			c[nc++] = &s->c[v[k].c];
	uint64_t (*w)[2] = diag_sim_windows(s->rate, c, nc, &o, n);
	free(c);
	return w;
}

/* The waits in one call of candidates c[0..n) and of their wakers, as
   the pass saw them (struct graph_seed): a window that opens during one
   of them loads it from its start. How many into *ns. */
static struct graph_seed *
seeds(const struct dcand *c, size_t n, size_t *ns)
{
	struct graph_seed *v = xmalloc((n ? 2 * n : 1) * sizeof(*v));

	*ns = 0;
	for (size_t k = 0; k < n; k++)
		for (uint32_t i = 0; i < c[k].nsd; i++) {
			const struct dseed *d = &c[k].sd[i];
			struct graph_seed *x = &v[(*ns)++];
			memset(x, 0, sizeof(*x));
			x->enter.ts = d->enter_ts;
			x->enter.tid = d->tid;
			x->enter.type = TT_SYS_ENTER;
			memcpy(x->enter.arg, d->arg, sizeof(d->arg));
			x->sw.ts = d->sw;
			x->sw.tid = d->tid;
			x->sw.type = TT_SWITCH;
			x->sw.arg[0] = d->state;
			x->end = d->end;
		}
	return v;
}

/* The candidates v[0..n) in the graph of window [from, to]: those done
   are kept, the others go to s->next with a grown window (up to the
   bound of a window's events). */
static int
run_group(struct search *s, const struct wcand *v, size_t n, uint64_t from,
    uint64_t to, char **cause)
{
	struct graph *g;
	struct diag *d;
	struct dcand *cs = xmalloc(n * sizeof(*cs));
	char *made = xcalloc(n, 1);
	size_t again = s->next.n + s->tiles.n;	/* pushed back before */
	size_t nw;

	for (size_t k = 0; k < n; k++)
		cs[k] = s->c[v[k].c];
	uint64_t (*wins)[2] = windows(s, v, n, from, to, &nw);
	size_t ns;
	struct graph_seed *sd = seeds(cs, n, &ns);
	int err = graph_build_seeded(s->r, s->rules,
	    (const uint64_t (*)[2])wins, nw, sd, ns, &g, cause);
	free(sd);
	free(wins);
	uint64_t t0 = now_ns();
	diag_stats_add_graph(s->o->stats, err == 0 ? g : NULL);
	if (err == 0)
		err = diag_new_listed(g, s->o, &s->sc, cs, n, &d, cause);
	else
		g = NULL;
	if (err) {
		graph_free(g);
		free(cs);
		free(made);
		return err;
	}
	for (size_t i = 0; i < d->h.n; i++) {
		size_t k = d->h.v[i].cand;
		struct wcand w = v[k];
		made[k] = 1;
		if (!diag_window_short_hang(d, i, cand_lo(&cs[k]), &w.from,
		    &w.to)) {
			keep(s, d, i);
			continue;
		}
		s->wholes += w.from == 0 && w.to == UINT64_MAX;
		if (held(s, &w, &cs[k], from, to)) {
			diag_note_limited(d, i, s->first, s->last, w.want,
			    s->max);
			keep(s, d, i);
		} else if (w.want != 0) {
			DPUSH(s->tiles, w);
		} else {
			DPUSH(s->next, w);
		}
	}
	s->tried += n;
	for (size_t k = 0; k < n; k++) {
		struct wcand w = v[k];
		/* not a hang: so be it when decided well inside, or in
		   the largest window allowed */
		if (!made[k] && diag_window_short_span(d, cand_lo(&cs[k]),
		    cs[k].b, &w.from, &w.to)) {
			if (held(s, &w, &cs[k], from, to))
				s->unsure++;
			else if (w.want != 0)
				DPUSH(s->tiles, w);
			else
				DPUSH(s->next, w);
		}
	}
	/* those not sent back to a larger window are settled */
	s->settled += n - (s->next.n + s->tiles.n - again);
	if (s->o->stats != NULL)
		s->o->stats->analysis_ns += now_ns() - t0;
	progress(s);
	diag_free(d);
	graph_free(g);
	free(cs);
	free(made);
	return 0;
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
		/* neighbours share a window a few windows long at most */
		uint64_t most = 4 * s->back;
		for (size_t i = 0; i < s->todo.n;) {
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
			int err = run_group(s, &s->todo.v[i], j - i, from, to,
			    cause);
			if (err)
				return err;
			i = j;
			if (s->tried >= 32 && s->wholes * 4 >= s->tried &&
			    (from != 0 || to != UINT64_MAX)) {
				/* a quarter need the whole trace (their similar
				   nodes need the thread's history): the others
				   share that graph rather than try windows, or
				   the largest windows allowed */
				for (; i < s->todo.n; i++) {
					struct wcand w = s->todo.v[i];
					if (w.want == 0) {
						w.from = 0;
						w.to = UINT64_MAX;
						(void)held(s, &w, &s->c[w.c],
						    1, 0);
					}
					if (w.want != 0)
						DPUSH(s->tiles, w);
					else
						DPUSH(s->next, w);
				}
			}
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

static int
by_start(const void *x, const void *y)
{
	const struct done *a = x, *b = y;

	if (a->source != b->source)
		return a->source < b->source ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->loop != b->loop)
		return a->loop ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

static int
explained_by(const struct done *x, const struct done *y)
{
	for (size_t i = 0; i < y->cul.n; i++)
		if (y->cul.v[i].tid == x->tid &&
		    y->cul.v[i].start <= x->end &&
		    y->cul.v[i].end >= x->start)
			return 1;
	return 0;
}

/* The order of diag_find_hangs(). */
static void
order(struct search *s)
{
	size_t n = s->done.n, k = 0;

	if (n < 2)
		return;
	qsort(s->done.v, n, sizeof(*s->done.v), by_start);
	struct done *v = xmalloc(n * sizeof(*v));
	char *later = xcalloc(n, 1);
	/* as diag_find_hangs() (diag-hang.c) */
	for (size_t i = n; i-- > 0;)
		for (size_t j = 0; j < n && !later[i]; j++)
			if (i != j && !later[j] &&
			    explained_by(&s->done.v[i], &s->done.v[j]) &&
			    diag_goes_after(explained_by(&s->done.v[j],
			    &s->done.v[i]), s->done.v[i].timed_out,
			    s->done.v[j].timed_out))
				later[i] = 1;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n; i++)
			if (later[i] == pass)
				v[k++] = s->done.v[i];
	memcpy(s->done.v, v, n * sizeof(*v));
	free(v);
	free(later);
}

/* Why no thread hung (from_kernel()), the longest wait described in a
   window around it. */
static char *
why_none(struct search *s, char **cause, int *err)
{
	const struct dscan *sc = &s->sc;

	*err = 0;
	if (sc->nsel == 0)
		return xasprintf("no user thread chosen");
	if (!sc->lg_set)
		return xasprintf("%zu thread%s chosen, %zu wait%s "
		    "considered: none in a system call", sc->nsel,
		    sc->nsel == 1 ? "" : "s", sc->nwaits,
		    sc->nwaits == 1 ? "" : "s");
	uint64_t lo = cand_lo(&sc->lg);
	struct graph *g;
	/* up to its exit, where a read names its file */
	*err = graph_build_window(s->r, s->rules, lo > SEC ? lo - SEC : 0,
	    sc->lg.b + SEC, &g, cause);
	if (*err)
		return NULL;
	diag_stats_add_graph(s->o->stats, g);
	uint32_t ti = graph_thread_find(g, sc->lg.tid), sw = GRAPH_NONE;
	char *w = NULL;
	if (ti != GRAPH_NONE) {
		const struct gthread *t = &g->th[ti];
		for (uint32_t i = diag_event_at(g, ti, sc->lg.a); i < t->nev &&
		    t->ev[i].ts == sc->lg.a && sw == GRAPH_NONE; i++)
			if (t->ev[i].type == TT_SWITCH)
				sw = i;
	}
	if (sw != GRAPH_NONE)
		w = diag_why_text(g, ti, sw, sc->last_ts, sc->nsel,
		    sc->nwaits, sc->lg_dt, sc->lg_why);
	/* the window holds every thread of the trace, named as in the
	   whole graph */
	if (w != NULL)
		w = diag_why_slices(g, &sc->sl, w);
	graph_free(g);
	return w;
}

/* The report of hang i done, from the spill file to f. */
static void
put_done(struct search *s, size_t i, FILE *f)
{
	char buf[65536];
	size_t left = s->done.v[i].len;

	fseek(s->spill, s->done.v[i].off, SEEK_SET);
	while (left > 0) {
		size_t n = fread(buf, 1, left < sizeof(buf) ? left :
		    sizeof(buf), s->spill);
		if (n == 0)
			break;
		fwrite(buf, 1, n, f);
		left -= n;
	}
}

static void
write_report(struct search *s, const char *why, FILE *f)
{
	uint64_t th = s->o->threshold_ns ? s->o->threshold_ns : SEC;

	if (s->json) {
		fprintf(f, "{\"threshold_ns\":%" PRIu64 ",\"hangs\":[", th);
		for (size_t i = 0; i < s->done.n; i++) {
			if (i > 0)
				fputc(',', f);
			put_done(s, i, f);
		}
		fprintf(f, "]");
		if (s->unsure > 0)
			fprintf(f, ",\"unsure\":%zu", s->unsure);
		if (why != NULL) {
			/* the writer's own quoting, through a report of
			   nothing */
			fprintf(f, ",\"why_none\":");
			engine_json_str(f, why);
		}
		if (s->o->hosts != NULL) {
			fputc(',', f);
			hosts_write_json(s->o->hosts, f);
		}
		fprintf(f, "}\n");
		return;
	}
	if (s->o->hosts != NULL) {
		hosts_write_text(s->o->hosts, f);
		fprintf(f, "\n");
	}
	if (s->done.n == 0) {
		fprintf(f, "no hang found\n");
		if (why != NULL)
			fprintf(f, "  %s\n", why);
	}
	for (size_t i = 0; i < s->done.n; i++) {
		fprintf(f, "%shang %zu: ", i ? "\n" : "", i + 1);
		put_done(s, i, f);
	}
	if (s->unsure > 0)
		fprintf(f, "%snote: %zu more wait%s may be %s: decided in a "
		    "part of the trace only (the graphs' memory bound, "
		    "--memory)\n", s->done.n ? "\n" : "", s->unsure,
		    s->unsure == 1 ? "" : "s", s->unsure == 1 ? "a hang" :
		    "hangs");
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
	uint64_t t0 = now_ns();
	diag_scan(r, rules, o, &s.sc);
	if (o->stats != NULL) {
		o->stats->pass_ns += now_ns() - t0;
		o->stats->pass_events += trace_reader_info(r)->nevents;
		o->stats->candidates += s.sc.nc;
	}
	s.first = s.sc.first_ts;
	s.last = s.sc.last_ts;
	/* windows of about SEARCH_EVENTS events before each candidate,
	   a second at least */
	s.back = diag_window_span(r, SEARCH_EVENTS, SEC);
	s.nevents = diag_window_events(r, 0, UINT64_MAX);
	s.max = getenv("ARGUS_WINDOW_MAX_EVENTS") != NULL ? diag_window_max() :
	    o->max_events ? o->max_events : UINT64_MAX;
	s.rate = diag_rate_new(r);
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
		why = why_none(&s, cause, &err);
	if (!err) {
		order(&s);
		write_report(&s, why, f);
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
	diag_rate_free(s.rate);
	return err;
}
