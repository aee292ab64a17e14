/*
 * diag-hang.c: finding the hangs of a graph and classifying each one's
 * spinning node (step 1 and 2 of argus-diagnose(1)).
 *
 * A hang is a thread and a time span (struct diag_hang inside struct
 * dhang). Sources, in order of preference: the hang marks written by the
 * instrumentation's watchdog; the time given with --at; intervals found
 * in kernel events alone, where a chosen thread waits, runs or yields
 * past the threshold and far longer than its other waits on the same
 * resource. The span is then classified from the thread's events in it.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "diag-local.h"

#define MS 1000000ULL
#define YIELD_MIN 20		/* yields (or short sleeps) in a yield loop */
#define SHORT_SLEEP (50 * MS)

/* Yields and short sleeps of thread ti in [a, b]. */
static uint32_t
count_yields(const struct graph *g, uint32_t ti, uint64_t a, uint64_t b,
    uint32_t *first)
{
	const struct gthread *t = &g->th[ti];
	uint32_t n = 0, sleeps = 0;

	*first = GRAPH_NONE;
	for (uint32_t i = diag_event_at(g, ti, a); i < t->nev &&
	    t->ev[i].ts <= b; i++) {
		const struct graph_event *e = &t->ev[i];
		if (e->type == TT_SYS_ENTER && e->aux == SYS_sched_yield) {
			n++;
		} else if (e->type == TT_USER && e->sub == TU_MARK &&
		    strcmp(graph_string(g, e->aux), "sched_yield") == 0) {
			uint64_t x, y;
			graph_user_args(g, ti, i, &x, &y);
			n += x > 1 ? (uint32_t)(x - 1) : 0;
		} else if (e->type == TT_SYS_ENTER &&
		    (e->aux == SYS_nanosleep || e->aux == SYS_clock_nanosleep)) {
			uint32_t j;
			for (j = i + 1; j < t->nev && j < i + 16; j++)
				if (t->ev[j].type == TT_SYS_EXIT)
					break;
			if (j < t->nev && j < i + 16 &&
			    t->ev[j].ts - e->ts < SHORT_SLEEP)
				sleeps++;
			else
				continue;
		} else {
			continue;
		}
		if (*first == GRAPH_NONE)
			*first = i;
	}
	return n + sleeps;
}

/* Classify the span of h (thread and times set); fills kind, node, wait. */
static void
classify(struct diag *d, struct dhang *h)
{
	struct graph *g = d->g;
	uint32_t ti = h->pub.th.thread;
	uint64_t a = h->pub.start_ns, b = h->pub.end_ns, len = b - a, ov = 0;
	uint32_t yfirst;
	struct dwait dw;
	int have = diag_wait_overlapping(d, ti, a, b, &dw, &ov);

	h->pub.cpu_ns = diag_cpu_time(g, ti, a, b);
	h->pub.yields = count_yields(g, ti, a, b, &yfirst);
	if (h->pub.yields >= YIELD_MIN && (!have || ov < len / 2)) {
		h->pub.kind = DIAG_YIELD;
		h->pub.node = graph_vertex_of_event(g, ti, yfirst);
		snprintf(h->pub.wait.resource, sizeof(h->pub.wait.resource),
		    "yield");
		h->pub.wait.type = "yield";
		h->pub.wait.syscall = "sched_yield";
		return;
	}
	if (have && (ov >= len / 2 || h->pub.cpu_ns < len / 4)) {
		h->pub.kind = DIAG_BLOCKED;
		h->dw = dw;
		h->pub.wait = dw.w;
		h->pub.node = graph_vertex_of_event(g, ti, dw.sw);
		return;
	}
	h->pub.kind = h->pub.cpu_ns > 0 ? DIAG_BUSY : DIAG_NONE;
	h->pub.wait.syscall = "";
	h->pub.wait.type = "cpu";
	snprintf(h->pub.wait.resource, sizeof(h->pub.wait.resource), "cpu");
	/* the vertex running the most of the span */
	uint32_t best = GRAPH_NONE;
	uint64_t bt = 0;
	const struct gthread *t = &g->th[ti];
	for (uint32_t i = diag_event_at(g, ti, a); i < t->nev &&
	    t->ev[i].ts <= b; i++) {
		uint32_t v = graph_vertex_of_event(g, ti, i);
		if (v == GRAPH_NONE)
			continue;
		uint64_t s = graph_vertex_start(g, v), e = graph_vertex_end(g, v);
		s = s < a ? a : s;
		e = e > b ? b : e;
		if (e > s && e - s > bt) {
			bt = e - s;
			best = v;
		}
		i = g->vx[v].first + g->vx[v].nevents - 1;
	}
	if (best == GRAPH_NONE)
		best = graph_vertex_at(g, h->pub.th.tid, a);
	h->pub.node = best;
}

static int
from_marks(struct diag *d)
{
	struct graph *g = d->g;
	int found = 0;

	for (uint32_t ti = 0; ti < g->nth; ti++) {
		const struct gthread *t = &g->th[ti];
		int begun = 0;
		if (!(t->flags & GRAPH_THREAD_MARKS) ||
		    !diag_selected(d, ti, 0))
			continue;
		for (uint32_t i = 0; i < t->nev; i++) {
			const struct graph_event *e = &t->ev[i];
			if (e->type == TT_USER && e->sub == TU_HANG_END &&
			    !begun) {
				/* its begin was lost: arg is the length */
				uint64_t arg, arg2, a;
				graph_user_args(g, ti, i, &arg, &arg2);
				a = arg2 != 0 && arg2 < e->ts ? arg2 :
				    arg < e->ts ? e->ts - arg : e->ts;
				classify(d, diag_new_hang(d, ti, a, e->ts,
				    DIAG_SRC_MARK));
				found++;
				continue;
			}
			if (e->type == TT_USER && e->sub == TU_HANG_END)
				begun = 0;
			if (e->type != TT_USER || e->sub != TU_HANG_BEGIN)
				continue;
			begun = 1;
			uint64_t arg, arg2, a = e->ts, b = d->last_ts;
			graph_user_args(g, ti, i, &arg, &arg2);
			if (arg2 != 0 && arg2 < e->ts)
				a = arg2;
			else if (arg != 0 && arg < e->ts)
				a = e->ts - arg;
			for (uint32_t j = i + 1; j < t->nev; j++)
				if (t->ev[j].type == TT_USER &&
				    (t->ev[j].sub == TU_HANG_END ||
				    t->ev[j].sub == TU_HANG_BEGIN)) {
					if (t->ev[j].sub == TU_HANG_END)
						b = t->ev[j].ts;
					break;
				}
			struct dhang *h = diag_new_hang(d, ti, a, b, DIAG_SRC_MARK);
			classify(d, h);
			found++;
		}
	}
	return found;
}

/* The longest wait seen among the chosen threads that did not make a
   hang, and why (for the report when no hang is found, and for the
   user's own pick). */
struct longest {
	uint32_t ti, sw;	/* GRAPH_NONE: none */
	uint64_t dt;
	const char *why;
	size_t nwaits;		/* waits considered */
};

static int
sleep_nr(uint32_t nr)
{
	return nr == SYS_nanosleep || nr == SYS_clock_nanosleep;
}

/* A wait or a stretch without one that may be a hang, kept by the pass
   of kernel_thread_hangs() to be judged once every wait was seen. */
struct kspan {
	uint32_t sw;		/* the blocking switch (the first slice's of
				   a semantic wait, diag-swait.c) */
	uint32_t last, n;	/* its last slice's, and the slices */
	uint32_t enter;		/* its system call; GRAPH_NONE: a stretch
				   from event run without a wait */
	uint32_t run;
	uint64_t end;		/* when the wait ended (or the trace) */
};

static void
kernel_thread_hangs(struct diag *d, uint32_t ti, struct longest *lg)
{
	struct graph *g = d->g;
	const struct gthread *t = &g->th[ti];
	uint64_t th = d->o.threshold_ns;
	struct hmap shortw;	/* signature -> shortest wait */
	struct hmap count;	/* signature -> waits that ended */
	uint32_t enter = GRAPH_NONE, runfrom = GRAPH_NONE, upto = 0;
	DARR(struct kspan) ks = { 0 };
	struct dpoll poll;

	diag_poll_init(&poll, ti);
	hmap_init(&shortw);
	hmap_init(&count);
	/* one pass (the thread's events may be most of the trace): the
	   shortest wait and the number of waits by signature, and the
	   waits and the stretches without one long enough to judge */
	for (uint32_t i = 0; i < t->nev; i++) {
		const struct graph_event *e = &t->ev[i];
		diag_poll_step(d, &poll, enter, i);
		if (e->type == TT_SYS_ENTER)
			enter = i;
		else if (e->type == TT_SYS_EXIT)
			enter = GRAPH_NONE;
		if (e->type == GRAPH_EV_RUN && runfrom == GRAPH_NONE)
			runfrom = i;
		if (e->type != TT_SWITCH || !(e->flags & GRAPH_EVF_WAIT))
			continue;
		if (i < upto) {
			/* a later slice of the semantic wait before */
			runfrom = GRAPH_NONE;
			continue;
		}
		if (runfrom != GRAPH_NONE && e->ts - t->ev[runfrom].ts >= th) {
			/* never blocked: running, preempted or yielding */
			struct kspan k = { .sw = i, .enter = GRAPH_NONE,
			    .run = runfrom };
			DPUSH(ks, k);
		}
		runfrom = GRAPH_NONE;
		uint64_t end = d->last_ts;
		/* a wait in timed slices is one, whole, for a thread the
		   user named (diag_opts_named(): unnamed, it may be a main
		   loop waiting for work in slices, idle) */
		uint32_t ns = 1, last = enter != GRAPH_NONE &&
		    diag_opts_named(&d->o) ? diag_swait_last(g, ti, i, &ns) : i;
		upto = last + 1;
		uint32_t j = diag_wait_end(g, ti, last);
		if (j < t->nev)
			end = t->ev[j].ts;
		if (enter != GRAPH_NONE && j < t->nev) {
			uint64_t k = diag_res_key(&t->ev[enter]);
			uint64_t *mn = hmap_put(&shortw, k, UINT64_MAX, NULL);
			if (end - e->ts < *mn)
				*mn = end - e->ts;
			++*hmap_put(&count, k, 0, NULL);
			lg->nwaits++;
		}
		if (end - e->ts < th || enter == GRAPH_NONE) {
			if (enter != GRAPH_NONE && end - e->ts > lg->dt) {
				lg->dt = end - e->ts;
				lg->ti = ti;
				lg->sw = i;
				lg->why = "shorter than the threshold";
			}
			continue;
		}
		struct kspan k = { .sw = i, .enter = enter, .end = end,
		    .last = last, .n = ns };
		DPUSH(ks, k);
	}
	/* then, in time order: long waits far longer than their similar
	   ones, and long stretches without a wait */
	for (size_t x = 0; x < ks.n; x++) {
		uint32_t i = ks.v[x].sw, en = ks.v[x].enter;
		const struct graph_event *e = &t->ev[i];
		uint64_t end = ks.v[x].end;
		if (en == GRAPH_NONE) {
			classify(d, diag_new_hang(d, ti,
			    t->ev[ks.v[x].run].ts, e->ts, DIAG_SRC_KERNEL));
			continue;
		}
		/* far longer than the other waits on that resource (at
		   least twice the shortest), or the only one there */
		uint64_t k = diag_res_key(&t->ev[en]);
		uint64_t *mn = hmap_get(&shortw, k), *cn = hmap_get(&count, k);
		int far = mn != NULL && *mn <= (end - e->ts) / 2;
		int alone = cn == NULL || *cn <= 1;
		int rank = -1;
		const char *why = "not longer than its other waits there";
		/* the idle key (a pass over the thread's waits, memoized) is
		   asked only when it decides */
		if (far && k != diag_idle_key(d, ti))
			rank = 0;
		else if ((far || alone) && !sleep_nr(t->ev[en].aux) &&
		    (diag_lock_wait(g, ti, en, i) ||
		    diag_outstanding(g, ti, en, th,
		    diag_opts_named(&d->o))))
			rank = 1;	/* it waits for an answer or a lock */
		else if (far || alone)
			why = sleep_nr(t->ev[en].aux) ? "a sleep" :
			    "an idle wait (nothing handed to another thread "
			    "before it)";
		if (rank < 0) {
			if (end - e->ts > lg->dt) {
				lg->dt = end - e->ts;
				lg->ti = ti;
				lg->sw = i;
				lg->why = why;
			}
			continue;
		}
		struct dhang *h = diag_new_hang(d, ti, t->ev[en].ts, end,
		    DIAG_SRC_KERNEL);
		h->rank = rank;
		diag_wait_at(g, ti, ks.v[x].last, d->last_ts, &h->dw);
		diag_swait_widen(g, &h->dw, i, ks.v[x].n);
		h->pub.start_ns = h->dw.start;
		h->pub.end_ns = h->dw.end;
		classify(d, h);
	}
	free(ks.v);
	hmap_free(&shortw);
	hmap_free(&count);
	diag_poll_end(d, &poll);
}

static void
from_kernel(struct diag *d)
{
	struct longest lg = { .ti = GRAPH_NONE, .sw = GRAPH_NONE };
	size_t nsel = 0;

	for (uint32_t ti = 0; ti < d->g->nth; ti++)
		if (diag_selected(d, ti, 1)) {
			kernel_thread_hangs(d, ti, &lg);
			nsel++;
		}
	if (d->h.n > 0)
		return;
	if (diag_opts_named(&d->o) && lg.ti != GRAPH_NONE &&
	    lg.dt >= d->o.threshold_ns) {
		/* the user says it hung: its longest wait */
		struct dhang *h = diag_new_hang(d, lg.ti, 0, 0,
		    DIAG_SRC_KERNEL);
		h->rank = 2;
		diag_swait_at(d->g, lg.ti, lg.sw, d->last_ts, &h->dw);
		h->pub.start_ns = h->dw.start;
		h->pub.end_ns = h->dw.end;
		classify(d, h);
		h->found = xasprintf("the longest wait of the thread "
		    "chosen, although %s", lg.why);
		return;
	}
	struct dwait pw;
	if (diag_opts_named(&d->o) && lg.ti != GRAPH_NONE &&
	    diag_pwait_longest(d->g, d->g->th[lg.ti].pid,
	    d->o.threshold_ns, d->last_ts, &pw)) {
		/* no thread of it waited throughout, but the process did
		   (a runtime's tasks on threads of its own) */
		struct dhang *h = diag_new_hang(d, pw.ti, 0, 0,
		    DIAG_SRC_KERNEL);
		h->rank = 2;
		h->dw = pw;
		h->pub.start_ns = pw.start;
		h->pub.end_ns = pw.end;
		classify(d, h);
		if (h->pub.kind == DIAG_BLOCKED) {
			h->dw = pw;	/* the whole wait, its slices */
			h->pub.wait = pw.w;
			h->pub.node = graph_vertex_of_event(d->g, pw.ti,
			    pw.sw);
		}
		const char *host = graph_thread_host(d->g, pw.ti);
		h->found = xasprintf("no thread of %s%s%s (%u) waited "
		    "throughout, but the process did: for %.0f ms no thread "
		    "of another process woke or messaged one of its threads, "
		    "nor one of its threads one of theirs, and they ran "
		    "little (a runtime running its tasks on threads of its "
		    "own)", host ? host : "", host ? ":" : "",
		    d->g->th[pw.ti].comm, trace_tid_local(d->g->th[pw.ti].pid),
		    (double)(pw.end - pw.start) / 1e6);
		return;
	}
	free(d->why);
	if (nsel == 0)
		d->why = xasprintf("no user thread chosen");
	else if (lg.ti == GRAPH_NONE)
		d->why = xasprintf("%zu thread%s chosen, %zu wait%s "
		    "considered: none in a system call", nsel,
		    nsel == 1 ? "" : "s", lg.nwaits, lg.nwaits == 1 ? "" : "s");
	else
		d->why = diag_why_text(d->g, lg.ti, lg.sw, d->last_ts, nsel,
		    lg.nwaits, lg.dt, lg.why);
	d->why = diag_why_slices(d->g, &d->sl, d->why);
}

char *
diag_why_text(const struct graph *g, uint32_t ti, uint32_t sw,
    uint64_t last_ts, size_t nsel, size_t nwaits, uint64_t dt,
    const char *why)
{
	struct dwait dw;

	struct dwho wb;

	diag_wait_at(g, ti, sw, last_ts, &dw);
	return xasprintf("%zu thread%s chosen, %zu wait%s "
	    "considered; the longest, %.0f ms of %s in %s on %s, "
	    "is %s", nsel, nsel == 1 ? "" : "s", nwaits,
	    nwaits == 1 ? "" : "s", (double)dt / 1e6,
	    diag_who(g, ti, &wb),
	    dw.w.syscall[0] ? dw.w.syscall : "the kernel",
	    dw.w.resource, why);
}

/* Event of thread ti at ts of type type (a wait when wait), or
   GRAPH_NONE. */
static uint32_t
event_of(const struct graph *g, uint32_t ti, uint64_t ts, unsigned type,
    int wait)
{
	const struct gthread *t = &g->th[ti];

	for (uint32_t i = diag_event_at(g, ti, ts); i < t->nev &&
	    t->ev[i].ts == ts; i++)
		if (t->ev[i].type == type && (!wait ||
		    (t->ev[i].flags & GRAPH_EVF_WAIT)))
			return i;
	return GRAPH_NONE;
}

/* The wait hang of candidate c (its blocking switch i of thread ti);
   NULL when the graph says it is not one. */
static struct dhang *
listed_wait(struct diag *d, const struct dcand *c, uint32_t ti, uint32_t i)
{
	const struct graph *g = d->g;
	const struct gthread *t = &g->th[ti];
	uint32_t enter = GRAPH_NONE;
	int rank = c->what == DC_LONGEST ? 2 : c->rank;

	/* the system call it is in: the last entry with no exit since */
	for (uint32_t j = i; j-- > 0;) {
		if (t->ev[j].type == TT_SYS_EXIT)
			break;
		if (t->ev[j].type == TT_SYS_ENTER) {
			enter = j;
			break;
		}
	}
	if (enter == GRAPH_NONE || t->ev[enter].ts != c->enter_ts)
		return NULL;
	if (rank == 1 && !diag_lock_wait(g, ti, enter, i) &&
	    !diag_outstanding(g, ti, enter, d->o.threshold_ns,
	    diag_opts_named(&d->o)))
		return NULL;
	/* a wait in slices is one, whole, for a thread the user named */
	uint32_t ns = 1, last = diag_opts_named(&d->o) ?
	    diag_swait_last(g, ti, i, &ns) : i;
	/* a wait that goes on past the window ends where the streaming
	   pass saw it end (the trace's end when it never did) */
	uint32_t j = diag_wait_end(g, ti, last);
	uint64_t end = j < t->nev ? t->ev[j].ts : c->b > d->last_ts ? c->b :
	    d->last_ts;
	struct dhang *h = diag_new_hang(d, ti, t->ev[enter].ts, end,
	    DIAG_SRC_KERNEL);
	if (j >= t->nev && d->hist != NULL)
		h->pub.ended = end < d->hist->last_ts;
	h->rank = rank;
	diag_wait_at(g, ti, last, end, &h->dw);
	diag_swait_widen(g, &h->dw, i, ns);
	h->pub.start_ns = h->dw.start;
	h->pub.end_ns = h->dw.end;
	classify(d, h);
	if (rank == 2)
		h->found = xasprintf("the longest wait of the thread "
		    "chosen, although %s", c->why != NULL ? c->why : "");
	return h;
}

void
diag_listed_hangs(struct diag *d)
{
	const struct graph *g = d->g;

	for (size_t k = 0; k < d->ncand; k++) {
		const struct dcand *c = &d->cand[k];
		uint32_t ti = graph_thread_find(g, c->tid), i, f, l;
		struct dhang *h = NULL;
		if (ti == GRAPH_NONE)
			continue;
		switch (c->what) {
		case DC_MARK:
			h = diag_new_hang(d, ti, c->a, c->b, DIAG_SRC_MARK);
			classify(d, h);
			break;
		case DC_RUN:
			h = diag_new_hang(d, ti, c->a, c->b, DIAG_SRC_KERNEL);
			classify(d, h);
			break;
		case DC_WAIT: case DC_LONGEST:
			i = event_of(g, ti, c->a, TT_SWITCH, 1);
			if (i != GRAPH_NONE)
				h = listed_wait(d, c, ti, i);
			break;
		case DC_POLL:
			i = event_of(g, ti, c->a, TT_SYS_ENTER, 0);
			f = event_of(g, ti, c->enter_ts, TT_SYS_EXIT, 0);
			l = event_of(g, ti, c->last_ts, TT_SYS_EXIT, 0);
			if (i != GRAPH_NONE && f != GRAPH_NONE &&
			    l != GRAPH_NONE)
				h = diag_poll_hang(d, ti, i, f, l, c->n, c->b);
			break;
		}
		if (h != NULL)
			h->cand = k;
	}
}

static void
from_at(struct diag *d)
{
	struct graph *g = d->g;
	uint64_t at = d->o.at, bestlen = 0;
	uint32_t best = GRAPH_NONE;
	struct dwait bw;

	for (uint32_t ti = 0; ti < g->nth; ti++) {
		struct dwait dw;
		uint64_t ov;
		if (!diag_selected(d, ti, d->o.tid == 0 && d->o.comm == NULL))
			continue;
		if (best == GRAPH_NONE)
			best = ti;
		if (diag_wait_overlapping(d, ti, at, at + 1, &dw, &ov) &&
		    dw.end - dw.start > bestlen) {
			bestlen = dw.end - dw.start;
			best = ti;
			bw = dw;
		}
	}
	if (best == GRAPH_NONE)
		return;
	struct dhang *h;
	if (bestlen > 0) {
		h = diag_new_hang(d, best, bw.start, bw.end, DIAG_SRC_USER);
	} else {
		/* running: the stretch between the waits around at */
		const struct gthread *t = &g->th[best];
		uint32_t i = diag_event_at(g, best, at);
		uint64_t a = at, b = at;
		for (uint32_t j = i; j-- > 0;)
			if (t->ev[j].type == GRAPH_EV_RUN) {
				a = t->ev[j].ts;
				break;
			}
		for (uint32_t j = i; j < t->nev; j++)
			if (t->ev[j].type == TT_SWITCH &&
			    (t->ev[j].flags & GRAPH_EVF_WAIT)) {
				b = t->ev[j].ts;
				break;
			}
		h = diag_new_hang(d, best, a, b > a ? b : a + 1, DIAG_SRC_USER);
	}
	classify(d, h);
}

static int
by_start(const void *x, const void *y)
{
	const struct dhang *a = x, *b = y;

	if (a->pub.source != b->pub.source)
		return a->pub.source < b->pub.source ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->loop != b->loop)
		return a->loop ? -1 : 1;
	if (a->pub.start_ns != b->pub.start_ns)
		return a->pub.start_ns < b->pub.start_ns ? -1 : 1;
	return a->pub.th.tid < b->pub.th.tid ? -1 : 1;
}

void
diag_find_hangs(struct diag *d)
{
	if (d->cand != NULL)
		diag_listed_hangs(d);
	else if (d->o.at != 0)
		from_at(d);
	else if (from_marks(d) == 0)
		from_kernel(d);
	for (size_t i = 0; i < d->h.n; i++)
		d->h.v[i].loop = diag_event_loop(d,
		    d->h.v[i].pub.th.thread);
	if (d->h.n > 1)
		qsort(d->h.v, d->h.n, sizeof(*d->h.v), by_start);
}

