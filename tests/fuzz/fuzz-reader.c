/*
 * fuzz-reader.c: libFuzzer target for the trace reader, the parser of
 * files that come from outside (a trace copied from another machine, a
 * disk that failed). The input is one segment file; the reader must open
 * it or refuse it with an error, and read every event without crashing,
 * the same ones when it decodes ahead on a helper thread.
 */
#include <stdint.h>
#include <stdlib.h>

#include "tests/fuzz/fuzz-segment.h"
#include "trace/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trace_reader *r = fz_open("argus-fuzz", data, size);
	struct trace_event ev;

	if (r == NULL)
		return 0;
	size_t n = 0;
	uint64_t sum = 0;
	for (; n < FZ_MAX_EVENTS && trace_reader_next(r, &ev); n++) {
		if (ev.type == TT_NONE || ev.type >= TT_NTYPES)
			abort();	/* unknown types never escape */
		if (ev.blob_len && ev.blob == NULL)
			abort();
		sum += fz_mix(&ev);
	}
	trace_reader_seek(r, 1000);
	trace_reader_next(r, &ev);
	/* decoded ahead on a helper thread: the same events */
	fz_same_ahead(r, n, sum);
	trace_reader_close(r);
	return 0;
}
