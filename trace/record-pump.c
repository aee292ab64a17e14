/*
 * record-pump.c: the reading path and the decoding path of the recorder,
 * in two threads.
 *
 * The caller's thread (the recorder's loop, at real-time priority) only
 * copies kernel pages into a pool of page buffers and queues them; a
 * worker thread, one real-time level below, decodes, encodes and
 * compresses them, so compressing a chunk never delays the reading of
 * the kernel buffers, and the two run on two CPUs at once.
 * The queue is a ring of entries under one mutex: a page (buffer and
 * CPU), or the end of a poll (the worker then forgets the threads and
 * processes that exited a poll ago, and flushes the writer when asked).
 * When the pool is empty the reader leaves the rest in the kernel buffer
 * until the next poll. Everything the decoder owns (the thread table,
 * the fd set, the writer) is touched by the worker only, from the start
 * of the pump to its stop; the caller reads the statistics from a
 * snapshot the worker updates under the mutex after each entry.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/common.h"
#include "record-local.h"

#define POOL_PAGES_PER_CPU 512
#define POOL_PAGES_MAX 4096	/* 16 MiB of 4 KiB pages, however many CPUs */

enum { Q_PAGE, Q_POLL };

struct qent {
	int kind;
	unsigned cpu;
	int flush;
	uint8_t *page;
};

struct pump {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t work;	/* the queue has an entry, or stop */
	pthread_cond_t idle;	/* the worker went idle */
	uint8_t **free;		/* page buffers not queued */
	size_t nfree, npages;
	struct qent *q;		/* ring */
	size_t qhead, qn, qcap;
	int running;		/* the worker was started */
	int sched_copied;	/* the worker has the reader's priority */
	int stop;		/* the worker ends once the queue is empty */
	int busy;		/* the worker holds an entry */
	struct rec_snap snap;
};

/* Copy the decoder's counters into the snapshot (mutex held). */
static void
snap(struct recorder *r)
{
	struct rec_snap *s = &r->pump->snap;
	struct trace_writer_stats ws;

	s->events = r->events;
	s->stored = r->stored;
	s->lost = r->lost;
	s->fds = r->fd_written;
	s->err = r->err;
	s->hang = r->hang;
	s->last_ts = 0;
	for (unsigned c = 0; c < r->ncpus; c++)
		if (r->cpus[c].last_ts > s->last_ts)
			s->last_ts = r->cpus[c].last_ts;
	trace_writer_stats(r->w, &ws);
	s->disk_bytes = ws.disk_bytes;
}

static void
handle(struct recorder *r, const struct qent *e)
{
	if (e->kind == Q_PAGE) {
		if (r->err == 0 && r->bpf)
			rec_bpf_decode_page(r, e->page, r->subbuf);
		else if (r->err == 0)
			rec_decode_page(r, e->cpu, e->page, r->subbuf);
		return;
	}
	rec_proc_sweep(r);
	rec_thread_reap(r);
	if (e->flush && r->err == 0) {
		int err = trace_writer_flush(r->w);

		if (err)
			r->err = err;
	}
}

#define BATCH 64		/* entries moved under one lock */

static void *
worker(void *arg)
{
	struct recorder *r = arg;
	struct pump *p = r->pump;
	struct qent b[BATCH];

	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (p->qn == 0 && !p->stop) {
			pthread_cond_broadcast(&p->idle);
			pthread_cond_wait(&p->work, &p->mu);
		}
		if (p->qn == 0)
			break;		/* stopped and drained */
		size_t n = 0;
		while (n < BATCH && p->qn > 0) {
			b[n++] = p->q[p->qhead];
			p->qhead = (p->qhead + 1) % p->qcap;
			p->qn--;
		}
		p->busy = 1;
		pthread_mutex_unlock(&p->mu);
		for (size_t i = 0; i < n; i++)
			handle(r, &b[i]);
		pthread_mutex_lock(&p->mu);
		for (size_t i = 0; i < n; i++)
			if (b[i].kind == Q_PAGE)
				p->free[p->nfree++] = b[i].page;
		p->busy = 0;
		snap(r);
	}
	pthread_cond_broadcast(&p->idle);
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

int
rec_pump_start(struct recorder *r, char **cause)
{
	struct pump *p = xcalloc(1, sizeof(*p));
	int err;

	p->npages = (size_t)r->ncpus * POOL_PAGES_PER_CPU;
	if (p->npages > POOL_PAGES_MAX)
		p->npages = POOL_PAGES_MAX;
	p->free = xreallocarray(NULL, p->npages, sizeof(*p->free));
	for (size_t i = 0; i < p->npages; i++)
		p->free[p->nfree++] = xmalloc(r->subbuf);
	p->qcap = 2 * p->npages + 64;
	p->q = xreallocarray(NULL, p->qcap, sizeof(*p->q));
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->idle, NULL);
	r->pump = p;
	snap(r);
	if ((err = pthread_create(&p->th, NULL, worker, r)) != 0) {
		*cause = xasprintf("cannot start the decoding thread: %s",
		    strerror(err));
		rec_pump_free(r);
		return err;
	}
	p->running = 1;
	return 0;
}

/* Queue e (mutex held); 0, or -1 when the ring is full. */
static int
push(struct pump *p, const struct qent *e)
{
	if (p->qn == p->qcap)
		return -1;
	p->q[(p->qhead + p->qn) % p->qcap] = *e;
	p->qn++;
	pthread_cond_signal(&p->work);
	return 0;
}

int
rec_pump_read(struct recorder *r, int flush)
{
	struct pump *p = r->pump;
	/* At most the whole kernel buffer of a CPU per call. */
	unsigned maxpages = 4096;
	int err;

	if (!p->sched_copied) {
		/* real time too, as the reader (set by the caller after the
		   start): a worker starved by hundreds of runnable threads
		   would let the kernel overwrite its buffers; one level
		   below, so the reader preempts it on a shared CPU */
		struct sched_param sp;
		int pol;

		p->sched_copied = 1;
		if (pthread_getschedparam(pthread_self(), &pol, &sp) == 0) {
			if (sp.sched_priority > 1)
				sp.sched_priority--;
			(void)pthread_setschedparam(p->th, pol, &sp);
		}
	}
	pthread_mutex_lock(&p->mu);
	err = p->snap.err;
	pthread_mutex_unlock(&p->mu);
	/* After a writer error (full disk) nothing more can be stored. */
	if (r->bpf && err == 0)
		rec_bpf_read(r);
	for (unsigned c = 0; c < r->ncpus && err == 0 && !r->bpf; c++) {
		unsigned k = 0;
		int more = 1;

		while (more && k < maxpages) {
			struct qent b[BATCH];
			size_t nb = 0, nread = 0;

			/* free buffers for a batch, read into, queued at once */
			pthread_mutex_lock(&p->mu);
			while (nb < BATCH && p->nfree > 0 && k + nb < maxpages) {
				b[nb].kind = Q_PAGE;
				b[nb].cpu = c;
				b[nb].flush = 0;
				b[nb++].page = p->free[--p->nfree];
			}
			pthread_mutex_unlock(&p->mu);
			if (nb == 0)
				break;	/* the worker is behind: next poll */
			while (nread < nb) {
				ssize_t n = read(r->cpus[c].fd, b[nread].page,
				    r->subbuf);

				if (n <= 0) {
					more = 0;	/* EAGAIN: nothing more */
					break;
				}
				r->pages++;
				r->bytes += (uint64_t)n;
				if ((size_t)n < r->subbuf)
					memset(b[nread].page + n, 0,
					    r->subbuf - (size_t)n);
				nread++;
			}
			k += (unsigned)nread;
			pthread_mutex_lock(&p->mu);
			for (size_t i = 0; i < nb; i++)
				if (i >= nread || push(p, &b[i]) != 0)
					p->free[p->nfree++] = b[i].page;
			pthread_mutex_unlock(&p->mu);
		}
	}
	{
		struct qent e = { Q_POLL, 0, flush, NULL };

		pthread_mutex_lock(&p->mu);
		/* room for every page of the pool stays: a page read is
		   never dropped; a poll's end is (the next one will do) */
		if (p->qcap - p->qn > p->npages)
			(void)push(p, &e);
		pthread_mutex_unlock(&p->mu);
	}
	return err;
}

uint8_t *
rec_pump_get(struct recorder *r)
{
	struct pump *p = r->pump;
	uint8_t *page = NULL;

	pthread_mutex_lock(&p->mu);
	if (p->nfree > 0)
		page = p->free[--p->nfree];
	pthread_mutex_unlock(&p->mu);
	return page;
}

void
rec_pump_put(struct recorder *r, uint8_t *page)
{
	struct pump *p = r->pump;

	pthread_mutex_lock(&p->mu);
	p->free[p->nfree++] = page;
	pthread_mutex_unlock(&p->mu);
}

void
rec_pump_queue(struct recorder *r, uint8_t *page)
{
	struct pump *p = r->pump;
	struct qent e = { Q_PAGE, 0, 0, page };

	r->pages++;
	pthread_mutex_lock(&p->mu);
	if (push(p, &e) != 0)
		p->free[p->nfree++] = page;	/* cannot happen: room for all */
	pthread_mutex_unlock(&p->mu);
}

void
rec_pump_drain(struct recorder *r)
{
	struct pump *p = r->pump;

	pthread_mutex_lock(&p->mu);
	while (p->qn > 0 || p->busy)
		pthread_cond_wait(&p->idle, &p->mu);
	pthread_mutex_unlock(&p->mu);
}

void
rec_pump_snapshot(const struct recorder *r, struct rec_snap *s)
{
	struct pump *p = r->pump;

	pthread_mutex_lock(&p->mu);
	*s = p->snap;
	pthread_mutex_unlock(&p->mu);
}

void
rec_pump_free(struct recorder *r)
{
	struct pump *p = r->pump;

	if (p == NULL)
		return;
	if (p->running) {
		pthread_mutex_lock(&p->mu);
		p->stop = 1;
		pthread_cond_signal(&p->work);
		pthread_mutex_unlock(&p->mu);
		pthread_join(p->th, NULL);
	}
	for (size_t i = 0; i < p->nfree; i++)
		free(p->free[i]);
	free(p->free);
	free(p->q);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->work);
	pthread_cond_destroy(&p->idle);
	free(p);
	r->pump = NULL;
}
