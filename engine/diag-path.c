/*
 * diag-path.c: the critical path of a thread over an interval, the
 * backbone of the diagnosis (after semantic waits, diag-swait.c).
 *
 * From the end of the interval, the walk goes back along wake-ups: the
 * thread's last semantic wait before that time, who ended it (a wake-up,
 * a message, pipe data, a signal; a loopback packet delivered in softirq
 * context, or work a kernel worker ran, counts as the thread behind it),
 * then that thread's own last wait before it woke the first, and so on.
 * A short wait for I/O the thread started itself (ended by a device's
 * interrupt) is part of its own work: the walk looks at the wait before
 * it. A short wait that the waker of the wait before it ended too, with
 * little run between (a lock handed back right after a join), is part
 * of that wait: the step's wait is the one before, and both count as
 * blocked. A thread idle since before the interval does not stop it:
 * the walk goes on to whoever woke it, and stops once a waker acted
 * before the interval, at a thread running since before it, at a
 * thread's own timer or timeout, at an interrupt from a device, at a
 * thread met again (a cycle), or at no recorded waker. A futex wait
 * that its own timer woke but that returned 0 was taken off its queue
 * by another thread's wake in the meantime, whose wake-up event the
 * timer's made needless: that thread, when it was the one on a CPU then
 * (of the process, for a private futex), ended it (lost_wake()).
 *
 * The result is an array of struct diag_cstep (engine.h), the hung
 * thread first, each step's waker being the next step's thread. It reads
 * the graph only; the other stages read the array.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "diag-local.h"

#define CPATH_MAX 32		/* steps of a path at most */
#define HOPS 6			/* kernel contexts followed to a thread */

static int
is_block(const struct graph_event *e)
{
	return e->type == TT_SWITCH && (e->flags & GRAPH_EVF_WAIT);
}

const char *
diag_cedge_name(int edge)
{
	static const char *const names[] = { "none", "wakeup", "message",
	    "pipe", "signal", "timer", "interrupt", "spawn", "work" };
	return edge >= 0 && edge < (int)(sizeof(names) / sizeof(names[0])) ?
	    names[edge] : "?";
}

const char *
diag_cstop_name(int stop)
{
	static const char *const names[] = {
	    "a wait with no recorded waker",
	    "a waker that acted before the interval",
	    "a thread's own timer or timeout", "an interrupt from a device",
	    "a thread running since before the interval",
	    "a thread met again (a cycle)", "the step limit",
	    "a wait that never ended", "the start of the recording" };
	return stop >= 0 && stop < (int)(sizeof(names) / sizeof(names[0])) ?
	    names[stop] : "?";
}

/* The edge kind of a path step for graph edge kind k. */
static int
cedge_of(unsigned k)
{
	switch (k) {
	case GE_WAKEUP: return DCE_WAKEUP;
	case GE_MSG: case GE_REPLY: return DCE_MESSAGE;
	case GE_PIPE: return DCE_PIPE;
	case GE_SIGNAL: return DCE_SIGNAL;
	case GE_TIMER: return DCE_TIMER;
	case GE_SPAWN: return DCE_SPAWN;
	case GE_WORK: case GE_TASK: case GE_RUNLOOP: return DCE_WORK;
	default: return DCE_WAKEUP;
	}
}

/* The event index of thread t's system call's exit after it ran again
   at run, before it leaves the CPU, and of its entry before (*enter);
   GRAPH_NONE when none. */
static uint32_t
call_around(const struct gthread *t, uint32_t run, uint32_t *enter)
{
	*enter = GRAPH_NONE;
	for (uint32_t i = run; i-- > 0 && i + DIAG_SCAN > run;) {
		if (t->ev[i].type == TT_SYS_EXIT)
			break;
		if (t->ev[i].type == TT_SYS_ENTER) {
			*enter = i;
			break;
		}
	}
	for (uint32_t i = run + 1; i < t->nev; i++) {
		if (t->ev[i].type == TT_SYS_EXIT)
			return *enter != GRAPH_NONE ? i : GRAPH_NONE;
		if (t->ev[i].type == TT_SWITCH || t->ev[i].type == TT_SYS_ENTER)
			break;
	}
	return GRAPH_NONE;
}

/*
 * Thread ti's wait, woken by its own timer at t1 (it ran again at event
 * run): when it is a futex wait that returned 0, not its timeout, a
 * FUTEX_WAKE took it off the queue between t1 and its return, and the
 * waker's wake-up event never came (the thread was runnable already).
 * The waker was on a CPU then: the only other user thread that was, of
 * ti's process when the futex is private (*wts the last time it ran
 * then). GRAPH_NONE when none or several were, when one's state then is
 * not known (events before but no switch: running since before the
 * graph began, or in a call its lead found open), or when the wait is
 * no such one. A thread with no event yet was not on a CPU (asleep
 * since before, or not born).
 */
static uint32_t
lost_wake(const struct graph *g, uint32_t ti, uint32_t run, uint64_t t1,
    uint64_t *wts)
{
	const struct gthread *t = &g->th[ti];
	uint32_t en, x = call_around(t, run, &en), found = GRAPH_NONE;
	uint64_t at = 0;

	if (x == GRAPH_NONE || t->ev[x].aux != SYS_futex || t->ev[x].key != 0 ||
	    t->ev[en].aux != SYS_futex)
		return GRAPH_NONE;
	uint64_t t2 = t->ev[x].ts;
	int own = (t->ev[en].flags & GRAPH_EVF_PRIVATE) != 0;
	for (uint32_t j = 0; j < g->nth; j++) {
		const struct gthread *o = &g->th[j];
		if (j == ti || (own && o->pid != t->pid) ||
		    !diag_user_thread(g, j))
			continue;
		uint64_t last = 0;
		uint32_t k = diag_event_at(g, j, t2 + 1), seen = k;
		while (k-- > 0) {
			const struct graph_event *e = &o->ev[k];
			if (e->type == GRAPH_EV_RUN)
				last = t2;	/* on a CPU at t2 */
			else if (e->type == TT_SWITCH && e->ts >= t1)
				last = e->ts;	/* left it after t1 */
			else if (e->type != TT_SWITCH)
				continue;
			break;
		}
		if (k == UINT32_MAX && seen > 0)
			return GRAPH_NONE;	/* not known */
		if (last == 0)
			continue;
		if (found != GRAPH_NONE)
			return GRAPH_NONE;	/* which one is not known */
		found = j;
		at = last;
	}
	if (found != GRAPH_NONE)
		*wts = at;
	return found;
}

uint32_t
diag_waker_of(const struct graph *g, uint32_t ti, uint32_t run, uint64_t *wts,
    int *edge, int *stop)
{
	uint32_t v = graph_vertex_of_event(g, ti, run), lim = run;
	int via = DCE_NONE;

	*stop = DCS_UNKNOWN;
	*edge = DCE_NONE;
	if (v == GRAPH_NONE)
		return GRAPH_NONE;
	/* the data that came with the wake-up names its sender better
	   than a softirq that delivered it */
	size_t n;
	const uint32_t *in = graph_in_edges(g, v, &n);
	const struct graph_edge *wake = NULL, *data = NULL;
	for (size_t k = 0; k < n; k++) {
		const struct graph_edge *e = graph_edge(g, in[k]);
		if ((e->kind == GE_WAKEUP || e->kind == GE_SIGNAL) &&
		    wake == NULL)
			wake = e;
		else if ((e->kind == GE_MSG || e->kind == GE_PIPE) &&
		    data == NULL && diag_user_thread(g, g->vx[e->src].thread) &&
		    g->vx[e->src].thread != ti)
			data = e;
	}
	if (wake == NULL && data == NULL)
		return GRAPH_NONE;
	if (wake != NULL) {
		uint32_t w = g->vx[wake->src].thread;
		if (diag_user_thread(g, w) && w != ti) {
			*wts = g->th[w].ev[wake->src_ev].ts;
			*edge = data != NULL && g->vx[data->src].thread == w ?
			    cedge_of(data->kind) : cedge_of(wake->kind);
			return w;
		}
	}
	if (data != NULL) {
		uint32_t w = g->vx[data->src].thread;
		*wts = g->th[w].ev[data->src_ev].ts;
		*edge = cedge_of(data->kind);
		return w;
	}
	/* woken from a kernel context: what it was doing, for whom */
	v = wake->src;
	lim = wake->src_ev;
	for (int hop = 0; hop < HOPS; hop++) {
		const struct graph_edge *pick = NULL;
		in = graph_in_edges(g, v, &n);
		for (size_t k = n; k-- > 0;) {
			const struct graph_edge *e = graph_edge(g, in[k]);
			if (!graph_edge_kind_weak(e->kind) && e->dst_ev <= lim) {
				pick = e;
				break;
			}
		}
		if (pick == NULL)
			break;
		uint32_t st = g->vx[pick->src].thread;
		if (via == DCE_NONE)
			via = cedge_of(pick->kind);
		if (pick->kind == GE_TIMER && (st == ti ||
		    !diag_user_thread(g, st))) {
			uint64_t t1 = g->th[g->vx[wake->src].thread].ev[
			    wake->src_ev].ts;
			uint32_t w = lost_wake(g, ti, run, t1, wts);
			if (w != GRAPH_NONE) {
				*edge = DCE_WAKEUP;
				return w;
			}
			*stop = DCS_TIMER;	/* its own timer */
			*edge = DCE_TIMER;
			return GRAPH_NONE;
		}
		if (diag_user_thread(g, st)) {
			if (st == ti)
				break;
			*wts = g->th[st].ev[pick->src_ev].ts;
			*edge = pick->kind == GE_RAISE ? DCE_MESSAGE : via;
			return st;
		}
		v = pick->src;
		lim = pick->src_ev;
	}
	if (g->vx[wake->src].kind == GV_IRQ || g->vx[v].kind == GV_IRQ) {
		*stop = DCS_IRQ;
		*edge = DCE_INTERRUPT;
	} else if (g->vx[v].kind == GV_TIMER) {
		*stop = DCS_TIMER;
		*edge = DCE_TIMER;
	}
	return GRAPH_NONE;
}

/* The last blocking switch of thread ti whose wait ended at or before
   event limit (exclusive of what comes after), or GRAPH_NONE. */
static uint32_t
last_wait(const struct graph *g, uint32_t ti, uint32_t limit)
{
	const struct gthread *t = &g->th[ti];

	for (uint32_t i = limit < t->nev ? limit + 1 : t->nev; i-- > 0;)
		if (is_block(&t->ev[i]) && diag_wait_end(g, ti, i) <= limit)
			return i;
	return GRAPH_NONE;
}

/*
 * Whether wait dw of thread ti, ended by thread w and shorter than a
 * quarter of [a, b], follows a wait of its own (into *pw) that w ended
 * too, that ended in [a, b], with a run between shorter than a 64th of
 * it: one wait on w, split by a lock taken back.
 */
static int
merge_wait(const struct graph *g, uint32_t ti, const struct dwait *dw,
    uint32_t w, uint64_t a, uint64_t b, uint64_t last_ts, struct dwait *pw)
{
	uint32_t f = dw->w.slices > 1 ? dw->first : dw->sw;
	uint64_t wts;
	int edge, why;

	if (dw->enter != GRAPH_NONE && dw->enter < f)
		f = dw->enter;
	if (dw->end - dw->start >= (b - a) / 4 || dw->start <= a || f == 0)
		return 0;
	uint32_t sw = last_wait(g, ti, f - 1);
	if (sw == GRAPH_NONE)
		return 0;
	diag_swait_at(g, ti, sw, last_ts, pw);
	return pw->run != GRAPH_NONE && pw->end >= a && pw->end <= dw->start &&
	    dw->start - pw->end < (b - a) / 64 &&
	    diag_waker_of(g, ti, pw->run, &wts, &edge, &why) == w;
}

size_t
diag_critical_path(const struct graph *g, uint32_t ti, uint64_t a,
    uint64_t b, uint64_t last_ts, struct diag_cstep *out, size_t max,
    int *stop)
{
	size_t n = 0;
	uint32_t cur = ti;
	uint64_t t = b;

	*stop = DCS_DEPTH;
	if (max > CPATH_MAX)
		max = CPATH_MAX;
	while (n < max) {
		const struct gthread *th = &g->th[cur];
		struct diag_cstep *s = &out[n];
		memset(s, 0, sizeof(*s));
		diag_thread_fill(g, cur, &s->th);
		diag_thread_fill(g, GRAPH_NONE, &s->waker);
		s->wait.syscall = s->wait.type = "";
		s->until = t;
		s->wait_enter = GRAPH_NONE;
		n++;
		/* the last event at or before t, and the wait before it;
		   a short wait for I/O the thread started itself (a device
		   ended it) is part of its own work: the wait before it */
		uint64_t ts = t, io = 0;
		struct dwait dw;
		uint32_t w = GRAPH_NONE;
		uint64_t wts = 0;
		int why = DCS_UNKNOWN, found = 0;
		for (;;) {
			uint32_t at = diag_event_at(g, cur, ts + 1);
			uint32_t sw = at > 0 ? last_wait(g, cur, at - 1) :
			    GRAPH_NONE;
			if (sw == GRAPH_NONE)
				break;
			diag_swait_at(g, cur, sw, last_ts, &dw);
			found = 1;
			if (dw.end < a || dw.run == GRAPH_NONE)
				break;
			w = diag_waker_of(g, cur, dw.run, &wts, &s->edge, &why);
			if (w != GRAPH_NONE || why != DCS_IRQ ||
			    dw.end - dw.start >= (b - a) / 4 ||
			    dw.start <= a)
				break;
			io += dw.end - dw.start;
			ts = dw.start;
		}
		/* a short wait split from the one before (merge_wait()) */
		struct dwait pw;
		int merged = found && w != GRAPH_NONE && io == 0 &&
		    merge_wait(g, cur, &dw, w, a, b, last_ts, &pw);
		if (!found) {
			s->running_ns = t > a ? t - a : 0;
			*stop = th->nev > 0 && th->ev[0].ts > a ?
			    DCS_RECSTART : DCS_RAN;
			break;
		}
		s->wait = merged ? pw.w : dw.w;
		s->wait_enter = merged ? pw.enter : dw.enter;
		s->wait_start = merged ? pw.start : dw.start;
		s->wait_end = dw.end;
		uint64_t lo = dw.start > a ? dw.start : a;
		uint64_t hi = dw.end < t ? dw.end : t;
		s->blocked_ns = hi > lo ? hi - lo : 0;
		if (merged) {
			lo = pw.start > a ? pw.start : a;
			s->blocked_ns += pw.end > lo ? pw.end - lo : 0;
		}
		lo = dw.end > a ? dw.end : a;
		s->running_ns = t > lo ? t - lo - (io < t - lo ? io : 0) : 0;
		s->io_ns = io;
		if (dw.end < a) {
			*stop = DCS_RAN;
			break;
		}
		if (dw.run == GRAPH_NONE) {
			*stop = DCS_NEVER;
			break;
		}
		if (w == GRAPH_NONE) {
			*stop = dw.w.timed_out ? DCS_TIMER : why;
			if (dw.w.timed_out)
				s->edge = DCE_TIMER;
			break;
		}
		diag_thread_fill(g, w, &s->waker);
		if (wts < a) {
			*stop = DCS_BEFORE;
			break;
		}
		int seen = 0;
		for (size_t k = 0; k < n; k++)
			seen |= out[k].th.thread == w;
		if (seen) {
			*stop = DCS_CYCLE;
			break;
		}
		cur = w;
		t = wts;
	}
	return n;
}

/* The graph edge kind that stands for path edge kind e in a step. */
static int
edge_kind(int e)
{
	switch (e) {
	case DCE_MESSAGE: return GE_MSG;
	case DCE_PIPE: return GE_PIPE;
	case DCE_SIGNAL: return GE_SIGNAL;
	case DCE_TIMER: return GE_TIMER;
	case DCE_SPAWN: return GE_SPAWN;
	case DCE_WORK: return GE_WORK;
	default: return GE_WAKEUP;
	}
}

void
diag_cpath_as_steps(const struct graph *g, const struct dwait *dw,
    const struct diag_cstep *cs, size_t n, void *out)
{
	DARR(struct diag_step) *o = out;

	for (size_t k = 0; k < n; k++) {
		/* the waiter's vertex that waited, each waker's that woke */
		struct diag_step st = { .th = cs[k].th,
		    .edge = k == 0 ? -1 : edge_kind(cs[k - 1].edge) };
		st.node = k == 0 ? graph_vertex_of_event(g, dw->ti, dw->sw) :
		    graph_vertex_at(g, cs[k].th.tid, cs[k].until);
		st.ts = st.node != GRAPH_NONE ? graph_vertex_start(g, st.node) :
		    cs[k].until;
		DPUSH(*o, st);
	}
}

size_t
diag_cpath_steps(const struct graph *g, const struct dwait *dw,
    uint64_t last_ts, void *out)
{
	struct diag_cstep cs[CPATH_MAX];
	int stop;

	if (dw->run == GRAPH_NONE)
		return 0;
	size_t n = diag_critical_path(g, dw->ti, dw->start, dw->end, last_ts,
	    cs, CPATH_MAX, &stop);
	diag_cpath_as_steps(g, dw, cs, n, out);
	return n;
}
