/*
 * test-store-bounds.c: what a reader believes of a chunk header, through
 * real files whose headers (or index entries) say more than their chunks
 * can hold, with their CRCs made to match.
 *
 * A chunk's count sizes the arrays its events are decoded into: a header
 * counting more events than its bytes can hold costs that chunk, with
 * one warning, never an allocation for the events it claims. The writer
 * keeps to the same bounds.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/common.h"
#include "trace/trace.h"
#include "trace/trace-local.h"
#include "store-check.h"

/* The bytes of the file at path (*len of them), malloc'd. */
static uint8_t *
slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY);
	struct stat sb;

	cr_assert_geq(fd, 0);
	cr_assert_eq(fstat(fd, &sb), 0);
	uint8_t *b = xmalloc((size_t)sb.st_size + 1);

	cr_assert_eq(pread(fd, b, (size_t)sb.st_size, 0), sb.st_size);
	close(fd);
	*len = (size_t)sb.st_size;
	return b;
}

static void
spill(const char *path, const uint8_t *b, size_t len)
{
	int fd = open(path, O_WRONLY | O_TRUNC);

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, b, len), (ssize_t)len);
	close(fd);
}

/*
 * Pass the header of the k-th chunk of the segment at path (of CPU cpu
 * when cpu >= 0: the k-th of that stream) through lie(), its CRC made
 * to match again, and drop the segment's index so that its chunks are
 * walked. Returns the chunk's offset; *count is its true count.
 */
static uint64_t
lie_in_header(const char *path, int k, int cpu,
    void (*lie)(struct chunk_hdr *), uint32_t *count)
{
	size_t len, off;
	uint8_t *b = slurp(path, &len);
	uint64_t at = 0;
	struct chunk_hdr h;

	off = get_le32(b + 12);
	for (int i = 0; off + CHUNK_HDR_LEN <= len &&
	    chunk_hdr_decode(&h, b + off) == 0;) {
		if (cpu < 0 || h.cpu == cpu) {
			if (i == k) {
				*count = h.count;
				lie(&h);
				chunk_hdr_encode(&h, b + off);
				at = off;
			}
			i++;
		}
		off += CHUNK_HDR_LEN + h.csize;
	}
	cr_assert_neq(at, 0, "no chunk %d of cpu %d", k, cpu);
	spill(path, b, off);	/* the index and trailer left out */
	free(b);
	return at;
}

static void
count_all(struct chunk_hdr *h)
{
	h->count = UINT32_MAX;
}

/* one event more than two bytes apiece allow */
static void
count_one_more(struct chunk_hdr *h)
{
	h->count = h->rsize / CHUNK_MIN_EVENT_LEN + 1;
}

/* more bytes than the frame can make, and events to fill them */
static void
rsize_past_frame(struct chunk_hdr *h)
{
	h->rsize = h->csize * ZSTD_MAX_EXPANSION + 1;
	h->count = h->rsize / CHUNK_MIN_EVENT_LEN;
}

/* Every chunk decoded into an array of its count, and read by the
   merge: returns the events the merge gave (as fixture events). */
static size_t
read_by_chunks(struct trace_reader *r)
{
	struct trace_chunk_buf *cb = trace_chunk_buf_new();
	size_t inchunks = 0, n;

	for (size_t i = 0; i < trace_reader_nchunks(r); i++) {
		const struct trace_chunk_info *ci = trace_reader_chunk(r, i);

		cr_assert_leq(ci->count, CHUNK_MAX_EVENTS);
		struct trace_event *evs = xcalloc(ci->count + 1, sizeof(*evs));

		inchunks += trace_reader_decode_chunk(r, i, cb, evs);
		free(evs);
	}
	trace_chunk_buf_free(cb);
	trace_reader_seek(r, 0);
	n = fix_read_checked(r, NULL);
	cr_assert_eq(inchunks, n, "%zu in chunks, %zu merged", inchunks, n);
	return n;
}

/* A walked chunk whose header says more than its sizes allow is skipped
   at open, with one warning; the others read whole. */
Test(store_bounds, header_past_its_sizes_costs_its_chunk)
{
	void (*lies[])(struct chunk_hdr *) = {
		count_all, count_one_more, rsize_past_frame,
	};
	const char *says[] = { "more events", "more events", "decompressed" };

	for (size_t l = 0; l < sizeof(lies) / sizeof(lies[0]); l++) {
		char *dir = fix_tmpdir();
		char *seg = xasprintf("%s/seg-00000001.argus", dir);
		const size_t n = 30000;
		uint32_t lost = 0;

		fix_write_gen(dir, n);
		size_t defs = fix_count_defs(dir);
		uint64_t at = lie_in_header(seg, 3, -1, lies[l], &lost);
		struct trace_reader *r = fix_open_reader(dir);

		cr_assert_eq(trace_reader_info(r)->nevents, n + defs - lost,
		    "lie %zu: %llu events counted", l,
		    (unsigned long long)trace_reader_info(r)->nevents);
		cr_assert_eq(read_by_chunks(r), n + defs - lost, "lie %zu", l);
		cr_assert_eq(trace_reader_ndamage(r), 1, "lie %zu", l);
		cr_assert_eq(trace_reader_damage(r, 0)->offset, at);
		cr_assert_not_null(strstr(trace_reader_damage(r, 0)->reason,
		    says[l]), "lie %zu: %s", l,
		    trace_reader_damage(r, 0)->reason);
		trace_reader_close(r);
		fix_rm_rf(dir);
		free(seg);
		free(dir);
	}
}

/* The metadata stream's chunk, which the thread records are read from
   ahead of the rest: skipped as well, the other records kept. */
Test(store_bounds, metadata_chunk_past_its_size)
{
	char *dir = fix_tmpdir();
	char *seg = xasprintf("%s/seg-00000001.argus", dir);
	struct trace_writer *w = fix_open_writer(dir, 1ULL << 30,
	    64ULL << 20, 0);
	struct trace_thread t = { .tid = 7, .pid = 7, .comm = "seven" };
	struct trace_event e;
	uint32_t lost = 0;
	size_t n = 0;

	/* two metadata chunks: thread records in 16 KiB chunks */
	for (uint32_t i = 0; i < 3000; i++) {
		t.tid = 1000 + i;
		cr_assert_eq(trace_writer_thread(w, 1000 + i, &t), 0);
	}
	fix_gen_event(&e, 0);
	cr_assert_eq(trace_writer_add(w, &e), 0);
	cr_assert_eq(trace_writer_close(w), 0);
	lie_in_header(seg, 1, TRACE_CPU_META, count_all, &lost);

	struct trace_reader *r = fix_open_reader(dir);

	cr_assert_eq(trace_reader_read_ahead_threads(r), 0);
	cr_assert_not_null(trace_reader_thread_ahead(r, 1000));
	while (fix_next(r, &e))
		n++;
	cr_assert_eq(trace_reader_ndamage(r), 1);
	cr_assert_not_null(strstr(trace_reader_damage(r, 0)->reason,
	    "more events"));
	cr_assert_gt(lost, 0);
	cr_assert_eq(n, 3000 + 1 - lost, "%zu events", n);
	trace_reader_close(r);
	fix_rm_rf(dir);
	free(seg);
	free(dir);
}

/* An index entry (its CRC made to match) counting more events than the
   bytes up to the next chunk can hold: the index is not used, and the
   walked chunks read whole. */
Test(store_bounds, index_count_past_its_span)
{
	char *dir = fix_tmpdir();
	char *seg = xasprintf("%s/seg-00000001.argus", dir);
	const size_t n = 30000;
	size_t len;

	fix_write_gen(dir, n);
	size_t defs = fix_count_defs(dir);

	uint8_t *b = slurp(seg, &len);
	uint64_t ioff = get_le64(b + len - TRAILER_LEN);
	uint32_t ne = get_le32(b + len - TRAILER_LEN + 8);

	cr_assert_gt(ne, 3);
	put_le32(b + ioff + INDEX_HDR_LEN + 2 * INDEX_ENTRY_LEN + 24,
	    UINT32_MAX);
	put_le32(b + len - TRAILER_LEN + 12, trace_crc32(0, b + ioff,
	    INDEX_HDR_LEN + (size_t)ne * INDEX_ENTRY_LEN));
	spill(seg, b, len);
	free(b);

	struct trace_reader *r = fix_open_reader(dir);

	cr_assert_eq(trace_reader_info(r)->nevents, n + defs);
	cr_assert_eq(read_by_chunks(r), n + defs);
	cr_assert_eq(trace_reader_ndamage(r), 1);
	cr_assert_not_null(strstr(trace_reader_damage(r, 0)->reason,
	    "seek index disagrees"));
	trace_reader_close(r);
	fix_rm_rf(dir);
	free(seg);
	free(dir);
}

/* The writer ends a chunk at CHUNK_MAX_EVENTS events, however large its
   chunks may grow: small events in large chunks read back undamaged. */
Test(store_bounds, writer_keeps_to_the_count, .timeout = 60)
{
	char *dir = fix_tmpdir();
	struct trace_writer_opts o = { .size_bound = 4ULL << 30,
	    .segment_size = 1ULL << 30, .chunk_size = 64u << 20, .ncpus = 1,
	    .group = (gid_t)-1, .hostname = "h", .release = "r",
	    .boot_id = "b" };
	struct trace_writer *w;
	struct trace_event e = { .cpu = 0, .tid = 7, .type = TT_SYS_EXIT };
	char *cause = NULL;
	const size_t n = CHUNK_MAX_EVENTS + CHUNK_MAX_EVENTS / 4;
	size_t got = 0;

	cr_assert_eq(trace_writer_open(&w, dir, &o, &cause), 0, "%s", cause);
	for (size_t i = 0; i < n; i++) {
		e.ts = 1000 + i;
		cr_assert_eq(trace_writer_add(w, &e), 0);
	}
	cr_assert_eq(trace_writer_close(w), 0);

	struct trace_reader *r = fix_open_reader(dir);

	for (size_t i = 0; i < trace_reader_nchunks(r); i++)
		cr_assert_leq(trace_reader_chunk(r, i)->count,
		    CHUNK_MAX_EVENTS);
	while (fix_next(r, &e))
		got++;
	cr_assert_eq(got, n);
	cr_assert_eq(trace_reader_ndamage(r), 0);
	trace_reader_close(r);
	fix_rm_rf(dir);
	free(dir);
}
