/*
 * gen-graph.c: writes, through the real trace store, a synthetic trace
 * shaped like the paper's Chromium session: about 19 M events over 5
 * minutes, 17 applications and 109 daemons (126 processes, 679 threads),
 * about 830 K socket messages.
 *
 * usage: gen-graph [--hosts N] DIR [EVENTS]   (default 19000000 events)
 *
 * With --hosts N it writes the same episodes twice: DIR/one, the whole
 * trace as one trace, and DIR/host-0 ... DIR/host-(N-1), the trace of
 * each host (process p runs on host p % N), as if each machine had
 * recorded its own (see "Several hosts" below). EVENTS counts the hosts'
 * events together; DIR/one has about 5 % fewer (a message between hosts
 * is seen at both ends).
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
 *
 * Several hosts (--hosts N): the messages are TCP's, each client thread
 * and daemon connected by a connection of their own (a socket at each
 * end, its addresses in a sock_addr record when first used, the bytes
 * numbered each way). DIR/one sees a send as the trace without --hosts
 * does, the data ready and the wake-up of the receiver in the sender's
 * context, and besides its sock_send (with its sequence). A host's trace holds its own processes' events
 * only, on its own clock (host k's runs k * 1.5 s ahead of DIR/one's),
 * with its own name (host-K), boot id and CPUs (NCPU each). A message
 * within a host is seen there as in DIR/one; one to another host is
 * seen twice: on the sender's host, the sendmsg and its sock_send; on
 * the receiver's, the data arriving in softirq context on the
 * receiver's CPU (net_rx: sk_data_ready and the wake-up of the
 * receiver), then its sock_recv with the same sequence. No event of a
 * host names a thread of another. The events of both views share one
 * timeline: an event seen by one view only still takes its time, so
 * the events both see have the same times (but for the shift).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "common/common.h"
#include "trace/trace.h"

#define NCPU 8
#define NAPPS 17
#define NDAEMONS 109
#define NPROC (NAPPS + NDAEMONS)
#define NTHREADS 679

#define MAXHOSTS 8
/* host k's clock runs k * HOST_SHIFT ahead of the one trace's */
#define HOST_SHIFT 1500000000ULL
#define SOCK_BASE 0xffff880000000000ULL
#define NCONN (NTHREADS * NDAEMONS)

struct th {
	uint32_t tid, pid;
	uint64_t sk;		/* its socket (receiving side) */
	unsigned host;		/* with --hosts: its process's host */
	uint32_t idx;		/* its index in th[] */
};

static struct th th[NTHREADS];
static uint32_t proc_first[NPROC], proc_n[NPROC];
static uint64_t rng = 0x9e3779b97f4a7c15ULL, ts = 1000000000ULL;
static struct trace_writer *w;
static uint64_t nev, nmsg;

/* --hosts: the hosts' writers and events, the messages between hosts,
   and each connection's state (client thread x daemon): addresses
   written, the next sequence each way */
static unsigned nhosts;
static struct trace_writer *hw[MAXHOSTS];
static uint64_t hnev[MAXHOSTS], nxmsg;
static uint8_t conn_known[NCONN];
static uint32_t conn_seq[NCONN][2];

/* where an event goes */
enum { TO_ONE = 1, TO_HOST = 2, TO_BOTH = 3 };

static uint32_t
rnd(uint32_t n)
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)((rng >> 33) % n);
}

static void
add(struct trace_writer *to, const struct trace_event *e)
{
	int err = trace_writer_add(to, e);

	if (err) {
		fprintf(stderr, "gen-graph: %s\n", trace_strerror(err));
		exit(1);
	}
}

/* The next event of the timeline, to the one trace, to host's, or both
   (without --hosts, to the one trace only). */
static void
put(unsigned to, unsigned host, uint32_t tid, unsigned cpu, unsigned ctx,
    unsigned type, const uint64_t *a, size_t na)
{
	struct trace_event e = { 0 };

	ts += 2000 + rnd(24000);
	e.ts = ts;
	e.tid = tid;
	e.cpu = (uint16_t)cpu;
	e.flags = ctx;
	e.type = (uint16_t)type;
	for (size_t i = 0; i < na; i++)
		e.arg[i] = a[i];
	if (to & TO_ONE) {
		add(w, &e);
		nev++;
	}
	if (nhosts && (to & TO_HOST)) {
		e.ts += host * HOST_SHIFT;
		add(hw[host], &e);
		hnev[host]++;
	}
}

static void
emit_to(unsigned to, unsigned host, uint32_t tid, unsigned cpu,
    unsigned ctx, unsigned type, uint64_t a0, uint64_t a1, uint64_t a2,
    uint64_t a3)
{
	uint64_t a[] = { a0, a1, a2, a3 };

	put(to, host, tid, cpu, ctx, type, a, 4);
}

/* an event of host's seen by both views */
static void
emit_h(unsigned host, uint32_t tid, unsigned cpu, unsigned ctx,
    unsigned type, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3)
{
	emit_to(TO_BOTH, host, tid, cpu, ctx, type, a0, a1, a2, a3);
}

#define CPU(t) ((t)->tid % NCPU)
/* an event of thread t, on its CPU, in its context (both views) */
#define T(t, type, a0, a1, a2, a3) \
	emit_h((t)->host, (t)->tid, CPU(t), 0, type, a0, a1, a2, a3)
/* an event on t's CPU in interrupt context ctx, no task running */
#define IRQ(t, ctx, type, a0, a1, a2, a3) \
	emit_h((t)->host, 0, CPU(t), ctx, type, a0, a1, a2, a3)

static void
run(struct th *t)
{
	emit_h(t->host, 0, CPU(t), 0, TT_SWITCH, 0, t->tid, 120, 0);
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

/* The sockets of connection k: its client's end (0) and its daemon's
   (1). */
static uint64_t
conn_sk(uint32_t k, unsigned end)
{
	return 0xffff890000000000ULL + ((uint64_t)k * 2 + end) * 2048;
}

/* A socket's sock_addr record, in its thread's context, at this time
   (not a step of the timeline), in both views. */
static void
addr_rec(struct th *t, uint64_t sk, unsigned lh, unsigned lport,
    unsigned rh, unsigned rport)
{
	struct trace_event e = { 0 };
	char tuple[64];

	snprintf(tuple, sizeof(tuple), "10.0.0.%u:%u 10.0.0.%u:%u", lh + 1,
	    lport, rh + 1, rport);
	e.ts = ts;
	e.tid = t->tid;
	e.cpu = TRACE_CPU_META;
	e.type = TT_SOCK_ADDR;
	e.arg[0] = sk;
	e.arg[1] = 2;
	e.arg[2] = 6;
	e.blob = tuple;
	e.blob_len = (uint32_t)strlen(tuple);
	add(w, &e);
	nev++;
	e.ts += t->host * HOST_SHIFT;
	add(hw[t->host], &e);
	hnev[t->host]++;
}

/* Thread a sends 64 bytes to thread b (fd: a's socket's descriptor);
   with --hosts over connection k from its end aend (client 0, daemon
   1), returning the sequence of the first byte. Within a host the
   data is ready and b woken in a's context; to another host, that is
   b's host's (arrive()). */
static uint32_t
send_msg(struct th *a, struct th *b, uint32_t k, unsigned aend,
    uint64_t fd)
{
	if (!nhosts) {
		T(a, TT_SYS_ENTER, SYS_sendmsg, fd, 0, 0);
		T(a, TT_SK_DATA_READY, b->sk, 1, 0, 0);
		T(a, TT_WAKING, b->tid, CPU(b), 120, 0);
		T(a, TT_SYS_EXIT, SYS_sendmsg, 64, 0, 0);
		return 0;
	}
	struct th *cl = aend ? b : a, *dm = aend ? a : b;
	unsigned to = a->host == b->host ? TO_BOTH : TO_ONE;
	uint32_t q = conn_seq[k][aend];

	conn_seq[k][aend] += 64;
	if (conn_seq[k][aend] == 0)
		conn_seq[k][aend] = 1;
	if (!(conn_known[k] & (1u << aend))) {
		conn_known[k] |= (uint8_t)(1u << aend);
		if (aend)
			addr_rec(a, conn_sk(k, 1), dm->host, 1000 + dm->pid,
			    cl->host, 20000 + cl->idx);
		else
			addr_rec(a, conn_sk(k, 0), cl->host, 20000 + cl->idx,
			    dm->host, 1000 + dm->pid);
	}
	T(a, TT_SYS_ENTER, SYS_sendmsg, fd, 0, 0);
	emit_to(to, a->host, a->tid, CPU(a), 0, TT_SK_DATA_READY,
	    conn_sk(k, !aend), 2, 6, 0);
	emit_to(to, a->host, a->tid, CPU(a), 0, TT_WAKING, b->tid, CPU(b),
	    120, 0);
	uint64_t sa[] = { conn_sk(k, aend), 2, 6, 64, 0, q };
	put(TO_BOTH, a->host, a->tid, CPU(a), 0, TT_SOCK_SEND, sa, 6);
	T(a, TT_SYS_EXIT, SYS_sendmsg, 64, 0, 0);
	if (to == TO_ONE)
		nxmsg++;
	return q;
}

/* The data from another host arriving for b (blocked) on b's host: the
   network's softirq on b's CPU makes it ready and wakes b. */
static void
arrive(struct th *a, struct th *b, uint32_t k, unsigned bend)
{
	if (!nhosts || a->host == b->host)
		return;
	emit_to(TO_HOST, b->host, 0, CPU(b), TRACE_CTX_SOFTIRQ,
	    TT_SOFTIRQ_ENTRY, 3, 0, 0, 0);
	emit_to(TO_HOST, b->host, 0, CPU(b), TRACE_CTX_SOFTIRQ,
	    TT_SK_DATA_READY, conn_sk(k, bend), 2, 6, 0);
	emit_to(TO_HOST, b->host, 0, CPU(b), TRACE_CTX_SOFTIRQ, TT_WAKING,
	    b->tid, CPU(b), 120, 0);
	emit_to(TO_HOST, b->host, 0, CPU(b), TRACE_CTX_SOFTIRQ,
	    TT_SOFTIRQ_EXIT, 3, 0, 0, 0);
}

/* b (running again) receives the 64 bytes from sequence q that a sent
   (with --hosts over connection k, to its end bend). */
static void
recv_msg(struct th *a, struct th *b, uint32_t k, unsigned bend, uint32_t q)
{
	if (!nhosts) {
		T(b, TT_SOCK_RECV, b->sk, 1, 0, 64);
		T(b, TT_SYS_EXIT, SYS_recvmsg, 64, 0, 0);
		return;
	}
	if (!(conn_known[k] & (1u << bend))) {
		conn_known[k] |= (uint8_t)(1u << bend);
		addr_rec(b, conn_sk(k, bend), b->host, bend ? 1000 + b->pid :
		    20000 + b->idx, a->host, bend ? 20000 + a->idx :
		    1000 + a->pid);
	}
	uint64_t ra[] = { conn_sk(k, bend), 2, 6, 64, 0, q };
	put(TO_BOTH, b->host, b->tid, CPU(b), 0, TT_SOCK_RECV, ra, 6);
	T(b, TT_SYS_EXIT, SYS_recvmsg, 64, 0, 0);
}

static void
request_reply(void)
{
	struct th *c = pick(rnd(NAPPS));
	/* a few busy daemons take most requests (batch servers) */
	uint32_t dp = rnd(4) ? NAPPS + rnd(8) : NAPPS + rnd(NDAEMONS);
	struct th *s = &th[proc_first[dp]];
	uint32_t k = c->idx * NDAEMONS + (dp - NAPPS), q;

	run(c);
	noise(c, rnd(3));
	q = send_msg(c, s, k, 0, 5);
	block(c, SYS_recvmsg, 5);
	arrive(c, s, k, 1);
	run(s);
	recv_msg(c, s, k, 1, q);
	noise(s, rnd(3));
	q = send_msg(s, c, k, 1, 6);
	block(s, SYS_recvmsg, 6);
	arrive(s, c, k, 0);
	run(c);
	recv_msg(s, c, k, 0, q);
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
	IRQ(t, TRACE_CTX_HARDIRQ, TT_TIMER_EXPIRE, timer, 1,
	    0xffffffff81000000ULL, 0);
	IRQ(t, TRACE_CTX_HARDIRQ, TT_WAKING, t->tid, CPU(t), 120, 0);
	IRQ(t, TRACE_CTX_HARDIRQ, TT_TIMER_EXPIRE_EXIT, timer, 1, 0, 0);
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
	T(a, TT_USER, TU_TASK_SUBMIT, key, 0, 0);
	T(a, TT_WAKING, b->tid, CPU(b), 120, 0);
	block(a, SYS_poll, 0);
	run(b);
	T(b, TT_USER, TU_TASK_BEGIN, key, 0, 0);
	noise(b, 1 + rnd(3));
	block(b, SYS_futex, 0x1000);
	IRQ(b, TRACE_CTX_HARDIRQ, TT_IRQ_ENTRY, 30, 0, 0, 0);
	IRQ(b, TRACE_CTX_HARDIRQ, TT_WAKING, b->tid, CPU(b), 120, 0);
	IRQ(b, TRACE_CTX_HARDIRQ, TT_IRQ_EXIT, 30, 1, 0, 0);
	run(b);
	T(b, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	T(b, TT_USER, TU_TASK_END, key, 0, 0);
	block(b, SYS_futex, 0x2000);
}

static struct trace_writer *
open_writer(const char *dir, const char *host, const char *boot)
{
	struct trace_writer_opts o = { .ncpus = NCPU, .hostname = host,
	    .release = "6.18", .boot_id = boot, .size_bound = 8ULL << 30 };
	struct trace_writer *x;
	char *cause = NULL;
	int err = trace_writer_open(&x, dir, &o, &cause);

	if (err) {
		fprintf(stderr, "gen-graph: %s: %s\n", dir, cause ? cause :
		    trace_strerror(err));
		exit(1);
	}
	return x;
}

static void
close_writer(struct trace_writer *x)
{
	int err = trace_writer_close(x);

	if (err) {
		fprintf(stderr, "gen-graph: close: %s\n", trace_strerror(err));
		exit(1);
	}
}

static void
usage(void)
{
	fprintf(stderr, "usage: gen-graph [--hosts N] DIR [EVENTS]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	uint64_t target = 19000000, nh = 0;

	if (argc > 1 && strcmp(argv[1], "--hosts") == 0) {
		if (argc < 3 || parse_u64(argv[2], &nh) != 0 || nh < 2 ||
		    nh > MAXHOSTS)
			usage();
		nhosts = (unsigned)nh;
		argc -= 2;
		argv += 2;
	}
	if (argc < 2 || argc > 3 || (argc == 3 && parse_u64(argv[2],
	    &target) != 0))
		usage();
	if (!nhosts)
		w = open_writer(argv[1], "bench", "bench");
	else {
		char dir[4096], name[32], boot[48];
		if (mkdir(argv[1], 0755) != 0 && errno != EEXIST) {
			fprintf(stderr, "gen-graph: %s: %s\n", argv[1],
			    strerror(errno));
			return 1;
		}
		snprintf(dir, sizeof(dir), "%s/one", argv[1]);
		w = open_writer(dir, "bench", "bench");
		for (unsigned k = 0; k < nhosts; k++) {
			snprintf(dir, sizeof(dir), "%s/host-%u", argv[1], k);
			snprintf(name, sizeof(name), "host-%u", k);
			snprintf(boot, sizeof(boot), "bench-host-%u", k);
			hw[k] = open_writer(dir, name, boot);
		}
		/* each connection's first sequence each way, not 0 */
		for (uint32_t k = 0; k < NCONN; k++)
			for (unsigned d = 0; d < 2; d++)
				conn_seq[k][d] = 1000 + k * 7919u + d * 104729u;
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
			    0xffff880000000000ULL + (uint64_t)t.tid * 4096,
			    nhosts ? p % nhosts : 0, n };
			trace_writer_thread(w, ts, &t);
			if (nhosts)
				trace_writer_thread(hw[th[n].host], ts +
				    th[n].host * HOST_SHIFT, &t);
		}
	}
	for (;;) {
		uint64_t all = nev;
		if (nhosts)
			for (unsigned k = all = 0; k < nhosts; k++)
				all += hnev[k];
		if (all >= target)
			break;
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
	close_writer(w);
	for (unsigned k = 0; k < nhosts; k++)
		close_writer(hw[k]);
	printf("gen-graph: %llu events, %llu messages, %u processes, %u "
	    "threads, %.1f s of trace\n", (unsigned long long)nev,
	    (unsigned long long)nmsg, NPROC, NTHREADS,
	    (double)(ts - 1000000000ULL) / 1e9);
	for (unsigned k = 0; k < nhosts; k++)
		printf("gen-graph: host-%u: %llu events, clock %+.1f s\n", k,
		    (unsigned long long)hnev[k], (double)(k * HOST_SHIFT) / 1e9);
	if (nhosts)
		printf("gen-graph: %llu messages between hosts\n",
		    (unsigned long long)nxmsg);
	return 0;
}
