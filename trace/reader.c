/*
 * reader.c: reads a trace directory back in time order.
 *
 * At open, every segment's header is decoded and its chunks are listed,
 * from the seek index when the segment is complete and otherwise by
 * walking the chunk headers (resynchronizing on the chunk magic after a
 * damaged header). The chunk references are grouped per CPU stream in
 * write order. Reading keeps one cursor per stream (its decompressed
 * chunk and decoder state) and a binary heap of cursors keyed by their
 * next event's time, so memory stays at one chunk per CPU. Strings and
 * arrays are interned for the reader's life in an arena with a hash
 * index; each chunk maps its own intern indexes to those pointers.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "common.h"
#include "trace-local.h"

#define MAX_RAW_CHUNK (256u << 20)

struct seg {
	char *path;
	int fd;
	uint64_t size;
	struct seg_header h;
	struct trace_segment_info info;
};

struct chunkref {
	uint32_t seg;
	uint64_t offset;		/* of the chunk header */
	struct chunk_hdr h;
};

struct blobref {
	const void *p;
	uint32_t len;
};

struct cursor {
	uint16_t cpu;
	struct chunkref *chunks;	/* in write order */
	size_t nchunks, cap;
	size_t next_chunk;		/* index of the chunk to load next */
	/* current chunk */
	const struct seg *seg;
	uint8_t *raw;
	size_t raw_cap;
	const uint8_t *p, *end;
	uint32_t left;			/* events left in the chunk */
	uint64_t ts;
	uint32_t tid;
	uint64_t *prev;			/* [ntypes * TRACE_NARGS] of the seg */
	size_t prev_cap;
	struct blobref *blobs;
	size_t nblobs, blobs_cap;
	uint64_t chunk_offset;
	/* the next event, valid when has_ev */
	struct trace_event ev;
	int has_ev;
};

struct arena {
	uint8_t *block;
	size_t used, size;
	uint8_t **blocks;
	size_t nblocks;
};

struct intern_ent {
	uint32_t hash, len;
	const void *p;
};

struct trace_reader {
	struct seg *segs;
	size_t nsegs;
	struct cursor *cursors;
	size_t ncursors;
	size_t *heap;			/* cursor indexes */
	size_t nheap;
	ZSTD_DCtx *dctx;
	struct trace_info info;
	struct trace_reader_stats st;

	struct trace_thread *threads;	/* sorted by tid after open */
	size_t nthreads, threads_cap;

	struct arena arena;
	struct intern_ent *itab;
	size_t itab_cap, itab_n;

	struct trace_damage *damage;
	size_t ndamage;
	trace_damage_fn damage_fn;
	void *damage_arg;
	uint64_t *arrbuf;
	size_t arrbuf_cap;
};

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

static uint32_t
hash_bytes(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 16777619u;
	return h;
}

/* Intern n bytes (plus a NUL after them) for the reader's life. */
static const void *
intern(struct trace_reader *r, const void *p, size_t n)
{
	uint32_t h = hash_bytes(p, n);
	size_t mask, i;

	if (r->itab_n * 2 >= r->itab_cap) {
		size_t cap = r->itab_cap ? r->itab_cap * 2 : 1024;
		struct intern_ent *t = xcalloc(cap, sizeof(*t));

		for (size_t k = 0; k < r->itab_cap; k++) {
			if (r->itab[k].p == NULL)
				continue;
			for (i = r->itab[k].hash & (cap - 1); t[i].p;
			    i = (i + 1) & (cap - 1))
				;
			t[i] = r->itab[k];
		}
		free(r->itab);
		r->itab = t;
		r->itab_cap = cap;
	}
	mask = r->itab_cap - 1;
	for (i = h & mask; r->itab[i].p; i = (i + 1) & mask) {
		if (r->itab[i].hash == h && r->itab[i].len == n &&
		    memcmp(r->itab[i].p, p, n) == 0)
			return r->itab[i].p;
	}
	uint8_t *q = arena_alloc(&r->arena, n + 1);

	memcpy(q, p, n);
	q[n] = '\0';
	r->itab[i] = (struct intern_ent){ h, (uint32_t)n, q };
	r->itab_n++;
	return q;
}

const char *
trace_reader_intern(struct trace_reader *r, const char *s)
{
	return intern(r, s, strlen(s));
}

/* --- damage ----------------------------------------------------------- */

static void
report(struct trace_reader *r, const char *path, uint64_t off,
    const char *reason)
{
	struct trace_damage *d;

	/* Each spot is reported once, even when a seek passes it again. */
	for (size_t i = 0; i < r->ndamage; i++)
		if (r->damage[i].offset == off &&
		    strcmp(r->damage[i].path, path) == 0)
			return;
	r->damage = xreallocarray(r->damage, r->ndamage + 1, sizeof(*r->damage));
	d = &r->damage[r->ndamage++];
	d->path = path;
	d->offset = off;
	d->reason = intern(r, reason, strlen(reason));
	r->st.damaged++;
	if (r->damage_fn)
		r->damage_fn(d, r->damage_arg);
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
	if (r->nthreads == r->threads_cap) {
		r->threads_cap = r->threads_cap ? 2 * r->threads_cap : 256;
		r->threads = xreallocarray(r->threads, r->threads_cap,
		    sizeof(*r->threads));
	}
	memmove(&r->threads[lo + 1], &r->threads[lo],
	    (r->nthreads - lo) * sizeof(*r->threads));
	r->nthreads++;
	memset(&r->threads[lo], 0, sizeof(r->threads[lo]));
	r->threads[lo].tid = tid;
	return &r->threads[lo];
}

static void
thread_update(struct trace_reader *r, const struct trace_thread *t)
{
	struct trace_thread *s = thread_slot(r, t->tid);

	*s = *t;
	s->comm[TRACE_COMM_LEN - 1] = '\0';
}

const struct trace_thread *
trace_reader_thread(const struct trace_reader *r, uint32_t tid)
{
	size_t lo = 0, hi = r->nthreads;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (r->threads[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->nthreads && r->threads[lo].tid == tid ?
	    &r->threads[lo] : NULL;
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

static void
add_chunk(struct trace_reader *r, uint32_t segi, uint64_t off,
    const struct chunk_hdr *h)
{
	struct cursor *c = cursor_for(r, h->cpu);
	struct seg *s = &r->segs[segi];

	if (c->nchunks == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 64;
		c->chunks = xreallocarray(c->chunks, c->cap, sizeof(*c->chunks));
	}
	c->chunks[c->nchunks++] = (struct chunkref){ segi, off, *h };
	s->info.nchunks++;
	s->info.nevents += h->count;
	if (s->info.first_ts == 0 || h->first_ts < s->info.first_ts)
		s->info.first_ts = h->first_ts;
	if (h->last_ts > s->info.last_ts)
		s->info.last_ts = h->last_ts;
}

static int
read_at(int fd, void *buf, size_t n, uint64_t off)
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
	    read_at(s->fd, t, TRAILER_LEN, s->size - TRAILER_LEN) != 0 ||
	    memcmp(t + 16, TRAILER_MAGIC, 8) != 0)
		return -1;
	ioff = get_le64(t);
	n = get_le32(t + 8);
	ilen = INDEX_HDR_LEN + (uint64_t)n * INDEX_ENTRY_LEN;
	if (ioff < s->h.header_len || ioff + ilen + TRAILER_LEN != s->size)
		return -1;
	b = xmalloc(ilen);
	if (read_at(s->fd, b, ilen, ioff) != 0 ||
	    memcmp(b, INDEX_MAGIC, 8) != 0 || get_le32(b + 8) != n ||
	    trace_crc32(0, b, ilen) != get_le32(t + 12)) {
		free(b);
		return -1;
	}
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *e = b + INDEX_HDR_LEN + (size_t)i * INDEX_ENTRY_LEN;
		struct chunk_hdr h = { 0 };
		uint8_t hb[CHUNK_HDR_LEN];
		uint64_t off = get_le64(e);

		/* The chunk header is authoritative; the index says where. */
		if (off + CHUNK_HDR_LEN > ioff ||
		    read_at(s->fd, hb, CHUNK_HDR_LEN, off) != 0 ||
		    chunk_hdr_decode(&h, hb) != 0 ||
		    off + CHUNK_HDR_LEN + h.csize > ioff) {
			report(r, s->path, off, "damaged chunk header (skipped)");
			continue;
		}
		add_chunk(r, segi, off, &h);
	}
	free(b);
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
		if (read_at(s->fd, buf, want, off) != 0)
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
		if (off + CHUNK_HDR_LEN > s->size) {
			report(r, s->path, off, "torn chunk at the end "
			    "(writer killed or still writing)");
			return;
		}
		if (read_at(s->fd, hb, CHUNK_HDR_LEN, off) != 0)
			return;
		if (chunk_hdr_decode(&h, hb) != 0) {
			/* An index left by a clean close ends the chunks. */
			if (memcmp(hb, INDEX_MAGIC, 8) == 0)
				return;
			uint64_t next = resync(s, off + 1, &h);

			report(r, s->path, off, next == UINT64_MAX ?
			    "damaged data up to the end (skipped)" :
			    "damaged chunk (skipped)");
			if (next == UINT64_MAX)
				return;
			off = next;
		}
		if (off + CHUNK_HDR_LEN + h.csize > s->size) {
			report(r, s->path, off, "torn chunk at the end "
			    "(writer killed or still writing)");
			return;
		}
		add_chunk(r, segi, off, &h);
		off += CHUNK_HDR_LEN + h.csize;
	}
}

static int
seg_cmp(const void *a, const void *b)
{
	const struct seg *x = a, *y = b;

	return x->h.seq < y->h.seq ? -1 : x->h.seq > y->h.seq;
}

/* Open one segment file and decode its header; returns an error code. */
static int
open_seg(struct seg *s, const char *path)
{
	struct stat sb;
	uint8_t *p = NULL;
	size_t need = 4096, have = 0;
	int err;

	memset(s, 0, sizeof(*s));
	s->path = xstrdup(path);
	s->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (s->fd < 0)
		return errno;
	if (fstat(s->fd, &sb) != 0)
		return errno;
	if (!S_ISREG(sb.st_mode))
		return TRACE_EMAGIC;
	s->size = (uint64_t)sb.st_size;
	for (;;) {
		if (need > s->size)
			need = (size_t)s->size;
		p = xrealloc(p, need ? need : 1);
		if (need > have && read_at(s->fd, p + have, need - have, have)) {
			free(p);
			return TRACE_ECORRUPT;
		}
		have = need;
		err = seg_header_decode(&s->h, p, have, &need);
		if (err != EAGAIN)
			break;
		if (need > s->size) {
			err = have < SEG_MAGIC_LEN ? TRACE_EMAGIC : TRACE_ECORRUPT;
			break;
		}
	}
	free(p);
	return err;
}

static void
add_seg(struct trace_reader *r, const char *path)
{
	r->segs = xreallocarray(r->segs, r->nsegs + 1, sizeof(*r->segs));
	struct seg *s = &r->segs[r->nsegs];
	int err = open_seg(s, path);

	s->info.path = s->path;
	s->info.size = s->size;
	if (err) {
		s->info.skipped = err;
		s->info.seq = UINT64_MAX;
	} else {
		s->info.seq = s->h.seq;
	}
	r->nsegs++;
}

static int
list_dir(struct trace_reader *r, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (d == NULL)
		return errno;
	while ((de = readdir(d)) != NULL) {
		size_t n = strlen(de->d_name);

		if (strncmp(de->d_name, "seg-", 4) != 0 || n < 10 ||
		    strcmp(de->d_name + n - 6, ".argus") != 0)
			continue;
		char *path = xasprintf("%s/%s", dir, de->d_name);

		add_seg(r, path);
		free(path);
	}
	closedir(d);
	return 0;
}

static void
fill_info(struct trace_reader *r, const struct seg *newest)
{
	struct trace_info *in = &r->info;

	in->hostname = intern(r, newest->h.hostname, strlen(newest->h.hostname));
	in->release = intern(r, newest->h.release, strlen(newest->h.release));
	in->clock = intern(r, newest->h.clock, strlen(newest->h.clock));
	in->boot_id = intern(r, newest->h.boot_id, strlen(newest->h.boot_id));
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
	int err = 0, first_err = 0;
	const char *first_path = path;
	struct seg *newest = NULL;

	*rp = NULL;
	if (stat(path, &sb) != 0) {
		err = errno;
		goto fail;
	}
	if (S_ISDIR(sb.st_mode))
		err = list_dir(r, path);
	else
		add_seg(r, path);
	if (err)
		goto fail;
	if (r->nsegs > 1)
		qsort(r->segs, r->nsegs, sizeof(*r->segs), seg_cmp);
	for (size_t i = 0; i < r->nsegs; i++) {
		struct seg *s = &r->segs[i];

		s->info.path = s->path;
		if (s->info.skipped == TRACE_EVERSION) {
			/* Never silently skip newer data: refuse the trace. */
			err = TRACE_EVERSION;
			first_path = s->path;
			goto fail;
		}
		if (s->info.skipped) {
			if (!first_err) {
				first_err = s->info.skipped;
				first_path = s->path;
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

		if (s->info.skipped) {
			report(r, s->path, 0, trace_strerror(s->info.skipped));
			continue;
		}
		if (strcmp(s->h.boot_id, newest->h.boot_id) != 0) {
			s->info.skipped = ESTALE;
			report(r, s->path, 0, "recorded before the last reboot "
			    "(skipped)");
			continue;
		}
		for (size_t t = 0; t < s->h.nthreads; t++)
			thread_update(r, &s->h.threads[t]);
		if (load_index(r, (uint32_t)i) != 0)
			scan_chunks(r, (uint32_t)i);
	}
	fill_info(r, newest);
	r->dctx = ZSTD_createDCtx();
	if (r->dctx == NULL)
		abort();
	r->heap = xcalloc(r->ncursors + 1, sizeof(*r->heap));
	trace_reader_seek(r, 0);
	*rp = r;
	return 0;
fail:
	if (cause) {
		if (err == TRACE_EEMPTY)
			*cause = xasprintf("%s: no trace segment "
			    "(seg-*.argus) found", path);
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
	if (r == NULL)
		return;
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
		free(r->cursors[i].blobs);
	}
	for (size_t i = 0; i < r->arena.nblocks; i++)
		free(r->arena.blocks[i]);
	free(r->arena.blocks);
	free(r->itab);
	free(r->segs);
	free(r->cursors);
	free(r->heap);
	free(r->threads);
	free(r->damage);
	free(r->arrbuf);
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
	return r->nsegs;
}

const struct trace_segment_info *
trace_reader_segment(const struct trace_reader *r, size_t i)
{
	return i < r->nsegs ? &r->segs[i].info : NULL;
}

/* --- decoding --------------------------------------------------------- */

/* Load chunk c->next_chunk into the cursor; 0 when one is ready. */
static int
load_chunk(struct trace_reader *r, struct cursor *c)
{
	while (c->next_chunk < c->nchunks) {
		const struct chunkref *ref = &c->chunks[c->next_chunk++];
		const struct seg *s = &r->segs[ref->seg];
		uint8_t *z;
		size_t n;

		if (ref->h.rsize > MAX_RAW_CHUNK || ref->h.csize > MAX_RAW_CHUNK) {
			report(r, s->path, ref->offset, "chunk too large (skipped)");
			continue;
		}
		z = xmalloc(ref->h.csize ? ref->h.csize : 1);
		if (read_at(s->fd, z, ref->h.csize,
		    ref->offset + CHUNK_HDR_LEN) != 0) {
			free(z);
			report(r, s->path, ref->offset, "chunk cut short (skipped)");
			continue;
		}
		if (c->raw_cap < ref->h.rsize) {
			c->raw_cap = ref->h.rsize;
			free(c->raw);
			c->raw = xmalloc(c->raw_cap);
		}
		n = ZSTD_decompressDCtx(r->dctx, c->raw, ref->h.rsize, z,
		    ref->h.csize);
		free(z);
		if (ZSTD_isError(n) || n != ref->h.rsize) {
			char *why = xasprintf("chunk does not decompress (%s; "
			    "skipped)", ZSTD_isError(n) ? ZSTD_getErrorName(n) :
			    "wrong size");

			report(r, s->path, ref->offset, why);
			free(why);
			continue;
		}
		r->st.chunks_read++;
		c->seg = s;
		c->p = c->raw;
		c->end = c->raw + n;
		c->left = ref->h.count;
		c->ts = ref->h.first_ts;
		c->tid = ref->h.first_tid;
		c->chunk_offset = ref->offset;
		size_t np = (size_t)s->h.ntypes * TRACE_NARGS;

		if (c->prev_cap < np) {
			free(c->prev);
			c->prev = xmalloc(np * sizeof(*c->prev));
			c->prev_cap = np;
		}
		memset(c->prev, 0, np * sizeof(*c->prev));
		c->nblobs = 0;
		return 0;
	}
	return -1;
}

static int
decode_blob(struct trace_reader *r, struct cursor *c, int kind,
    struct trace_event *ev)
{
	uint64_t idx, n;

	if (get_varint(&c->p, c->end, &idx) != 0 || idx > c->nblobs)
		return -1;
	if (idx < c->nblobs) {
		ev->blob = c->blobs[idx].p;
		ev->blob_len = c->blobs[idx].len;
		return 0;
	}
	if (get_varint(&c->p, c->end, &n) != 0)
		return -1;
	if (kind == BK_STR) {
		if (n > (uint64_t)(c->end - c->p))
			return -1;
		ev->blob = intern(r, c->p, (size_t)n);
		ev->blob_len = (uint32_t)n;
		c->p += n;
	} else {
		uint64_t prev = 0, d;

		if (n > (uint64_t)(c->end - c->p))
			return -1;
		if (r->arrbuf_cap < n) {
			r->arrbuf_cap = n;
			r->arrbuf = xreallocarray(r->arrbuf, n, 8);
		}
		for (uint64_t i = 0; i < n; i++) {
			if (get_varint(&c->p, c->end, &d) != 0)
				return -1;
			prev += (uint64_t)unzigzag(d);
			r->arrbuf[i] = prev;
		}
		ev->blob = intern(r, r->arrbuf, (size_t)n * 8);
		ev->blob_len = (uint32_t)(n * 8);
	}
	if (c->nblobs == c->blobs_cap) {
		c->blobs_cap = c->blobs_cap ? 2 * c->blobs_cap : 64;
		c->blobs = xreallocarray(c->blobs, c->blobs_cap,
		    sizeof(*c->blobs));
	}
	c->blobs[c->nblobs++] = (struct blobref){ ev->blob, ev->blob_len };
	return 0;
}

/*
 * Decode the cursor's next event into c->ev (skipping unknown types).
 * Returns 1 with an event, 0 when the stream is exhausted.
 */
static int
cursor_advance(struct trace_reader *r, struct cursor *c)
{
	struct trace_event *ev = &c->ev;

	for (;;) {
		while (c->left == 0 || c->p >= c->end) {
			if (c->left != 0 && c->seg) {
				report(r, c->seg->path, c->chunk_offset,
				    "chunk holds fewer events than its header says");
				c->left = 0;
			}
			if (load_chunk(r, c) != 0) {
				c->has_ev = 0;
				return 0;
			}
		}
		const struct seg_header *h = &c->seg->h;
		uint64_t hd, dt, v;

		if (get_varint(&c->p, c->end, &hd) != 0 ||
		    get_varint(&c->p, c->end, &dt) != 0)
			goto bad;
		uint64_t ftype = hd >> 3;

		c->ts += (uint64_t)unzigzag(dt);
		if (hd & 4) {
			if (get_varint(&c->p, c->end, &v) != 0)
				goto bad;
			c->tid = (uint32_t)v;
		}
		if (ftype >= h->ntypes || h->type_kinds[ftype] == NULL)
			goto bad;
		const char *kinds = h->type_kinds[ftype];
		uint64_t *prev = c->prev + ftype * TRACE_NARGS;

		memset(ev->arg, 0, sizeof(ev->arg));
		for (unsigned i = 0; kinds[i]; i++) {
			if (get_varint(&c->p, c->end, &v) != 0)
				goto bad;
			switch (kinds[i]) {
			case FK_S:
				v = (uint64_t)unzigzag(v);
				break;
			case FK_D:
				v = prev[i] + (uint64_t)unzigzag(v);
				prev[i] = v;
				break;
			default:
				break;
			}
			ev->arg[i] = v;
		}
		ev->blob = NULL;
		ev->blob_len = 0;
		if (h->type_blob[ftype] != BK_NONE &&
		    decode_blob(r, c, h->type_blob[ftype], ev) != 0)
			goto bad;
		c->left--;
		ev->ts = c->ts;
		ev->tid = c->tid;
		ev->cpu = c->cpu;
		ev->flags = (uint32_t)(hd & TRACE_CTX_MASK);
		ev->type = h->type_map[ftype];
		if (ev->type == TT_SWITCH)
			c->tid = (uint32_t)ev->arg[1];
		if (ev->type == TT_NONE) {
			r->st.unknown++;
			continue;
		}
		c->has_ev = 1;
		return 1;
bad:
		report(r, c->seg->path, c->chunk_offset,
		    "undecodable events in chunk (rest of chunk skipped)");
		c->left = 0;
		c->p = c->end;
	}
}

static int
heap_less(const struct trace_reader *r, size_t a, size_t b)
{
	const struct cursor *x = &r->cursors[a], *y = &r->cursors[b];

	if (x->ev.ts != y->ev.ts)
		return x->ev.ts < y->ev.ts;
	/* Metadata first at equal times, then by CPU. */
	return (uint16_t)(x->cpu + 1) < (uint16_t)(y->cpu + 1);
}

static void
sift_down(struct trace_reader *r, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;

		if (l < r->nheap && heap_less(r, r->heap[l], r->heap[m]))
			m = l;
		if (l + 1 < r->nheap && heap_less(r, r->heap[l + 1], r->heap[m]))
			m = l + 1;
		if (m == i)
			return;
		size_t t = r->heap[i];

		r->heap[i] = r->heap[m];
		r->heap[m] = t;
		i = m;
	}
}

/* Position each cursor at its first chunk ending at or after ts. */
int
trace_reader_seek(struct trace_reader *r, uint64_t ts)
{
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
		c->p = c->end = NULL;
		while (cursor_advance(r, c) && c->ev.ts < ts)
			;
		if (c->has_ev)
			r->heap[r->nheap++] = i;
	}
	for (size_t i = r->nheap; i-- > 0;)
		sift_down(r, i);
	return 0;
}

int
trace_reader_next(struct trace_reader *r, struct trace_event *ev)
{
	struct cursor *c;

	if (r->nheap == 0)
		return 0;
	c = &r->cursors[r->heap[0]];
	*ev = c->ev;
	if (!cursor_advance(r, c))
		r->heap[0] = r->heap[--r->nheap];
	sift_down(r, 0);
	r->st.events++;
	if (ev->type == TT_THREAD) {
		struct trace_thread t = { 0 };

		t.tid = (uint32_t)ev->arg[0];
		t.pid = (uint32_t)ev->arg[1];
		t.ppid = (uint32_t)ev->arg[2];
		t.start_ts = ev->arg[3];
		t.flags = (uint32_t)ev->arg[4];
		if (ev->blob)
			snprintf(t.comm, sizeof(t.comm), "%s",
			    (const char *)ev->blob);
		thread_update(r, &t);
	} else if (ev->type == TT_LOST) {
		r->st.lost += ev->arg[0];
	}
	return 1;
}

size_t
trace_reader_read(struct trace_reader *r, struct trace_event *evs, size_t n)
{
	size_t i = 0;

	while (i < n && trace_reader_next(r, &evs[i]))
		i++;
	return i;
}

void
trace_reader_stats(const struct trace_reader *r, struct trace_reader_stats *st)
{
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
