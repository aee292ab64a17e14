/*
 * reader-stacks.c: the stack definitions of each segment, for the
 * TT_STACK events that name their frames by ref (trace.h).
 *
 * r->defs[i] is the table of segment i (struct stackdefs: a map from id
 * to the interned frames), read whole the first time an event of the
 * segment needs it: the segment's metadata chunks are decoded once,
 * whatever chunk or window is read, by the cursors' merge, the bulk
 * decoding of any thread or the helper decoding ahead. A table is built
 * under r->defs_lock and published with a release store, so resolving
 * against a loaded one takes no lock. Tables live as long as the reader.
 */
#include <stdlib.h>

#include "common/array.h"
#include "common/common.h"
#include "reader-local.h"

struct stackdefs {
	struct hmap ids;		/* id -> index in v */
	struct blobref *v;
	size_t n, cap;
};

/* Keep the first definition of each id (a writer gives one). */
static void
add_def(void *arg, const struct trace_event *ev)
{
	struct stackdefs *d = arg;
	int added;

	(void)hmap_put(&d->ids, ev->arg[0], d->n, &added);
	if (!added)
		return;
	DGROW(d->v, d->cap, d->n + 1, 64);
	d->v[d->n++] = (struct blobref){ ev->blob, ev->blob_len };
}

/* The table of segment si, read now when it is not yet. */
static struct stackdefs *
load(struct trace_reader *r, size_t si)
{
	struct stackdefs *d;

	pthread_mutex_lock(&r->defs_lock);
	d = r->defs[si];
	if (d == NULL) {
		struct trace_chunk_buf *b = trace_chunk_buf_new();

		d = xcalloc(1, sizeof(*d));
		b->c.defs_only = 1;
		for (size_t i = 0; i < r->ncursors; i++) {
			const struct cursor *c = &r->cursors[i];

			if (c->cpu != TRACE_CPU_META)
				continue;
			for (size_t k = 0; k < c->nchunks; k++)
				if (c->chunks[k].seg == si)
					rd_each_def(r, b, &c->chunks[k],
					    add_def, d);
		}
		trace_chunk_buf_free(b);
		__atomic_store_n(&r->defs[si], d, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&r->defs_lock);
	return d;
}

void
rd_stack_resolve(struct trace_reader *r, const struct seg *s,
    struct trace_event *ev)
{
	size_t si = (size_t)(s - r->segs);
	struct stackdefs *d = __atomic_load_n(&r->defs[si], __ATOMIC_ACQUIRE);
	const uint64_t *k;

	if (d == NULL)
		d = load(r, si);
	k = hmap_get(&d->ids, ev->arg[2] - 1);
	if (k == NULL) {
		ev->blob = NULL;	/* kept ref: skipped, reported */
		ev->blob_len = 0;
		return;
	}
	ev->blob = d->v[*k].p;
	ev->blob_len = d->v[*k].len;
	ev->arg[2] = 0;
}

void
rd_stacks_free(struct trace_reader *r)
{
	for (size_t i = 0; r->defs != NULL && i < r->nsegs; i++) {
		struct stackdefs *d = r->defs[i];

		if (d == NULL)
			continue;
		hmap_free(&d->ids);
		free(d->v);
		free(d);
	}
	free(r->defs);
	r->defs = NULL;
}
