/*
 * graph-conn.c: the connection heuristics of the build pass that match
 * events by key: socket messages (sk_data_ready to sock_recv, one FIFO of
 * senders per receiving socket), pipes (per inode, a FIFO of writes with
 * the byte offset each ends at, so a read is connected to the write of
 * its first byte), eventfds, request/reply, request boundaries (one
 * vertex per answered request), the IPC peer set, keyed hash maps
 * (timers, work, tasks, run-loop sources, flags) and the per-event rules
 * (split, input, connect).
 */
#include <stdlib.h>
#include <string.h>

#include "engine-local.h"


/* Before a message event with peer process pid: the IPC peer set rule. */
void
gb_peer_pre(struct build_pass *b, uint32_t ti, uint32_t pid)
{
	struct thread_replay *s = &b->st[ti];

	if (pid == 0 || pid == b->g->th[ti].pid)
		return;
	if (s->cur != GRAPH_NONE && s->peer != 0 && s->peer != pid)
		gb_split(b, ti);
}

void
gb_peer_post(struct build_pass *b, uint32_t ti, uint32_t pid)
{
	struct thread_replay *s = &b->st[ti];

	if (pid != 0 && pid != b->g->th[ti].pid && s->peer == 0)
		s->peer = pid;
}

/*
 * The request boundary: once the open vertex has answered a request (a
 * message back to the process it received from), the next receive from
 * another process (or an unknown one) is the next request and begins a
 * new vertex, joined to the last by a weak edge. A server that takes
 * queued or pipelined requests without blocking between them then has
 * one vertex per request, like one that waits for each.
 */
void
gb_request_pre(struct build_pass *b, uint32_t ti, uint32_t pid)
{
	struct thread_replay *s = &b->st[ti];

	if (s->answered && s->cur != GRAPH_NONE && pid != b->g->th[ti].pid)
		gb_split(b, ti);
}

/* A message was sent to process pid from (v, e): request/reply rule. */
void
gb_reply_check(struct build_pass *b, uint32_t ti, uint32_t pid, uint32_t v,
    uint32_t e)
{
	struct thread_replay *s = &b->st[ti];

	if (pid != 0 && s->rx_pid == pid) {
		/* a reply after a wait ended by another thread of the
		   process: that thread made the answer, this one relays it */
		if (s->rx_v != v && !s->handed)
			gb_edge(b, s->rx_v, s->rx_e, v, e, GE_REPLY);
		s->rx_pid = 0;
		s->answered = v == s->cur;
	}
}

void
gb_received(struct build_pass *b, uint32_t ti, uint32_t pid, uint32_t v,
    uint32_t e)
{
	struct thread_replay *s = &b->st[ti];

	s->had_rx = 1;
	if (pid != 0 && pid != b->g->th[ti].pid) {
		s->rx_pid = pid;
		s->rx_v = v;
		s->rx_e = e;
	}
}

/* --- message queues ---------------------------------------------------- */

uint32_t
gb_queue_of(struct build_pass *b, struct hmap *m, uint64_t key, int create)
{
	uint64_t *p = create ? hmap_put(m, key, GRAPH_NONE, NULL) :
	    hmap_get(m, key);

	if (p == NULL)
		return GRAPH_NONE;
	if (*p == GRAPH_NONE) {
		DGROW(b->q, b->capq, b->nq + 1, 256);
		b->q[b->nq] = (struct queue){ .head = GRAPH_NONE,
		    .tail = GRAPH_NONE };
		*p = b->nq++;
	}
	return (uint32_t)*p;
}

void
gb_q_push(struct build_pass *b, uint32_t qi, uint32_t v, uint32_t e,
    uint32_t pid, uint64_t end)
{
	uint32_t n;

	if (b->qfree != GRAPH_NONE) {
		n = b->qfree;
		b->qfree = b->qn[n].next;
	} else {
		DGROW(b->qn, b->capqn, b->nqn + 1, 1024);
		n = b->nqn++;
	}
	b->qn[n] = (struct qnode){ .v = v, .e = e, .pid = pid,
	    .next = GRAPH_NONE, .end = end };
	struct queue *q = &b->q[qi];
	if (q->tail == GRAPH_NONE)
		q->head = n;
	else
		b->qn[q->tail].next = n;
	q->tail = n;
	q->len++;
}

void
gb_q_pop(struct build_pass *b, uint32_t qi)
{
	struct queue *q = &b->q[qi];
	uint32_t n = q->head;

	if (n == GRAPH_NONE)
		return;
	q->head = b->qn[n].next;
	if (q->head == GRAPH_NONE)
		q->tail = GRAPH_NONE;
	q->len--;
	b->qn[n].next = b->qfree;
	b->qfree = n;
}

/* --- the replay -------------------------------------------------------- */

static inline uint32_t
pid_of_vertex(const struct graph *g, uint32_t v)
{
	return g->th[g->vx[v].thread].pid;
}

void
gb_keyed_set(struct hmap *m, uint64_t key, uint32_t v, uint32_t e)
{
	if (v != GRAPH_NONE)
		*hmap_put(m, key, 0, NULL) = pack2(v, e);
}

uint32_t
gb_keyed_take(struct build_pass *b, struct hmap *m, uint64_t key, uint32_t v,
    uint32_t e, unsigned kind)
{
	uint64_t val;

	if (hmap_del(m, key, &val))
		return gb_edge(b, HI32(val), LO32(val), v, e, kind);
	return GRAPH_NONE;
}

void
gb_rules_event(struct build_pass *b, uint32_t ti, uint32_t i, int post,
    const struct graph_event *en)
{
	struct graph *g = b->g;
	struct thread_replay *s = &b->st[ti];
	const struct graph_event *ev = &g->th[ti].ev[i];

	for (size_t k = 0; k < b->nrlist[ev->type]; k++) {
		size_t r = b->rlist[ev->type][k];
		const struct rule *ru = &b->rs->v[r];
		switch (ru->verb) {
		case RV_SPLIT:
			if (!post && s->cur != GRAPH_NONE &&
			    g->vx[s->cur].first != i &&
			    rsel_match(g, &ru->a, ev, en))
				gb_split(b, ti);
			break;
		case RV_INPUT:
			if (post && s->cur != GRAPH_NONE &&
			    rsel_match(g, &ru->a, ev, en))
				g->vx[s->cur].flags |= GRAPH_VF_INPUT;
			break;
		case RV_CONNECT: {
			if (!post || s->cur == GRAPH_NONE)
				break;
			uint64_t ck = ((uint64_t)r << 48) ^
			    (ru->key_any ? 0 : ev->key);
			if (rsel_match(g, &ru->b, ev, en))
				gb_keyed_take(b, &b->conn, ck, s->cur, i, GE_USER);
			if (rsel_match(g, &ru->a, ev, en))
				gb_keyed_set(&b->conn, ck, s->cur, i);
			break;
		}
		}
	}
}

/* When the call of thread t entered at event en and exiting at event ex
   blocked: its waiting switch's time, or 0. */
static uint64_t
blocked_at(const struct gthread *t, uint32_t en, uint32_t ex)
{
	for (uint32_t k = en + 1; k < ex; k++)
		if (t->ev[k].type == TT_SWITCH &&
		    (t->ev[k].flags & GRAPH_EVF_WAIT))
			return t->ev[k].ts;
	return 0;
}

/* The wake-up edge that ran thread ti inside the call entered at event
   en, before event i, when the call blocked; NULL when none (taken). */
static struct graph_edge *
woke_edge(struct build_pass *b, uint32_t ti, uint32_t en, uint32_t i)
{
	struct thread_replay *s = &b->st[ti];

	if (s->woke_ed == GRAPH_NONE)
		return NULL;
	struct graph_edge *w = &b->ed[s->woke_ed];
	s->woke_ed = GRAPH_NONE;
	if (w->dst_ev <= en || w->dst_ev >= i ||
	    blocked_at(&b->g->th[ti], en, i) == 0)
		return NULL;
	return w;
}

/* The run's wake-up edge w and its wait edge moved to event se of
   vertex sv. */
static void
woken_by(struct build_pass *b, uint32_t ti, struct graph_edge *w,
    uint32_t sv, uint32_t se)
{
	struct thread_replay *s = &b->st[ti];

	w->src = sv;
	w->src_ev = se;
	if (s->wait_ed != GRAPH_NONE) {
		b->ed[s->wait_ed].dst = sv;
		b->ed[s->wait_ed].dst_ev = se;
	}
}

void
gb_data_woke(struct build_pass *b, uint32_t ti, uint32_t en, uint32_t i,
    uint32_t sv, uint32_t se, int from_host)
{
	struct graph *g = b->g;
	const struct gthread *t = &g->th[ti];
	struct graph_edge *w = woke_edge(b, ti, en, i);

	if (w == NULL)
		return;
	const struct gthread *wt = &g->th[g->vx[w->src].thread];
	const struct gthread *dt = &g->th[g->vx[sv].thread];
	uint64_t sent = dt->ev[se].ts;
	if (wt == dt || dt == t || (dt->flags & GRAPH_THREAD_CULLED) ||
	    sent > t->ev[w->dst_ev].ts)
		return;
	/* from another host: this host's network stack woke it (an
	   interrupt context); else the data was sent after the wake-up */
	if (from_host ? !(wt->flags & GRAPH_THREAD_IRQ) :
	    sent <= wt->ev[w->src_ev].ts)
		return;
	woken_by(b, ti, w, sv, se);
	b->st[ti].handed = from_host ? 0 : gb_sibling(g, ti, sv);
}

/* The time of the write that queued n. */
static uint64_t
written_at(const struct graph *g, const struct qnode *n)
{
	return g->th[g->vx[n->v].thread].ev[n->e].ts;
}

void
gb_on_sys_exit(struct build_pass *b, uint32_t ti, uint32_t i)
{
	struct graph *g = b->g;
	struct gthread *t = &g->th[ti];
	struct thread_replay *s = &b->st[ti];
	const struct graph_event *ev = &t->ev[i];
	int64_t ret = (int64_t)ev->key;
	uint32_t v, pid = 0, qi;

	if (s->sys == GRAPH_NONE || !(t->ev[s->sys].flags & GRAPH_EVF_FDRES) ||
	    ret <= 0) {
		gb_add(b, ti, i);
		s->sys = GRAPH_NONE;
		return;
	}
	const struct graph_event *en = &t->ev[s->sys];
	uint64_t ino = en->key;
	int rd = sys_is_read(en->aux), wr = sys_is_write(en->aux);
	uint32_t ei = s->sys;
	s->sys = GRAPH_NONE;
	if (en->sub == TFD_PIPE && wr) {
		uint64_t *rp = hmap_get(&b->pipereader, ino);
		pid = rp ? (uint32_t)*rp : 0;
		gb_peer_pre(b, ti, pid);
		v = gb_add(b, ti, i);
		qi = gb_queue_of(b, &b->pipeq, ino, 1);
		b->q[qi].wpos += (uint64_t)ret;
		if (b->q[qi].len >= QMAX) {
			b->q[qi].rpos = b->qn[b->q[qi].head].end;
			gb_q_pop(b, qi);
		}
		gb_q_push(b, qi, v, i, t->pid, b->q[qi].wpos);
		gb_peer_post(b, ti, pid);
		gb_reply_check(b, ti, pid, v, i);
	} else if (en->sub == TFD_PIPE && rd) {
		qi = gb_queue_of(b, &b->pipeq, ino, 0);
		struct queue *q = qi != GRAPH_NONE ? &b->q[qi] : NULL;
		uint64_t blocked = blocked_at(t, ei, i);
		/* a read that blocked found the pipe empty: what is still
		   queued from writes done before it blocked was taken by
		   reads the trace did not see (one already blocked when the
		   recording began, or before a window) */
		while (q != NULL && q->head != GRAPH_NONE &&
		    (b->qn[q->head].end <= q->rpos ||
		    written_at(g, &b->qn[q->head]) < blocked)) {
			if (q->rpos < b->qn[q->head].end)
				q->rpos = b->qn[q->head].end;
			gb_q_pop(b, qi);
		}
		uint32_t src = q != NULL ? q->head : GRAPH_NONE;
		if (src != GRAPH_NONE)
			pid = b->qn[src].pid;
		gb_request_pre(b, ti, pid);
		gb_peer_pre(b, ti, pid);
		v = gb_add(b, ti, i);
		if (src != GRAPH_NONE) {
			b->nmsg++;
			gb_edge(b, b->qn[src].v, b->qn[src].e, v, i, GE_PIPE);
			gb_data_woke(b, ti, ei, i, b->qn[src].v, b->qn[src].e, 0);
			q->rpos += (uint64_t)ret;
			while (q->head != GRAPH_NONE &&
			    b->qn[q->head].end <= q->rpos)
				gb_q_pop(b, qi);
		}
		*hmap_put(&b->pipereader, ino, 0, NULL) = t->pid;
		gb_peer_post(b, ti, pid);
		gb_received(b, ti, pid, v, i);
	} else if (en->sub == TFD_EVENTFD && wr) {
		v = gb_add(b, ti, i);
		gb_keyed_set(&b->efd, ino, v, i);
	} else if (en->sub == TFD_EVENTFD && rd) {
		uint64_t *p = hmap_get(&b->efd, ino);
		pid = p ? pid_of_vertex(g, HI32(*p)) : 0;
		gb_peer_pre(b, ti, pid);
		v = gb_add(b, ti, i);
		if (p != NULL)
			b->nmsg++;
		gb_keyed_take(b, &b->efd, ino, v, i, GE_PIPE);
		gb_peer_post(b, ti, pid);
	} else {
		gb_add(b, ti, i);
	}
}

/* --- messages between hosts (a merged trace's pairs) ------------------- */

void
gb_xpairs_init(struct build_pass *b)
{
	const struct graph *g = b->g;

	b->xs = b->xr = 0;
	b->xseek = 0;
	if (g->nxpairs == 0)
		return;
	b->xsrc = xreallocarray(NULL, g->nxpairs, sizeof(*b->xsrc));
	for (size_t i = 0; i < g->nxpairs; i++) {
		b->xsrc[i][0] = GRAPH_NONE;
		b->xsrc[i][1] = 0;
	}
}

static uint64_t
send_ts(const struct graph *g, size_t k)
{
	return g->xpairs[g->xby_send[k]].send_ts;
}

/* The first k with at(k) >= ts, at() growing with k. */
static size_t
first_at(const struct graph *g, size_t n, uint64_t ts,
    uint64_t (*at)(const struct graph *, size_t))
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (at(g, mid) < ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static uint64_t
recv_ts(const struct graph *g, size_t k)
{
	return g->xpairs[k].recv_ts;
}

uint32_t
gb_xpair(struct build_pass *b, uint64_t sk, uint64_t ts, int send)
{
	const struct graph *g = b->g;
	size_t n = g->nxpairs;

	if (n == 0)
		return GRAPH_NONE;
	if (!b->xseek) {
		/* a window starts late: the cursors from its first event */
		b->xs = first_at(g, n, ts, send_ts);
		b->xr = first_at(g, n, ts, recv_ts);
		b->xseek = 1;
	}
	if (send) {
		while (b->xs < n && send_ts(g, b->xs) < ts)
			b->xs++;
		for (size_t k = b->xs; k < n && send_ts(g, k) == ts; k++)
			if (g->xpairs[g->xby_send[k]].send_sk == sk)
				return g->xby_send[k];
		return GRAPH_NONE;
	}
	while (b->xr < n && recv_ts(g, b->xr) < ts)
		b->xr++;
	/* a receive of several sends: the last of them (sorted so) */
	uint32_t found = GRAPH_NONE;
	for (size_t k = b->xr; k < n && recv_ts(g, k) == ts; k++)
		if (g->xpairs[k].recv_sk == sk)
			found = (uint32_t)k;
	return found;
}

