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
 * (graph_load_open_calls(), graph-lead.c, from a lead before it).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

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

/* Load the events of r from its position to g->win_to, on two threads
   when graph_two_threads(). */
static void
load_reader(struct graph *g, struct trace_reader *r)
{
	if (graph_two_threads() && feed_events(r, g->win_to, load_batch_cb, g) == 0)
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
	if (graph_two_threads()) {
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
		size_t n = graph_chunk_events(r, i, b, &evs, &cap);
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
	return graph_build_seeded(r, rules, win, n, NULL, 0, out, cause);
}

int
graph_build_seeded(struct trace_reader *r, const struct rules *rules,
    const uint64_t (*win)[2], size_t n, const struct graph_seed *seeds,
    size_t nseeds, struct graph **out, char **cause)
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
	const struct graph_seed **sv = xmalloc((nseeds ? nseeds : 1) *
	    sizeof(*sv));

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
		struct trace_event *rest;
		size_t nrest;
		int merged;
		/* the waits that began between the window before and this
		   one */
		size_t ns = 0;
		for (size_t i = 0; i < nseeds; i++)
			if (seeds[i].sw.ts < from && seeds[i].end >= from &&
			    seeds[i].enter.ts <= seeds[i].sw.ts && (k == 0 ||
			    seeds[i].enter.ts > win[k - 1][1]))
				sv[ns++] = &seeds[i];
		int err = graph_load_open_calls(g, r, lead, sv, ns, &rest,
		    &nrest, &merged);
		if (k == 0)
			lead_from = g->lead_from;
		if (err == 0 && !merged)
			err = trace_reader_seek(r, from);
		if (err) {
			free(rest);
			free(sv);
			gb_abort(g->stream);
			graph_free(g);
			if (cause)
				*cause = xstrdup(trace_strerror(err));
			return GRAPH_ETRACE;
		}
		/* the window's first events, read with the lead's last */
		if (nrest > 0)
			load_batch(g, rest, nrest);
		if (nrest == 0 || rest[nrest - 1].ts <= to)
			load_reader(g, r);
		free(rest);
	}
	free(sv);
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
