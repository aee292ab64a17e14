/*
 * fuzz-segment.h: what the fuzz targets that read one segment file share
 * (fuzz-reader, fuzz-chunks), included by one target each.
 *
 * The input goes into a memory file, made once per process and
 * rewritten for each input, which the reader opens by its /proc path.
 * A merged read of every event is summed with fz_mix(), so that the
 * same read with the chunks decoded ahead can be checked against it.
 */
#ifndef ARGUS_FUZZ_SEGMENT_H
#define ARGUS_FUZZ_SEGMENT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "trace/trace.h"

#define FZ_MAX_EVENTS 1000000	/* a merged read stops there */

/*
 * The reader on size bytes of data as a segment file (the memory file
 * named name), or NULL when the reader refused it, which it must say
 * why. Aborts when it does not, or the memory file fails.
 */
static struct trace_reader *
fz_open(const char *name, const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	struct trace_reader *r;
	char *cause = NULL;

	if (fd < 0) {
		fd = memfd_create(name, 0);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	if (trace_reader_open(&r, path, &cause) != 0) {
		if (cause == NULL)
			abort();	/* every refusal says why */
		free(cause);
		return NULL;
	}
	return r;
}

/* What a merged read sums of event ev. */
static inline uint64_t
fz_mix(const struct trace_event *ev)
{
	return ev->ts ^ ev->type ^ ev->arg[0];
}

/*
 * A merged read of r gave n events whose fz_mix() add up to sum: when
 * that was the whole trace (n under FZ_MAX_EVENTS), read from the start
 * again with the chunks decoded ahead on a helper thread, the same
 * events come (their number and sum). Aborts when they do not.
 */
static void
fz_same_ahead(struct trace_reader *r, size_t n, uint64_t sum)
{
	struct trace_event ev;
	size_t m = 0;

	if (n < FZ_MAX_EVENTS && trace_reader_seek(r, 0) == 0 &&
	    trace_reader_decode_ahead(r) == 0) {
		for (; m <= n && trace_reader_next(r, &ev); m++)
			sum -= fz_mix(&ev);
		if (m != n || sum != 0)
			abort();
	}
}

#endif
