/*
 * graph-read.c: building a graph from a trace: from an array of events,
 * from a reader (the whole trace, or a window of it).
 *
 * graph_build() reads the trace on a second thread while the caller's
 * thread loads and builds: struct feed is a ring of FEED_NBUF batches of
 * decoded events between them (graph_feed() hands them to any other
 * consumer: the streaming search of diag-scan.c). A window's graph
 * (graph_build_window()) also takes the metadata stream's records
 * outside the window (read chunk by chunk, load_meta()), so that
 * descriptors, mappings and names are those of the whole trace, and the
 * entries of the system calls threads are in when it opens
 * (load_open_calls(), from a lead before it decoded chunk by chunk on
 * two threads: struct lead).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine-local.h"

/*
 * End of a load that fed a streamed build (g->stream): finish it, or
 * replay when names learnt late made it stale.
 */
static int
finish(struct graph *g, const struct rules *rules, struct graph **out,
    char **cause)
{
	struct build_pass *b = g->stream;

	g->stream = NULL;
	graph_load_finish(g);
	int big = g->toomany;
	for (uint32_t i = 0; i < g->nth; i++)
		if (g->th[i].nev >= UINT32_MAX - 1)
			big = 1;
	if (big) {
		if (cause)
			*cause = xstrdup("more than 2^20 threads or 2^32 "
			    "events in a thread");
		gb_abort(b);
		graph_free(g);
		return GRAPH_ETOOBIG;
	}
	int err;
	b->t0 = now_ns();	/* build_ns: what remains after the load */
	if (gb_stale(b)) {
		gb_abort(b);
		g->pid_changed = 0;
		err = graph_do_build(g, rules, cause);
	} else {
		err = gb_finish(b, cause);
	}
	if (err) {
		graph_free(g);
		return err;
	}
	*out = g;
	return 0;
}

int
graph_build_events(const struct trace_event *evs, size_t n,
    const struct trace_thread *threads, size_t nthreads,
    const struct rules *rules, struct graph **out, char **cause)
{
	struct graph *g = graph_alloc();
	uint64_t t0 = now_ns();

	for (size_t i = 0; i < nthreads; i++)
		graph_load_thread(g, &threads[i]);
	g->stream = gb_new(g, rules);
	for (size_t i = 0; i < n; i++)
		graph_load_event(g, &evs[i]);
	g->load_ns = now_ns() - t0;
	return finish(g, rules, out, cause);
}

/* Load one batch of events, prefetching the event arrays of the threads
   that the events a few places ahead go to; events after g->win_to are
   left out. */
static void
load_batch(struct graph *g, const struct trace_event *evs, size_t n)
{
	while (n > 0 && evs[n - 1].ts > g->win_to)
		n--;
	for (size_t i = 0; i < n; i++) {
		if (i + 8 < n && evs[i + 8].tid < g->ntiddirect &&
		    g->tiddirect[evs[i + 8].tid] != 0) {
			const struct gthread *t =
			    &g->th[g->tiddirect[evs[i + 8].tid] - 1];
			__builtin_prefetch(&t->ev[t->nev], 1);
		}
		if (i + 8 < n && evs[i + 8].type == TT_SWITCH &&
		    evs[i + 8].arg[1] < g->ntiddirect &&
		    g->tiddirect[evs[i + 8].arg[1]] != 0) {
			/* the thread taking the CPU gets an event too */
			const struct gthread *t =
			    &g->th[g->tiddirect[evs[i + 8].arg[1]] - 1];
			__builtin_prefetch(&t->ev[t->nev], 1);
		}
		graph_load_event(g, &evs[i]);
	}
}

/*
 * The two-core load: a reading thread decodes and merges the trace into
 * a ring of FEED_NBUF batches while the caller's thread loads and builds
 * them, so that decoding and building overlap. head counts the batches
 * filled, tail those loaded; the reader stops after a batch of 0 events
 * (the end). A side that waits is woken only when the ring is half full
 * (the consumer) or half empty (the reader), or at the end: a wake-up
 * costs a system call on each side, once per FEED_NBUF / 2 batches
 * rather than once a batch.
 */
enum { FEED_NBUF = 8, FEED_BATCH = 2048 };

struct feed {
	struct trace_reader *r;
	uint64_t to;			/* no event after this is needed */
	struct trace_event *buf[FEED_NBUF];
	size_t n[FEED_NBUF];
	unsigned head, tail;
	int rwait, cwait;		/* the reader, the consumer waits */
	pthread_mutex_t mu;
	pthread_cond_t rcv, ccv;	/* where each waits */
};

/* A batch filled (end: the last one): wake the consumer when it waits
   and there is enough to do. */
static void
feed_filled(struct feed *f, int end)
{
	f->head++;
	if (f->cwait && (end || f->head - f->tail >= FEED_NBUF / 2))
		pthread_cond_signal(&f->ccv);
}

/* Wait for a free batch (the reader). */
static void
feed_wait_room(struct feed *f)
{
	while (f->head - f->tail == FEED_NBUF) {
		f->rwait = 1;
		pthread_cond_wait(&f->rcv, &f->mu);
		f->rwait = 0;
	}
}

static void *
feed_main(void *arg)
{
	struct feed *f = arg;

	pthread_mutex_lock(&f->mu);
	for (;;) {
		feed_wait_room(f);
		unsigned k = f->head % FEED_NBUF;
		pthread_mutex_unlock(&f->mu);
		size_t n = trace_reader_read(f->r, f->buf[k], FEED_BATCH);
		pthread_mutex_lock(&f->mu);
		f->n[k] = n;
		if (n > 0 && f->buf[k][n - 1].ts > f->to)
			f->to = 0;	/* the next batch is the end */
		feed_filled(f, n == 0);
		if (n == 0)
			break;
		if (f->to == 0) {
			feed_wait_room(f);
			f->n[f->head % FEED_NBUF] = 0;
			feed_filled(f, 1);
			break;
		}
	}
	pthread_mutex_unlock(&f->mu);
	return NULL;
}

/* Hand every event of r up to to to fn, in batches, through a reading
   thread; 0, or -1 when the thread could not start (nothing was read
   then). */
static int
feed_events(struct trace_reader *r, uint64_t to,
    void (*fn)(void *, const struct trace_event *, size_t), void *arg)
{
	struct feed f = { .r = r, .to = to };
	pthread_t th;

	pthread_mutex_init(&f.mu, NULL);
	pthread_cond_init(&f.rcv, NULL);
	pthread_cond_init(&f.ccv, NULL);
	for (unsigned k = 0; k < FEED_NBUF; k++)
		f.buf[k] = xmalloc(FEED_BATCH * sizeof(*f.buf[k]));
	int err = pthread_create(&th, NULL, feed_main, &f);
	if (err == 0) {
		pthread_mutex_lock(&f.mu);
		for (;;) {
			while (f.head == f.tail) {
				f.cwait = 1;
				pthread_cond_wait(&f.ccv, &f.mu);
				f.cwait = 0;
			}
			unsigned k = f.tail % FEED_NBUF;
			size_t n = f.n[k];
			if (n == 0)
				break;
			pthread_mutex_unlock(&f.mu);
			fn(arg, f.buf[k], n);
			pthread_mutex_lock(&f.mu);
			f.tail++;
			if (f.rwait && f.head - f.tail <= FEED_NBUF / 2)
				pthread_cond_signal(&f.rcv);
		}
		pthread_mutex_unlock(&f.mu);
		pthread_join(th, NULL);
	}
	for (unsigned k = 0; k < FEED_NBUF; k++)
		free(f.buf[k]);
	pthread_cond_destroy(&f.rcv);
	pthread_cond_destroy(&f.ccv);
	pthread_mutex_destroy(&f.mu);
	return err == 0 ? 0 : -1;
}

static void
load_batch_cb(void *g, const struct trace_event *evs, size_t n)
{
	load_batch(g, evs, n);
}

/* Whether the load runs on two threads: more than one CPU online, and
   ARGUS_LOAD_THREADS not 1. */
static int
two_threads(void)
{
	const char *e = getenv("ARGUS_LOAD_THREADS");

	if (e != NULL && strcmp(e, "1") == 0)
		return 0;
	return sysconf(_SC_NPROCESSORS_ONLN) > 1;
}

/* Load the events of r from its position to g->win_to, on two threads
   when two_threads(). */
static void
load_reader(struct graph *g, struct trace_reader *r)
{
	if (two_threads() && feed_events(r, g->win_to, load_batch_cb, g) == 0)
		return;
	/* a small batch stays in the cache between reading and loading */
	enum { BATCH = 256 };
	struct trace_event *evs = xmalloc(BATCH * sizeof(*evs));
	size_t n;

	while ((n = trace_reader_read(r, evs, BATCH)) > 0) {
		load_batch(g, evs, n);
		if (evs[n - 1].ts > g->win_to)
			break;
	}
	free(evs);
}

void
graph_feed(struct trace_reader *r,
    void (*fn)(void *, const struct trace_event *, size_t), void *arg)
{
	if (two_threads()) {
		/* a consumer lighter than a build (the streaming search):
		   the chunks decode on a third thread, the reading thread
		   merges */
		(void)trace_reader_decode_ahead(r);
		if (feed_events(r, UINT64_MAX, fn, arg) == 0)
			return;
	}
	enum { BATCH = 256 };
	struct trace_event *evs = xmalloc(BATCH * sizeof(*evs));
	size_t n;

	while ((n = trace_reader_read(r, evs, BATCH)) > 0)
		fn(arg, evs, n);
	free(evs);
}

int
graph_build(struct trace_reader *r, const struct rules *rules,
    struct graph **out, char **cause)
{
	struct graph *g = graph_alloc();
	uint64_t t0 = now_ns();

	graph_take_hosts(g, r);
	for (size_t i = 0; i < trace_reader_nthreads(r); i++)
		graph_load_thread(g, trace_reader_thread_at(r, i));
	g->stream = gb_new(g, rules);
	load_reader(g, r);
	for (size_t i = 0; i < trace_reader_nthreads(r); i++)
		graph_load_thread(g, trace_reader_thread_at(r, i));
	g->load_ns = now_ns() - t0;
	return finish(g, rules, out, cause);
}

/* Chunk i of r decoded with b into *evs, grown (*cap) to its count: how
   many events. */
static size_t
chunk_events(struct trace_reader *r, size_t i, struct trace_chunk_buf *b,
    struct trace_event **evs, size_t *cap)
{
	const struct trace_chunk_info *ci = trace_reader_chunk(r, i);

	if (ci->count > *cap) {
		*cap = ci->count;
		*evs = xreallocarray(*evs, *cap, sizeof(**evs));
	}
	return trace_reader_decode_chunk(r, i, b, *evs);
}

/*
 * The records of the metadata stream outside the window, as a whole
 * build would have met them: before it (when after is 0) every record
 * (descriptors, mappings, thread names) after lo (0: all) in time order;
 * after it (after 1) the thread records only, which the whole build
 * applies at its end.
 */
static void
load_meta(struct graph *g, struct trace_reader *r, uint64_t lo, int after)
{
	struct trace_chunk_buf *b = trace_chunk_buf_new();
	struct trace_event *evs = NULL;
	size_t cap = 0;

	for (size_t i = 0; i < trace_reader_nchunks(r); i++) {
		const struct trace_chunk_info *ci = trace_reader_chunk(r, i);
		if (ci->cpu != TRACE_CPU_META || ci->count == 0 ||
		    (!after && (ci->first_ts >= g->win_from ||
		    (lo != 0 && ci->last_ts <= lo))) ||
		    (after && ci->last_ts <= g->win_to))
			continue;
		size_t n = chunk_events(r, i, b, &evs, &cap);
		for (size_t j = 0; j < n; j++) {
			const struct trace_event *e = &evs[j];
			if (!after && e->ts < g->win_from &&
			    (lo == 0 || e->ts > lo)) {
				graph_load_event(g, e);
			} else if (after && e->ts > g->win_to &&
			    e->type == TT_THREAD) {
				struct trace_thread t = {
				    .tid = (uint32_t)e->arg[0],
				    .pid = (uint32_t)e->arg[1],
				    .ppid = (uint32_t)e->arg[2],
				    .start_ts = e->arg[3],
				    .flags = (uint32_t)e->arg[4] };
				size_t len = e->blob != NULL ? e->blob_len : 0;
				if (len >= TRACE_COMM_LEN)
					len = TRACE_COMM_LEN - 1;
				if (len)
					memcpy(t.comm, e->blob, len);
				if (graph_thread_find(g, t.tid) != GRAPH_NONE)
					graph_load_thread(g, &t);
			}
		}
	}
	free(evs);
	trace_chunk_buf_free(b);
}

/*
 * The lead before a window (load_open_calls()): the last event of each
 * key (a task's system call by its thread; a timer, a work item by its
 * address, in any context; a socket a task received data from; a
 * thread's read, and its read that returned data) between lead_from
 * and from, as the time merge would meet it. Chunks decode on two
 * threads, each its own share into its own table; the merge order is
 * told by the rank of an event (its time, its stream, its place in the
 * stream), so that the tables merge as if one thread had read the events
 * in order. A lead holds a quarter of a window: up to millions of
 * events, which a reading thread would decode one by one while the
 * builder waited.
 */
/* What a lead keeps the last event of, each kind by its own key. */
enum lead_kind {
	LK_CALL,			/* a task's system call, by thread */
	LK_TIMER, LK_WORK,		/* by address */
	LK_SOCK,			/* a socket received from, by socket */
	LK_READ, LK_READ_DATA,		/* a read entered, one that returned
					   data, by thread */
	LK_N
};

struct lead_ev {
	struct trace_event e;
	uint64_t key;			/* in the table of its kind */
	enum lead_kind kind;
	uint32_t order, chunk, at;	/* its stream (CPU + 1, as the merge
					   orders them), chunk, place in it */
};

struct lead {
	struct trace_reader *r;
	uint64_t from, to;		/* [lead_from, from) */
	size_t first, step;		/* the chunks it decodes */
	DARR(struct lead_ev) v;		/* the last of each key, by kind */
	struct hmap key[LK_N];		/* key -> index in v + 1 */
};

static int
lead_later(const struct lead_ev *a, const struct lead_ev *b)
{
	if (a->e.ts != b->e.ts)
		return a->e.ts > b->e.ts;
	if (a->order != b->order)
		return a->order > b->order;
	if (a->chunk != b->chunk)
		return a->chunk > b->chunk;
	return a->at > b->at;
}

/* Keep x as the last of its key in l when it comes later. */
static void
lead_keep(struct lead *l, const struct lead_ev *x)
{
	int added;
	uint64_t *p = hmap_put(&l->key[x->kind], x->key, 0, &added);

	if (added) {
		DPUSH(l->v, *x);
		*p = l->v.n;
	} else if (lead_later(x, &l->v.v[*p - 1])) {
		l->v.v[*p - 1] = *x;
	}
}

static void *
lead_main(void *arg)
{
	struct lead *l = arg;
	struct trace_chunk_buf *b = trace_chunk_buf_new();
	struct trace_event *evs = NULL;
	size_t cap = 0;

	for (size_t i = l->first; i < trace_reader_nchunks(l->r); i += l->step) {
		const struct trace_chunk_info *ci = trace_reader_chunk(l->r, i);
		if (ci->cpu == TRACE_CPU_META || ci->count == 0 ||
		    ci->last_ts < l->from || ci->first_ts >= l->to)
			continue;
		size_t n = chunk_events(l->r, i, b, &evs, &cap);
		for (size_t j = 0; j < n; j++) {
			const struct trace_event *e = &evs[j];
			int task = (e->flags & TRACE_CTX_MASK) ==
			    TRACE_CTX_TASK && e->tid != 0;
			enum lead_kind kind;
			uint64_t k = e->arg[0];
			if (e->ts < l->from || e->ts >= l->to)
				continue;
			switch (e->type) {
			case TT_SYS_ENTER: case TT_SYS_EXIT:
				if (!task)
					continue;
				kind = LK_CALL;
				k = e->tid;
				break;
			case TT_TIMER_START: case TT_TIMER_CANCEL:
			case TT_TIMER_EXPIRE:
				kind = LK_TIMER;
				break;
			case TT_WQ_QUEUE: case TT_WQ_START:
				kind = LK_WORK;
				break;
			case TT_SOCK_RECV:
				/* the build's socket owner: the last task
				   that received data on it */
				if (!task || (int64_t)e->arg[3] <= 0)
					continue;
				kind = LK_SOCK;
				break;
			default:
				continue;
			}
			struct lead_ev x = { .e = *e, .key = k, .kind = kind,
			    .order = (uint32_t)ci->cpu + 1, .chunk = (uint32_t)i,
			    .at = (uint32_t)j };
			lead_keep(l, &x);
			/* a thread's last read, and its last that returned
			   data: who read each pipe last (lead_pipes()) */
			if (kind == LK_CALL &&
			    sys_is_read((uint32_t)e->arg[0]) &&
			    (e->type == TT_SYS_ENTER ||
			    (int64_t)e->arg[1] > 0)) {
				x.kind = e->type == TT_SYS_ENTER ? LK_READ :
				    LK_READ_DATA;
				lead_keep(l, &x);
			}
		}
	}
	free(evs);
	trace_chunk_buf_free(b);
	return NULL;
}

static int
lead_by_rank(const void *x, const void *y)
{
	const struct lead_ev *a = x, *b = y;

	return lead_later(a, b) ? 1 : lead_later(b, a) ? -1 : 0;
}

/* Whether the last event of a key leaves it open: a task's system call
   entry, a timer armed, a work item queued by a task. */
static int
lead_open(const struct trace_event *e)
{
	int task = (e->flags & TRACE_CTX_MASK) == TRACE_CTX_TASK &&
	    e->tid != 0;

	return task && (e->type == TT_SYS_ENTER || e->type == TT_TIMER_START ||
	    e->type == TT_WQ_QUEUE);
}

/*
 * Each pipe's last reader before the window (g->pipeseed), from l's last
 * read of each thread that returned data and the thread's last read
 * entry: the entry of that read when it comes before it (a thread's
 * calls do not overlap); else a later read, still open or without data,
 * is all the lead kept, and its descriptor is taken as the same.
 */
static void
lead_pipes(struct graph *g, struct lead *l)
{
	struct hmap last;		/* ino -> index in l->v */

	hmap_init(&last);
	for (size_t i = 0; i < l->v.n; i++) {
		const struct lead_ev *x = &l->v.v[i];
		uint64_t *en = x->kind == LK_READ_DATA ?
		    hmap_get(&l->key[LK_READ], x->key) : NULL;
		uint32_t ti = en != NULL ? graph_thread_find(g, x->e.tid) :
		    GRAPH_NONE;
		if (ti == GRAPH_NONE)
			continue;
		uint64_t *fd = hmap_get(&g->fdmap, (uint64_t)g->th[ti].pid <<
		    32 | (uint32_t)l->v.v[*en - 1].e.arg[1]);
		if (fd == NULL || (*fd >> 56) != TFD_PIPE)
			continue;
		int added;
		uint64_t *p = hmap_put(&last, *fd & 0x00ffffffffffffffULL, i,
		    &added);
		if (!added && lead_later(x, &l->v.v[*p]))
			*p = i;
	}
	size_t pos = 0;
	uint64_t ino, i;
	while (hmap_next(&last, &pos, &ino, &i)) {
		uint32_t ti = graph_thread_find(g, l->v.v[i].e.tid);
		*hmap_put(&g->pipeseed, ino, 0, NULL) = g->th[ti].pid;
	}
	hmap_free(&last);
}

/*
 * The system calls threads are in when the window opens, and the timers
 * and work items threads armed or queued that are still pending then:
 * their entries, arms and queueings, read in the lead before it and
 * loaded (in time order) before its first event, so that an exit in the
 * window finds what its entry named, and a timer or work item that runs
 * in the window finds who set it, as in the whole build (a read takes
 * the writes its pipe queued: without its entry, a write would stay
 * queued and every later read would take the one before its own). Only
 * those of tasks: an interrupt context's event means nothing without
 * its entry. A work queue's name is the reader's (it lives as long).
 * Also the process that last received from each socket (g->skseed) and
 * read each pipe (g->pipeseed): a send or a write then has the peer it
 * has in the whole build, which may end the sender's vertex there.
 */
static void
load_open_calls(struct graph *g, struct trace_reader *r, uint64_t lead)
{
	uint64_t from = g->win_from;
	struct lead l[2];
	int nl = two_threads() ? 2 : 1;
	pthread_t th;

	g->lead_from = from > lead ? from - lead : 0;
	memset(l, 0, sizeof(l));
	for (int i = 0; i < nl; i++) {
		l[i].r = r;
		l[i].from = g->lead_from;
		l[i].to = from;
		l[i].first = (size_t)i;
		l[i].step = (size_t)nl;
		for (int k = 0; k < LK_N; k++)
			hmap_init(&l[i].key[k]);
	}
	if (nl == 2 && pthread_create(&th, NULL, lead_main, &l[1]) != 0) {
		nl = 1;
		l[0].step = 1;
	}
	lead_main(&l[0]);
	if (nl == 2) {
		pthread_join(th, NULL);
		/* the second share's last events, where they come later */
		for (size_t i = 0; i < l[1].v.n; i++)
			lead_keep(&l[0], &l[1].v.v[i]);
	}
	lead_pipes(g, &l[0]);
	/* each socket's last receiver, as the build's owner of it; then
	   the calls, timers and work still open or pending, in the merge's
	   order */
	size_t k = 0;
	for (size_t i = 0; i < l[0].v.n; i++) {
		const struct lead_ev *x = &l[0].v.v[i];
		if (x->kind == LK_SOCK) {
			uint32_t ti = graph_thread_find(g, x->e.tid);
			if (ti != GRAPH_NONE)
				*hmap_put(&g->skseed, x->key, 0, NULL) =
				    g->th[ti].pid;
		} else if ((x->kind == LK_CALL || x->kind == LK_TIMER ||
		    x->kind == LK_WORK) && lead_open(&x->e)) {
			l[0].v.v[k++] = *x;
		}
	}
	if (g->stream != NULL)
		gb_seed(g->stream, SIZE_MAX);
	if (k > 1)
		qsort(l[0].v.v, k, sizeof(*l[0].v.v), lead_by_rank);
	for (size_t i = 0; i < k; i++) {
		struct trace_event e = l[0].v.v[i].e;
		if (e.type != TT_WQ_QUEUE) {
			e.blob = NULL;
			e.blob_len = 0;
		}
		graph_load_event(g, &e);
	}
	for (int i = 0; i < 2; i++) {
		free(l[i].v.v);
		for (int m = 0; m < LK_N; m++)
			hmap_free(&l[i].key[m]);
	}
}

/* The sockets' and pipes' owners the lead of the window loaded learnt
   (g->skseed, g->pipeseed) go to g->seeds, for a replay; the next
   window starts with none. */
static void
keep_seeds(struct graph *g)
{
	g->seeds = xreallocarray(g->seeds, g->nseeds + 1, sizeof(*g->seeds));
	g->seeds[g->nseeds][0] = g->skseed;
	g->seeds[g->nseeds][1] = g->pipeseed;
	g->nseeds++;
	hmap_init(&g->skseed);
	hmap_init(&g->pipeseed);
}

/*
 * A gap between two windows of g: each thread's events so far end a
 * segment (no scan of its events crosses it), no system call is open,
 * the build starts again (gb_gap()), and the next lead learns sockets
 * and pipes anew.
 */
static void
gap(struct graph *g)
{
	for (uint32_t i = 0; i < g->nth; i++) {
		struct gthread *t = &g->th[i];
		t->sys = GRAPH_NONE;
		if (t->nev == 0 || (t->nseg > 0 && t->seg[t->nseg - 1] == t->nev))
			continue;
		t->seg = xreallocarray(t->seg, t->nseg + 1, sizeof(*t->seg));
		t->seg[t->nseg++] = t->nev;
	}
	g->gap_order = xreallocarray(g->gap_order, g->ngaps + 1,
	    sizeof(*g->gap_order));
	g->gap_order[g->ngaps++] = g->norder;
	keep_seeds(g);
	if (g->stream != NULL)
		gb_gap(g->stream);
}

int
graph_build_windows(struct trace_reader *r, const struct rules *rules,
    const uint64_t (*win)[2], size_t n, struct graph **out, char **cause)
{
	const struct trace_info *in = trace_reader_info(r);

	for (size_t k = 0; k < n; k++)
		if (win[k][0] > win[k][1] || (k > 0 && win[k][0] <= win[k - 1][1])) {
			if (cause)
				*cause = xstrdup("windows out of order");
			return GRAPH_ERANGE;
		}
	if (n == 0 || (n == 1 && win[0][0] <= in->first_ts &&
	    win[0][1] >= in->last_ts)) {
		int err = trace_reader_seek(r, 0);
		return err ? err : graph_build(r, rules, out, cause);
	}
	struct graph *g = graph_alloc();
	uint64_t t0 = now_ns(), lead_from = 0;

	graph_take_hosts(g, r);
	for (size_t i = 0; i < trace_reader_nthreads(r); i++)
		graph_load_thread(g, trace_reader_thread_at(r, i));
	g->stream = gb_new(g, rules);
	for (size_t k = 0; k < n; k++) {
		uint64_t from = win[k][0], to = win[k][1];
		/* a lead of a quarter of the window (to the end when it has
		   none), never into the window before */
		uint64_t end = to != UINT64_MAX ? to : in->last_ts;
		uint64_t lead = end > from ? (end - from) / 4 : 0;
		if (k > 0) {
			gap(g);
			if (lead >= from - win[k - 1][1])
				lead = from - win[k - 1][1] - 1;
		}
		g->win_from = from;
		g->win_to = to;
		load_meta(g, r, k > 0 ? win[k - 1][1] : 0, 0);
		load_open_calls(g, r, lead);
		if (k == 0)
			lead_from = g->lead_from;
		int err = trace_reader_seek(r, from);
		if (err) {
			gb_abort(g->stream);
			graph_free(g);
			if (cause)
				*cause = xstrdup(trace_strerror(err));
			return GRAPH_ETRACE;
		}
		load_reader(g, r);
	}
	if (n > 1)
		keep_seeds(g);
	g->win_from = win[0][0];
	g->lead_from = lead_from;
	for (size_t i = 0; i < trace_reader_nthreads(r); i++)
		graph_load_thread(g, trace_reader_thread_at(r, i));
	load_meta(g, r, 0, 1);
	/* times are told from the start of the trace, not of the window */
	if (in->first_ts != 0 && (g->first_ts == 0 || in->first_ts < g->first_ts))
		g->first_ts = in->first_ts;
	g->load_ns = now_ns() - t0;
	return finish(g, rules, out, cause);
}

int
graph_build_window(struct trace_reader *r, const struct rules *rules,
    uint64_t from, uint64_t to, struct graph **out, char **cause)
{
	const uint64_t w[1][2] = { { from, to } };

	return graph_build_windows(r, rules, w, 1, out, cause);
}

uint64_t
graph_lead_from(const struct graph *g)
{
	return g->lead_from;
}

void
graph_window(const struct graph *g, uint64_t *from, uint64_t *to)
{
	*from = g->win_from;
	*to = g->win_to;
}
