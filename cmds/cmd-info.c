/*
 * cmd-info.c: argus info: what a trace holds. By default every figure
 * comes from what the reader loads at open: the segment headers, the
 * seek index of a complete segment, a walk of the chunk headers of an
 * incomplete one. No chunk of a complete segment is read, so the time
 * does not grow with the events. --events adds one pass over the events
 * (with a progress line on a terminal) for the per-type counts, the lost
 * events and the events per process, and checks every chunk's data.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "common/common.h"
#include "engine/engine.h"
#include "trace/trace.h"

static const char info_usage[] =
    "usage: argus info [TRACE...] [--events] [--segments] [--threads]\n"
    "\n"
    "Summarize TRACE (default " ARGUS_DEFAULT_TRACE "): host, time span,\n"
    "segments, chunks, events and bytes per event, damaged spots skipped,\n"
    "and the processes named in the segment headers. Reads headers and seek\n"
    "indexes only, decoding no event.\n"
    "\n"
    "With several traces (one per host), each, then the offset of each\n"
    "one's clock against the first's with its uncertainty, and its drift\n"
    "when the messages measure one, from the TCP messages between them\n"
    "(the sending hosts recorded with the net option of argus record).\n"
    "\n"
    "  --events     also decode every event: counts by type and by process,\n"
    "               events lost by the kernel, damage inside chunk data\n"
    "  --segments   list every segment file\n"
    "  --threads    list every thread under its process\n"
    "  -h, --help   show this help\n";

struct proc_count {
	uint32_t pid;
	uint32_t threads;
	uint64_t events;
};

static uint64_t *ev_per_tid_tab;	/* events by tid (bounded table) */
#define MAX_TID (1u << 22)

static void
print_wall(const char *label, uint64_t ts, int64_t off)
{
	time_t secs = (time_t)(((int64_t)ts + off) / 1000000000LL);
	struct tm tm;
	char buf[64];

	gmtime_r(&secs, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S UTC", &tm);
	printf("%-12s%s (clock %llu.%09llu)\n", label, buf,
	    (unsigned long long)(ts / 1000000000ULL),
	    (unsigned long long)(ts % 1000000000ULL));
}

static int
cmp_pid(const void *a, const void *b)
{
	const struct proc_count *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int info_one(const char *path, int full, int list_segs,
    int list_threads);

/* Bounds that cross by this much come from sends stamped late (at the
   end of their call), not from clocks that drift apart. */
#define SEND_SLACK_NS 1000000

/* An offset in ns as "+2.500000 s". */
static const char *
fmt_off(char *b, size_t len, int64_t ns)
{
	snprintf(b, len, "%s%.6f s", ns < 0 ? "-" : "+", (double)(ns < 0 ?
	    -(double)ns : (double)ns) / 1e9);
	return b;
}

/* A duration in ns as "850 ns", "21 µs", "1.250 ms" or "2.000 s". */
static const char *
fmt_dur(char *b, size_t len, int64_t ns)
{
	double x = (double)ns;

	if (ns < 1000)
		snprintf(b, len, "%lld ns", (long long)ns);
	else if (ns < 10000)
		snprintf(b, len, "%.1f µs", x / 1e3);
	else if (ns < 1000000)
		snprintf(b, len, "%.0f µs", x / 1e3);
	else if (ns < 1000000000)
		snprintf(b, len, "%.3f ms", x / 1e6);
	else
		snprintf(b, len, "%.3f s", x / 1e9);
	return b;
}

/* The line of o: the offset at o->ref with its uncertainty, the drift
   with its own, and what it says of the pairs. */
static void
print_drift(const struct sync_offset *o, const char *a)
{
	char b1[32], b2[32], b3[32];

	printf("%s ± %s at %llu.%09llu s of %s, drifting %+.2f ppm ± %.2f "
	    "(a constant offset's bounds cross by %.3f ms", fmt_off(b1,
	    sizeof(b1), o->est), fmt_dur(b2, sizeof(b2), o->uncertainty),
	    (unsigned long long)(o->ref / 1000000000ULL),
	    (unsigned long long)(o->ref % 1000000000ULL), a, o->drift * 1e6,
	    o->drift_uncertainty * 1e6, ((double)o->lo - (double)o->hi) / 1e6);
	if (!o->consistent)
		printf(", and the line's by %s: a send is stamped when its "
		    "call returns, its first bytes may have left before",
		    fmt_dur(b3, sizeof(b3), o->cross));
	printf("; %zu messages to it, %zu from it)\n", o->ab, o->ba);
}

/*
 * The clocks of traces paths[1..n) against paths[0]'s, from the TCP
 * messages between them (engine/sync.c): an offset with its uncertainty
 * and its bounds, or with a drift; one bound when messages went one way;
 * or why none.
 */
static int
clocks(char *const *paths, int n)
{
	struct sync_msgs **m = xcalloc((size_t)n, sizeof(*m));
	char *cause = NULL, b1[32], b2[32], b3[32], b4[32];
	int rc = 0;

	for (int i = 0; i < n && rc == 0; i++) {
		struct trace_reader *r = cmd_open_trace("info", paths[i]);
		if (r == NULL) {
			rc = 1;
			break;
		}
		struct cmd_progress *pg = cmd_progress("info", "pairing", r);
		if (sync_read(r, &m[i], &cause) != 0) {
			cmd_error("info", "%s: %s", paths[i], cause ? cause :
			    "cannot read its messages");
			free(cause);
			rc = 1;
		}
		cmd_progress_end(pg);
		trace_reader_close(r);
	}
	if (rc == 0)
		printf("\nclocks, against %s (TCP messages between the traces; "
		    "a receive comes after its send):\n", paths[0]);
	for (int i = 1; i < n && rc == 0; i++) {
		struct sync_offset o;
		sync_align(m[0], m[i], &o);
		printf("  %s: ", paths[i]);
		if (!o.have_est) {
			size_t nr, ns = sync_nmsgs(m[i], &nr);
			printf("no message pairs with it (%zu sends and %zu "
			    "receives with their sequence): not aligned\n", ns,
			    nr);
		} else if (o.have_drift) {
			print_drift(&o, paths[0]);
		} else if (!o.consistent && o.cross > SEND_SLACK_NS) {
			printf("no offset fits every message (at least %s, at "
			    "most %s), nor a drift the messages measure "
			    "(too few each way early and late, or paired "
			    "wrong?)\n", fmt_off(b1, sizeof(b1), o.lo),
			    fmt_off(b2, sizeof(b2), o.hi));
		} else if (!o.consistent) {
			printf("%s ± %s (the bounds cross by %.3f ms: a send "
			    "is stamped when its call returns, its first bytes "
			    "may have left before; %zu messages to it, %zu "
			    "from it)\n", fmt_off(b1, sizeof(b1), o.est),
			    fmt_dur(b2, sizeof(b2), o.uncertainty),
			    (double)o.cross / 1e6, o.ab, o.ba);
		} else if (o.have_lo && o.have_hi) {
			printf("%s ± %s (between %s and %s; %zu messages to "
			    "it, %zu from it)\n", fmt_off(b1, sizeof(b1),
			    o.est), fmt_dur(b4, sizeof(b4), o.uncertainty),
			    fmt_off(b2, sizeof(b2), o.lo), fmt_off(b3,
			    sizeof(b3), o.hi), o.ab, o.ba);
		} else if (o.have_hi) {
			printf("at most %s (%zu messages to it, none from it)\n",
			    fmt_off(b1, sizeof(b1), o.hi), o.ab);
		} else {
			printf("at least %s (%zu messages from it, none to it)\n",
			    fmt_off(b1, sizeof(b1), o.lo), o.ba);
		}
	}
	/* a trace with no message to the first, placed through others,
	   as argus diagnose merges them */
	struct hosts_host *v = xcalloc((size_t)n, sizeof(*v));
	size_t base = rc == 0 ? hosts_place(m, (size_t)n, v) : (size_t)n;
	for (int i = 1; i < n && base == 0; i++) {
		if (!v[i].merged || v[i].via <= 0)
			continue;
		printf("  %s: through %s: %s", paths[i], paths[v[i].via],
		    fmt_off(b1, sizeof(b1), v[i].offset));
		if (v[i].uncertainty >= 0)
			printf(" ± %s", fmt_dur(b2, sizeof(b2),
			    v[i].uncertainty));
		else
			printf(" (a bound on the way)");
		if (v[i].drift != 0.0)
			printf(", drifting %+.2f ppm", v[i].drift * 1e6);
		printf("\n");
	}
	free(v);
	for (int i = 0; i < n; i++)
		sync_msgs_free(m[i]);
	free(m);
	return rc;
}

int
cmd_info(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "events", no_argument, NULL, 'e' },
		{ "segments", no_argument, NULL, 's' },
		{ "threads", no_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, list_segs = 0, list_threads = 0, full = 0;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'e': full = 1; break;
		case 's': list_segs = 1; break;
		case 't': list_threads = 1; break;
		case 'h':
			fputs(info_usage, stdout);
			return 0;
		default:
			return cmd_usage_error("info", "unknown option '%s'",
			    argv[optind - 1]);
		}
	}
	if (argc - optind <= 1)
		return info_one(optind < argc ? argv[optind] :
		    ARGUS_DEFAULT_TRACE, full, list_segs, list_threads);
	/* several hosts' traces: each, then their clocks */
	for (int i = optind; i < argc; i++) {
		if (i > optind)
			printf("\n");
		if (info_one(argv[i], full, list_segs, list_threads) != 0)
			return 1;
	}
	return clocks(argv + optind, argc - optind);
}

/* One trace's summary (see info_usage). */
static int
info_one(const char *path, int full, int list_segs, int list_threads)
{
	char b1[32], b2[32];
	struct trace_reader *r = cmd_open_trace("info", path);

	if (r == NULL)
		return 1;
	const struct trace_info *in = trace_reader_info(r);
	uint64_t per_type[TT_NTYPES] = { 0 }, lost_cpu = 0;
	struct trace_event ev;

	if (full) {
		struct cmd_progress *pg = cmd_progress("info", "reading", r);

		ev_per_tid_tab = xcalloc(MAX_TID, sizeof(*ev_per_tid_tab));
		while (trace_reader_next(r, &ev)) {
			per_type[ev.type]++;
			if (ev.tid < MAX_TID)
				ev_per_tid_tab[ev.tid]++;
			if (ev.type == TT_LOST && ev.arg[0])
				lost_cpu++;
		}
		cmd_progress_end(pg);
	}

	struct trace_reader_stats st;
	size_t nindexed = 0, nwalked = 0;

	trace_reader_stats(r, &st);
	printf("%-12s%s\n", "trace:", path);
	printf("%-12s%s, kernel %s, %u CPUs, clock %s, format %u\n", "host:",
	    in->hostname, in->release, in->ncpus, in->clock, in->version);
	if (in->recorder != NULL && in->recorder_pid != 0)
		printf("%-12s%s, pid %u\n", "recorder:", in->recorder,
		    in->recorder_pid);
	else
		printf("%-12s%s\n", "recorder:", in->recorder ? in->recorder :
		    "unknown (not written by this argus's recorder)");
	if (in->nchunks) {
		print_wall("start:", in->first_ts, in->realtime_offset);
		print_wall("end:", in->last_ts, in->realtime_offset);
		printf("%-12s%s\n", "span:", fmt_duration(b1, sizeof(b1),
		    in->last_ts - in->first_ts));
	}
	for (size_t i = 0; i < trace_reader_nsegments(r); i++) {
		const struct trace_segment_info *s = trace_reader_segment(r, i);

		if (s->skipped)
			continue;
		if (s->complete)
			nindexed++;
		else
			nwalked++;
	}
	printf("%-12s%u readable of %zu, %s on disk (%zu indexed, %zu "
	    "walked)\n", "segments:", in->nsegments,
	    trace_reader_nsegments(r), fmt_bytes(b2, sizeof(b2),
	    in->disk_bytes), nindexed, nwalked);
	if (full)
		printf("%-12s%llu, %llu damaged spots skipped\n", "chunks:",
		    (unsigned long long)in->nchunks,
		    (unsigned long long)st.damaged);
	else
		printf("%-12s%llu, %llu damaged spots skipped (the chunks "
		    "themselves are checked with --events)\n",
		    "chunks:", (unsigned long long)in->nchunks,
		    (unsigned long long)st.damaged);
	if (full) {
		printf("%-12s%llu read (%.2f bytes each on disk)", "events:",
		    (unsigned long long)st.events, st.events ?
		    (double)in->disk_bytes / (double)st.events : 0.0);
		if (st.unknown)
			printf(", %llu of unknown types skipped",
			    (unsigned long long)st.unknown);
		printf("\n%-12s%llu", "lost:", (unsigned long long)st.lost);
		if (st.lost)
			printf(" (the kernel overran its buffers %llu times)",
			    (unsigned long long)lost_cpu);
		printf("\n");
	} else {
		printf("%-12s%llu in indexes and headers, exact (%.2f bytes each on "
		    "disk)\n", "events:", (unsigned long long)in->nevents,
		    in->nevents ? (double)in->disk_bytes /
		    (double)in->nevents : 0.0);
		printf("%-12s%s\n", "lost:", "unavailable without decoding "
		    "(--events)");
	}

	/* Processes: from the thread table; without --events, from the
	   thread records of the metadata stream (no event chunk decoded) */
	if (!full && trace_reader_read_threads(r) != 0)
		fprintf(stderr, "argus info: warning: no thread record could "
		    "be read; the processes listed are those of the segment "
		    "headers\n");
	size_t nt = trace_reader_nthreads(r), np = 0;
	struct proc_count *pc = xcalloc(nt + 1, sizeof(*pc));

	for (size_t i = 0; i < nt; i++) {
		const struct trace_thread *t = trace_reader_thread_at(r, i);
		size_t k;

		for (k = 0; k < np && pc[k].pid != t->pid; k++)
			;
		if (k == np)
			pc[np++].pid = t->pid;
		pc[k].threads++;
		if (full && t->tid < MAX_TID)
			pc[k].events += ev_per_tid_tab[t->tid];
	}
	if (np > 1)
		qsort(pc, np, sizeof(*pc), cmp_pid);
	if (full)
		printf("%-12s%zu processes, %zu threads\n", "tasks:", np, nt);
	else
		printf("%-12s%zu processes, %zu threads (thread records)\n",
		    "tasks:", np, nt);

	if (full) {
		printf("\nevents by type:\n");
		for (unsigned t = 1; t < TT_NTYPES; t++)
			if (per_type[t])
				printf("  %-18s %12llu\n", trace_type_name(t),
				    (unsigned long long)per_type[t]);
	}

	if (full)
		printf("\nprocesses:\n  %7s %-16s %7s %12s\n", "PID",
		    "COMMAND", "THREADS", "EVENTS");
	else
		printf("\nprocesses:\n  %7s %-16s %7s\n", "PID", "COMMAND",
		    "THREADS");
	for (size_t k = 0; k < np; k++) {
		const struct trace_thread *m = trace_reader_thread(r, pc[k].pid);

		if (full)
			printf("  %7u %-16s %7u %12llu\n", pc[k].pid,
			    m ? m->comm : "?", pc[k].threads,
			    (unsigned long long)pc[k].events);
		else
			printf("  %7u %-16s %7u\n", pc[k].pid,
			    m ? m->comm : "?", pc[k].threads);
		for (size_t i = 0; list_threads && i < nt; i++) {
			const struct trace_thread *t = trace_reader_thread_at(r, i);

			if (t->pid == pc[k].pid)
				printf("  %7s   %-7u %-16s%s\n", "", t->tid,
				    t->comm, (t->flags & TRACE_THREAD_EXITED) ?
				    " (exited)" : "");
		}
	}
	if (list_segs) {
		printf("\nsegments:\n");
		for (size_t i = 0; i < trace_reader_nsegments(r); i++) {
			const struct trace_segment_info *s = trace_reader_segment(r, i);

			printf("  %s: %s, %llu chunks, %llu events, %s%s\n", s->path,
			    fmt_bytes(b1, sizeof(b1), s->size),
			    (unsigned long long)s->nchunks,
			    (unsigned long long)s->nevents,
			    s->complete ? "indexed" : "open or unindexed",
			    s->skipped ? " (skipped)" : "");
		}
	}
	if (st.damaged) {
		printf("\ndamaged:\n");
		for (size_t i = 0; i < trace_reader_ndamage(r); i++) {
			const struct trace_damage *d = trace_reader_damage(r, i);

			printf("  %s at %llu: %s\n", d->path,
			    (unsigned long long)d->offset, d->reason);
		}
	}
	free(pc);
	free(ev_per_tid_tab);
	trace_reader_close(r);
	return 0;
}
