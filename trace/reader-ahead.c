/*
 * reader-ahead.c: the thread records of a whole trace, read ahead.
 *
 * The recorder writes a thread's record (TT_THREAD, on the metadata
 * stream) when it learns of the thread, often after the thread's first
 * events, so a reader going forward meets events of threads it cannot
 * name yet. r->ahead holds the first record of every thread found in the
 * metadata chunks, sorted by tid; readers that print names fall back on
 * it (trace_reader_thread() stays "as read so far").
 */
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "common/array.h"
#include "common/common.h"
#include "reader-local.h"

/* A record and its rank in the metadata stream. */
struct rec {
	struct trace_thread t;
	size_t seq;
};

static int
by_tid_seq(const void *x, const void *y)
{
	const struct rec *a = x, *b = y;

	if (a->t.tid != b->t.tid)
		return a->t.tid < b->t.tid ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Calls fn on every thread record of the metadata stream, in stream
   order (its chunks come in time order). Returns as
   trace_reader_read_ahead_threads(). */
static int
each_thread_record(struct trace_reader *r,
    void (*fn)(void *arg, const struct trace_thread *t), void *arg)
{
	struct trace_chunk_buf *b = trace_chunk_buf_new();
	struct trace_event *evs = NULL;
	size_t cap = 0, decoded = 0, meta = 0;

	for (size_t i = 0; i < trace_reader_nchunks(r); i++) {
		const struct trace_chunk_info *ci = trace_reader_chunk(r, i);
		if (ci->cpu != TRACE_CPU_META || ci->count == 0)
			continue;
		meta++;
		if (ci->count > cap) {
			cap = ci->count;
			evs = xreallocarray(evs, cap, sizeof(*evs));
		}
		size_t k = trace_reader_decode_chunk(r, i, b, evs);
		decoded += k > 0;
		for (size_t j = 0; j < k; j++) {
			struct trace_thread t;
			if (evs[j].type != TT_THREAD)
				continue;
			rd_thread_of(&evs[j], &t);
			fn(arg, &t);
		}
	}
	free(evs);
	trace_chunk_buf_free(b);
	return meta > 0 && decoded == 0 ? TRACE_ECORRUPT : 0;
}

/* Records met so far, for trace_reader_read_ahead_threads(). */
struct recs {
	struct rec *v;
	size_t n, cap;
};

static void
add_rec(void *arg, const struct trace_thread *t)
{
	struct recs *rs = arg;

	DGROW(rs->v, rs->cap, rs->n + 1, 256);
	rs->v[rs->n].seq = rs->n;
	rs->v[rs->n++].t = *t;
}

int
trace_reader_read_ahead_threads(struct trace_reader *r)
{
	if (r->multi != NULL)
		return rm_read_ahead_threads(r);
	struct recs rs = { NULL, 0, 0 };

	free(r->ahead);
	r->ahead = NULL;
	r->nahead = 0;
	int err = each_thread_record(r, add_rec, &rs);
	/* by tid, each tid's first record kept: the first met is its
	   earliest */
	if (rs.n > 1)
		qsort(rs.v, rs.n, sizeof(*rs.v), by_tid_seq);
	struct trace_thread *out = xreallocarray(NULL, rs.n ? rs.n : 1,
	    sizeof(*out));
	size_t m = 0;
	for (size_t i = 0; i < rs.n; i++)
		if (m == 0 || out[m - 1].tid != rs.v[i].t.tid)
			out[m++] = rs.v[i].t;
	free(rs.v);
	r->ahead = out;
	r->nahead = m;
	return err;
}

static void
update(void *arg, const struct trace_thread *t)
{
	rd_thread_update(arg, t);
}

int
trace_reader_read_threads(struct trace_reader *r)
{
	if (r->multi != NULL)
		return rm_read_threads(r);
	return each_thread_record(r, update, r);
}

const struct trace_thread *
trace_reader_thread_ahead(const struct trace_reader *r, uint32_t tid)
{
	return rd_thread_find(r->ahead, r->nahead, tid);
}
