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

int
trace_reader_read_ahead_threads(struct trace_reader *r)
{
	struct trace_chunk_buf *b = trace_chunk_buf_new();
	struct trace_event *evs = NULL;
	size_t cap = 0, n = 0, acap = 0, decoded = 0, meta = 0;
	struct rec *v = NULL;

	free(r->ahead);
	r->ahead = NULL;
	r->nahead = 0;
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
		/* chunks of a stream come in time order: the first record
		   of a tid met is its earliest */
		for (size_t j = 0; j < k; j++) {
			if (evs[j].type != TT_THREAD)
				continue;
			DGROW(v, acap, n + 1, 256);
			v[n].seq = n;
			struct trace_thread *t = &v[n++].t;
			memset(t, 0, sizeof(*t));
			t->tid = (uint32_t)evs[j].arg[0];
			t->pid = (uint32_t)evs[j].arg[1];
			t->ppid = (uint32_t)evs[j].arg[2];
			t->start_ts = evs[j].arg[3];
			t->flags = (uint32_t)evs[j].arg[4];
			if (evs[j].blob != NULL) {
				size_t l = evs[j].blob_len < TRACE_COMM_LEN - 1 ?
				    evs[j].blob_len : TRACE_COMM_LEN - 1;
				memcpy(t->comm, evs[j].blob, l);
			}
		}
	}
	free(evs);
	trace_chunk_buf_free(b);
	/* by tid, each tid's first record kept */
	if (n > 1)
		qsort(v, n, sizeof(*v), by_tid_seq);
	struct trace_thread *out = xreallocarray(NULL, n ? n : 1,
	    sizeof(*out));
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (m == 0 || out[m - 1].tid != v[i].t.tid)
			out[m++] = v[i].t;
	free(v);
	r->ahead = out;
	r->nahead = m;
	return meta > 0 && decoded == 0 ? TRACE_ECORRUPT : 0;
}

const struct trace_thread *
trace_reader_thread_ahead(const struct trace_reader *r, uint32_t tid)
{
	return rd_thread_find(r->ahead, r->nahead, tid);
}
