/*
 * shift-trace.c: copies a trace with every timestamp moved by a number
 * of nanoseconds, as the trace of a host whose clock is off by that
 * much: shift-trace [--drift PPM] SRC DEST NS (NS may be negative). With
 * --drift, that clock also runs PPM millionths fast (slow when negative)
 * from the first event on: t' = t + NS + PPM 1e-6 (t - first). The copy
 * has the source's host, kernel, CPUs and clock; each thread record goes
 * through the writer's thread table, every other event is added as read.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "trace/trace.h"

static long long by;		/* the shift, ns */
static double ppm;		/* the drift */
static uint64_t first;		/* the source's first event */

/* A time of the source on the copy's clock. */
static uint64_t
shift(uint64_t t)
{
	return (uint64_t)((long long)t + by + llround(ppm * 1e-6 *
	    ((double)t - (double)first)));
}

int
main(int argc, char **argv)
{
	struct trace_reader *r;
	struct trace_writer *w;
	struct trace_writer_opts o;
	struct trace_event evs[256];
	char *cause = NULL, *end;
	size_t n;
	int err;

	if (argc == 6 && strcmp(argv[1], "--drift") == 0) {
		ppm = strtod(argv[2], &end);
		if (*end != '\0' || !(ppm > -1e6 && ppm < 1e6)) {
			fprintf(stderr, "shift-trace: bad drift '%s'\n",
			    argv[2]);
			return 2;
		}
		argc -= 2;
		argv += 2;
	}
	if (argc != 4) {
		fprintf(stderr, "usage: shift-trace [--drift PPM] SRC DEST "
		    "NS\n");
		return 2;
	}
	by = strtoll(argv[3], &end, 10);
	if (*end != '\0') {
		fprintf(stderr, "shift-trace: bad shift '%s'\n", argv[3]);
		return 2;
	}
	if ((err = trace_reader_open(&r, argv[1], &cause)) != 0) {
		fprintf(stderr, "shift-trace: %s: %s\n", argv[1], cause ?
		    cause : trace_strerror(err));
		return 1;
	}
	const struct trace_info *in = trace_reader_info(r);
	first = in->first_ts;
	if (by < 0 && (uint64_t)-by > in->first_ts) {
		fprintf(stderr, "shift-trace: a shift of %lld ns would put "
		    "events before the clock's start\n", by);
		return 2;
	}
	memset(&o, 0, sizeof(o));
	o.group = (gid_t)-1;
	o.ncpus = in->ncpus;
	o.clock = in->clock;
	o.hostname = in->hostname;
	o.release = in->release;
	o.boot_id = in->boot_id;
	o.recorder = in->recorder;
	o.recorder_pid = in->recorder_pid;
	o.realtime_offset = in->realtime_offset - by;
	if (trace_writer_open(&w, argv[2], &o, &cause) != 0) {
		fprintf(stderr, "shift-trace: %s: %s\n", argv[2], cause);
		return 1;
	}
	while ((n = trace_reader_read(r, evs, 256)) > 0) {
		for (size_t i = 0; i < n; i++) {
			struct trace_event e = evs[i];
			e.ts = shift(e.ts);
			if (e.type == TT_THREAD) {
				struct trace_thread t = { .tid =
				    (uint32_t)e.arg[0], .pid = (uint32_t)e.arg[1],
				    .ppid = (uint32_t)e.arg[2], .start_ts =
				    e.arg[3] ? shift(e.arg[3]) : 0, .flags =
				    (uint32_t)e.arg[4] };
				size_t l = e.blob_len < TRACE_COMM_LEN ?
				    e.blob_len : TRACE_COMM_LEN - 1;
				if (e.blob != NULL)
					memcpy(t.comm, e.blob, l);
				err = trace_writer_thread(w, e.ts, &t);
			} else {
				err = trace_writer_add(w, &e);
			}
			if (err != 0 && err != TRACE_EORDER) {
				fprintf(stderr, "shift-trace: %s\n",
				    trace_strerror(err));
				return 1;
			}
		}
	}
	/* the writer names the reader's host, kernel and recorder until
	   it closes */
	err = trace_writer_close(w);
	trace_reader_close(r);
	if (err != 0) {
		fprintf(stderr, "shift-trace: cannot close %s\n", argv[2]);
		return 1;
	}
	return 0;
}
