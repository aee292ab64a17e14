/*
 * reader-pre.c: decoding ahead (trace_reader_decode_ahead()). A helper
 * thread decodes whole chunks into events, for each cursor the chunk it
 * will need next (struct slot), taking first the cursor whose next chunk
 * starts first: the one the merge wants soonest. A cursor that finds its
 * next chunk ready takes it by swapping arrays; one that finds it being
 * decoded waits; one that finds nothing decodes it itself. c->next_chunk
 * and the slots change under the lock only.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "common/common.h"
#include "reader-local.h"

enum { SLOT_EMPTY, SLOT_BUSY, SLOT_READY };

struct slot {
	int state;
	size_t k;			/* the chunk, in its cursor */
	struct trace_event *ev;
	size_t n, cap;
};

struct pre {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t work, done;	/* the helper waits on work, cursors
					   on done */
	int stop;
	struct slot *slot;		/* one per cursor */
	struct trace_chunk_buf *mine, *theirs;	/* the helper's, the
						   cursors' */
};

/* The arrays of decoded chunks (megabytes each) are mapped, not taken
   from the heap: the helper's would stay in its own heap once freed,
   which the graphs built after the pass could not use. */
static void
arr_free(struct trace_event *v, size_t cap)
{
	if (v != NULL)
		munmap(v, cap * sizeof(*v));
}

/* Room for the events of ref in *v (of *cap). */
static void
room(struct trace_event **v, size_t *cap, const struct chunkref *ref)
{
	size_t want = ref->h.count ? ref->h.count : 1;

	if (*cap < want) {
		arr_free(*v, *cap);
		*v = mmap(NULL, want * sizeof(**v), PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (*v == MAP_FAILED)
			abort();
		*cap = want;
	}
}

static void *
pre_main(void *arg)
{
	struct trace_reader *r = arg;
	struct pre *p = r->pre;

	pthread_mutex_lock(&p->mu);
	while (!p->stop) {
		size_t best = SIZE_MAX;
		uint64_t bt = 0;
		for (size_t i = 0; i < r->ncursors; i++) {
			const struct cursor *c = &r->cursors[i];
			if (p->slot[i].state != SLOT_EMPTY ||
			    c->next_chunk >= c->nchunks)
				continue;
			uint64_t t = c->chunks[c->next_chunk].h.first_ts;
			if (best == SIZE_MAX || t < bt) {
				best = i;
				bt = t;
			}
		}
		if (best == SIZE_MAX) {
			pthread_cond_wait(&p->work, &p->mu);
			continue;
		}
		struct slot *s = &p->slot[best];
		const struct chunkref *ref =
		    &r->cursors[best].chunks[r->cursors[best].next_chunk];
		s->state = SLOT_BUSY;
		s->k = r->cursors[best].next_chunk;
		pthread_mutex_unlock(&p->mu);
		room(&s->ev, &s->cap, ref);
		size_t n = rd_decode_ref(r, p->mine, ref, s->ev);
		pthread_mutex_lock(&p->mu);
		s->n = n;
		s->state = SLOT_READY;
		pthread_cond_broadcast(&p->done);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

int
rd_pre_next(struct trace_reader *r, struct cursor *c)
{
	struct pre *p = r->pre;
	struct slot *s = &p->slot[c - r->cursors];

	pthread_mutex_lock(&p->mu);
	while (s->state == SLOT_BUSY && s->k == c->next_chunk)
		pthread_cond_wait(&p->done, &p->mu);
	if (c->next_chunk >= c->nchunks) {
		pthread_mutex_unlock(&p->mu);
		return -1;
	}
	size_t k = c->next_chunk++;
	if (s->state == SLOT_READY && s->k == k) {
		struct trace_event *v = c->dev;
		size_t cap = c->dev_cap;
		c->dev = s->ev;
		c->dev_cap = s->cap;
		c->ndev = s->n;
		s->ev = v;
		s->cap = cap;
		s->state = SLOT_EMPTY;
		pthread_cond_signal(&p->work);
		pthread_mutex_unlock(&p->mu);
	} else {
		/* not ahead: here, while the helper goes on to the next */
		pthread_cond_signal(&p->work);
		pthread_mutex_unlock(&p->mu);
		room(&c->dev, &c->dev_cap, &c->chunks[k]);
		c->ndev = rd_decode_ref(r, p->theirs, &c->chunks[k], c->dev);
	}
	c->idev = 0;
	rd_took_chunk(r);
	return 0;
}

/* Free what decoding ahead held (its thread is gone). */
static void
pre_free(struct pre *p, size_t ncursors)
{
	for (size_t i = 0; i < ncursors; i++)
		arr_free(p->slot[i].ev, p->slot[i].cap);
	free(p->slot);
	pthread_cond_destroy(&p->work);
	pthread_cond_destroy(&p->done);
	pthread_mutex_destroy(&p->mu);
	trace_chunk_buf_free(p->mine);
	trace_chunk_buf_free(p->theirs);
	free(p);
}

int
trace_reader_decode_ahead(struct trace_reader *r)
{
	if (r->multi != NULL)
		return rm_decode_ahead(r);
	struct pre *p;

	if (r->pre != NULL)
		return 0;
	p = xcalloc(1, sizeof(*p));
	p->slot = xcalloc(r->ncursors ? r->ncursors : 1, sizeof(*p->slot));
	p->mine = trace_chunk_buf_new();
	p->theirs = trace_chunk_buf_new();
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->done, NULL);
	r->pre = p;
	if (pthread_create(&p->th, NULL, pre_main, r) != 0) {
		r->pre = NULL;
		pre_free(p, r->ncursors);
		return -1;
	}
	return 0;
}

void
rd_pre_stop(struct trace_reader *r)
{
	struct pre *p = r->pre;

	if (p == NULL)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = 1;
	pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->th, NULL);
	r->pre = NULL;
	pre_free(p, r->ncursors);
	for (size_t i = 0; i < r->ncursors; i++) {
		struct cursor *c = &r->cursors[i];
		arr_free(c->dev, c->dev_cap);
		c->dev = NULL;
		c->ndev = c->idev = c->dev_cap = 0;
	}
}
