/*
 * reader-local.h: the reader's internals, shared by reader.c (opening a
 * trace: segments, seek index or chunk scan, thread table, interning,
 * damage), reader-decode.c (cursors, decoding, the time merge) and
 * reader-pre.c (decoding ahead on a helper thread).
 *
 * A cursor follows one CPU stream through its chunks in write order; the
 * heap orders cursors by the time of their next event, with its keys
 * inline so the merge touches only the heap.
 */
#ifndef ARGUS_READER_LOCAL_H
#define ARGUS_READER_LOCAL_H

#include <pthread.h>
#include <zstd.h>

#include "common/hmap.h"
#include "trace-local.h"

struct seg {
	char *path;
	int fd;
	uint64_t size;
	uint64_t max_ts;		/* no event after this (mtime) */
	uint64_t name_seq;		/* seq in the file name, or UINT64_MAX */
	const char *skip_reason;	/* why it is skipped, when not an error */
	struct seg_header h;
	struct trace_segment_info info;
};

/*
 * A chunk the reader knows of. Found by walking, h is its header, read and
 * checked. Found through a seek index, h holds only what the index says
 * (cpu, count, times) and span the bytes up to the next chunk or the
 * index: the header is read and checked against the entry each time the
 * chunk is decompressed (load_ref()), so that opening a trace reads no
 * chunk header.
 */
struct chunkref {
	uint32_t seg;
	uint32_t span;			/* indexed: most bytes it may take;
					   0: found by walking */
	uint64_t offset;		/* of the chunk header */
	struct chunk_hdr h;
};

struct blobref {
	const void *p;
	uint32_t len;
};

/* One column of a chunk being decoded (the whole body in format 1). */
struct col {
	const uint8_t *p, *end;
};

struct cursor {
	uint16_t cpu;
	uint64_t last_ts;		/* of the last chunk added */
	struct chunkref *chunks;	/* in write order */
	size_t nchunks, cap;
	size_t next_chunk;		/* index of the chunk to load next */
	/* current chunk */
	const struct seg *seg;
	const struct type_plan *plan;	/* of seg */
	uint32_t nplan;
	uint8_t *raw;
	size_t raw_cap;
	/* the chunk's columns: format 1 has one, the body, which every
	   pointer below names; format 2 one per directory entry, and
	   cols[0] empty for the columns the chunk lacks */
	struct col *cols;
	size_t cols_cap;
	struct col *hcol, *dcol, *tcol, *bcol;	/* headers, deltas, tids,
						   blobs */
	struct col **fcol;		/* [ntypes * TRACE_NARGS] of the seg */
	size_t fcol_cap;
	int zigzag_dt;			/* format 1: deltas are zigzag */
	uint32_t left;			/* events left in the chunk */
	uint64_t ts;
	uint32_t tid;
	uint64_t *prev;			/* [ntypes * TRACE_NARGS] of the seg */
	size_t prev_cap;
	struct blobref *blobs;
	size_t nblobs, blobs_cap;
	uint64_t *arrbuf;		/* an array blob being decoded */
	size_t arrbuf_cap;
	uint64_t chunk_offset;
	/* the next event: its header and time, valid when has_ev */
	uint64_t hd;
	int has_ev;
	struct trace_event scratch;	/* where unknown types are dropped */
	/* decoding ahead (trace_reader_decode_ahead()): the chunk being
	   read, as events; NULL when chunks decode as they are read */
	struct trace_event *dev;
	size_t ndev, idev, dev_cap;
	int defs_only;			/* reading a segment's stack
					   definitions (reader-stacks.c):
					   refs are left, no chunk counted */
};

/* A heap entry keeps its keys inline: the merge compares only these. */
struct heap_entry {
	uint64_t ts;
	uint32_t order;			/* metadata first, then by CPU */
	uint32_t idx;			/* cursor */
};

struct arena {
	uint8_t *block;
	size_t used, size;
	uint8_t **blocks;
	size_t nblocks;
};

/* An interned string or array, in the arena; data is 8-byte aligned. */
struct interned {
	struct interned *next;		/* same hash */
	uint64_t len;
	uint8_t data[];			/* len bytes and a NUL */
};

struct trace_reader {
	struct seg *segs;
	size_t nsegs;
	struct cursor *cursors;
	size_t ncursors;
	struct heap_entry *heap;		/* cursors by next event time */
	size_t nheap;
	ZSTD_DCtx *dctx;
	struct trace_info info;
	struct trace_reader_stats st;

	struct trace_thread *threads;	/* sorted by tid after open */
	size_t nthreads, threads_cap;
	struct trace_thread *ahead;	/* first record of each thread in the
					   whole trace, sorted by tid
					   (reader-ahead.c) */
	size_t nahead;

	struct arena arena;
	struct hmap interned;		/* hash -> struct interned chain */

	struct trace_damage *damage;
	size_t ndamage;
	trace_damage_fn damage_fn;
	void *damage_arg;
	int stack_warned;		/* a malformed stack was reported (one
					   warning for them all) */
	int ref_warned;			/* and a stack naming a missing
					   definition */
	struct stackdefs **defs;	/* per segment: its stack
					   definitions, read when first
					   needed (reader-stacks.c) */
	pthread_mutex_t defs_lock;	/* taken to read them, before the
					   lock below, never after */
	trace_progress_fn progress_fn;
	void *progress_arg;
	pthread_mutex_t lock;		/* interning, damage, for bulk decoding */
	struct trace_chunk_info *cinfo;	/* bulk view of the chunks */
	struct { uint32_t cur, k; } *cmap;
	size_t ncinfo;
	struct pre *pre;		/* decoding ahead, or NULL */
	struct multi *multi;		/* several hosts' readers merged
					   (reader-multi.c), or NULL */
};

/*
 * A merged reader (reader-multi.c): these stand for the functions of the
 * same name without rm_ when r->multi is set.
 */
int rm_seek(struct trace_reader *r, uint64_t ts);
size_t rm_read(struct trace_reader *r, struct trace_event *evs, size_t n);
int rm_next(struct trace_reader *r, struct trace_event *ev);
void rm_stats(const struct trace_reader *r, struct trace_reader_stats *st);
size_t rm_decode_chunk(struct trace_reader *r, size_t i,
    struct trace_chunk_buf *b, struct trace_event *evs);
size_t rm_decode_chunk_only(struct trace_reader *r, size_t i,
    struct trace_chunk_buf *b, struct trace_event *evs, const uint8_t *want);
int rm_read_ahead_threads(struct trace_reader *r);
int rm_read_threads(struct trace_reader *r);
int rm_decode_ahead(struct trace_reader *r);
size_t rm_nsegments(const struct trace_reader *r);
const struct trace_segment_info *rm_segment(const struct trace_reader *r,
    size_t i);
void rm_close(struct trace_reader *r);


/*
 * Intern n bytes (plus a NUL after them) for the reader's life. Takes the
 * reader's lock; rd_report() does too, so neither is called with it held.
 */
const void *rd_intern(struct trace_reader *r, const void *p, size_t n);
/* Record a damaged spot once and tell the damage callback. */
void rd_report(struct trace_reader *r, const char *path, uint64_t off,
    const char *reason);
void rd_thread_update(struct trace_reader *r, const struct trace_thread *t);
/* Decoding state (zstd context, a cursor's buffers) for one thread. */
struct trace_chunk_buf {
	struct cursor c;
	ZSTD_DCtx *dctx;
};

/* Decode the chunk of ref whole into evs (room for its count) with b:
   how many events, those before a damaged spot (reported as a cursor
   reading it would). */
size_t rd_decode_ref(struct trace_reader *r, struct trace_chunk_buf *b,
    const struct chunkref *ref, struct trace_event *evs);
/* As rd_decode_ref(), keeping only the events of the types want[type]
   names (want NULL: all), the others read no further than needed. */
size_t rd_decode_ref_only(struct trace_reader *r, struct trace_chunk_buf *b,
    const struct chunkref *ref, struct trace_event *evs, const uint8_t *want);
/*
 * Stacks (reader-stacks.c). rd_stack_resolve: TT_STACK ev of segment s
 * names its frames by ref (ev->arg[2] != 0): give it the frames of the
 * segment's definition and ref 0, or, when the segment has none, no
 * frames (a malformed stack, skipped). Reads the segment's definitions
 * the first time (thread-safe). rd_stacks_free: their memory.
 * rd_each_def (reader-decode.c): call fn on every well-formed
 * TT_STACKDEF of the chunk of ref, decoded with b (its cursor's
 * defs_only set).
 */
void rd_stack_resolve(struct trace_reader *r, const struct seg *s,
    struct trace_event *ev);
void rd_stacks_free(struct trace_reader *r);
void rd_each_def(struct trace_reader *r, struct trace_chunk_buf *b,
    const struct chunkref *ref,
    void (*fn)(void *arg, const struct trace_event *ev), void *arg);
/* Segments (reader-seg.c): add the file name (at dirfd, or path when
   dirfd is -1) to r->segs, its header decoded or why it is skipped; add
   the files seg-*.argus of directory dir (an error code, *cause set
   when the directory is refused); sort r->segs and skip the ones not to
   read; warn of the skipped ones; the one-line cause of a trace refused
   because s, its first segment, is skipped (malloc'd). */
void rd_add_seg(struct trace_reader *r, int dirfd, const char *name,
    const char *path);
int rd_list_dir(struct trace_reader *r, const char *dir, char **cause);
void rd_sort_segments(struct trace_reader *r);
void rd_report_skipped(struct trace_reader *r);
char *rd_skip_cause(const struct seg *s);
/* Tell the progress callback that a cursor took a chunk. */
void rd_took_chunk(struct trace_reader *r);
/* The next chunk of cursor c, decoded ahead (reader-pre.c), into c->dev;
   0, or -1 when its stream is exhausted. */
int rd_pre_next(struct trace_reader *r, struct cursor *c);
/* Stop decoding ahead (trace_reader_decode_ahead()), dropping what was
   decoded: the cursors must be placed again (a seek, or the close). */
void rd_pre_stop(struct trace_reader *r);
/* The thread record a TT_THREAD event holds. */
void rd_thread_of(const struct trace_event *ev, struct trace_thread *t);
/* The thread tid of v[0 .. n), sorted by tid; NULL when absent. */
const struct trace_thread *rd_thread_find(const struct trace_thread *v,
    size_t n, uint32_t tid);

#endif
