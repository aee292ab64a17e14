/*
 * progress.h: a progress bar on standard error for long commands.
 *
 * Nothing is drawn when standard error is not a terminal, and nothing
 * before the work has taken half a second (ARGUS_PROGRESS_DELAY_MS in
 * the environment sets another delay), so short runs and logs stay
 * clean. The bar is redrawn at most ten times a second and erased by
 * progress_free(). Every function accepts NULL.
 */
#ifndef ARGUS_PROGRESS_H
#define ARGUS_PROGRESS_H

#include <stdint.h>

struct progress;

/* A bar labelled label ("argus info: reading") for total units of work
   (0: unknown, a spinner). NULL when standard error is not a terminal. */
struct progress *progress_new(const char *label, uint64_t total);
/* Show the rate of the work as per * done units of unit a second
   ("events": "35.2M events/s"), next to the time left. */
void progress_set_rate(struct progress *p, const char *unit, double per);
/* done units of work of total (total 0: keep the one given before). */
void progress_update(struct progress *p, uint64_t done, uint64_t total);
/* Erase the bar and free it. */
void progress_free(struct progress *p);

#endif
