/*
 * diag-poll.c: what kernel events alone say about waits that look idle
 * but are not, about polling loops and about file lock holders.
 *
 * - diag_outstanding(): whether a thread handed something to another
 *   thread or process just before it blocked (a request/reply wait).
 * - diag_poll_step(): polling stretches of a thread, followed in its
 *   compact events by the pass of diag-hang.c: the same non-blocking
 *   operation on the same resource failing with "try again" (EAGAIN,
 *   EBUSY, or a refused connect) again and again, each retry after a
 *   wait that ended by its own timeout.
 *   So do timed slices: futex waits on one word back to back, each
 *   ended by its own timeout, until one is woken (a Java monitor's
 *   backoff, CPython's global interpreter lock), when the user named
 *   the thread (diag_opts_named()); one still slicing at the end of
 *   the trace is not kept (a thread ticking on a timer).
 *   Each stretch past the threshold becomes a hang of kind yield.
 * - diag_lock_culprit(): the holder of the file lock a blocked or
 *   polling attempt wants, from the TT_FILELOCK events of every thread
 *   (latest lock taken by another owner and not released since).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "diag-local.h"

#define MS 1000000ULL
#define POLL_MIN 3		/* failed attempts in a polling stretch */
#define LOOKBACK (50 * MS)	/* how far back a request is looked for */

static int
is_wait(const struct graph_event *e)
{
	return e->type == TT_SWITCH && (e->flags & GRAPH_EVF_WAIT);
}

static int
is_sleep_nr(uint32_t nr)
{
	return nr == SYS_nanosleep || nr == SYS_clock_nanosleep;
}

static int
is_poll_nr(uint32_t nr)
{
	return nr == SYS_poll || nr == SYS_ppoll || nr == SYS_select ||
	    nr == SYS_pselect6 || nr == SYS_epoll_wait ||
	    nr == SYS_epoll_pwait;
}

#define FL_OP(e) ((e)->sub & 7)
#define FL_TYPE(e) (((e)->sub >> 3) & 3)
#define FL_RES(e) ((e)->sub >> 5)

int
diag_lock_wait(const struct graph *g, uint32_t ti, uint32_t enter,
    uint32_t sw)
{
	const struct gthread *t = &g->th[ti];

	if (t->ev[enter].aux == SYS_flock)
		return 1;
	for (uint32_t i = enter; i < sw && i < t->nev; i++)
		if (t->ev[i].type == TT_FILELOCK &&
		    FL_RES(&t->ev[i]) == GRAPH_FL_BLOCKED)
			return 1;
	return 0;
}

/* Adds the process of thread tj to set (at most 8), once. */
static void
pid_add(uint32_t *set, unsigned *n, uint32_t pid)
{
	for (unsigned i = 0; i < *n; i++)
		if (set[i] == pid)
			return;
	if (*n < 8)
		set[(*n)++] = pid;
}

int
diag_outstanding(const struct graph *g, uint32_t ti, uint32_t enter,
    uint64_t threshold, int replies)
{
	const struct gthread *t = &g->th[ti];
	uint64_t from = t->ev[enter].ts;
	uint32_t to[8], by[8];
	unsigned nto = 0, nby = 0;
	int handed = 0;

	for (uint32_t i = enter; i-- > 0;) {
		const struct graph_event *e = &t->ev[i];
		if (from - e->ts > LOOKBACK)
			break;
		if (is_wait(e)) {
			/* a long earlier wait: what came before it is
			   another exchange */
			uint32_t k = diag_wait_end(g, ti, i);
			if (k < t->nev && t->ev[k].ts - e->ts > threshold / 10)
				break;
			continue;
		}
		/* who started this stretch: the sources of strong edges
		   into it from other processes */
		uint32_t v = graph_vertex_of_event(g, ti, i);
		if (v != GRAPH_NONE && g->vx[v].first == i) {
			size_t n;
			const uint32_t *in = graph_in_edges(g, v, &n);
			for (size_t k = 0; k < n; k++) {
				const struct graph_edge *ge = graph_edge(g, in[k]);
				uint32_t st = g->vx[ge->src].thread;
				if (!graph_edge_kind_weak(ge->kind) &&
				    diag_user_thread(g, st) &&
				    g->th[st].pid != t->pid)
					pid_add(by, &nby, g->th[st].pid);
			}
		}
		if ((e->flags & GRAPH_EVF_CTX) != TRACE_CTX_TASK)
			continue;
		switch (e->type) {
		case TT_WAKING: case TT_WAKEUP_NEW: case TT_SIGNAL_GEN:
			if (e->key != ti && e->key < g->nth &&
			    diag_user_thread(g, (uint32_t)e->key)) {
				handed = 1;
				pid_add(to, &nto, g->th[e->key].pid);
			}
			break;
		case TT_FORK:
			return 1;
		}
	}
	if (!handed)
		return 0;
	if (replies)
		return 1;
	/* answers: everything handed over went back to the processes
	   that started this stretch (a server's reply, then its idle
	   wait) */
	for (unsigned i = 0; i < nto; i++) {
		int back = 0;
		for (unsigned k = 0; k < nby; k++)
			back |= by[k] == to[i];
		if (!back)
			return 1;
	}
	return 0;
}

/* Whether the wait of switch sw ended by its own timeout: a sleep, or a
   poll, select or futex wait that returned 0 or ETIMEDOUT. */
static int
timed_wait(const struct graph *g, uint32_t ti, uint32_t enter, uint32_t sw)
{
	const struct gthread *t = &g->th[ti];
	uint32_t nr = t->ev[enter].aux;

	if (is_sleep_nr(nr))
		return 1;
	if (!is_poll_nr(nr) && nr != SYS_futex)
		return 0;
	for (uint32_t k = sw + 1; k < t->nev && k < sw + DIAG_SCAN; k++) {
		if (t->ev[k].type == TT_SYS_ENTER)
			return 0;
		if (t->ev[k].type == TT_SYS_EXIT)
			return (int64_t)t->ev[k].key == 0 ||
			    (int64_t)t->ev[k].key == -ETIMEDOUT;
	}
	return 0;
}

void
diag_slices_keep(struct dslices *best, const struct dslices *x)
{
	if (x->n == 0 || (best->n != 0 && (x->dt < best->dt ||
	    (x->dt == best->dt && x->tid >= best->tid))))
		return;
	*best = *x;
}

void
diag_slices_step(struct dslices *u, struct dslices *best, uint32_t tid,
    const struct graph_event *en, uint64_t ts, int slice, uint64_t threshold)
{
	uint64_t res = diag_res_key(en);

	if (u->n != 0 && res == u->res && slice &&
	    en->ts - u->last <= threshold / 2) {
		u->last = ts;
		u->n++;
		return;
	}
	if (u->n != 0 && res == u->res && !slice && u->n >= POLL_MIN &&
	    ts - u->a >= threshold) {
		/* woken at last, as a hang of diag_poll_exit() ends */
		u->dt = ts - u->a;
		u->tid = tid;
		diag_slices_keep(best, u);
	}
	u->n = 0;
	if (slice)
		*u = (struct dslices){ .a = en->ts, .last = ts, .res = res,
		    .key = en->key, .n = 1 };
}

char *
diag_why_slices(const struct graph *g, const struct dslices *best,
    char *why)
{
	if (best->n == 0)
		return why;
	uint32_t ti = graph_thread_find(g, best->tid);
	char *w = xasprintf("%s; %s (%u) waited %.0f ms in %u timed slices "
	    "on futex:0x%" PRIx64 " (a hang when its thread is named: --tid "
	    "%u)", why, ti != GRAPH_NONE ? g->th[ti].comm : "?", best->tid,
	    (double)best->dt / 1e6, best->n, best->key, best->tid);
	free(why);
	return w;
}

struct dhang *
diag_poll_hang(struct diag *d, uint32_t ti, uint32_t enter, uint32_t first,
    uint32_t last, uint32_t n, uint64_t end)
{
	const struct gthread *t = &d->g->th[ti];
	uint64_t a = t->ev[enter].ts;
	struct dhang *h = diag_new_hang(d, ti, a, end, DIAG_SRC_KERNEL);
	struct dwait dw;

	h->pub.kind = DIAG_YIELD;
	h->pub.node = graph_vertex_of_event(d->g, ti, enter);
	h->pub.cpu_ns = diag_cpu_time(d->g, ti, a, end);
	h->pub.yields = n;
	h->poll_enter = enter;
	h->poll_exit = first;
	/* the resource, as a wait on it would name it */
	memset(&dw, 0, sizeof(dw));
	diag_describe_sys(d->g, &t->ev[enter], &dw.w);
	h->pub.wait = dw.w;
	h->pub.wait.result = (int64_t)t->ev[last].key;
	h->pub.wait.has_result = 1;
	h->pub.wait.wait_ev = enter;
	if (diag_poll_timed_slice(t->ev[enter].aux,
	    (int64_t)t->ev[first].key)) {
		/* timed slices: the wait of the last one, which ended
		   them (its wake-up is the hang's) */
		uint32_t sw = GRAPH_NONE;
		h->pub.slices = 1;
		for (uint32_t i = enter; i < t->nev && t->ev[i].ts <= end; i++)
			if (t->ev[i].type == TT_SWITCH &&
			    (t->ev[i].flags & GRAPH_EVF_WAIT))
				sw = i;
		/* the last call may not have blocked (the word changed
		   before it slept, EAGAIN): then the last slice's wait,
		   ended by its timer */
		if (sw != GRAPH_NONE) {
			diag_wait_at(d->g, ti, sw, d->last_ts, &h->dw);
			if (sw > last)
				h->pub.wait.result = h->dw.w.result;
		} else {
			h->dw.run = h->dw.sw = GRAPH_NONE;
		}
	}
	return h;
}

/* The stretch being followed ends at end: kept when it is a hang. */
static void
poll_keep(struct diag *d, struct dpoll *p, uint64_t end)
{
	const struct gthread *t = &d->g->th[p->ti];

	if (p->s.n >= POLL_MIN &&
	    end - t->ev[p->s.enter].ts >= d->o.threshold_ns) {
		struct dpoll_found f = { .s = p->s, .end = end };
		DPUSH(p->found, f);
	}
	p->s.first = GRAPH_NONE;
}

void
diag_poll_init(struct dpoll *p, uint32_t ti)
{
	memset(p, 0, sizeof(*p));
	p->ti = ti;
	p->s.first = GRAPH_NONE;
}

void
diag_poll_wait(struct diag *d, struct dpoll *p, uint32_t enter, uint32_t i)
{
	if (timed_wait(d->g, p->ti, enter, i))
		p->s.timed = 1;
}

void
diag_poll_exit(struct diag *d, struct dpoll *p, uint32_t enter, uint32_t i)
{
	const struct gthread *t = &d->g->th[p->ti];
	const struct graph_event *e = &t->ev[i], *en = &t->ev[enter];
	struct dpoll_stretch *s = &p->s;
	uint64_t gap = d->o.threshold_ns / 2;
	int again = diag_try_again(en->aux, (int64_t)e->key);
	uint64_t res = diag_res_key(en);

	int slice = diag_opts_named(&d->o) &&
	    diag_poll_timed_slice(en->aux, (int64_t)e->key);

	if (!diag_opts_named(&d->o))
		diag_slices_step(&p->us, &d->sl, t->tid, en, e->ts,
		    diag_poll_timed_slice(en->aux, (int64_t)e->key),
		    d->o.threshold_ns);

	if (s->first != GRAPH_NONE && s->slices) {
		/* slices back to back: any other call ends them, but a
		   lock taken quickly on the way */
		if (res != s->res && diag_quick_lock(en->aux, en->ts, e->ts,
		    (int64_t)e->key))
			return;
		if (res == s->res && slice &&
		    en->ts - t->ev[s->last].ts <= gap) {
			s->last = i;
			s->n++;
			return;
		}
		if (res == s->res && !slice)
			poll_keep(d, p, e->ts);	/* woken at last */
		s->first = GRAPH_NONE;
		s->slices = 0;
		if (!slice && !again)
			return;
	}
	if (slice) {
		if (s->first != GRAPH_NONE)
			poll_keep(d, p, t->ev[s->last].ts);
		*s = (struct dpoll_stretch){ .first = i, .enter = enter,
		    .last = i, .n = 1, .res = res, .slices = 1 };
	} else if (s->first != GRAPH_NONE && res == s->res && !again) {
		poll_keep(d, p, e->ts);		/* it worked at last */
	} else if (again) {
		if (s->first != GRAPH_NONE && res == s->res && s->timed &&
		    e->ts - t->ev[s->last].ts <= gap) {
			s->last = i;
			s->n++;
			s->timed = 0;
		} else if (s->first == GRAPH_NONE || res != s->res ||
		    e->ts - t->ev[s->last].ts > gap || !s->timed) {
			if (s->first != GRAPH_NONE)
				poll_keep(d, p, t->ev[s->last].ts);
			*s = (struct dpoll_stretch){ .first = i, .enter = enter,
			    .last = i, .n = 1, .res = res };
		}
	}
}

void
diag_poll_end(struct diag *d, struct dpoll *p)
{
	const struct gthread *t = &d->g->th[p->ti];
	uint64_t gap = d->o.threshold_ns / 2;

	if (p->s.first != GRAPH_NONE && !p->s.slices) {
		/* still polling at the end of the trace, unless the attempts
		   stopped well before it: a recorder that keeps only the
		   failed attempts (the BPF one) does not show the one that
		   worked */
		uint64_t last = t->ev[p->s.last].ts;
		uint64_t tend = t->ev[t->nev - 1].ts;
		if (d->last_ts > tend)
			tend = d->last_ts;
		poll_keep(d, p, tend - last > gap ? last : tend);
	}
	for (size_t k = 0; k < p->found.n; k++) {
		const struct dpoll_found *f = &p->found.v[k];
		diag_poll_hang(d, p->ti, f->s.enter, f->s.first, f->s.last,
		    f->s.n, f->end);
	}
	free(p->found.v);
	p->found.v = NULL;
	p->found.n = 0;
}

/* --- file lock holders ------------------------------------------------ */

/* The attempt of thread ti around event range [a, b] (entry of a call
   to its switch or exit): its TT_FILELOCK event that did not get the
   lock (queued or refused). A recorder that writes the entry of a call
   only when the call ends (the BPF one, for a failed non-blocking
   attempt) puts the lock event before it: the events back to the
   previous call count too. */
static const struct graph_event *
lock_attempt(const struct graph *g, uint32_t ti, uint32_t a, uint32_t b)
{
	const struct gthread *t = &g->th[ti];

	while (a > 0 && t->ev[a - 1].type != TT_SYS_EXIT &&
	    t->ev[a - 1].type != TT_SYS_ENTER && !is_wait(&t->ev[a - 1]))
		a--;
	for (uint32_t i = a; i < t->nev && i <= b; i++)
		if (t->ev[i].type == TT_FILELOCK &&
		    (FL_RES(&t->ev[i]) == GRAPH_FL_BLOCKED ||
		    FL_RES(&t->ev[i]) == GRAPH_FL_AGAIN))
			return &t->ev[i];
	return NULL;
}

uint32_t
diag_lock_holder(const struct graph *g, uint64_t ino, uint32_t owner,
    uint64_t at, uint32_t *ev)
{
	uint32_t best = GRAPH_NONE;
	uint64_t bts = 0;

	for (uint32_t ti = 0; ti < g->nth; ti++) {
		const struct gthread *t = &g->th[ti];
		for (uint32_t i = 0; i < t->nev && t->ev[i].ts <= at; i++) {
			const struct graph_event *e = &t->ev[i];
			if (e->type != TT_FILELOCK || e->key != ino ||
			    e->aux == owner || FL_RES(e) != GRAPH_FL_OK)
				continue;
			if (FL_TYPE(e) != TRACE_FL_UN &&
			    FL_OP(e) != TFL_REMOVE_POSIX) {
				if (e->ts >= bts) {
					bts = e->ts;
					best = ti;
					*ev = i;
				}
				continue;
			}
			/* a release by the best owner so far: a flock lock
			   goes at once; a POSIX range only when the file is
			   closed (its ranges are not recorded) */
			if (best != GRAPH_NONE && e->aux == g->th[best].ev[*ev].aux &&
			    (FL_OP(e) == TFL_FLOCK ||
			    FL_OP(e) == TFL_REMOVE_POSIX)) {
				best = GRAPH_NONE;
				bts = 0;
			}
		}
	}
	return best;
}

/* The holder's state over [a, b] as a culprit (its wait in *w when
   blocked). */
static void
fill_culprit(struct diag *d, uint32_t ti, uint64_t a, uint64_t b,
    struct diag_culprit *c, struct dwait *w)
{
	uint64_t ov;

	memset(c, 0, sizeof(*c));
	diag_thread_fill(d->g, ti, &c->th);
	c->serving.comm = c->serving.process = "";
	c->start_ns = a;
	c->end_ns = b;
	c->wait.syscall = "";
	c->wait.type = "cpu";
	snprintf(c->wait.resource, sizeof(c->wait.resource), "cpu");
	if (diag_wait_overlapping(d, ti, a, b, w, &ov) && ov >= (b - a) / 2) {
		c->kind = DIAG_BLOCKED;
		c->wait = w->w;
		c->start_ns = w->start;
		c->end_ns = w->end;
		c->node = graph_vertex_of_event(d->g, ti, w->sw);
	} else {
		c->kind = diag_cpu_time(d->g, ti, a, b) > 0 ? DIAG_BUSY :
		    DIAG_NONE;
		c->node = graph_vertex_at(d->g, c->th.tid, a);
	}
}

int
diag_lock_culprit(struct diag *d, struct dhang *h, struct diag_culprit *c,
    struct dwait *w)
{
	const struct graph *g = d->g;
	uint32_t ti = h->pub.th.thread, a, b;
	const struct graph_event *at;


	if (h->pub.kind == DIAG_BLOCKED && h->dw.enter != GRAPH_NONE) {
		a = h->dw.enter;
		b = h->dw.sw;
	} else if (h->pub.kind == DIAG_YIELD && h->poll_exit != GRAPH_NONE) {
		a = h->poll_enter;
		b = h->poll_exit;
	} else {
		return 0;
	}
	if ((at = lock_attempt(g, ti, a, b)) == NULL)
		return 0;
	uint32_t hev = GRAPH_NONE;
	uint32_t ht = diag_lock_holder(g, at->key, at->aux, at->ts, &hev);
	if (ht == GRAPH_NONE || ht == ti) {
		dnote(h, "the lock on inode %llu has no holder in the trace "
		    "(taken before the recording started?)",
		    (unsigned long long)at->key);
		return 0;
	}
	fill_culprit(d, ht, h->pub.start_ns, h->pub.end_ns, c, w);
	struct dwho wb;
	dnote(h, "%s holds the lock on inode %llu since %.3f s "
	    "(file lock events)", diag_who(g, ht, &wb),
	    (unsigned long long)at->key,
	    (double)(g->th[ht].ev[hev].ts - graph_first_ts(g)) / 1e9);
	return 1;
}
