/*
 * mktrace.c: writes a deterministic trace through the store's API, for
 * the command-line tests: mktrace DIR [EVENTS] [SEGMENT_BYTES].
 * Four named threads in two processes, one event of every type, then
 * EVENTS events of the fixture stream (default 1000).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/store-fixture.h"
#include "trace/trace.h"

int
main(int argc, char **argv)
{
	struct trace_writer_opts o = { 0 };
	struct trace_writer *w;
	struct trace_event e;
	char *cause = NULL;
	size_t n = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000;
	static const struct trace_thread threads[] = {
		{ .tid = 100, .pid = 100, .ppid = 1, .comm = "browser" },
		{ .tid = 101, .pid = 100, .ppid = 1, .comm = "browser-io" },
		{ .tid = 120, .pid = 120, .ppid = 100, .comm = "renderer" },
		{ .tid = 121, .pid = 120, .ppid = 100, .comm = "font-worker" },
	};

	if (argc < 2) {
		fprintf(stderr, "usage: mktrace DIR [EVENTS] [SEGMENT_BYTES]\n");
		return 2;
	}
	o.size_bound = 1ULL << 30;
	o.segment_size = argc > 3 ? strtoull(argv[3], NULL, 10) : 64ULL << 20;
	o.chunk_size = 16 << 10;
	o.ncpus = FIX_NCPUS;
	o.group = (gid_t)-1;
	o.hostname = "goldenhost";
	o.release = "6.18.0-golden";
	o.boot_id = "00000000-golden";
	o.realtime_offset = 1763700000LL * 1000000000LL;
	if (trace_writer_open(&w, argv[1], &o, &cause) != 0) {
		fprintf(stderr, "mktrace: %s\n", cause);
		return 1;
	}
	for (size_t i = 0; i < sizeof(threads) / sizeof(threads[0]); i++)
		trace_writer_thread(w, 1, &threads[i]);
	for (unsigned t = 1; t < TT_NTYPES; t++) {
		if (t == TT_THREAD)
			continue;	/* the table above has the threads */
		fix_event_of_type(&e, t, 1, 100 + t);
		e.tid = 100 + (t % 2);
		if (t == TT_LOST)
			e.arg[0] = 3;
		if (trace_writer_add(w, &e) != 0)
			return 1;
	}
	for (size_t i = 0; i < n; i++) {
		fix_gen_event(&e, i);
		if (trace_writer_add(w, &e) != 0)
			return 1;
	}
	if (trace_writer_close(w) != 0)
		return 1;
	return 0;
}
