/*
 * fuzz-reader.c: libFuzzer target for the trace reader, the parser of
 * files that come from outside (a trace copied from another machine, a
 * disk that failed). The input is one segment file; the reader must open
 * it or refuse it with an error, and read every event without crashing,
 * the same ones when it decodes ahead on a helper thread.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "trace/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	struct trace_reader *r;
	struct trace_event ev;
	char *cause = NULL;

	if (fd < 0) {
		fd = memfd_create("argus-fuzz", 0);
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
		return 0;
	}
	size_t n = 0, m = 0;
	uint64_t sum = 0;
	for (; n < 1000000 && trace_reader_next(r, &ev); n++) {
		if (ev.type == TT_NONE || ev.type >= TT_NTYPES)
			abort();	/* unknown types never escape */
		if (ev.blob_len && ev.blob == NULL)
			abort();
		sum += ev.ts ^ ev.type ^ ev.arg[0];
	}
	trace_reader_seek(r, 1000);
	trace_reader_next(r, &ev);
	/* decoded ahead on a helper thread: the same events */
	if (n < 1000000 && trace_reader_seek(r, 0) == 0 &&
	    trace_reader_decode_ahead(r) == 0) {
		for (; m <= n && trace_reader_next(r, &ev); m++)
			sum -= ev.ts ^ ev.type ^ ev.arg[0];
		if (m != n || sum != 0)
			abort();
	}
	trace_reader_close(r);
	return 0;
}
