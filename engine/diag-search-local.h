/*
 * diag-search-local.h: the state of the whole-trace search
 * (diag-search.c), shared with the writing of its report
 * (diag-search-report.c).
 *
 * struct search holds the scan's candidates, each in a struct wcand (the
 * window it is tried in) on the list of a round, and the hangs done: a
 * struct done each, its report in the spill file.
 */
#ifndef ARGUS_DIAG_SEARCH_LOCAL_H
#define ARGUS_DIAG_SEARCH_LOCAL_H

#include <stdio.h>

#include "diag-local.h"

#define SEC 1000000000ULL
#define LOOKBACK (50 * 1000000ULL)	/* diag_outstanding()'s */

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
static inline uint64_t
cand_lo(const struct dcand *c)
{
	uint64_t lo = c->a;

	if ((c->what == DC_WAIT || c->what == DC_LONGEST) && c->enter_ts < lo)
		lo = c->enter_ts;
	return lo > LOOKBACK ? lo - LOOKBACK : 0;
}

/* Put the hangs done in the order diag_find_hangs() gives those of the
   whole graph. */
void diag_search_order(struct search *s);
/* Why no thread hung: the longest wait, described in a window around it
   (NULL with *err set on a trace error, cause told). */
char *diag_search_why_none(struct search *s, char **cause, int *err);
/* The report, text or JSON, of the hangs done, with why none hung. */
void diag_search_write(struct search *s, const char *why, FILE *f);

#endif
