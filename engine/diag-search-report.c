/*
 * diag-search-report.c: the report of the whole-trace search
 * (diag-search.c): the hangs done put in the order of the whole graph's
 * report, their reports copied from the spill file, and, when none hung,
 * why.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "diag-search-local.h"

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

void
diag_search_order(struct search *s)
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

char *
diag_search_why_none(struct search *s, char **cause, int *err)
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

void
diag_search_write(struct search *s, const char *why, FILE *f)
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
			fprintf(f, ",\"why_none\":\"");
			for (const char *p = why; *p; p++)
				if (*p == '"' || *p == '\\')
					fprintf(f, "\\%c", *p);
				else if ((unsigned char)*p < 0x20)
					fprintf(f, "\\u%04x", *p);
				else
					fputc(*p, f);
			fputc('"', f);
		}
		fprintf(f, "}\n");
		return;
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

