/*
 * test-store.c: the trace store, written and read back through real files.
 *
 * Fixtures are generated in code: gen_event(i) gives the i-th event of a
 * deterministic stream (its CPU, type, fields and blob follow from i), so
 * a test can check exactly which events survived damage or rotation.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/common.h"
#include "trace/trace.h"
#include "trace/trace-local.h"
#include "store-check.h"

static uint64_t
dir_bytes(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	uint64_t sum = 0;

	cr_assert_not_null(d);
	while ((de = readdir(d)) != NULL) {
		struct stat sb;
		char *p;

		if (strncmp(de->d_name, "seg-", 4) != 0)
			continue;
		p = xasprintf("%s/%s", dir, de->d_name);
		if (stat(p, &sb) == 0)
			sum += (uint64_t)sb.st_size;
		free(p);
	}
	closedir(d);
	return sum;
}

/* Every type, with extreme field values, survives a round trip. */
Test(store, roundtrip_every_type)
{
	char *dir = fix_tmpdir();
	struct trace_writer *w = fix_open_writer(dir, 1ULL << 30, 64ULL << 20, 0);
	struct trace_event in[2 * TT_NTYPES], out;
	size_t n = 0;

	for (unsigned rep = 0; rep < 2; rep++) {
		for (unsigned t = 1; t < TT_NTYPES; t++) {
			if (t == TT_STACKDEF)
				continue;	/* the writer's own */
			struct trace_event *e = &in[n];

			fix_event_of_type(e, t, rep, 1000 + n * 7);
			cr_assert_eq(trace_writer_add(w, e), 0);
			n++;
		}
	}
	cr_assert_eq(trace_writer_close(w), 0);

	struct trace_reader *r = fix_open_reader(dir);
	size_t got = 0;

	/* Events were written in time order; the reader must merge back. */
	while (fix_next(r, &out)) {
		cr_assert_lt(got, n);
		fix_assert_same(&out, &in[got]);
		got++;
	}
	cr_assert_eq(got, n);
	cr_assert_eq(trace_reader_ndamage(r), 0);
	const struct trace_info *info = trace_reader_info(r);

	cr_assert_str_eq(info->hostname, "testhost");
	cr_assert_str_eq(info->release, "6.0-test");
	cr_assert_eq(info->ncpus, FIX_NCPUS);
	/* and the writer's definitions of the two stacks */
	cr_assert_eq(fix_count_defs(dir), 2);
	cr_assert_eq(info->nevents, n + 2);
	trace_reader_close(r);
	fix_rm_rf(dir);
	free(dir);
}

/* The generated stream comes back whole and in time order. */
Test(store, merge_order_and_counts)
{
	char *dir = fix_tmpdir();
	struct trace_writer *w = fix_open_writer(dir, 1ULL << 30, 128 << 10, 0);
	struct trace_event e, out;
	const size_t n = 200000;

	for (size_t i = 0; i < n; i++) {
		fix_gen_event(&e, i);
		cr_assert_eq(trace_writer_add(w, &e), 0);
	}
	cr_assert_eq(trace_writer_close(w), 0);

	struct trace_reader *r = fix_open_reader(dir);
	uint64_t last = 0;
	size_t got = 0;
	uint64_t next_seq[FIX_NCPUS] = { 0 };

	while (fix_next(r, &out)) {
		cr_assert_geq(out.ts, last);
		last = out.ts;
		/* Per CPU the sequence numbers in arg of the fixture are
		 * strictly those the generator gave that CPU. */
		size_t i = fix_index_of(&out);

		fix_gen_event(&e, i);
		fix_assert_same(&out, &e);
		cr_assert_geq(i, next_seq[out.cpu]);
		next_seq[out.cpu] = i + 1;
		got++;
	}
	cr_assert_eq(got, n);
	cr_assert_gt(trace_reader_info(r)->nsegments, 1,
	    "128 KiB segments must rotate");
	trace_reader_close(r);
	fix_rm_rf(dir);
	free(dir);
}

/* The files never add up to more than the bound, at any chunk. */
Test(store, size_bound_holds)
{
	char *dir = fix_tmpdir();
	const uint64_t bound = 192 << 10, seg = 64 << 10;
	struct trace_writer *w = fix_open_writer(dir, bound, seg, 0);
	struct trace_writer_stats st;
	struct trace_event e, out;
	uint64_t chunks = 0, max_seen = 0;
	const size_t n = 400000;

	for (size_t i = 0; i < n; i++) {
		fix_gen_event(&e, i);
		cr_assert_eq(trace_writer_add(w, &e), 0);
		trace_writer_stats(w, &st);
		if (st.chunks != chunks) {
			uint64_t b = dir_bytes(dir);

			chunks = st.chunks;
			cr_assert_leq(b, bound, "disk %llu > bound",
			    (unsigned long long)b);
			cr_assert_leq(st.disk_bytes, bound);
			if (b > max_seen)
				max_seen = b;
		}
	}
	cr_assert_eq(trace_writer_close(w), 0);
	cr_assert_leq(dir_bytes(dir), bound);
	cr_log_info("bound: %llu events, %llu bytes written, %.2f bytes/event",
	    (unsigned long long)st.events,
	    (unsigned long long)st.written_bytes,
	    (double)st.written_bytes / (double)st.events);
	cr_assert_gt(max_seen, bound / 2, "the bound was not approached");
	cr_assert_gt(st.deleted, 0, "no segment was deleted");

	/* What is left is the newest part of the stream, intact. */
	struct trace_reader *r = fix_open_reader(dir);
	size_t got = 0, last_i = 0;

	while (fix_next(r, &out)) {
		last_i = fix_index_of(&out);
		fix_gen_event(&e, last_i);
		fix_assert_same(&out, &e);
		got++;
	}
	cr_assert_gt(got, 1000);
	cr_assert_lt(got, n);
	cr_assert_geq(last_i, n - FIX_NCPUS * 2);
	cr_assert_eq(trace_reader_ndamage(r), 0);
	trace_reader_close(r);
	fix_rm_rf(dir);
	free(dir);
}

/* Names of threads survive the deletion of the segment that saw them. */
Test(store, thread_names_survive_rotation)
{
	char *dir = fix_tmpdir();
	struct trace_writer *w = fix_open_writer(dir, 128 << 10, 64 << 10, 0);
	struct trace_thread t = { .tid = 4242, .pid = 4240, .ppid = 1 };
	struct trace_thread gone = { .tid = 777, .pid = 777, .ppid = 1 };
	struct trace_writer_stats st;
	struct trace_event e;

	snprintf(t.comm, sizeof(t.comm), "long-lived");
	snprintf(gone.comm, sizeof(gone.comm), "short-lived");
	cr_assert_eq(trace_writer_thread(w, 1, &t), 0);
	cr_assert_eq(trace_writer_thread(w, 1, &gone), 0);
	gone.flags = TRACE_THREAD_EXITED;
	cr_assert_eq(trace_writer_thread(w, 2, &gone), 0);
	for (size_t i = 0; i < 600000; i++) {
		fix_gen_event(&e, i);
		cr_assert_eq(trace_writer_add(w, &e), 0);
	}
	trace_writer_stats(w, &st);
	cr_assert_gt(st.deleted, 2);
	cr_assert_eq(trace_writer_close(w), 0);

	struct trace_reader *r = fix_open_reader(dir);
	const struct trace_thread *x = trace_reader_thread(r, 4242);

	cr_assert_not_null(x, "thread lost with its segment");
	cr_assert_str_eq(x->comm, "long-lived");
	cr_assert_eq(x->pid, 4240);
	cr_assert_null(trace_reader_thread(r, 777),
	    "an exited thread stays out of later headers");
	trace_reader_close(r);
	fix_rm_rf(dir);
	free(dir);
}

/* A thread whose record comes after its first events (the recorder
   learns of threads late) is named by the records read ahead. */
Test(store, thread_named_before_its_record)
{
	char *dir = fix_tmpdir();
	struct trace_writer *w = fix_open_writer(dir, 0, 0, 0);
	struct trace_thread t = { .tid = 555, .pid = 550, .ppid = 1 };
	struct trace_event e = { .ts = 1000, .tid = 555, .type = TT_EXIT,
	    .arg = { 555 } };
	char line[512];

	cr_assert_eq(trace_writer_add(w, &e), 0);
	/* the segment's header (with its thread table) is out */
	cr_assert_eq(trace_writer_flush(w), 0);
	snprintf(t.comm, sizeof(t.comm), "backend");
	cr_assert_eq(trace_writer_thread(w, 2000, &t), 0);
	snprintf(t.comm, sizeof(t.comm), "renamed");
	cr_assert_eq(trace_writer_thread(w, 3000, &t), 0);
	cr_assert_eq(trace_writer_close(w), 0);

	struct trace_reader *r = fix_open_reader(dir);
	cr_assert_eq(trace_reader_read_ahead_threads(r), 0);
	cr_assert_eq(fix_next(r, &e), 1);
	cr_assert_eq(e.type, TT_EXIT);
	const struct trace_thread *y = trace_reader_thread(r, 555);
	cr_assert_null(y, "not read so far (%s)", y ? y->comm : "");
	const struct trace_thread *x = trace_reader_thread_ahead(r, 555);
	cr_assert_not_null(x);
	cr_assert_str_eq(x->comm, "backend", "its first record");
	cr_assert_eq(x->pid, 550);
	trace_format_event(r, &e, 0, line, sizeof(line));
	cr_assert_not_null(strstr(line, " backend "), "%s", line);
	cr_assert_null(trace_reader_thread_ahead(r, 556));
	trace_reader_close(r);
	fix_rm_rf(dir);
	free(dir);
}

/* A writer killed with SIGKILL leaves every completed chunk readable. */
Test(store, sigkill_leaves_readable_trace)
{
	char *dir = fix_tmpdir();

	for (int round = 0; round < 4; round++) {
		char *sub = xasprintf("%s/t%d", dir, round);
		pid_t pid = fork();

		cr_assert_geq(pid, 0);
		if (pid == 0) {
			struct trace_writer_opts o = { 0 };
			struct trace_writer *w;
			struct trace_event e;

			o.size_bound = 4 << 20;
			o.segment_size = 1 << 20;
			o.ncpus = FIX_NCPUS;
			o.group = (gid_t)-1;
			if (trace_writer_open(&w, sub, &o, NULL) != 0)
				_exit(3);
			for (size_t i = 0;; i++) {
				fix_gen_event(&e, i);
				trace_writer_add(w, &e);
				if (i % 5000 == 0)
					trace_writer_flush(w);
			}
		}
		usleep(150000 + round * 70000);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);

		struct trace_reader *r = fix_open_reader(sub);
		size_t got = fix_read_checked(r, NULL);

		cr_assert_gt(got, 0, "nothing readable after SIGKILL");
		cr_assert_leq(trace_reader_ndamage(r), 1,
		    "only a torn tail may be damaged");
		trace_reader_close(r);
		free(sub);
	}
	fix_rm_rf(dir);
	free(dir);
}

static void
copy_file(const char *from, const char *to, off_t len)
{
	char *cmd = xasprintf("head -c %lld '%s' > '%s'", (long long)len, from, to);

	cr_assert_eq(system(cmd), 0);
	free(cmd);
}

static char *
write_small_trace(const char *dir, size_t n)
{
	struct trace_writer *w = fix_open_writer(dir, 64 << 20, 32 << 20, 0);
	struct trace_event e;

	for (size_t i = 0; i < n; i++) {
		fix_gen_event(&e, i);
		cr_assert_eq(trace_writer_add(w, &e), 0);
		if (i % 3000 == 2999)
			cr_assert_eq(trace_writer_flush(w), 0);
	}
	cr_assert_eq(trace_writer_close(w), 0);
	return xasprintf("%s/seg-00000001.argus", dir);
}

/* A file truncated at any byte yields exactly its complete chunks. */
Test(store, torn_tail_at_random_offsets)
{
	char *dir = fix_tmpdir();
	char *seg = write_small_trace(dir, 60000);
	struct stat sb;

	cr_assert_eq(stat(seg, &sb), 0);
	srand(1234);
	for (int k = 0; k < 40; k++) {
		char *sub = xasprintf("%s/cut%d", dir, k);
		char *file = xasprintf("%s/seg-00000001.argus", sub);
		off_t cut = 100 + (off_t)((double)rand() / RAND_MAX *
		    (double)(sb.st_size - 200));

		mkdir(sub, 0700);
		copy_file(seg, file, cut);

		struct trace_reader *r;
		char *cause = NULL;
		int err = trace_reader_open(&r, sub, &cause);

		if (cut < 600 && err != 0) {
			/* Cut inside the header: a clear error. */
			cr_assert(err == TRACE_ECORRUPT || err == TRACE_EMAGIC);
			free(cause);
		} else {
			cr_assert_eq(err, 0, "cut at %lld: %s", (long long)cut,
			    cause ? cause : "");
			size_t got = fix_read_checked(r, NULL);

			/* Exactly the chunks that lie whole before the cut. */
			cr_assert_eq(got, trace_reader_info(r)->nevents);
			cr_assert_leq(trace_reader_ndamage(r), 1);
			trace_reader_close(r);
		}
		free(file);
		free(sub);
	}
	free(seg);
	fix_rm_rf(dir);
	free(dir);
}

static void
poke(const char *path, off_t off, const void *bytes, size_t n)
{
	int fd = open(path, O_RDWR);

	cr_assert_geq(fd, 0);
	cr_assert_eq(pwrite(fd, bytes, n, off), (ssize_t)n);
	close(fd);
}

/* A corrupt chunk in the middle is reported once and skipped. */
/* The offset and the header of the chunk after the first skip of the
   segment seg. */
static uint64_t
chunk_at(const char *seg, int skip, struct chunk_hdr *ch)
{
	struct seg_header h;
	uint8_t head[65536];
	size_t need;
	int fd = open(seg, O_RDONLY);
	ssize_t k = read(fd, head, sizeof(head));

	cr_assert_gt(k, 0);
	cr_assert_eq(seg_header_decode(&h, head, (size_t)k, &need), 0);
	uint64_t off = h.header_len;
	uint8_t hb[CHUNK_HDR_LEN];

	for (int i = 0; i <= skip; i++) {
		if (i > 0)
			off += CHUNK_HDR_LEN + ch->csize;
		cr_assert_eq(pread(fd, hb, sizeof(hb), (off_t)off), CHUNK_HDR_LEN);
		cr_assert_eq(chunk_hdr_decode(ch, hb), 0);
	}
	close(fd);
	seg_header_free(&h);
	return off;
}

/* write_small_trace() of 60000 events into dir, read back once: its
   events in *total, its chunks in *nchunks; the segment's path. */
static char *
small_trace_read(const char *dir, size_t *total, uint64_t *nchunks)
{
	char *seg = write_small_trace(dir, 60000);
	struct trace_reader *r = fix_open_reader(dir);

	*total = fix_read_checked(r, NULL);
	*nchunks = trace_reader_info(r)->nchunks;
	trace_reader_close(r);
	return seg;
}

Test(store, corrupt_chunk_in_the_middle)
{
	char *dir = fix_tmpdir();
	uint64_t nchunks;
	size_t total;
	char *seg = small_trace_read(dir, &total, &nchunks);
	struct trace_reader *r;

	cr_assert_gt(nchunks, 6);

	/* the 4th chunk */
	struct chunk_hdr ch;
	uint64_t off = chunk_at(seg, 3, &ch);

	/* Damage the frame's payload: zstd's checksum must catch it. */
	poke(seg, (off_t)(off + CHUNK_HDR_LEN + ch.csize / 2), "\xde\xad\xbe\xef", 4);
	r = fix_open_reader(dir);
	size_t got = fix_read_checked(r, NULL);

	cr_assert_eq(got, total - ch.count, "got %zu of %zu - %u", got, total,
	    ch.count);
	cr_assert_eq(trace_reader_ndamage(r), 1);
	cr_assert_eq(trace_reader_damage(r, 0)->offset, off);
	trace_reader_close(r);

	/* Damage the chunk header as well and drop the index: resync. */
	poke(seg, (off_t)(off + 8), "\xff\xff\xff\xff", 4);
	struct stat sb;

	stat(seg, &sb);
	poke(seg, sb.st_size - 8, "XXXXXXXX", 8);
	r = fix_open_reader(dir);
	got = fix_read_checked(r, NULL);
	cr_assert_eq(got, total - ch.count);
	cr_assert_geq(trace_reader_ndamage(r), 1);
	trace_reader_close(r);
	free(seg);
	fix_rm_rf(dir);
	free(dir);
}

/*
 * Opening a trace reads the seek indexes, and of the chunks only the
 * first of each stream (where the reader starts): with the header of
 * every other chunk damaged, the open reports nothing and counts every
 * event. Each damaged chunk is then reported, once, when it is read, and
 * skipped; so is a chunk whose header is intact but says another event
 * count than its index entry.
 */
Test(store, chunk_checked_against_its_index_entry_when_read)
{
	char *dir = fix_tmpdir();
	uint64_t nchunks;
	size_t total;
	char *seg = small_trace_read(dir, &total, &nchunks);
	struct trace_reader *r;
	struct chunk_hdr ch;
	uint64_t *offs = xcalloc(nchunks, sizeof(*offs));
	uint32_t *counts = xcalloc(nchunks, sizeof(*counts));
	int *later = xcalloc(nchunks, sizeof(*later));
	int seen[FIX_NCPUS + 1] = { 0 };	/* and the metadata stream */
	size_t in_firsts = 0, nlater = 0, pick = 0;

	cr_assert_gt(nchunks, 6);
	for (uint64_t k = 0; k < nchunks; k++) {
		offs[k] = chunk_at(seg, (int)k, &ch);
		counts[k] = ch.count;
		unsigned cpu = ch.cpu == TRACE_CPU_META ? FIX_NCPUS : ch.cpu;

		cr_assert_lt(cpu, FIX_NCPUS + 1);
		later[k] = seen[cpu]++ > 0;
		in_firsts += later[k] ? 0 : ch.count;
		nlater += later[k] != 0;
		if (later[k] && pick == 0)
			pick = k;
	}
	cr_assert_gt(nlater, 2);

	/* an intact header (CRC and all) with one event more */
	uint8_t hb[CHUNK_HDR_LEN];

	chunk_at(seg, (int)pick, &ch);
	ch.count++;
	chunk_hdr_encode(&ch, hb);
	poke(seg, (off_t)offs[pick], hb, CHUNK_HDR_LEN);
	r = fix_open_reader(dir);
	cr_assert_eq(trace_reader_ndamage(r), 0);
	size_t got = fix_read_checked(r, NULL);

	cr_assert_eq(got, total - counts[pick]);
	cr_assert_eq(trace_reader_ndamage(r), 1);
	cr_assert_eq(trace_reader_damage(r, 0)->offset, offs[pick]);
	cr_assert(strstr(trace_reader_damage(r, 0)->reason, "index") != NULL,
	    "%s", trace_reader_damage(r, 0)->reason);
	trace_reader_close(r);

	/* every header but the first of each stream broken */
	for (uint64_t k = 0; k < nchunks; k++)
		if (later[k])
			poke(seg, (off_t)(offs[k] + 8), "\xff\xff\xff\xff", 4);
	r = fix_open_reader(dir);
	cr_assert_eq(trace_reader_ndamage(r), 0, "the open read a chunk");
	cr_assert_eq(trace_reader_info(r)->nevents, total);
	got = fix_read_checked(r, NULL);
	cr_assert_eq(got, in_firsts);
	cr_assert_eq(trace_reader_ndamage(r), nlater);
	trace_reader_close(r);
	free(offs);
	free(counts);
	free(later);
	free(seg);
	fix_rm_rf(dir);
	free(dir);
}

/* Every event of r, from where it is, into *v; how many. */
static size_t
read_all(struct trace_reader *r, struct trace_event **v)
{
	size_t n = 0, cap = 0, k;

	*v = NULL;
	do {
		if (cap - n < 4096) {
			cap = cap ? 2 * cap : 65536;
			*v = xreallocarray(*v, cap, sizeof(**v));
		}
		k = trace_reader_read(r, *v + n, 4096);
		n += k;
	} while (k > 0);
	return n;
}

/*
 * Decoding ahead on a helper thread gives the events of decoding as the
 * reader goes, in the same order, across many chunks of several CPUs,
 * with a damaged chunk in the middle skipped and reported once the same
 * way; a seek stops it (half way through, the helper busy), and the
 * reader reads on as before.
 */
Test(store, decode_ahead_as_without)
{
	char *dir = fix_tmpdir();
	char *seg = write_small_trace(dir, 60000);
	struct chunk_hdr ch;
	uint64_t off = chunk_at(seg, 5, &ch);
	struct trace_event *a, *b, *c;

	poke(seg, (off_t)(off + CHUNK_HDR_LEN + ch.csize / 2),
	    "\xde\xad\xbe\xef", 4);
	/* open until the end: its events' strings are its own */
	struct trace_reader *ra = fix_open_reader(dir);
	size_t na = read_all(ra, &a);
	cr_assert_gt(trace_reader_info(ra)->nchunks, 10);
	cr_assert_eq(trace_reader_ndamage(ra), 1);

	struct trace_reader *r = fix_open_reader(dir);
	cr_assert_eq(trace_reader_decode_ahead(r), 0);
	size_t nb = read_all(r, &b);
	cr_assert_eq(nb, na);
	for (size_t i = 0; i < na; i++) {
		fix_assert_same(&b[i], &a[i]);
		cr_assert_eq(b[i].cpu, a[i].cpu, "event %zu", i);
	}
	cr_assert_eq(trace_reader_ndamage(r), 1);
	cr_assert_eq(trace_reader_damage(r, 0)->offset, off);
	cr_assert_not_null(strstr(trace_reader_damage(r, 0)->reason,
	    "does not decompress"), "%s", trace_reader_damage(r, 0)->reason);

	cr_assert_eq(trace_reader_seek(r, 0), 0);
	cr_assert_eq(trace_reader_decode_ahead(r), 0);
	struct trace_event e;
	for (size_t i = 0; i < 1000; i++) {
		cr_assert_eq(trace_reader_next(r, &e), 1);
		fix_assert_same(&e, &a[i]);
	}
	cr_assert_eq(trace_reader_seek(r, a[na / 2].ts), 0);
	size_t from = na / 2;
	while (from > 0 && a[from - 1].ts == a[na / 2].ts)
		from--;
	size_t nc = read_all(r, &c);
	cr_assert_eq(nc, na - from);
	for (size_t i = 0; i < nc; i++)
		fix_assert_same(&c[i], &a[from + i]);
	trace_reader_close(r);
	trace_reader_close(ra);
	free(a);
	free(b);
	free(c);
	free(seg);
	fix_rm_rf(dir);
	free(dir);
}

Test(store, bad_magic_is_a_clear_error)
{
	char *dir = fix_tmpdir();
	char *f = xasprintf("%s/seg-00000001.argus", dir);
	FILE *fp = fopen(f, "w");
	struct trace_reader *r;
	char *cause = NULL;

	fputs("this is not a trace at all, just some text\n", fp);
	fclose(fp);
	cr_assert_eq(trace_reader_open(&r, dir, &cause), TRACE_EMAGIC);
	cr_assert_not_null(strstr(cause, "seg-00000001.argus"));
	cr_assert_not_null(strstr(cause, "bad magic"));
	free(cause);
	cr_assert_eq(trace_reader_open(&r, f, &cause), TRACE_EMAGIC);
	free(cause);
	cr_assert_eq(trace_reader_open(&r, "/nonexistent/argus", &cause), ENOENT);
	free(cause);
	unlink(f);
	cr_assert_eq(trace_reader_open(&r, dir, &cause), TRACE_EEMPTY);
	free(cause);
	free(f);
	fix_rm_rf(dir);
	free(dir);
}

Test(store, newer_version_is_refused)
{
	char *dir = fix_tmpdir();
	char *seg = write_small_trace(dir, 1000);
	struct trace_reader *r;
	char *cause = NULL;

	poke(seg, 8, "\x63\x00\x00\x00", 4);	/* version 99 */
	cr_assert_eq(trace_reader_open(&r, dir, &cause), TRACE_EVERSION);
	cr_assert_not_null(strstr(cause, "version"));
	free(cause);
	free(seg);
	fix_rm_rf(dir);
	free(dir);
}

/* A type this reader does not know (renamed in the file) is skipped. */
Test(store, unknown_type_is_skipped)
{
	char *dir = fix_tmpdir();
	struct trace_writer *w = fix_open_writer(dir, 1 << 30, 1 << 20, 0);
	struct trace_event e = { .cpu = 0, .tid = 5 };
	size_t nsw = 0, nlost = 0;

	for (int i = 0; i < 1000; i++) {
		e.ts = 100 + (uint64_t)i;
		e.type = (i % 3 == 0) ? TT_LOST : TT_SWITCH;
		e.arg[0] = 1;
		e.arg[1] = 5;
		e.arg[2] = 120;
		if (e.type == TT_LOST)
			nlost++;
		else
			nsw++;
		cr_assert_eq(trace_writer_add(w, &e), 0);
	}
	cr_assert_eq(trace_writer_close(w), 0);

	/* Rename "lost" to "lozt" in the schema and fix the header crc. */
	char *seg = xasprintf("%s/seg-00000001.argus", dir);
	int fd = open(seg, O_RDWR);
	uint8_t head[8192];
	ssize_t k = pread(fd, head, sizeof(head), 0);
	uint32_t hlen = get_le32(head + 12);

	cr_assert_gt(k, (ssize_t)hlen);
	uint8_t *p = memmem(head, hlen, "\x04lost", 5);

	cr_assert_not_null(p);
	p[3] = 'z';
	put_le32(head + 16, trace_crc32(0, head + SEG_FIXED_LEN,
	    hlen - SEG_FIXED_LEN));
	cr_assert_eq(pwrite(fd, head, hlen, 0), (ssize_t)hlen);
	close(fd);

	struct trace_reader *r = fix_open_reader(dir);
	struct trace_reader_stats st;
	size_t got = 0;

	while (fix_next(r, &e)) {
		cr_assert_eq(e.type, TT_SWITCH);
		got++;
	}
	trace_reader_stats(r, &st);
	cr_assert_eq(got, nsw);
	cr_assert_eq(st.unknown, nlost);
	trace_reader_close(r);
	free(seg);
	fix_rm_rf(dir);
	free(dir);
}

/* Seeking decompresses only the chunks from the target time on. */
Test(store, seek_uses_the_index)
{
	char *dir = fix_tmpdir();
	struct trace_writer *w = fix_open_writer(dir, 1 << 30, 4 << 20, 0);
	struct trace_event e;
	const size_t n = 300000;

	for (size_t i = 0; i < n; i++) {
		fix_gen_event(&e, i);
		cr_assert_eq(trace_writer_add(w, &e), 0);
	}
	cr_assert_eq(trace_writer_close(w), 0);
	fix_gen_event(&e, n * 3 / 4);
	uint64_t target = e.ts;

	struct trace_reader *r = fix_open_reader(dir);
	struct trace_reader_stats st;

	cr_assert_eq(trace_reader_seek(r, target), 0);
	cr_assert_eq(fix_next(r, &e), 1);
	cr_assert_geq(e.ts, target);
	cr_assert_leq(fix_index_of(&e), n * 3 / 4 + FIX_NCPUS);
	trace_reader_stats(r, &st);
	cr_assert_lt(st.chunks_read, trace_reader_info(r)->nchunks / 2,
	    "seek decompressed %llu of %llu chunks",
	    (unsigned long long)st.chunks_read,
	    (unsigned long long)trace_reader_info(r)->nchunks);
	/* Rewind reads everything again. */
	cr_assert_eq(trace_reader_seek(r, 0), 0);
	size_t got = 0;

	while (fix_next(r, &e))
		got++;
	cr_assert_eq(got, n);
	trace_reader_close(r);
	fix_rm_rf(dir);
	free(dir);
}

Test(store, one_writer_per_directory_and_no_symlinks)
{
	char *dir = fix_tmpdir();
	struct trace_writer *w = fix_open_writer(dir, 1 << 30, 1 << 20, 0), *w2;
	char *cause = NULL;
	char *link = xasprintf("%s-link", dir);
	struct trace_event e;

	cr_assert_eq(trace_writer_open(&w2, dir, NULL, &cause), TRACE_ELOCKED);
	free(cause);
	fix_gen_event(&e, 0);
	cr_assert_eq(trace_writer_add(w, &e), 0);
	cr_assert_eq(trace_writer_close(w), 0);

	struct stat sb;
	char *seg = xasprintf("%s/seg-00000001.argus", dir);

	cr_assert_eq(stat(seg, &sb), 0);
	cr_assert_eq(sb.st_mode & 0777, 0600);
	cr_assert_eq(symlink(dir, link), 0);
	cr_assert_neq(trace_writer_open(&w2, link, NULL, &cause), 0);
	free(cause);
	unlink(link);

	/* Out-of-order events on one CPU are refused and counted. */
	w = fix_open_writer(dir, 1 << 30, 1 << 20, 0);
	e.ts = 1000;
	cr_assert_eq(trace_writer_add(w, &e), 0);
	e.ts = 999;
	cr_assert_eq(trace_writer_add(w, &e), TRACE_EORDER);
	struct trace_writer_stats st;

	trace_writer_stats(w, &st);
	cr_assert_eq(st.dropped, 1);
	cr_assert_eq(trace_writer_close(w), 0);
	/* A bound that cannot hold two segments is refused. */
	struct trace_writer_opts o = { .size_bound = 100 << 10,
	    .segment_size = 64 << 10 };

	cr_assert_eq(trace_writer_open(&w2, dir, &o, &cause), TRACE_EBOUND);
	free(cause);
	free(seg);
	free(link);
	fix_rm_rf(dir);
	free(dir);
}

struct bulk_job {
	struct trace_reader *r;
	size_t first, step;
	size_t events, defs;
	int bad;
};

static void *
bulk_worker(void *arg)
{
	struct bulk_job *j = arg;
	struct trace_chunk_buf *b = trace_chunk_buf_new();

	for (size_t i = j->first; i < trace_reader_nchunks(j->r); i += j->step) {
		const struct trace_chunk_info *ci = trace_reader_chunk(j->r, i);
		struct trace_event *evs = xcalloc(ci->count, sizeof(*evs)), e;
		size_t n = trace_reader_decode_chunk(j->r, i, b, evs);

		if (n != ci->count)
			j->bad++;
		for (size_t k = 0; k < n; k++) {
			if (evs[k].type == TT_STACKDEF) {
				j->defs++;
				continue;
			}
			fix_gen_event(&e, fix_index_of(&evs[k]));
			if (memcmp(evs[k].arg, e.arg, sizeof(e.arg)) != 0 ||
			    evs[k].tid != e.tid || evs[k].cpu != ci->cpu ||
			    evs[k].ts != e.ts || evs[k].blob_len != e.blob_len ||
			    (e.blob_len && memcmp(evs[k].blob, e.blob,
			    e.blob_len) != 0) ||
			    (k && evs[k].ts < evs[k - 1].ts))
				j->bad++;
		}
		j->events += n;
		free(evs);
	}
	trace_chunk_buf_free(b);
	return NULL;
}

/* Chunks decoded on two threads give exactly the generator's events. */
Test(store, bulk_decode_on_two_threads)
{
	char *dir = fix_tmpdir();
	struct trace_writer *w = fix_open_writer(dir, 1 << 30, 1 << 20, 0);
	struct trace_event e;
	const size_t n = 200000;

	for (size_t i = 0; i < n; i++) {
		fix_gen_event(&e, i);
		cr_assert_eq(trace_writer_add(w, &e), 0);
	}
	cr_assert_eq(trace_writer_close(w), 0);

	struct trace_reader *r = fix_open_reader(dir);
	struct bulk_job jobs[2] = { { r, 0, 2, 0, 0, 0 }, { r, 1, 2, 0, 0, 0 } };
	pthread_t th[2];

	cr_assert_gt(trace_reader_nchunks(r), 10);
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, bulk_worker, &jobs[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	cr_assert_eq(jobs[0].bad + jobs[1].bad, 0);
	/* the generator's two stacks, defined in each segment */
	cr_assert_eq(jobs[0].events + jobs[1].events, n + jobs[0].defs +
	    jobs[1].defs);
	cr_assert_eq(jobs[0].defs + jobs[1].defs, fix_count_defs(dir));
	cr_assert_geq(jobs[0].defs + jobs[1].defs,
	    2 * trace_reader_info(r)->nsegments);
	/* Chunks of one CPU are consecutive and in time order. */
	for (size_t i = 1; i < trace_reader_nchunks(r); i++) {
		const struct trace_chunk_info *a = trace_reader_chunk(r, i - 1);
		const struct trace_chunk_info *b = trace_reader_chunk(r, i);

		if (a->cpu == b->cpu)
			cr_assert_leq(a->last_ts, b->first_ts);
	}
	trace_reader_close(r);
	fix_rm_rf(dir);
	free(dir);
}

/*
 * A write error (here a file size limit, as a full disk would) is sticky
 * and leaves no half chunk: the trace reads back clean up to the last
 * good chunk.
 */
Test(store, write_error_is_sticky_and_clean)
{
	char *dir = fix_tmpdir();
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct rlimit rl = { 300 << 10, 300 << 10 };
		struct trace_writer_opts o = { .size_bound = 64 << 20,
		    .segment_size = 16 << 20, .chunk_size = 16 << 10,
		    .ncpus = FIX_NCPUS, .group = (gid_t)-1 };
		struct trace_writer *w;
		struct trace_event e;
		int err = 0;
		size_t i;

		signal(SIGXFSZ, SIG_IGN);
		setrlimit(RLIMIT_FSIZE, &rl);
		if (trace_writer_open(&w, dir, &o, NULL) != 0)
			_exit(10);
		for (i = 0; i < 5000000 && err == 0; i++) {
			fix_gen_event(&e, i);
			err = trace_writer_add(w, &e);
		}
		if (err != EFBIG)
			_exit(11);
		fix_gen_event(&e, i);
		if (trace_writer_add(w, &e) != EFBIG || trace_writer_flush(w) != EFBIG)
			_exit(12);	/* not sticky */
		trace_writer_close(w);
		_exit(0);
	}
	int status;

	waitpid(pid, &status, 0);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "child status %d", status);
	struct trace_reader *r = fix_open_reader(dir);
	size_t got = fix_read_checked(r, NULL);

	cr_assert_gt(got, 1000);
	cr_assert_eq(got, trace_reader_info(r)->nevents);
	cr_assert_eq(trace_reader_ndamage(r), 0, "damage: %s",
	    trace_reader_ndamage(r) ? trace_reader_damage(r, 0)->reason : "");
	trace_reader_close(r);
	fix_rm_rf(dir);
	free(dir);
}

/* The recorder's backend and pid, header extensions, come back; a trace
   written without them names neither. */
Test(store, recorder_and_its_pid_named)
{
	for (int named = 0; named < 2; named++) {
		char *dir = fix_tmpdir();
		struct trace_writer_opts o = { .size_bound = 1ULL << 30,
		    .segment_size = 64ULL << 20, .ncpus = FIX_NCPUS,
		    .group = (gid_t)-1, .hostname = "testhost",
		    .release = "6.0-test", .boot_id = "boot-1" };
		struct trace_writer *w;
		struct trace_event e;
		char *cause = NULL;

		if (named) {
			o.recorder = "bpf";
			o.recorder_pid = 4242;
		}
		cr_assert_eq(trace_writer_open(&w, dir, &o, &cause), 0);
		fix_gen_event(&e, 0);
		cr_assert_eq(trace_writer_add(w, &e), 0);
		cr_assert_eq(trace_writer_close(w), 0);
		struct trace_reader *r = fix_open_reader(dir);
		const struct trace_info *in = trace_reader_info(r);
		if (named) {
			cr_assert_not_null(in->recorder);
			cr_expect_str_eq(in->recorder, "bpf");
			cr_expect_eq(in->recorder_pid, 4242);
		} else {
			cr_expect_null(in->recorder);
			cr_expect_eq(in->recorder_pid, 0);
		}
		trace_reader_close(r);
		fix_rm_rf(dir);
		free(dir);
	}
}
