/*
 * writer-local.h: the trace writer's state, shared by writer.c (segment
 * files, chunks, the size bound) and writer-stream.c (encoding events).
 *
 * struct trace_writer holds one struct stream per CPU plus the metadata
 * stream; a stream holds the pending events of its next chunk and the
 * encoder state (previous time, current thread, previous value of each
 * delta field, a small intern table of the chunk's strings).
 *
 * struct stk_table holds the stacks defined for the open segment
 * (writer-stacks.c): each TT_STACK event names one by its id, and the
 * stack's frames are in the segment once, in a TT_STACKDEF record of the
 * metadata stream. A definition is pending while the metadata chunk that
 * holds it is not written; a stream whose chunk names a pending one
 * writes the metadata chunk first (wait_gen), so no chunk on disk names
 * a definition that is not.
 */
#ifndef TRACE_WRITER_LOCAL_H
#define TRACE_WRITER_LOCAL_H

#include <zstd.h>

#include "common/hmap.h"
#include "trace-local.h"

#define DEFAULT_CHUNK (512u << 10)
#define MIN_SEGMENT TRACE_MIN_SEGMENT
#define INTERN_SLOTS 1024		/* per chunk; power of two */
#define NCOLS (COL_FIELDS + TT_NTYPES * COL_STRIDE)
#define COL_KEEP (64u << 10)		/* a column keeps this much */

struct intern_slot {
	uint32_t hash;
	uint32_t idx;			/* table index + 1; 0 empty */
	uint32_t off, len;		/* key bytes in keys */
};

struct stream {
	struct buf raw;			/* format 1: the events; format 2:
					   the chunk being compressed */
	struct buf col[NCOLS];		/* format 2: the events' columns */
	size_t pending;			/* raw bytes of the chunk so far */
	uint32_t count;
	uint64_t first_ts, prev_ts;
	uint32_t first_tid, cur_tid;
	uint64_t prev[TT_NTYPES][TRACE_NARGS];
	struct intern_slot slots[INTERN_SLOTS];
	uint32_t nintern;
	struct buf keys;
	int used;
	uint64_t wait_gen;		/* w->meta_chunks + 1 when the chunk
					   names a definition pending in the
					   metadata stream; else less */
};

/* A stack defined for the open segment: its frames at off in the
   table's frames, and the metadata chunks written when its definition
   was added (pending while that is still w->meta_chunks). */
struct stk_ent {
	uint64_t hash;
	uint32_t id;
	uint32_t off, len;
	uint64_t gen;
};

struct stk_table {
	struct hmap by_hash;		/* hash of the frames -> index in v */
	struct stk_ent *v;		/* by increasing id */
	size_t n, cap;
	struct buf frames;
	uint32_t next_id;
	int depth;			/* segments opened by one chunk's
					   flush (wr_stacks_rolled) */
};

struct segfile {
	uint64_t seq;
	uint64_t size;
};

struct index_entry {
	uint64_t offset, first_ts, last_ts;
	uint32_t count;
	uint16_t cpu;
};

struct trace_writer {
	int dirfd, lockfd, segfd;
	struct trace_writer_opts o;
	char *clock, *hostname, *release, *boot_id;
	uint32_t chunk_size;

	struct stream **streams;	/* by cpu; [nstreams-1] is metadata */
	size_t nstreams;

	struct segfile *segs;		/* on disk, oldest first; last is open */
	size_t nsegs;
	int open_seg;			/* the last of segs is being written */
	uint64_t closed_bytes;		/* sum of sizes but the open one */
	struct index_entry *index;
	size_t nindex, index_cap;

	struct trace_thread *threads;
	size_t nthreads, threads_cap;

	struct stk_table stk;		/* stacks of the open segment */
	uint64_t meta_chunks;		/* metadata chunks written */

	uint8_t rec_id[TRACE_REC_ID_LEN];	/* in every segment header */

	ZSTD_CCtx *cctx;
	struct buf zbuf;
	struct trace_writer_stats st;
	int failed;			/* first write error: sticky */
	char err[256];
};

/* The stream of cpu (TRACE_CPU_META: the metadata stream), created or
   grown to when new, and its index in w->streams (writer-stream.c). */
struct stream *wr_stream(struct trace_writer *w, unsigned cpu, size_t *idx);
/* Encode ev into stream s, the stream of ev->cpu, whose order it keeps
   (metadata events too early take the stream's last time). */
void wr_put(struct trace_writer *w, struct stream *s,
    const struct trace_event *ev);
/* Write the chunk of stream idx when it is full: 0 or the error. */
int wr_full(struct trace_writer *w, size_t idx);
/* Empty a stream for its next chunk (writer-stream.c). */
void wr_stream_reset(struct stream *s);
/* Format 2: the directory of the stream's columns, then the columns, in
   s->raw (writer-stream.c). */
void wr_join_columns(struct stream *s);
/*
 * Compress a stream's pending events and append them as one chunk. The
 * first failure (a full disk, say) is kept: the files stay as they were
 * after the last good chunk and every later call returns that error
 * (writer.c).
 */
int wr_flush_stream(struct trace_writer *w, size_t cpu);

/*
 * Stacks (writer-stacks.c). wr_add_stack: add TT_STACK ev, in order on
 * stream idx, naming its stack by ref when well formed (defined first
 * when new in the segment). wr_stacks_rolled: a segment was just
 * opened, for a chunk starting at ts: keep the definitions that go to
 * it (pending) and, defined again, those the pending chunks name; 1
 * when some were, so that the chunk being written must be encoded
 * again (the metadata stream first). wr_stacks_free: the table's
 * memory.
 */
int wr_add_stack(struct trace_writer *w, const struct trace_event *ev,
    size_t idx);
int wr_stacks_rolled(struct trace_writer *w, uint64_t ts);
void wr_stacks_free(struct trace_writer *w);

#endif
