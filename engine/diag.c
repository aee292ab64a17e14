/*
 * diag.c: finding hangs and classifying their spinning node (the first
 * steps of argus-diagnose(1)); similar nodes are in diag-similar.c.
 *
 * The data is struct diag (diag-local.h): the graph, the options and one
 * struct dhang per hang. Waits are read straight from a thread's compact
 * events (struct dwait, described in diag-wait.c): a blocking switch, the
 * run that ended it, the system call around them and the
 * instrumentation's user-level wait around that. Here: overlaps of waits
 * with a window, CPU time, the keys that group waits, a thread's idle
 * wait and event loop.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "diag-local.h"

#define MS 1000000ULL
#define LOOP_MIN 3		/* waits in poll that make an event loop */

void
dnote(struct dhang *h, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		abort();
	va_end(ap);
	DPUSH(h->notes, s);
}

void
ddead(struct dhang *h, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		abort();
	va_end(ap);
	for (size_t i = 0; i < h->dead.n; i++)
		if (strcmp(h->dead.v[i], s) == 0) {
			free(s);
			return;
		}
	DPUSH(h->dead, s);
}

const char *
diag_who(const struct graph *g, uint32_t ti, struct dwho *b)
{
	const struct graph_thread *t = graph_thread(g, ti);
	const char *host = graph_thread_host(g, ti);

	if (t == NULL)
		snprintf(b->s, sizeof(b->s), "?");
	else
		snprintf(b->s, sizeof(b->s), "%s%s%s (%u)", host ? host : "",
		    host ? ":" : "", t->comm, trace_tid_local(t->tid));
	return b->s;
}

void
diag_thread_fill(const struct graph *g, uint32_t ti, struct diag_thread *t)
{
	const struct graph_thread *gt = graph_thread(g, ti);

	memset(t, 0, sizeof(*t));
	t->thread = ti;
	if (gt == NULL) {
		t->comm = t->process = "";
		return;
	}
	t->pid = gt->pid;
	t->tid = gt->tid;
	t->comm = gt->comm;
	t->process = gt->process != NULL ? gt->process : "";
	t->host = graph_thread_host(g, ti);
}

int
diag_user_thread(const struct graph *g, uint32_t ti)
{
	const struct graph_thread *t = graph_thread(g, ti);

	return t != NULL && !(t->flags & (GRAPH_THREAD_KERNEL |
	    GRAPH_THREAD_IRQ | GRAPH_THREAD_IGNORED)) && t->pid != 0;
}

uint32_t
diag_event_at(const struct graph *g, uint32_t ti, uint64_t ts)
{
	const struct gthread *t = &g->th[ti];
	uint32_t lo = 0, hi = t->nev;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (t->ev[mid].ts < ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* --- waits (their description: diag-wait.c) ----------------------------- */

uint64_t
diag_cpu_time(const struct graph *g, uint32_t ti, uint64_t a, uint64_t b)
{
	const struct gthread *t = &g->th[ti];
	uint32_t i = diag_event_at(g, ti, a);
	uint64_t sum = 0, on = 0;
	int running = 0;

	/* the state at a (preempted counts as running: it wants a CPU;
	   an event of its own after a wait says it ran again even when its
	   switch back in was lost) */
	for (uint32_t j = i; j-- > 0;) {
		if (t->ev[j].type == TT_SWITCH &&
		    (t->ev[j].flags & GRAPH_EVF_WAIT))
			break;
		if (t->ev[j].type == GRAPH_EV_RUN || diag_own_activity(&t->ev[j])) {
			running = 1;
			break;
		}
	}
	on = a;
	for (; i < t->nev && t->ev[i].ts <= b; i++) {
		int wait = t->ev[i].type == TT_SWITCH &&
		    (t->ev[i].flags & GRAPH_EVF_WAIT);
		if (!running && !wait && (t->ev[i].type == GRAPH_EV_RUN ||
		    diag_own_activity(&t->ev[i]))) {
			running = 1;
			on = t->ev[i].ts;
		} else if (wait && running) {
			running = 0;
			sum += t->ev[i].ts - on;
		}
	}
	if (running)
		sum += b - on;
	return sum;
}


uint64_t
diag_res_key(const struct graph_event *en)
{
	/* poll and select name their descriptors through an array in
	   user memory, which an event loop may move as it grows: the call
	   is the resource */
	if (!(en->flags & GRAPH_EVF_FDRES) && (en->aux == SYS_poll ||
	    en->aux == SYS_ppoll || en->aux == SYS_select ||
	    en->aux == SYS_pselect6))
		return (uint64_t)en->aux << 48;
	return ((uint64_t)en->aux << 48) ^ en->key ^ ((uint64_t)en->sub << 40);
}

int
diag_next_wait(const struct graph *g, uint32_t ti, struct dwaits *w)
{
	const struct gthread *t = &g->th[ti];

	for (; w->i < t->nev; w->i++) {
		const struct graph_event *e = &t->ev[w->i];

		if (e->type == TT_SYS_ENTER)
			w->enter = w->i;
		/* out of its call: a wait now is in none (as for
		   diag_wait_at(); the exit path of a thread, a fault) */
		if (e->type == TT_SYS_EXIT)
			w->enter = GRAPH_NONE;
		if (e->type != TT_SWITCH || !(e->flags & GRAPH_EVF_WAIT) ||
		    w->enter == GRAPH_NONE)
			continue;
		w->sw = w->i++;
		w->end = diag_wait_end(g, ti, w->sw);
		if (w->end < t->nev)
			return 1;
	}
	return 0;
}

uint64_t
diag_wait_key(const struct graph *g, const struct dwait *dw)
{
	if (dw->enter == GRAPH_NONE)
		return 0;
	return diag_res_key(&g->th[dw->ti].ev[dw->enter]);
}

/*
 * The key of the multiplexing wait (poll, select, epoll) thread ti sat
 * in when the recording started and sits in again at its end, the same
 * system call: an event loop seen for one turn, whose waits never both
 * began and ended in the recording. 0 when there is none.
 */
static uint64_t
loop_at_both_ends(const struct graph *g, uint32_t ti)
{
	const struct gthread *t = &g->th[ti];
	uint32_t first = GRAPH_NONE, last = GRAPH_NONE;

	for (uint32_t i = 0; i < t->nev && first == GRAPH_NONE; i++)
		if (t->ev[i].type == TT_SYS_ENTER ||
		    t->ev[i].type == TT_SYS_EXIT)
			first = i;
	if (first == GRAPH_NONE || t->ev[first].type != TT_SYS_EXIT ||
	    !diag_sys_poll(t->ev[first].aux))
		return 0;
	for (uint32_t i = t->nev; i-- > first + 1 && last == GRAPH_NONE;) {
		if (t->ev[i].type == TT_SYS_EXIT)
			return 0;
		if (t->ev[i].type == TT_SYS_ENTER)
			last = i;
	}
	if (last == GRAPH_NONE || t->ev[last].aux != t->ev[first].aux)
		return 0;
	for (uint32_t i = last + 1; i < t->nev; i++)
		if (t->ev[i].type == TT_SWITCH &&
		    (t->ev[i].flags & GRAPH_EVF_WAIT))
			return diag_res_key(&t->ev[last]);
	return 0;
}

uint64_t
diag_idle_key(struct diag *d, uint32_t ti)
{
	const struct graph *g = d->g;
	const struct gthread *t = &g->th[ti];
	uint64_t *c = hmap_get(&d->idle, ti), best = 0, bt = 0;
	int best_loop = 0;
	struct hmap tot, cnt;

	if (c != NULL)
		return *c - 1;
	if (d->hist != NULL && (c = hmap_get(&d->hist->idle, t->tid)) != NULL) {
		/* the whole trace's, from the streaming search */
		*hmap_put(&d->idle, ti, 0, NULL) = *c;
		if (hmap_get(&d->hist->loops, t->tid) != NULL)
			*hmap_put(&d->loops, ti, 0, NULL) = 1;
		return *c - 1;
	}
	hmap_init(&tot);
	hmap_init(&cnt);
	for (struct dwaits w = DWAITS_INIT; diag_next_wait(g, ti, &w);) {
		uint64_t dt = t->ev[w.end].ts - t->ev[w.sw].ts;
		const struct graph_event *en = &t->ev[w.enter];
		uint64_t k = diag_res_key(en);
		/* waiting for a child is never idle: the thread waits for
		   what it started (shells, build tools, supervisors) */
		if (diag_sys_child(en->aux))
			continue;
		uint64_t *x = hmap_put(&tot, k, 0, NULL);
		/* a loop comes back to its wait: one poll (a start
		   barrier) does not make an event loop */
		int lp = diag_sys_poll(en->aux) &&
		    ++*hmap_put(&cnt, k, 0, NULL) >= LOOP_MIN;
		if (dt < d->o.threshold_ns)
			*x += dt;
		/* an event-loop wait beats any other */
		if ((lp && !best_loop) || (lp == best_loop && *x > bt)) {
			bt = *x;
			best = k;
			best_loop = lp;
		}
	}
	hmap_free(&tot);
	hmap_free(&cnt);
	if (!best_loop) {
		/* no loop turned 3 times: one waiting at both ends */
		uint64_t k = loop_at_both_ends(g, ti);
		if (k != 0) {
			uint64_t from, to;
			best = k;
			/* the rule reads the recording's ends: a window
			   must reach them (diag-window.c) */
			graph_window(g, &from, &to);
			if (from != 0 || to != UINT64_MAX)
				d->needs_ends = 1;
		}
	}
	*hmap_put(&d->idle, ti, 0, NULL) = best + 1;
	if (best_loop)
		*hmap_put(&d->loops, ti, 0, NULL) = 1;
	return best;
}

int
diag_event_loop(struct diag *d, uint32_t ti)
{
	diag_idle_key(d, ti);
	return hmap_get(&d->loops, ti) != NULL;
}

/* Wake-ups of thread ti's long waits in [a, b] done from another
   context; h->wk_lo falls to the start of the window when the window
   does not show what ti did at a but shows a wait of ti end in the span
   (that wait may have begun before the window). */
void
diag_wakeups_of(struct diag *d, struct dhang *h, uint32_t ti, uint64_t a,
    uint64_t b)
{
	const struct graph *g = d->g;
	const struct gthread *t = &g->th[ti];
	uint64_t len = b - a, wa, wb;

	uint32_t from = diag_event_at(g, ti, a), seen = GRAPH_NONE;

	/* the wait in progress at a */
	for (uint32_t j = from; j-- > 0;) {
		if (t->ev[j].type == TT_SWITCH &&
		    (t->ev[j].flags & GRAPH_EVF_WAIT)) {
			from = seen = j;
			break;
		}
		if (t->ev[j].type == GRAPH_EV_RUN || diag_own_activity(&t->ev[j])) {
			seen = j;
			break;
		}
	}
	graph_window(g, &wa, &wb);
	if (seen == GRAPH_NONE || t->ev[seen].ts < wa) {
		for (uint32_t k = from; k < t->nev &&
		    t->ev[k].ts <= b + len / 10; k++)
			if (t->ev[k].type == GRAPH_EV_RUN ||
			    diag_own_activity(&t->ev[k])) {
				if (wa < h->wk_lo)
					h->wk_lo = wa;
				break;
			}
	} else if (t->ev[seen].ts < h->wk_lo) {
		h->wk_lo = t->ev[seen].ts;
	}
	/* each long wait ending in the span: where the thread ran again
	   (its switch in, or its first event when that switch was lost) */
	for (uint32_t sw = from; sw < t->nev &&
	    t->ev[sw].ts <= b + len / 10; sw++) {
		if (t->ev[sw].type != TT_SWITCH ||
		    !(t->ev[sw].flags & GRAPH_EVF_WAIT))
			continue;
		uint32_t i = diag_wait_end(g, ti, sw);
		if (i >= t->nev || t->ev[i].ts < a ||
		    t->ev[i].ts > b + len / 10 ||
		    t->ev[i].ts - t->ev[sw].ts < len / 10)
			continue;
		uint32_t v = graph_vertex_of_event(g, ti, i), lim = i;
		for (int hop = 0; hop < 6 && v != GRAPH_NONE; hop++) {
			size_t n;
			const uint32_t *in = graph_in_edges(g, v, &n);
			const struct graph_edge *pick = NULL;
			/* past the wake-up itself, what the context was
			   doing for someone (the work, timer or message)
			   says more than who woke the context */
			for (size_t k = n; k-- > 0;) {
				const struct graph_edge *e = graph_edge(g, in[k]);
				if (graph_edge_kind_weak(e->kind) ||
				    e->dst_ev > lim)
					continue;
				if ((hop == 0) != (e->kind == GE_WAKEUP))
					continue;
				pick = e;
				break;
			}
			for (size_t k = n; hop > 0 && pick == NULL && k-- > 0;) {
				const struct graph_edge *e = graph_edge(g, in[k]);
				if (!graph_edge_kind_weak(e->kind) &&
				    e->dst_ev <= lim) {
					pick = e;
					break;
				}
			}
			if (pick == NULL)
				break;
			uint32_t st = g->vx[pick->src].thread;
			if (diag_user_thread(g, st)) {
				if (hop == 0)
					break;	/* a direct wake-up */
				struct diag_wakeup w = { .via = pick->kind,
				    .ts = t->ev[i].ts };
				diag_thread_fill(g, ti, &w.woken);
				diag_thread_fill(g, st, &w.cause);
				DPUSH(h->wk, w);
				break;
			}
			v = pick->src;
			lim = pick->src_ev;
		}
	}
}

struct dhang *
diag_new_hang(struct diag *d, uint32_t ti, uint64_t a, uint64_t b, int src)
{
	struct dhang z;

	memset(&z, 0, sizeof(z));
	DPUSH(d->h, z);
	diag_hangs_moved(d);
	struct dhang *h = &d->h.v[d->h.n - 1];
	diag_thread_fill(d->g, ti, &h->pub.th);
	h->pub.start_ns = a;
	h->pub.end_ns = b;
	h->pub.source = src;
	h->pub.ended = b < d->last_ts;
	h->pub.node = GRAPH_NONE;
	h->picked = -1;
	h->cand = SIZE_MAX;
	h->cause_node = GRAPH_NONE;
	h->wk_lo = UINT64_MAX;
	h->deep_lo = UINT64_MAX;
	h->deep_hi = 0;
	h->poll_enter = h->poll_exit = GRAPH_NONE;
	h->pub.wait.syscall = "";
	h->pub.wait.type = "";
	return h;
}

int
diag_selected(const struct diag *d, uint32_t ti, int main_only)
{
	const struct graph_thread *t = graph_thread(d->g, ti);

	if (!diag_user_thread(d->g, ti))
		return 0;
	/* a thread the trace never names (no thread record) is one the
	   recorder did not follow: a task outside a scoped recorder's
	   namespace, seen only where it touched the scope */
	if (t->comm[0] == '\0')
		return 0;
	/* in a merged trace, the ids a host knows, on any host */
	if (d->o.tid != 0)
		return trace_tid_local(t->tid) == d->o.tid;
	if (d->o.pid != 0 && trace_tid_local(t->pid) != d->o.pid)
		return 0;
	if (d->o.comm != NULL)
		return strcmp(t->comm, d->o.comm) == 0 ||
		    (t->tid == t->pid && strcmp(t->process, d->o.comm) == 0);
	return !main_only || t->tid == t->pid;
}

void
diag_hangs_moved(struct diag *d)
{
	for (size_t i = 0; i < d->h.n; i++)
		d->h.v[i].cycle.tids = d->h.v[i].cyc_tids;
}
