/*
 * diag-simwin.c: the windows of a tile's graph (diag-search.c): the tile,
 * and a short window around each wait that the pass says the graph of
 * the whole trace may pick as a candidate's similar node
 * (diag-scan-sim.c), all within the graph's bound of events.
 *
 * struct diag_rate is the trace's events over time: DR_CELLS cells of
 * equal time, each chunk's events spread evenly over the cells its time
 * covers, summed into a running count. It tells the events of any span
 * in constant time and far closer than the chunks whole
 * (diag_window_events()): a chunk of one CPU spans seconds, so a window
 * of a second counts several times its events that way.
 */
#include <stdlib.h>
#include <string.h>

#include "diag-local.h"

#define DR_CELLS 65536

struct diag_rate {
	uint64_t first, cell;	/* the first cell's start, a cell's length */
	double *cum;		/* cum[i]: events before cell i (DR_CELLS + 1) */
};

struct diag_rate *
diag_rate_new(struct trace_reader *r)
{
	const struct trace_info *in = trace_reader_info(r);
	struct diag_rate *dr = xcalloc(1, sizeof(*dr));
	uint64_t span = in->last_ts > in->first_ts ?
	    in->last_ts - in->first_ts : 0;
	double *cell = xcalloc(DR_CELLS + 1, sizeof(*cell));

	dr->first = in->first_ts;
	dr->cell = span / DR_CELLS + 1;
	for (size_t i = 0; i < trace_reader_nchunks(r); i++) {
		const struct trace_chunk_info *c = trace_reader_chunk(r, i);
		uint64_t a = c->first_ts < dr->first ? dr->first : c->first_ts;
		uint64_t b = c->last_ts < a ? a : c->last_ts;
		size_t ca = (size_t)((a - dr->first) / dr->cell);
		size_t cb = (size_t)((b - dr->first) / dr->cell);
		if (c->count == 0)
			continue;
		if (ca >= DR_CELLS)
			ca = DR_CELLS - 1;
		if (cb >= DR_CELLS)
			cb = DR_CELLS - 1;
		double each = (double)c->count / (double)(cb - ca + 1);
		for (size_t k = ca; k <= cb; k++)
			cell[k] += each;
	}
	dr->cum = xcalloc(DR_CELLS + 1, sizeof(*dr->cum));
	for (size_t k = 0; k < DR_CELLS; k++)
		dr->cum[k + 1] = dr->cum[k] + cell[k];
	free(cell);
	return dr;
}

void
diag_rate_free(struct diag_rate *dr)
{
	if (dr == NULL)
		return;
	free(dr->cum);
	free(dr);
}

/* Events before time t, about (within a cell's). */
static double
before(const struct diag_rate *dr, uint64_t t)
{
	if (t <= dr->first)
		return 0;
	uint64_t off = t - dr->first;
	size_t k = (size_t)(off / dr->cell);
	if (k >= DR_CELLS)
		return dr->cum[DR_CELLS];
	double part = (double)(off % dr->cell) / (double)dr->cell;
	return dr->cum[k] + part * (dr->cum[k + 1] - dr->cum[k]);
}

double
diag_rate_events(const struct diag_rate *dr, uint64_t from, uint64_t to)
{
	return to > from ? before(dr, to) - before(dr, from) : 0;
}

static int
by_start(const void *x, const void *y)
{
	const uint64_t *a = x, *b = y;

	return a[0] < b[0] ? -1 : a[0] > b[0];
}

/*
 * Windows w[0..n) sorted and joined where they overlap or where the lead
 * graph_build_windows() gives one (a quarter of it, to last when it has
 * no end) reaches into the one before, that lead counted up to pad at
 * most; how many are left. A short gap costs less loaded than a break
 * in every thread; but a tile's lead reaches a quarter of the tile back,
 * and filling it would spend the room of the windows of similar nodes
 * on what lies between them and the tile (the lead is cut at the window
 * before, and decoded for the calls open, not loaded).
 */
static size_t
join(uint64_t (*w)[2], size_t n, uint64_t last, uint64_t pad)
{
	size_t k = 0;

	qsort(w, n, sizeof(*w), by_start);
	for (size_t i = 1; i < n; i++) {
		uint64_t end = w[i][1] < last ? w[i][1] : last;
		uint64_t lead = end > w[i][0] ? (end - w[i][0]) / 4 : 0;
		if (lead > pad)
			lead = pad;
		if (w[k][1] == UINT64_MAX || w[i][0] <= w[k][1] + lead + 1) {
			if (w[i][1] > w[k][1])
				w[k][1] = w[i][1];
		} else {
			k++;
			w[k][0] = w[i][0];
			w[k][1] = w[i][1];
		}
	}
	return n > 0 ? k + 1 : 0;
}

static double
total(const struct diag_rate *dr, const uint64_t (*w)[2], size_t n)
{
	double t = 0;

	for (size_t i = 0; i < n; i++)
		t += diag_rate_events(dr, w[i][0], w[i][1]);
	return t;
}

/* Window [a - pad, b + after] with windows w[0..*nw) (of cap, t the
   spare of as many) when, joined, gaps filled and all, they stay within
   room past the tile's events. */
static void
take_window(const struct diag_rate *dr, const struct diag_simwin *o,
    uint64_t a, uint64_t b, double tile, double room, uint64_t (**w)[2],
    uint64_t (**t)[2], size_t *nw, size_t *cap)
{
	if (*nw == *cap) {
		*cap *= 2;
		*w = xreallocarray(*w, *cap, sizeof(**w));
		*t = xreallocarray(*t, *cap, sizeof(**t));
	}
	memcpy(*t, *w, *nw * sizeof(**w));
	(*t)[*nw][0] = a > o->pad ? a - o->pad : 0;
	(*t)[*nw][1] = b + o->after < b ? UINT64_MAX : b + o->after;
	size_t nt = join(*t, *nw + 1, o->last, o->pad);
	if (total(dr, (const uint64_t (*)[2])*t, nt) - tile > room)
		return;
	uint64_t (*x)[2] = *w;
	*w = *t;
	*t = x;
	*nw = nt;
}

uint64_t (*
diag_sim_windows(const struct diag_rate *dr, const struct dcand *const *c,
    size_t nc, const struct diag_simwin *o, size_t *n))[2]
{
	size_t nw = 1, cap = 8;
	uint64_t (*w)[2] = xreallocarray(NULL, cap, sizeof(*w));
	uint64_t (*t)[2] = xreallocarray(NULL, cap, sizeof(*t));
	double tile = diag_rate_events(dr, o->from, o->to);
	double room = (double)o->max - tile, most = (double)o->max / 4;

	if (room > most)
		room = most;
	if (room < (double)o->least)
		room = (double)o->least;
	w[0][0] = o->from;
	w[0][1] = o->to;
	/* the nodes the graph may rank first, of every candidate, first:
	   room for those the graph of the whole trace picks (DS_*) */
	for (unsigned prio = 0; prio < DS_NPRIO; prio++)
		for (size_t k = 0; k < nc; k++)
			for (uint32_t i = 0; i < c[k]->nsim; i++) {
				uint64_t a = c[k]->sim[i][0];
				uint64_t b = c[k]->sim[i][1];
				if (c[k]->simprio[i] == prio &&
				    (a < o->from || b > o->to))
					take_window(dr, o, a, b, tile, room,
					    &w, &t, &nw, &cap);
			}
	free(t);
	*n = nw;
	return w;
}
