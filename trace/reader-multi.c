/*
 * reader-multi.c: several hosts' traces read as one (trace_reader_merge()).
 *
 * A merged reader owns one plain reader per host (struct host) and shows
 * their events as one trace on the first host's clock. Each host's events
 * pass through its map (struct xf) on the way out: times moved onto the
 * first clock, threads and processes given the host's tid range
 * (trace_tid_host()), CPUs numbered after the hosts before it, and the
 * keys that name kernel objects (sockets, timers, work items, inodes)
 * set apart by the host's number in their high bits, so that no two
 * hosts' objects meet in one key. Host 0 is left as it is.
 *
 * The time-ordered read merges the hosts' streams: each host has a
 * batch of mapped events read ahead, and the read takes the earliest
 * head (by time, then CPU). The bulk view lists every host's chunks,
 * host after host; a chunk decodes through its host's reader and map.
 * Everything else the merged reader answers from its own tables (the
 * thread table, the info, the chunk list, damage), filled from the
 * hosts' as they go.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "reader-local.h"

#define BATCH 1024

/* A host's map onto the merged trace. */
struct xf {
	unsigned host;
	struct trace_clockmap clock;
	uint32_t cpu_base;
	uint64_t key_xor;		/* into keys of kernel objects */
};

struct host {
	struct multi *m;
	struct trace_reader *r;
	const char *name;		/* interned in the merged reader */
	struct xf x;
	struct trace_event *buf;	/* the batch, mapped */
	size_t n, pos;
	int eof;
	uint64_t done, total;		/* progress of its reads */
	size_t first_chunk;		/* its chunks' place in the bulk view */
	size_t first_seg;
};

struct multi {
	struct trace_reader *self;
	struct host *h;
	size_t nh;
	struct trace_segment_info *segs;
	size_t nsegs;
	struct trace_msg_pair *pairs;
	size_t npairs;
	uint32_t *by_send;		/* pair indices by send time */
};

/* --- the maps ------------------------------------------------------- */

uint64_t
trace_clockmap_apply(const struct trace_clockmap *m, uint64_t t)
{
	if (m->drift == 0.0) {
		int64_t o = m->offset;
		if (o >= 0)
			return t >= (uint64_t)o ? t - (uint64_t)o : 0;
		uint64_t a = (uint64_t)-o;
		return t <= UINT64_MAX - a ? t + a : UINT64_MAX;
	}
	/* t = a + offset + drift (a - ref): a = ref + (t - ref - offset) /
	   (1 + drift) */
	double d = ((double)t - (double)m->ref - (double)m->offset) /
	    (1.0 + m->drift);
	double a = (double)m->ref + d;
	if (!(a > 0.0))
		return 0;
	if (a >= 18446744073709549568.0)
		return UINT64_MAX;
	return (uint64_t)llround(a);
}

/* The inverse: a time of the merged trace on the host's own clock. */
static uint64_t
unmap(const struct trace_clockmap *m, uint64_t a)
{
	if (m->drift == 0.0) {
		int64_t o = m->offset;
		if (o >= 0)
			return a <= UINT64_MAX - (uint64_t)o ? a + (uint64_t)o :
			    UINT64_MAX;
		return a >= (uint64_t)-o ? a - (uint64_t)-o : 0;
	}
	double t = (double)a + (double)m->offset +
	    m->drift * ((double)a - (double)m->ref);
	if (!(t > 0.0))
		return 0;
	if (t >= 18446744073709549568.0)
		return UINT64_MAX;
	return (uint64_t)llround(t);
}

uint32_t
trace_tid_on_host(uint32_t tid, unsigned host)
{
	if (tid == 0 || host == 0 || tid >= (1u << TRACE_TID_HOST_SHIFT))
		return tid;
	return tid | (uint32_t)host << TRACE_TID_HOST_SHIFT;
}

unsigned
trace_tid_host(uint32_t tid)
{
	unsigned h = tid >> TRACE_TID_HOST_SHIFT;

	return h < TRACE_MAX_HOSTS ? h : 0;
}

uint32_t
trace_tid_local(uint32_t tid)
{
	return trace_tid_host(tid) != 0 ?
	    tid & ((1u << TRACE_TID_HOST_SHIFT) - 1) : tid;
}

uint64_t
trace_key_on_host(uint64_t key, unsigned host)
{
	return key == 0 ? 0 : key ^ ((uint64_t)host << 48);
}

uint64_t
trace_kaddr_on_host(uint64_t addr, unsigned host)
{
	return addr ^ ((uint64_t)(host & (TRACE_MAX_HOSTS - 1)) << 40);
}

static uint64_t
xcpu(const struct xf *x, uint64_t cpu)
{
	return cpu < 65536 && cpu + x->cpu_base < TRACE_CPU_META ?
	    cpu + x->cpu_base : cpu;
}

/* Per type, the fields that hold a thread or process id (FK_T), one
   bit each. */
static uint8_t tid_fields[TT_NTYPES];
static pthread_once_t tid_fields_once = PTHREAD_ONCE_INIT;

static void
find_tid_fields(void)
{
	for (unsigned t = 1; t < TT_NTYPES; t++) {
		const char *k = trace_types[t].kinds;
		for (unsigned i = 0; k != NULL && k[i] && i < TRACE_NARGS; i++)
			if (k[i] == FK_T)
				tid_fields[t] |= (uint8_t)(1u << i);
	}
}

/* Event ev of host x as the merged trace shows it. */
static void
xf_event(const struct xf *x, struct trace_event *ev)
{
	const struct trace_clockmap *c = &x->clock;

	if (c->drift == 0.0 && c->offset >= 0 &&
	    ev->ts >= (uint64_t)c->offset)
		ev->ts -= (uint64_t)c->offset;	/* the usual case, inline */
	else
		ev->ts = trace_clockmap_apply(c, ev->ts);
	if (x->host == 0)
		return;
	ev->tid = trace_tid_on_host(ev->tid, x->host);
	if (ev->cpu != TRACE_CPU_META)
		ev->cpu = (uint16_t)xcpu(x, ev->cpu);
	if (ev->type < TT_NTYPES && tid_fields[ev->type] != 0) {
		unsigned m = tid_fields[ev->type];
		for (unsigned i = 0; m != 0; i++, m >>= 1)
			if (m & 1)
				ev->arg[i] = trace_tid_on_host(
				    (uint32_t)ev->arg[i], x->host);
	}
	switch (ev->type) {
	case TT_WAKING: case TT_WAKEUP_NEW:
		ev->arg[1] = xcpu(x, ev->arg[1]);
		break;
	case TT_MIGRATE:
		ev->arg[1] = xcpu(x, ev->arg[1]);
		ev->arg[2] = xcpu(x, ev->arg[2]);
		break;
	case TT_WQ_QUEUE:
		ev->arg[0] ^= x->key_xor;
		ev->arg[2] = xcpu(x, ev->arg[2]);
		ev->arg[3] = xcpu(x, ev->arg[3]);
		break;
	case TT_WQ_START: case TT_WQ_END:
	case TT_TIMER_START: case TT_TIMER_CANCEL: case TT_TIMER_EXPIRE:
	case TT_TIMER_EXPIRE_EXIT:
	case TT_SOCK_SEND: case TT_SOCK_RECV: case TT_SK_DATA_READY:
	case TT_SOCK_ADDR:
		ev->arg[0] = trace_key_on_host(ev->arg[0], x->host);
		break;
	case TT_FD:
		ev->arg[3] = trace_key_on_host(ev->arg[3], x->host);
		ev->arg[4] = trace_key_on_host(ev->arg[4], x->host);
		break;
	case TT_FILELOCK:
		ev->arg[1] = trace_key_on_host(ev->arg[1], x->host);
		ev->arg[5] = trace_key_on_host(ev->arg[5], x->host);
		break;
	case TT_USER:
		ev->arg[1] = trace_key_on_host(ev->arg[1], x->host);
		break;
	case TT_KSYM:
		ev->arg[0] = trace_kaddr_on_host(ev->arg[0], x->host);
		break;
	case TT_THREAD:
		if (ev->arg[3] != 0)
			ev->arg[3] = trace_clockmap_apply(&x->clock,
			    ev->arg[3]);
		break;
	default:
		break;
	}
}

/* A span's two ends on the merged clock. */
static void
map_span(const struct xf *x, uint64_t *first, uint64_t *last)
{
	*first = trace_clockmap_apply(&x->clock, *first);
	*last = trace_clockmap_apply(&x->clock, *last);
}

static void
xf_thread(const struct xf *x, struct trace_thread *t)
{
	t->tid = trace_tid_on_host(t->tid, x->host);
	t->pid = trace_tid_on_host(t->pid, x->host);
	t->ppid = trace_tid_on_host(t->ppid, x->host);
	if (t->start_ts != 0)
		t->start_ts = trace_clockmap_apply(&x->clock, t->start_ts);
}

/* --- callbacks from the hosts' readers -------------------------------- */

static void
on_host_damage(const struct trace_damage *d, void *arg)
{
	struct multi *m = arg;

	rd_report(m->self, d->path, d->offset, d->reason);
}

static void
on_host_progress(void *arg, uint64_t done, uint64_t total)
{
	struct host *h = arg;
	struct multi *m = h->m;
	uint64_t d = 0, t = 0;

	h->done = done;
	h->total = total;
	for (size_t k = 0; k < m->nh; k++) {
		d += m->h[k].done;
		t += m->h[k].total ? m->h[k].total :
		    trace_reader_nchunks(m->h[k].r);
	}
	if (m->self->progress_fn != NULL)
		m->self->progress_fn(m->self->progress_arg, d, t);
}

/* --- opening ---------------------------------------------------------- */

static void
fill(struct multi *m)
{
	struct trace_reader *r = m->self;
	struct trace_info *in = &r->info;
	const struct trace_info *i0 = trace_reader_info(m->h[0].r);
	uint32_t cpus = 0;
	size_t nc = 0;

	*in = *i0;
	in->first_ts = in->last_ts = 0;
	in->nsegments = 0;
	in->nchunks = in->nevents = in->disk_bytes = 0;
	m->nsegs = 0;
	for (size_t k = 0; k < m->nh; k++) {
		struct host *h = &m->h[k];
		const struct trace_info *hi = trace_reader_info(h->r);
		uint32_t span = hi->ncpus;

		for (size_t i = 0; i < trace_reader_nchunks(h->r); i++) {
			const struct trace_chunk_info *c =
			    trace_reader_chunk(h->r, i);
			if (c->cpu != TRACE_CPU_META && c->cpu + 1u > span)
				span = c->cpu + 1u;
		}
		h->x.cpu_base = cpus;
		cpus += span;
		h->first_chunk = nc;
		nc += trace_reader_nchunks(h->r);
		h->first_seg = m->nsegs;
		m->nsegs += trace_reader_nsegments(h->r);
		in->nsegments += hi->nsegments;
		in->nchunks += hi->nchunks;
		in->nevents += hi->nevents;
		in->disk_bytes += hi->disk_bytes;
		if (hi->first_ts != 0) {
			uint64_t f = hi->first_ts, l = hi->last_ts;
			map_span(&h->x, &f, &l);
			if (in->first_ts == 0 || f < in->first_ts)
				in->first_ts = f;
			if (l > in->last_ts)
				in->last_ts = l;
		}
	}
	in->ncpus = cpus;
	r->cinfo = xcalloc(nc + 1, sizeof(*r->cinfo));
	r->ncinfo = nc;
	m->segs = xcalloc(m->nsegs + 1, sizeof(*m->segs));
	for (size_t k = 0; k < m->nh; k++) {
		struct host *h = &m->h[k];

		for (size_t i = 0; i < trace_reader_nchunks(h->r); i++) {
			struct trace_chunk_info c = *trace_reader_chunk(h->r, i);
			if (c.cpu != TRACE_CPU_META)
				c.cpu = (uint16_t)xcpu(&h->x, c.cpu);
			map_span(&h->x, &c.first_ts, &c.last_ts);
			r->cinfo[h->first_chunk + i] = c;
		}
		for (size_t i = 0; i < trace_reader_nsegments(h->r); i++) {
			struct trace_segment_info s =
			    *trace_reader_segment(h->r, i);
			if (s.nchunks)
				map_span(&h->x, &s.first_ts, &s.last_ts);
			m->segs[h->first_seg + i] = s;
		}
		for (size_t i = 0; i < trace_reader_nthreads(h->r); i++) {
			struct trace_thread t = *trace_reader_thread_at(h->r, i);
			xf_thread(&h->x, &t);
			rd_thread_update(r, &t);
		}
	}
}

int
trace_reader_merge(struct trace_reader **rp, struct trace_reader **hosts,
    const struct trace_clockmap *maps, const char *const *names, size_t n,
    char **cause)
{
	*rp = NULL;
	if (n == 0 || n > TRACE_MAX_HOSTS) {
		if (cause)
			*cause = xasprintf("%zu traces: between 1 and %d can be "
			    "merged", n, TRACE_MAX_HOSTS);
		return EINVAL;
	}
	struct trace_reader *r = xcalloc(1, sizeof(*r));
	struct multi *m = xcalloc(1, sizeof(*m));

	pthread_once(&tid_fields_once, find_tid_fields);
	pthread_mutex_init(&r->lock, NULL);
	pthread_mutex_init(&r->defs_lock, NULL);
	r->multi = m;
	m->self = r;
	m->nh = n;
	m->h = xcalloc(n, sizeof(*m->h));
	for (size_t k = 0; k < n; k++) {
		struct host *h = &m->h[k];

		h->m = m;
		h->r = hosts[k];
		h->x.host = (unsigned)k;
		if (maps != NULL)
			h->x.clock = maps[k];
		h->x.key_xor = (uint64_t)k << 48;
		const char *nm = names != NULL && names[k] != NULL ? names[k] :
		    trace_reader_info(h->r)->hostname;
		h->name = trace_reader_intern(r, nm != NULL ? nm : "");
		h->buf = xcalloc(BATCH, sizeof(*h->buf));
	}
	fill(m);
	for (size_t k = 0; k < n; k++) {
		trace_reader_on_damage(m->h[k].r, on_host_damage, m);
		trace_reader_on_progress(m->h[k].r, on_host_progress,
		    &m->h[k]);
	}
	r->heap = NULL;
	trace_reader_seek(r, 0);
	*rp = r;
	return 0;
}

/* --- reading in time order -------------------------------------------- */

/* Refill host h's batch when it is used up: 0 when it has no event. */
static int
head(struct host *h)
{
	if (h->pos < h->n)
		return 1;
	if (h->eof)
		return 0;
	h->n = trace_reader_read(h->r, h->buf, BATCH);
	h->pos = 0;
	if (h->n == 0) {
		h->eof = 1;
		return 0;
	}
	for (size_t i = 0; i < h->n; i++)
		xf_event(&h->x, &h->buf[i]);
	return 1;
}

/* Whether a comes before b in the merge: time, then CPU (the metadata
   stream's first), as the reader orders its streams. */
static inline int
before(const struct trace_event *a, const struct trace_event *b)
{
	return a->ts < b->ts || (a->ts == b->ts &&
	    (uint16_t)(a->cpu + 1) < (uint16_t)(b->cpu + 1));
}

static void
took(struct trace_reader *r, const struct trace_event *ev)
{
	if (ev->type == TT_THREAD) {
		struct trace_thread t;

		rd_thread_of(ev, &t);
		rd_thread_update(r, &t);
	}
}

int
rm_seek(struct trace_reader *r, uint64_t ts)
{
	struct multi *m = r->multi;
	int err = 0;

	for (size_t k = 0; k < m->nh; k++) {
		struct host *h = &m->h[k];
		int e = trace_reader_seek(h->r, ts == 0 ? 0 :
		    unmap(&h->x.clock, ts));
		if (e && !err)
			err = e;
		h->n = h->pos = 0;
		h->eof = 0;
		/* a map rounds: drop what maps before ts */
		while (ts != 0 && head(h) && h->buf[h->pos].ts < ts)
			h->pos++;
	}
	return err;
}

size_t
rm_read(struct trace_reader *r, struct trace_event *evs, size_t n)
{
	struct multi *m = r->multi;
	size_t i = 0;

	while (i < n) {
		/* the earliest host, and the time of the next event of
		   every other one */
		struct host *h = NULL;
		uint64_t lim = UINT64_MAX;
		for (size_t k = 0; k < m->nh; k++) {
			struct host *x = &m->h[k];
			if (!head(x))
				continue;
			if (h == NULL || before(&x->buf[x->pos], &h->buf[h->pos])) {
				if (h != NULL && h->buf[h->pos].ts < lim)
					lim = h->buf[h->pos].ts;
				h = x;
			} else if (x->buf[x->pos].ts < lim) {
				lim = x->buf[x->pos].ts;
			}
		}
		if (h == NULL)
			break;
		/* a run of h's events while they come before every other
		   host's next */
		do {
			evs[i] = h->buf[h->pos++];
			took(r, &evs[i]);
			i++;
		} while (i < n && h->pos < h->n && h->buf[h->pos].ts < lim);
	}
	return i;
}

int
rm_next(struct trace_reader *r, struct trace_event *ev)
{
	return rm_read(r, ev, 1) == 1;
}

void
rm_stats(const struct trace_reader *r, struct trace_reader_stats *st)
{
	const struct multi *m = r->multi;

	memset(st, 0, sizeof(*st));
	for (size_t k = 0; k < m->nh; k++) {
		struct trace_reader_stats s;
		trace_reader_stats(m->h[k].r, &s);
		st->events += s.events;
		st->unknown += s.unknown;
		st->chunks_read += s.chunks_read;
		st->damaged += s.damaged;
		st->lost += s.lost;
	}
}

/* --- the bulk view ---------------------------------------------------- */

size_t
rm_decode_chunk(struct trace_reader *r, size_t i, struct trace_chunk_buf *b,
    struct trace_event *evs)
{
	return rm_decode_chunk_only(r, i, b, evs, NULL);
}

size_t
rm_decode_chunk_only(struct trace_reader *r, size_t i,
    struct trace_chunk_buf *b, struct trace_event *evs, const uint8_t *want)
{
	struct multi *m = r->multi;

	for (size_t k = m->nh; k-- > 0;) {
		struct host *h = &m->h[k];
		if (i < h->first_chunk)
			continue;
		size_t n = trace_reader_decode_chunk_only(h->r,
		    i - h->first_chunk, b, evs, want);
		for (size_t j = 0; j < n; j++)
			xf_event(&h->x, &evs[j]);
		return n;
	}
	return 0;
}

/* --- threads ahead, decoding ahead ------------------------------------ */

int
rm_read_ahead_threads(struct trace_reader *r)
{
	struct multi *m = r->multi;
	DARR(struct trace_thread) v = { 0 };
	int err = 0;

	for (size_t k = 0; k < m->nh; k++) {
		struct host *h = &m->h[k];
		int e = trace_reader_read_ahead_threads(h->r);
		if (e && !err)
			err = e;
		/* a host's records, in tid order; host k's tids all lie
		   above host k-1's, so the whole stays sorted */
		for (size_t i = 0; i < trace_reader_nthreads(h->r); i++) {
			const struct trace_thread *t = trace_reader_thread_ahead(
			    h->r, trace_reader_thread_at(h->r, i)->tid);
			if (t == NULL)
				continue;
			struct trace_thread c = *t;
			xf_thread(&h->x, &c);
			DPUSH(v, c);
		}
	}
	free(r->ahead);
	r->ahead = v.v;
	r->nahead = v.n;
	return err;
}

int
rm_read_threads(struct trace_reader *r)
{
	struct multi *m = r->multi;
	int err = 0;

	for (size_t k = 0; k < m->nh; k++) {
		struct host *h = &m->h[k];
		int e = trace_reader_read_threads(h->r);
		if (e && !err)
			err = e;
		for (size_t i = 0; i < trace_reader_nthreads(h->r); i++) {
			struct trace_thread t = *trace_reader_thread_at(h->r, i);
			xf_thread(&h->x, &t);
			rd_thread_update(r, &t);
		}
	}
	return err;
}

int
rm_decode_ahead(struct trace_reader *r)
{
	struct multi *m = r->multi;
	int rc = 0;

	for (size_t k = 0; k < m->nh; k++)
		if (trace_reader_decode_ahead(m->h[k].r) != 0)
			rc = -1;
	return rc;
}

/* --- the rest --------------------------------------------------------- */

size_t
rm_nsegments(const struct trace_reader *r)
{
	return r->multi->nsegs;
}

const struct trace_segment_info *
rm_segment(const struct trace_reader *r, size_t i)
{
	return i < r->multi->nsegs ? &r->multi->segs[i] : NULL;
}

void
rm_close(struct trace_reader *r)
{
	struct multi *m = r->multi;

	for (size_t k = 0; k < m->nh; k++) {
		trace_reader_close(m->h[k].r);
		free(m->h[k].buf);
	}
	free(m->h);
	free(m->segs);
	free(m->pairs);
	free(m->by_send);
	free(m);
	r->multi = NULL;
}

size_t
trace_reader_nhosts(const struct trace_reader *r)
{
	return r->multi != NULL ? r->multi->nh : 1;
}

const char *
trace_reader_host_name(const struct trace_reader *r, size_t k)
{
	if (r->multi == NULL)
		return k == 0 ? r->info.hostname : NULL;
	return k < r->multi->nh ? r->multi->h[k].name : NULL;
}

size_t
trace_reader_cpu_host(const struct trace_reader *r, unsigned cpu)
{
	if (r->multi == NULL || cpu == TRACE_CPU_META)
		return 0;
	for (size_t k = r->multi->nh; k-- > 0;)
		if (cpu >= r->multi->h[k].x.cpu_base)
			return k;
	return 0;
}

/* idx (0..n-1) sorted by the send times of their pairs, then index. */
static void
sort_by_send(const struct trace_msg_pair *p, uint32_t *idx, size_t n)
{
	uint64_t *k = xreallocarray(NULL, n ? n : 1, sizeof(*k));

	for (size_t i = 0; i < n; i++) {
		k[i] = p[i].send_ts;
		idx[i] = (uint32_t)i;
	}
	radix_sort64(k, idx, n, 64);
	free(k);
}

void
trace_reader_set_pairs(struct trace_reader *r,
    const struct trace_msg_pair *p, size_t n)
{
	struct multi *m = r->multi;

	if (m == NULL)
		return;
	free(m->pairs);
	free(m->by_send);
	m->pairs = xreallocarray(NULL, n ? n : 1, sizeof(*p));
	memcpy(m->pairs, p, n * sizeof(*p));
	m->npairs = n;
	m->by_send = xreallocarray(NULL, n ? n : 1, sizeof(*m->by_send));
	sort_by_send(m->pairs, m->by_send, n);
}

const uint32_t *
trace_reader_pairs_by_send(const struct trace_reader *r)
{
	return r->multi != NULL ? r->multi->by_send : NULL;
}

const struct trace_msg_pair *
trace_reader_pairs(const struct trace_reader *r, size_t *n)
{
	if (r->multi == NULL) {
		*n = 0;
		return NULL;
	}
	*n = r->multi->npairs;
	return r->multi->pairs;
}
