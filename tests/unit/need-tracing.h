/*
 * need-tracing.h: need_tracing() skips a criterion test that touches the
 * kernel's tracing (a tracefs instance, the recorder) when tests/run-checks
 * found that tracing wedged: ARGUS_TRACING_WEDGED then holds the reason
 * (see tests/tracing-check). Such a test would otherwise sleep in the
 * kernel past any timeout.
 */
#ifndef ARGUS_NEED_TRACING_H
#define ARGUS_NEED_TRACING_H

#include <stdlib.h>

#include <criterion/criterion.h>

static inline void
need_tracing(void)
{
	const char *why = getenv("ARGUS_TRACING_WEDGED");

	if (why != NULL && *why != '\0')
		cr_skip_test("not run: %s", why);
}

#endif
