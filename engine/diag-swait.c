/*
 * diag-swait.c: semantic waits, the first stage of the diagnosis.
 *
 * A thread that waits for something may take several system calls to do
 * it: libcurl polls its socket for at most 1 s at a time, a database
 * backend's latch wait is cut by its deadlock check's timer, a daemon's
 * sigtimedwait returns every few seconds to look at its clock. Each call
 * is a slice; the wait lasts from the first slice's blocking switch to
 * the end of the last one, and it timed out only when the last did.
 *
 * The data is a thread's compact events; a semantic wait is named by the
 * blocking switches of its first and last slices (struct dswait). A slice
 * continues into the next blocking wait when:
 *  - both are the same call on the same resource (diag_res_key()), a call
 *    that waits with a timeout (poll, select, epoll, sigtimedwait, a read,
 *    write, send or receive, a message queue's; futex waits in slices are
 *    a lock's turns, diag-poll.c) or a lock wait a signal may cut short
 *    (fcntl, flock: an alarm as its timeout);
 *  - the slice ended by its own timeout, or was interrupted by a signal
 *    that no other user thread sent (the thread's own timer);
 *  - between them the thread only kept its books: at most DIAG_SLICE_GAP
 *    later, without blocking elsewhere or waking another user thread.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "diag-local.h"


static const long sliced[] = { SYS_poll, SYS_ppoll, SYS_select,
	SYS_pselect6, SYS_epoll_wait, SYS_epoll_pwait,
#ifdef SYS_epoll_pwait2
	SYS_epoll_pwait2,
#endif
	SYS_rt_sigtimedwait, SYS_read, SYS_readv, SYS_recvfrom, SYS_recvmsg,
	SYS_accept, SYS_accept4, SYS_write, SYS_writev, SYS_sendto,
	SYS_sendmsg, SYS_mq_timedreceive, SYS_mq_timedsend, SYS_semtimedop,
	/* lock waits a signal interrupts (an alarm as their timeout) */
	SYS_fcntl, SYS_flock, -1 };

int
diag_sys_sliced(uint32_t nr)
{
	for (const long *s = sliced; *s >= 0; s++)
		if ((long)nr == *s)
			return 1;
	return 0;
}

int
diag_slice_empty(uint32_t nr, int64_t ret)
{
	/* the exit tracepoint may see the kernel's restart codes
	   (ERESTARTSYS 512 to ERESTART_RESTARTBLOCK 516) before they
	   become EINTR */
	if (ret == -EINTR || ret == -ETIMEDOUT || (ret <= -512 && ret >= -516))
		return 1;
	if (diag_sys_poll(nr))
		return ret == 0;
	return ret == -EAGAIN;
}

/* The user thread other than ti that woke or signalled thread ti where
   it ran again at event run, or GRAPH_NONE. */
static uint32_t
other_waker(const struct graph *g, uint32_t ti, uint32_t run)
{
	uint32_t v = graph_vertex_of_event(g, ti, run);
	size_t n;

	if (v == GRAPH_NONE)
		return GRAPH_NONE;
	const uint32_t *in = graph_in_edges(g, v, &n);
	for (size_t k = 0; k < n; k++) {
		const struct graph_edge *e = graph_edge(g, in[k]);
		if (e->kind != GE_WAKEUP && e->kind != GE_SIGNAL)
			continue;
		uint32_t w = g->vx[e->src].thread;
		if (w != ti && diag_user_thread(g, w))
			return w;
	}
	return GRAPH_NONE;
}

/* The system call entry around blocking switch sw, or GRAPH_NONE. */
static uint32_t
entry_of(const struct gthread *t, uint32_t sw)
{
	for (uint32_t i = sw; i-- > 0 && i + DIAG_SCAN > sw;) {
		if (t->ev[i].type == TT_SYS_EXIT)
			return GRAPH_NONE;
		if (t->ev[i].type == TT_SYS_ENTER)
			return i;
	}
	return GRAPH_NONE;
}

static int
is_block(const struct graph_event *e)
{
	return e->type == TT_SWITCH && (e->flags & GRAPH_EVF_WAIT);
}

uint32_t
diag_swait_next(const struct graph *g, uint32_t ti, uint32_t sw)
{
	const struct gthread *t = &g->th[ti];
	uint32_t en = entry_of(t, sw);

	if (en == GRAPH_NONE || !diag_sys_sliced(t->ev[en].aux))
		return GRAPH_NONE;
	uint32_t run = diag_wait_end(g, ti, sw);
	if (run >= t->nev)
		return GRAPH_NONE;
	/* the call's exit: what the slice came back with */
	uint32_t x = GRAPH_NONE;
	for (uint32_t i = run; i < t->nev && i < run + DIAG_SCAN; i++) {
		if (is_block(&t->ev[i]) || t->ev[i].type == TT_SYS_ENTER)
			return GRAPH_NONE;	/* blocked again in it, or lost */
		if (t->ev[i].type == TT_SYS_EXIT) {
			x = i;
			break;
		}
	}
	if (x == GRAPH_NONE || !diag_slice_empty(t->ev[en].aux,
	    (int64_t)t->ev[x].key))
		return GRAPH_NONE;
	if ((int64_t)t->ev[x].key != 0 &&
	    other_waker(g, ti, run) != GRAPH_NONE)
		return GRAPH_NONE;	/* another thread ended it */
	uint64_t key = diag_res_key(&t->ev[en]), until = t->ev[x].ts +
	    DIAG_SLICE_GAP;
	uint32_t en2 = GRAPH_NONE;
	for (uint32_t i = x + 1; i < t->nev && t->ev[i].ts <= until; i++) {
		const struct graph_event *e = &t->ev[i];
		if (e->type == TT_SYS_ENTER)
			en2 = i;
		else if (e->type == TT_SYS_EXIT)
			en2 = GRAPH_NONE;
		if ((e->type == TT_WAKING || e->type == TT_WAKEUP_NEW ||
		    e->type == TT_SIGNAL_GEN || e->type == TT_FORK) &&
		    (e->flags & GRAPH_EVF_CTX) == TRACE_CTX_TASK &&
		    e->key != ti && e->key < g->nth &&
		    diag_user_thread(g, (uint32_t)e->key))
			return GRAPH_NONE;	/* it handed something on */
		if (!is_block(e))
			continue;
		if (en2 != GRAPH_NONE && t->ev[en2].aux == t->ev[en].aux &&
		    diag_res_key(&t->ev[en2]) == key)
			return i;
		return GRAPH_NONE;		/* it waited for another thing */
	}
	return GRAPH_NONE;
}

uint32_t
diag_swait_first(const struct graph *g, uint32_t ti, uint32_t sw,
    uint32_t *n)
{
	const struct gthread *t = &g->th[ti];
	uint32_t first = sw, count = 1;

	/* the blocking wait before: the one whose continuation is first */
	for (;;) {
		uint32_t en = entry_of(t, first), prev = GRAPH_NONE;
		if (en == GRAPH_NONE || !diag_sys_sliced(t->ev[en].aux))
			break;
		for (uint32_t i = en; i-- > 0 && i + 4 * DIAG_SCAN > en;) {
			if (is_block(&t->ev[i])) {
				prev = i;
				break;
			}
		}
		if (prev == GRAPH_NONE || diag_swait_next(g, ti, prev) != first)
			break;
		first = prev;
		count++;
	}
	if (n != NULL)
		*n = count;
	return first;
}

uint32_t
diag_swait_last(const struct graph *g, uint32_t ti, uint32_t sw,
    uint32_t *n)
{
	uint32_t last = sw, k;

	if (n != NULL)
		*n = 1;
	while ((k = diag_swait_next(g, ti, last)) != GRAPH_NONE) {
		last = k;
		if (n != NULL)
			++*n;
	}
	return last;
}

void
diag_swait_at(const struct graph *g, uint32_t ti, uint32_t sw,
    uint64_t last_ts, struct dwait *dw)
{
	uint32_t nb, na;
	uint32_t first = diag_swait_first(g, ti, sw, &nb);
	uint32_t last = diag_swait_last(g, ti, sw, &na);

	diag_wait_at(g, ti, last, last_ts, dw);
	diag_swait_widen(g, dw, first, nb + na - 1);
}

void
diag_swait_widen(const struct graph *g, struct dwait *dw, uint32_t first,
    uint32_t n)
{
	if (n <= 1)
		return;
	dw->first = first;
	dw->start = g->th[dw->ti].ev[first].ts;
	dw->w.slices = n;
}

int
diag_wait_overlapping(const struct diag *d, uint32_t ti, uint64_t a,
    uint64_t b, struct dwait *best, uint64_t *overlap)
{
	const struct graph *g = d->g;
	const struct gthread *t = &g->th[ti];
	uint64_t bo = 0;
	int found = 0;
	uint32_t i = diag_event_at(g, ti, a);
	uint32_t last = GRAPH_NONE, seg = i < t->nev ? gthread_seg_first(t, i) :
	    t->nev > 0 ? gthread_seg_first(t, t->nev - 1) : 0;

	/* the wait in progress at a, in its segment */
	for (uint32_t j = i; j-- > seg;) {
		if (t->ev[j].type == TT_SWITCH &&
		    (t->ev[j].flags & GRAPH_EVF_WAIT)) {
			last = j;
			break;
		}
		if (t->ev[j].type == GRAPH_EV_RUN || diag_own_activity(&t->ev[j]))
			break;
	}
	/* semantic waits: a wait in timed slices counts whole */
	uint32_t n0 = 1, j0 = last;
	if (last != GRAPH_NONE)
		j0 = diag_swait_first(g, ti, last, &n0);
	for (uint32_t j = j0 != GRAPH_NONE ? j0 : i; j < t->nev &&
	    t->ev[j].ts <= b; j++) {
		if (t->ev[j].type != TT_SWITCH ||
		    !(t->ev[j].flags & GRAPH_EVF_WAIT))
			continue;
		uint32_t ns, jl = diag_swait_last(g, ti, j, &ns);
		uint64_t s = t->ev[j].ts, e = d->last_ts;
		uint32_t k = diag_wait_end(g, ti, jl);
		if (k < t->nev)
			e = t->ev[k].ts;
		uint64_t lo = s > a ? s : a, hi = e < b ? e : b;
		if (hi > lo && hi - lo > bo) {
			bo = hi - lo;
			diag_wait_at(g, ti, jl, d->last_ts, best);
			diag_swait_widen(g, best, j, ns);
			found = 1;
		}
		j = jl;
	}
	*overlap = bo;
	return found;
}

int
diag_slices_overlapping(const struct diag *d, uint32_t ti, uint64_t a,
    uint64_t b, struct dwait *w, uint64_t *start, uint64_t *overlap)
{
	const struct graph *g = d->g;
	const struct gthread *t = &g->th[ti];
	uint64_t key = 0, rs = 0, bo = 0;
	uint32_t n = 0, sw = GRAPH_NONE, enter = GRAPH_NONE;
	int found = 0;
	/* from a window's length before a: a run begun earlier counts
	   from there, which is all its overlap needs */
	uint32_t j = diag_event_at(g, ti, a > b - a ? a - (b - a) : 0);

	for (; j < t->nev; j++) {
		const struct graph_event *e = &t->ev[j];
		int close = 0;
		if (e->type == TT_SYS_ENTER) {
			uint32_t x = j + 1;
			while (x < t->nev && x < j + DIAG_SCAN &&
			    t->ev[x].type != TT_SYS_EXIT &&
			    t->ev[x].type != TT_SYS_ENTER)
				x++;
			if (n > 0 && diag_res_key(e) != key && x < t->nev &&
			    t->ev[x].type == TT_SYS_EXIT &&
			    diag_quick_lock(e->aux, e->ts, t->ev[x].ts,
			    (int64_t)t->ev[x].key)) {
				j = x;		/* a lock taken on the way */
				continue;
			}
			if (n > 0 && (e->aux != SYS_futex ||
			    diag_res_key(e) != key))
				close = 1;	/* another call: the run ended */
			else
				enter = j;
		} else if (e->type == TT_SWITCH && (e->flags & GRAPH_EVF_WAIT) &&
		    enter != GRAPH_NONE && t->ev[enter].aux == SYS_futex) {
			if (n == 0) {
				key = diag_res_key(&t->ev[enter]);
				rs = e->ts;
			}
			sw = j;
		} else if (e->type == TT_SYS_EXIT && enter != GRAPH_NONE) {
			if (sw != GRAPH_NONE && sw > enter &&
			    diag_poll_timed_slice(t->ev[enter].aux,
			    (int64_t)e->key))
				n++;	/* timed out: the run goes on */
			else if (sw != GRAPH_NONE && sw > enter && n > 0) {
				n++;	/* woken: the run's last slice */
				close = 1;
			} else
				n = 0;
			enter = GRAPH_NONE;
		}
		if (close || (n > 0 && j + 1 == t->nev)) {
			uint64_t re = e->ts;
			uint64_t lo = rs > a ? rs : a, hi = re < b ? re : b;
			if (n >= 2 && hi > lo && hi - lo > bo) {
				bo = hi - lo;
				*start = rs;
				diag_wait_at(g, ti, sw, d->last_ts, w);
				found = 1;
			}
			n = 0;
			sw = GRAPH_NONE;
			if (e->type == TT_SYS_ENTER)
				enter = j;	/* it may begin the next run */
		}
		if (e->ts > b && n == 0)
			break;
	}
	*overlap = bo;
	return found;
}
