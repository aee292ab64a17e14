/*
 * search.c: the hangs of the whole trace, for a trace too big to load at
 * once.
 *
 * argus debug opens such a trace on a window at its end (load.c), where a
 * flight recorder's hang usually is; the hangs before it would stay
 * unknown. struct tui_search is one search of the whole trace on a thread
 * of its own, the streaming one argus diagnose runs (diag_search()), with
 * a reader and a copy of the rules of its own and its graphs held to
 * TUI_SEARCH_EVENTS events: out come its text report and the hangs found
 * (thread and time). ":hangs" shows the report, ":hangs N" loads a window
 * around hang N and opens it there (tui_load_around()). The thread is
 * never waited for: when the user quits first, it ends with the process,
 * and its state is left to it.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace.h"
#include "tui-local.h"

/* The most events a graph of the search may hold (about 48 bytes each,
   so about 1 GiB, beside the debugger's own window). */
#define TUI_SEARCH_EVENTS 20000000ULL

struct tui_search {
	char *path;
	const char *const *paths;	/* the tui's, which outlives it */
	size_t npaths;
	struct rules *rules;
	struct diag_opts o;
	uint64_t base;		/* the trace start, for the report */
	pthread_t th;
	int done;		/* atomic: the fields below are set */
	int told;		/* the status line said it was done */
	int err;
	char *cause;
	char *report;
	struct diag_found *found;
	size_t nfound;
	uint64_t pdone, ptotal;	/* atomics: chunks read of the total */
	uint64_t cdone, ctotal;	/* atomics: then the candidate hangs
				   settled of all */
};

static void
progress(void *arg, uint64_t done, uint64_t total)
{
	struct tui_search *s = arg;

	__atomic_store_n(&s->ptotal, total, __ATOMIC_RELAXED);
	__atomic_store_n(&s->pdone, done, __ATOMIC_RELAXED);
}

static void
on_cands(void *arg, uint64_t done, uint64_t total)
{
	struct tui_search *s = arg;

	__atomic_store_n(&s->cdone, done, __ATOMIC_RELAXED);
	__atomic_store_n(&s->ctotal, total, __ATOMIC_RELAXED);
}

static void *
search_main(void *arg)
{
	struct tui_search *s = arg;
	struct trace_reader *r = NULL;
	size_t len = 0;
	FILE *f = NULL;

	if (tui_open_again(s->path, s->paths, s->npaths, &r, &s->cause) != 0) {
		s->err = GRAPH_ETRACE;
	} else if ((f = open_memstream(&s->report, &len)) == NULL) {
		s->err = GRAPH_ETRACE;
		s->cause = xstrdup("out of memory");
	} else {
		trace_reader_on_progress(r, progress, s);
		s->err = diag_search(r, s->rules, &s->o, 0, s->base, f,
		    &s->found, &s->nfound, &s->cause);
	}
	if (f != NULL)
		fclose(f);
	if (r != NULL)
		trace_reader_close(r);
	__atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

void
tui_search_start(struct tui *t)
{
	struct tui_search *s;
	char *text = NULL, *cause = NULL;
	size_t len = 0;
	FILE *f;

	if (!t->at_end || t->whole != NULL)
		return;
	s = xcalloc(1, sizeof(*s));
	s->path = xstrdup(t->trace);
	s->paths = t->traces;
	s->npaths = t->ntraces;
	s->rules = rules_new();
	s->o = t->dopts;
	s->o.at = 0;
	s->o.max_events = TUI_SEARCH_EVENTS;
	s->o.progress = on_cands;
	s->o.progress_arg = s;
	s->base = t->first_ts;
	/* the rules in force now, as text: the user's :rule add changes
	   t->rules while the search runs */
	if ((f = open_memstream(&text, &len)) == NULL)
		goto fail;
	rules_write(t->rules, f);
	fclose(f);
	if (rules_parse(s->rules, text, "rules", &cause) != 0 ||
	    pthread_create(&s->th, NULL, search_main, s) != 0)
		goto fail;
	pthread_detach(s->th);
	free(text);
	t->whole = s;
	return;
fail:
	tui_message(t, 1, "cannot search the whole trace: %s",
	    cause != NULL ? cause : "out of resources");
	free(cause);
	free(text);
	rules_free(s->rules);
	free(s->path);
	free(s);
}

/* Whether the search is over (then its fields may be read). */
static int
over(const struct tui_search *s)
{
	return __atomic_load_n(&s->done, __ATOMIC_ACQUIRE);
}

static void
say_failed(struct tui *t, const struct tui_search *s)
{
	tui_message(t, 1, "searching the whole trace failed: %s",
	    s->cause != NULL ? s->cause : graph_strerror(s->err));
}

int
tui_search_poll(struct tui *t)
{
	struct tui_search *s = t->whole;

	if (s == NULL || s->told || !over(s))
		return 0;
	s->told = 1;
	if (s->err != 0)
		say_failed(t, s);
	else
		tui_message(t, 0, "the whole trace: %zu hang%s (:hangs lists "
		    "them)", s->nfound, s->nfound == 1 ? "" : "s");
	return R_STATUS;
}

int
tui_search_command(struct tui *t, const char *arg)
{
	struct tui_search *s = t->whole;
	uint64_t n;

	if (s == NULL) {
		tui_message(t, 1, "the whole trace is loaded: its hangs are "
		    "the ones of :report ({ } and :hang N)");
		return R_STATUS;
	}
	if (!over(s)) {
		uint64_t d = __atomic_load_n(&s->pdone, __ATOMIC_RELAXED);
		uint64_t tot = __atomic_load_n(&s->ptotal, __ATOMIC_RELAXED);
		uint64_t cd = __atomic_load_n(&s->cdone, __ATOMIC_RELAXED);
		uint64_t ct = __atomic_load_n(&s->ctotal, __ATOMIC_RELAXED);
		if (ct > 0)
			tui_message(t, 0, "searching the whole trace... "
			    "%d%% of its %llu candidate hangs diagnosed",
			    (int)(cd * 100 / ct), (unsigned long long)ct);
		else if (tot > 0 && d <= tot)
			tui_message(t, 0, "searching the whole trace... "
			    "%d%% read", (int)(d * 100 / tot));
		else
			tui_message(t, 0, "searching the whole trace...");
		return R_STATUS;
	}
	if (s->err != 0) {
		say_failed(t, s);
		return R_STATUS;
	}
	if (*arg == '\0') {
		size_t nl;
		char **lines = tui_split_lines(s->report ? s->report : "",
		    &nl);
		tui_show_text(t, "hangs of the whole trace (:hangs N opens "
		    "one; q closes)", lines, nl);
		return R_ALL;
	}
	if (parse_u64(arg, &n) != 0 || n == 0 || n > s->nfound) {
		tui_message(t, 1, "no hang '%s' in the whole trace (there are "
		    "%zu)", arg, s->nfound);
		return R_STATUS;
	}
	const struct diag_found *h = &s->found[n - 1];
	return tui_load_around(t, h->tid, h->start_ns, h->end_ns);
}

void
tui_search_free(struct tui *t)
{
	struct tui_search *s = t->whole;

	t->whole = NULL;
	if (s == NULL || !over(s))
		return;		/* still running: it ends with the process */
	free(s->report);
	free(s->found);
	free(s->cause);
	rules_free(s->rules);
	free(s->path);
	free(s);
}
