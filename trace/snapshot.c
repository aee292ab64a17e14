/*
 * snapshot.c: copies the recent part of a trace directory into another
 * directory while a recorder keeps writing it, and bounds a folder of
 * such snapshots.
 *
 * The writer never changes a segment once its seek index is written, and
 * only appends chunks to the one segment it has open. So a segment whose
 * trailer and index check out is immutable: it is hard linked (the link
 * keeps the data when the ring deletes the original), else cloned
 * (FICLONE), else copied. The open segment is read up to its last
 * complete chunk (each chunk header checked, the frame wholly within the
 * size seen) and written out as a closed segment: its header, those
 * chunks, and a seek index built from their headers. Files are written
 * under a temporary name, always a new file (O_EXCL), and renamed, so a
 * snapshot directory never holds half a segment. The destination must
 * be trusted as a trace directory is (trace_dir_open): another user
 * could plant files in one of theirs while the snapshot is taken.
 *
 * A snapshot folder holds one directory per snapshot; names sort by
 * time, so pruning removes the first names first.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/array.h"
#include "common/common.h"
#include "trace-local.h"

struct snap_seg {
	char name[64];
	uint64_t seq;
	uint64_t size;		/* bytes to take (complete chunks) */
	uint64_t first_ts, last_ts;
	uint32_t header_len;
	int complete;		/* closed: trailer and index valid */
	struct chunk_hdr *chunks;	/* open segment: the chunks to copy */
	uint64_t *offsets;
	size_t nchunks;
};

static uint64_t
index_len(size_t n)
{
	return INDEX_HDR_LEN + (uint64_t)n * INDEX_ENTRY_LEN + TRAILER_LEN;
}

static int
write_full(int fd, const void *buf, size_t n)
{
	size_t done = 0;

	while (done < n) {
		ssize_t k = write(fd, (const uint8_t *)buf + done, n - done);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return errno;
		done += (size_t)k;
	}
	return 0;
}

/* Header length of a segment (0 when not a segment). */
static uint32_t
header_len(int fd, uint64_t size)
{
	uint8_t fx[SEG_FIXED_LEN];
	uint32_t n;

	if (size < SEG_FIXED_LEN || rd_read_at(fd, fx, sizeof(fx), 0) != 0 ||
	    memcmp(fx, SEG_MAGIC, SEG_MAGIC_LEN) != 0)
		return 0;
	n = get_le32(fx + 12);
	return n >= SEG_FIXED_LEN && n <= size ? n : 0;
}

/* A closed segment: its time span from a valid index; 0 when it is not. */
static int
probe_closed(int fd, struct snap_seg *s)
{
	uint8_t t[TRAILER_LEN];
	uint64_t ioff, ilen;
	uint32_t n;
	uint8_t *b;
	int ok;

	if (s->size < s->header_len + TRAILER_LEN + INDEX_HDR_LEN ||
	    rd_read_at(fd, t, TRAILER_LEN, s->size - TRAILER_LEN) != 0 ||
	    memcmp(t + 16, TRAILER_MAGIC, 8) != 0)
		return 0;
	ioff = get_le64(t);
	n = get_le32(t + 8);
	ilen = INDEX_HDR_LEN + (uint64_t)n * INDEX_ENTRY_LEN;
	if (ioff < s->header_len || ioff + ilen + TRAILER_LEN != s->size)
		return 0;
	b = xmalloc(ilen);
	ok = rd_read_at(fd, b, ilen, ioff) == 0 &&
	    memcmp(b, INDEX_MAGIC, 8) == 0 && get_le32(b + 8) == n &&
	    trace_crc32(0, b, ilen) == get_le32(t + 12);
	for (uint32_t i = 0; ok && i < n; i++) {
		const uint8_t *e = b + INDEX_HDR_LEN + (size_t)i * INDEX_ENTRY_LEN;
		uint64_t f = get_le64(e + 8), l = get_le64(e + 16);

		if (s->first_ts == 0 || f < s->first_ts)
			s->first_ts = f;
		if (l > s->last_ts)
			s->last_ts = l;
	}
	free(b);
	return ok;
}

/* The open segment: its complete chunks, up to the first bad or torn one. */
static void
probe_open(int fd, struct snap_seg *s)
{
	uint64_t off = s->header_len;
	uint8_t hb[CHUNK_HDR_LEN];
	struct chunk_hdr h;
	size_t cap = 0;

	while (off + CHUNK_HDR_LEN <= s->size &&
	    rd_read_at(fd, hb, CHUNK_HDR_LEN, off) == 0 &&
	    chunk_hdr_decode(&h, hb) == 0 &&
	    off + CHUNK_HDR_LEN + h.csize <= s->size) {
		if (s->nchunks == cap) {
			size_t ncap = darr_cap(cap, cap + 1, 64);

			s->chunks = xreallocarray(s->chunks, ncap,
			    sizeof(*s->chunks));
			s->offsets = xreallocarray(s->offsets, ncap,
			    sizeof(*s->offsets));
			cap = ncap;
		}
		s->chunks[s->nchunks] = h;
		s->offsets[s->nchunks++] = off;
		if (s->first_ts == 0 || h.first_ts < s->first_ts)
			s->first_ts = h.first_ts;
		if (h.last_ts > s->last_ts)
			s->last_ts = h.last_ts;
		off += CHUNK_HDR_LEN + h.csize;
	}
	s->size = off;
}

/* Progress of a snapshot in bytes: done of total, told to fn. */
struct snap_prog {
	trace_progress_fn fn;
	void *arg;
	uint64_t done, total;
};

static void
prog_add(struct snap_prog *pr, uint64_t n)
{
	pr->done += n;
	if (pr->fn)
		pr->fn(pr->arg, pr->done, pr->total);
}

/* Copy n bytes from offset off of in to out (at its current end). */
static int
copy_range(int in, int out, uint64_t off, uint64_t n, struct snap_prog *pr)
{
	uint8_t buf[1 << 16];

	while (n > 0) {
		size_t k = n < sizeof(buf) ? (size_t)n : sizeof(buf);
		int err;

		if (rd_read_at(in, buf, k, off) != 0)
			return EIO;
		if ((err = write_full(out, buf, k)) != 0)
			return err;
		off += k;
		n -= k;
		prog_add(pr, k);
	}
	return 0;
}

/* The seek index and trailer of the chunks of an open segment. */
static int
write_index(int out, const struct snap_seg *s)
{
	struct buf b = { 0 };
	uint8_t e[INDEX_ENTRY_LEN], t[TRAILER_LEN];
	int err;

	buf_put(&b, INDEX_MAGIC, 8);
	buf_put(&b, (uint8_t[8]){ 0 }, 8);
	put_le32(b.data + 8, (uint32_t)s->nchunks);
	for (size_t i = 0; i < s->nchunks; i++) {
		put_le64(e, s->offsets[i]);
		put_le64(e + 8, s->chunks[i].first_ts);
		put_le64(e + 16, s->chunks[i].last_ts);
		put_le32(e + 24, s->chunks[i].count);
		put_le16(e + 28, s->chunks[i].cpu);
		put_le16(e + 30, 0);
		buf_put(&b, e, sizeof(e));
	}
	put_le64(t, s->size);
	put_le32(t + 8, (uint32_t)s->nchunks);
	put_le32(t + 12, trace_crc32(0, b.data, b.len));
	memcpy(t + 16, TRAILER_MAGIC, 8);
	buf_put(&b, t, sizeof(t));
	err = write_full(out, b.data, b.len);
	buf_free(&b);
	return err;
}

/*
 * Put segment s of srcfd into dstfd: link, clone or copy a closed one;
 * copy the complete chunks of the open one and close it. *how gets 0
 * linked, 1 cloned, 2 copied.
 */
static int
take_segment(int srcfd, int dstfd, struct snap_seg *s, int *how,
    uint64_t *copied, struct snap_prog *pr)
{
	char tmp[80];
	struct stat sb;
	int in, out, err = 0;

	if (s->complete && linkat(srcfd, s->name, dstfd, s->name, 0) == 0) {
		*how = 0;
		prog_add(pr, s->size);
		return 0;
	}
	in = openat(srcfd, s->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC);
	if (in < 0)
		return errno;
	if (fstat(in, &sb) != 0) {
		err = errno;
		close(in);
		return err;
	}
	snprintf(tmp, sizeof(tmp), ".%s.tmp", s->name);
	/* a fresh file: never one already there (a FIFO, a link) */
	out = openat(dstfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, sb.st_mode & 0777);
	if (out < 0) {
		err = errno;
		close(in);
		return err;
	}
	(void)fchown(out, (uid_t)-1, sb.st_gid);
	(void)fchmod(out, sb.st_mode & 0777);
	if (s->complete && ioctl(out, FICLONE, in) == 0) {
		*how = 1;
		prog_add(pr, s->size);
	} else if (s->complete) {
		*how = 2;
		err = copy_range(in, out, 0, s->size, pr);
		*copied += s->size;
	} else {
		*how = 2;
		err = copy_range(in, out, 0, s->size, pr);
		if (err == 0)
			err = write_index(out, s);
		*copied += s->size;
	}
	if (err == 0 && fsync(out) != 0)
		err = errno;
	close(in);
	if (close(out) != 0 && err == 0)
		err = errno;
	if (err == 0 && renameat(dstfd, tmp, dstfd, s->name) != 0)
		err = errno;
	if (err)
		unlinkat(dstfd, tmp, 0);	/* ours: created with O_EXCL */
	return err;
}

static int
snap_cmp(const void *a, const void *b)
{
	const struct snap_seg *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void
free_segs(struct snap_seg *segs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(segs[i].chunks);
		free(segs[i].offsets);
	}
	free(segs);
}

/* The segments of a trace directory, oldest first, probed. */
static int
list_segments(int dirfd, struct snap_seg **out, size_t *nout)
{
	int fd = dup(dirfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct snap_seg *segs = NULL;
	size_t n = 0;
	struct dirent *de;

	if (d == NULL) {
		int err = errno;

		if (fd >= 0)
			close(fd);
		return err;
	}
	while ((de = readdir(d)) != NULL) {
		struct snap_seg s = { 0 };
		char *end;
		struct stat sb;
		int sfd;

		if (strncmp(de->d_name, "seg-", 4) != 0 ||
		    strlen(de->d_name) >= sizeof(s.name))
			continue;
		s.seq = strtoull(de->d_name + 4, &end, 10);
		if (end == de->d_name + 4 || strcmp(end, ".argus") != 0)
			continue;
		memcpy(s.name, de->d_name, strlen(de->d_name) + 1);
		/* never blocks on a FIFO: only regular files are kept */
		sfd = openat(dirfd, s.name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
		    O_CLOEXEC);
		if (sfd < 0)
			continue;	/* deleted by the ring meanwhile */
		if (fstat(sfd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
			close(sfd);
			continue;
		}
		s.size = (uint64_t)sb.st_size;
		s.header_len = header_len(sfd, s.size);
		if (s.header_len == 0) {
			close(sfd);
			continue;
		}
		s.complete = probe_closed(sfd, &s);
		if (!s.complete) {
			s.first_ts = s.last_ts = 0;
			probe_open(sfd, &s);
		}
		close(sfd);
		segs = xreallocarray(segs, n + 1, sizeof(*segs));
		segs[n++] = s;
	}
	closedir(d);
	if (n > 1)
		qsort(segs, n, sizeof(*segs), snap_cmp);
	*out = segs;
	*nout = n;
	return 0;
}

/* trace_snapshot into dest relative to the directory at (or AT_FDCWD). */
static int
snapshot_at(const char *src, int at, const char *dest, uint64_t last_ns,
    trace_progress_fn fn, void *arg, struct trace_snapshot_stats *st,
    char **cause)
{
	struct snap_prog pr = { fn, arg, 0, 0 };
	struct snap_seg *segs = NULL;
	size_t n = 0, first = 0;
	uint64_t newest = 0, cutoff;
	int srcfd, dstfd = -1, err, created = 0, ours = 0;

	memset(st, 0, sizeof(*st));
	*cause = NULL;
	srcfd = trace_dir_open(src, &err, cause);
	if (srcfd < 0)
		return err;
	if ((err = list_segments(srcfd, &segs, &n)) != 0) {
		*cause = xasprintf("%s: %s", src, trace_strerror(err));
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		if (segs[i].last_ts > newest)
			newest = segs[i].last_ts;
	if (newest == 0) {
		err = TRACE_EEMPTY;
		*cause = xasprintf("%s: no segment with events to snapshot",
		    src);
		goto out;
	}
	cutoff = last_ns && last_ns < newest ? newest - last_ns : 0;
	/* From the newest back to the first that ends before the window. */
	for (first = n; first > 0 && (segs[first - 1].last_ts >= cutoff ||
	    segs[first - 1].last_ts == 0); first--)
		;
	if (mkdirat(at, dest, 0700) == 0) {
		created = 1;
	} else if (errno != EEXIST) {
		err = errno;
		*cause = xasprintf("cannot create %s: %s", dest, strerror(err));
		goto out;
	}
	/*
	 * Trusted as a trace directory is: one of another user's (who could
	 * plant files in it while the snapshot is taken) is refused.
	 */
	dstfd = trace_dir_openat(at, dest, &err, cause);
	if (dstfd < 0) {
		if (*cause == NULL)
			*cause = xasprintf("%s: %s", dest, trace_strerror(err));
		goto out;
	}
	if (!created) {
		DIR *d = fdopendir(dup(dstfd));
		struct dirent *de;
		int busy = 0;

		while (d && (de = readdir(d)) != NULL)
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				busy = 1;
		if (d)
			closedir(d);
		if (busy) {
			err = EEXIST;
			*cause = xasprintf("%s exists and is not empty", dest);
			goto out;
		}
	}
	{
		struct stat sb;

		/* the snapshot is as readable as the trace it comes from */
		if (fstat(srcfd, &sb) == 0 && fchown(dstfd, (uid_t)-1,
		    sb.st_gid) == 0)
			(void)fchmod(dstfd, sb.st_mode & 0750);
	}
	ours = 1;		/* dest is empty: what is in it now is ours */
	for (size_t i = first; i < n; i++)
		pr.total += segs[i].size;
	for (size_t i = first; i < n; i++) {
		struct snap_seg *s = &segs[i];
		int how = 2;

		if (s->last_ts == 0)
			continue;	/* an open segment without a chunk yet */
		err = take_segment(srcfd, dstfd, s, &how, &st->bytes_copied,
		    &pr);
		if (err == ENOENT && s->complete) {
			/* the ring deleted it meanwhile: newer ones remain */
			err = 0;
			st->vanished++;
			continue;
		}
		if (err) {
			*cause = xasprintf("cannot snapshot %s/%s into %s: %s",
			    src, s->name, dest, trace_strerror(err));
			goto out;
		}
		st->segments++;
		st->bytes += s->complete ? s->size :
		    s->size + index_len(s->nchunks);
		if (how == 0)
			st->linked++;
		else if (how == 1)
			st->cloned++;
		else
			st->copied++;
		if (st->first_ts == 0 || s->first_ts < st->first_ts)
			st->first_ts = s->first_ts;
		if (s->last_ts > st->last_ts)
			st->last_ts = s->last_ts;
	}
	if (st->segments == 0) {
		err = TRACE_EEMPTY;
		*cause = xasprintf("%s: every segment went while copying", src);
	}
out:
	if (err && ours)
		for (size_t i = first; i < n; i++)
			unlinkat(dstfd, segs[i].name, 0);
	if (err && created)
		unlinkat(at, dest, AT_REMOVEDIR);
	if (dstfd >= 0)
		close(dstfd);
	close(srcfd);
	free_segs(segs, n);
	return err;
}

int
trace_snapshot(const char *src, const char *dest, uint64_t last_ns,
    trace_progress_fn fn, void *arg, struct trace_snapshot_stats *st,
    char **cause)
{
	return snapshot_at(src, AT_FDCWD, dest, last_ns, fn, arg, st, cause);
}

int
trace_snapshot_in(const char *src, int dirfd, const char *name,
    uint64_t last_ns, struct trace_snapshot_stats *st, char **cause)
{
	return snapshot_at(src, dirfd, name, last_ns, NULL, NULL, st, cause);
}

/* --- a folder of snapshots ------------------------------------------- */

struct snap_dir {
	char *name;
	uint64_t bytes;
};

static int
dir_cmp(const void *a, const void *b)
{
	return strcmp(((const struct snap_dir *)a)->name,
	    ((const struct snap_dir *)b)->name);
}

/* Bytes of the segment files of snapshot dir (at dirfd/name); -1 when it
   holds anything but segments (then it is not ours to delete). */
static int64_t
snap_bytes(int parent, const char *name)
{
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	int64_t bytes = 0;

	if (d == NULL) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		struct stat sb;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (strncmp(de->d_name, "seg-", 4) != 0 &&
		    strncmp(de->d_name, ".seg-", 5) != 0) {
			bytes = -1;
			break;
		}
		if (fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0)
			bytes += sb.st_size;
	}
	closedir(d);
	return bytes;
}

static void
remove_snapshot(int parent, const char *name)
{
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;

	if (d == NULL) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			unlinkat(dirfd(d), de->d_name, 0);
	closedir(d);
	unlinkat(parent, name, AT_REMOVEDIR);
}

int
trace_snapshot_prune(const char *dir, size_t keep, uint64_t max_bytes,
    size_t *removed)
{
	int err, dfd = trace_dir_open(dir, &err, NULL);

	*removed = 0;
	if (dfd < 0)
		return err;
	err = trace_snapshot_prune_fd(dfd, keep, max_bytes, removed);
	close(dfd);
	return err;
}

int
trace_snapshot_prune_fd(int dfd, size_t keep, uint64_t max_bytes,
    size_t *removed)
{
	int fd2 = dup(dfd);
	DIR *d = fd2 >= 0 ? fdopendir(fd2) : NULL;
	struct snap_dir *v = NULL;
	struct dirent *de;
	size_t n = 0, i = 0;
	uint64_t total = 0;
	int err = 0;

	*removed = 0;
	if (d == NULL) {
		err = errno;
		if (fd2 >= 0)
			close(fd2);
		return err;
	}
	/* the copy shares its offset with dfd: read from the start */
	rewinddir(d);
	while ((de = readdir(d)) != NULL) {
		int64_t b;

		if (de->d_name[0] == '.')
			continue;
		if ((b = snap_bytes(dfd, de->d_name)) < 0)
			continue;
		v = xreallocarray(v, n + 1, sizeof(*v));
		v[n].name = xstrdup(de->d_name);
		v[n++].bytes = (uint64_t)b;
		total += (uint64_t)b;
	}
	closedir(d);
	if (n > 1)
		qsort(v, n, sizeof(*v), dir_cmp);
	/* Oldest first; the newest always stays. */
	for (i = 0; i + 1 < n && (n - i > keep || (max_bytes &&
	    total > max_bytes)); i++) {
		remove_snapshot(dfd, v[i].name);
		total -= v[i].bytes;
		(*removed)++;
	}
	for (i = 0; i < n; i++)
		free(v[i].name);
	free(v);
	return 0;
}
