/*
 * writer.c: appends events to a trace directory within a size bound.
 *
 * Each CPU (and the metadata stream) has a stream of encoded events
 * waiting to become a chunk (writer-stream.c). A full stream is
 * compressed into one zstd frame and appended to the open segment with
 * its chunk header in a single write. The list of segments on disk,
 * oldest first, is kept with their sizes; before anything is written the
 * writer makes room by deleting the oldest closed segments, so the files
 * never add up to more than the bound, counting the seek index the open
 * segment will need when it is closed.
 */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <zstd.h>

#include "common/array.h"
#include "common/common.h"
#include "writer-local.h"

static uint64_t
index_cost(size_t n)
{
	return INDEX_HDR_LEN + (uint64_t)n * INDEX_ENTRY_LEN + TRAILER_LEN;
}

static int
werr(struct trace_writer *w, int err, const char *fmt, const char *arg)
{
	snprintf(w->err, sizeof(w->err), fmt, arg, trace_strerror(err));
	return err;
}

static char *
read_line_file(const char *path)
{
	char buf[256];
	FILE *f = fopen(path, "r");

	if (f == NULL)
		return xstrdup("");
	if (fgets(buf, sizeof(buf), f) == NULL)
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return xstrdup(buf);
}

/* Parse "seg-NNNNNNNN.argus"; returns 0 and the sequence number. */
static int
seg_name_seq(const char *name, uint64_t *seq)
{
	char *end;

	if (strncmp(name, "seg-", 4) != 0)
		return -1;
	*seq = strtoull(name + 4, &end, 10);
	return strcmp(end, ".argus") == 0 && end != name + 4 ? 0 : -1;
}

static int
seg_cmp(const void *a, const void *b)
{
	const struct segfile *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void
seg_path(char *buf, size_t len, uint64_t seq)
{
	snprintf(buf, len, "seg-%08llu.argus", (unsigned long long)seq);
}

static int
scan_existing(struct trace_writer *w)
{
	int fd = dup(w->dirfd);
	DIR *d;
	struct dirent *de;

	if (fd < 0 || (d = fdopendir(fd)) == NULL) {
		if (fd >= 0)
			close(fd);
		return errno;
	}
	while ((de = readdir(d)) != NULL) {
		uint64_t seq;
		struct stat sb;

		if (seg_name_seq(de->d_name, &seq) != 0)
			continue;
		if (fstatat(w->dirfd, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(sb.st_mode))
			continue;
		w->segs = xreallocarray(w->segs, w->nsegs + 1, sizeof(*w->segs));
		w->segs[w->nsegs].seq = seq;
		w->segs[w->nsegs].size = (uint64_t)sb.st_size;
		w->closed_bytes += (uint64_t)sb.st_size;
		w->nsegs++;
	}
	closedir(d);
	if (w->nsegs > 1)
		qsort(w->segs, w->nsegs, sizeof(*w->segs), seg_cmp);
	return 0;
}

/*
 * The recording id: the newest segment's when the directory already
 * holds a recording (appending continues it), else a new random one.
 */
static void
choose_rec_id(struct trace_writer *w)
{
	struct seg_header h;
	uint8_t *p = NULL;
	size_t need = 4096, have = 0;
	int fd = -1, err = EAGAIN;
	char name[64];

	if (w->nsegs > 0) {
		seg_path(name, sizeof(name), w->segs[w->nsegs - 1].seq);
		fd = openat(w->dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
		    O_CLOEXEC);
	}
	while (fd >= 0 && err == EAGAIN && need <= (64u << 20)) {
		ssize_t n;

		p = xrealloc(p, need);
		n = pread(fd, p + have, need - have, (off_t)have);
		if (n <= 0)
			break;
		have += (size_t)n;
		if (have < need)
			continue;
		err = seg_header_decode(&h, p, have, &need);
	}
	if (fd >= 0 && err == EAGAIN && have > 0)
		err = seg_header_decode(&h, p, have, &need);
	if (fd >= 0)
		close(fd);
	free(p);
	if (err == 0) {
		int has = h.has_rec_id;

		memcpy(w->rec_id, h.rec_id, TRACE_REC_ID_LEN);
		seg_header_free(&h);
		if (has)
			return;
	}
	if (getrandom(w->rec_id, TRACE_REC_ID_LEN, 0) != TRACE_REC_ID_LEN) {
		/* no entropy source: time and pid still tell recordings apart */
		uint64_t t = now_ns();
		uint32_t pid = (uint32_t)getpid();

		memcpy(w->rec_id, &t, 8);
		memcpy(w->rec_id + 8, &pid, 4);
	}
}

static int
delete_oldest(struct trace_writer *w)
{
	char name[64];
	size_t closed = w->nsegs - (w->open_seg ? 1 : 0);

	if (closed == 0)
		return TRACE_EBOUND;
	seg_path(name, sizeof(name), w->segs[0].seq);
	if (unlinkat(w->dirfd, name, 0) != 0 && errno != ENOENT)
		return werr(w, errno, "cannot delete %s: %s", name);
	w->closed_bytes -= w->segs[0].size;
	memmove(w->segs, w->segs + 1, (w->nsegs - 1) * sizeof(*w->segs));
	w->nsegs--;
	w->st.deleted++;
	return 0;
}

/* Make room for `more` bytes on top of what is and will be on disk. */
static int
make_room(struct trace_writer *w, uint64_t more)
{
	for (;;) {
		uint64_t open_bytes = w->open_seg ?
		    w->segs[w->nsegs - 1].size + index_cost(w->nindex) : 0;

		if (w->closed_bytes + open_bytes + more <= w->o.size_bound)
			return 0;
		int err = delete_oldest(w);

		if (err)
			return err == TRACE_EBOUND ?
			    werr(w, err, "%s%s", "") : err;
	}
}

static int
write_all(int fd, const struct iovec *iov, int n)
{
	struct iovec v[4];
	ssize_t r;

	memcpy(v, iov, (size_t)n * sizeof(*v));
	while (n > 0) {
		r = writev(fd, v, n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		while (n > 0 && (size_t)r >= v[0].iov_len) {
			r -= (ssize_t)v[0].iov_len;
			memmove(v, v + 1, (size_t)(n - 1) * sizeof(*v));
			n--;
		}
		if (n > 0) {
			v[0].iov_base = (char *)v[0].iov_base + r;
			v[0].iov_len -= (size_t)r;
		}
	}
	return 0;
}

/*
 * Cut the open segment back to off, its last complete piece, after a
 * failed or short write (a full disk): the file is truncated and the
 * descriptor's position moved back with it, or the next write (the seek
 * index) would land past a hole where the torn chunk was.
 */
static void
cut_back(int fd, uint64_t off)
{
	if (ftruncate(fd, (off_t)off) == 0)
		(void)lseek(fd, (off_t)off, SEEK_SET);
}

static int
close_segment(struct trace_writer *w)
{
	struct buf b = { 0 };
	uint8_t e[INDEX_ENTRY_LEN], t[TRAILER_LEN];
	uint64_t off = w->segs[w->nsegs - 1].size;
	int err;

	if (!w->open_seg)
		return 0;
	buf_put(&b, INDEX_MAGIC, 8);
	buf_put(&b, (uint8_t[8]){ 0 }, 8);
	put_le32(b.data + 8, (uint32_t)w->nindex);
	for (size_t i = 0; i < w->nindex; i++) {
		const struct index_entry *x = &w->index[i];

		put_le64(e, x->offset);
		put_le64(e + 8, x->first_ts);
		put_le64(e + 16, x->last_ts);
		put_le32(e + 24, x->count);
		put_le16(e + 28, x->cpu);
		put_le16(e + 30, 0);
		buf_put(&b, e, sizeof(e));
	}
	put_le64(t, off);
	put_le32(t + 8, (uint32_t)w->nindex);
	put_le32(t + 12, trace_crc32(0, b.data, b.len));
	memcpy(t + 16, TRAILER_MAGIC, 8);
	buf_put(&b, t, sizeof(t));

	struct iovec iov = { b.data, b.len };

	err = write_all(w->segfd, &iov, 1);
	if (err == 0) {
		w->segs[w->nsegs - 1].size += b.len;
		w->st.written_bytes += b.len;
	} else {
		/* No half index: readers then walk the chunk headers. */
		cut_back(w->segfd, off);
	}
	buf_free(&b);
	fsync(w->segfd);
	close(w->segfd);
	w->segfd = -1;
	w->open_seg = 0;
	w->closed_bytes += w->segs[w->nsegs - 1].size;
	w->nindex = 0;
	if (err)
		return werr(w, err, "cannot write the segment index: %s%s", "");
	return 0;
}

static int
open_segment(struct trace_writer *w, uint64_t first_ts)
{
	struct seg_header h = { 0 };
	struct buf b = { 0 };
	char name[64];
	uint64_t seq = w->nsegs ? w->segs[w->nsegs - 1].seq + 1 : 1;
	int err, fd;

	h.seq = seq;
	h.created_ts = first_ts;
	h.realtime_offset = w->o.realtime_offset;
	h.ncpus = w->o.ncpus;
	h.clock = w->clock;
	h.hostname = w->hostname;
	h.release = w->release;
	h.boot_id = w->boot_id;
	h.recorder = (char *)w->o.recorder;	/* only read */
	h.recorder_pid = w->o.recorder_pid;
	h.version = w->o.format;
	h.threads = w->threads;
	h.nthreads = w->nthreads;
	h.has_rec_id = 1;
	memcpy(h.rec_id, w->rec_id, TRACE_REC_ID_LEN);
	seg_header_encode(&b, &h);

	if (b.len + index_cost(1) + CHUNK_HDR_LEN > w->o.segment_size) {
		buf_free(&b);
		return werr(w, TRACE_EBOUND,
		    "the segment header (thread table) is larger than a segment%s: %s", "");
	}
	err = make_room(w, b.len + index_cost(0));
	if (err) {
		buf_free(&b);
		return err;
	}
	seg_path(name, sizeof(name), seq);
	fd = openat(w->dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, w->o.file_mode);
	if (fd < 0) {
		err = errno;
		buf_free(&b);
		return werr(w, err, "cannot create %s: %s", name);
	}
	if (w->o.group != (gid_t)-1)
		(void)fchown(fd, (uid_t)-1, w->o.group);
	(void)fchmod(fd, w->o.file_mode);

	struct iovec iov = { b.data, b.len };

	err = write_all(fd, &iov, 1);
	buf_free(&b);
	if (err) {
		close(fd);
		unlinkat(w->dirfd, name, 0);
		return werr(w, err, "cannot write %s: %s", name);
	}
	w->segs = xreallocarray(w->segs, w->nsegs + 1, sizeof(*w->segs));
	w->segs[w->nsegs].seq = seq;
	w->segs[w->nsegs].size = iov.iov_len;
	w->nsegs++;
	w->open_seg = 1;
	w->segfd = fd;
	w->nindex = 0;
	w->st.written_bytes += iov.iov_len;
	return 0;
}

static int flush_stream_once(struct trace_writer *w, size_t cpu);

int
wr_flush_stream(struct trace_writer *w, size_t cpu)
{
	int err;

	if (w->failed)
		return w->failed;
	err = flush_stream_once(w, cpu);
	if (err)
		w->failed = err;
	return err;
}

static int
flush_stream_once(struct trace_writer *w, size_t cpu)
{
	struct stream *s = w->streams[cpu];
	struct chunk_hdr h = { 0 };
	uint8_t hb[CHUNK_HDR_LEN];
	size_t bound, n;
	uint64_t need;
	int err;

	if (s == NULL || s->count == 0)
		return 0;
	if (cpu != w->nstreams - 1 && s->wait_gen == w->meta_chunks + 1) {
		/* the metadata chunk holds definitions this one names */
		s->wait_gen = 0;
		if ((err = flush_stream_once(w, w->nstreams - 1)) != 0)
			return err;
	}
	if (w->o.format != 1)
		wr_join_columns(s);
	bound = ZSTD_compressBound(s->raw.len);
	buf_reserve(&w->zbuf, bound);
	n = ZSTD_compress2(w->cctx, w->zbuf.data, bound, s->raw.data,
	    s->raw.len);
	if (ZSTD_isError(n))
		return werr(w, TRACE_EZSTD, "zstd: %s%s", ZSTD_getErrorName(n));

	h.cpu = (uint16_t)(cpu == w->nstreams - 1 ? TRACE_CPU_META : cpu);
	h.count = s->count;
	h.csize = (uint32_t)n;
	h.rsize = (uint32_t)s->raw.len;
	h.first_ts = s->first_ts;
	h.last_ts = s->prev_ts;
	h.first_tid = s->first_tid;
	chunk_hdr_encode(&h, hb);
	need = CHUNK_HDR_LEN + n;

	if (w->open_seg && w->segs[w->nsegs - 1].size + need +
	    index_cost(w->nindex + 1) > w->o.segment_size) {
		err = close_segment(w);
		if (err)
			return err;
	}
	if (!w->open_seg) {
		if ((err = open_segment(w, s->first_ts)) != 0)
			return err;
		if (wr_stacks_rolled(w, s->first_ts)) {
			/* this chunk, or one it waits for, gets definitions */
			if (w->stk.depth >= 2)
				return werr(w, TRACE_EBOUND, "a segment cannot "
				    "hold a chunk and its stacks%s: %s", "");
			w->stk.depth++;
			err = flush_stream_once(w, cpu);
			w->stk.depth--;
			return err;
		}
	}
	err = make_room(w, need + INDEX_ENTRY_LEN);
	if (err)
		return err;

	struct iovec iov[2] = { { hb, sizeof(hb) }, { w->zbuf.data, n } };

	err = write_all(w->segfd, iov, 2);
	if (err) {
		/* Cut off a partial chunk so the file stays well formed. */
		cut_back(w->segfd, w->segs[w->nsegs - 1].size);
		return werr(w, err, "cannot write a chunk: %s%s", "");
	}
	DGROW(w->index, w->index_cap, w->nindex + 1, 64);
	w->index[w->nindex++] = (struct index_entry){
		.offset = w->segs[w->nsegs - 1].size,
		.first_ts = h.first_ts, .last_ts = h.last_ts,
		.count = h.count, .cpu = h.cpu,
	};
	w->segs[w->nsegs - 1].size += need;
	if (cpu == w->nstreams - 1)
		w->meta_chunks++;
	w->st.chunks++;
	w->st.raw_bytes += s->raw.len;
	w->st.written_bytes += need;
	wr_stream_reset(s);
	return 0;
}

int
trace_writer_thread(struct trace_writer *w, uint64_t ts,
    const struct trace_thread *t)
{
	struct trace_event ev = { 0 };
	size_t i;

	for (i = 0; i < w->nthreads; i++)
		if (w->threads[i].tid == t->tid)
			break;
	if (t->flags & TRACE_THREAD_EXITED) {
		if (i < w->nthreads)
			w->threads[i] = w->threads[--w->nthreads];
	} else {
		if (i == w->nthreads) {
			DGROW(w->threads, w->threads_cap, w->nthreads + 1,
			    256);
			w->nthreads++;
		}
		w->threads[i] = *t;
		w->threads[i].comm[TRACE_COMM_LEN - 1] = '\0';
	}
	ev.ts = ts;
	ev.type = TT_THREAD;
	ev.cpu = TRACE_CPU_META;
	ev.arg[0] = t->tid;
	ev.arg[1] = t->pid;
	ev.arg[2] = t->ppid;
	ev.arg[3] = t->start_ts;
	ev.arg[4] = t->flags;
	ev.blob = t->comm;
	ev.blob_len = (uint32_t)strnlen(t->comm, TRACE_COMM_LEN - 1);
	return trace_writer_add(w, &ev);
}

int
trace_writer_flush(struct trace_writer *w)
{
	for (size_t i = 0; i < w->nstreams; i++) {
		int err = wr_flush_stream(w, i);

		if (err)
			return err;
	}
	return 0;
}

int
trace_writer_open(struct trace_writer **wp, const char *dir,
    const struct trace_writer_opts *opts, char **cause)
{
	struct trace_writer *w = xcalloc(1, sizeof(*w));
	struct utsname u;
	size_t r;
	int err;

	*wp = NULL;
	w->dirfd = w->lockfd = w->segfd = -1;
	if (opts)
		w->o = *opts;
	if (w->o.size_bound == 0)
		w->o.size_bound = TRACE_DEFAULT_BOUND;
	if (w->o.segment_size == 0)
		w->o.segment_size = TRACE_DEFAULT_SEGMENT;
	if (w->o.segment_size < MIN_SEGMENT) {
		if (cause)
			*cause = xasprintf("segment size %llu bytes is below "
			    "the minimum of %u bytes",
			    (unsigned long long)w->o.segment_size, MIN_SEGMENT);
		free(w);
		return TRACE_EBOUND;
	}
	if (w->o.size_bound < 2 * w->o.segment_size) {
		if (cause)
			*cause = xasprintf("size bound %llu bytes must hold "
			    "two segments of %llu bytes",
			    (unsigned long long)w->o.size_bound,
			    (unsigned long long)w->o.segment_size);
		free(w);
		return TRACE_EBOUND;
	}
	if (w->o.file_mode == 0)
		w->o.file_mode = 0600;
	if (opts == NULL)
		w->o.group = (gid_t)-1;
	if (w->o.zstd_level == 0)
		w->o.zstd_level = 3;
	if (w->o.format == 0 || w->o.format > TRACE_FORMAT_VERSION)
		w->o.format = TRACE_FORMAT_VERSION;
	if (w->o.ncpus == 0) {
		long n = sysconf(_SC_NPROCESSORS_CONF);

		w->o.ncpus = n > 0 ? (uint32_t)n : 1;
	}
	w->chunk_size = w->o.chunk_size ? w->o.chunk_size : DEFAULT_CHUNK;
	if (w->chunk_size > w->o.segment_size / 8)
		w->chunk_size = (uint32_t)(w->o.segment_size / 8);
	uname(&u);
	w->clock = xstrdup(w->o.clock ? w->o.clock : "boot");
	w->hostname = xstrdup(w->o.hostname ? w->o.hostname : u.nodename);
	w->release = xstrdup(w->o.release ? w->o.release : u.release);
	w->boot_id = w->o.boot_id ? xstrdup(w->o.boot_id) :
	    read_line_file("/proc/sys/kernel/random/boot_id");

	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		err = errno;
		goto fail;
	}
	w->dirfd = trace_dir_open(dir, &err, cause);
	if (w->dirfd < 0) {
		trace_writer_close(w);
		return err;
	}
	/* A group that may read: the directory must let it in (0750). */
	if (w->o.group != (gid_t)-1 &&
	    fchown(w->dirfd, (uid_t)-1, w->o.group) == 0)
		(void)fchmod(w->dirfd, 0750);
	w->lockfd = openat(w->dirfd, ".lock", O_RDWR | O_CREAT | O_NOFOLLOW |
	    O_CLOEXEC, 0600);
	if (w->lockfd < 0) {
		err = errno;
		goto fail;
	}
	if (flock(w->lockfd, LOCK_EX | LOCK_NB) != 0) {
		err = errno == EWOULDBLOCK ? TRACE_ELOCKED : errno;
		goto fail;
	}
	if ((err = scan_existing(w)) != 0)
		goto fail;
	choose_rec_id(w);
	w->cctx = ZSTD_createCCtx();
	if (w->cctx == NULL)
		abort();
	r = ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel,
	    w->o.zstd_level);
	if (!ZSTD_isError(r))
		r = ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1);
	if (ZSTD_isError(r)) {
		if (cause)
			*cause = xasprintf("%s: zstd: %s", dir,
			    ZSTD_getErrorName(r));
		trace_writer_close(w);
		return TRACE_EZSTD;
	}
	w->nstreams = w->o.ncpus + 1;
	w->streams = xcalloc(w->nstreams, sizeof(*w->streams));
	*wp = w;
	return 0;
fail:
	if (cause)
		*cause = xasprintf("%s: %s", dir, trace_strerror(err));
	trace_writer_close(w);
	return err;
}

int
trace_writer_close(struct trace_writer *w)
{
	int err = 0, e;

	if (w == NULL)
		return 0;
	if (w->cctx) {
		err = trace_writer_flush(w);
		if (w->open_seg && (e = close_segment(w)) != 0 && !err)
			err = e;
	}
	if (w->segfd >= 0)
		close(w->segfd);
	if (w->lockfd >= 0)
		close(w->lockfd);
	if (w->dirfd >= 0)
		close(w->dirfd);
	for (size_t i = 0; i < w->nstreams; i++) {
		if (w->streams[i]) {
			for (size_t k = 0; k < NCOLS; k++)
				buf_free(&w->streams[i]->col[k]);
			buf_free(&w->streams[i]->raw);
			buf_free(&w->streams[i]->keys);
			free(w->streams[i]);
		}
	}
	free(w->streams);
	wr_stacks_free(w);
	ZSTD_freeCCtx(w->cctx);
	buf_free(&w->zbuf);
	free(w->segs);
	free(w->index);
	free(w->threads);
	free(w->clock);
	free(w->hostname);
	free(w->release);
	free(w->boot_id);
	free(w);
	return err;
}

void
trace_writer_stats(const struct trace_writer *w, struct trace_writer_stats *st)
{
	*st = w->st;
	st->segments = w->nsegs;
	st->disk_bytes = w->closed_bytes +
	    (w->open_seg ? w->segs[w->nsegs - 1].size : 0);
}

uint64_t
trace_writer_segment(const struct trace_writer *w)
{
	return w->nsegs + w->st.deleted + (w->open_seg ? 0 : 1);
}

int
trace_writer_dirfd(const struct trace_writer *w)
{
	return w->dirfd;
}

const char *
trace_writer_error(const struct trace_writer *w)
{
	return w->err;
}

const char *
trace_strerror(int err)
{
	switch (err) {
	case 0: return "success";
	case TRACE_EMAGIC: return "not an argus trace (bad magic)";
	case TRACE_EVERSION: return "trace format version newer than this argus supports";
	case TRACE_ECORRUPT: return "damaged segment header or index";
	case TRACE_EEMPTY: return "no trace segment found";
	case TRACE_EZSTD: return "compression failed";
	case TRACE_EBOUND: return "size bound too small";
	case TRACE_EORDER: return "event older than the previous one on its CPU";
	case TRACE_ELOCKED: return "another recorder is writing this trace";
	case TRACE_EARG: return "invalid argument";
	case TRACE_EUNSAFE: return "trace directory not safe (owned or "
	    "writable by another user)";
	default: return strerror(err);
	}
}
