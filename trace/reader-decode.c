/*
 * reader-decode.c: decoding chunks and merging CPU streams in time order.
 *
 * Each cursor holds one decompressed chunk of its CPU stream and peeks
 * only the time of its next event; the event itself is decoded once,
 * straight into the caller's struct, when the heap says it is next. So
 * memory stays at one chunk per CPU whatever the length of the trace.
 * A cursor reads through columns (struct col): format 2 chunks have one
 * per part of an event, format 1 chunks one for all. When the reader
 * decodes ahead (reader-pre.c), a cursor reads its chunk from an array
 * of events decoded on a helper thread instead (c->dev). A stack naming
 * its frames by ref gets them from its segment's definitions as it is
 * decoded (reader-stacks.c), whichever path decodes it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "common/array.h"
#include "common/common.h"
#include "reader-local.h"

/* The column where each part of an event is read, in a chunk of n bytes
   at c->raw: the one body of format 1, the columns listed in the
   directory of format 2. Returns 0, or -1 when the directory is damaged. */
static int
open_columns(struct cursor *c, uint32_t version, size_t n)
{
	size_t nf = (size_t)c->nplan * TRACE_NARGS;
	const uint8_t *p = c->raw, *end = c->raw + n;
	uint64_t count, id, len;

	if (c->fcol_cap < nf) {
		free(c->fcol);
		c->fcol = xreallocarray(NULL, nf, sizeof(*c->fcol));
		c->fcol_cap = nf;
	}
	if (version < 2) {
		DGROW(c->cols, c->cols_cap, 1, 1);
		c->cols[0] = (struct col){ p, end };
		c->hcol = c->dcol = c->tcol = c->bcol = &c->cols[0];
		for (size_t i = 0; i < nf; i++)
			c->fcol[i] = &c->cols[0];
		c->zigzag_dt = 1;
		return 0;
	}
	if (get_varint(&p, end, &count) != 0 || count > n / 2)
		return -1;
	DGROW(c->cols, c->cols_cap, count + 1, 16);
	c->cols[0] = (struct col){ NULL, NULL };
	c->hcol = c->dcol = c->tcol = c->bcol = &c->cols[0];
	for (size_t i = 0; i < nf; i++)
		c->fcol[i] = &c->cols[0];
	c->zigzag_dt = 0;
	/* the directory, then the columns in its order: find where they
	   start, then place each */
	const uint8_t *dir = p;
	size_t total = 0;

	for (uint64_t k = 0; k < count; k++)
		if (get_varint(&p, end, &id) != 0 ||
		    get_varint(&p, end, &len) != 0 || len > n)
			return -1;
		else
			total += len;
	if (total != (size_t)(end - p))
		return -1;
	for (uint64_t k = 1, at = 0; k <= count; k++) {
		struct col **slot = NULL;

		(void)get_varint(&dir, end, &id);
		(void)get_varint(&dir, end, &len);
		c->cols[k] = (struct col){ p + at, p + at + len };
		at += len;
		if (id == COL_HDR)
			slot = &c->hcol;
		else if (id == COL_DT)
			slot = &c->dcol;
		else if (id == COL_TID)
			slot = &c->tcol;
		else if (id == COL_BLOB)
			slot = &c->bcol;
		else if (id >= COL_FIELDS && (id - COL_FIELDS) % COL_STRIDE <
		    TRACE_NARGS && (id - COL_FIELDS) / COL_STRIDE < c->nplan)
			slot = &c->fcol[(id - COL_FIELDS) / COL_STRIDE *
			    TRACE_NARGS + (id - COL_FIELDS) % COL_STRIDE];
		if (slot != NULL && *slot != &c->cols[0])
			return -1;	/* a column twice */
		if (slot != NULL)
			*slot = &c->cols[k];
	}
	return 0;
}

/*
 * Read a chunk's compressed frame into *zp (malloc'd), with its header
 * into *h: an indexed chunk's header is read first and must say what its
 * index entry says. Returns 0, or -1 when it is damaged (reported).
 */
static int
read_frame(struct trace_reader *r, const struct chunkref *ref,
    struct chunk_hdr *h, uint8_t **zp)
{
	const struct seg *s = &r->segs[ref->seg];
	uint8_t hb[CHUNK_HDR_LEN];
	uint8_t *z;

	*h = ref->h;
	if (ref->span != 0 && (rd_read_at(s->fd, hb, CHUNK_HDR_LEN,
	    ref->offset) != 0 || chunk_hdr_decode(h, hb) != 0 ||
	    h->cpu != ref->h.cpu || h->count != ref->h.count ||
	    h->first_ts != ref->h.first_ts || h->last_ts != ref->h.last_ts ||
	    CHUNK_HDR_LEN + (uint64_t)h->csize > ref->span)) {
		rd_report(r, s->path, ref->offset, "chunk unlike its seek "
		    "index entry (damaged; skipped)");
		return -1;
	}
	const char *why = chunk_hdr_impossible(h);

	if (why != NULL) {
		rd_report(r, s->path, ref->offset, why);
		return -1;
	}
	z = xmalloc(h->csize ? h->csize : 1);
	if (rd_read_at(s->fd, z, h->csize, ref->offset + CHUNK_HDR_LEN)) {
		free(z);
		rd_report(r, s->path, ref->offset, "chunk cut short (skipped)");
		return -1;
	}
	*zp = z;
	return 0;
}

/*
 * Read and decompress one chunk into the cursor with dctx. Returns 0, or
 * -1 when it is damaged (reported).
 */
static int
load_ref(struct trace_reader *r, struct cursor *c, const struct chunkref *ref,
    ZSTD_DCtx *dctx)
{
	const struct seg *s = &r->segs[ref->seg];
	struct chunk_hdr h;
	uint8_t *z;
	size_t n;

	if (read_frame(r, ref, &h, &z) != 0)
		return -1;
	if (c->raw_cap < h.rsize) {
		c->raw_cap = h.rsize;
		free(c->raw);
		c->raw = xmalloc(c->raw_cap);
	}
	n = ZSTD_decompressDCtx(dctx, c->raw, h.rsize, z, h.csize);
	free(z);
	if (ZSTD_isError(n) || n != h.rsize) {
		char *why = xasprintf("chunk does not decompress (%s; skipped)",
		    ZSTD_isError(n) ? ZSTD_getErrorName(n) : "wrong size");

		rd_report(r, s->path, ref->offset, why);
		free(why);
		return -1;
	}
	if (!c->defs_only)
		__atomic_fetch_add(&r->st.chunks_read, 1, __ATOMIC_RELAXED);
	c->cpu = h.cpu;
	c->seg = s;
	c->plan = s->h.plan;
	c->nplan = s->h.ntypes;
	if (open_columns(c, s->h.version, n) != 0) {
		rd_report(r, s->path, ref->offset,
		    "chunk's column directory is damaged (skipped)");
		return -1;
	}
	c->left = h.count;
	c->ts = h.first_ts;
	c->tid = h.first_tid;
	c->chunk_offset = ref->offset;
	size_t np = (size_t)s->h.ntypes * TRACE_NARGS;

	if (c->prev_cap < np) {
		free(c->prev);
		c->prev = xmalloc(np * sizeof(*c->prev));
		c->prev_cap = np;
	}
	if (np > 0)	/* a segment of no types: prev may be NULL */
		memset(c->prev, 0, np * sizeof(*c->prev));
	c->nblobs = 0;
	return 0;
}

void
trace_reader_tell_progress(struct trace_reader *r, uint64_t done)
{
	if (r->progress_fn)
		r->progress_fn(r->progress_arg, done, r->info.nchunks);
}

void
rd_took_chunk(struct trace_reader *r)
{
	if (r->progress_fn)
		r->progress_fn(r->progress_arg, r->st.chunks_read,
		    r->info.nchunks);
}

/* Load chunk c->next_chunk into the cursor; 0 when one is ready. */
static int
load_chunk(struct trace_reader *r, struct cursor *c)
{
	while (c->next_chunk < c->nchunks) {
		if (load_ref(r, c, &c->chunks[c->next_chunk++], r->dctx) != 0)
			continue;
		rd_took_chunk(r);
		return 0;
	}
	return -1;
}

/* Read a varint from column q; 0, or -1 when it ends first. */
static inline int
col_get(struct col *q, uint64_t *out)
{
	const uint8_t *p = q->p, *end = q->end;

	if (p < end && *p < 0x80) {
		*out = *p;
		q->p = p + 1;
		return 0;
	}
	if (p + 1 < end && p[1] < 0x80) {
		*out = (uint64_t)(p[0] & 0x7f) | ((uint64_t)p[1] << 7);
		q->p = p + 2;
		return 0;
	}
	return get_varint(&q->p, end, out);
}

static int
decode_blob(struct trace_reader *r, struct cursor *c, int kind,
    struct trace_event *ev)
{
	struct col *q = c->bcol;
	uint64_t idx, n;

	if (col_get(q, &idx) != 0 || idx > c->nblobs)
		return -1;
	if (idx < c->nblobs) {
		ev->blob = c->blobs[idx].p;
		ev->blob_len = c->blobs[idx].len;
		return 0;
	}
	if (col_get(q, &n) != 0)
		return -1;
	if (kind == BK_STR) {
		if (n > (uint64_t)(q->end - q->p))
			return -1;
		ev->blob = rd_intern(r, q->p, (size_t)n);
		ev->blob_len = (uint32_t)n;
		q->p += n;
	} else {
		uint64_t prev = 0, d;

		if (n > (uint64_t)(q->end - q->p))
			return -1;
		if (c->arrbuf_cap < n) {
			c->arrbuf_cap = n;
			c->arrbuf = xreallocarray(c->arrbuf, n, 8);
		}
		for (uint64_t i = 0; i < n; i++) {
			if (col_get(q, &d) != 0)
				return -1;
			prev += (uint64_t)unzigzag(d);
			c->arrbuf[i] = prev;
		}
		ev->blob = rd_intern(r, c->arrbuf, (size_t)n * 8);
		ev->blob_len = (uint32_t)(n * 8);
	}
	DGROW(c->blobs, c->blobs_cap, c->nblobs + 1, 64);
	c->blobs[c->nblobs++] = (struct blobref){ ev->blob, ev->blob_len };
	return 0;
}

/*
 * Decode the body of the cursor's peeked event (thread, fields, blob)
 * into ev. Returns 0, or -1 when the bytes do not decode.
 */
static int
cursor_body(struct trace_reader *r, struct cursor *c, struct trace_event *ev)
{
	uint64_t ftype = c->hd >> 3, v;
	const struct type_plan *pl = &c->plan[ftype];
	const char *kinds = pl->kinds;
	uint64_t *prev = c->prev + ftype * TRACE_NARGS;
	struct col **fc = c->fcol + ftype * TRACE_NARGS;
	unsigned i;

	if (c->dev != NULL) {
		*ev = c->dev[c->idev++];
		return 0;
	}
	if (c->hd & 4) {
		if (col_get(c->tcol, &v) != 0)
			return -1;
		c->tid = (uint32_t)v;
	}
	for (i = 0; kinds[i]; i++) {
		/* a chunk has dozens of columns per cursor, more streams
		   than the hardware follows: fetch a few lines ahead (6%
		   less time decoding a generated trace) */
		__builtin_prefetch(fc[i]->p + 192);
		if (col_get(fc[i], &v) != 0)
			return -1;
		if (kinds[i] == FK_D) {
			v = prev[i] + (uint64_t)unzigzag(v);
			prev[i] = v;
		} else if (kinds[i] == FK_S) {
			v = (uint64_t)unzigzag(v);
		}
		ev->arg[i] = v;
	}
	for (; i < TRACE_NARGS; i++)
		ev->arg[i] = 0;
	ev->blob = NULL;
	ev->blob_len = 0;
	if (pl->blob != BK_NONE && decode_blob(r, c, pl->blob, ev) != 0)
		return -1;
	if (pl->local == TT_STACK && ev->arg[2] != 0 && !c->defs_only)
		rd_stack_resolve(r, c->seg, ev);
	c->left--;
	ev->ts = c->ts;
	ev->tid = c->tid;
	ev->cpu = c->cpu;
	ev->flags = (uint32_t)(c->hd & TRACE_CTX_MASK);
	ev->type = pl->local;
	if (ev->type == TT_SWITCH)
		c->tid = (uint32_t)ev->arg[1];
	return 0;
}

static void
cursor_damaged(struct trace_reader *r, struct cursor *c)
{
	rd_report(r, c->seg->path, c->chunk_offset,
	    "undecodable events in chunk (rest of chunk skipped)");
	c->left = 0;
	c->hcol->p = c->hcol->end;
}

/*
 * 1 when ev, just decoded by c, is a malformed stack or stack definition
 * (trace_stack_malformed()) to leave out, or a stack whose definition
 * its segment lacks; the first of each of a trace is reported, for all
 * of them.
 */
static int
stack_skipped(struct trace_reader *r, const struct cursor *c,
    const struct trace_event *ev)
{
	if (!trace_stack_malformed(ev))
		return 0;
	if (ev->type == TT_STACK && ev->arg[2] != 0) {
		if (!__atomic_exchange_n(&r->ref_warned, 1, __ATOMIC_RELAXED))
			rd_report(r, c->seg != NULL ? c->seg->path : "",
			    c->chunk_offset, "stack records whose definition "
			    "the segment lacks skipped (one warning for all)");
	} else if (!__atomic_exchange_n(&r->stack_warned, 1,
	    __ATOMIC_RELAXED)) {
		rd_report(r, c->seg != NULL ? c->seg->path : "",
		    c->chunk_offset, "malformed stack records skipped (no "
		    "frame, a cut one or too many; one warning for all)");
	}
	return 1;
}

/*
 * Make the cursor's next event of a known type ready: c->ts is its time,
 * c->hd its header, and its columns are at its body. Events of unknown types
 * are decoded and dropped. Returns 1, or 0 when the stream is exhausted.
 */
static int
cursor_peek(struct trace_reader *r, struct cursor *c)
{
	if (c->dev != NULL) {
		while (c->idev >= c->ndev)
			if (rd_pre_next(r, c) != 0) {
				c->has_ev = 0;
				return 0;
			}
		c->ts = c->dev[c->idev].ts;
		c->has_ev = 1;
		return 1;
	}
	for (;;) {
		while (c->left == 0 || c->hcol->p >= c->hcol->end) {
			if (c->left != 0 && c->seg) {
				rd_report(r, c->seg->path, c->chunk_offset,
				    "chunk holds fewer events than its header says");
				c->left = 0;
			}
			if (r->pre != NULL) {
				if (rd_pre_next(r, c) != 0) {
					c->has_ev = 0;
					return 0;
				}
				return cursor_peek(r, c);
			}
			if (load_chunk(r, c) != 0) {
				c->has_ev = 0;
				return 0;
			}
		}
		uint64_t hd, dt;

		if (col_get(c->hcol, &hd) != 0 || col_get(c->dcol, &dt) != 0 ||
		    (hd >> 3) >= c->nplan || !c->plan[hd >> 3].valid) {
			cursor_damaged(r, c);
			continue;
		}
		c->ts += c->zigzag_dt ? (uint64_t)unzigzag(dt) : dt;
		c->hd = hd;
		if (c->plan[hd >> 3].local != TT_NONE) {
			c->has_ev = 1;
			return 1;
		}
		if (cursor_body(r, c, &c->scratch) != 0)
			cursor_damaged(r, c);
		else
			__atomic_fetch_add(&r->st.unknown, 1, __ATOMIC_RELAXED);
	}
}

static inline int
heap_entry_less(const struct heap_entry *a, const struct heap_entry *b)
{
	return a->ts < b->ts || (a->ts == b->ts && a->order < b->order);
}

static void
sift_down(struct trace_reader *r, size_t i)
{
	struct heap_entry *h = r->heap, x = h[i];
	size_t n = r->nheap;

	for (;;) {
		size_t l = 2 * i + 1, m;

		if (l >= n)
			break;
		m = (l + 1 < n && heap_entry_less(&h[l + 1], &h[l])) ? l + 1 : l;
		if (!heap_entry_less(&h[m], &x))
			break;
		h[i] = h[m];
		i = m;
	}
	h[i] = x;
}

static struct heap_entry
heap_entry_of(const struct trace_reader *r, size_t idx)
{
	const struct cursor *c = &r->cursors[idx];

	return (struct heap_entry){ c->ts, (uint16_t)(c->cpu + 1),
	    (uint32_t)idx };
}

/* Position each cursor at its first chunk ending at or after ts. */
int
trace_reader_seek(struct trace_reader *r, uint64_t ts)
{
	if (r->multi != NULL)
		return rm_seek(r, ts);
	rd_pre_stop(r);
	r->nheap = 0;
	for (size_t i = 0; i < r->ncursors; i++) {
		struct cursor *c = &r->cursors[i];
		size_t k = 0;

		/* Chunks of a stream are in time order: binary search. */
		size_t lo = 0, hi = c->nchunks;

		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (c->chunks[mid].h.last_ts < ts)
				lo = mid + 1;
			else
				hi = mid;
		}
		k = lo;
		c->next_chunk = k;
		c->left = 0;
		c->seg = NULL;
		while (cursor_peek(r, c) && c->ts < ts)
			if (cursor_body(r, c, &c->scratch) != 0)
				cursor_damaged(r, c);
		if (c->has_ev)
			r->heap[r->nheap++] = heap_entry_of(r, i);
	}
	for (size_t i = r->nheap; i-- > 0;)
		sift_down(r, i);
	return 0;
}

/* Bookkeeping of an event handed out: counts, the thread table. */
static void
took(struct trace_reader *r, const struct trace_event *ev)
{
	r->st.events++;
	if (ev->type == TT_THREAD) {
		struct trace_thread t;

		rd_thread_of(ev, &t);
		rd_thread_update(r, &t);
	} else if (ev->type == TT_LOST) {
		r->st.lost += ev->arg[0];
	}
}

int
trace_reader_next(struct trace_reader *r, struct trace_event *ev)
{
	if (r->multi != NULL)
		return rm_next(r, ev);
	struct cursor *c;
	int bad;

	do {
		if (r->nheap == 0)
			return 0;
		c = &r->cursors[r->heap[0].idx];
		bad = cursor_body(r, c, ev) != 0;
		if (bad)
			cursor_damaged(r, c);
		else
			bad = stack_skipped(r, c, ev);
		if (cursor_peek(r, c))
			r->heap[0].ts = c->ts;
		else
			r->heap[0] = r->heap[--r->nheap];
		if (r->nheap > 1)
			sift_down(r, 0);
	} while (bad);
	took(r, ev);
	return 1;
}

/*
 * As trace_reader_next() n times, but in runs: the cursor on top of the
 * heap gives events until its next one is later than the heap's second,
 * and the heap is fixed once per run rather than once per event.
 */
size_t
trace_reader_read(struct trace_reader *r, struct trace_event *evs, size_t n)
{
	if (r->multi != NULL)
		return rm_read(r, evs, n);
	size_t i = 0;

	while (i < n && r->nheap > 0) {
		struct heap_entry *h = r->heap;
		struct cursor *c = &r->cursors[h[0].idx];
		/* the heap's second: the lesser child of the top */
		struct heap_entry lim = { UINT64_MAX, UINT32_MAX, 0 };

		if (r->nheap > 1)
			lim = h[1];
		if (r->nheap > 2 && heap_entry_less(&h[2], &lim))
			lim = h[2];
		struct heap_entry at = h[0];
		int live;

		do {
			if (cursor_body(r, c, &evs[i]) != 0)
				cursor_damaged(r, c);
			else if (!stack_skipped(r, c, &evs[i]))
				took(r, &evs[i++]);
			live = cursor_peek(r, c);
			at.ts = c->ts;
		} while (live && i < n && heap_entry_less(&at, &lim));
		if (live)
			h[0].ts = c->ts;
		else
			h[0] = h[--r->nheap];
		if (r->nheap > 1)
			sift_down(r, 0);
	}
	return i;
}

void
trace_reader_stats(const struct trace_reader *r, struct trace_reader_stats *st)
{
	if (r->multi != NULL) {
		rm_stats(r, st);
		return;
	}
	*st = r->st;
}

size_t
trace_reader_ndamage(const struct trace_reader *r)
{
	return r->ndamage;
}

const struct trace_damage *
trace_reader_damage(const struct trace_reader *r, size_t i)
{
	return i < r->ndamage ? &r->damage[i] : NULL;
}

/* --- bulk access ------------------------------------------------------ */

struct trace_chunk_buf *
trace_chunk_buf_new(void)
{
	struct trace_chunk_buf *b = xcalloc(1, sizeof(*b));

	b->dctx = ZSTD_createDCtx();
	if (b->dctx == NULL)
		abort();
	return b;
}

void
trace_chunk_buf_free(struct trace_chunk_buf *b)
{
	if (b == NULL)
		return;
	free(b->c.raw);
	free(b->c.prev);
	free(b->c.cols);
	free(b->c.fcol);
	free(b->c.blobs);
	free(b->c.arrbuf);
	ZSTD_freeDCtx(b->dctx);
	free(b);
}

size_t
trace_reader_nchunks(const struct trace_reader *r)
{
	return r->ncinfo;
}

const struct trace_chunk_info *
trace_reader_chunk(const struct trace_reader *r, size_t i)
{
	return i < r->ncinfo ? &r->cinfo[i] : NULL;
}

/*
 * Pass over the cursor's peeked event without its fields: a columnar
 * chunk keeps each type's fields apart, so only the thread and the blob
 * (the blob table indexes them in order) are read. 0, or -1.
 */
static int
cursor_skip(struct trace_reader *r, struct cursor *c)
{
	uint64_t ftype = c->hd >> 3;
	const struct type_plan *pl = &c->plan[ftype];
	uint64_t v;

	if (c->hd & 4) {
		if (col_get(c->tcol, &v) != 0)
			return -1;
		c->tid = (uint32_t)v;
	}
	if (pl->local == TT_SWITCH && pl->kinds[0] && pl->kinds[1] == FK_T) {
		/* the thread of the events after it: its next_tid field,
		   a plain number, alone */
		if (col_get(c->fcol[ftype * TRACE_NARGS + 1], &v) != 0)
			return -1;
		c->tid = (uint32_t)v;
	}
	if (pl->blob != BK_NONE && decode_blob(r, c, pl->blob, &c->scratch) != 0)
		return -1;
	c->left--;
	return 0;
}

size_t
rd_decode_ref(struct trace_reader *r, struct trace_chunk_buf *b,
    const struct chunkref *ref, struct trace_event *evs)
{
	return rd_decode_ref_only(r, b, ref, evs, NULL);
}

size_t
rd_decode_ref_only(struct trace_reader *r, struct trace_chunk_buf *b,
    const struct chunkref *ref, struct trace_event *evs, const uint8_t *want)
{
	struct cursor *c = &b->c;
	size_t n = 0;
	int bad = 0;

	if (load_ref(r, c, ref, b->dctx) != 0)
		return 0;
	/* a row chunk (format 1) has every field in one column: read
	   whole */
	if (c->zigzag_dt)
		want = NULL;
	while (c->left > 0 && c->hcol->p < c->hcol->end) {
		uint64_t hd, dt;

		if (col_get(c->hcol, &hd) != 0 || col_get(c->dcol, &dt) != 0 ||
		    (hd >> 3) >= c->nplan || !c->plan[hd >> 3].valid) {
			bad = 1;
			break;
		}
		c->ts += c->zigzag_dt ? (uint64_t)unzigzag(dt) : dt;
		c->hd = hd;
		unsigned lt = c->plan[hd >> 3].local;
		if (want != NULL && !want[lt]) {
			if (cursor_skip(r, c) != 0) {
				bad = 1;
				break;
			}
			continue;
		}
		if (cursor_body(r, c, &evs[n]) != 0) {
			bad = 1;
			break;
		}
		if (evs[n].type == TT_NONE)
			__atomic_fetch_add(&r->st.unknown, 1, __ATOMIC_RELAXED);
		else if (!stack_skipped(r, c, &evs[n]))
			n++;
	}
	if (bad)
		rd_report(r, c->seg->path, c->chunk_offset,
		    "undecodable events in chunk (rest of chunk skipped)");
	else if (c->left > 0)
		rd_report(r, c->seg->path, c->chunk_offset,
		    "chunk holds fewer events than its header says");
	return n;
}

void
rd_each_def(struct trace_reader *r, struct trace_chunk_buf *b,
    const struct chunkref *ref,
    void (*fn)(void *arg, const struct trace_event *ev), void *arg)
{
	struct cursor *c = &b->c;
	struct trace_event ev;

	if (load_ref(r, c, ref, b->dctx) != 0)
		return;
	while (c->left > 0 && c->hcol->p < c->hcol->end) {
		uint64_t hd, dt;

		if (col_get(c->hcol, &hd) != 0 || col_get(c->dcol, &dt) != 0 ||
		    (hd >> 3) >= c->nplan || !c->plan[hd >> 3].valid)
			return;		/* reported when read as events */
		c->ts += c->zigzag_dt ? (uint64_t)unzigzag(dt) : dt;
		c->hd = hd;
		if (cursor_body(r, c, &ev) != 0)
			return;
		if (ev.type == TT_STACKDEF && !trace_stack_malformed(&ev))
			fn(arg, &ev);
	}
}

size_t
trace_reader_decode_chunk_only(struct trace_reader *r, size_t i,
    struct trace_chunk_buf *b, struct trace_event *evs, const uint8_t *want)
{
	if (r->multi != NULL)
		return rm_decode_chunk_only(r, i, b, evs, want);
	if (i >= r->ncinfo)
		return 0;
	return rd_decode_ref_only(r, b,
	    &r->cursors[r->cmap[i].cur].chunks[r->cmap[i].k], evs, want);
}

size_t
trace_reader_decode_chunk(struct trace_reader *r, size_t i,
    struct trace_chunk_buf *b, struct trace_event *evs)
{
	if (r->multi != NULL)
		return rm_decode_chunk(r, i, b, evs);
	if (i >= r->ncinfo)
		return 0;
	return rd_decode_ref(r, b,
	    &r->cursors[r->cmap[i].cur].chunks[r->cmap[i].k], evs);
}
