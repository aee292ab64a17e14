/*
 * diag-scan-sim.c: the streaming search's library of similar nodes:
 * for each hang candidate that waited in a system call, the waits of its
 * thread that the graph of the whole trace may rank first among its
 * similar nodes (diag-similar.c), so that the graph of a part of the
 * trace can hold them too (diag-search.c adds a window around each).
 *
 * A wait's class is told without the graph: its system call, the
 * resource it waits on (diag_res_key()), and a hash of the run that
 * ends in it, the system calls and user events since the thread's
 * previous wait, repeats collapsed (diag-similar.c's signature, with a
 * key at least as fine as its resource). The graph takes as similar
 * only the runs that talked to the hang's peers, or to no process, and
 * ranks first the waits that the hang's waker ended: so a class is also
 * told by the processes its run exchanged messages with (diag_sim_msg():
 * the senders queued on each socket, as the graph's queues), and struct
 * simrec keeps, for each class and peers of each thread, the latest
 * wait of each of the last SIM_KEEP processes that ended one (the
 * waker, struct sthr's wk_pid). The records are in a table per thread
 * (SIM_MAXCAP records at most: a thread of more classes starts its table
 * again, so the library grows with threads, not with events). A
 * candidate takes, when it ends, the latest waits of its class, of its
 * peers and of none, that differ from it (as similar nodes must:
 * shorter, or another result), and waits (struct simwaiter) for the
 * first such wait after it. (A looser class, the call and the resource
 * only, gave no more answers of the whole graph on 200 M generated
 * events: 606 of 848 either way. The peers gave 610 against 576, on
 * this class.)
 *
 * The graph ranks first, of one class, the waits that the hang's peer
 * ended: the process that ended the hang's wait, or when none did (a
 * timeout, a lost wake-up), the one that ended the latest wait of its
 * call and resource before it (struct simloose: a thread's last few
 * loose classes). A wake-up that came before a wait began did not end
 * it. A record keeps the latest of the last SIM_KEEP wakers only: the
 * latest of an older waker goes, when it leaves the record, to a table
 * by class and waker (struct simtab), where a hang of that peer finds
 * it. A candidate waiting for a wait after it takes the first that
 * differs, and goes on waiting for the first its peer ended. Each wait
 * it takes carries the rank the graph may give it (DS_*), so that a
 * graph short of room holds the windows of the best ranked first
 * (diag-simwin.c). A class record of runs of peers whose hash differs
 * from another's in its lowest bit only is another record (live()).
 *
 * The pass meets tens of millions of waits, each in a table of its own
 * thread among hundreds: a lookup a wait would miss the cache each
 * time. So a thread's waits wait in struct simpend, SIM_PEND at a time,
 * and go in together with their records' lines fetched ahead.
 */
#include <stdlib.h>
#include <string.h>

#include "diag-scan-local.h"

static uint64_t
mix(uint64_t h, uint64_t x)
{
	h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	return h;
}

void
diag_sim_item(struct sthr *t, const struct graph_event *ge)
{
	if (ge->type == GRAPH_EV_RUN && t->pw && !t->pw_ran) {
		t->pw_ran = 1;	/* who ended its wait */
		t->pw_waker = t->wk_pid;
	}
	if (t->run_new) {
		t->run_new = 0;
		t->run_ts = ge->ts;
	}
	uint64_t item = diag_run_item(ge);
	if (item == 0 || item == t->runprev)
		return;
	t->runprev = item;
	t->runh = mix(t->runh, item);
}

/* Hash of the peers of t's run as a set (diag-similar.c's peer_sig()):
   0 when it has none. */
static uint64_t
peers_hash(struct sthr *t)
{
	uint32_t *p = t->rpeer, n = t->nrpeer;
	uint64_t h = 0;

	for (uint32_t i = 1; i < n; i++)	/* a few: insertion sort */
		for (uint32_t j = i; j > 0 && p[j] < p[j - 1]; j--) {
			uint32_t x = p[j];
			p[j] = p[j - 1];
			p[j - 1] = x;
		}
	for (uint32_t i = 0; i < n; i++)
		h = mix(h ? h : 13, p[i]);
	return h;
}

/* Process pid, a peer of t's run (other than t's own). */
static void
run_peer(struct sthr *t, uint32_t pid)
{
	if (pid == t->pid)
		return;
	for (uint32_t i = 0; i < t->nrpeer; i++)
		if (t->rpeer[i] == pid)
			return;
	if (t->nrpeer < SIM_NPEER)
		t->rpeer[t->nrpeer++] = pid;
}

static struct simq *
sock_queue(struct scan *s, uint64_t sk, int make)
{
	int added;
	uint64_t *p = make ? hmap_put(&s->skq, sk, 0, &added) :
	    hmap_get(&s->skq, sk);

	if (p == NULL)
		return NULL;
	if (*p == 0) {
		struct simq q = { .len = 0 };
		DPUSH(s->q, q);
		*p = s->q.n;
	}
	return &s->q.v[*p - 1];
}

/*
 * The graph's messages (graph-build.c) as the peers of runs: data made
 * ready on a socket is queued with its sender's process (0 for an
 * interrupt context, as the graph's pseudo-thread has), and a receive
 * of data takes the oldest; the sender's peer is the socket's last
 * receiver (the graph's edge goes to whoever takes it, which is nearly
 * always the socket's owner).
 */
void
diag_sim_msg(struct scan *s, struct sthr *t, const struct trace_event *ev)
{
	uint64_t sk = ev->arg[0];

	if (ev->type == TT_SK_DATA_READY) {
		struct simq *q = sock_queue(s, sk, 1);
		if (q->len == SIM_QLEN) {
			q->head = (uint8_t)((q->head + 1) % SIM_QLEN);
			q->len--;
		}
		q->pid[(q->head + q->len++) % SIM_QLEN] = t != NULL ?
		    t->pid : 0;
		uint64_t *o = t != NULL ? hmap_get(&s->skown, sk) : NULL;
		if (o != NULL)
			run_peer(t, (uint32_t)*o);
	} else if (t != NULL && (int64_t)ev->arg[3] > 0) {
		struct simq *q = sock_queue(s, sk, 0);
		if (q != NULL && q->len > 0) {
			run_peer(t, q->pid[q->head]);
			q->head = (uint8_t)((q->head + 1) % SIM_QLEN);
			q->len--;
		}
		*hmap_put(&s->skown, sk, 0, NULL) = t->pid;
	}
}

void
diag_sim_switch(struct scan *s, struct sthr *t, uint64_t ts)
{
	if (t->pw)	/* another wait of the same call before */
		diag_sim_exit(s, t, DIAG_SIM_NORET);
	if (t->insys) {
		t->pw = 1;
		t->pw_runh = t->runh;
		t->pw_peers = peers_hash(t);
		t->pw_ran = 0;
		t->pw_waker = 0;
		t->pw_run = t->run_ts;
		t->pw_sw = ts;
		t->pw_end = 0;
		t->pw_cand = 0;
	}
	t->runh = 7;
	t->runprev = 0;
	t->run_new = 1;
	t->nrpeer = 0;
}

/* A call's result in 32 bits: INT32_MIN for none, the others clamped
   above it. */
static int32_t
ret32(int64_t ret)
{
	if (ret == DIAG_SIM_NORET)
		return INT32_MIN;
	return ret < INT32_MIN + 1 ? INT32_MIN + 1 : ret > INT32_MAX ?
	    INT32_MAX : (int32_t)ret;
}

/* Microseconds in 32 bits, saturated. */
static uint32_t
us32(uint64_t ns)
{
	return ns / 1000 > UINT32_MAX ? UINT32_MAX : (uint32_t)(ns / 1000);
}

/* Whether a wait of length cd that returned cret differs from the
   candidate c that returned hret (diag-similar.c's differs()); results
   as ret32() gives them. */
static int
differs(const struct scan *s, const struct dcand *c, int32_t hret,
    uint64_t cd, int32_t cret)
{
	uint64_t hd = c->b - c->a;

	if (cret != hret && cret != INT32_MIN && hret != INT32_MIN)
		return 1;
	return hd > cd && (hd - cd >= s->th || hd - cd >= hd / 2);
}

static void
add_sim(struct dcand *c, uint64_t run, uint64_t end, unsigned prio)
{
	for (uint32_t i = 0; i < c->nsim; i++)
		if (c->sim[i][0] == run) {
			if (prio < c->simprio[i])
				c->simprio[i] = (uint8_t)prio;
			return;
		}
	uint32_t k = c->nsim;
	if (k == DC_NSIM) {	/* full: in place of the lowest ranked */
		for (uint32_t i = 0; i < c->nsim; i++)
			if (k == DC_NSIM || c->simprio[i] > c->simprio[k])
				k = i;
		if (c->simprio[k] <= prio)
			return;
	} else {
		c->nsim++;
	}
	c->sim[k][0] = run;
	c->sim[k][1] = end;
	c->simprio[k] = (uint8_t)prio;
}

/* Key as a table keeps it: 0 marks a free slot (keys that differ in
   their lowest bit only, as those of runs of two peers of neighbouring
   pids may, stay apart). */
static uint64_t
live(uint64_t key)
{
	return key != 0 ? key : 1;
}

static size_t
slot_of(uint64_t key, size_t mask)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	return (size_t)key & mask;
}

/* Thread t's table of records twice as large. */
static void
grow(struct sthr *t)
{
	size_t cap = t->rcap ? t->rcap * 2 : 16;
	/* a record in a cache line of its own */
	struct simrec *n = aligned_alloc(64, cap * sizeof(*n));

	if (n == NULL)
		abort();
	memset(n, 0, cap * sizeof(*n));
	for (size_t i = 0; i < t->rcap; i++) {
		if (t->rt[i].key == 0)
			continue;
		size_t k = slot_of(t->rt[i].key, cap - 1);
		while (n[k].key != 0)
			k = (k + 1) & (cap - 1);
		n[k] = t->rt[i];
	}
	free(t->rt);
	t->rt = n;
	t->rcap = cap;
	t->last_ok = 0;
}

/* The record of class key in thread t's table, made when new; the
   thread's last one is remembered (a loop waits in one class over and
   over). */
static struct simrec *
rec(struct sthr *t, uint64_t key)
{
	key = live(key);
	if (t->last_ok && t->last_key == key)
		return &t->rt[t->last_rec];
	if ((t->rn + 1) * 2 > t->rcap && t->rcap >= SIM_MAXCAP) {
		/* full: the thread's library starts again (the candidates
		   waiting in it wait no more) */
		memset(t->rt, 0, t->rcap * sizeof(*t->rt));
		t->rn = 0;
	} else if ((t->rn + 1) * 2 > t->rcap) {
		grow(t);
	}
	size_t mask = t->rcap - 1, i = slot_of(key, mask);
	while (t->rt[i].key != 0 && t->rt[i].key != key)
		i = (i + 1) & mask;
	if (t->rt[i].key == 0) {
		t->rt[i].key = key;
		t->rn++;
	}
	t->last_ok = 1;
	t->last_key = key;
	t->last_rec = (uint32_t)i;
	return &t->rt[i];
}

/* The record of class key in thread t's table, or NULL. */
static const struct simrec *
find(const struct sthr *t, uint64_t key)
{
	key = live(key);
	if (t->rcap == 0)
		return NULL;
	size_t mask = t->rcap - 1, i = slot_of(key, mask);
	while (t->rt[i].key != 0 && t->rt[i].key != key)
		i = (i + 1) & mask;
	return t->rt[i].key == key ? &t->rt[i] : NULL;
}

/* The key of the record of a class (base) of runs of peers (their hash,
   or 0). */
static uint64_t
class_key(uint64_t base, uint64_t peers)
{
	return peers != 0 ? mix(base, peers) : base;
}

/* The key of the latest wait of class key that process waker ended. */
static uint64_t
waker_key(uint64_t key, uint32_t waker)
{
	return mix(mix(key, SIM_WAKER), waker);
}

/* The key of the loose record of a call and resource (loose) of runs of
   peers (their hash, 0 for none, SIM_ANY for any). */
static uint64_t
loose_key(uint64_t loose, uint64_t peers)
{
	return mix(mix(loose, SIM_LOOSE), peers);
}

/* The slot of key in table tb, made when new (make) or NULL; a full
   table starts again. */
static struct simlast *
last(struct simtab *tb, uint64_t key, int make)
{
	key = live(key);
	if (make && (tb->n + 1) * 2 > tb->cap) {
		if (tb->cap >= SIM_LASTCAP) {
			memset(tb->v, 0, tb->cap * sizeof(*tb->v));
			tb->n = 0;
		} else {
			uint32_t cap = tb->cap ? tb->cap * 2 : 16;
			struct simlast *n = xcalloc(cap, sizeof(*n));
			for (uint32_t i = 0; i < tb->cap; i++) {
				if (tb->v[i].key == 0)
					continue;
				size_t k = slot_of(tb->v[i].key, cap - 1);
				while (n[k].key != 0)
					k = (k + 1) & (cap - 1);
				n[k] = tb->v[i];
			}
			free(tb->v);
			tb->v = n;
			tb->cap = cap;
		}
	}
	if (tb->cap == 0)
		return NULL;
	size_t mask = tb->cap - 1, i = slot_of(key, mask);
	while (tb->v[i].key != 0 && tb->v[i].key != key)
		i = (i + 1) & mask;
	if (tb->v[i].key == key)
		return &tb->v[i];
	if (!make)
		return NULL;
	tb->v[i].key = key;
	tb->n++;
	return &tb->v[i];
}

/* Candidate c (its wait x) takes the waits of r that differ from it:
   of its class (loose: of runs of no peers, when its run had some),
   the peer's ranked first. Whether it took one its peer ended. */
static int
take(const struct scan *s, struct dcand *c, const struct simpend *x,
    const struct simrec *r, uint32_t peer, int loose)
{
	int took = 0;

	for (uint32_t i = 0; r != NULL && i < r->n; i++) {
		const struct simw *w = &r->w[i];
		int mine = peer != 0 && w->waker == peer;
		if (differs(s, c, ret32(x->ret), (uint64_t)w->dur * 1000,
		    w->ret)) {
			add_sim(c, w->end - (uint64_t)w->back * 1000, w->end,
			    loose ? DS_LOOSE : mine ? DS_PEER : DS_BEFORE);
			took |= mine;
		}
	}
	return took;
}

/* Candidate c (its wait x) takes the latest wait l when it differs from
   it, ranked prio. */
static void
take_last(const struct scan *s, struct dcand *c, const struct simpend *x,
    const struct simlast *l, unsigned prio)
{
	if (l != NULL && differs(s, c, ret32(x->ret),
	    (uint64_t)l->w.dur * 1000, l->w.ret))
		add_sim(c, l->w.end - (uint64_t)l->w.back * 1000, l->w.end,
		    prio);
}

/* The candidates waiting in r for a wait of its class after theirs:
   those this one (run, sw, end, ret, ended by waker) differs from take
   it, when it is their first, or the first their peer ended; they wait
   no more once their peer's came. */
static void
wake(struct scan *s, struct simrec *r, const struct simpend *x)
{
	uint32_t *link = &r->waiter;
	unsigned n = 0;

	while (*link != 0) {
		if (++n > SIM_WAITERS) {
			*link = 0;	/* the oldest give up */
			break;
		}
		struct simwaiter *w = &s->waiters.v[*link - 1];
		struct dcand *c = &s->c.v[w->cand];
		int peer = w->peer == 0 || x->waker == w->peer;
		if (c->a < x->sw && (peer || !w->took) && differs(s, c,
		    ret32(w->ret), x->end - x->sw, ret32(x->ret))) {
			add_sim(c, x->run, x->end, w->peer != 0 && peer ?
			    DS_AFTER_PEER : DS_AFTER);
			w->took = 1;
		}
		if (w->took && peer)
			*link = w->next;	/* it has its nearest ones */
		else
			link = &w->next;
	}
}

/* The process candidate wait x waits on, as the graph tells it
   (diag-similar.c's hang_peer()): the one that ended it, or the one
   that ended the latest wait before it of its call and resource whose
   run talked to its peers or to none (when it talked to some; else any
   such wait) and that one ended: of the loose classes of t
   (loose_key()), or 0. */
static uint32_t
peer_of(struct sthr *t, const struct simpend *x)
{
	uint64_t ka = loose_key(x->loose, x->peers != 0 ? x->peers : SIM_ANY);
	uint64_t kb = x->peers != 0 ? loose_key(x->loose, 0) : ka;
	const struct simloose *best = NULL;

	if (x->waker != 0)
		return x->waker;
	for (int i = 0; i < SIM_NLOOSE; i++) {
		const struct simloose *l = &t->lz[i];
		if ((l->key == ka || l->key == kb) &&
		    (best == NULL || l->end > best->end))
			best = l;
	}
	return best != NULL ? best->waker : 0;
}

/* The latest wait (end, waker) of loose class key into thread t's, in
   place of its oldest when new. */
static void
put_loose(struct sthr *t, uint64_t key, uint64_t end, uint32_t waker)
{
	struct simloose *o = &t->lz[0];

	for (int i = 0; i < SIM_NLOOSE; i++) {
		struct simloose *l = &t->lz[i];
		if (l->key == key) {
			o = l;
			break;
		}
		if (l->end < o->end)
			o = l;
	}
	*o = (struct simloose){ .key = key, .end = end, .waker = waker };
}

/* Wait x into the loose classes of thread t: those of its call and
   resource, of its run's peers and of any; when some process ended it
   (a hang no one woke takes the waker of the latest one a process
   woke, as hang_peer() goes back past those none did). */
static void
put_loose_all(struct sthr *t, const struct simpend *x)
{
	if (x->waker == 0)
		return;
	put_loose(t, loose_key(x->loose, x->peers), x->end, x->waker);
	put_loose(t, loose_key(x->loose, SIM_ANY), x->end, x->waker);
}

/*
 * Wait x of thread t into the record of its class; when it made a
 * candidate, the candidate takes the latest waits of the class before it
 * that differ from it, and waits for the next one. The graph ranks
 * first, of one class, the runs of the hang's peers (or of none), and of
 * those the waits ended by the hang's waker: so a class has a record for
 * each set of peers, which keeps the latest wait of each of the last
 * SIM_KEEP processes that ended one, and a candidate reads the records
 * of its peers and of none.
 */
static void
put(struct scan *s, struct sthr *t, const struct simpend *x)
{
	uint64_t key = class_key(x->base, x->peers);
	uint32_t peer = 0;

	if (x->cand != 0) {
		const struct simrec *a = find(t, key);
		const struct simrec *b = x->peers != 0 ? find(t, x->base) :
		    NULL;
		struct dcand *c = &s->c.v[x->cand - 1];
		peer = peer_of(t, x);
		/* the waits of its class, and of runs of no peers; when
		   none its peer ended differs, the latest its peer ended
		   out of their records (the graph ranks those first) */
		if (!take(s, c, x, a, peer, 0) && peer != 0)
			take_last(s, c, x, last(&t->bywaker, waker_key(key,
			    peer), 0), DS_PEER);
		if (!take(s, c, x, b, peer, 1) && peer != 0 && x->peers != 0)
			take_last(s, c, x, last(&t->bywaker,
			    waker_key(x->base, peer), 0), DS_LOOSE);
	}
	struct simw nw = { .end = x->end, .dur = us32(x->end - x->sw),
	    .back = us32(x->end - x->run), .ret = ret32(x->ret),
	    .waker = x->waker };
	put_loose_all(t, x);
	struct simrec *r = rec(t, key);

	wake(s, r, x);
	if (x->cand != 0 && s->waiters.n < UINT32_MAX - 1) {
		struct simwaiter w = { .cand = x->cand - 1, .ret = x->ret,
		    .next = r->waiter, .peer = peer };
		DPUSH(s->waiters, w);
		r->waiter = (uint32_t)s->waiters.n;
	}
	/* newest first: the slot of the same waker, or the oldest, goes */
	uint32_t k = r->n;
	for (uint32_t i = 0; i < r->n && k == r->n; i++)
		if (r->w[i].waker == x->waker)
			k = i;
	if (k == SIM_KEEP) {
		/* the oldest waker's latest, out of its record: kept by
		   waker */
		k--;
		if (r->w[k].waker != 0)
			last(&t->bywaker, waker_key(key, r->w[k].waker),
			    1)->w = r->w[k];
	} else if (k == r->n)
		r->n++;
	memmove(&r->w[1], &r->w[0], k * sizeof(r->w[0]));
	r->w[0] = nw;
}

/* Thread t's pending waits into their records, in order, their home
   slots fetched first: their misses overlap instead of coming one after
   another. */
static void
flush(struct scan *s, struct sthr *t)
{
	if (t->rcap > 0)
		for (uint32_t i = 0; i < t->nspend; i++)
			__builtin_prefetch(&t->rt[slot_of(live(class_key(
			    t->spend[i].base, t->spend[i].peers)),
			    t->rcap - 1)]);
	for (uint32_t i = 0; i < t->nspend; i++)
		put(s, t, &t->spend[i]);
	t->nspend = 0;
}

void
diag_sim_exit(struct scan *s, struct sthr *t, int64_t ret)
{
	if (!t->pw || t->pw_end == 0 || (t->flags & GRAPH_THREAD_IRQ)) {
		t->pw = 0;
		return;
	}
	t->pw = 0;
	uint64_t res = diag_res_key(&t->sys), nr = t->sys.aux;
	uint64_t loose = mix(mix(t->tid, nr), res);
	uint64_t base = mix(loose, t->pw_runh);
	if (t->spend == NULL)
		t->spend = xmalloc(SIM_PEND * sizeof(*t->spend));
	t->spend[t->nspend++] = (struct simpend){
		.waker = t->pw_waker,
		.peers = t->pw_peers, .base = base,
		.loose = loose,
		.run = t->pw_run, .sw = t->pw_sw, .end = t->pw_end,
		.ret = ret, .cand = t->pw_cand };
	if (t->pw_cand != 0 || t->nspend == SIM_PEND)
		flush(s, t);
}

void
diag_sim_flush_all(struct scan *s)
{
	for (size_t i = 0; i < s->nt; i++)
		flush(s, &s->t[i]);
}

void
diag_sim_free(struct scan *s)
{
	for (size_t i = 0; i < s->nt; i++) {
		free(s->t[i].rt);
		free(s->t[i].bywaker.v);
		free(s->t[i].spend);
	}
	free(s->waiters.v);
	free(s->q.v);
	hmap_free(&s->skq);
	hmap_free(&s->skown);
}
