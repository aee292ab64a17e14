/*
 * diag-stacks.c: the stacks of one hang, the last stage of its analysis
 * (diag-analyze.c). h->stk gets, in this order:
 *   - the hung thread's own: the stacks recorded during the hang and the
 *     one its wait left when its call returned (TSK_WAIT, taken after
 *     the hang's end and before the thread waits again), and for a hang
 *     that ran, the most frequent of its samples (TSK_SAMPLE), and the
 *     most frequent kernel stack of the samples there that found it in
 *     the kernel (TSK_KSAMPLE);
 *   - its waker's (TSK_WAKER), taken at the wake-up that ended the wait:
 *     on the waker of the critical path's first step, a few µs after
 *     the wait's end; then the kernel stack the hung thread slept on
 *     (TSK_KWAIT, taken at that wake-up);
 *   - for each culprit, where it waited (the TSK_WAIT its wait left, or
 *     for a wait in timed slices the last one its run of slices left) or,
 *     busy, where it ran (its most frequent sample and, under it, its
 *     kernel stack as for the hung thread, else where it was
 *     last seen in user code, else none when it ran too little for a
 *     sample: a stack of no frame saying so), then the waker's
 *     at the end of its wait when the critical path holds it, and the
 *     kernel stack it slept on.
 * Then every frame is named from the recorded mappings of the stack's
 * process and the symbol tables of the files they map; h->syms owns the
 * names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag-local.h"
#include "common/common.h"
#include "common/elfaddr.h"

/* A waker's stack is taken just after its TT_WAKING: this close to the
   wait's end, either side (the end is the wake-up's time). */
#define WAKER_NEAR_NS 2000000ULL

/* A thread that ran less than this in all may have no sample (two
   periods of the sampler at the default threshold). */
#define SAMPLE_LEAST_NS 20000000ULL

/* Stacks kept for the hung thread's own span at most. */
#define OWN_MAX 16

const char *
diag_stack_role_name(int role)
{
	switch (role) {
	case DIAG_STACK_HANG: return "hang";
	case DIAG_STACK_WAKER: return "waker";
	case DIAG_STACK_CULPRIT: return "culprit";
	case DIAG_STACK_CULPRIT_WAKER: return "culprit_waker";
	}
	return "?";
}

const char *
diag_stack_kind_name(int kind)
{
	switch (kind) {
	case TSK_WAIT: return "wait";
	case TSK_WAKER: return "waker";
	case TSK_SAMPLE: return "sample";
	case TSK_KWAIT: return "kernel";
	case TSK_KSAMPLE: return "ksample";
	}
	return "user";
}

/* Push stack event e of thread ti into h->stk with its role. */
static struct diag_stack *
push_stack(struct diag *d, struct dhang *h, uint32_t ti,
    const struct graph_event *e, int role, size_t culprit)
{
	struct diag_stack s = { .ts = e->ts, .role = role,
	    .culprit = culprit, .kind = e->sub };

	s.frames = graph_stack(d->g, e, &s.nframes);
	s.cut = s.nframes >= TRACE_STACK_MAX;
	diag_thread_fill(d->g, ti, &s.th);
	DPUSH(h->stk, s);
	return &h->stk.v[h->stk.n - 1];
}

static const struct elfaddr *
elf_of(struct diag *d, const char *path)
{
	for (size_t i = 0; i < d->elfs.n; i++)
		if (d->elfs.v[i].path == path)
			return d->elfs.v[i].e;
	struct delf x = { .path = path };
	if (elfaddr_open(path, &x.e) != 0)
		x.e = NULL;
	DPUSH(d->elfs, x);
	return x.e;
}

/* The user address a of process pid at ts: the file its recorded mapping
   holds (interned: one pointer per path) and the offset in it, and the
   function of that file holding it with *delta into it and *fp as
   elfaddr_at_offset() says; the function or NULL, *path NULL when no
   mapping holds a. */
static const char *
resolve(struct diag *d, uint32_t pid, uint64_t ts, uint64_t a,
    const char **path, uint64_t *off, uint64_t *delta, int *fp)
{
	const struct elfaddr *e;

	*fp = -1;
	*path = graph_map_at(d->g, pid, a, ts, off);
	e = *path ? elf_of(d, *path) : NULL;
	return e ? elfaddr_at_offset(e, *off, delta, fp) : NULL;
}

/* Where frame a of process pid at ts is, for grouping samples: its function
   (the start of it) when a symbol names it, else a itself when a
   recorded mapping holds it, else 0 (a frame the unwinder made up). */
static uint64_t
frame_key(struct diag *d, uint32_t pid, uint64_t ts, uint64_t a)
{
	uint64_t off, delta;
	const char *path;
	int fp;

	if (a == 0)
		return 0;
	if (resolve(d, pid, ts, a - 1, &path, &off, &delta, &fp) != NULL)
		return ((uint64_t)(uintptr_t)path * 0x9e3779b97f4a7c15ULL) ^
		    (off - delta);
	return path != NULL ? a : 0;
}

/* The kernel stack (TSK_KWAIT) of the wait of thread ti blocked at
   switch event sw, taken at its wake-up, or NULL. */
static const struct graph_event *
kernel_stack_of(const struct graph *g, uint32_t ti, uint32_t sw)
{
	const struct gthread *t = &g->th[ti];

	if (sw == GRAPH_NONE)
		return NULL;
	for (uint32_t i = sw + 1; i < t->nev &&
	    i <= sw + GRAPH_WAIT_STACK_SCAN; i++) {
		const struct graph_event *e = &t->ev[i];

		if (e->type == TT_STACK && e->sub == TSK_KWAIT)
			return e;
		if (e->type == TT_SYS_EXIT || e->type == TT_SWITCH)
			break;	/* it ran again: taken before, if at all */
	}
	return NULL;
}

/* The last stack of kind kind (TSK_WAIT, TSK_WAKER, TSK_KWAIT) of thread ti in
   [a, b], or NULL: a wait in timed slices leaves one when the run of
   slices has lasted long, not at each slice's end. */
static const struct graph_event *
last_stack(const struct graph *g, uint32_t ti, int kind, uint64_t a,
    uint64_t b)
{
	const struct gthread *t = &g->th[ti];
	const struct graph_event *last = NULL;

	for (uint32_t i = diag_event_at(g, ti, a); i < t->nev &&
	    t->ev[i].ts <= b; i++)
		if (t->ev[i].type == TT_STACK && t->ev[i].sub == kind)
			last = &t->ev[i];
	return last;
}

/* The place of a sample of process pid at ts with frames f[nf], for grouping:
   the same functions, the same place, wherever in them the sample hit;
   up to a frame the unwinder made up (code without frame pointers).
   keys caches each frame's frame_key() + 1. */
static uint64_t
sample_place(struct diag *d, uint32_t pid, uint64_t ts, struct hmap *keys,
    const uint64_t *f, size_t nf)
{
	uint64_t k[TRACE_STACK_MAX], h;
	size_t nk = 0;

	while (nk < nf && nk < TRACE_STACK_MAX) {
		int added;
		uint64_t *kv = hmap_put(keys, f[nk], 0, &added);
		if (added)
			*kv = frame_key(d, pid, ts, f[nk]) + 1;
		if ((h = *kv - 1) == 0)
			break;
		k[nk++] = h;
	}
	return nk ? fnv64(k, nk * sizeof(*k)) : f[0];
}

/* The place of the kernel stack f[nf] of a sample (TSK_KSAMPLE): its
   kernel functions (the innermost frame is where the code was, the
   others return addresses), an address no TT_KSYM names standing for
   itself. */
static uint64_t
kernel_place(const struct graph *g, uint32_t tid, const uint64_t *f, size_t nf)
{
	uint64_t k[TRACE_STACK_MAX], delta;
	size_t n = nf < TRACE_STACK_MAX ? nf : TRACE_STACK_MAX;

	for (size_t i = 0; i < n; i++) {
		uint64_t a = f[i] - (i > 0 && f[i] != 0);
		k[i] = graph_ksym_at(g, tid, a, &delta) != NULL ? a - delta :
		    f[i];
	}
	return fnv64(k, n * sizeof(*k));
}

/* The kernel stack (TSK_KSAMPLE) taken with sample event i of thread ti
   (next to it, at its time), or NULL: the sample found it in user
   code. */
static const struct graph_event *
ksample_of(const struct graph *g, uint32_t ti, uint32_t i)
{
	const struct gthread *t = &g->th[ti];

	for (uint32_t k = i + 1; k < t->nev && t->ev[k].ts == t->ev[i].ts;
	    k++)
		if (t->ev[k].type == TT_STACK)
			return t->ev[k].sub == TSK_KSAMPLE ? &t->ev[k] : NULL;
	for (uint32_t k = i; k-- > 0 && t->ev[k].ts == t->ev[i].ts;)
		if (t->ev[k].type == TT_STACK)
			return t->ev[k].sub == TSK_KSAMPLE ? &t->ev[k] : NULL;
	return NULL;
}

/* The most frequent place of the samples (TSK_SAMPLE) of thread ti in
   [a, b], by the functions of their frames, as one of them, or NULL;
   *count and *of get its samples and all of them. *kst gets the most
   frequent kernel stack (TSK_KSAMPLE) of the samples at that place, by
   its functions, or NULL when none found it in the kernel, and *kcount
   its samples. */
static const struct graph_event *
busy_sample(struct diag *d, uint32_t ti, uint64_t a, uint64_t b,
    unsigned *count, unsigned *of, const struct graph_event **kst,
    unsigned *kcount)
{
	const struct graph *g = d->g;
	const struct gthread *t = &g->th[ti];
	uint32_t pid = g->th[ti].pid;
	const struct graph_event *best = NULL;
	struct hmap seen, keys;	/* place -> count; frame -> its key + 1 */
	uint64_t *c, place = 0;
	uint32_t first = diag_event_at(g, ti, a);
	unsigned n = 0, top = 0, ktop = 0;

	*kst = NULL;
	hmap_init(&seen);
	hmap_init(&keys);
	for (uint32_t i = first; i < t->nev && t->ev[i].ts <= b; i++) {
		const struct graph_event *e = &t->ev[i];
		const uint64_t *f;
		size_t nf;

		if (e->type != TT_STACK || e->sub != TSK_SAMPLE)
			continue;
		f = graph_stack(g, e, &nf);
		if (nf == 0)
			continue;
		n++;
		uint64_t h = sample_place(d, pid, e->ts, &keys, f, nf);
		c = hmap_put(&seen, h, 0, NULL);
		if (++*c > top) {
			top = (unsigned)*c;
			best = e;
			place = h;
		}
	}
	/* where in the kernel the samples of that place were */
	hmap_free(&seen);
	hmap_init(&seen);
	for (uint32_t i = first; best != NULL && i < t->nev &&
	    t->ev[i].ts <= b; i++) {
		const struct graph_event *e = &t->ev[i], *k;
		const uint64_t *f;
		size_t nf;

		if (e->type != TT_STACK || e->sub != TSK_SAMPLE ||
		    (k = ksample_of(g, ti, i)) == NULL)
			continue;
		f = graph_stack(g, e, &nf);
		if (nf == 0 || sample_place(d, pid, e->ts, &keys, f, nf) != place)
			continue;
		f = graph_stack(g, k, &nf);
		if (nf == 0)
			continue;
		c = hmap_put(&seen, kernel_place(g, pid, f, nf), 0, NULL);
		if (++*c > ktop) {
			ktop = (unsigned)*c;
			*kst = k;
		}
	}
	hmap_free(&seen);
	hmap_free(&keys);
	*count = top;
	*of = n;
	*kcount = ktop;
	return best;
}

/* The stack the waker of thread ti's wait, blocked from start and
   running again at end, took at the wake-up that ended it: the last
   TSK_WAKER of thread wt in [start, end + WAKER_NEAR_NS] that woke ti
   (the wake-up comes before ti runs again, by as long as ti waited for
   a CPU); one that does not say whom it woke, if none does. */
static const struct graph_event *
waker_stack_of(const struct graph *g, uint32_t wt, uint32_t ti,
    uint64_t start, uint64_t end)
{
	const struct gthread *t = &g->th[wt];
	const struct graph_event *best = NULL, *any = NULL;

	for (uint32_t i = diag_event_at(g, wt, start); i < t->nev &&
	    t->ev[i].ts <= end + WAKER_NEAR_NS; i++) {
		const struct graph_event *e = &t->ev[i];

		if (e->type != TT_STACK || e->sub != TSK_WAKER)
			continue;
		uint32_t about = graph_stack_about(e);
		if (about == ti)
			best = e;
		else if (about == GRAPH_NONE)
			any = e;
	}
	return best != NULL ? best : any;
}

/* The time thread ti was on a CPU in [a, b]: from an event of its own
   (its switch in, anything it did) to its next switch out. */
static uint64_t
on_cpu_ns(const struct graph *g, uint32_t ti, uint64_t a, uint64_t b)
{
	const struct gthread *t = &g->th[ti];
	uint64_t sum = 0, on = 0, last = a;
	int running = 0;

	for (uint32_t i = diag_event_at(g, ti, a); i < t->nev &&
	    t->ev[i].ts <= b; i++) {
		const struct graph_event *e = &t->ev[i];

		last = e->ts;
		if (e->type == TT_SWITCH) {
			if (running)
				sum += e->ts - on;
			running = 0;
		} else if (!running && !(e->flags & GRAPH_EVF_CTX)) {
			running = 1;
			on = e->ts;
		}
	}
	return running ? sum + (last - on) : sum;
}

/* Where thread ti ran in [a, b]: its most frequent sample, as role;
   without one (runnable more than running: a loaded CPU), where it was
   last seen in user code there: the stack of its last wake-up of a
   thread, or of its last long wait's end; without any, when it ran too
   little for a sample, a stack of no frame that says so. */
static void
push_busy(struct diag *d, struct dhang *h, uint32_t ti, uint64_t a,
    uint64_t b, int role, size_t culprit)
{
	unsigned count, of, kcount;
	const struct graph_event *k, *e = busy_sample(d, ti, a, b, &count,
	    &of, &k, &kcount);

	if (e != NULL) {
		struct diag_stack *s = push_stack(d, h, ti, e, role, culprit);

		s->samples = count;
		s->of = of;
		if (k != NULL) {
			/* where in the kernel, for a place of system calls */
			s = push_stack(d, h, ti, k, role, culprit);
			s->samples = kcount;
			s->of = count;
		}
		return;
	}
	if ((e = last_stack(d->g, ti, TSK_WAKER, a, b)) == NULL)
		e = last_stack(d->g, ti, TSK_WAIT, a, b);
	if (e != NULL) {
		push_stack(d, h, ti, e, role, culprit);
		return;
	}
	uint64_t ran = on_cpu_ns(d->g, ti, a, b);
	if (ran < SAMPLE_LEAST_NS) {
		struct diag_stack s = { .ts = a, .role = role,
		    .culprit = culprit, .kind = TSK_SAMPLE, .ran_ns = ran };
		diag_thread_fill(d->g, ti, &s.th);
		DPUSH(h->stk, s);
	}
}

/* The waker's stack at the end of the wait of the critical path's step
   of thread ti, if the path holds one, as role. */
static void
push_waker(struct diag *d, struct dhang *h, uint32_t ti, int role,
    size_t culprit)
{
	for (size_t k = 0; k < h->cp.n; k++) {
		const struct diag_cstep *c = &h->cp.v[k];

		if (c->th.thread != ti || c->waker.tid == 0)
			continue;
		const struct graph_event *e = waker_stack_of(d->g,
		    c->waker.thread, ti, c->wait_start, c->wait_end);
		if (e != NULL)
			push_stack(d, h, c->waker.thread, e, role, culprit);
		return;
	}
}

/* The hung thread's own stacks: its most frequent sample when it ran,
   the instrumentation library's during the hang, and the one its wait
   left after its end, before the thread waits again. */
static void
own_stacks(struct diag *d, struct dhang *h)
{
	const struct graph *g = d->g;
	uint32_t ti = h->pub.th.thread;
	const struct gthread *t = &g->th[ti];
	size_t n0 = h->stk.n;
	int has_wait = 0;

	/* where it ran first: the text shows the first few */
	if (h->pub.kind != DIAG_BLOCKED)
		push_busy(d, h, ti, h->pub.start_ns, h->pub.end_ns,
		    DIAG_STACK_HANG, 0);
	for (uint32_t i = diag_event_at(g, ti, h->pub.start_ns); i < t->nev &&
	    h->stk.n - n0 < OWN_MAX; i++) {
		const struct graph_event *e = &t->ev[i];
		if (e->ts > h->pub.end_ns && (e->type == TT_SWITCH ||
		    (e->type == TT_STACK && e->sub != TSK_WAIT &&
		    e->sub != TSK_WAKER && e->sub != TSK_SAMPLE &&
		    e->sub != TSK_KWAIT && e->sub != TSK_KSAMPLE)))
			break;
		if (e->type != TT_STACK || e->sub == TSK_WAKER ||
		    e->sub == TSK_SAMPLE || e->sub == TSK_KWAIT ||
		    e->sub == TSK_KSAMPLE)
			continue;	/* the kernel's: after the waker's */
		push_stack(d, h, ti, e, DIAG_STACK_HANG, 0);
		has_wait |= e->sub == TSK_WAIT;
		if (e->ts > h->pub.end_ns)
			break;
	}
	/* preempted between its wake-up and its return: the stack its
	   wait left, all the same */
	if (h->pub.kind == DIAG_BLOCKED && !has_wait) {
		const struct graph_event *e = h->pub.wait.wait_ev ==
		    GRAPH_NONE ? NULL : graph_wait_stack(g, ti,
		    h->pub.wait.wait_ev);
		if (e != NULL)
			push_stack(d, h, ti, e, DIAG_STACK_HANG, 0);
	}
}

/* Frame a of process pid at ts: its name (allocated), or NULL; *fp as
   elfaddr_at_offset() says it (-1 when no function names it). exact: a
   is where the code was (a stack's innermost frame), not a return
   address, which is after its call: for those the byte before is
   looked up. */
static char *
frame_name(struct diag *d, uint32_t pid, uint64_t ts, uint64_t a, int exact,
    int *fp)
{
	uint64_t off, delta, back = exact ? 0 : 1;

	*fp = -1;
	if (a < back)
		return NULL;
	if (a >= TRACE_KERNEL_ADDR) {
		/* the kernel's: named by the trace's TT_KSYM records */
		const char *kf = graph_ksym_at(d->g, pid, a - back, &delta);
		return kf != NULL ? xasprintf("%s+0x%llx", kf,
		    (unsigned long long)(delta + back)) : NULL;
	}
	const char *path;
	const char *fn = a == 0 ? NULL : resolve(d, pid, ts, a - back, &path,
	    &off, &delta, fp);

	if (fn != NULL)
		return xasprintf("%s+0x%llx", fn,
		    (unsigned long long)(delta + back));
	*fp = -1;
	if (a != 0 && path != NULL) {
		/* no symbol: the file and the offset in it, never a bare
		   address */
		const char *base = strrchr(path, '/');
		return xasprintf("%s+0x%llx", base ? base + 1 : path,
		    (unsigned long long)(off + back));
	}
	return NULL;
}

int
diag_frame_text(struct diag *d, uint32_t pid, uint64_t ts, uint64_t addr,
    char *buf, size_t len)
{
	int fp;
	char *s = frame_name(d, pid, ts, addr, 0, &fp);

	if (s == NULL) {
		snprintf(buf, len, "0x%llx", (unsigned long long)addr);
		return 0;
	}
	snprintf(buf, len, "%s", s);
	free(s);
	return 1;
}

static void
symbolize(struct diag *d, struct dhang *h)
{
	for (size_t k = 0; k < h->stk.n; k++) {
		struct diag_stack *s = &h->stk.v[k];
		char **sym = xcalloc(s->nframes ? s->nframes : 1,
		    sizeof(*sym));
		int any = 0;
		size_t last = 0;	/* the outermost frame named + 1 */
		for (size_t i = 0; i < s->nframes; i++) {
			int fp;
			/* a sample's innermost frame is where the code
			   was; the others, and the innermost of a stack
			   taken in a call, come after a call */
			sym[i] = frame_name(d, s->th.pid, s->ts, s->frames[i],
			    i == 0 && (s->kind == TSK_SAMPLE ||
			    s->kind == TSK_KSAMPLE), &fp);
			if (sym[i] != NULL) {
				any = 1;
				last = i + 1;
			}
			/* its caller is not in the chain of frame pointers
			   (or, the outermost, the chain stopped there) */
			if (fp == 0 && s->nofp == NULL) {
				s->nofp = sym[i];
				s->nofp_at = i;
			}
		}
		/* the kernel's unwinder does not need frame pointers */
		s->stopped = !s->cut && s->kind != TSK_KWAIT &&
		    s->kind != TSK_KSAMPLE &&
		    s->nframes > 0 && (s->nframes == 1 ||
		    sym[s->nframes - 1] == NULL);
		/* the outermost named frame ends a complete chain unless
		   the unwinding stopped: keeping no frame pointer there
		   then says why */
		if (s->nofp != NULL && s->nofp_at + 1 == last && !s->stopped)
			s->nofp = NULL;
		if (!any) {
			free(sym);
			continue;
		}
		struct dsyms ds = { .v = sym, .n = s->nframes };
		DPUSH(h->syms, ds);
		s->symbols = (const char *const *)sym;
	}
}

void
diag_stacks(struct diag *d, struct dhang *h)
{
	own_stacks(d, h);
	if (h->pub.kind == DIAG_BLOCKED) {
		push_waker(d, h, h->pub.th.thread, DIAG_STACK_WAKER, 0);
		/* where it slept in the kernel, taken at its wake-up */
		const struct graph_event *e = last_stack(d->g,
		    h->pub.th.thread, TSK_KWAIT, h->pub.start_ns,
		    h->pub.end_ns + WAKER_NEAR_NS);
		if (e != NULL)
			push_stack(d, h, h->pub.th.thread, e, DIAG_STACK_HANG,
			    0);
	}
	for (size_t i = 0; i < h->cul.n; i++) {
		const struct diag_culprit *c = &h->cul.v[i];
		uint32_t ct = c->th.thread;

		if (c->repeat || diag_cul_first(h, i) != i)
			continue;	/* named before */
		if (c->kind == DIAG_BLOCKED) {
			const struct graph_event *e = c->wait.wait_ev ==
			    GRAPH_NONE ? NULL : graph_wait_stack(d->g, ct,
			    c->wait.wait_ev);
			if (e == NULL)
				e = last_stack(d->g, ct, TSK_WAIT, c->start_ns,
				    c->end_ns + WAKER_NEAR_NS);
			if (e != NULL)
				push_stack(d, h, ct, e, DIAG_STACK_CULPRIT, i);
			push_waker(d, h, ct, DIAG_STACK_CULPRIT_WAKER, i);
			e = kernel_stack_of(d->g, ct, c->wait.wait_ev);
			if (e != NULL)
				push_stack(d, h, ct, e, DIAG_STACK_CULPRIT, i);
		} else {
			push_busy(d, h, ct, c->start_ns, c->end_ns,
			    DIAG_STACK_CULPRIT, i);
		}
	}
	symbolize(d, h);
}

void
diag_free_symbols(struct dhang *h)
{
	for (size_t k = 0; k < h->stk.n; k++)
		h->stk.v[k].symbols = NULL;
	for (size_t k = 0; k < h->syms.n; k++) {
		for (size_t i = 0; i < h->syms.v[k].n; i++)
			free(h->syms.v[k].v[i]);
		free(h->syms.v[k].v);
	}
	h->syms.n = 0;
}
