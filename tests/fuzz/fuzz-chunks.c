/*
 * fuzz-chunks.c: libFuzzer target for the fields of chunk headers, seek
 * index entries and the trailer of a segment (counts, sizes, offsets,
 * times, CPUs), which a reader must not trust beyond what the file can
 * hold: a count sizes the arrays a chunk is decoded into.
 *
 * The input is one segment file. Before reading it, the target makes
 * every CRC match again (the segment header's, each chunk header's met
 * walking from the segment header, the index's), so that a mutated field
 * reaches the reader's bounds rather than its CRC checks (fuzz-reader.c
 * covers those). The custom mutator sets one such field, found by
 * walking the file, to a value at or past a bound, or mutates bytes as
 * libFuzzer does. The reader must then open the file or refuse it with
 * a cause, count no chunk past CHUNK_MAX_EVENTS, and read every chunk,
 * alone into an array of its count, ahead, and merged, without a crash
 * or an allocation past libFuzzer's limit.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzz-segment.h"
#include "trace/trace.h"
#include "trace/trace-local.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max,
    unsigned int seed);
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max);

/* A field of the file: where, how wide (4 or 8 bytes). */
struct field {
	size_t off;
	unsigned len;
};

/*
 * The fields of b (len bytes) a reader takes sizes, counts, offsets and
 * times from, into f (room for max); how many. With fix, the CRCs of the
 * segment header, of each chunk header walked and of the index are made
 * to match again.
 */
static size_t
fields(uint8_t *b, size_t len, struct field *f, size_t max, int fix)
{
	size_t n = 0;
	uint64_t off;

#define ADD(o, l) do { if (n < max) f[n++] = (struct field){ (o), (l) }; } while (0)
	if (len < SEG_FIXED_LEN || memcmp(b, SEG_MAGIC, SEG_MAGIC_LEN) != 0)
		return 0;
	off = get_le32(b + 12);
	ADD(12, 4);
	if (fix && off >= SEG_FIXED_LEN && off <= len)
		put_le32(b + 16, trace_crc32(0, b + SEG_FIXED_LEN,
		    off - SEG_FIXED_LEN));
	/* the chunks, as a walk without the index finds them */
	while (off + CHUNK_HDR_LEN <= len && get_le32(b + off) == CHUNK_MAGIC) {
		ADD(off + 4, 4);		/* cpu and flags */
		ADD(off + 8, 4);		/* count */
		ADD(off + 12, 4);		/* csize */
		ADD(off + 16, 4);		/* rsize */
		ADD(off + 20, 8);		/* first time */
		ADD(off + 28, 8);		/* last time */
		if (fix)
			put_le32(b + off + 40, trace_crc32(0, b + off, 40));
		off += CHUNK_HDR_LEN + (uint64_t)get_le32(b + off + 12);
	}
	/* the trailer and the index it points at */
	if (len >= TRAILER_LEN + INDEX_HDR_LEN &&
	    memcmp(b + len - 8, TRAILER_MAGIC, 8) == 0) {
		uint8_t *t = b + len - TRAILER_LEN;
		uint64_t ioff = get_le64(t);
		uint64_t ne = get_le32(t + 8);

		ADD(len - TRAILER_LEN, 8);
		ADD(len - TRAILER_LEN + 8, 4);
		if (ioff <= len - TRAILER_LEN && ne <= (len - TRAILER_LEN -
		    ioff) / INDEX_ENTRY_LEN &&
		    ioff + INDEX_HDR_LEN + ne * INDEX_ENTRY_LEN <=
		    len - TRAILER_LEN) {
			ADD(ioff + 8, 4);
			for (uint64_t i = 0; i < ne; i++) {
				size_t e = ioff + INDEX_HDR_LEN + i * INDEX_ENTRY_LEN;

				ADD(e, 8);	/* chunk offset */
				ADD(e + 8, 8);
				ADD(e + 16, 8);
				ADD(e + 24, 4);	/* count */
				ADD(e + 28, 4);	/* cpu */
			}
			if (fix)
				put_le32(t + 12, trace_crc32(0, b + ioff,
				    INDEX_HDR_LEN + ne * INDEX_ENTRY_LEN));
		}
	}
#undef ADD
	return n;
}

static uint64_t
next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

size_t
LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max,
    unsigned int seed)
{
	struct field f[512];
	uint64_t s = seed * 2654435761u + 1;
	size_t n;

	if (next_rand(&s) % 3 == 0 ||
	    (n = fields(data, size, f, 512, 0)) == 0)
		return LLVMFuzzerMutate(data, size, max);
	const struct field *x = &f[next_rand(&s) % n];
	uint64_t old = x->len == 8 ? get_le64(data + x->off) :
	    get_le32(data + x->off);
	const uint64_t picks[] = {
		0, 1, 2, old - 1, old + 1, old * 2, old / 2, old << 16,
		UINT32_MAX, UINT32_MAX - 1, 0x80000000u, 0x7fffffffu,
		CHUNK_MAX_EVENTS, CHUNK_MAX_EVENTS + 1, MAX_RAW_CHUNK,
		MAX_RAW_CHUNK + 1, old * ZSTD_MAX_EXPANSION,
		old * ZSTD_MAX_EXPANSION + 1, old / CHUNK_MIN_EVENT_LEN + 1,
		size, size - 1, size + 1, UINT64_MAX, next_rand(&s),
	};
	uint64_t v = picks[next_rand(&s) % (sizeof(picks) / sizeof(picks[0]))];

	if (x->len == 8)
		put_le64(data + x->off, v);
	else
		put_le32(data + x->off, (uint32_t)v);
	return size;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trace_reader *r;
	struct trace_event ev;
	uint8_t *b = malloc(size + 1);
	struct field f[1];

	if (b == NULL)
		abort();
	memcpy(b, data, size);
	(void)fields(b, size, f, 0, 1);		/* the CRCs made to match */
	r = fz_open("argus-fuzz-chunks", b, size);
	free(b);
	if (r == NULL)
		return 0;
	/* each chunk alone, into an array of its count, as the graph's
	   reading and the thread records read ahead do */
	struct trace_chunk_buf *cb = trace_chunk_buf_new();

	for (size_t i = 0; i < trace_reader_nchunks(r); i++) {
		const struct trace_chunk_info *ci = trace_reader_chunk(r, i);

		if (ci->count > CHUNK_MAX_EVENTS)
			abort();	/* a count past what a chunk holds */
		struct trace_event *evs = malloc(((size_t)ci->count + 1) *
		    sizeof(*evs));

		if (evs == NULL)
			abort();
		if (trace_reader_decode_chunk(r, i, cb, evs) > ci->count)
			abort();
		free(evs);
	}
	trace_chunk_buf_free(cb);
	(void)trace_reader_read_ahead_threads(r);
	/* merged, then merged with chunks decoded ahead: the same events */
	size_t n = 0;
	uint64_t sum = 0;

	trace_reader_seek(r, 0);
	for (; n < FZ_MAX_EVENTS && trace_reader_next(r, &ev); n++)
		sum += fz_mix(&ev);
	fz_same_ahead(r, n, sum);
	trace_reader_close(r);
	return 0;
}
