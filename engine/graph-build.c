/*
 * graph-build.c: the build pass, compact events to vertices and edges.
 *
 * Events are taken in time order, either as the load pass produces them
 * (the first build is streamed with the load) or by replaying g->order
 * (rebuilds), with one state per thread (struct thread_replay): the open
 * vertex, the callout level, the peer process of the open vertex, the wait
 * in progress and the pending waker. Vertices are contiguous index ranges
 * of a thread's events; edges are appended to a flat array as their
 * targets are seen and indexed by source and destination at the end. The
 * keyed connections (sockets, pipes, timers, work items, tasks, run-loop
 * sources, flags, "connect" rules) are in graph-conn.c; a pass's making,
 * checking and end in graph-pass.c; struct build_pass is in
 * engine-local.h.
 */
#include <stdlib.h>
#include <string.h>

#include "engine-local.h"


static const uint8_t edge_weak[GE_NKINDS] = {
	[GE_WAIT] = 1, [GE_SEQ] = 1,
};

uint32_t
gb_edge(struct build_pass *b, uint32_t sv, uint32_t se, uint32_t dv,
    uint32_t de, unsigned kind)
{
	struct graph *g = b->g;

	if (sv == GRAPH_NONE || dv == GRAPH_NONE || sv == dv)
		return GRAPH_NONE;
	if ((g->th[g->vx[sv].thread].flags | g->th[g->vx[dv].thread].flags) &
	    GRAPH_THREAD_CULLED)
		return GRAPH_NONE;
	if (b->ned >= UINT32_MAX - 1)
		return GRAPH_NONE;
	DGROW_BIG(b->ed, b->caped, b->ned + 1, 4096);
	b->ed[b->ned++] = (struct graph_edge){ .src = sv, .dst = dv,
	    .src_ev = se, .dst_ev = de, .kind = (uint8_t)kind,
	    .flags = edge_weak[kind] ? GRAPH_EF_WEAK : 0 };
	return (uint32_t)(b->ned - 1);
}

static uint32_t
vopen(struct build_pass *b, uint32_t ti, uint32_t i, unsigned kind)
{
	struct graph *g = b->g;
	struct gthread *t = &g->th[ti];
	struct thread_replay *s = &b->st[ti];

	if (g->nvx == UINT32_MAX - 1)
		return GRAPH_NONE;
	DGROW_BIG(g->vx, g->capvx, g->nvx + 1, 4096);
	uint32_t v = g->nvx++;
	g->vx[v] = (struct graph_vertex){ .thread = ti, .first = i,
	    .kind = (uint8_t)kind };
	DGROW(t->vtx, t->capvtx, t->nvtx + 1, 8);
	t->vtx[t->nvtx++] = v;
	s->cur = v;
	s->peer = 0;
	s->had_rx = 0;
	s->answered = 0;
	if (s->resumed != GRAPH_NONE) {
		struct graph_edge c = b->ed[s->resumed];
		s->resumed = GRAPH_NONE;
		gb_edge(b, c.src, c.src_ev, v, i, c.kind);
	}
	if (s->split_from != GRAPH_NONE) {
		const struct graph_vertex *p = &g->vx[s->split_from];
		g->vx[v].flags |= GRAPH_VF_SPLIT;
		gb_edge(b, s->split_from, p->first + p->nevents - 1, v, i,
		    GE_SEQ);
		s->split_from = GRAPH_NONE;
	}
	if (b->any_cullwake) {
		const struct graph_event *ev = &t->ev[i];
		for (size_t r = 0; r < b->rs->n; r++)
			if (b->rs->v[r].verb == RV_CULL_WAKE &&
			    rsel_match(g, &b->rs->v[r].a, ev, NULL))
				g->vx[v].flags |= GRAPH_VF_CULLWAKE;
	}
	return v;
}

/* The slot of the open context of level (1 and up) in a thread's
   replay: those deeper than CTX_DEPTH share the last. */
static inline unsigned
ctx_slot(uint32_t level)
{
	return level < CTX_DEPTH ? level - 1 : CTX_DEPTH - 1;
}

static inline unsigned
default_kind(const struct build_pass *b, uint32_t ti)
{
	const struct thread_replay *s = &b->st[ti];

	if (s->level > 0)
		return s->kinds[ctx_slot(s->level)];
	return b->g->th[ti].flags & GRAPH_THREAD_IRQ ? GV_IRQ : GV_PLAIN;
}

uint32_t
gb_add(struct build_pass *b, uint32_t ti, uint32_t i)
{
	struct thread_replay *s = &b->st[ti];

	if (s->cur == GRAPH_NONE &&
	    vopen(b, ti, i, default_kind(b, ti)) == GRAPH_NONE)
		return GRAPH_NONE;
	struct graph_vertex *v = &b->g->vx[s->cur];
	v->nevents = i - v->first + 1;
	return s->cur;
}

void
gb_split(struct build_pass *b, uint32_t ti)
{
	struct thread_replay *s = &b->st[ti];

	if (s->cur == GRAPH_NONE)
		return;
	if (!(b->g->th[ti].flags & GRAPH_THREAD_IRQ))
		s->split_from = s->cur;
	s->cur = GRAPH_NONE;
}

/*
 * A context opens (an interrupt, a timer's or a work item's run, a
 * callout) as a vertex of kind. On a CPU's interrupt thread, a context
 * interrupted by another (a tick's timer in the middle of a softirq's
 * delivery) goes on at the other's end as a vertex of its own kind,
 * started by the edge that started it (the delivery stays the work of
 * the task that raised the softirq).
 */
static void
begin(struct build_pass *b, uint32_t ti, uint32_t i, unsigned kind)
{
	struct thread_replay *s = &b->st[ti];

	gb_split(b, ti);
	s->level++;
	s->kinds[ctx_slot(s->level)] = (uint8_t)kind;
	s->cause[ctx_slot(s->level)] = GRAPH_NONE;
	s->resumed = GRAPH_NONE;
	vopen(b, ti, i, kind);
	gb_add(b, ti, i);
}

/* The edge ed (or GRAPH_NONE) started the context begin() opened
   last. */
static void
begun_by(struct build_pass *b, uint32_t ti, uint32_t ed)
{
	struct thread_replay *s = &b->st[ti];

	if (s->level > 0)
		s->cause[ctx_slot(s->level)] = ed;
}

static void
end(struct build_pass *b, uint32_t ti, uint32_t i)
{
	struct thread_replay *s = &b->st[ti];

	gb_add(b, ti, i);
	if (s->level > 0)
		s->level--;
	gb_split(b, ti);
	if (s->level > 0 && (b->g->th[ti].flags & GRAPH_THREAD_IRQ))
		s->resumed = s->cause[ctx_slot(s->level)];
}

static void
on_user(struct build_pass *b, uint32_t ti, uint32_t i)
{
	const struct graph_event *ev = &b->g->th[ti].ev[i];
	uint32_t v;

	switch (ev->sub) {
	case TU_TASK_BEGIN:
		begin(b, ti, i, GV_TASK);
		begun_by(b, ti, gb_keyed_take(b, &b->tasks, ev->key,
		    b->st[ti].cur, i, GE_TASK));
		return;
	case TU_CALLOUT_BEGIN:
		begin(b, ti, i, GV_CALLOUT);
		begun_by(b, ti, gb_keyed_take(b, &b->runloops, ev->key,
		    b->st[ti].cur, i, GE_RUNLOOP));
		return;
	case TU_TASK_END: case TU_CALLOUT_END:
		end(b, ti, i);
		return;
	}
	v = gb_add(b, ti, i);
	switch (ev->sub) {
	case TU_TASK_SUBMIT:
		gb_keyed_set(&b->tasks, ev->key, v, i);
		break;
	case TU_RUNLOOP_SUBMIT:
		gb_keyed_set(&b->runloops, ev->key, v, i);
		break;
	case TU_FLAG_WRITE:
		gb_keyed_set(&b->flags, ev->key, v, i);
		break;
	case TU_FLAG_READ:
		gb_keyed_take(b, &b->flags, ev->key, v, i, GE_FLAG);
		break;
	case TU_INPUT:
		if (v != GRAPH_NONE)
			b->g->vx[v].flags |= GRAPH_VF_INPUT;
		break;
	case TU_LOOP_WAIT:
		/* back in its event loop: no callout is running any more
		   (an end that was lost must not glue the loop's waits) */
		b->st[ti].level = 0;
		b->st[ti].resumed = GRAPH_NONE;
		break;
	}
}

/* Whether event ev may have been recorded on behalf of its thread by
   another one (a stack, the watchdog's hang begin, a watched flag), so
   that it says nothing about the thread being on a CPU. */
static int
by_proxy(const struct graph_event *ev)
{
	return ev->type == TT_STACK || (ev->type == TT_USER &&
	    (ev->sub == TU_HANG_BEGIN || ev->sub == TU_FLAG_WRITE ||
	    ev->sub == TU_FLAG_READ));
}

int
gb_sibling(const struct graph *g, uint32_t ti, uint32_t v)
{
	uint32_t tj;

	if (v == GRAPH_NONE || v >= g->nvx)
		return 0;
	tj = g->vx[v].thread;
	return tj != ti && g->th[tj].pid == g->th[ti].pid &&
	    g->th[ti].pid != 0 && !(g->th[tj].flags & GRAPH_THREAD_IRQ);
}

static void
step(struct build_pass *b, uint32_t ti, uint32_t i)
{
	struct graph *g = b->g;
	struct gthread *t = &g->th[ti];
	struct thread_replay *s = &b->st[ti];
	const struct graph_event *ev = &t->ev[i];
	uint32_t v, pid, qi;
	uint32_t lwake_v = GRAPH_NONE, lwake_e = 0;
	uint32_t lwait_v = GRAPH_NONE, lwait_e = 0;
	uint32_t sw_v = GRAPH_NONE;	/* the vertex of a switch event */
	unsigned lwake_k = 0;

	if (s->waiting && ev->type != GRAPH_EV_RUN && !by_proxy(ev)) {
		/* the thread acts without having been switched in: its
		   switch back in was lost. A wake-up recorded during the
		   wait still is what ran it (connected below, to this
		   event); without one, forget the wait rather than guess */
		if (s->wake_v != GRAPH_NONE && s->wake_kind == GE_WAKEUP) {
			lwake_v = s->wake_v;
			lwake_e = s->wake_e;
			lwake_k = s->wake_kind;
			lwait_v = s->wait_v;
			lwait_e = s->wait_e;
			s->handed = gb_sibling(g, ti, lwake_v);
		}
		s->waiting = 0;
		s->wake_v = GRAPH_NONE;
	}
	switch (ev->type) {
	case TT_SWITCH:
		v = sw_v = gb_add(b, ti, i);
		if (!(ev->flags & GRAPH_EVF_WAIT))
			break;
		if (v != GRAPH_NONE)
			g->vx[v].flags |= GRAPH_VF_WAIT;
		s->waiting = 1;
		s->wait_v = v;
		s->wait_e = i;
		s->wake_v = GRAPH_NONE;
		s->handed = 0;
		if (s->level == 0) {
			s->cur = GRAPH_NONE;
			s->split_from = GRAPH_NONE;
		}
		break;
	case GRAPH_EV_RUN:
		v = gb_add(b, ti, i);
		s->woke_ed = s->wait_ed = GRAPH_NONE;
		if (s->wake_v != GRAPH_NONE &&
		    (s->waiting || s->wake_kind == GE_SPAWN)) {
			uint32_t we = gb_edge(b, s->wake_v, s->wake_e, v, i,
			    s->wake_kind);
			if (s->wake_kind == GE_WAKEUP)
				s->woke_ed = we;
			s->handed = gb_sibling(g, ti, s->wake_v);
			if (s->waiting && s->wait_v != GRAPH_NONE)
				s->wait_ed = gb_edge(b, s->wait_v, s->wait_e,
				    s->wake_v, s->wake_e, GE_WAIT);
		}
		s->wake_v = GRAPH_NONE;
		s->waiting = 0;
		break;
	case TT_WAKING: case TT_WAKEUP_NEW: case TT_FORK: {
		v = gb_add(b, ti, i);
		uint32_t tj = (uint32_t)ev->key;
		if (v == GRAPH_NONE || tj >= g->nth || tj == ti ||
		    (g->vx[v].flags & GRAPH_VF_CULLWAKE))
			break;
		struct thread_replay *w = &b->st[tj];
		if (ev->type == TT_WAKING) {
			if (w->wake_v == GRAPH_NONE) {
				w->wake_v = v;
				w->wake_e = i;
				w->wake_kind = GE_WAKEUP;
			}
		} else if (w->wake_v == GRAPH_NONE || ev->type == TT_FORK) {
			w->wake_v = v;
			w->wake_e = i;
			w->wake_kind = GE_SPAWN;
		}
		break;
	}
	case TT_SIGNAL_GEN: {
		v = gb_add(b, ti, i);
		uint32_t tj = (uint32_t)ev->key;
		if (v != GRAPH_NONE && tj < g->nth && tj != ti) {
			b->st[tj].sig_v = v;
			b->st[tj].sig_e = i;
		}
		break;
	}
	case TT_SIGNAL_DELIVER:
		v = gb_add(b, ti, i);
		if (s->sig_v != GRAPH_NONE)
			gb_edge(b, s->sig_v, s->sig_e, v, i, GE_SIGNAL);
		s->sig_v = GRAPH_NONE;
		break;
	case TT_IRQ_ENTRY:
		begin(b, ti, i, GV_IRQ);
		break;
	case TT_SOFTIRQ_ENTRY:
		begin(b, ti, i, GV_SOFTIRQ);
		if (t->tid >= GRAPH_IRQ_TID_BASE)
			begun_by(b, ti, gb_keyed_take(b, &b->raises,
			    (uint64_t)(t->tid - GRAPH_IRQ_TID_BASE) << 32 |
			    (uint32_t)ev->key, s->cur, i, GE_RAISE));
		break;
	case TT_SOFTIRQ_RAISE:
		v = gb_add(b, ti, i);
		gb_keyed_set(&b->raises, (uint64_t)ev->aux << 32 |
		    (uint32_t)ev->key, v, i);
		break;
	case TT_TIMER_EXPIRE:
		begin(b, ti, i, GV_TIMER);
		begun_by(b, ti, gb_keyed_take(b, &b->timers, ev->key, s->cur,
		    i, GE_TIMER));
		break;
	case TT_WQ_START:
		begin(b, ti, i, GV_WORK);
		begun_by(b, ti, gb_keyed_take(b, &b->works, ev->key, s->cur,
		    i, GE_WORK));
		break;
	case TT_IRQ_EXIT: case TT_SOFTIRQ_EXIT: case TT_TIMER_EXPIRE_EXIT:
	case TT_WQ_END:
		end(b, ti, i);
		break;
	case TT_TIMER_START:
		v = gb_add(b, ti, i);
		gb_keyed_set(&b->timers, ev->key, v, i);
		break;
	case TT_TIMER_CANCEL:
		gb_add(b, ti, i);
		hmap_del(&b->timers, ev->key, NULL);
		break;
	case TT_WQ_QUEUE:
		v = gb_add(b, ti, i);
		gb_keyed_set(&b->works, ev->key, v, i);
		break;
	case TT_SK_DATA_READY: {
		uint64_t *op = hmap_get(&b->skowner, ev->key);
		pid = op ? (uint32_t)*op : 0;
		gb_peer_pre(b, ti, pid);
		v = gb_add(b, ti, i);
		if (v == GRAPH_NONE)
			break;
		qi = gb_queue_of(b, &b->sockq, ev->key, 1);
		if (b->q[qi].len >= QMAX)
			gb_q_pop(b, qi);
		gb_q_push(b, qi, v, i, t->pid, 0);
		gb_peer_post(b, ti, pid);
		gb_reply_check(b, ti, pid, v, i);
		break;
	}
	case TT_SOCK_SEND: {
		/* a message to another host: as a data-ready in the
		   sender's context on the receiving socket */
		uint32_t px = gb_xpair(b, ev->key, ev->ts, 1);
		if (px == GRAPH_NONE) {
			gb_add(b, ti, i);
			break;
		}
		uint32_t rt = graph_thread_find(g, g->xpairs[px].recv_tid);
		pid = rt != GRAPH_NONE ? g->th[rt].pid : 0;
		gb_peer_pre(b, ti, pid);
		v = gb_add(b, ti, i);
		if (v == GRAPH_NONE)
			break;
		b->xsrc[px][0] = v;
		b->xsrc[px][1] = i;
		gb_peer_post(b, ti, pid);
		gb_reply_check(b, ti, pid, v, i);
		break;
	}
	case TT_SOCK_RECV: {
		if (ev->aux == 0) {
			gb_add(b, ti, i);
			break;
		}
		qi = gb_queue_of(b, &b->sockq, ev->key, 0);
		uint32_t src = qi != GRAPH_NONE ? b->q[qi].head : GRAPH_NONE;
		pid = src != GRAPH_NONE ? b->qn[src].pid : 0;
		/* from another host: its sender, not the data-ready of
		   this host's network stack (taken from the queue all the
		   same) */
		uint32_t px = gb_xpair(b, ev->key, ev->ts, 0);
		uint32_t xv = GRAPH_NONE, xe = 0;
		if (px != GRAPH_NONE && b->xsrc[px][0] != GRAPH_NONE) {
			xv = b->xsrc[px][0];
			xe = b->xsrc[px][1];
			pid = g->th[g->vx[xv].thread].pid;
		}
		if ((t->flags & GRAPH_THREAD_BATCH) && s->had_rx)
			gb_split(b, ti);
		gb_request_pre(b, ti, pid);
		gb_peer_pre(b, ti, pid);
		v = gb_add(b, ti, i);
		if (xv != GRAPH_NONE) {
			b->nmsg++;
			gb_edge(b, xv, xe, v, i, GE_MSG);
			if (s->sys != GRAPH_NONE)
				gb_data_woke(b, ti, s->sys, i, xv, xe, 1);
			if (src != GRAPH_NONE)
				gb_q_pop(b, qi);
		} else if (src != GRAPH_NONE) {
			b->nmsg++;
			gb_edge(b, b->qn[src].v, b->qn[src].e, v, i, GE_MSG);
			if (s->sys != GRAPH_NONE)
				gb_data_woke(b, ti, s->sys, i, b->qn[src].v,
				    b->qn[src].e, 0);
			gb_q_pop(b, qi);
		}
		*hmap_put(&b->skowner, ev->key, 0, NULL) = t->pid;
		gb_peer_post(b, ti, pid);
		gb_received(b, ti, pid, v, i);
		break;
	}
	case TT_SYS_ENTER:
		gb_add(b, ti, i);
		s->sys = i;
		break;
	case TT_SYS_EXIT:
		if ((t->flags & GRAPH_THREAD_BATCH) && s->had_rx &&
		    s->sys != GRAPH_NONE && sys_is_read(t->ev[s->sys].aux) &&
		    (t->ev[s->sys].flags & GRAPH_EVF_FDRES) &&
		    t->ev[s->sys].sub == TFD_PIPE)
			gb_split(b, ti);
		gb_on_sys_exit(b, ti, i);
		break;
	case TT_USER:
		on_user(b, ti, i);
		break;
	default:
		gb_add(b, ti, i);
		break;
	}
	if (lwake_v == GRAPH_NONE)
		return;
	/* the vertex now holding event i (a switch out may have closed
	   it already) */
	uint32_t dv = sw_v;
	if (s->cur != GRAPH_NONE && g->vx[s->cur].first <= i &&
	    g->vx[s->cur].first + g->vx[s->cur].nevents > i)
		dv = s->cur;
	if (dv == GRAPH_NONE)
		return;
	gb_edge(b, lwake_v, lwake_e, dv, i, lwake_k);
	if (lwait_v != GRAPH_NONE)
		gb_edge(b, lwait_v, lwait_e, lwake_v, lwake_e, GE_WAIT);
}

/* The rule flags of thread ti under the names known now; sets its
   process leader (the thread naming its process). */
uint32_t
gb_thread_flags(struct graph *g, const struct rules *rs, uint32_t ti)
{
	struct gthread *t = &g->th[ti];
	uint64_t *p = hmap_get(&g->tidmap, t->pid);
	uint32_t leader = p ? (uint32_t)*p : ti, fl = 0;
	const char *pname = g->th[leader].comm;

	g->leader[ti] = leader;
	for (size_t r = 0; rs != NULL && r < rs->n; r++) {
		const struct rule *ru = &rs->v[r];
		const char *name;
		uint32_t f;
		switch (ru->verb) {
		case RV_BATCH: name = pname; f = GRAPH_THREAD_BATCH; break;
		case RV_IGNORE_PROC: name = pname; f = GRAPH_THREAD_IGNORED;
			break;
		case RV_IGNORE_THREAD: name = t->comm;
			f = GRAPH_THREAD_IGNORED; break;
		case RV_CULL_PROC: name = pname; f = GRAPH_THREAD_CULLED; break;
		case RV_CULL_THREAD: name = t->comm; f = GRAPH_THREAD_CULLED;
			break;
		default:
			continue;
		}
		if (rules_match_name(ru->pat, name))
			fl |= f;
	}
	return fl;
}

void
gb_grow_state(struct build_pass *b)
{
	struct graph *g = b->g;
	uint32_t n = g->nth;

	if (n <= b->nst)
		return;
	if (n > b->capst) {
		b->capst = n + n / 2 + 64;
		b->st = xreallocarray(b->st, b->capst, sizeof(*b->st));
		g->leader = xreallocarray(g->leader, b->capst,
		    sizeof(*g->leader));
	}
	for (uint32_t i = b->nst; i < n; i++) {
		b->st[i] = gb_replay_fresh();
		g->leader[i] = i;
		g->th[i].flags &= ~RULE_FLAGS;
	}
	b->nst = n;
}

void
gb_step(struct build_pass *b, uint32_t ti, uint32_t i)
{
	struct graph *g = b->g;
	struct thread_replay *s;

	if (ti >= b->nst)
		gb_grow_state(b);
	s = &b->st[ti];
	if (!s->ready) {
		/* the rules that depend on names, as the names are now */
		uint32_t fl = gb_thread_flags(g, b->rs, ti);
		g->th[ti].flags = (g->th[ti].flags & ~RULE_FLAGS) | fl;
		s->ready = 1;
	}
	if (g->th[ti].flags & GRAPH_THREAD_IGNORED)
		return;
	const struct graph_event *ev = &g->th[ti].ev[i];
	if ((ev->type == TT_WAKING || ev->type == TT_WAKEUP_NEW ||
	    ev->type == TT_FORK || ev->type == TT_SIGNAL_GEN) &&
	    ev->key >= b->nst)
		gb_grow_state(b);
	uint8_t rt = b->rtypes[ev->type];
	if (rt == 0) {
		step(b, ti, i);
		return;
	}
	const struct graph_event *en = ev->type == TT_SYS_EXIT &&
	    s->sys != GRAPH_NONE ? &g->th[ti].ev[s->sys] : NULL;
	if (b->rfdonly[ev->type] && (en == NULL ||
	    !(en->flags & GRAPH_EVF_FDRES))) {
		step(b, ti, i);
		return;
	}
	gb_rules_event(b, ti, i, 0, en);
	step(b, ti, i);
	gb_rules_event(b, ti, i, 1, en);
}
