/*
 * graph-lead.c: the lead before a window of a graph (graph-read.c): the
 * system calls, timers and work items open when the window opens, and
 * who owned each socket and pipe then, learnt from the last event of
 * each key before it (struct lead: the latest event of each kind and
 * key, ranked as the time merge would meet it). A long lead is decoded
 * chunk by chunk on two threads, a short one read from the time merge
 * after one seek (lead_merged()).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine-local.h"

/* Whether the load runs on two threads: more than one CPU online, and
   ARGUS_LOAD_THREADS not 1. */
int
graph_two_threads(void)
{
	const char *e = getenv("ARGUS_LOAD_THREADS");

	if (e != NULL && strcmp(e, "1") == 0)
		return 0;
	return sysconf(_SC_NPROCESSORS_ONLN) > 1;
}

/* Chunk i of r decoded with b into *evs, grown (*cap) to its count: how
   many events. */
size_t
graph_chunk_events(struct trace_reader *r, size_t i, struct trace_chunk_buf *b,
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
 * The lead before a window (graph_load_open_calls()): the last event of
 * each key (a task's system call by its thread; a timer, a work item by
 * its address, in any context; a socket a task received data from; a
 * thread's read, and its read that returned data) between lead_from and
 * from, as the time merge would meet it. A long lead's chunks decode on
 * two threads, each its own share into its own table; the merge order
 * is told by the rank of an event (its time, its stream, its place in
 * the stream), so that the tables merge as if one thread had read the
 * events in order. A lead holds a quarter of a window: up to millions
 * of events, which a reading thread would decode one by one while the
 * builder waited. A short one is read from the merge itself
 * (lead_read(): its place in the stream is then its rank in the merge).
 */
/* What a lead keeps the last event of, each kind by its own key. */
enum lead_kind {
	LK_CALL,			/* a task's system call, by thread */
	LK_TIMER, LK_WORK,		/* by address */
	LK_SOCK,			/* a socket received from, by socket */
	LK_READ, LK_READ_DATA,		/* a read entered, one that returned
					   data, by thread */
	LK_SEED,			/* a seed's switch, by thread */
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

/* Event e of the lead, ranked among events of its time by its stream
   (order), chunk and place in it: kept when it is of a kind the lead
   keeps, and the latest of its key. */
static void
lead_event(struct lead *l, const struct trace_event *e, uint32_t order,
    uint32_t chunk, uint32_t at)
{
	int task = (e->flags & TRACE_CTX_MASK) == TRACE_CTX_TASK && e->tid != 0;
	enum lead_kind kind;
	uint64_t k = e->arg[0];

	switch (e->type) {
	case TT_SYS_ENTER: case TT_SYS_EXIT:
		if (!task)
			return;
		kind = LK_CALL;
		k = e->tid;
		break;
	case TT_TIMER_START: case TT_TIMER_CANCEL: case TT_TIMER_EXPIRE:
		kind = LK_TIMER;
		break;
	case TT_WQ_QUEUE: case TT_WQ_START:
		kind = LK_WORK;
		break;
	case TT_SOCK_RECV:
		/* the build's socket owner: the last task that received
		   data on it */
		if (!task || (int64_t)e->arg[3] <= 0)
			return;
		kind = LK_SOCK;
		break;
	default:
		return;
	}
	struct lead_ev x = { .e = *e, .key = k, .kind = kind, .order = order,
	    .chunk = chunk, .at = at };
	lead_keep(l, &x);
	/* a thread's last read, and its last that returned data: who read
	   each pipe last (lead_pipes()) */
	if (kind == LK_CALL && sys_is_read((uint32_t)e->arg[0]) &&
	    (e->type == TT_SYS_ENTER || (int64_t)e->arg[1] > 0)) {
		x.kind = e->type == TT_SYS_ENTER ? LK_READ : LK_READ_DATA;
		lead_keep(l, &x);
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
		size_t n = graph_chunk_events(l->r, i, b, &evs, &cap);
		for (size_t j = 0; j < n; j++)
			if (evs[j].ts >= l->from && evs[j].ts < l->to)
				lead_event(l, &evs[j], (uint32_t)ci->cpu + 1,
				    (uint32_t)i, (uint32_t)j);
	}
	free(evs);
	trace_chunk_buf_free(b);
	return NULL;
}

/*
 * Whether the lead [from, to) is better read from the time merge after
 * a seek to its start than decoded chunk by chunk on two threads: when
 * its own events are fewer than a third of those of the chunks it cuts.
 * A short lead (the windows around the similar nodes of diag-search.c)
 * would decode a chunk of each CPU whole, and the seek to the window
 * would decode the last one again: about 7 ms a window, 1 s of the
 * 147 such windows of a search of 200 M generated events.
 * ARGUS_LEAD set to "merged" or "chunks" says which (tests).
 */
static int
lead_merged(struct trace_reader *r, uint64_t from, uint64_t to)
{
	double own = 0, whole = 0;
	const char *e = getenv("ARGUS_LEAD");

	if (e != NULL && strcmp(e, "merged") == 0)
		return from < to;
	if (e != NULL && strcmp(e, "chunks") == 0)
		return 0;
	for (size_t i = 0; i < trace_reader_nchunks(r); i++) {
		const struct trace_chunk_info *ci = trace_reader_chunk(r, i);
		if (ci->cpu == TRACE_CPU_META || ci->count == 0 ||
		    ci->last_ts < from || ci->first_ts >= to)
			continue;
		whole += ci->count;
		uint64_t a = ci->first_ts > from ? ci->first_ts : from;
		uint64_t b = ci->last_ts < to ? ci->last_ts : to;
		own += ci->last_ts > ci->first_ts ? (double)ci->count *
		    (double)(b - a) / (double)(ci->last_ts - ci->first_ts) :
		    ci->count;
	}
	return own * 3 < whole;
}

/*
 * The lead [l->from, l->to) read from the time merge after a seek to its
 * start: its events come in the merge's order, so that each is ranked
 * by the count of events before it. The events at or after l->to read
 * in the last batch go to *rest (*nrest of them; the caller frees
 * *rest): the window's first events, the reader past them. 0, or the
 * trace's error.
 */
static int
lead_read(struct lead *l, struct trace_event **rest, size_t *nrest)
{
	enum { BATCH = 1024 };
	struct trace_event *evs = xmalloc(BATCH * sizeof(*evs));
	uint32_t at = 0;
	size_t n;
	int err = trace_reader_seek(l->r, l->from);

	*rest = NULL;
	*nrest = 0;
	while (err == 0 && (n = trace_reader_read(l->r, evs, BATCH)) > 0) {
		size_t i = 0;
		for (; i < n && evs[i].ts < l->to; i++)
			if (evs[i].cpu != TRACE_CPU_META)
				lead_event(l, &evs[i], (uint32_t)evs[i].cpu + 1,
				    0, at++);
		if (i < n) {
			memmove(evs, evs + i, (n - i) * sizeof(*evs));
			*rest = evs;
			*nrest = n - i;
			return 0;
		}
	}
	free(evs);
	return err;
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
 * *merged says whether the lead was read from the merge (lead_merged()):
 * the reader is then past the window's start, and *rest holds the
 * window's first events (*nrest; the caller frees *rest); else the
 * caller seeks. 0, or the trace's error.
 */
int
graph_load_open_calls(struct graph *g, struct trace_reader *r, uint64_t lead,
    const struct graph_seed *const *seeds, size_t nseeds,
    struct trace_event **rest, size_t *nrest, int *merged)
{
	uint64_t from = g->win_from;
	struct lead l[2];
	int nl = graph_two_threads() ? 2 : 1;
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
	*rest = NULL;
	*nrest = 0;
	int err = 0;
	*merged = lead_merged(r, g->lead_from, from);
	if (*merged) {
		nl = 1;
		err = lead_read(&l[0], rest, nrest);
	} else if (nl == 2 && pthread_create(&th, NULL, lead_main, &l[1]) != 0) {
		nl = 1;
		l[0].step = 1;
	}
	if (!*merged)
		lead_main(&l[0]);
	if (nl == 2) {
		pthread_join(th, NULL);
		/* the second share's last events, where they come later */
		for (size_t i = 0; i < l[1].v.n; i++)
			lead_keep(&l[0], &l[1].v.v[i]);
	}
	/* the waits seeded: the entry the lead did not hold, and the
	   switch, each ranked as the merge would meet it */
	for (size_t i = 0; i < nseeds; i++) {
		const struct graph_seed *sd = seeds[i];
		struct lead_ev x = { .e = sd->enter, .key = sd->enter.tid,
		    .kind = LK_CALL, .order = sd->enter.cpu + 1 };
		if (sd->enter.ts < g->lead_from)
			lead_keep(&l[0], &x);
		x.e = sd->sw;
		x.kind = LK_SEED;
		x.order = sd->sw.cpu + 1;
		lead_keep(&l[0], &x);
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
		} else if (((x->kind == LK_CALL || x->kind == LK_TIMER ||
		    x->kind == LK_WORK) && lead_open(&x->e)) ||
		    x->kind == LK_SEED) {
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
	return err;
}
