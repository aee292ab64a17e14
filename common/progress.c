/*
 * progress.c: the progress bar of progress.h. A struct progress holds the
 * label, the total, the start time and the time of the last redraw; the
 * line is "label [#####.....]  42%", then, once a second has passed,
 * the rate ("35.2M events/s", when progress_set_rate() named a unit)
 * and the time left at the rate so far, drawn with a carriage return
 * and blanks over what a longer line before left.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "progress.h"

#define DELAY_NS 500000000ULL	/* nothing before half a second */
#define PERIOD_NS 100000000ULL	/* at most ten redraws a second */
#define WIDTH 30

struct progress {
	char *label;
	uint64_t total;
	uint64_t start, last;
	uint64_t delay;
	int drawn;
	int ended;		/* 100% drawn */
	int width;		/* columns of the line last drawn */
	char *unit;		/* progress_set_rate()'s, or NULL */
	double per;		/* units per unit of work */
};

struct progress *
progress_new(const char *label, uint64_t total)
{
	struct progress *p;
	const char *e;
	uint64_t v;

	if (!isatty(STDERR_FILENO))
		return NULL;
	p = xcalloc(1, sizeof(*p));
	p->label = xstrdup(label);
	p->total = total;
	p->start = now_ns();
	p->delay = DELAY_NS;
	/* ARGUS_PROGRESS_DELAY_MS: another delay (tests use 0) */
	if ((e = getenv("ARGUS_PROGRESS_DELAY_MS")) != NULL &&
	    parse_u64(e, &v) == 0 && v < 3600000)
		p->delay = v * 1000000ULL;
	return p;
}

void
progress_set_rate(struct progress *p, const char *unit, double per)
{
	if (p == NULL)
		return;
	free(p->unit);
	p->unit = unit != NULL ? xstrdup(unit) : NULL;
	p->per = per;
}

/* n as "35.2M", "812k", "17". */
static void
si(char *b, size_t len, double n)
{
	if (n >= 1e9)
		snprintf(b, len, "%.1fG", n / 1e9);
	else if (n >= 1e6)
		snprintf(b, len, "%.1fM", n / 1e6);
	else if (n >= 1e3)
		snprintf(b, len, "%.0fk", n / 1e3);
	else
		snprintf(b, len, "%.0f", n);
}

/* What follows the percentage: the rate and the time left, once a
   second of work gives them some meaning; "" before. */
static void
tail(const struct progress *p, uint64_t done, uint64_t now, char *b,
    size_t len)
{
	double secs = (double)(now - p->start) / 1e9;
	char r[32];
	size_t n = 0;

	b[0] = '\0';
	if (secs < 1.0 || done == 0)
		return;
	if (p->unit != NULL) {
		si(r, sizeof(r), (double)done * p->per / secs);
		n = (size_t)snprintf(b, len, "  %s %s/s", r, p->unit);
	}
	if (done < p->total && n < len) {
		uint64_t left = (uint64_t)(secs * (double)(p->total - done) /
		    (double)done + 0.5);
		if (left >= 3600)
			snprintf(b + n, len - n, "  %" PRIu64 ":%02" PRIu64
			    ":%02" PRIu64 " left", left / 3600,
			    left / 60 % 60, left % 60);
		else
			snprintf(b + n, len - n, "  %" PRIu64 ":%02" PRIu64
			    " left", left / 60, left % 60);
	}
}

void
progress_update(struct progress *p, uint64_t done, uint64_t total)
{
	char bar[WIDTH + 1];
	uint64_t now;
	unsigned fill;

	if (p == NULL)
		return;
	if (total)
		p->total = total;
	now = now_ns();
	/* the end is always drawn once a bar shows */
	if (now - p->start < p->delay || (p->drawn && now - p->last <
	    PERIOD_NS && !(p->total && done >= p->total && !p->ended)))
		return;
	if (p->total && done >= p->total)
		p->ended = 1;
	p->last = now;
	p->drawn = 1;
	if (p->total == 0) {
		fprintf(stderr, "\r%s %c", p->label, "|/-\\"[(now / PERIOD_NS) % 4]);
		return;
	}
	if (done > p->total)
		done = p->total;
	fill = (unsigned)(done * WIDTH / p->total);
	memset(bar, '#', fill);
	memset(bar + fill, '.', WIDTH - fill);
	bar[WIDTH] = '\0';
	char t[80];
	tail(p, done, now, t, sizeof(t));
	int w = fprintf(stderr, "\r%s [%s] %3u%%%s", p->label, bar,
	    (unsigned)(done * 100 / p->total), t) - 1;
	/* blanks over the end of a longer line before */
	if (w < p->width)
		fprintf(stderr, "%*s", p->width - w, "");
	if (w > p->width)
		p->width = w;
}

void
progress_free(struct progress *p)
{
	if (p == NULL)
		return;
	int w = (int)strlen(p->label) + WIDTH + 8;
	if (p->drawn)
		fprintf(stderr, "\r%*s\r", p->width > w ? p->width : w, "");
	free(p->unit);
	free(p->label);
	free(p);
}
