/*
 * writer-stacks.c: each distinct stack written once per segment.
 *
 * w->stk is the table of the stacks defined for the open segment:
 * entries by increasing id (struct stk_ent), their frames one after
 * another in a buffer, and a map from the hash of the frames to the
 * entry. A TT_STACK whose stack is not in the table gets the next id
 * and a TT_STACKDEF record (id; frames) on the metadata stream; the
 * event is written with ref = id + 1 and no frames.
 *
 * Two rules keep every segment self-describing. A chunk naming a
 * definition still pending in the metadata stream's chunk makes that
 * chunk be written first (struct stream's wait_gen; writer.c), so a
 * chunk on disk never names a definition that is not, and a reader of
 * the open segment finds it. And when a segment is opened, the chunks
 * still pending (encoded against the old table) will land in it: the
 * new table keeps the pending definitions, which land there too, and
 * the definitions those chunks name, written again; every other entry
 * goes (wr_stacks_rolled). Ids then go on from the highest kept, or
 * start again at 0 when none is.
 */
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/common.h"
#include "writer-local.h"

/* A hash of the frames, a word at a time. */
static uint64_t
frames_hash(const uint64_t *f, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;

	for (size_t i = 0; i < n; i++) {
		h ^= f[i];
		h *= 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	return h;
}

/* The entry of id in the table, or NULL. */
static struct stk_ent *
by_id(struct stk_table *t, uint64_t id)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (t->v[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->n && t->v[lo].id == id ? &t->v[lo] : NULL;
}

/* Append the definition of x to the metadata stream at ts (or its last
   time, when later). */
static void
define(struct trace_writer *w, const struct stk_ent *x, uint64_t ts)
{
	struct trace_event d = { .ts = ts, .type = TT_STACKDEF,
	    .cpu = TRACE_CPU_META };
	size_t meta;
	struct stream *m = wr_stream(w, TRACE_CPU_META, &meta);

	d.arg[0] = x->id;
	d.blob = w->stk.frames.data + x->off;
	d.blob_len = x->len;
	wr_put(w, m, &d);
}

/*
 * The entry of the stack of len bytes at f: found, or added (*added set)
 * with the next id. NULL when it cannot be named (another stack of the
 * same hash, or a table out of ids): its frames stay in its event.
 */
static struct stk_ent *
lookup(struct trace_writer *w, const void *f, uint32_t len, int *added)
{
	struct stk_table *t = &w->stk;
	uint64_t h = frames_hash(f, len / 8);
	int fresh;
	uint64_t *slot = hmap_put(&t->by_hash, h, t->n, &fresh);

	*added = 0;
	if (!fresh) {
		struct stk_ent *x = &t->v[*slot];

		return x->len == len && memcmp(t->frames.data + x->off, f,
		    len) == 0 ? x : NULL;
	}
	if (t->next_id == UINT32_MAX || t->frames.len > UINT32_MAX / 2) {
		hmap_del(&t->by_hash, h, NULL);
		return NULL;
	}
	DGROW(t->v, t->cap, t->n + 1, 256);
	t->v[t->n] = (struct stk_ent){ .hash = h, .id = t->next_id++,
	    .off = (uint32_t)t->frames.len, .len = len,
	    .gen = w->meta_chunks };
	buf_put(&t->frames, f, len);
	*added = 1;
	return &t->v[t->n++];
}

int
wr_add_stack(struct trace_writer *w, const struct trace_event *ev,
    size_t idx)
{
	struct stream *s = w->streams[idx];
	struct trace_event e = *ev;
	struct stk_ent *x = NULL;
	int added = 0, err;

	e.arg[2] = 0;
	if (w->o.format >= 2 && !trace_stack_malformed(ev))
		x = lookup(w, ev->blob, ev->blob_len, &added);
	if (x != NULL) {
		if (added)
			define(w, x, ev->ts);
		e.arg[2] = (uint64_t)x->id + 1;
		e.blob = NULL;
		e.blob_len = 0;
		if (x->gen == w->meta_chunks)
			s->wait_gen = w->meta_chunks + 1;
	}
	wr_put(w, s, &e);
	if (added) {
		size_t meta;

		(void)wr_stream(w, TRACE_CPU_META, &meta);
		if ((err = wr_full(w, meta)) != 0)
			return err;
	}
	return wr_full(w, idx);
}

/* Mark in keep[] the entries the refs of stream s's chunk name; 1 when
   it names one. */
static int
mark_named(struct stk_table *t, const struct stream *s, uint8_t *keep)
{
	const struct buf *col = &s->col[COL_FIELD(TT_STACK, 2)];
	const uint8_t *p = col->data, *end = p + col->len;
	uint64_t ref;
	int any = 0;

	while (p < end && get_varint(&p, end, &ref) == 0) {
		struct stk_ent *x = ref != 0 ? by_id(t, ref - 1) : NULL;

		if (x != NULL) {
			keep[x - t->v] = 1;
			any = 1;
		}
	}
	return any;
}

int
wr_stacks_rolled(struct trace_writer *w, uint64_t ts)
{
	struct stk_table *t = &w->stk;
	struct buf frames = { 0 };
	uint8_t *keep, *named;
	size_t n = 0, again = 0;

	if (t->n == 0) {
		t->next_id = 0;
		return 0;
	}
	keep = xcalloc(t->n, 1);
	named = xcalloc(w->nstreams, 1);
	for (size_t i = 0; i < w->nstreams; i++)
		if (w->streams[i] != NULL && w->streams[i]->count > 0)
			named[i] = (uint8_t)mark_named(t, w->streams[i], keep);
	/* kept entries move down to n <= i, and keep[n] (read already)
	   becomes 1 for a pending one, 2 for one to be defined again */
	hmap_clear(&t->by_hash);
	for (size_t i = 0; i < t->n; i++) {
		struct stk_ent x = t->v[i];

		if (x.gen != w->meta_chunks) {
			if (!keep[i])
				continue;
			x.gen = w->meta_chunks;
			keep[n] = 2;
			again++;
		} else {
			keep[n] = 1;
		}
		x.off = (uint32_t)frames.len;
		buf_put(&frames, t->frames.data + t->v[i].off, x.len);
		t->v[n] = x;
		*hmap_put(&t->by_hash, x.hash, n, NULL) = n;
		n++;
	}
	buf_free(&t->frames);
	t->frames = frames;
	t->n = n;
	t->next_id = n > 0 ? t->v[n - 1].id + 1 : 0;
	for (size_t i = 0; i < n; i++)
		if (keep[i] == 2)
			define(w, &t->v[i], ts);
	/* their chunks wait for the metadata chunk holding those */
	for (size_t i = 0; again > 0 && i < w->nstreams; i++)
		if (named[i])
			w->streams[i]->wait_gen = w->meta_chunks + 1;
	free(keep);
	free(named);
	return again > 0;
}

void
wr_stacks_free(struct trace_writer *w)
{
	hmap_free(&w->stk.by_hash);
	free(w->stk.v);
	buf_free(&w->stk.frames);
	memset(&w->stk, 0, sizeof(w->stk));
}
