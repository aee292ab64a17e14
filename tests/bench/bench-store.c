/*
 * bench-store.c: bytes per event on disk and decode speed of the trace
 * store, on a synthetic stream shaped like a kernel trace of
 * `perf bench sched messaging` (measured with perf stat on this machine:
 * per message, the sender's write enter/exit with sock_send_length and
 * sk_data_ready, the receiver's read enter/exit with sock_recv_length;
 * a switch and a wake-up every few dozen messages; timers and softirqs
 * rarely).
 *
 * usage: bench-store [EVENTS] [DIR] [LEVEL]
 * (default 10000000 events, a temporary directory, levels 1, 3 and 9;
 * with ARGUS_BENCH_KEEP set the last trace is left in DIR)
 * Prints one line per zstd level: bytes/event before and after
 * compression, write speed, and single-core decode speed into a
 * reused array of events.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/common.h"
#include "trace/trace.h"

#define NCPUS 4
#define GROUPS 10
#define PER_GROUP 20		/* senders and receivers per group */

struct gen {
	uint64_t ts[NCPUS];
	uint32_t cur[NCPUS];	/* task on each CPU */
	uint32_t left[NCPUS];	/* messages before the next switch */
	uint64_t rng;
	uint32_t next_recv[GROUPS * PER_GROUP];
};

static uint32_t
rnd(struct gen *g, uint32_t n)
{
	g->rng = g->rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)((g->rng >> 33) % n);
}

static int
emit(struct trace_writer *w, struct gen *g, int cpu, uint16_t type,
    uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4)
{
	struct trace_event e = { 0 };

	g->ts[cpu] += 200 + rnd(g, 900);
	e.ts = g->ts[cpu];
	e.cpu = (uint16_t)cpu;
	e.tid = g->cur[cpu];
	e.type = type;
	e.arg[0] = a0;
	e.arg[1] = a1;
	e.arg[2] = a2;
	e.arg[3] = a3;
	e.arg[4] = a4;
	return trace_writer_add(w, &e);
}

/* One step on one CPU: a message sent or received, or a switch. */
static size_t
step(struct trace_writer *w, struct gen *g, int cpu)
{
	uint32_t t = g->cur[cpu];
	/* tids 1000..1399: senders even, receivers odd. */
	uint32_t idx = (t - 1000) / 2, group = idx / PER_GROUP;
	uint64_t sk_base = 0xffff888100000000ULL + (uint64_t)group * 0x100000;
	uint64_t buf = 0x7ffc00000000ULL + (uint64_t)t * 0x1000;

	if (g->left[cpu]-- == 0) {
		uint32_t next = 1000 + rnd(g, GROUPS * PER_GROUP * 2);

		emit(w, g, cpu, TT_WAKING, 1000 + rnd(g, 400), rnd(g, NCPUS), 120, 0, 0);
		emit(w, g, cpu, TT_SWITCH, rnd(g, 3) ? 1 : 0, next, 120, 0, 0);
		g->cur[cpu] = next;
		g->left[cpu] = 10 + rnd(g, 40);
		if (rnd(g, 50) == 0) {
			emit(w, g, cpu, TT_TIMER_START, 0xffff88813fc1e000ULL +
			    cpu * 0x100, 0xffffffff8113c2a0ULL, g->ts[cpu] + 4000000, 1, 0);
			return 3;
		}
		return 2;
	}
	if ((t & 1) == 0) {
		uint32_t r = g->next_recv[idx]++ % PER_GROUP;
		uint64_t fd = 20 + r, sk = sk_base + r * 0x400;

		emit(w, g, cpu, TT_SYS_ENTER, 1, fd, buf, 100, 0);
		emit(w, g, cpu, TT_SOCK_SEND, sk + 0x200, 1, 0, 100, 0);
		emit(w, g, cpu, TT_SK_DATA_READY, sk, 1, 0, 0, 0);
		emit(w, g, cpu, TT_SYS_EXIT, 1, 100, 0, 0, 0);
		return 4;
	}
	uint64_t sk = sk_base + (idx % PER_GROUP) * 0x400;

	emit(w, g, cpu, TT_SYS_ENTER, 0, 3, buf, 100, 0);
	emit(w, g, cpu, TT_SOCK_RECV, sk, 1, 0, 100, 0x40);
	emit(w, g, cpu, TT_SYS_EXIT, 0, 100, 0, 0, 0);
	return 3;
}

static double
secs(void)
{
	return (double)now_ns() / 1e9;
}

struct bulk {
	struct trace_reader *r;
	size_t first, step;
	uint64_t events, sum;
};

/* Decode every step-th chunk into a reused array, as a loader would. */
static void *
bulk_decode(void *arg)
{
	struct bulk *b = arg;
	struct trace_chunk_buf *cb = trace_chunk_buf_new();
	struct trace_event *evs = NULL;
	size_t cap = 0;

	for (size_t i = b->first; i < trace_reader_nchunks(b->r); i += b->step) {
		const struct trace_chunk_info *ci = trace_reader_chunk(b->r, i);

		if (ci->count > cap) {
			cap = ci->count;
			evs = xreallocarray(evs, cap, sizeof(*evs));
		}
		size_t k = trace_reader_decode_chunk(b->r, i, cb, evs);

		for (size_t j = 0; j < k; j++)
			b->sum += evs[j].arg[0] ^ evs[j].tid;
		b->events += k;
	}
	free(evs);
	trace_chunk_buf_free(cb);
	return NULL;
}

/* Events per second decoding all chunks on nthreads threads. */
static double
bulk_rate(struct trace_reader *r, int nthreads, uint64_t *events)
{
	struct bulk b[8];
	pthread_t th[8];
	double t0 = (double)now_ns();

	*events = 0;
	for (int i = 0; i < nthreads; i++) {
		b[i] = (struct bulk){ r, (size_t)i, (size_t)nthreads, 0, 0 };
		pthread_create(&th[i], NULL, bulk_decode, &b[i]);
	}
	for (int i = 0; i < nthreads; i++) {
		pthread_join(th[i], NULL);
		*events += b[i].events;
	}
	return (double)*events / (((double)now_ns() - t0) / 1e9);
}

static void
run(const char *dir, uint64_t n, int level)
{
	struct trace_writer_opts o = { 0 };
	struct trace_writer *w;
	struct trace_writer_stats st;
	struct gen g = { .rng = 42 };
	char *cause = NULL;
	char *cmd = xasprintf("rm -rf '%s'", dir);

	(void)system(cmd);
	o.size_bound = 64ULL << 30;
	o.zstd_level = level;
	o.ncpus = NCPUS;
	o.group = (gid_t)-1;
	if (trace_writer_open(&w, dir, &o, &cause) != 0) {
		fprintf(stderr, "bench-store: %s\n", cause);
		exit(1);
	}
	for (int c = 0; c < NCPUS; c++) {
		g.ts[c] = 1000000000ULL;
		g.cur[c] = 1000 + (uint32_t)c;
	}
	double t0 = secs();
	uint64_t done = 0;

	while (done < n)
		for (int c = 0; c < NCPUS && done < n; c++)
			done += step(w, &g, c);
	trace_writer_stats(w, &st);
	if (trace_writer_close(w) != 0) {
		fprintf(stderr, "bench-store: close failed\n");
		exit(1);
	}
	double t1 = secs();


	struct trace_reader *r;

	if (trace_reader_open(&r, dir, &cause) != 0) {
		fprintf(stderr, "bench-store: %s\n", cause);
		exit(1);
	}
	const struct trace_info *in = trace_reader_info(r);
	static struct trace_event batch[65536];
	uint64_t got = 0, sum = 0;
	double t2 = secs();
	size_t k;

	while ((k = trace_reader_read(r, batch, 65536)) > 0) {
		for (size_t i = 0; i < k; i++)
			sum += batch[i].arg[0] ^ batch[i].tid;
		got += k;
	}
	double t3 = secs();

	uint64_t b1, b2;
	double r1 = bulk_rate(r, 1, &b1), r2 = bulk_rate(r, 2, &b2);

	printf("store level=%d events=%llu raw=%.2f B/ev disk=%.2f B/ev "
	    "write=%.1f Mev/s merged-decode=%.1f Mev/s chunk-decode=%.1f Mev/s "
	    "(1 core) %.1f Mev/s (2 threads) (check %llx)\n", level,
	    (unsigned long long)got, (double)st.raw_bytes / (double)st.events,
	    (double)in->disk_bytes / (double)got, (double)n / (t1 - t0) / 1e6,
	    (double)got / (t3 - t2) / 1e6, r1 / 1e6, r2 / 1e6,
	    (unsigned long long)(sum & 0xffff));
	if (b1 != got || b2 != got)
		printf("store ERROR: chunk decoding gave %llu and %llu events\n",
		    (unsigned long long)b1, (unsigned long long)b2);
	if (got < n)
		printf("store ERROR: read %llu of %llu events\n",
		    (unsigned long long)got, (unsigned long long)n);
	trace_reader_close(r);
	if (getenv("ARGUS_BENCH_KEEP") == NULL)
		(void)system(cmd);
	free(cmd);
}

int
main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000;
	char tmpl[] = "/tmp/argus-bench-XXXXXX";
	const char *dir = argc > 2 ? argv[2] : mkdtemp(tmpl);
	static const int levels[] = { 1, 3, 9 };

	if (dir == NULL)
		return 1;
	if (argc > 3) {
		run(dir, n, atoi(argv[3]));
		return 0;
	}
	for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++)
		run(dir, n, levels[i]);
	if (getenv("ARGUS_BENCH_KEEP") == NULL)
		rmdir(dir);
	return 0;
}
