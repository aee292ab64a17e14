/*
 * gen-graph.c: writes, through the real trace store, a synthetic trace
 * shaped like the paper's Chromium session: about 19 M events over 5
 * minutes, 17 applications and 109 daemons (126 processes, 679 threads),
 * about 830 K socket messages.
 *
 * usage: gen-graph DIR [EVENTS]   (default 19000000 events)
 *
 * The trace is a sequence of episodes, each consistent on its own (a
 * thread only acts while it runs, blocks before it is woken):
 *   request/reply: a client thread sends to a daemon and blocks in
 *     recvmsg; the daemon wakes, receives, works, replies, wakes the
 *     client and blocks again (2 messages);
 *   futex hand-off: a thread wakes another of its process and blocks;
 *   timed sleep: a thread arms a timer and sleeps; the expiry runs in
 *     hard interrupt context on its CPU and wakes it;
 *   thread-pool task: submit, then the worker's task begin/end with a
 *     wait inside;
 *   plain syscalls in between.
 * Each thread stays on one CPU (tid mod NCPU) and CPUs sit idle between
 * episodes, so each CPU's stream is in time order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "common/common.h"
#include "trace/trace.h"

#define NCPU 8
#define NAPPS 17
#define NDAEMONS 109
#define NPROC (NAPPS + NDAEMONS)
#define NTHREADS 679

struct th {
	uint32_t tid, pid;
	uint64_t sk;		/* its socket (receiving side) */
};

static struct th th[NTHREADS];
static uint32_t proc_first[NPROC], proc_n[NPROC];
static uint64_t rng = 0x9e3779b97f4a7c15ULL, ts = 1000000000ULL;
static struct trace_writer *w;
static uint64_t nev, nmsg;

static uint32_t
rnd(uint32_t n)
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)((rng >> 33) % n);
}

static void
emit(uint32_t tid, unsigned cpu, unsigned ctx, unsigned type, uint64_t a0,
    uint64_t a1, uint64_t a2, uint64_t a3)
{
	struct trace_event e = { 0 };

	ts += 2000 + rnd(24000);
	e.ts = ts;
	e.tid = tid;
	e.cpu = (uint16_t)cpu;
	e.flags = ctx;
	e.type = (uint16_t)type;
	e.arg[0] = a0;
	e.arg[1] = a1;
	e.arg[2] = a2;
	e.arg[3] = a3;
	int err = trace_writer_add(w, &e);
	if (err) {
		fprintf(stderr, "gen-graph: %s\n", trace_strerror(err));
		exit(1);
	}
	nev++;
}

#define CPU(t) ((t)->tid % NCPU)
#define T(t, type, a0, a1, a2, a3) \
	emit((t)->tid, CPU(t), 0, type, a0, a1, a2, a3)

static void
run(struct th *t)
{
	emit(0, CPU(t), 0, TT_SWITCH, 0, t->tid, 120, 0);
}

static void
block(struct th *t, unsigned nr, uint64_t res)
{
	T(t, TT_SYS_ENTER, nr, res, 0, 0);
	T(t, TT_SWITCH, 1, 0, 120, 0);
}

static void
sys(struct th *t, unsigned nr, uint64_t a0, int64_t ret)
{
	T(t, TT_SYS_ENTER, nr, a0, 0, 0);
	T(t, TT_SYS_EXIT, nr, (uint64_t)ret, 0, 0);
}

static void
noise(struct th *t, unsigned n)
{
	static const unsigned nrs[] = { SYS_read, SYS_write, SYS_mmap,
	    SYS_clock_gettime, SYS_openat, SYS_close, SYS_fstat };
	for (unsigned i = 0; i < n; i++)
		sys(t, nrs[rnd(ARRAY_SIZE(nrs))], rnd(64), 0);
}

static struct th *
pick(uint32_t p)
{
	return &th[proc_first[p] + rnd(proc_n[p])];
}

static void
request_reply(void)
{
	struct th *c = pick(rnd(NAPPS));
	/* a few busy daemons take most requests (batch servers) */
	uint32_t dp = rnd(4) ? NAPPS + rnd(8) : NAPPS + rnd(NDAEMONS);
	struct th *s = &th[proc_first[dp]];

	run(c);
	noise(c, rnd(3));
	T(c, TT_SYS_ENTER, SYS_sendmsg, 5, 0, 0);
	T(c, TT_SK_DATA_READY, s->sk, 1, 0, 0);
	T(c, TT_WAKING, s->tid, CPU(s), 120, 0);
	T(c, TT_SYS_EXIT, SYS_sendmsg, 64, 0, 0);
	block(c, SYS_recvmsg, 5);
	run(s);
	T(s, TT_SOCK_RECV, s->sk, 1, 0, 64);
	T(s, TT_SYS_EXIT, SYS_recvmsg, 64, 0, 0);
	noise(s, rnd(3));
	T(s, TT_SYS_ENTER, SYS_sendmsg, 6, 0, 0);
	T(s, TT_SK_DATA_READY, c->sk, 1, 0, 0);
	T(s, TT_WAKING, c->tid, CPU(c), 120, 0);
	T(s, TT_SYS_EXIT, SYS_sendmsg, 64, 0, 0);
	block(s, SYS_recvmsg, 6);
	run(c);
	T(c, TT_SOCK_RECV, c->sk, 1, 0, 64);
	T(c, TT_SYS_EXIT, SYS_recvmsg, 64, 0, 0);
	noise(c, rnd(2));
	block(c, SYS_poll, 0);
	nmsg += 2;
}

static void
futex_handoff(void)
{
	uint32_t p = rnd(NPROC);
	struct th *a = pick(p), *b = pick(p);

	if (a == b || CPU(a) == CPU(b))
		return;
	run(b);
	noise(b, rnd(2));
	block(b, SYS_futex, 0x7f0000 + b->tid);
	run(a);
	noise(a, rnd(4));
	T(a, TT_SYS_ENTER, SYS_futex, 0x7f0000 + b->tid, 1, 0);
	T(a, TT_WAKING, b->tid, CPU(b), 120, 0);
	T(a, TT_SYS_EXIT, SYS_futex, 1, 0, 0);
	block(a, SYS_poll, 0);
	run(b);
	T(b, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	noise(b, rnd(3));
	block(b, SYS_poll, 0);
}

static void
timed_sleep(void)
{
	struct th *t = &th[rnd(NTHREADS)];
	uint64_t timer = 0xffff888000000000ULL + t->tid * 64;

	run(t);
	noise(t, rnd(3));
	T(t, TT_TIMER_START, timer, 0xffffffff81000000ULL, ts + 1000000, 1);
	block(t, SYS_clock_nanosleep, 0);
	emit(0, CPU(t), TRACE_CTX_HARDIRQ, TT_TIMER_EXPIRE, timer, 1,
	    0xffffffff81000000ULL, 0);
	emit(0, CPU(t), TRACE_CTX_HARDIRQ, TT_WAKING, t->tid, CPU(t), 120, 0);
	emit(0, CPU(t), TRACE_CTX_HARDIRQ, TT_TIMER_EXPIRE_EXIT, timer, 1, 0,
	    0);
	run(t);
	T(t, TT_SYS_EXIT, SYS_clock_nanosleep, 0, 0, 0);
	noise(t, rnd(4));
	block(t, SYS_poll, 0);
}

static void
pool_task(void)
{
	uint32_t p = rnd(NAPPS);
	struct th *a = pick(p), *b = pick(p);
	uint64_t key = rng;

	if (a == b || CPU(a) == CPU(b))
		return;
	run(a);
	emit(a->tid, CPU(a), 0, TT_USER, TU_TASK_SUBMIT, key, 0, 0);
	T(a, TT_WAKING, b->tid, CPU(b), 120, 0);
	block(a, SYS_poll, 0);
	run(b);
	emit(b->tid, CPU(b), 0, TT_USER, TU_TASK_BEGIN, key, 0, 0);
	noise(b, 1 + rnd(3));
	block(b, SYS_futex, 0x1000);
	emit(0, CPU(b), TRACE_CTX_HARDIRQ, TT_IRQ_ENTRY, 30, 0, 0, 0);
	emit(0, CPU(b), TRACE_CTX_HARDIRQ, TT_WAKING, b->tid, CPU(b), 120, 0);
	emit(0, CPU(b), TRACE_CTX_HARDIRQ, TT_IRQ_EXIT, 30, 1, 0, 0);
	run(b);
	T(b, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	emit(b->tid, CPU(b), 0, TT_USER, TU_TASK_END, key, 0, 0);
	block(b, SYS_futex, 0x2000);
}

int
main(int argc, char **argv)
{
	uint64_t target = 19000000;
	char *cause = NULL;

	if (argc < 2 || argc > 3 || (argc == 3 && parse_u64(argv[2],
	    &target) != 0)) {
		fprintf(stderr, "usage: gen-graph DIR [EVENTS]\n");
		return 2;
	}
	struct trace_writer_opts o = { .ncpus = NCPU, .hostname = "bench",
	    .release = "6.18", .boot_id = "bench", .size_bound = 8ULL << 30 };
	int err = trace_writer_open(&w, argv[1], &o, &cause);
	if (err) {
		fprintf(stderr, "gen-graph: %s\n", cause ? cause :
		    trace_strerror(err));
		return 1;
	}
	/* 17 apps with 20 threads each, 109 daemons sharing the rest */
	uint32_t n = 0;
	for (uint32_t p = 0; p < NPROC; p++) {
		uint32_t k = p < NAPPS ? 20 : (p - NAPPS) < 339 - 3 * NDAEMONS ?
		    4 : 3;
		if (p == NPROC - 1)
			k = NTHREADS - n;
		proc_first[p] = n;
		proc_n[p] = k;
		for (uint32_t i = 0; i < k; i++, n++) {
			struct trace_thread t = { .tid = 1000 + n,
			    .pid = 1000 + proc_first[p] };
			snprintf(t.comm, sizeof(t.comm), p < NAPPS ?
			    "app%u-%u" : "daemon%u-%u", p, i);
			th[n] = (struct th){ t.tid, t.pid,
			    0xffff880000000000ULL + (uint64_t)t.tid * 4096 };
			trace_writer_thread(w, ts, &t);
		}
	}
	while (nev < target) {
		unsigned k = rnd(100);
		if (k < 44)
			request_reply();
		else if (k < 64)
			futex_handoff();
		else if (k < 90)
			timed_sleep();
		else
			pool_task();
	}
	err = trace_writer_close(w);
	if (err) {
		fprintf(stderr, "gen-graph: close: %s\n", trace_strerror(err));
		return 1;
	}
	printf("gen-graph: %llu events, %llu messages, %u processes, %u "
	    "threads, %.1f s of trace\n", (unsigned long long)nev,
	    (unsigned long long)nmsg, NPROC, NTHREADS,
	    (double)(ts - 1000000000ULL) / 1e9);
	return 0;
}
