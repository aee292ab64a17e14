/*
 * search-fixture.h: the reports that the search tests compare, the
 * whole graph's and the streaming search's (diag_search()), as text, and
 * the parts of them compared.
 */
#ifndef ARGUS_SEARCH_FIXTURE_H
#define ARGUS_SEARCH_FIXTURE_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/diag-local.h"

/* Text without the number of similar nodes (a window's may be
   shorter past the one picked). */
static inline char *
normal(char *s)
{
	const char *key = "similar normal nodes: ";
	char *p = s;

	while ((p = strstr(p, key)) != NULL) {
		char *q = p + strlen(key), *e = q;
		while (*e >= '0' && *e <= '9')
			e++;
		memmove(q, e, strlen(e) + 1);
		p = q;
	}
	return s;
}

/* The whole graph's text report of r; *n gets its number of hangs. */
static inline char *
whole_text(struct trace_reader *r, const struct diag_opts *o, unsigned *n)
{
	char *cause = NULL, *b = NULL;
	size_t nb = 0;
	struct graph *g;
	struct diag *d;
	FILE *f;

	cr_assert_eq(graph_build(r, NULL, &g, &cause), 0, "%s", cause);
	cr_assert_eq(diag_new(g, o, &d, &cause), 0, "%s", cause);
	cr_assert_not_null(f = open_memstream(&b, &nb));
	diag_write_text(d, f, graph_first_ts(g));
	fclose(f);
	if (n != NULL)
		*n = (unsigned)diag_nhangs(d);
	diag_free(d);
	graph_free(g);
	return b;
}

/* The search's text report of r, times from base, with first windows
   of 20 events and, when max is not NULL, windows held to max events. */
static inline char *
search_text_at(struct trace_reader *r, const struct diag_opts *o,
    const char *max, uint64_t base)
{
	char *cause = NULL, *a = NULL;
	size_t na = 0;
	FILE *f;

	cr_assert_eq(setenv("ARGUS_WINDOW_EVENTS", "20", 1), 0);
	if (max != NULL)
		cr_assert_eq(setenv("ARGUS_WINDOW_MAX_EVENTS", max, 1), 0);
	cr_assert_not_null(f = open_memstream(&a, &na));
	cr_assert_eq(diag_search(r, NULL, o, 0, base, f, NULL,
	    NULL, &cause), 0,
	    "%s", cause);
	fclose(f);
	unsetenv("ARGUS_WINDOW_EVENTS");
	unsetenv("ARGUS_WINDOW_MAX_EVENTS");
	return a;
}

/* The lines of report a that name the similar node picked, joined. */
static inline char *
picks(const char *a)
{
	char *out = calloc(1, strlen(a) + 1);
	const char *p = a;

	while ((p = strstr(p, "picked #")) != NULL) {
		const char *e = strchr(p, '\n');
		size_t n = e != NULL ? (size_t)(e - p) + 1 : strlen(p);
		strncat(out, p, n);
		p += n;
	}
	return out;
}

#endif
