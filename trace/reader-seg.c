/*
 * reader-seg.c: the segment files of a trace being opened: each one's
 * header decoded (or why it is no segment), their order, which of them
 * are read (one recording, each segment once), and the warnings for the
 * ones skipped.
 *
 * Skipped segments are told by reason, SKIPS_LISTED of each at most:
 * past that, one warning counts the rest (a directory of 5000 empty
 * files warns four times, not 5000).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/common.h"
#include "reader-local.h"

#define SKIPS_LISTED 3
#define SKIP_REASONS 16		/* reasons counted apart */

static int
seg_cmp(const void *a, const void *b)
{
	const struct seg *x = a, *y = b;

	if (x->h.seq != y->h.seq)
		return x->h.seq < y->h.seq ? -1 : 1;
	return strcmp(x->path, y->path);	/* the files not read by name */
}

/* What a file that is not a regular one is (sb its status). */
static const char *
not_regular(const struct stat *sb)
{
	if (S_ISDIR(sb->st_mode))
		return "a directory, not a regular file (skipped)";
	if (S_ISCHR(sb->st_mode))
		return "a character device, not a regular file (skipped)";
	if (S_ISBLK(sb->st_mode))
		return "a block device, not a regular file (skipped)";
	if (S_ISFIFO(sb->st_mode))
		return "a FIFO, not a regular file (skipped)";
	if (S_ISSOCK(sb->st_mode))
		return "a socket, not a regular file (skipped)";
	return "not a regular file (skipped)";
}

/*
 * Open one segment file and decode its header; returns an error code,
 * with s->skip_reason saying what the file is when it is no segment at
 * all (not a regular file, empty).
 */
static int
open_seg(struct seg *s, int dirfd, const char *name, const char *path)
{
	struct stat sb;
	uint8_t *p = NULL;
	size_t need = 4096, have = 0;
	int err;

	memset(s, 0, sizeof(*s));
	s->path = xstrdup(path);
	/* Never through a link in the directory, never blocking on a FIFO. */
	s->fd = dirfd >= 0 ? openat(dirfd, name, O_RDONLY | O_NOFOLLOW |
	    O_NONBLOCK | O_CLOEXEC) : open(path, O_RDONLY | O_NONBLOCK |
	    O_CLOEXEC);
	if (s->fd < 0 && errno == ELOOP) {
		s->skip_reason = "a symbolic link (not followed), not a "
		    "regular file (skipped)";
		return EINVAL;
	}
	if (s->fd < 0)
		return errno;
	if (fstat(s->fd, &sb) != 0)
		return errno;
	if (!S_ISREG(sb.st_mode)) {
		s->skip_reason = not_regular(&sb);
		return EINVAL;
	}
	s->size = (uint64_t)sb.st_size;
	if (s->size == 0) {
		s->skip_reason = "an empty file (skipped)";
		return TRACE_EMAGIC;
	}
	s->max_ts = UINT64_MAX;
	for (;;) {
		if (need > s->size)
			need = (size_t)s->size;
		p = xrealloc(p, need ? need : 1);
		if (need > have && rd_read_at(s->fd, p + have, need - have, have)) {
			free(p);
			return TRACE_ECORRUPT;
		}
		have = need;
		err = seg_header_decode(&s->h, p, have, &need);
		if (err != EAGAIN)
			break;
		if (need > s->size) {
			err = have < SEG_MAGIC_LEN ? TRACE_EMAGIC : TRACE_ECORRUPT;
			break;
		}
	}
	free(p);
	if (err == 0) {
		/* mtime on the trace clock, plus an hour */
		int64_t mt = (int64_t)sb.st_mtim.tv_sec * 1000000000LL +
		    sb.st_mtim.tv_nsec - s->h.realtime_offset;

		if (mt > 0 && (uint64_t)mt < UINT64_MAX - 3600000000000ULL)
			s->max_ts = (uint64_t)mt + 3600000000000ULL;
	}
	return err;
}

void
rd_add_seg(struct trace_reader *r, int dirfd, const char *name,
    const char *path)
{
	r->segs = xreallocarray(r->segs, r->nsegs + 1, sizeof(*r->segs));
	struct seg *s = &r->segs[r->nsegs];
	int err = open_seg(s, dirfd, name, path);

	s->info.path = s->path;
	s->info.size = s->size;
	s->name_seq = UINT64_MAX;
	if (name != NULL) {
		char *end;
		unsigned long long q = strtoull(name + 4, &end, 10);

		if (end != name + 4 && strcmp(end, ".argus") == 0)
			s->name_seq = q;
	}
	if (err) {
		s->info.skipped = err;
		s->info.seq = UINT64_MAX;
		if (s->fd >= 0)		/* 5000 of them must not take 5000 */
			close(s->fd);
		s->fd = -1;
	} else {
		s->info.seq = s->h.seq;
	}
	r->nsegs++;
}

int
rd_list_dir(struct trace_reader *r, const char *dir, char **cause)
{
	int err, fd = trace_dir_open(dir, &err, cause);
	int dfd = fd >= 0 ? dup(fd) : -1;
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	struct dirent *de;

	if (d == NULL) {
		if (fd >= 0) {
			err = errno;
			close(fd);
			if (dfd >= 0)
				close(dfd);
		}
		return err;
	}
	while ((de = readdir(d)) != NULL) {
		size_t n = strlen(de->d_name);

		if (strncmp(de->d_name, "seg-", 4) != 0 || n < 10 ||
		    strcmp(de->d_name + n - 6, ".argus") != 0)
			continue;
		char *path = xasprintf("%s/%s", dir, de->d_name);

		rd_add_seg(r, fd, de->d_name, path);
		free(path);
	}
	closedir(d);
	close(fd);
	return 0;
}

static void
skip_seg(struct seg *s, int err, const char *reason)
{
	s->info.skipped = err;
	s->skip_reason = reason;
}

/*
 * Keep only the segments of one recording, each once (segments are
 * sorted by their header's sequence number): a file whose name does not
 * say its header's number is a copy; the recording is the id most
 * segments carry (the newest on a tie), segments of another id are
 * strangers; a second segment with the number of a kept one is a
 * duplicate. Segments without an id (older argus) are kept.
 */
static void
sort_out_segments(struct trace_reader *r)
{
	const uint8_t *best = NULL;
	size_t best_n = 0;
	const struct seg *prev = NULL;

	for (size_t i = 0; i < r->nsegs; i++) {
		struct seg *s = &r->segs[i];

		if (!s->info.skipped && s->name_seq != UINT64_MAX &&
		    s->name_seq != s->h.seq)
			skip_seg(s, EEXIST, "its name says another segment "
			    "than its header (a copy? skipped)");
	}
	for (size_t i = 0; i < r->nsegs; i++) {
		const struct seg *s = &r->segs[i];
		size_t n = 0;

		if (s->info.skipped || !s->h.has_rec_id)
			continue;
		for (size_t j = 0; j < r->nsegs; j++)
			n += !r->segs[j].info.skipped &&
			    r->segs[j].h.has_rec_id &&
			    memcmp(r->segs[j].h.rec_id, s->h.rec_id,
			    TRACE_REC_ID_LEN) == 0;
		if (n >= best_n) {
			best_n = n;
			best = s->h.rec_id;
		}
	}
	for (size_t i = 0; i < r->nsegs; i++) {
		struct seg *s = &r->segs[i];

		if (s->info.skipped)
			continue;
		if (best && s->h.has_rec_id &&
		    memcmp(s->h.rec_id, best, TRACE_REC_ID_LEN) != 0) {
			skip_seg(s, ESTALE, "from another recording (skipped)");
			continue;
		}
		if (prev && prev->h.seq == s->h.seq) {
			skip_seg(s, EEXIST, "a duplicate of another segment "
			    "(skipped)");
			continue;
		}
		prev = s;
	}
}

void
rd_sort_segments(struct trace_reader *r)
{
	if (r->nsegs > 1)
		qsort(r->segs, r->nsegs, sizeof(*r->segs), seg_cmp);
	sort_out_segments(r);
}

/* Why segment s is skipped. */
static const char *
skip_reason(const struct seg *s)
{
	if (s->skip_reason != NULL)
		return s->skip_reason;
	if (s->info.skipped == EINVAL)
		return "not a regular file (skipped)";
	return trace_strerror(s->info.skipped);
}

void
rd_report_skipped(struct trace_reader *r)
{
	struct skips {
		const char *why;
		size_t n;			/* segments skipped for it */
		const struct seg *next;		/* the first not listed */
	} seen[SKIP_REASONS];
	size_t nseen = 0;

	for (size_t i = 0; i < r->nsegs; i++) {
		const struct seg *s = &r->segs[i];
		const char *why = skip_reason(s);
		size_t k = 0;

		if (!s->info.skipped)
			continue;
		while (k < nseen && strcmp(seen[k].why, why) != 0)
			k++;
		if (k == nseen && nseen < SKIP_REASONS)
			seen[nseen++] = (struct skips){ why, 0, NULL };
		if (k < nseen && seen[k].n++ >= SKIPS_LISTED) {
			if (seen[k].next == NULL)
				seen[k].next = s;
			continue;
		}
		rd_report(r, s->path, 0, why);
	}
	for (size_t k = 0; k < nseen; k++) {
		if (seen[k].next == NULL)
			continue;
		size_t more = seen[k].n - SKIPS_LISTED - 1;
		char *why = more == 0 ? xstrdup(seen[k].why) : xasprintf("%s, "
		    "and %zu more segment%s like it (not listed)", seen[k].why,
		    more, more == 1 ? "" : "s");

		rd_report(r, seen[k].next->path, 0, why);
		free(why);
	}
}

char *
rd_skip_cause(const struct seg *s)
{
	const char *why = skip_reason(s);
	size_t n = strlen(why);
	const char *tail = " (skipped)";

	if (n > strlen(tail) && strcmp(why + n - strlen(tail), tail) == 0)
		n -= strlen(tail);
	return xasprintf("%s: %.*s", s->path, (int)n, why);
}
