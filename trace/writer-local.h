/*
 * writer-local.h: the trace writer's state, shared by writer.c (segment
 * files, chunks, the size bound) and writer-stream.c (encoding events).
 *
 * struct trace_writer holds one struct stream per CPU plus the metadata
 * stream; a stream holds the pending events of its next chunk and the
 * encoder state (previous time, current thread, previous value of each
 * delta field, a small intern table of the chunk's strings).
 */
#ifndef TRACE_WRITER_LOCAL_H
#define TRACE_WRITER_LOCAL_H

#include <zstd.h>

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
	uint64_t meta_ts;

	uint8_t rec_id[TRACE_REC_ID_LEN];	/* in every segment header */

	ZSTD_CCtx *cctx;
	struct buf zbuf;
	struct trace_writer_stats st;
	int failed;			/* first write error: sticky */
	char err[256];
};

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

#endif
