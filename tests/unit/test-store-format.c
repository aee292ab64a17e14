/*
 * test-store-format.c: the chunk layouts of the store, through real files.
 *
 * Format 2 writes each part of the events (headers, time deltas, threads,
 * blobs, each field of each type) to its own column; format 1, written by
 * argus before it, kept rows. A reader must read both, even in one trace,
 * and a column directory that lies must cost only its own chunk.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "common/common.h"
#include "trace/trace.h"
#include "trace/trace-local.h"
#include "store-check.h"

/* Write events [from, to) of the fixture stream to dir in format fmt. */
static uint64_t
write_range(const char *dir, size_t from, size_t to, unsigned fmt)
{
	struct trace_writer *w = fix_open_writer(dir, 1ULL << 30, 128 << 10,
	    fmt);
	struct trace_writer_stats st;
	struct trace_event e;

	for (size_t i = from; i < to; i++) {
		fix_gen_event(&e, i);
		cr_assert_eq(trace_writer_add(w, &e), 0);
	}
	trace_writer_stats(w, &st);
	cr_assert_eq(trace_writer_close(w), 0);
	return st.written_bytes;
}

/* Read dir whole: every event must be the fixture's, none damaged;
   returns how many. */
static size_t
read_all(const char *dir)
{
	struct trace_reader *r = fix_open_reader(dir);
	size_t got = fix_read_checked(r, NULL);

	cr_assert_eq(trace_reader_ndamage(r), 0);
	trace_reader_close(r);
	return got;
}

/* Every type with extreme values, in both formats. */
Test(store_format, every_type_in_both_formats)
{
	for (unsigned fmt = 1; fmt <= 2; fmt++) {
		char *dir = fix_tmpdir();
		struct trace_writer *w = fix_open_writer(dir, 1ULL << 30,
		    64ULL << 20, fmt);
		struct trace_event in[2 * TT_NTYPES], out;
		size_t n = 0, got = 0;

		for (unsigned rep = 0; rep < 2; rep++)
			for (unsigned t = 1; t < TT_NTYPES; t++) {
				if (t == TT_STACKDEF)
					continue;	/* the writer's */
				fix_event_of_type(&in[n], t, rep, 1000 + n * 7);
				cr_assert_eq(trace_writer_add(w, &in[n]), 0);
				n++;
			}
		cr_assert_eq(trace_writer_close(w), 0);

		struct trace_reader *r = fix_open_reader(dir);

		cr_assert_eq(trace_reader_info(r)->version, fmt);
		while (fix_next(r, &out)) {
			cr_assert_lt(got, n);
			fix_assert_same(&out, &in[got]);
			got++;
		}
		cr_assert_eq(got, n, "format %u: %zu of %zu", fmt, got, n);
		cr_assert_eq(trace_reader_ndamage(r), 0);
		trace_reader_close(r);
		fix_rm_rf(dir);
		free(dir);
	}
}

/* A trace begun by an older argus and continued by this one reads as
   one stream; the columns take less room than the rows. */
Test(store_format, older_segments_continued)
{
	char *dir = fix_tmpdir(), *d1 = fix_tmpdir(), *d2 = fix_tmpdir();
	const size_t n = 120000;

	write_range(dir, 0, n / 2, 1);
	write_range(dir, n / 2, n, 0);
	/* (the stacks of the newer segments defined once each) */
	cr_assert_eq(read_all(dir), n + fix_count_defs(dir));

	struct trace_reader *r = fix_open_reader(dir);
	size_t nseg = trace_reader_info(r)->nsegments;

	cr_assert_eq(trace_reader_info(r)->version, TRACE_FORMAT_VERSION);
	trace_reader_close(r);
	cr_assert_gt(nseg, 2);

	uint64_t rows = write_range(d1, 0, n, 1);
	uint64_t cols = write_range(d2, 0, n, 2);

	cr_log_info("%zu events: rows %llu bytes, columns %llu bytes", n,
	    (unsigned long long)rows, (unsigned long long)cols);
	cr_assert_lt(cols, rows, "columns %llu bytes, rows %llu",
	    (unsigned long long)cols, (unsigned long long)rows);
	cr_assert_eq(read_all(d1), n);
	cr_assert_eq(fix_count_defs(d1), 0);
	cr_assert_eq(read_all(d2), n + fix_count_defs(d2));
	fix_rm_rf(dir);
	fix_rm_rf(d1);
	fix_rm_rf(d2);
	free(dir);
	free(d1);
	free(d2);
}

/*
 * Rewrite the segment at path without its index, the k-th chunk's
 * decompressed body passed through damage(); returns the offset of that
 * chunk and sets *count to its events.
 */
static uint64_t
rewrite_chunk(const char *path, int k, void (*damage)(uint8_t *, size_t),
    uint32_t *count)
{
	int fd = open(path, O_RDONLY);
	struct stat sb;

	cr_assert_geq(fd, 0);
	cr_assert_eq(fstat(fd, &sb), 0);
	uint8_t *in = xmalloc((size_t)sb.st_size);

	cr_assert_eq(pread(fd, in, (size_t)sb.st_size, 0), sb.st_size);
	close(fd);

	uint32_t hlen = get_le32(in + 12);
	uint8_t *out = xmalloc((size_t)sb.st_size * 2 + 4096);
	size_t o = hlen, off = hlen;
	uint64_t at = 0;

	memcpy(out, in, hlen);
	for (int i = 0; off + CHUNK_HDR_LEN <= (size_t)sb.st_size; i++) {
		struct chunk_hdr h;

		if (chunk_hdr_decode(&h, in + off) != 0)
			break;	/* the index */
		const uint8_t *z = in + off + CHUNK_HDR_LEN;
		size_t zn = h.csize, next = off + CHUNK_HDR_LEN + h.csize;

		if (i == k) {
			uint8_t *raw = xmalloc(h.rsize);
			size_t r = ZSTD_decompress(raw, h.rsize, z, zn);

			cr_assert(!ZSTD_isError(r) && r == h.rsize);
			damage(raw, r);
			size_t bound = ZSTD_compressBound(r);
			uint8_t *nz = xmalloc(bound);
			ZSTD_CCtx *cc = ZSTD_createCCtx();

			ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
			zn = ZSTD_compress2(cc, nz, bound, raw, r);
			cr_assert(!ZSTD_isError(zn));
			ZSTD_freeCCtx(cc);
			h.csize = (uint32_t)zn;
			chunk_hdr_encode(&h, out + o);
			memcpy(out + o + CHUNK_HDR_LEN, nz, zn);
			at = o;
			*count = h.count;
			free(nz);
			free(raw);
		} else {
			memcpy(out + o, in + off, CHUNK_HDR_LEN + zn);
		}
		o += CHUNK_HDR_LEN + zn;
		off = next;
	}
	cr_assert_neq(at, 0, "no chunk %d", k);
	fd = open(path, O_WRONLY | O_TRUNC);
	cr_assert_eq(write(fd, out, o), (ssize_t)o);
	close(fd);
	free(in);
	free(out);
	return at;
}

/* The directory's first column longer: the lengths no longer add up to
   the body. */
static void
longer_column(uint8_t *raw, size_t n)
{
	const uint8_t *p = raw;
	uint64_t v;

	for (int i = 0; i < 3; i++)	/* count, id, length */
		cr_assert_eq(get_varint(&p, raw + n, &v), 0);
	if (p[-1] < 0x7f)	/* the length's last byte */
		raw[p - raw - 1]++;
	else
		raw[p - raw - 1]--;
}

/* The time deltas named the headers' column: one column twice. */
static void
column_twice(uint8_t *raw, size_t n)
{
	const uint8_t *p = raw;
	uint64_t v;

	cr_assert_eq(get_varint(&p, raw + n, &v), 0);
	for (int i = 0; i < 2; i++)	/* the headers' id and length */
		cr_assert_eq(get_varint(&p, raw + n, &v), 0);
	cr_assert_eq(*p, COL_DT);
	raw[p - raw] = COL_HDR;
}

/* A field column cut short: its chunk's events end there, reported. */
static void
no_fields(uint8_t *raw, size_t n)
{
	const uint8_t *p = raw;
	uint64_t count, id, len;

	cr_assert_eq(get_varint(&p, raw + n, &count), 0);
	for (uint64_t i = 0; i < count; i++) {
		uint8_t *idp = raw + (p - raw);

		cr_assert_eq(get_varint(&p, raw + n, &id), 0);
		cr_assert_eq(get_varint(&p, raw + n, &len), 0);
		if (id == COL_FIELD(TT_SWITCH, 1)) {
			*idp = 5;	/* a column this reader ignores */
			return;
		}
	}
	cr_assert_fail("no column of the switches' next_tid");
}

/* A damaged column directory costs its chunk only, reported once. */
Test(store_format, damaged_directory_costs_its_chunk)
{
	void (*damages[])(uint8_t *, size_t) = {
		longer_column, column_twice, no_fields,
	};

	for (size_t d = 0; d < sizeof(damages) / sizeof(damages[0]); d++) {
		char *dir = fix_tmpdir();
		char *seg = xasprintf("%s/seg-00000001.argus", dir);
		const size_t n = 30000;
		uint32_t lost = 0;

		write_range(dir, 0, n, 0);
		size_t defs = fix_count_defs(dir);
		uint64_t at = rewrite_chunk(seg, 3, damages[d], &lost);
		struct trace_reader *r = fix_open_reader(dir);
		size_t got = fix_read_checked(r, NULL);

		cr_assert_eq(trace_reader_ndamage(r), 1, "damage %zu", d);
		cr_assert_eq(trace_reader_damage(r, 0)->offset, at);
		if (d < 2) {
			cr_assert_eq(got, n + defs - lost, "damage %zu: %zu of "
			    "%zu + %zu - %u", d, got, n, defs, lost);
			cr_assert_not_null(strstr(trace_reader_damage(r, 0)->reason,
			    "column directory"));
		} else {
			/* the events before the first switch still read */
			cr_assert(got < n + defs && got >= n + defs - lost,
			    "%zu of %zu + %zu - %u", got, n, defs, lost);
		}
		trace_reader_close(r);
		fix_rm_rf(dir);
		free(seg);
		free(dir);
	}
}

/* Chunks of changing shape (a column large in one chunk, small in the
   next, which gives its memory back) read back whole. */
Test(store_format, columns_change_shape)
{
	char *dir = fix_tmpdir();
	struct trace_writer_opts o = { .size_bound = 1ULL << 30,
	    .segment_size = 64 << 20, .chunk_size = 1 << 20, .ncpus = 1,
	    .group = (gid_t)-1, .hostname = "h", .release = "r",
	    .boot_id = "b" };
	struct trace_writer *w;
	struct trace_event e = { .cpu = 0, .tid = 7 }, out;
	char *cause = NULL;
	const size_t n = 600000;

	cr_assert_eq(trace_writer_open(&w, dir, &o, &cause), 0, "%s", cause);
	for (size_t i = 0; i < n; i++) {
		/* thirds: switches, system calls, switches */
		e.ts = 1000 + i * 3;
		e.type = i / (n / 3) == 1 ? TT_SYS_ENTER : TT_SWITCH;
		for (unsigned k = 0; k < TRACE_NARGS; k++)
			e.arg[k] = trace_type_nargs(e.type) > k ?
			    (i * 2654435761u + k) % 100000 : 0;
		if (e.type == TT_SWITCH)
			e.arg[1] = 7;	/* stays on thread 7 */
		cr_assert_eq(trace_writer_add(w, &e), 0);
	}
	cr_assert_eq(trace_writer_close(w), 0);

	struct trace_reader *r = fix_open_reader(dir);
	size_t got = 0;

	while (fix_next(r, &out)) {
		cr_assert_eq(out.ts, 1000 + got * 3);
		cr_assert_eq(out.type, got / (n / 3) == 1 ? TT_SYS_ENTER :
		    TT_SWITCH);
		cr_assert_eq(out.arg[0], (got * 2654435761u) % 100000);
		got++;
	}
	cr_assert_eq(got, n);
	cr_assert_eq(trace_reader_ndamage(r), 0);
	cr_assert_gt(trace_reader_info(r)->nchunks, 3);
	trace_reader_close(r);
	fix_rm_rf(dir);
	free(dir);
}
