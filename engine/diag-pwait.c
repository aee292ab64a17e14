/*
 * diag-pwait.c: the wait of a process as a whole, a semantic wait above
 * the thread's (diag-swait.c) for runtimes that run their tasks on
 * threads of their own (Go's goroutines on its Ms, green threads, an
 * async executor's workers).
 *
 * Such a task waits for a reply with a deadline and retries: no thread
 * of the process waits throughout. One thread's poll times out, it
 * wakes another to run the timer's task, that one polls in turn, and
 * the first parks on a futex. Seen from outside the process, though,
 * nothing happened: no thread of another process woke any of its
 * threads, and none of its threads woke or messaged one outside it.
 *
 * The data is the graph's edges across the process's border: in (a
 * wake-up, message, pipe data, signal or spawn from a user thread of
 * another process to one of its threads) and out (the other way). A
 * process wait is a gap between two such crossings, the later one in,
 * during which its threads together ran for a small part of the gap.
 * It is named by the thread that crossing woke and that thread's waits
 * in the gap (its slices): the hang reads as that thread's wait from
 * its first blocking wait in the gap to the crossing.
 */
#include <stdlib.h>
#include <string.h>

#include "diag-local.h"

#define BUSY_PART 10		/* the threads ran at most 1/10 of the gap */

/* A crossing of the process's border: when, and for one in, the
   thread it woke and the event at which that thread ran. */
struct crossing {
	uint64_t ts;
	uint32_t ti, ev;	/* ti GRAPH_NONE: out */
};

static int
by_ts(const void *a, const void *b)
{
	const struct crossing *x = a, *y = b;

	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static int
is_block(const struct graph_event *e)
{
	return e->type == TT_SWITCH && (e->flags & GRAPH_EVF_WAIT);
}

/* The user thread behind the event src_ev of vertex v: its own, or for
   a softirq's, the thread that raised it (a loopback packet's sender),
   else GRAPH_NONE. */
static uint32_t
behind(const struct graph *g, uint32_t v, uint32_t ev)
{
	for (int hop = 0; hop < 4; hop++) {
		if (diag_user_thread(g, g->vx[v].thread))
			return g->vx[v].thread;
		size_t n;
		const uint32_t *in = graph_in_edges(g, v, &n);
		const struct graph_edge *pick = NULL;
		for (size_t k = n; k-- > 0 && pick == NULL;) {
			const struct graph_edge *e = graph_edge(g, in[k]);
			if (e->kind == GE_RAISE && e->dst_ev <= ev)
				pick = e;
		}
		if (pick == NULL)
			return GRAPH_NONE;
		v = pick->src;
		ev = pick->src_ev;
	}
	return GRAPH_NONE;
}

/* The CPU time of process pid's user threads in [a, b]. */
static uint64_t
process_cpu(const struct graph *g, uint32_t pid, uint64_t a, uint64_t b)
{
	uint64_t sum = 0;

	for (uint32_t ti = 0; ti < g->nth; ti++)
		if (g->th[ti].pid == pid && diag_user_thread(g, ti))
			sum += diag_cpu_time(g, ti, a, b);
	return sum;
}

int
diag_pwait_longest(const struct graph *g, uint32_t pid, uint64_t min_ns,
    uint64_t last_ts, struct dwait *dw)
{
	struct crossing *c = NULL;
	size_t n = 0, cap = 0;
	int found = 0;
	uint64_t best = 0;

	if (pid == 0)
		return 0;
	/* every wait's end, its waker resolved to a user thread (through
	   a softirq's delivery or a kernel worker): a crossing when one
	   of the two is in the process */
	for (uint32_t tj = 0; tj < g->nth; tj++) {
		const struct gthread *t = &g->th[tj];
		if (!diag_user_thread(g, tj))
			continue;
		for (uint32_t i = 0; i < t->nev; i++) {
			if (!is_block(&t->ev[i]))
				continue;
			uint32_t run = diag_wait_end(g, tj, i);
			if (run >= t->nev)
				continue;
			uint64_t wts = 0;
			int edge, stop;
			uint32_t w = diag_waker_of(g, tj, run, &wts, &edge,
			    &stop);
			if (w == GRAPH_NONE || (g->th[w].pid == pid) ==
			    (t->pid == pid))
				continue;
			DGROW(c, cap, n + 1, 64);
			if (t->pid == pid)
				c[n++] = (struct crossing){ t->ev[run].ts, tj,
				    run };
			else
				c[n++] = (struct crossing){ wts, GRAPH_NONE,
				    0 };
		}
	}
	/* data sent out of it without waking anyone (a busy peer reads
	   it later) */
	for (size_t k = 0; k < g->ned; k++) {
		const struct graph_edge *e = &g->ed[k];
		if (e->kind != GE_MSG && e->kind != GE_PIPE)
			continue;
		uint32_t s = behind(g, e->src, e->src_ev);
		uint32_t t = g->vx[e->dst].thread;
		if (s == GRAPH_NONE || g->th[s].pid != pid ||
		    g->th[t].pid == pid || !diag_user_thread(g, t))
			continue;
		DGROW(c, cap, n + 1, 64);
		c[n++] = (struct crossing){
		    g->th[g->vx[e->src].thread].ev[e->src_ev].ts, GRAPH_NONE,
		    0 };
	}
	qsort(c, n, sizeof(*c), by_ts);
	for (size_t k = 1; k < n; k++) {
		uint64_t x = c[k - 1].ts, y = c[k].ts;
		uint32_t ti = c[k].ti;
		if (ti == GRAPH_NONE || y - x < min_ns || y - x <= best ||
		    process_cpu(g, pid, x, y) > (y - x) / BUSY_PART)
			continue;
		/* the woken thread's waits in the gap: its slices */
		const struct gthread *t = &g->th[ti];
		uint32_t first = GRAPH_NONE, last = GRAPH_NONE, ns = 0;
		for (uint32_t i = diag_event_at(g, ti, x); i < c[k].ev; i++) {
			if (!is_block(&t->ev[i]))
				continue;
			if (first == GRAPH_NONE)
				first = i;
			last = i;
			ns++;
		}
		if (last == GRAPH_NONE || diag_wait_end(g, ti, last) >
		    c[k].ev || t->ev[first].ts - x > (y - x) / BUSY_PART)
			continue;
		diag_wait_at(g, ti, last, last_ts, dw);
		diag_swait_widen(g, dw, first, ns);
		best = y - x;
		found = 1;
	}
	free(c);
	return found;
}
