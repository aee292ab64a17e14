/*
 * reader.c: opens a trace directory for reading.
 *
 * At open, every segment's header is decoded (reader-seg.c) and its
 * chunks are listed, from the seek index when the segment is complete
 * and otherwise by walking the chunk headers (resynchronizing on the
 * chunk magic after a damaged header). The chunk references are grouped per CPU stream in
 * write order (reader-decode.c reads them). Strings and arrays are
 * interned for the reader's life in an arena, found again through a hash
 * table (common/hmap.h) from their hash to a chain of entries.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "common/array.h"
#include "common/common.h"
#include "reader-local.h"

/* --- interning -------------------------------------------------------- */

static void *
arena_alloc(struct arena *a, size_t n)
{
	void *p;

	n = (n + 7) & ~(size_t)7;
	if (a->block == NULL || a->used + n > a->size) {
		a->size = n > (64u << 10) ? n : (64u << 10);
		a->block = xmalloc(a->size);
		a->used = 0;
		a->blocks = xreallocarray(a->blocks, a->nblocks + 1,
		    sizeof(*a->blocks));
		a->blocks[a->nblocks++] = a->block;
	}
	p = a->block + a->used;
	a->used += n;
	return p;
}

/* Intern n bytes (plus a NUL after them) for the reader's life. */
static const void *
intern_nolock(struct trace_reader *r, const void *p, size_t n)
{
	uint32_t h = trace_hash_bytes(p, n);
	uint64_t *head = hmap_put(&r->interned, h, 0, NULL);
	struct interned *e;

	for (e = (struct interned *)(uintptr_t)*head; e != NULL; e = e->next)
		if (e->len == n && memcmp(e->data, p, n) == 0)
			return e->data;
	e = arena_alloc(&r->arena, sizeof(*e) + n + 1);
	e->next = (struct interned *)(uintptr_t)*head;
	e->len = n;
	memcpy(e->data, p, n);
	e->data[n] = '\0';
	*head = (uintptr_t)e;
	return e->data;
}

const void *
rd_intern(struct trace_reader *r, const void *p, size_t n)
{
	const void *q;

	pthread_mutex_lock(&r->lock);
	q = intern_nolock(r, p, n);
	pthread_mutex_unlock(&r->lock);
	return q;
}

const char *
trace_reader_intern(struct trace_reader *r, const char *s)
{
	return rd_intern(r, s, strlen(s));
}

/* --- damage ----------------------------------------------------------- */

void
rd_report(struct trace_reader *r, const char *path, uint64_t off,
    const char *reason)
{
	struct trace_damage d;

	pthread_mutex_lock(&r->lock);
	/* Each spot is reported once, even when a seek passes it again. */
	for (size_t i = 0; i < r->ndamage; i++) {
		if (r->damage[i].offset == off &&
		    strcmp(r->damage[i].path, path) == 0) {
			pthread_mutex_unlock(&r->lock);
			return;
		}
	}
	d.path = path;
	d.offset = off;
	d.reason = intern_nolock(r, reason, strlen(reason));
	r->damage = xreallocarray(r->damage, r->ndamage + 1, sizeof(*r->damage));
	r->damage[r->ndamage++] = d;
	r->st.damaged++;
	pthread_mutex_unlock(&r->lock);
	if (r->damage_fn)
		r->damage_fn(&d, r->damage_arg);
}

void
trace_reader_on_progress(struct trace_reader *r, trace_progress_fn fn,
    void *arg)
{
	r->progress_fn = fn;
	r->progress_arg = arg;
}

void
trace_reader_on_damage(struct trace_reader *r, trace_damage_fn fn, void *arg)
{
	r->damage_fn = fn;
	r->damage_arg = arg;
	/* Damage found while opening is reported now. */
	for (size_t i = 0; fn && i < r->ndamage; i++)
		fn(&r->damage[i], arg);
}

/* --- threads ---------------------------------------------------------- */

static struct trace_thread *
thread_slot(struct trace_reader *r, uint32_t tid)
{
	size_t lo = 0, hi = r->nthreads;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (r->threads[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < r->nthreads && r->threads[lo].tid == tid)
		return &r->threads[lo];
	DGROW(r->threads, r->threads_cap, r->nthreads + 1, 256);
	memmove(&r->threads[lo + 1], &r->threads[lo],
	    (r->nthreads - lo) * sizeof(*r->threads));
	r->nthreads++;
	memset(&r->threads[lo], 0, sizeof(r->threads[lo]));
	r->threads[lo].tid = tid;
	return &r->threads[lo];
}

void
rd_thread_update(struct trace_reader *r, const struct trace_thread *t)
{
	struct trace_thread *s = thread_slot(r, t->tid);
	uint32_t pid = s->pid, ppid = s->ppid;

	*s = *t;
	s->comm[TRACE_COMM_LEN - 1] = '\0';
	if (s->pid == 0)	/* unknown: the recorder could not tell */
		s->pid = pid;
	if (s->ppid == 0)
		s->ppid = ppid;
}

void
rd_thread_of(const struct trace_event *ev, struct trace_thread *t)
{
	memset(t, 0, sizeof(*t));
	t->tid = (uint32_t)ev->arg[0];
	t->pid = (uint32_t)ev->arg[1];
	t->ppid = (uint32_t)ev->arg[2];
	t->start_ts = ev->arg[3];
	t->flags = (uint32_t)ev->arg[4];
	if (ev->blob != NULL) {
		size_t l = ev->blob_len < TRACE_COMM_LEN - 1 ?
		    ev->blob_len : TRACE_COMM_LEN - 1;
		memcpy(t->comm, ev->blob, l);
	}
}

const struct trace_thread *
rd_thread_find(const struct trace_thread *v, size_t n, uint32_t tid)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (v[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo].tid == tid ? &v[lo] : NULL;
}

const struct trace_thread *
trace_reader_thread(const struct trace_reader *r, uint32_t tid)
{
	return rd_thread_find(r->threads, r->nthreads, tid);
}

size_t
trace_reader_nthreads(const struct trace_reader *r)
{
	return r->nthreads;
}

const struct trace_thread *
trace_reader_thread_at(const struct trace_reader *r, size_t i)
{
	return i < r->nthreads ? &r->threads[i] : NULL;
}

/* --- opening ---------------------------------------------------------- */

static struct cursor *
cursor_for(struct trace_reader *r, uint16_t cpu)
{
	for (size_t i = 0; i < r->ncursors; i++)
		if (r->cursors[i].cpu == cpu)
			return &r->cursors[i];
	r->cursors = xreallocarray(r->cursors, r->ncursors + 1,
	    sizeof(*r->cursors));
	memset(&r->cursors[r->ncursors], 0, sizeof(*r->cursors));
	r->cursors[r->ncursors].cpu = cpu;
	return &r->cursors[r->ncursors++];
}

/*
 * Are a chunk's times believable? They lie before the segment file was
 * last written (its mtime on the trace clock, with an hour of slack for
 * clock steps) and do not go back from the previous chunk of the same
 * stream. Anything else is reported as damage: a time far off would
 * make every view of the trace span centuries.
 */
static int
chunk_times_ok(struct trace_reader *r, uint32_t segi, uint64_t off,
    const struct chunk_hdr *h)
{
	struct seg *s = &r->segs[segi];
	struct cursor *c = cursor_for(r, h->cpu);

	if (h->last_ts > s->max_ts) {
		rd_report(r, s->path, off, "damaged chunk: its time lies "
		    "after the file was written (skipped)");
		return 0;
	}
	if (c->nchunks > 0 && h->first_ts < c->last_ts) {
		rd_report(r, s->path, off, "damaged chunk: its time goes "
		    "back (skipped)");
		return 0;
	}
	return 1;
}

/* Add a chunk: span 0 when h was read from the file, else the most
   bytes the indexed chunk may take. */
static void
add_chunk(struct trace_reader *r, uint32_t segi, uint64_t off,
    const struct chunk_hdr *h, uint32_t span)
{
	struct cursor *c = cursor_for(r, h->cpu);
	struct seg *s = &r->segs[segi];

	if (!chunk_times_ok(r, segi, off, h))
		return;
	c = cursor_for(r, h->cpu);	/* may have moved */
	c->last_ts = h->last_ts;

	DGROW(c->chunks, c->cap, c->nchunks + 1, 64);
	c->chunks[c->nchunks++] = (struct chunkref){ .seg = segi,
	    .span = span, .offset = off, .h = *h };
	s->info.nchunks++;
	s->info.nevents += h->count;
	if (s->info.first_ts == 0 || h->first_ts < s->info.first_ts)
		s->info.first_ts = h->first_ts;
	if (h->last_ts > s->info.last_ts)
		s->info.last_ts = h->last_ts;
}

int
rd_read_at(int fd, void *buf, size_t n, uint64_t off)
{
	size_t done = 0;

	while (done < n) {
		ssize_t k = pread(fd, (char *)buf + done, n - done,
		    (off_t)(off + done));

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		done += (size_t)k;
	}
	return 0;
}

/* Use the seek index of a complete segment; returns 0 when it is valid. */
static int
load_index(struct trace_reader *r, uint32_t segi)
{
	struct seg *s = &r->segs[segi];
	uint8_t t[TRAILER_LEN];
	uint64_t ioff, ilen;
	uint32_t n;
	uint8_t *b;

	if (s->size < s->h.header_len + TRAILER_LEN + INDEX_HDR_LEN ||
	    rd_read_at(s->fd, t, TRAILER_LEN, s->size - TRAILER_LEN) != 0 ||
	    memcmp(t + 16, TRAILER_MAGIC, 8) != 0)
		return -1;
	ioff = get_le64(t);
	n = get_le32(t + 8);
	ilen = INDEX_HDR_LEN + (uint64_t)n * INDEX_ENTRY_LEN;
	if (ioff < s->h.header_len || ioff + ilen + TRAILER_LEN != s->size)
		return -1;
	b = xmalloc(ilen);
	if (rd_read_at(s->fd, b, ilen, ioff) != 0 ||
	    memcmp(b, INDEX_MAGIC, 8) != 0 || get_le32(b + 8) != n ||
	    trace_crc32(0, b, ilen) != get_le32(t + 12)) {
		free(b);
		return -1;
	}
	/*
	 * The entries must lie in file order, each with room for a header
	 * before the next and the last before the index, with believable
	 * times. Otherwise the chunks are walked instead (an index pointing
	 * everywhere at one chunk would repeat it, one pointing past the
	 * end would lose the segment). The chunk headers are not read here:
	 * each is checked against its entry when its chunk is first read.
	 */
	struct chunk_hdr *hs = xcalloc(n ? n : 1, sizeof(*hs));
	uint64_t *offs = xcalloc(n ? n : 1, sizeof(*offs));
	int bad = 0;

	for (uint32_t i = 0; i < n && !bad; i++) {
		const uint8_t *e = b + INDEX_HDR_LEN + (size_t)i * INDEX_ENTRY_LEN;

		offs[i] = get_le64(e);
		hs[i] = (struct chunk_hdr){ .magic = CHUNK_MAGIC,
		    .cpu = get_le16(e + 28), .count = get_le32(e + 24),
		    .first_ts = get_le64(e + 8), .last_ts = get_le64(e + 16) };
		bad = offs[i] < (i ? offs[i - 1] + CHUNK_HDR_LEN :
		    s->h.header_len) || offs[i] + CHUNK_HDR_LEN > ioff ||
		    hs[i].first_ts > hs[i].last_ts;
		/* no more events than the bytes up to the next can hold */
		if (i > 0 && hs[i - 1].count > chunk_max_events(offs[i] -
		    offs[i - 1] - CHUNK_HDR_LEN))
			bad = 1;
	}
	if (!bad && n > 0 && hs[n - 1].count > chunk_max_events(ioff -
	    offs[n - 1] - CHUNK_HDR_LEN))
		bad = 1;
	free(b);
	if (bad) {
		rd_report(r, s->path, ioff, "seek index disagrees with the "
		    "chunks (chunks walked instead)");
		free(hs);
		free(offs);
		return -1;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint64_t span = (i + 1 < n ? offs[i + 1] : ioff) - offs[i];

		add_chunk(r, segi, offs[i], &hs[i],
		    span > UINT32_MAX ? UINT32_MAX : (uint32_t)span);
	}
	free(hs);
	free(offs);
	s->info.complete = 1;
	return 0;
}

/* Find the next valid chunk header at or after off; returns its offset. */
static uint64_t
resync(struct seg *s, uint64_t off, struct chunk_hdr *h)
{
	uint8_t buf[65536 + CHUNK_HDR_LEN];

	while (off + CHUNK_HDR_LEN <= s->size) {
		size_t want = sizeof(buf);
		size_t got;

		if (off + want > s->size)
			want = (size_t)(s->size - off);
		if (rd_read_at(s->fd, buf, want, off) != 0)
			break;
		got = want;
		for (size_t i = 0; i + CHUNK_HDR_LEN <= got; i++) {
			if (buf[i] != 0x43 || get_le32(buf + i) != CHUNK_MAGIC)
				continue;
			if (chunk_hdr_decode(h, buf + i) == 0)
				return off + i;
		}
		if (got <= CHUNK_HDR_LEN)
			break;
		off += got - CHUNK_HDR_LEN + 1;
	}
	return UINT64_MAX;
}

/* Walk the chunk headers of a segment without an index. */
static void
scan_chunks(struct trace_reader *r, uint32_t segi)
{
	struct seg *s = &r->segs[segi];
	uint64_t off = s->h.header_len;
	uint8_t hb[CHUNK_HDR_LEN];
	struct chunk_hdr h;

	while (off < s->size) {
		const char *why;

		if (off + CHUNK_HDR_LEN > s->size) {
			rd_report(r, s->path, off, "torn chunk at the end "
			    "(writer killed or still writing)");
			return;
		}
		if (rd_read_at(s->fd, hb, CHUNK_HDR_LEN, off) != 0)
			return;
		if (chunk_hdr_decode(&h, hb) != 0) {
			/* An index left by a clean close ends the chunks. */
			if (memcmp(hb, INDEX_MAGIC, 8) == 0)
				return;
			uint64_t next = resync(s, off + 1, &h);

			rd_report(r, s->path, off, next == UINT64_MAX ?
			    "damaged data up to the end (skipped)" :
			    "damaged chunk (skipped)");
			if (next == UINT64_MAX)
				return;
			off = next;
		}
		if ((why = chunk_hdr_impossible(&h)) != NULL) {
			/* intact (its crc holds), but not a chunk to trust */
			uint64_t next = resync(s, off + 1, &h);

			rd_report(r, s->path, off, why);
			if (next == UINT64_MAX)
				return;
			off = next;
			continue;
		}
		if (off + CHUNK_HDR_LEN + h.csize > s->size) {
			rd_report(r, s->path, off, "torn chunk at the end "
			    "(writer killed or still writing)");
			return;
		}
		add_chunk(r, segi, off, &h, 0);
		off += CHUNK_HDR_LEN + h.csize;
	}
}

/* The bulk view: every chunk, stream after stream, in time order. */
static void
build_chunk_map(struct trace_reader *r)
{
	size_t n = 0, k = 0;

	for (size_t i = 0; i < r->ncursors; i++)
		n += r->cursors[i].nchunks;
	r->cinfo = xcalloc(n + 1, sizeof(*r->cinfo));
	r->cmap = xcalloc(n + 1, sizeof(*r->cmap));
	for (size_t i = 0; i < r->ncursors; i++) {
		const struct cursor *c = &r->cursors[i];

		for (size_t j = 0; j < c->nchunks; j++, k++) {
			const struct chunk_hdr *h = &c->chunks[j].h;

			r->cinfo[k] = (struct trace_chunk_info){ h->cpu, h->count,
			    h->first_ts, h->last_ts };
			r->cmap[k].cur = (uint32_t)i;
			r->cmap[k].k = (uint32_t)j;
		}
	}
	r->ncinfo = n;
}

static void
fill_info(struct trace_reader *r, const struct seg *newest)
{
	struct trace_info *in = &r->info;

	in->hostname = rd_intern(r, newest->h.hostname, strlen(newest->h.hostname));
	in->release = rd_intern(r, newest->h.release, strlen(newest->h.release));
	in->clock = rd_intern(r, newest->h.clock, strlen(newest->h.clock));
	in->boot_id = rd_intern(r, newest->h.boot_id, strlen(newest->h.boot_id));
	in->recorder = newest->h.recorder ? rd_intern(r, newest->h.recorder,
	    strlen(newest->h.recorder)) : NULL;
	in->recorder_pid = newest->h.recorder_pid;
	in->ncpus = newest->h.ncpus;
	in->version = newest->h.version;
	in->realtime_offset = newest->h.realtime_offset;
	for (size_t i = 0; i < r->nsegs; i++) {
		const struct seg *s = &r->segs[i];

		in->disk_bytes += s->size;
		if (s->info.skipped)
			continue;
		in->nsegments++;
		in->nchunks += s->info.nchunks;
		in->nevents += s->info.nevents;
		if (s->info.nchunks && (in->first_ts == 0 ||
		    s->info.first_ts < in->first_ts))
			in->first_ts = s->info.first_ts;
		if (s->info.last_ts > in->last_ts)
			in->last_ts = s->info.last_ts;
	}
}

int
trace_reader_open(struct trace_reader **rp, const char *path, char **cause)
{
	struct trace_reader *r = xcalloc(1, sizeof(*r));
	struct stat sb;

	pthread_mutex_init(&r->lock, NULL);
	pthread_mutex_init(&r->defs_lock, NULL);
	int err = 0, first_err = 0;
	const char *first_path = path;
	struct seg *newest = NULL, *first = NULL;

	*rp = NULL;
	if (stat(path, &sb) != 0) {
		err = errno;
		goto fail;
	}
	if (S_ISDIR(sb.st_mode)) {
		err = rd_list_dir(r, path, cause);
		if (err && cause && *cause) {
			trace_reader_close(r);
			return err;
		}
	} else if (!S_ISREG(sb.st_mode)) {
		err = EINVAL;
		if (cause) {
			*cause = xasprintf("%s: not a regular file or a "
			    "directory", path);
			cause = NULL;
		}
	} else {
		rd_add_seg(r, -1, NULL, path);
	}
	if (err)
		goto fail;
	rd_sort_segments(r);
	for (size_t i = 0; i < r->nsegs; i++) {
		struct seg *s = &r->segs[i];

		s->info.path = s->path;
		/* a newer segment is skipped, said so; all newer: refused */
		if (s->info.skipped == TRACE_EVERSION)
			s->skip_reason = "format version newer than this argus "
			    "supports (skipped)";
		if (s->info.skipped) {
			if (!first_err) {
				first_err = s->info.skipped;
				first_path = s->path;
				first = s;
			}
			continue;
		}
		newest = s;
	}
	if (newest == NULL) {
		err = first_err ? first_err : TRACE_EEMPTY;
		goto fail;
	}
	for (size_t i = 0; i < r->nsegs; i++) {
		struct seg *s = &r->segs[i];

		if (!s->info.skipped &&
		    strcmp(s->h.boot_id, newest->h.boot_id) != 0) {
			s->info.skipped = ESTALE;
			s->skip_reason = "recorded before the last reboot "
			    "(skipped)";
		}
	}
	rd_report_skipped(r);
	for (size_t i = 0; i < r->nsegs; i++) {
		struct seg *s = &r->segs[i];

		if (s->info.skipped)
			continue;
		for (size_t t = 0; t < s->h.nthreads; t++)
			rd_thread_update(r, &s->h.threads[t]);
		if (load_index(r, (uint32_t)i) != 0)
			scan_chunks(r, (uint32_t)i);
	}
	fill_info(r, newest);
	r->dctx = ZSTD_createDCtx();
	if (r->dctx == NULL)
		abort();
	r->heap = xcalloc(r->ncursors + 1, sizeof(*r->heap));
	build_chunk_map(r);
	r->defs = xcalloc(r->nsegs + 1, sizeof(*r->defs));
	trace_reader_seek(r, 0);
	*rp = r;
	return 0;
fail:
	if (cause) {
		if (err == TRACE_EEMPTY)
			*cause = xasprintf("%s: no trace segment "
			    "(seg-*.argus) found", path);
		else if (first != NULL && first->skip_reason != NULL)
			*cause = rd_skip_cause(first);
		else
			*cause = xasprintf("%s: %s", first_path,
			    trace_strerror(err));
	}
	trace_reader_close(r);
	return err;
}

void
trace_reader_close(struct trace_reader *r)
{
	if (r != NULL && r->multi != NULL)
		rm_close(r);
	if (r == NULL)
		return;
	rd_pre_stop(r);
	rd_stacks_free(r);
	for (size_t i = 0; i < r->nsegs; i++) {
		if (r->segs[i].fd >= 0)
			close(r->segs[i].fd);
		seg_header_free(&r->segs[i].h);
		free(r->segs[i].path);
	}
	for (size_t i = 0; i < r->ncursors; i++) {
		free(r->cursors[i].chunks);
		free(r->cursors[i].raw);
		free(r->cursors[i].prev);
		free(r->cursors[i].cols);
		free(r->cursors[i].fcol);
		free(r->cursors[i].blobs);
		free(r->cursors[i].arrbuf);
	}
	for (size_t i = 0; i < r->arena.nblocks; i++)
		free(r->arena.blocks[i]);
	free(r->arena.blocks);
	hmap_free(&r->interned);
	free(r->segs);
	free(r->cursors);
	free(r->heap);
	free(r->threads);
	free(r->ahead);
	free(r->damage);
	free(r->cinfo);
	free(r->cmap);
	pthread_mutex_destroy(&r->lock);
	pthread_mutex_destroy(&r->defs_lock);
	ZSTD_freeDCtx(r->dctx);
	free(r);
}

const struct trace_info *
trace_reader_info(const struct trace_reader *r)
{
	return &r->info;
}

size_t
trace_reader_nsegments(const struct trace_reader *r)
{
	if (r->multi != NULL)
		return rm_nsegments(r);
	return r->nsegs;
}

const struct trace_segment_info *
trace_reader_segment(const struct trace_reader *r, size_t i)
{
	if (r->multi != NULL)
		return rm_segment(r, i);
	return i < r->nsegs ? &r->segs[i].info : NULL;
}
