/*
 * merge-stages.c: where the merge of several hosts' traces spends its
 * time before any graph is built (what `argus diagnose --stats` leaves
 * out of its stages), for tests/bench/hosts.sh.
 *
 * usage: merge-stages TRACE TRACE...
 *
 * Prints, in seconds: each trace read alone (every event in time order,
 * the decode floor); each trace's messages read (sync_read()); the
 * clocks aligned from every two traces (sync_align()); the whole
 * hosts_merge() on fresh readers (the reads, the alignments, the pairs
 * of messages across traces and the merged reader); and every event read
 * through the merged reader.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "common/common.h"
#include "engine/engine.h"

#define MAXT 16

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void
die(const char *what, char *cause)
{
	fprintf(stderr, "merge-stages: %s: %s\n", what, cause ? cause : "?");
	exit(1);
}

/* Every event of r from its start; how many. */
static size_t
read_all(struct trace_reader *r)
{
	struct trace_event ev[256];
	size_t n, tot = 0;

	if (trace_reader_seek(r, 0) != 0)
		die("seek", NULL);
	while ((n = trace_reader_read(r, ev, 256)) > 0)
		tot += n;
	return tot;
}

static void
open_all(struct trace_reader **rs, char **paths, size_t n)
{
	char *cause = NULL;

	for (size_t i = 0; i < n; i++)
		if (trace_reader_open(&rs[i], paths[i], &cause) != 0)
			die(paths[i], cause);
}

int
main(int argc, char **argv)
{
	struct trace_reader *rs[MAXT];
	struct sync_msgs *m[MAXT];
	size_t n = (size_t)argc - 1;
	char *cause = NULL;
	double t, floor = 0, reads = 0;

	if (argc < 3 || n > MAXT) {
		fprintf(stderr, "usage: merge-stages TRACE TRACE...\n");
		return 2;
	}
	open_all(rs, argv + 1, n);
	for (size_t i = 0; i < n; i++) {
		t = now();
		size_t ne = read_all(rs[i]);
		double dt = now() - t;
		floor += dt;
		t = now();
		if (sync_read(rs[i], &m[i], &cause) != 0)
			die(argv[i + 1], cause);
		double st = now() - t;
		reads += st;
		size_t nr, ns = sync_nmsgs(m[i], &nr);
		printf("merge-stages: %s: %zu events read in %.3f s; its %zu "
		    "sends and %zu receives in %.3f s\n", argv[i + 1], ne, dt,
		    ns, nr, st);
	}
	t = now();
	for (size_t a = 0; a < n; a++)
		for (size_t b = a + 1; b < n; b++) {
			struct sync_offset o;
			sync_align(m[a], m[b], &o);
		}
	double align = now() - t;
	for (size_t i = 0; i < n; i++) {
		sync_msgs_free(m[i]);
		trace_reader_close(rs[i]);
	}
	open_all(rs, argv + 1, n);
	struct trace_reader *r;
	struct hosts_report *h;
	t = now();
	if (hosts_merge(rs, (const char *const *)argv + 1, n, NULL, &r, &h,
	    &cause) != 0)
		die("hosts_merge", cause);
	double merge = now() - t;
	for (size_t i = 0; i < n; i++)
		trace_reader_close(rs[i]);
	t = now();
	size_t ne = read_all(r);
	double mread = now() - t;
	printf("merge-stages: hosts_merge %.3f s: the messages read %.3f s "
	    "(the traces' events read %.3f s), every two traces aligned "
	    "%.3f s, the rest (pairs, merged reader) %.3f s\n", merge, reads,
	    floor, align, merge - reads - align);
	printf("merge-stages: the merged reader: %zu events in %.3f s (%.3f s "
	    "the traces alone)\n", ne, mread, floor);
	trace_reader_close(r);
	hosts_report_free(h);
	return 0;
}
