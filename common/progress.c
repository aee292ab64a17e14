/*
 * progress.c: the progress bar of progress.h. A struct progress holds the
 * label, the total, the start time and the time of the last redraw; the
 * line is "label [#####.....]  42%" drawn with a carriage return.
 */
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
	fprintf(stderr, "\r%s [%s] %3u%%", p->label, bar,
	    (unsigned)(done * 100 / p->total));
}

void
progress_free(struct progress *p)
{
	if (p == NULL)
		return;
	if (p->drawn)
		fprintf(stderr, "\r%*s\r", (int)strlen(p->label) + WIDTH + 8, "");
	free(p->label);
	free(p);
}
