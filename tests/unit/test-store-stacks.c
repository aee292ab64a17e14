/*
 * test-store-stacks.c: each distinct stack written once per segment
 * (TT_STACKDEF on the metadata stream, TT_STACK naming it by ref), and
 * read back with its frames by every path: the merge, a chunk decoded
 * alone from the middle of a segment, decoding ahead, a segment file
 * read on its own after the ring dropped the older ones, a reader of
 * the segment still being written; a stack whose definition is lost is
 * skipped with one warning.
 *
 * The stream: events of FIX_NCPUS CPUs in time order, among them
 * stacks of NSTK distinct shapes; a stack's kind field holds its shape,
 * so the frames it must read back with are known from the event alone
 * (frames_of()). Filler events (sys_enter of varied arguments) make the
 * chunks many.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/common.h"
#include "trace/trace.h"
#include "trace/trace-local.h"
#include "store-check.h"

#define NSTK 60			/* distinct stacks */
#define FILL 7			/* filler events per stack */

/* The frames of shape k: 1 to TRACE_STACK_MAX of them. */
static size_t
frames_of(uint64_t k, uint64_t *f)
{
	size_t n = 1 + k % TRACE_STACK_MAX;

	for (size_t i = 0; i < n; i++)
		f[i] = 0x555555550000ULL + k * 0x10000 + i * 0x48 +
		    (i == 0 ? k : 0);
	return n;
}

/* The i-th event of the stream; f holds a stack's frames. */
static void
gen(struct trace_event *e, size_t i, uint64_t *f)
{
	memset(e, 0, sizeof(*e));
	e->ts = 1000000 + i * 10;
	e->cpu = (uint16_t)((i / 3 + i / 1000) % FIX_NCPUS);
	e->tid = (uint32_t)(200 + i % 50);
	if (i % (FILL + 1) != 0) {
		e->type = TT_SYS_ENTER;
		e->arg[0] = i % 300;
		e->arg[1] = i * 2654435761u;
		e->arg[2] = i;
		return;
	}
	/* shapes come back often, in an order without a short period */
	uint64_t k = (i / (FILL + 1)) * 7919 % NSTK;

	e->type = TT_STACK;
	e->arg[0] = e->tid;
	e->arg[1] = k;
	e->blob = f;
	e->blob_len = (uint32_t)(frames_of(k, f) * 8);
}

static void
write_stream(struct trace_writer *w, size_t from, size_t to)
{
	uint64_t f[TRACE_STACK_MAX];
	struct trace_event e;

	for (size_t i = from; i < to; i++) {
		gen(&e, i, f);
		cr_assert_eq(trace_writer_add(w, &e), 0);
	}
}

/* Assert that stack ev has the frames of its shape. */
static void
assert_frames(const struct trace_event *ev)
{
	uint64_t f[TRACE_STACK_MAX];
	size_t n = frames_of(ev->arg[1], f);

	cr_assert_eq(ev->arg[2], 0, "ref %llu left",
	    (unsigned long long)ev->arg[2]);
	cr_assert_eq(ev->blob_len, n * 8, "shape %llu: %u bytes",
	    (unsigned long long)ev->arg[1], ev->blob_len);
	cr_assert(memcmp(ev->blob, f, n * 8) == 0, "shape %llu frames",
	    (unsigned long long)ev->arg[1]);
}

/* What a read of a trace or segment found. */
struct tally {
	size_t stacks, defs, other;
	size_t dup_defs;		/* definitions of a stack defined before */
	uint8_t shape_defined[NSTK];
};

/* A definition: which shape its frames are, -1 when none. */
static int
def_shape(const struct trace_event *ev)
{
	uint64_t f[TRACE_STACK_MAX];

	for (int k = 0; k < NSTK; k++) {
		size_t n = frames_of((uint64_t)k, f);

		if (ev->blob_len == n * 8 && memcmp(ev->blob, f, n * 8) == 0)
			return k;
	}
	return -1;
}

static void
tally(struct tally *t, const struct trace_event *ev)
{
	if (ev->type == TT_STACK) {
		assert_frames(ev);
		t->stacks++;
	} else if (ev->type == TT_STACKDEF) {
		int k = def_shape(ev);

		cr_assert_geq(k, 0, "a definition of no stack written");
		cr_assert_eq(ev->cpu, TRACE_CPU_META);
		t->dup_defs += t->shape_defined[k];
		t->shape_defined[k] = 1;
		t->defs++;
	} else {
		t->other++;
	}
}

/* Read path (a trace directory or one segment file) whole, asserting no
   damage, into *t. */
static void
read_tally(const char *path, struct tally *t)
{
	struct trace_reader *r;
	struct trace_event ev;
	char *cause = NULL;

	memset(t, 0, sizeof(*t));
	cr_assert_eq(trace_reader_open(&r, path, &cause), 0, "%s", cause);
	while (trace_reader_next(r, &ev))
		tally(t, &ev);
	cr_assert_eq(trace_reader_ndamage(r), 0, "%s: %s", path,
	    trace_reader_ndamage(r) ? trace_reader_damage(r, 0)->reason : "");
	trace_reader_close(r);
}

/* The segment files of dir, sorted; *n of them. */
static char **
segments(const char *dir, size_t *n)
{
	struct dirent **de;
	int k = scandir(dir, &de, NULL, alphasort);
	char **v = xcalloc((size_t)(k > 0 ? k : 0) + 1, sizeof(*v));

	*n = 0;
	for (int i = 0; i < k; i++) {
		if (strncmp(de[i]->d_name, "seg-", 4) == 0)
			v[(*n)++] = xasprintf("%s/%s", dir, de[i]->d_name);
		free(de[i]);
	}
	free(de);
	return v;
}

/* Every segment of dir read on its own: complete (no definition
   missing), each stack defined once; returns the stacks in all. */
static size_t
each_segment_alone(const char *dir)
{
	size_t nseg, stacks = 0;
	char **segs = segments(dir, &nseg);

	cr_assert_gt(nseg, 0);
	for (size_t i = 0; i < nseg; i++) {
		struct tally t;

		read_tally(segs[i], &t);
		cr_assert_eq(t.dup_defs, 0, "%s: a stack defined twice",
		    segs[i]);
		cr_assert_gt(t.stacks, 0);
		stacks += t.stacks;
		free(segs[i]);
	}
	free(segs);
	return stacks;
}

/*
 * One segment of many chunks: each distinct stack is defined once, and
 * every stack reads back with its frames, by the merge, by decoding
 * ahead, from a seek to the middle and from a chunk in the middle
 * decoded first thing.
 */
Test(store_stacks, once_per_segment)
{
	char *dir = fix_tmpdir();
	struct trace_writer *w = fix_open_writer(dir, 1ULL << 30, 64ULL << 20,
	    0);
	const size_t n = 200000, nstacks = n / (FILL + 1);
	struct tally t;

	write_stream(w, 0, n);
	cr_assert_eq(trace_writer_close(w), 0);

	read_tally(dir, &t);
	cr_assert_eq(t.stacks, nstacks);
	cr_assert_eq(t.defs, NSTK, "%zu definitions of %d stacks", t.defs,
	    NSTK);
	cr_assert_eq(t.dup_defs, 0);
	cr_assert_eq(t.other, n - nstacks);

	/* a chunk of the middle, decoded before anything else is read */
	struct trace_reader *r = fix_open_reader(dir);
	size_t nch = trace_reader_nchunks(r), mid = SIZE_MAX, got = 0;

	cr_assert_eq(trace_reader_info(r)->nsegments, 1);
	cr_assert_gt(nch, 40, "%zu chunks", nch);
	for (size_t i = nch / 2; i < nch && mid == SIZE_MAX; i++)
		if (trace_reader_chunk(r, i)->cpu != TRACE_CPU_META)
			mid = i;
	cr_assert_neq(mid, SIZE_MAX);
	struct trace_chunk_buf *b = trace_chunk_buf_new();
	const struct trace_chunk_info *ci = trace_reader_chunk(r, mid);
	struct trace_event *evs = xcalloc(ci->count, sizeof(*evs));
	size_t k = trace_reader_decode_chunk(r, mid, b, evs);

	cr_assert_eq(k, ci->count);
	for (size_t i = 0; i < k; i++)
		if (evs[i].type == TT_STACK) {
			assert_frames(&evs[i]);
			got++;
		}
	cr_assert_gt(got, 10);
	cr_assert_eq(trace_reader_ndamage(r), 0);
	free(evs);
	trace_chunk_buf_free(b);

	/* a seek to the middle, then the merge */
	struct trace_event ev;
	uint64_t at = 1000000 + n / 2 * 10;

	cr_assert_eq(trace_reader_seek(r, at), 0);
	got = 0;
	while (trace_reader_next(r, &ev)) {
		cr_assert_geq(ev.ts, at);
		if (ev.type == TT_STACK) {
			assert_frames(&ev);
			got++;
		}
	}
	cr_assert_geq(got, nstacks / 2 - 1);
	cr_assert_eq(trace_reader_ndamage(r), 0);

	/* decoding ahead, in batches */
	struct trace_event batch[256];

	cr_assert_eq(trace_reader_seek(r, 0), 0);
	cr_assert_eq(trace_reader_decode_ahead(r), 0);
	memset(&t, 0, sizeof(t));
	while ((k = trace_reader_read(r, batch, 256)) > 0)
		for (size_t i = 0; i < k; i++)
			tally(&t, &batch[i]);
	cr_assert_eq(t.stacks, nstacks);
	cr_assert_eq(t.defs, NSTK);
	cr_assert_eq(trace_reader_ndamage(r), 0);
	trace_reader_close(r);
	fix_rm_rf(dir);
	free(dir);
}

/*
 * Small segments: every segment defines the stacks it holds, again, and
 * reads on its own; once the size bound has the ring drop the oldest,
 * the rest still gives every stack its frames.
 */
Test(store_stacks, segments_roll_and_ring)
{
	char *dir = fix_tmpdir();
	struct trace_writer *w = fix_open_writer(dir, 192 << 10, 64 << 10, 0);
	struct trace_writer_stats st;
	const size_t n = 400000;
	struct tally t;

	write_stream(w, 0, n / 4);
	cr_assert_eq(trace_writer_close(w), 0);
	/* no segment dropped yet: every stack is there */
	read_tally(dir, &t);
	cr_assert_eq(t.stacks, n / 4 / (FILL + 1));
	cr_assert_gt(t.dup_defs, 0, "the stacks are defined in each segment");
	cr_assert_eq(each_segment_alone(dir), t.stacks);

	w = fix_open_writer(dir, 192 << 10, 64 << 10, 0);
	write_stream(w, n / 4, n);
	trace_writer_stats(w, &st);
	cr_assert_eq(trace_writer_close(w), 0);
	cr_assert_gt(st.deleted, 0, "the ring dropped no segment");
	read_tally(dir, &t);
	cr_assert_gt(t.stacks, 1000);
	cr_assert_lt(t.stacks, n / (FILL + 1));
	cr_assert_eq(each_segment_alone(dir), t.stacks);
	fix_rm_rf(dir);
	free(dir);
}

/*
 * A stream whose chunk stays open for long names stacks whose
 * definitions were written to an older segment: when the segment rolls
 * under it, they are defined again in the new one, before the chunk.
 */
Test(store_stacks, pending_chunk_across_a_roll)
{
	char *dir = fix_tmpdir();
	struct trace_writer *w = fix_open_writer(dir, 1ULL << 30, 64 << 10, 0);
	uint64_t f[TRACE_STACK_MAX];
	struct trace_event e;
	struct trace_writer_stats st;
	size_t slow = 0;

	for (size_t i = 0; i < 300000; i++) {
		gen(&e, i, f);
		if (e.cpu == 3) {
			/* CPU 3: a stack now and then, its chunk never full */
			if (e.type != TT_STACK || i / (FILL + 1) % 13 != 0)
				continue;
			slow++;
		}
		cr_assert_eq(trace_writer_add(w, &e), 0);
	}
	trace_writer_stats(w, &st);
	cr_assert_eq(trace_writer_close(w), 0);
	cr_assert_gt(st.segments, 3);

	struct tally t;

	read_tally(dir, &t);
	cr_assert_eq(each_segment_alone(dir), t.stacks);
	cr_assert_gt(slow, 20);
	fix_rm_rf(dir);
	free(dir);
}

/*
 * A reader of the segment being written: whenever a chunk is on disk,
 * the definitions it names are too, whatever stream was written first.
 */
Test(store_stacks, live_reader_finds_definitions)
{
	char *dir = fix_tmpdir();
	struct trace_writer *w = fix_open_writer(dir, 1ULL << 30, 64ULL << 20,
	    0);
	struct trace_writer_stats st;
	uint64_t chunks = 0;
	size_t reads = 0;
	uint64_t f[TRACE_STACK_MAX];
	struct trace_event e;

	for (size_t i = 0; i < 60000; i++) {
		gen(&e, i, f);
		cr_assert_eq(trace_writer_add(w, &e), 0);
		trace_writer_stats(w, &st);
		if (st.chunks == chunks)
			continue;
		chunks = st.chunks;
		if (reads++ % 3 != 0)
			continue;
		struct tally t;

		read_tally(dir, &t);
		cr_assert_leq(t.defs, NSTK);
	}
	cr_assert_gt(reads, 10);
	cr_assert_eq(trace_writer_close(w), 0);
	fix_rm_rf(dir);
	free(dir);
}

/* The first chunk of the metadata stream of the segment at path: its
   offset and header. */
static uint64_t
meta_chunk(const char *path, struct chunk_hdr *ch)
{
	struct seg_header h;
	uint8_t head[65536], hb[CHUNK_HDR_LEN];
	size_t need;
	int fd = open(path, O_RDONLY);
	ssize_t k = read(fd, head, sizeof(head));

	cr_assert_gt(k, 0);
	cr_assert_eq(seg_header_decode(&h, head, (size_t)k, &need), 0);
	uint64_t off = h.header_len;

	seg_header_free(&h);
	for (;;) {
		cr_assert_eq(pread(fd, hb, sizeof(hb), (off_t)off),
		    CHUNK_HDR_LEN);
		cr_assert_eq(chunk_hdr_decode(ch, hb), 0);
		if (ch->cpu == TRACE_CPU_META)
			break;
		off += CHUNK_HDR_LEN + ch->csize;
	}
	close(fd);
	return off;
}

struct warned {
	unsigned n, refs;
};

static void
on_damage(const struct trace_damage *d, void *arg)
{
	struct warned *wd = arg;

	wd->n++;
	if (strstr(d->reason, "definition") != NULL)
		wd->refs++;
}

/*
 * The metadata chunk holding the definitions damaged: the stacks naming
 * them are skipped, with one warning for them all besides the chunk's,
 * by the merge and by the chunks decoded alone; the rest reads.
 */
Test(store_stacks, missing_definition_skipped_once)
{
	char *dir = fix_tmpdir();
	struct trace_writer *w = fix_open_writer(dir, 1ULL << 30, 64ULL << 20,
	    0);
	const size_t n = 40000, nstacks = n / (FILL + 1);
	char *seg = xasprintf("%s/seg-00000001.argus", dir);
	struct chunk_hdr ch;
	struct warned wd = { 0, 0 };

	write_stream(w, 0, n);
	cr_assert_eq(trace_writer_close(w), 0);
	uint64_t off = meta_chunk(seg, &ch);
	int fd = open(seg, O_RDWR);

	cr_assert_eq(pwrite(fd, "\xde\xad\xbe\xef\xde\xad\xbe\xef", 8,
	    (off_t)(off + CHUNK_HDR_LEN + ch.csize / 2)), 8);
	close(fd);

	struct trace_reader *r = fix_open_reader(dir);
	struct trace_event ev;
	struct tally t = { 0 };

	trace_reader_on_damage(r, on_damage, &wd);
	while (trace_reader_next(r, &ev))
		tally(&t, &ev);
	cr_assert_eq(t.other, n - nstacks);
	cr_assert_lt(t.stacks, nstacks / 2, "%zu stacks of %zu read",
	    t.stacks, nstacks);
	cr_assert_eq(wd.refs, 1, "%u warnings of missing definitions",
	    wd.refs);
	cr_assert_eq(wd.n, 2, "%u warnings", wd.n);

	/* every chunk alone: the same stacks left out, no more warning */
	struct trace_chunk_buf *b = trace_chunk_buf_new();
	size_t stacks = 0;

	for (size_t i = 0; i < trace_reader_nchunks(r); i++) {
		const struct trace_chunk_info *ci = trace_reader_chunk(r, i);
		struct trace_event *evs = xcalloc(ci->count + 1, sizeof(*evs));
		size_t k = trace_reader_decode_chunk(r, i, b, evs);

		for (size_t j = 0; j < k; j++)
			if (evs[j].type == TT_STACK) {
				assert_frames(&evs[j]);
				stacks++;
			}
		free(evs);
	}
	cr_assert_eq(stacks, t.stacks);
	cr_assert_eq(wd.n, 2);
	trace_chunk_buf_free(b);
	trace_reader_close(r);
	free(seg);
	fix_rm_rf(dir);
	free(dir);
}

/* A trace copied event by event through a reader and a writer (the
   stacks given with their frames, the definitions dropped) defines
   its stacks again, once. */
Test(store_stacks, copy_defines_again)
{
	char *src = fix_tmpdir(), *dst = fix_tmpdir();
	struct trace_writer *w = fix_open_writer(src, 1ULL << 30, 64ULL << 20,
	    0);
	struct trace_event ev;
	struct tally a, c;

	write_stream(w, 0, 20000);
	cr_assert_eq(trace_writer_close(w), 0);
	struct trace_reader *r = fix_open_reader(src);

	w = fix_open_writer(dst, 1ULL << 30, 64ULL << 20, 0);
	while (trace_reader_next(r, &ev))
		cr_assert_eq(trace_writer_add(w, &ev), 0);
	cr_assert_eq(trace_writer_close(w), 0);
	trace_reader_close(r);
	read_tally(src, &a);
	read_tally(dst, &c);
	cr_assert_eq(c.stacks, a.stacks);
	cr_assert_eq(c.defs, a.defs);
	cr_assert_eq(c.other, a.other);
	fix_rm_rf(src);
	fix_rm_rf(dst);
	free(src);
	free(dst);
}
