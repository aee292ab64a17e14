/*
 * graph-fixture.h: deterministic traces built in code for the graph tests.
 *
 * struct fx is an array of trace events in time order (each new event is
 * 1 us after the previous one) plus a thread table. fx_ev() appends an
 * event of a thread on the fixture's current CPU and interrupt context.
 */
#ifndef ARGUS_GRAPH_FIXTURE_H
#define ARGUS_GRAPH_FIXTURE_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "engine/engine.h"
#include "trace/trace.h"

#define FX_MAX 4096

struct fx {
	struct trace_event ev[FX_MAX];
	size_t n;
	struct trace_thread th[64];
	size_t nth;
	uint64_t ts;
	unsigned cpu, ctx;
};

static inline void
fx_init(struct fx *f)
{
	memset(f, 0, sizeof(*f));
	f->ts = 1000000;
}

static inline void
fx_thread(struct fx *f, uint32_t tid, uint32_t pid, const char *comm)
{
	struct trace_thread *t = &f->th[f->nth++];

	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->pid = pid;
	snprintf(t->comm, sizeof(t->comm), "%s", comm);
}

/* Append an event; returns its timestamp. */
static inline uint64_t
fx_ev(struct fx *f, uint32_t tid, unsigned type, uint64_t a0, uint64_t a1,
    uint64_t a2, uint64_t a3)
{
	struct trace_event *e = &f->ev[f->n++];

	memset(e, 0, sizeof(*e));
	f->ts += 1000;
	e->ts = f->ts;
	e->tid = tid;
	e->type = (uint16_t)type;
	e->cpu = (uint16_t)f->cpu;
	e->flags = f->ctx;
	e->arg[0] = a0;
	e->arg[1] = a1;
	e->arg[2] = a2;
	e->arg[3] = a3;
	return e->ts;
}

static inline void
fx_blob(struct fx *f, const char *s)
{
	f->ev[f->n - 1].blob = s;
	f->ev[f->n - 1].blob_len = (uint32_t)strlen(s);
}

static inline uint64_t
fx_user(struct fx *f, uint32_t tid, unsigned kind, uint64_t key)
{
	return fx_ev(f, tid, TT_USER, kind, key, 0, 0);
}

/* tid blocks (switching to next, 0 for idle) inside syscall nr on res. */
static inline uint64_t
fx_block(struct fx *f, uint32_t tid, uint32_t next, unsigned nr,
    uint64_t res)
{
	fx_ev(f, tid, TT_SYS_ENTER, nr, res, 0, 0);
	return fx_ev(f, tid, TT_SWITCH, 1, next, 120, 0);
}

/* Thread s, given the CPU in its nanosleep, returns from it, says data
   is ready on socket sk (when not 0), wakes w (when not 0), and sleeps
   again, the CPU to next. */
static inline uint64_t
fx_nap(struct fx *f, uint32_t s, uint64_t sk, uint32_t w, uint32_t next)
{
	fx_ev(f, s, TT_SYS_EXIT, SYS_nanosleep, 0, 0, 0);
	if (sk != 0)
		fx_ev(f, s, TT_SK_DATA_READY, sk, 1, 0, 0);
	if (w != 0)
		fx_ev(f, s, TT_WAKING, w, 0, 120, 0);
	return fx_block(f, s, next, SYS_nanosleep, 0);
}

/* A timer interrupt: timer expires and wakes tid (its sleep armed
   timer). The fixture's context is task again after it. */
static inline void
fx_timer_wake(struct fx *f, uint64_t timer, uint32_t tid)
{
	f->ctx = TRACE_CTX_HARDIRQ;
	fx_ev(f, 0, TT_IRQ_ENTRY, 0, 0, 0, 0);
	fx_blob(f, "apic_timer");
	fx_ev(f, 0, TT_TIMER_EXPIRE, timer, 1, 0xfff, 0);
	fx_ev(f, 0, TT_WAKING, tid, 0, 120, 0);
	fx_ev(f, 0, TT_TIMER_EXPIRE_EXIT, timer, 1, 0, 0);
	fx_ev(f, 0, TT_IRQ_EXIT, 0, 1, 0, 0);
	f->ctx = TRACE_CTX_TASK;
}

/* tid exits, the CPU to next (0 for idle). */
static inline void
fx_exit(struct fx *f, uint32_t tid, uint32_t next)
{
	fx_ev(f, tid, TT_EXIT, tid, 0, 0, 0);
	fx_ev(f, tid, TT_SWITCH, 0x40, next, 120, 0);	/* X */
}

/* parent forks child (a process of its own, named comm) and wakes it. */
static inline void
fx_fork(struct fx *f, uint32_t parent, uint32_t child, const char *comm)
{
	fx_ev(f, parent, TT_FORK, child, child, 0, 0);
	fx_blob(f, comm);
	fx_ev(f, parent, TT_WAKEUP_NEW, child, 0, 120, 0);
}

/* prev (0 for idle) switches to tid (preempted when prev_state is 0). */
static inline uint64_t
fx_run(struct fx *f, uint32_t prev, uint32_t tid)
{
	return fx_ev(f, prev, TT_SWITCH, 0, tid, 120, 0);
}

/*
 * m, back from its poll on pollres, waits on futex lock for wait_us, then
 * polls again. With sk, x (asleep) makes a message ready on socket sk
 * and wakes m, which receives it before the wait and runs again after it
 * woken by no thread; without, x wakes m at the wait's end. Returns when
 * m blocked; *end, when not NULL, gets when it ran again.
 */
static inline uint64_t
fx_lock_wait(struct fx *f, uint32_t m, uint32_t x, uint64_t sk,
    uint64_t lock, uint64_t pollres, uint64_t wait_us, uint64_t *end)
{
	uint64_t at, e;

	if (sk != 0) {
		fx_run(f, 0, x);
		fx_nap(f, x, sk, m, m);
	} else {
		fx_run(f, 0, m);
	}
	fx_ev(f, m, TT_SYS_EXIT, SYS_poll, 1, 0, 0);
	if (sk != 0)
		fx_ev(f, m, TT_SOCK_RECV, sk, 1, 0, 10);
	at = fx_block(f, m, 0, SYS_futex, lock);
	f->ts += wait_us * 1000;
	if (sk != 0) {
		e = fx_run(f, 0, m);
	} else {
		fx_run(f, 0, x);
		e = fx_nap(f, x, 0, m, m);
	}
	fx_ev(f, m, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	fx_ev(f, m, TT_SYS_ENTER, SYS_poll, pollres, 0, 0);
	fx_ev(f, m, TT_SWITCH, 1, 0, 120, 0);
	f->ts += 5000000;
	if (end != NULL)
		*end = e;
	return at;
}

/*
 * One turn of a lock handed over: m wakes w and blocks on futex lock;
 * w, awake, holds it for wait_us (blocked on futex slow when hung), then
 * wakes m and blocks on futex idle, and m returns. Returns 0, with w still
 * blocked on slow, when hung and forever (a hang that never ends).
 */
static inline int
fx_lock_turn(struct fx *f, uint32_t m, uint32_t w, uint64_t lock,
    uint64_t slow, uint64_t idle, int hung, uint64_t wait_us, int forever)
{
	fx_ev(f, m, TT_WAKING, w, 0, 120, 0);
	fx_block(f, m, w, SYS_futex, lock);
	fx_ev(f, w, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	if (hung)
		fx_block(f, w, 0, SYS_futex, slow);
	f->ts += wait_us * 1000;
	if (hung && forever)
		return 0;
	if (hung) {
		fx_run(f, 0, w);
		fx_ev(f, w, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	}
	fx_ev(f, w, TT_WAKING, m, 0, 120, 0);
	fx_block(f, w, m, SYS_futex, idle);
	fx_ev(f, m, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	return 1;
}

/* tid waits on futex word 5 ms, until the wait's timeout: a timed
   slice. */
static inline void
fx_timed_slice(struct fx *f, uint32_t tid, uint64_t word)
{
	fx_block(f, tid, 0, SYS_futex, word);
	f->ts += 5000000ULL;
	fx_run(f, 0, tid);
	fx_ev(f, tid, TT_SYS_EXIT, SYS_futex, (uint64_t)-ETIMEDOUT, 0, 0);
}

/* m waits on futex word in n timed slices, with other calls between
   every few slices when other_calls; w, on CPU 1, runs the whole time,
   wakes m after them when wakes (m then reads), and sleeps. */
static inline void
fx_sliced(struct fx *f, uint32_t m, uint32_t w, uint64_t word, unsigned n,
    int other_calls, int wakes)
{
	f->cpu = 1;
	fx_run(f, 0, w);
	f->cpu = 0;
	for (unsigned k = 0; k < n; k++) {
		if (other_calls && k % 4 == 0) {
			fx_ev(f, m, TT_SYS_ENTER, SYS_getpid, 0, 0, 0);
			fx_ev(f, m, TT_SYS_EXIT, SYS_getpid, m, 0, 0);
		}
		fx_timed_slice(f, m, word);
	}
	fx_block(f, m, 0, SYS_futex, word);
	f->ts += 3000000ULL;
	if (wakes) {
		f->cpu = 1;
		fx_ev(f, w, TT_WAKING, m, 0, 120, 0);
		f->cpu = 0;
		fx_run(f, 0, m);
		fx_ev(f, m, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
		fx_block(f, m, 0, SYS_read, 5);
	}
	f->ts += 5000000ULL;
	f->cpu = 1;
	fx_block(f, w, 0, SYS_nanosleep, 0);
	f->cpu = 0;
}

/* tid blocks in nr on res for ms; a timer ends the slice, which
   returns ret; then tid reads the clock (a slice's bookkeeping). */
static inline void
fx_slice(struct fx *f, uint32_t tid, unsigned nr, uint64_t res, uint64_t ms,
    int64_t ret)
{
	fx_block(f, tid, 0, nr, res);
	f->ts += ms * 1000000ULL;
	fx_timer_wake(f, 0x9000, tid);
	fx_run(f, 0, tid);
	fx_ev(f, tid, TT_SYS_EXIT, nr, (uint64_t)ret, 0, 0);
	fx_ev(f, tid, TT_SYS_ENTER, SYS_clock_gettime, 1, 0, 0);
	fx_ev(f, tid, TT_SYS_EXIT, SYS_clock_gettime, 0, 0, 0);
}

/*
 * m sends a request to s (waking it) and waits for the reply in poll,
 * in n slices of 80 ms that time out, then in a last one that s's reply
 * (socket 0x8001) ends 30 ms in. s runs on CPU 1 the whole time; m
 * sleeps after it.
 */
static inline void
fx_poll_slices(struct fx *f, uint32_t m, uint32_t s, unsigned n)
{
	fx_ev(f, s, TT_SYS_ENTER, SYS_read, 9, 0, 0);
	fx_ev(f, s, TT_SWITCH, 1, 0, 120, 0);
	fx_run(f, 0, m);
	fx_ev(f, m, TT_SYS_ENTER, SYS_write, 3, 0, 0);
	fx_ev(f, m, TT_WAKING, s, 0, 120, 0);
	fx_ev(f, m, TT_SYS_EXIT, SYS_write, 8, 0, 0);
	f->cpu = 1;
	fx_run(f, 0, s);
	fx_ev(f, s, TT_SYS_EXIT, SYS_read, 8, 0, 0);
	f->cpu = 0;
	for (unsigned k = 0; k < n; k++)
		fx_slice(f, m, SYS_poll, 0x4000, 80, 0);
	fx_block(f, m, 0, SYS_poll, 0x4000);
	f->ts += 30 * 1000000ULL;
	f->cpu = 1;
	fx_ev(f, s, TT_SYS_ENTER, SYS_write, 9, 0, 0);
	fx_ev(f, s, TT_SK_DATA_READY, 0x8001, 1, 0, 0);
	fx_ev(f, s, TT_WAKING, m, 0, 120, 0);
	fx_ev(f, s, TT_SYS_EXIT, SYS_write, 8, 0, 0);
	fx_block(f, s, 0, SYS_read, 9);
	f->cpu = 0;
	fx_run(f, 0, m);
	fx_ev(f, m, TT_SYS_EXIT, SYS_poll, 1, 0, 0);
	fx_ev(f, m, TT_SOCK_RECV, 0x8001, 1, 0, 10);
	fx_block(f, m, 0, SYS_nanosleep, 0);
	f->ts += 5 * 1000000ULL;
}

/*
 * Write f through the real store in small chunks (1 KiB) into a new
 * directory made from template dir (mkdtemp) and open it: the reader,
 * or NULL when anything failed. fx_unstore() closes it and removes the
 * directory.
 */
static inline struct trace_reader *
fx_store(const struct fx *f, char *dir)
{
	struct trace_writer *w;
	struct trace_reader *r = NULL;
	char *cause = NULL;
	int err = 0;

	if (mkdtemp(dir) == NULL)
		return NULL;
	struct trace_writer_opts o = { .ncpus = 1, .hostname = "t",
	    .release = "t", .boot_id = "t", .chunk_size = 1024 };
	if (trace_writer_open(&w, dir, &o, &cause) != 0) {
		free(cause);
		return NULL;
	}
	for (size_t i = 0; i < f->nth && err == 0; i++)
		err = trace_writer_thread(w, f->ev[0].ts, &f->th[i]);
	for (size_t i = 0; i < f->n && err == 0; i++)
		err = trace_writer_add(w, &f->ev[i]);
	if (trace_writer_close(w) != 0 || err != 0)
		return NULL;
	if (trace_reader_open(&r, dir, &cause) != 0) {
		free(cause);
		return NULL;
	}
	return r;
}

/* Close r and remove the directory fx_store() made; 0 on success. */
static inline int
fx_unstore(struct trace_reader *r, const char *dir)
{
	char cmd[128];

	trace_reader_close(r);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

static inline struct graph *
fx_build(struct fx *f, const struct rules *rs)
{
	struct graph *g = NULL;
	char *cause = NULL;

	if (graph_build_events(f->ev, f->n, f->th, f->nth, rs, &g,
	    &cause) != 0) {
		free(cause);
		return NULL;
	}
	return g;
}

/* Number of edges of a kind into v. */
static inline unsigned
fx_in_kind(const struct graph *g, uint32_t v, unsigned kind)
{
	size_t n;
	unsigned c = 0;
	const uint32_t *in = graph_in_edges(g, v, &n);

	for (size_t i = 0; i < n; i++)
		if (graph_edge(g, in[i])->kind == kind)
			c++;
	return c;
}

static inline unsigned
fx_out_kind(const struct graph *g, uint32_t v, unsigned kind)
{
	size_t n;
	unsigned c = 0;
	const uint32_t *out = graph_out_edges(g, v, &n);

	for (size_t i = 0; i < n; i++)
		if (graph_edge(g, out[i])->kind == kind)
			c++;
	return c;
}

/* The source vertex of the first in-edge of kind into v, or GRAPH_NONE. */
static inline uint32_t
fx_in_src(const struct graph *g, uint32_t v, unsigned kind)
{
	size_t n;
	const uint32_t *in = graph_in_edges(g, v, &n);

	for (size_t i = 0; i < n; i++)
		if (graph_edge(g, in[i])->kind == kind)
			return graph_edge(g, in[i])->src;
	return GRAPH_NONE;
}

static inline size_t
fx_nvtx(const struct graph *g, uint32_t tid)
{
	size_t n;

	graph_thread_vertices(g, graph_thread_find(g, tid), &n);
	return n;
}


/* Whether thread tid is among the culprits of hang h of d, of kind
   (enum diag_kind), or of any with kind -1. */
static inline int
fx_culprit(const struct diag *d, size_t h, uint32_t tid, int kind)
{
	for (size_t i = 0; i < diag_nculprits(d, h); i++) {
		const struct diag_culprit *c = diag_culprit(d, h, i);
		if (c->th.tid == tid && (kind < 0 || (int)c->kind == kind))
			return 1;
	}
	return 0;
}

#endif
