/*
 * writer-stream.c: the writer's streams, events encoded until a chunk.
 *
 * Event encoding (argus-trace(5)): varint (type << 3 | has_tid << 2 |
 * ctx), varint time delta, varint tid when has_tid, the numeric fields by
 * kind, and the blob as an index into the chunk's intern table (index ==
 * table size: a literal follows and enters the table). Format 2 writes
 * each of these to its own column (col[]: headers, deltas, tids, blobs,
 * then one per field of each type), which compress better than the rows
 * of format 1; the columns are joined behind their directory when the
 * chunk is compressed. Format 1 (rows, zigzag deltas) is kept for tests
 * of older traces. A stack's frames are not its event's blob but its
 * segment's, once (writer-stacks.c): trace_writer_add() hands TT_STACK
 * there, and wr_put() encodes what it decides.
 */
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/common.h"
#include "writer-local.h"

void
wr_stream_reset(struct stream *s)
{
	s->raw.len = 0;
	/* a column far larger than this chunk needed gives its memory back,
	   so a stream holds about what its chunks need */
	for (size_t i = 0; i < NCOLS; i++) {
		if (s->col[i].cap > COL_KEEP && s->col[i].len < s->col[i].cap / 4)
			buf_free(&s->col[i]);
		s->col[i].len = 0;
	}
	s->pending = 0;
	s->count = 0;
	memset(s->prev, 0, sizeof(s->prev));
	memset(s->slots, 0, sizeof(s->slots));
	s->nintern = 0;
	s->keys.len = 0;
	s->first_tid = s->cur_tid;
}

void
wr_join_columns(struct stream *s)
{
	size_t n = 0;

	s->raw.len = 0;
	for (size_t i = 0; i < NCOLS; i++)
		n += s->col[i].len != 0;
	buf_varint(&s->raw, n);
	for (size_t i = 0; i < NCOLS; i++)
		if (s->col[i].len != 0) {
			buf_varint(&s->raw, i);
			buf_varint(&s->raw, s->col[i].len);
		}
	for (size_t i = 0; i < NCOLS; i++)
		buf_put(&s->raw, s->col[i].data, s->col[i].len);
}

struct stream *
wr_stream(struct trace_writer *w, unsigned cpu, size_t *idx)
{
	size_t i;

	if (cpu == TRACE_CPU_META) {
		i = w->nstreams - 1;
	} else {
		if (cpu + 1 >= w->nstreams) {
			/* Grow; the metadata stream moves to the new end. */
			size_t n = cpu + 2;
			struct stream *meta = w->streams[w->nstreams - 1];

			w->streams = xreallocarray(w->streams, n,
			    sizeof(*w->streams));
			for (size_t k = w->nstreams - 1; k < n; k++)
				w->streams[k] = NULL;
			w->streams[n - 1] = meta;
			w->nstreams = n;
		}
		i = cpu;
	}
	if (w->streams[i] == NULL)
		w->streams[i] = xcalloc(1, sizeof(struct stream));
	*idx = i;
	return w->streams[i];
}

/* Encode a blob: its intern index, and the literal the first time. */
static void
put_blob(struct stream *s, struct buf *out, int kind, const void *blob,
    size_t len)
{
	uint32_t h = trace_hash_bytes(blob, len) | 1;
	uint32_t mask = INTERN_SLOTS - 1;

	for (uint32_t i = h & mask, probe = 0; probe < INTERN_SLOTS;
	    i = (i + 1) & mask, probe++) {
		struct intern_slot *sl = &s->slots[i];

		if (sl->idx == 0) {
			if (s->nintern < INTERN_SLOTS / 2) {
				sl->hash = h;
				sl->idx = s->nintern + 1;
				sl->off = (uint32_t)s->keys.len;
				sl->len = (uint32_t)len;
				buf_put(&s->keys, blob, len);
			}
			break;
		}
		if (sl->hash == h && sl->len == len && (len == 0 ||
		    memcmp(s->keys.data + sl->off, blob, len) == 0)) {
			buf_varint(out, sl->idx - 1);
			return;
		}
	}
	/* A literal always enters the table, even when the hash is full. */
	buf_varint(out, s->nintern++);
	if (kind == BK_STR) {
		buf_varint(out, len);
		buf_put(out, blob, len);
	} else {
		const uint64_t *a = blob;
		size_t n = len / 8;
		uint64_t prev = 0;

		buf_varint(out, n);
		for (size_t i = 0; i < n; i++) {
			buf_varint(out, zigzag((int64_t)(a[i] - prev)));
			prev = a[i];
		}
	}
}

/* Append varint v to column b; returns its length. */
static size_t
col_varint(struct buf *b, uint64_t v)
{
	if (b->cap - b->len < 10)
		buf_reserve(b, 10);
	uint8_t *p = b->data + b->len, *e = put_varint(p, v);

	b->len += (size_t)(e - p);
	return (size_t)(e - p);
}

/* The code of field i of kind k: updates the delta state of FK_D. */
static uint64_t
field_code(struct stream *s, const struct trace_event *ev, char k, unsigned i)
{
	uint64_t v = ev->arg[i], prev;

	switch (k) {
	case FK_S:
		return zigzag((int64_t)v);
	case FK_D:
		prev = s->prev[ev->type][i];
		s->prev[ev->type][i] = v;
		return zigzag((int64_t)(v - prev));
	default:
		return v;
	}
}

int
trace_writer_add(struct trace_writer *w, const struct trace_event *ev)
{
	struct stream *s;
	size_t idx;

	if (ev->type == TT_NONE || ev->type >= TT_NTYPES)
		return TRACE_EARG;
	if (w->failed)
		return w->failed;
	if (ev->type == TT_STACKDEF)
		return 0;	/* the writer defines its segments' stacks */
	s = wr_stream(w, ev->cpu, &idx);
	if (s->used && ev->ts < s->prev_ts && ev->cpu != TRACE_CPU_META) {
		w->st.dropped++;
		return TRACE_EORDER;
	}
	if (ev->type == TT_STACK)
		return wr_add_stack(w, ev, idx);
	wr_put(w, s, ev);
	return wr_full(w, idx);
}

int
wr_full(struct trace_writer *w, size_t idx)
{
	struct stream *s = w->streams[idx];

	if (s->pending >= w->chunk_size || s->count >= CHUNK_MAX_EVENTS)
		return wr_flush_stream(w, idx);
	return 0;
}

void
wr_put(struct trace_writer *w, struct stream *s, const struct trace_event *ev)
{
	const struct type_desc *d = &trace_types[ev->type];
	int has_tid;

	if (!s->used) {
		s->used = 1;
		s->cur_tid = ev->tid;
		s->first_tid = ev->tid;
		s->prev_ts = ev->ts;
	}
	uint64_t ts = ev->ts < s->prev_ts ? s->prev_ts : ev->ts;

	if (s->count == 0) {
		s->first_ts = ts;
		s->prev_ts = ts;
		s->first_tid = s->cur_tid;
	}
	has_tid = ev->tid != s->cur_tid;
	uint64_t hd = ((uint64_t)ev->type << 3) | ((uint64_t)has_tid << 2) |
	    (ev->flags & TRACE_CTX_MASK);
	struct buf *blob_out;

	if (w->o.format == 1) {
		size_t before = s->raw.len;

		buf_reserve(&s->raw, 96);
		uint8_t *p = s->raw.data + s->raw.len;

		p = put_varint(p, hd);
		p = put_varint(p, zigzag((int64_t)(ts - s->prev_ts)));
		if (has_tid)
			p = put_varint(p, ev->tid);
		for (unsigned i = 0; d->kinds[i]; i++)
			p = put_varint(p, field_code(s, ev, d->kinds[i], i));
		s->raw.len = (size_t)(p - s->raw.data);
		s->pending += s->raw.len - before;
		blob_out = &s->raw;
	} else {
		s->pending += col_varint(&s->col[COL_HDR], hd);
		s->pending += col_varint(&s->col[COL_DT], ts - s->prev_ts);
		if (has_tid)
			s->pending += col_varint(&s->col[COL_TID], ev->tid);
		for (unsigned i = 0; d->kinds[i]; i++)
			s->pending += col_varint(&s->col[COL_FIELD(ev->type, i)],
			    field_code(s, ev, d->kinds[i], i));
		blob_out = &s->col[COL_BLOB];
	}
	if (d->blob != BK_NONE) {
		size_t len = ev->blob ? ev->blob_len : 0, before = blob_out->len;

		if (d->blob == BK_ARR)
			len &= ~(size_t)7;
		put_blob(s, blob_out, d->blob, ev->blob ? ev->blob : "", len);
		s->pending += blob_out->len - before;
	}
	s->prev_ts = ts;
	s->cur_tid = ev->tid;
	if (ev->type == TT_SWITCH)
		s->cur_tid = (uint32_t)ev->arg[1];
	s->count++;
	w->st.events++;
}
