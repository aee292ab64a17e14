/*
 * trace-local.h: internals shared by the trace store's files.
 *
 * Field kinds say how a numeric field is encoded before compression:
 * FK_U unsigned varint, FK_S zigzag varint, FK_D zigzag delta against the
 * same field of the previous event of the same type in the chunk (for
 * addresses and counters that move by small steps), FK_T like FK_U but a
 * thread id. A type has at most one variable field: BK_STR (string) or
 * BK_ARR (array of u64, stored as zigzag deltas), interned per chunk.
 */
#ifndef ARGUS_TRACE_LOCAL_H
#define ARGUS_TRACE_LOCAL_H

#include <stdint.h>
#include <string.h>

#include "trace.h"

enum field_kind { FK_U = 'u', FK_S = 's', FK_D = 'd', FK_T = 't' };
enum blob_kind { BK_NONE = 0, BK_STR = 1, BK_ARR = 2 };

struct type_desc {
	const char *name;
	const char *kinds;		/* one FK_* letter per numeric field */
	const char *args[TRACE_NARGS];
	int blob;			/* enum blob_kind */
	const char *blob_name;
};

extern const struct type_desc trace_types[TT_NTYPES];

/* File layout constants (argus-trace(5)). */
#define SEG_MAGIC "ARGUSSEG"
#define SEG_MAGIC_LEN 8
#define CHUNK_MAGIC 0x4b4e4843u		/* "CHNK" little-endian */
#define CHUNK_HDR_LEN 44
#define INDEX_MAGIC "ARGUSIDX"
#define INDEX_ENTRY_LEN 32
#define TRAILER_LEN 24
#define INDEX_HDR_LEN 16
#define TRAILER_MAGIC "ARGUSEND"
#define SEG_FIXED_LEN 24		/* magic, version, header length, crc */
#define TRACE_REC_ID_LEN 16		/* random id of a recording */
#define SEG_EXT_REC_ID 1		/* extension tag: the recording's id */
#define SEG_EXT_RECORDER 2		/* extension tag: the backend's name */
#define SEG_EXT_RECORDER_MAX 32	/* its longest length */
#define SEG_EXT_RECORDER_PID 3	/* extension tag: the recorder's pid,
				   4 bytes little-endian */

struct chunk_hdr {
	uint32_t magic;
	uint16_t cpu;
	uint16_t flags;
	uint32_t count;			/* events */
	uint32_t csize;			/* bytes of the zstd frame */
	uint32_t rsize;			/* bytes after decompression */
	uint64_t first_ts, last_ts;
	uint32_t first_tid;		/* thread current at the start */
	uint32_t crc;			/* of the 40 bytes before */
};

/*
 * What a chunk header may say (argus-trace(5)): at most MAX_RAW_CHUNK
 * bytes compressed and decompressed; decompressed, at most
 * ZSTD_MAX_EXPANSION times its compressed size (a zstd block makes 128
 * KiB at most and takes 4 bytes at least); and at most CHUNK_MAX_EVENTS
 * events, each of CHUNK_MIN_EVENT_LEN decompressed bytes at least (its
 * type and its time delta, a varint each). The writer keeps to these,
 * and readers allocate by a chunk's count only once it holds to them.
 */
#define MAX_RAW_CHUNK (256u << 20)
#define ZSTD_MAX_EXPANSION 32768u
#define CHUNK_MIN_EVENT_LEN 2
#define CHUNK_MAX_EVENTS (1u << 22)

uint32_t trace_crc32(uint32_t crc, const void *buf, size_t len);

void chunk_hdr_encode(const struct chunk_hdr *h, uint8_t out[CHUNK_HDR_LEN]);
/* Returns 0 when magic and crc hold. */
int chunk_hdr_decode(struct chunk_hdr *h, const uint8_t in[CHUNK_HDR_LEN]);
/* The most events a chunk of csize compressed bytes may hold. */
uint32_t chunk_max_events(uint64_t csize);
/* NULL when the sizes and the count of a decoded header are possible,
   else why not (a damage report's reason). */
const char *chunk_hdr_impossible(const struct chunk_hdr *h);

/* --- little-endian and varint helpers --------------------------------- */

static inline void
put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void
put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void
put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint16_t
get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t
get_le32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static inline uint64_t
get_le64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static inline uint64_t
zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t
unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* Write a varint at p (room for 10 bytes); returns the new end. */
static inline uint8_t *
put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/*
 * Read a varint from [*pp, end). Returns 0 and advances, or -1 when the
 * input ends or the varint is longer than 10 bytes.
 */
static inline int
get_varint(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
	const uint8_t *p = *pp;
	uint64_t v = 0;
	unsigned shift = 0;

	if (p < end && *p < 0x80) {
		*out = *p;
		*pp = p + 1;
		return 0;
	}
	while (p < end && shift < 64) {
		uint8_t b = *p++;

		v |= (uint64_t)(b & 0x7f) << shift;
		if (b < 0x80) {
			*out = v;
			*pp = p;
			return 0;
		}
		shift += 7;
	}
	return -1;
}

/* FNV-1a hash of n bytes (interning in the writer and the reader). */
static inline uint32_t
trace_hash_bytes(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 16777619u;
	return h;
}

/*
 * pread exactly n bytes at off; -1 on error or end of file (reader.c;
 * the reader and the snapshot use it).
 */
int rd_read_at(int fd, void *buf, size_t n, uint64_t off);

/* --- buffer ---------------------------------------------------------- */

struct buf {
	uint8_t *data;
	size_t len, cap;
};

void buf_reserve(struct buf *b, size_t more);
void buf_put(struct buf *b, const void *p, size_t n);
void buf_varint(struct buf *b, uint64_t v);
void buf_str(struct buf *b, const char *s);
void buf_free(struct buf *b);

/* --- segment header (segment.c) -------------------------------------- */

/* How to decode one file type: a flat record so decoding chases no pointers. */
struct type_plan {
	uint16_t local;			/* this build's type, TT_NONE if unknown */
	uint8_t blob;			/* enum blob_kind */
	uint8_t nargs;
	char kinds[TRACE_NARGS + 1];	/* FK_* letters, NUL-terminated */
	uint8_t valid;			/* the schema defines this id */
};

struct seg_header {
	uint32_t version;
	uint64_t seq;
	uint64_t created_ts;		/* trace clock at creation */
	int64_t realtime_offset;
	uint32_t ncpus;
	char *clock, *hostname, *release, *boot_id;
	char *recorder;			/* extension SEG_EXT_RECORDER, or NULL */
	uint32_t recorder_pid;		/* SEG_EXT_RECORDER_PID, or 0 */
	/* schema: file type id -> local type (TT_NONE when unknown) */
	uint32_t ntypes;
	uint16_t *type_map;
	uint8_t *type_nargs;		/* fields per file type */
	char **type_kinds;		/* field kinds per file type */
	uint8_t *type_blob;		/* blob kind per file type */
	struct type_plan *plan;		/* [ntypes], built from the above */
	/* thread table */
	size_t nthreads;
	struct trace_thread *threads;
	/* extensions (after the thread table): the recording's id */
	int has_rec_id;
	uint8_t rec_id[TRACE_REC_ID_LEN];
	uint32_t header_len;		/* bytes up to the first chunk */
};

/*
 * Columns of a format 2 chunk (argus-trace(5)): the body starts with a
 * directory (varint count, then per column a varint id and a varint
 * length), then the columns in directory order. Column COL_FIELD(t, k)
 * holds field k of the events of file type t.
 */
enum { COL_HDR, COL_DT, COL_TID, COL_BLOB, COL_FIELDS = 8 };
#define COL_STRIDE 8
#define COL_FIELD(ftype, k) (COL_FIELDS + (ftype) * COL_STRIDE + (k))

/* Encode this build's header (schema from trace_types) into b, as format
   h->version (0: TRACE_FORMAT_VERSION). */
void seg_header_encode(struct buf *b, const struct seg_header *h);
/*
 * Decode a header from the start of a file image prefix. Returns 0,
 * TRACE_EMAGIC, TRACE_EVERSION or TRACE_ECORRUPT (or EAGAIN when more
 * bytes are needed: *need says how many in all).
 */
int seg_header_decode(struct seg_header *h, const uint8_t *p, size_t len,
    size_t *need);
void seg_header_free(struct seg_header *h);

#endif
