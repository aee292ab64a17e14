/*
 * diag-scan.c: the whole-trace search for hangs in one streaming pass
 * over the events (diag_scan()), in memory proportional to threads and
 * to the resources they wait on, not to events.
 *
 * Each thread of the trace gets a struct sthr: its name and process as
 * the graph's load pass would leave them, the system call it is in,
 * the wait in progress, the polling stretch being followed, and its
 * hang marks; and a table from wait resource (diag_res_key()) to a
 * struct kstat, the statistics diag-hang.c reads over a thread's whole
 * history: the shortest wait and the number of waits on the resource,
 * and the time spent in short waits and the polls that make its idle
 * wait (diag_idle_key()). The thread's events are the ones the load
 * pass would give it (graph-load.c): a switch out of it (a wait when it
 * blocked), a switch into it (a run), its own events in task context.
 *
 * A named thread's wait in timed slices (diag-swait.c) is followed as
 * one (struct dsem): its length counts once, whole, and makes one
 * candidate. The structures are in diag-scan-local.h; what the pass
 * leaves is settled in diag-scan-end.c.
 *
 * Everything diag-hang.c decides from the history alone is decided
 * here the same way: which stretches ran past the threshold, which
 * waits are far longer than the thread's other waits on the resource,
 * which polling stretches and which hang marks make hangs. What needs
 * the graph (whether a wait answers a request or waits for a lock, the
 * analysis) is left to a window around each candidate (diag-search.c).
 * Keys of reads and writes are final only at the call's exit (the load
 * pass names the descriptor's file then): waits keep their numbers
 * until the entry they count on is final.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "diag-scan-local.h"

static struct sthr *
thr(struct scan *s, uint32_t tid)
{
	uint64_t *p = hmap_get(&s->bytid, tid);

	if (p != NULL)
		return &s->t[*p];
	DGROW(s->t, s->capt, s->nt + 1, 64);
	struct sthr *t = &s->t[s->nt];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->runh = 7;
	t->run_new = 1;
	t->pid = tid;
	if (tid >= GRAPH_IRQ_TID_BASE) {
		t->pid = 0;
		t->flags = GRAPH_THREAD_IRQ | GRAPH_THREAD_KERNEL;
	}
	*hmap_put(&s->bytid, tid, 0, NULL) = s->nt;
	return &s->t[s->nt++];
}

static void
set_comm(struct sthr *t, const char *c, size_t len)
{
	if (len >= TRACE_COMM_LEN)
		len = TRACE_COMM_LEN - 1;
	memcpy(t->comm, c, len);
	t->comm[len] = '\0';
}

/* graph_load_thread(), for the names and processes. */
static void
load_thread(struct scan *s, const struct trace_thread *tt)
{
	if (tt->tid == 0)
		return;
	struct sthr *t = thr(s, tt->tid);
	if (tt->pid != 0)
		t->pid = tt->pid;
	if (tt->flags & TRACE_THREAD_KERNEL)
		t->flags |= GRAPH_THREAD_KERNEL;
	if (tt->comm[0] != '\0')
		set_comm(t, tt->comm, strnlen(tt->comm, TRACE_COMM_LEN));
}

static struct kstat *
kstat_of(struct scan *s, struct sthr *t, uint64_t k)
{
	int added;
	uint64_t *p = hmap_put(&t->keys, k, 0, &added);

	if (added) {
		struct kstat z = { .shortest = UINT64_MAX };
		*p = s->ks.n;
		DPUSH(s->ks, z);
	}
	return &s->ks.v[*p];
}

#define IDLE_ONLY (1ULL << 63)	/* in pend: a slice, for the idle wait */

/* The length of an ended wait of t on entry en: the shortest and number
   of waits by resource (a wait in slices counts once, whole). */
static void
count_len(struct scan *s, struct sthr *t, const struct graph_event *en,
    uint64_t dt)
{
	struct kstat *x = kstat_of(s, t, diag_res_key(en));

	if (dt < x->shortest)
		x->shortest = dt;
	x->count++;
	t->nwaits++;
}

/* An ended wait (a slice: each one) of t on entry en, for its idle
   wait. */
static void
count_idle(struct scan *s, struct sthr *t, const struct graph_event *en,
    uint64_t dt)
{
	uint64_t k = diag_res_key(en);
	struct kstat *x = kstat_of(s, t, k);

	if (diag_sys_child(en->aux))
		return;
	int lp = diag_sys_poll(en->aux) && ++x->polls >= 3;
	if (dt < s->th)
		x->tot += dt;
	if ((lp && !t->idle_loop) || (lp == t->idle_loop &&
	    x->tot > t->idle_bt)) {
		t->idle_bt = x->tot;
		t->idle_best = k;
		t->idle_loop = lp;
	}
}

/* An ended wait of t counted on entry en (diag_next_wait()): both;
   with IDLE_ONLY in dt, a slice of a semantic wait, its idle part. */
static void
count_wait(struct scan *s, struct sthr *t, const struct graph_event *en,
    uint64_t dt)
{
	if (!(dt & IDLE_ONLY))
		count_len(s, t, en, dt);
	count_idle(s, t, en, dt & ~IDLE_ONLY);
}

/* The open entry's key is final (its exit named the file, or another
   entry replaced it): what counted on it is counted. */
static void
entry_final(struct scan *s, struct sthr *t)
{
	if (t->nw && !t->nw_final) {
		for (size_t i = 0; i < t->pend.n; i++)
			count_wait(s, t, &t->nwe, t->pend.v[i]);
		t->pend.n = 0;
		t->nw_final = 1;
	}
	for (size_t i = 0; i < t->pc.n; i++)
		s->c.v[t->pc.v[i]].en = t->sys;
	t->pc.n = 0;
	if (t->lg_set && t->lg_seq == t->seq)
		t->lg_sys = t->sys;
}

static void
add_cand(struct scan *s, int what, uint32_t tid, uint64_t a, uint64_t b)
{
	struct dcand c;

	memset(&c, 0, sizeof(c));
	c.what = what;
	c.tid = tid;
	c.a = a;
	c.b = b;
	DPUSH(s->c, c);
}

/* The last wait of t, in a system call, as a seed of a graph. */
static void
seed_of(const struct sthr *t, struct dseed *x)
{
	x->tid = t->tid;
	x->state = t->sw_state;
	x->enter_ts = t->sw_sys.ts;
	x->sw = t->sw_ts;
	x->end = t->sw_end;
	memcpy(x->arg, t->sw_arg, sizeof(x->arg));
}

/* The wait in progress of t ended at ts (end: it ran again). */
static void
wait_ended(struct scan *s, struct sthr *t, uint64_t ts, int end)
{
	uint64_t dt = ts - t->sw_ts;

	t->waiting = 0;
	t->sw_end = end ? ts : 0;
	if (end && t->pw)
		t->pw_end = ts;
	if (t->cb) {
		/* a slice: its semantic wait counts at its call's exit */
		dt |= IDLE_ONLY;
		t->cb_end = ts;
	}
	if (end && t->sw_nw) {
		if (t->nw_final)
			count_wait(s, t, &t->nwe, dt);
		else
			DPUSH(t->pend, dt);
	}
	if (!t->sw_insys || t->cb)
		return;
	if (!t->lg_set || dt > t->lg_dt) {
		t->lg_set = 1;
		t->lg_dt = dt;
		t->lg_sw = t->sw_ts;
		t->lg_seq = t->seq;
		t->lg_sys = t->sw_sys;
	}
	if (dt < s->th)
		return;
	add_cand(s, DC_WAIT, t->tid, t->sw_ts, ts);
	if (t->pw && end)
		t->pw_cand = s->c.n;
	struct dcand *c = &s->c.v[s->c.n - 1];
	c->enter_ts = t->sw_sys.ts;
	c->en = t->sw_sys;
	seed_of(t, &c->sd[c->nsd++]);
	c->sd[0].end = ts;
	if (end && t->wk_seed)	/* its waker's last wait */
		c->sd[c->nsd++] = t->wk_sd;
	if (t->insys)	/* its entry is still open: its key may change */
		DPUSH(t->pc, s->c.n - 1);
}

/* The semantic wait t followed is over (ended: its last slice ended):
   counted, and a candidate when past the threshold, as wait_ended()
   does for one wait. */
static void
sem_done(struct scan *s, struct sthr *t, int ended)
{
	struct dsem *x = &t->sem;
	uint64_t dt = x->end - x->a;

	x->on = x->open = 0;
	if (ended)
		count_len(s, t, &x->en, dt);
	if (!t->lg_set || dt > t->lg_dt) {
		t->lg_set = 1;
		t->lg_dt = dt;
		t->lg_sw = x->a;
		t->lg_seq = UINT32_MAX;		/* its entry is final */
		t->lg_sys = x->en;
	}
	if (dt < s->th)
		return;
	add_cand(s, DC_WAIT, t->tid, x->a, x->end);
	s->c.v[s->c.n - 1].enter_ts = x->en.ts;
	s->c.v[s->c.n - 1].en = x->en;
}

/* The call of t that blocked as a slice (t->cb) exited at ts with ret
   (exited: 0 when the trace ended first): one more slice of the
   semantic wait followed, or the first of a new one. */
static void
sem_slice(struct scan *s, struct sthr *t, uint64_t ts, int64_t ret,
    int exited)
{
	struct dsem *x = &t->sem;
	uint64_t key = diag_res_key(&t->sys);

	t->cb = 0;
	if (!(x->on && x->open && x->en.aux == t->sys.aux && x->key == key &&
	    t->cb_sw <= x->exit_ts + DIAG_SLICE_GAP && !x->handed)) {
		if (x->on)
			sem_done(s, t, 1);
		*x = (struct dsem){ .on = 1, .a = t->cb_sw, .en = t->sys,
		    .key = key };
	}
	x->end = t->cb_end;
	x->exit_ts = ts;
	x->handed = 0;
	/* back empty-handed, and not ended by another thread */
	x->open = exited && diag_slice_empty(t->sys.aux, ret) &&
	    !(ret != 0 && t->woken_at >= t->cb_sw);
	if (!x->open)
		sem_done(s, t, exited);
}

static int
poll_nr(uint32_t nr)
{
	return nr == SYS_poll || nr == SYS_ppoll || nr == SYS_select ||
	    nr == SYS_pselect6 || nr == SYS_epoll_wait ||
	    nr == SYS_epoll_pwait;
}

/* The polling stretch of t ends at end (diag-poll.c, poll_hang()). */
static void
poll_end(struct scan *s, struct sthr *t, uint64_t end)
{
	if (t->ps_n < POLL_MIN || end - t->ps_enter < s->th)
		return;
	add_cand(s, DC_POLL, t->tid, t->ps_enter, end);
	struct dcand *c = &s->c.v[s->c.n - 1];
	c->enter_ts = t->ps_first;
	c->last_ts = t->ps_last;
	c->n = t->ps_n;
}

/* A polling stretch of t begins with the call entered at enter and
   ended at ts, on resource res (timed slices when slices); the one
   being followed ends at its last attempt. */
static void
ps_start(struct scan *s, struct sthr *t, uint64_t enter, uint64_t ts,
    uint64_t res, int slices)
{
	if (t->ps)
		poll_end(s, t, t->ps_last);
	t->ps = 1;
	t->ps_slices = slices;
	t->ps_enter = enter;
	t->ps_first = t->ps_last = ts;
	t->ps_n = 1;
	t->ps_res = res;
	t->ps_timed = 0;
}

/* A system call exit of t, after the entry's key is final
   (diag_poll_step()). */
static void
poll_exit(struct scan *s, struct sthr *t, const struct graph_event *en,
    uint64_t ts, int64_t ret)
{
	uint64_t res = diag_res_key(en), gap = s->th / 2;
	int slice = diag_opts_named(s->o) &&
	    diag_poll_timed_slice(en->aux, ret);
	int again = diag_try_again(en->aux, ret);

	if (!diag_opts_named(s->o))
		diag_slices_step(&t->us, &t->usb, t->tid, en, ts,
		    diag_poll_timed_slice(en->aux, ret), s->th);

	if (t->ps && t->ps_slices) {
		/* slices back to back: any other call ends them, but a
		   lock taken quickly on the way (diag-poll.c) */
		if (res != t->ps_res && diag_quick_lock(en->aux, en->ts, ts, ret))
			return;
		if (res == t->ps_res && slice && en->ts - t->ps_last <= gap) {
			t->ps_last = ts;
			t->ps_n++;
			return;
		}
		if (res == t->ps_res && !slice)
			poll_end(s, t, ts);	/* woken at last */
		t->ps = 0;
		t->ps_slices = 0;
		if (!slice && !again)
			return;
	}
	if (slice) {
		ps_start(s, t, en->ts, ts, res, 1);
	} else if (t->ps && res == t->ps_res && !again) {
		poll_end(s, t, ts);
		t->ps = 0;
	} else if (again) {
		if (t->ps && res == t->ps_res && t->ps_timed &&
		    ts - t->ps_last <= gap) {
			t->ps_last = ts;
			t->ps_n++;
			t->ps_timed = 0;
		} else if (!t->ps || res != t->ps_res ||
		    ts - t->ps_last > gap || !t->ps_timed) {
			ps_start(s, t, en->ts, ts, res, 0);
		}
	}
}

/* A hang mark of t (from_marks()). */
static void
mark(struct scan *s, struct sthr *t, unsigned sub, uint64_t ts,
    uint64_t arg, uint64_t arg2)
{
	if (sub == TU_HANG_END && !t->begun) {
		uint64_t a = arg2 != 0 && arg2 < ts ? arg2 :
		    arg < ts ? ts - arg : ts;
		add_cand(s, DC_MARK, t->tid, a, ts);
		return;
	}
	if (sub == TU_HANG_END) {
		add_cand(s, DC_MARK, t->tid, t->begun_a, ts);
		t->begun = 0;
		return;
	}
	if (t->begun)	/* the one before never ended */
		add_cand(s, DC_MARK, t->tid, t->begun_a, UINT64_MAX);
	t->begun = 1;
	t->begun_a = ts;
	if (arg2 != 0 && arg2 < ts)
		t->begun_a = arg2;
	else if (arg != 0 && arg < ts)
		t->begun_a = ts - arg;
}

/* Whether a compact event of the thread shows it on a CPU
   (diag_own_activity() in diag-local.h). */
static int
own(unsigned type, unsigned sub)
{
	return type != TT_STACK && !(type == TT_USER &&
	    (sub == TU_HANG_BEGIN || sub == TU_FLAG_WRITE ||
	    sub == TU_FLAG_READ));
}

/* Whether t is a user thread (diag_user_thread(): an interrupt's
   pseudo-thread is a kernel one too). */
static int
user_thread(const struct sthr *t)
{
	return t->pid != 0 && !(t->flags & GRAPH_THREAD_KERNEL);
}

/* t woke, signalled or started thread tid (fork: a new one): between
   two slices, what t waited for is not what it waits for next; for the
   woken thread, another thread ended its wait. */
static void
handoff(struct scan *s, struct sthr *t, uint64_t tid, int fork, int wake)
{
	uint64_t *p = hmap_get(&s->bytid, tid);

	if (tid == t->tid)
		return;
	int user = p != NULL && user_thread(&s->t[*p]);
	if (t->sem.open && (fork || user))
		t->sem.handed = 1;
	if (user)
		s->t[*p].woken_at = s->last_ts;
	if (p != NULL && wake) {
		struct sthr *woken = &s->t[*p];
		woken->wk_pid = user_thread(t) ? t->pid : 0;
		woken->wk_seed = user_thread(t) && t->sw_insys &&
		    t->sw_end != 0 && !t->waiting;
		if (woken->wk_seed)
			seed_of(t, &woken->wk_sd);
	}
}

/* One compact event ge of thread t, as the load pass pushes it. */
static void
thread_event(struct scan *s, struct sthr *t, struct graph_event *ge,
    const struct trace_event *ev)
{
	unsigned type = ge->type;
	int wait = type == TT_SWITCH && (ge->flags & GRAPH_EVF_WAIT);

	s->last_ts = ge->ts;
	diag_sim_item(t, ge);
	if (t->pt_pending) {
		/* a timed wait in a polling stretch: its call's result */
		if (++t->pt_dist >= DIAG_SCAN || type == TT_SYS_ENTER)
			t->pt_pending = 0;
		else if (type == TT_SYS_EXIT) {
			int64_t r = (int64_t)ge->key;
			if (r == 0 || r == -ETIMEDOUT)
				t->ps_timed = 1;
			t->pt_pending = 0;
		}
	}
	if (t->waiting && (type == GRAPH_EV_RUN || own(type, ge->sub)))
		wait_ended(s, t, ge->ts, 1);
	if (t->sem.open && !t->cb && ge->ts > t->sem.exit_ts + DIAG_SLICE_GAP)
		sem_done(s, t, 1);	/* no slice came back in time */
	switch (type) {
	case GRAPH_EV_RUN:
		if (!t->run_set) {
			t->run_set = 1;
			t->runfrom = ge->ts;
		}
		return;
	case TT_SYS_ENTER:
		if (t->nw && !t->nw_final)
			entry_final(s, t);
		else if (t->insys)
			entry_final(s, t);
		t->seq++;
		if (t->pw)	/* the call before had no exit */
			diag_sim_exit(s, t, DIAG_SIM_NORET);
		t->insys = 1;
		t->sys = *ge;
		memcpy(t->sys_arg, ev->arg, sizeof(t->sys_arg));
		t->nw = 1;
		t->nw_final = 0;
		t->nwe = *ge;
		if (!t->first_sys) {
			t->first_sys = TT_SYS_ENTER;
			t->first_nr = ge->aux;
		} else {
			t->last_sys = TT_SYS_ENTER;
			t->last_en = *ge;
			t->wait_after = 0;
		}
		return;
	case TT_SYS_EXIT:
		if (!t->first_sys) {
			t->first_sys = TT_SYS_EXIT;
			t->first_nr = ge->aux;
		} else {
			t->last_sys = TT_SYS_EXIT;
		}
		if (!t->insys)
			return;
		t->insys = 0;
		if (sys_is_read(t->sys.aux) || sys_is_write(t->sys.aux)) {
			uint64_t *fd = hmap_get(&s->fd, (uint64_t)t->pid << 32 |
			    (uint32_t)t->sys.key);
			if (fd != NULL) {
				t->sys.key = *fd & 0x00ffffffffffffffULL;
				t->sys.sub = (uint8_t)(*fd >> 56);
				t->sys.flags |= GRAPH_EVF_FDRES;
			}
		}
		t->nwe = t->sys;
		entry_final(s, t);
		diag_sim_exit(s, t, (int64_t)ge->key);
		if (t->cb)
			sem_slice(s, t, ge->ts, (int64_t)ge->key, 1);
		poll_exit(s, t, &t->sys, ge->ts, (int64_t)ge->key);
		return;
	case TT_WAKING: case TT_WAKEUP_NEW: case TT_SIGNAL_GEN: case TT_FORK:
		handoff(s, t, type == TT_SIGNAL_GEN ? ev->arg[1] : ev->arg[0],
		    type == TT_FORK, type == TT_WAKING);
		return;
	case TT_USER:
		if (ge->sub == TU_HANG_BEGIN || ge->sub == TU_HANG_END)
			mark(s, t, ge->sub, ge->ts, ev->arg[2], ev->arg[3]);
		return;
	}
	if (!wait)
		return;
	/* a wake-up before a wait did not end it */
	t->wk_pid = 0;
	t->wk_seed = 0;
	diag_sim_switch(s, t, ge->ts);
	/* a wait in a call that may wait in slices, of a named thread
	   (diag-swait.c); any other wait ends the semantic wait before */
	if (diag_opts_named(s->o) && t->insys &&
	    diag_sys_sliced(t->sys.aux)) {
		if (!t->cb) {
			t->cb = 1;
			t->cb_sw = ge->ts;
		}
	} else if (t->sem.on) {
		sem_done(s, t, 1);
	}
	/* a wait: a stretch without one ends, a wait begins */
	if (t->run_set && ge->ts - t->runfrom >= s->th)
		add_cand(s, DC_RUN, t->tid, t->runfrom, ge->ts);
	t->run_set = 0;
	t->waiting = 1;
	t->sw_ts = ge->ts;
	/* out of its call, a wait is in none (diag_next_wait()) */
	t->sw_nw = t->nw && t->insys;
	t->sw_insys = t->insys;
	t->sw_sys = t->sys;
	if (t->insys) {
		memcpy(t->sw_arg, t->sys_arg, sizeof(t->sw_arg));
		t->sw_state = ge->sub;
	}
	if (t->last_sys == TT_SYS_ENTER)
		t->wait_after = 1;
	if (t->ps && t->insys) {
		if (diag_sys_sleep(t->sys.aux)) {
			t->ps_timed = 1;
		} else if (poll_nr(t->sys.aux) || t->sys.aux == SYS_futex) {
			t->pt_pending = 1;
			t->pt_dist = 0;
		}
	}
}

/* graph_load_event(), keeping of each event only what the search
   needs. */
static void
scan_event(struct scan *s, const struct trace_event *ev)
{
	unsigned ctx = ev->flags & TRACE_CTX_MASK;
	struct graph_event ge = { .ts = ev->ts, .key = ev->arg[0],
	    .aux = (uint32_t)ev->arg[1], .type = (uint8_t)ev->type,
	    .flags = (uint16_t)ctx };
	struct sthr *t;
	size_t len;

	if (ev->ts != 0 && (s->first_ts == 0 || ev->ts < s->first_ts))
		s->first_ts = ev->ts;
	switch (ev->type) {
	case TT_NONE: case TT_MIGRATE: case TT_MMAP: case TT_LOST:
	case TT_SOCK_ADDR: case TT_KSYM: case TT_STACKDEF:
		return;
	case TT_THREAD: {
		struct trace_thread tt = { .tid = (uint32_t)ev->arg[0],
		    .pid = (uint32_t)ev->arg[1], .ppid = (uint32_t)ev->arg[2],
		    .start_ts = ev->arg[3], .flags = (uint32_t)ev->arg[4] };
		len = ev->blob != NULL ? ev->blob_len : 0;
		if (len >= TRACE_COMM_LEN)
			len = TRACE_COMM_LEN - 1;
		if (len)
			memcpy(tt.comm, ev->blob, len);
		load_thread(s, &tt);
		return;
	}
	case TT_FD:
		*hmap_put(&s->fd, ev->arg[0] << 32 | (uint32_t)ev->arg[1], 0,
		    NULL) = (ev->arg[2] << 56) |
		    (ev->arg[3] & 0x00ffffffffffffffULL);
		return;
	case TT_SWITCH:
		if (ctx != TRACE_CTX_TASK)
			break;
		if (ev->tid != 0) {
			t = thr(s, ev->tid);
			ge.key = 0;
			ge.sub = (uint8_t)ev->arg[0];
			ge.aux = UINT32_MAX;
			ge.flags = 0;
			if ((ev->arg[0] & 0xff) != 0)
				ge.flags |= GRAPH_EVF_WAIT;
			thread_event(s, t, &ge, ev);
		}
		if (ev->arg[1] != 0) {
			struct graph_event re = { .ts = ev->ts,
			    .type = GRAPH_EV_RUN };
			thread_event(s, thr(s, (uint32_t)ev->arg[1]), &re, ev);
		}
		return;
	}
	if (ev->type >= TT_NTYPES)
		return;
	if (ctx != TRACE_CTX_TASK || ev->type == TT_IRQ_ENTRY ||
	    ev->type == TT_IRQ_EXIT || ev->type == TT_IPI) {
		if (ev->cpu != TRACE_CPU_META)
			s->last_ts = ev->ts;
		if (ev->type == TT_SK_DATA_READY)
			diag_sim_msg(s, NULL, ev);
		if (ev->type == TT_WAKING) {
			uint64_t *p = hmap_get(&s->bytid, ev->arg[0]);
			if (p != NULL) {	/* no user thread woke it */
				s->t[*p].wk_pid = 0;
				s->t[*p].wk_seed = 0;
			}
		}
		return;		/* an interrupt pseudo-thread's */
	} else if (ev->type == TT_STACK && ev->arg[0] != 0) {
		t = thr(s, (uint32_t)ev->arg[0]);
	} else if (ev->tid == 0) {
		return;
	} else {
		t = thr(s, ev->tid);
	}
	const char *str = ev->blob;
	len = ev->blob != NULL ? ev->blob_len : 0;
	switch (ev->type) {
	case TT_SK_DATA_READY: case TT_SOCK_RECV:
		diag_sim_msg(s, t, ev);
		break;
	case TT_WAKING: case TT_WAKEUP_NEW: {
		if (ev->arg[0] == 0)
			return;
		uint32_t tid = t->tid;	/* the wakee's entry may move t */
		(void)thr(s, (uint32_t)ev->arg[0]);
		t = thr(s, tid);
		break;
	}
	case TT_FORK: {
		uint32_t ptid = t->tid;
		struct sthr *c = thr(s, (uint32_t)ev->arg[0]);
		t = thr(s, ptid);
		if (ev->arg[1] != 0)
			c->pid = (uint32_t)ev->arg[1];
		if (len)
			set_comm(c, str, len);
		else
			memcpy(c->comm, t->comm, TRACE_COMM_LEN);
		break;
	}
	case TT_EXEC:
		if (len) {
			const char *b = memrchr(str, '/', len);
			if (b != NULL) {
				len -= (size_t)(b + 1 - str);
				str = b + 1;
			}
			set_comm(t, str, len);
		}
		break;
	case TT_RENAME:
		if (len) {
			uint32_t tid = t->tid;
			set_comm(thr(s, (uint32_t)ev->arg[0]), str, len);
			t = thr(s, tid);
		}
		break;
	case TT_SIGNAL_GEN: {
		uint32_t tid = t->tid;
		(void)thr(s, (uint32_t)ev->arg[1]);
		t = thr(s, tid);
		break;
	}
	case TT_SYS_ENTER:
		ge.key = ev->arg[1];
		ge.aux = (uint32_t)ev->arg[0];
		break;
	case TT_SYS_EXIT:
		ge.key = ev->arg[1];
		ge.aux = (uint32_t)ev->arg[0];
		break;
	case TT_USER:
		ge.sub = (uint8_t)ev->arg[0];
		ge.key = ev->arg[1];
		break;
	case TT_STACK:
		ge.sub = (uint8_t)ev->arg[1];
		break;
	}
	thread_event(s, t, &ge, ev);
}

static void
scan_batch(void *arg, const struct trace_event *evs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		scan_event(arg, &evs[i]);
}

int
diag_scan(struct trace_reader *r, const struct rules *rules,
    const struct diag_opts *o, struct dscan *out)
{
	struct scan s;

	memset(&s, 0, sizeof(s));
	memset(out, 0, sizeof(*out));
	s.o = o;
	s.rs = rules;
	s.th = o->threshold_ns ? o->threshold_ns : 1000000000ULL;
	hmap_init(&s.bytid);
	hmap_init(&s.fd);
	hmap_init(&s.skq);
	hmap_init(&s.skown);
	for (size_t i = 0; i < trace_reader_nthreads(r); i++)
		load_thread(&s, trace_reader_thread_at(r, i));
	graph_feed(r, scan_batch, &s);
	for (size_t i = 0; i < trace_reader_nthreads(r); i++)
		load_thread(&s, trace_reader_thread_at(r, i));
	/* the end of the trace: what never ended ends there */
	for (size_t i = 0; i < s.nt; i++) {
		struct sthr *t = &s.t[i];
		if (t->waiting)
			wait_ended(&s, t, s.last_ts, 0);
		if (t->cb)
			sem_slice(&s, t, s.last_ts, 0, 0);
		else if (t->sem.on)
			sem_done(&s, t, 1);
		if (t->nw && !t->nw_final)
			entry_final(&s, t);
		if (t->ps && !t->ps_slices)
			poll_end(&s, t, s.last_ts - t->ps_last > s.th / 2 ?
			    t->ps_last : s.last_ts);
		if (t->begun)
			add_cand(&s, DC_MARK, t->tid, t->begun_a, s.last_ts);
	}
	diag_sim_flush_all(&s);
	diag_sim_free(&s);	/* before the threads go with the settling */
	diag_scan_settle(&s, out);
	return 0;
}

void
diag_scan_free(struct dscan *sc)
{
	free(sc->c);
	hmap_free(&sc->idle);
	hmap_free(&sc->loops);
	memset(sc, 0, sizeof(*sc));
}
