/*
 * export.c: a trace as Trace Event Format JSON (the JSON trace format
 * that Perfetto UI and the browsers' tracing pages open), written as it
 * is read.
 *
 * One pass over the events of the window keeps a small state per thread
 * (struct xthr: what it is doing since when, its open system call, the
 * name of its wait) and per file descriptor (what TT_FD said it is), so
 * memory grows with the threads and descriptors, not with the events.
 * Each thread gets one track (pid, tid) where consecutive complete
 * slices ("X") say what it did: "running", the wait named with its
 * resource, "runnable". A wake-up from a task becomes a flow arrow (an
 * "s" on the waker's running slice, an "f" binding the wakee's next
 * slice, written together, so no end is ever without its start). Slices
 * still open at the end of the window are closed there. Track names come
 * as metadata ("M") events the first time a thread appears.
 *
 * With a diagnosis, the graph adds what the pass cannot see: flows for
 * messages (socket, pipe, request and reply edges), each hang and each
 * culprit as an async slice ("b"/"e") with its details as arguments, and
 * a flow from every culprit to the thread it held up. Times are
 * microseconds after base_ns, with nanosecond decimals.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine-local.h"

enum { XS_NONE = 0, XS_RUN, XS_WAIT, XS_READY };

struct xthr {
	uint32_t tid, pid;
	uint8_t state;
	uint8_t in_sys;		/* between sys_enter and sys_exit */
	uint8_t named;		/* metadata written */
	uint8_t wanted;		/* passes the pid filter */
	uint64_t since;		/* start of the current state */
	uint64_t last_end;	/* end of the last slice written */
	uint64_t sys_nr, sys_a0;
	char what[64];		/* name of the current wait or ready state */
};

struct xout {
	FILE *f;
	int nev;		/* events written */
	uint64_t base;
	uint64_t flows;		/* flow ids used */
	const struct export_opts *o;
	struct trace_reader *r;
	struct xthr *th;
	size_t nth, cap;
	struct hmap tids;	/* tid -> index in th */
	struct hmap fds;	/* pid << 32 | fd -> index in fdname */
	char (*fdname)[40];
	size_t nfd, fdcap;
	struct hmap pids_named;	/* pid -> 1: process_name written */
};

#define MAX_FDS (1u << 20)	/* descriptor names kept at most */

/* --- JSON ---------------------------------------------------------------- */

static void
put_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* Microseconds after base, with three decimals (ns). */
static void
put_us(const struct xout *x, const char *key, uint64_t ns)
{
	uint64_t d = ns > x->base ? ns - x->base : 0;

	fprintf(x->f, ",\"%s\":%" PRIu64 ".%03u", key, d / 1000,
	    (unsigned)(d % 1000));
}

/* Start an event object: separator, ph, pid, tid. */
static void
ev_begin(struct xout *x, const char *ph, uint32_t pid, uint32_t tid)
{
	fprintf(x->f, "%s{\"ph\":\"%s\",\"pid\":%u,\"tid\":%u",
	    x->nev++ ? ",\n" : "", ph, pid, tid);
}

/* --- threads ------------------------------------------------------------- */

static int
pid_wanted(const struct export_opts *o, uint32_t pid)
{
	if (o->npids == 0)
		return 1;
	for (size_t i = 0; i < o->npids; i++)
		if (o->pids[i] == pid)
			return 1;
	return 0;
}

static void
name_thread(struct xout *x, struct xthr *t)
{
	const struct trace_thread *tt = trace_reader_thread(x->r, t->tid);
	int added;

	/* several hosts: "host:comm", and the tid its host knows */
	const char *host = trace_reader_nhosts(x->r) > 1 ?
	    trace_reader_host_name(x->r, trace_tid_host(t->tid)) : NULL;
	char name[TRACE_COMM_LEN + 96];

	t->named = 1;
	hmap_put(&x->pids_named, t->pid, 1, &added);
	if (added) {
		const struct trace_thread *p = trace_reader_thread(x->r, t->pid);

		ev_begin(x, "M", t->pid, t->pid);
		fputs(",\"name\":\"process_name\",\"args\":{\"name\":", x->f);
		snprintf(name, sizeof(name), "%s%s%s", host ? host : "",
		    host ? ":" : "", p ? p->comm : tt ? tt->comm : "?");
		put_str(x->f, name);
		fputs("}}", x->f);
	}
	snprintf(name, sizeof(name), "%s%s%s (%u)", host ? host : "",
	    host ? ":" : "", tt ? tt->comm : "?", trace_tid_local(t->tid));
	ev_begin(x, "M", t->pid, t->tid);
	fputs(",\"name\":\"thread_name\",\"args\":{\"name\":", x->f);
	put_str(x->f, name);
	fputs("}}", x->f);
}

/* The state of thread tid (created on first sight), or NULL for idle. */
static struct xthr *
thr(struct xout *x, uint32_t tid)
{
	uint64_t *v;
	int added;

	if (tid == 0)
		return NULL;
	v = hmap_put(&x->tids, tid, x->nth, &added);
	if (added) {
		const struct trace_thread *tt = trace_reader_thread(x->r, tid);

		DGROW(x->th, x->cap, x->nth + 1, 256);
		memset(&x->th[x->nth], 0, sizeof(x->th[0]));
		x->th[x->nth].tid = tid;
		x->th[x->nth].pid = tt && tt->pid ? tt->pid : tid;
		x->th[x->nth].wanted = pid_wanted(x->o, x->th[x->nth].pid);
		x->nth++;
	}
	return &x->th[*v];
}

/* Close the thread's current slice at ts (written when it has a length). */
static void
close_slice(struct xout *x, struct xthr *t, uint64_t ts)
{
	const char *name, *cat;
	uint64_t start = t->since > t->last_end ? t->since : t->last_end;

	/*
	 * Slices of a track never overlap: after lost events or a guess
	 * (a thread first seen), a slice starts where the last one ended.
	 */
	if (t->state == XS_NONE || !t->wanted || ts < start) {
		t->state = XS_NONE;
		return;
	}
	if (!t->named)
		name_thread(x, t);
	switch (t->state) {
	case XS_RUN:
		name = "running";
		cat = "run";
		break;
	case XS_WAIT:
		name = t->what;
		cat = "wait";
		break;
	default:
		name = t->what[0] ? t->what : "runnable";
		cat = "runnable";
		break;
	}
	ev_begin(x, "X", t->pid, t->tid);
	fputs(",\"name\":", x->f);
	put_str(x->f, name);
	fprintf(x->f, ",\"cat\":\"%s\"", cat);
	put_us(x, "ts", start);
	fprintf(x->f, ",\"dur\":%" PRIu64 ".%03u}", (ts - start) / 1000,
	    (unsigned)((ts - start) % 1000));
	t->state = XS_NONE;
	t->last_end = ts;
}

static void
set_state(struct xout *x, struct xthr *t, int state, uint64_t ts)
{
	close_slice(x, t, ts);
	t->state = (uint8_t)state;
	t->since = ts;
}

/* Name of what a thread leaving the CPU waits for. */
static void
wait_name(struct xout *x, struct xthr *t, uint64_t prev_state)
{
	const char *sc;
	uint64_t *fi;

	if (!t->in_sys) {
		snprintf(t->what, sizeof(t->what), "%s",
		    (prev_state & 2) ? "wait (uninterruptible)" : "wait");
		return;
	}
	sc = trace_syscall_name((unsigned long)t->sys_nr);
	if (sc == NULL)
		sc = "syscall";
	if (strcmp(sc, "futex") == 0) {
		snprintf(t->what, sizeof(t->what), "futex 0x%" PRIx64,
		    t->sys_a0);
		return;
	}
	if (strstr(sc, "sleep")) {
		snprintf(t->what, sizeof(t->what), "sleep (%s)", sc);
		return;
	}
	if (trace_syscall_fd_arg((unsigned long)t->sys_nr)) {
		fi = hmap_get(&x->fds, pack2(t->pid, (uint32_t)t->sys_a0));
		if (fi)
			snprintf(t->what, sizeof(t->what), "%s %s", sc,
			    x->fdname[*fi]);
		else
			snprintf(t->what, sizeof(t->what), "%s fd %d", sc,
			    (int)t->sys_a0);
		return;
	}
	snprintf(t->what, sizeof(t->what), "%s", sc);
}

static void
note_fd(struct xout *x, const struct trace_event *ev)
{
	uint64_t *v;
	int added;
	const char *kind = trace_fd_kind_name((unsigned)ev->arg[2]);

	if (x->nfd >= MAX_FDS)
		return;
	v = hmap_put(&x->fds, pack2((uint32_t)ev->arg[0], (uint32_t)ev->arg[1]),
	    x->nfd, &added);
	if (added) {
		DGROW(x->fdname, x->fdcap, x->nfd + 1, 1024);
		x->nfd++;
	}
	if (ev->arg[3])
		snprintf(x->fdname[*v], sizeof(x->fdname[0]), "%s:%" PRIu64,
		    kind ? kind : "fd", ev->arg[3]);
	else
		snprintf(x->fdname[*v], sizeof(x->fdname[0]), "%s%s%.24s",
		    kind ? kind : "fd", ev->blob_len ? " " : "",
		    ev->blob_len ? (const char *)ev->blob : "");
}

/* A flow arrow from (fpid, ftid) at t0 to (tpid, ttid) at t1. */
static void
flow(struct xout *x, const char *cat, const char *name, uint32_t fpid,
    uint32_t ftid, uint64_t t0, uint32_t tpid, uint32_t ttid, uint64_t t1)
{
	uint64_t id = ++x->flows;

	if (t1 < t0)
		t1 = t0;
	ev_begin(x, "s", fpid, ftid);
	fprintf(x->f, ",\"cat\":\"%s\",\"name\":", cat);
	put_str(x->f, name);
	fprintf(x->f, ",\"id\":%" PRIu64, id);
	put_us(x, "ts", t0);
	fputc('}', x->f);
	ev_begin(x, "f", tpid, ttid);
	fprintf(x->f, ",\"cat\":\"%s\",\"name\":", cat);
	put_str(x->f, name);
	fprintf(x->f, ",\"id\":%" PRIu64, id);
	put_us(x, "ts", t1);
	fputc('}', x->f);
}

/*
 * A thread is on a CPU at ts (it is the event's tid): it runs. First
 * seen, it has run since the CPU's last switch (or the window start).
 */
static void
on_cpu(struct xout *x, struct xthr *t, uint64_t ts, uint64_t since)
{
	if (t->state == XS_RUN)
		return;
	set_state(x, t, XS_RUN, t->state == XS_NONE && since <= ts ? since :
	    ts);
}

static void
stream_event(struct xout *x, const struct trace_event *ev, uint64_t *cpu_sw,
    uint32_t ncpu, uint64_t from)
{
	int task = (ev->flags & TRACE_CTX_MASK) == TRACE_CTX_TASK;
	struct xthr *t, *n;
	uint64_t since = ev->cpu < ncpu && cpu_sw[ev->cpu] ? cpu_sw[ev->cpu] :
	    from;

	switch (ev->type) {
	case TT_FD:
		note_fd(x, ev);
		return;
	case TT_SWITCH:
		if (!task)
			return;
		if (ev->cpu < ncpu)
			cpu_sw[ev->cpu] = ev->ts;
		if ((t = thr(x, ev->tid)) != NULL) {
			if (t->state != XS_RUN)
				set_state(x, t, XS_RUN, since);
			if (ev->arg[0] == 0) {
				set_state(x, t, XS_READY, ev->ts);
				snprintf(t->what, sizeof(t->what),
				    "runnable (preempted)");
			} else {
				close_slice(x, t, ev->ts);
				wait_name(x, t, ev->arg[0]);
				t->state = XS_WAIT;
				t->since = ev->ts;
			}
		}
		if ((n = thr(x, (uint32_t)ev->arg[1])) != NULL)
			set_state(x, n, XS_RUN, ev->ts);
		return;
	case TT_WAKING:
	case TT_WAKEUP_NEW:
		if ((n = thr(x, (uint32_t)ev->arg[0])) == NULL)
			return;
		if (n->state == XS_RUN || n->state == XS_READY)
			return;		/* not waiting: nothing to wake */
		set_state(x, n, XS_READY, ev->ts);
		snprintf(n->what, sizeof(n->what), "runnable (woken)");
		t = task ? thr(x, ev->tid) : NULL;
		if (t == NULL || t == n)
			return;
		on_cpu(x, t, ev->ts, since);
		if (t->wanted && n->wanted) {
			if (!t->named)
				name_thread(x, t);
			if (!n->named)
				name_thread(x, n);
			flow(x, "wakeup", "wakeup", t->pid, t->tid, ev->ts,
			    n->pid, n->tid, ev->ts);
		}
		return;
	case TT_SYS_ENTER:
	case TT_SYS_EXIT:
		if (!task || (t = thr(x, ev->tid)) == NULL)
			return;
		on_cpu(x, t, ev->ts, since);
		t->in_sys = ev->type == TT_SYS_ENTER;
		t->sys_nr = ev->arg[0];
		t->sys_a0 = ev->arg[1];
		return;
	case TT_EXIT:
		if ((t = thr(x, (uint32_t)ev->arg[0])) != NULL)
			close_slice(x, t, ev->ts);
		return;
	default:
		if (task && ev->cpu != TRACE_CPU_META &&
		    (t = thr(x, ev->tid)) != NULL)
			on_cpu(x, t, ev->ts, since);
		return;
	}
}

/* --- the diagnosis --------------------------------------------------------- */

static uint32_t
thread_pid(const struct graph *g, uint32_t thread)
{
	const struct graph_thread *gt = graph_thread(g, thread);

	return gt == NULL ? 0 : gt->pid ? gt->pid : gt->tid;
}

static int
real_thread(const struct graph *g, uint32_t thread)
{
	const struct graph_thread *gt = graph_thread(g, thread);

	return gt && !(gt->flags & GRAPH_THREAD_IRQ) && gt->tid != 0;
}

/* Message flows: socket, pipe, request/reply edges inside the window. */
static void
message_flows(struct xout *x, const struct graph *g, uint64_t from,
    uint64_t to)
{
	for (size_t e = 0; e < graph_nedges(g); e++) {
		const struct graph_edge *ed = graph_edge(g, (uint32_t)e);
		const struct graph_vertex *sv, *dv;
		const struct graph_event *se, *de;
		uint32_t sp, dp;

		if (ed->kind != GE_MSG && ed->kind != GE_PIPE &&
		    ed->kind != GE_REPLY)
			continue;
		sv = graph_vertex(g, ed->src);
		dv = graph_vertex(g, ed->dst);
		if (!sv || !dv || !real_thread(g, sv->thread) ||
		    !real_thread(g, dv->thread) || sv->thread == dv->thread)
			continue;
		se = graph_event(g, sv->thread, ed->src_ev);
		de = graph_event(g, dv->thread, ed->dst_ev);
		if (!se || !de || se->ts < from || de->ts > to)
			continue;
		sp = thread_pid(g, sv->thread);
		dp = thread_pid(g, dv->thread);
		if (!pid_wanted(x->o, sp) || !pid_wanted(x->o, dp))
			continue;
		flow(x, "message", graph_edge_kind_name(ed->kind), sp,
		    graph_thread(g, sv->thread)->tid, se->ts, dp,
		    graph_thread(g, dv->thread)->tid, de->ts);
	}
}

static void
put_wait_args(FILE *f, const struct diag_wait *w)
{
	fputs(",\"wait\":", f);
	put_str(f, w->type ? w->type : "");
	fputs(",\"syscall\":", f);
	put_str(f, w->syscall ? w->syscall : "");
	fputs(",\"resource\":", f);
	put_str(f, w->resource);
	if (w->timed_out)
		fputs(",\"timed_out\":true", f);
}

/* An async slice (b ... e) on the process of a thread. */
static void
async_slice(struct xout *x, const char *cat, const char *name, uint64_t id,
    uint32_t pid, uint32_t tid, uint64_t t0, uint64_t t1, const char *args)
{
	ev_begin(x, "b", pid, tid);
	fprintf(x->f, ",\"cat\":\"%s\",\"name\":", cat);
	put_str(x->f, name);
	fprintf(x->f, ",\"id\":\"%s-%" PRIu64 "\"", cat, id);
	put_us(x, "ts", t0);
	fprintf(x->f, ",\"args\":{%s}}", args);
	ev_begin(x, "e", pid, tid);
	fprintf(x->f, ",\"cat\":\"%s\",\"name\":", cat);
	put_str(x->f, name);
	fprintf(x->f, ",\"id\":\"%s-%" PRIu64 "\"", cat, id);
	put_us(x, "ts", t1 > t0 ? t1 : t0);
	fputc('}', x->f);
}

/* Arguments as JSON members into an allocated string. */
static char *
args_text(void (*fill)(FILE *, const void *), const void *arg)
{
	char *s = NULL;
	size_t n = 0;
	FILE *m = open_memstream(&s, &n);

	if (m == NULL)
		abort();
	fill(m, arg);
	fclose(m);
	return s;
}

/* The frames of a stack as an array of names ("0x..." unresolved). */
static void
put_stack(FILE *f, const char *key, const struct diag_stack *s)
{
	char hex[24];

	fprintf(f, ",\"%s\":[", key);
	for (size_t i = 0; i < s->nframes; i++) {
		const char *name = s->symbols ? s->symbols[i] : NULL;
		if (name == NULL) {
			snprintf(hex, sizeof(hex), "0x%llx",
			    (unsigned long long)s->frames[i]);
			name = hex;
		}
		if (i)
			fputc(',', f);
		put_str(f, name);
	}
	fputc(']', f);
}

/* Of the stacks of hang h, the last with role own as "stack" (for a
   blocked thread where its wait blocked, taken when the call returned;
   for a busy one its most frequent sample) with its kind, and the one
   with role waker as "waker_stack", and the kernel stack where it slept
   (a busy one: where its samples found it in the kernel) as
   "kernel_stack"; for a culprit's roles, those of culprit c. */
static void
put_stacks(FILE *f, const struct diag *d, size_t h, int own, int waker,
    size_t c)
{
	const struct diag_stack *so = NULL, *sw = NULL, *sk = NULL;

	for (size_t i = 0; i < diag_nstacks(d, h); i++) {
		const struct diag_stack *s = diag_stack(d, h, i);

		if (s->nframes == 0 || (own == DIAG_STACK_CULPRIT &&
		    s->culprit != c))
			continue;
		if (s->role == own && (s->kind == TSK_KWAIT ||
		    s->kind == TSK_KSAMPLE))
			sk = s;
		else if (s->role == own)
			so = s;
		else if (s->role == waker && sw == NULL)
			sw = s;
	}
	if (so != NULL) {
		put_stack(f, "stack", so);
		fprintf(f, ",\"stack_kind\":\"%s\"",
		    diag_stack_kind_name(so->kind));
	}
	if (sw != NULL)
		put_stack(f, "waker_stack", sw);
	if (sk != NULL)
		put_stack(f, "kernel_stack", sk);
}

struct hang_arg {
	const struct diag *d;
	size_t h;
};

static void
fill_hang(FILE *f, const void *p)
{
	const struct hang_arg *a = p;
	const struct diag_hang *hg = diag_hang(a->d, a->h);
	const struct diag_cycle *cy = diag_cycle(a->d, a->h);

	fprintf(f, "\"hang\":%zu,\"kind\":\"%s\",\"source\":\"%s\","
	    "\"thread\":", a->h + 1, diag_kind_name(hg->kind),
	    diag_source_name(hg->source));
	put_str(f, hg->th.comm ? hg->th.comm : "");
	fprintf(f, ",\"tid\":%u,\"ms\":%.3f,\"ended\":%s,\"culprits\":%zu",
	    hg->th.tid, (double)(hg->end_ns - hg->start_ns) / 1e6,
	    hg->ended ? "true" : "false", diag_nculprits(a->d, a->h));
	if (hg->kind == DIAG_BLOCKED)
		put_wait_args(f, &hg->wait);
	if (cy) {
		fputs(",\"cycle\":\"", f);
		for (size_t i = 0; i < cy->ntids; i++)
			fprintf(f, "%s%u", i ? " " : "", cy->tids[i]);
		fprintf(f, "\",\"cycle_timeout_ms\":%.3f",
		    (double)cy->timeout_ns / 1e6);
	}
	put_stacks(f, a->d, a->h, DIAG_STACK_HANG, DIAG_STACK_WAKER, 0);
}

struct culprit_arg {
	const struct diag *d;
	size_t h, i;
};

static void
fill_culprit(FILE *f, const void *p)
{
	const struct culprit_arg *a = p;
	const struct diag_culprit *c = diag_culprit(a->d, a->h, a->i);

	fprintf(f, "\"hang\":%zu,\"culprit\":%zu,\"depth\":%u,\"kind\":\"%s\","
	    "\"thread\":", a->h + 1, a->i + 1, c->depth,
	    diag_kind_name(c->kind));
	put_str(f, c->th.comm ? c->th.comm : "");
	fprintf(f, ",\"tid\":%u,\"pid\":%u", c->th.tid, c->th.pid);
	if (c->parent != SIZE_MAX)
		fprintf(f, ",\"explains_culprit\":%zu", c->parent + 1);
	if (c->kind == DIAG_BLOCKED)
		put_wait_args(f, &c->wait);
	if (c->serving.tid) {
		fputs(",\"serving\":", f);
		put_str(f, c->serving.comm ? c->serving.comm : "");
	}
	if (c->repeat)
		fputs(",\"repeat\":true", f);
	put_stacks(f, a->d, a->h, DIAG_STACK_CULPRIT,
	    DIAG_STACK_CULPRIT_WAKER, a->i);
}

static int
overlaps(uint64_t a0, uint64_t a1, uint64_t from, uint64_t to)
{
	return a1 >= from && a0 <= to;
}

static uint64_t
clamp(uint64_t v, uint64_t from, uint64_t to)
{
	return v < from ? from : v > to ? to : v;
}

static void
diagnosis(struct xout *x, const struct diag *d, uint64_t from, uint64_t to)
{
	for (size_t h = 0; h < diag_nhangs(d); h++) {
		const struct diag_hang *hg = diag_hang(d, h);
		struct hang_arg ha = { d, h };
		char name[160], *args;

		if (!overlaps(hg->start_ns, hg->end_ns, from, to) ||
		    !pid_wanted(x->o, hg->th.pid ? hg->th.pid : hg->th.tid))
			continue;
		snprintf(name, sizeof(name), "hang %zu: %s %s%s%s", h + 1,
		    hg->th.comm ? hg->th.comm : "?", diag_kind_name(hg->kind),
		    hg->kind == DIAG_BLOCKED ? " on " : "",
		    hg->kind == DIAG_BLOCKED ? hg->wait.resource : "");
		args = args_text(fill_hang, &ha);
		async_slice(x, "hang", name, h + 1, hg->th.pid ? hg->th.pid :
		    hg->th.tid, hg->th.tid, clamp(hg->start_ns, from, to),
		    clamp(hg->end_ns, from, to), args);
		free(args);
		for (size_t i = 0; i < diag_nculprits(d, h); i++) {
			const struct diag_culprit *c = diag_culprit(d, h, i);
			const struct diag_thread *pt;
			struct culprit_arg ca = { d, h, i };
			uint32_t cpid = c->th.pid ? c->th.pid : c->th.tid, ppid;
			uint64_t at;

			if (!overlaps(c->start_ns, c->end_ns, from, to) ||
			    !pid_wanted(x->o, cpid))
				continue;
			snprintf(name, sizeof(name), "culprit %zu.%zu: %s (%u) "
			    "%s%s%s", h + 1, i + 1, c->th.comm ? c->th.comm :
			    "?", c->th.tid, diag_kind_name(c->kind),
			    c->kind == DIAG_BLOCKED ? " on " : "",
			    c->kind == DIAG_BLOCKED ? c->wait.resource : "");
			args = args_text(fill_culprit, &ca);
			async_slice(x, "culprit", name, (h + 1) * 1000 + i + 1,
			    cpid, c->th.tid, clamp(c->start_ns, from, to),
			    clamp(c->end_ns, from, to), args);
			free(args);
			/* the culprit held up the hung thread, or the culprit
			   it explains */
			pt = c->parent == SIZE_MAX ? &hg->th :
			    &diag_culprit(d, h, c->parent)->th;
			ppid = pt->pid ? pt->pid : pt->tid;
			at = clamp(c->end_ns, from, to);
			if (pt->tid != c->th.tid && pid_wanted(x->o, ppid))
				flow(x, "culprit", "held up", cpid, c->th.tid,
				    at, ppid, pt->tid, at);
		}
	}
}

/* --- entry ------------------------------------------------------------------ */

int
export_chrome(struct trace_reader *r, const struct export_opts *o,
    const struct diag *d, FILE *f, char **cause)
{
	struct xout x = { 0 };
	const struct trace_info *in = trace_reader_info(r);
	uint64_t from = o->from ? o->from : in->first_ts;
	uint64_t to = o->to ? o->to : UINT64_MAX, last = from;
	uint64_t cpu_sw[1024] = { 0 };
	uint32_t ncpu = ARRAY_SIZE(cpu_sw);
	struct trace_event ev;
	int err;

	if (cause)
		*cause = NULL;
	if (to < from) {
		if (cause)
			*cause = xstrdup("the window ends before it begins");
		return GRAPH_ERANGE;
	}
	x.f = f;
	x.o = o;
	x.r = r;
	x.base = o->base_ns ? o->base_ns : in->first_ts;
	hmap_init(&x.tids);
	hmap_init(&x.fds);
	hmap_init(&x.pids_named);
	fputs("{\"traceEvents\":[\n", f);
	if ((err = trace_reader_seek(r, from)) != 0) {
		if (cause)
			*cause = xasprintf("cannot seek the trace: %s",
			    trace_strerror(err));
		goto out;
	}
	while (trace_reader_next(r, &ev)) {
		if (ev.ts > to)
			break;
		if (ev.ts < from && ev.type != TT_FD)
			continue;
		stream_event(&x, &ev, cpu_sw, ncpu, from);
		if (ev.ts > last)
			last = ev.ts;
	}
	if (to == UINT64_MAX)
		to = last;
	for (size_t i = 0; i < x.nth; i++)
		close_slice(&x, &x.th[i], to);
	if (d) {
		message_flows(&x, diag_graph((struct diag *)d), from, to);
		diagnosis(&x, d, from, to);
	}
	if (o->report) {
		ev_begin(&x, "i", 0, 0);
		fputs(",\"s\":\"g\",\"cat\":\"diagnosis\",\"name\":"
		    "\"argus diagnose\"", f);
		put_us(&x, "ts", from);
		fputs(",\"args\":{\"report\":", f);
		put_str(f, o->report);
		fputs("}}", f);
	}
	fprintf(f, "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{"
	    "\"producer\":\"argus %s\",\"base_ns\":%" PRIu64 ",\"host\":",
	    ARGUS_VERSION, x.base);
	put_str(f, in->hostname ? in->hostname : "");
	if (o->report) {
		fputs(",\"report\":", f);
		put_str(f, o->report);
	}
	fputs("}}\n", f);
	if (ferror(f)) {
		err = EIO;
		if (cause)
			*cause = xstrdup("cannot write the output");
	}
out:
	hmap_free(&x.tids);
	hmap_free(&x.fds);
	hmap_free(&x.pids_named);
	free(x.th);
	free(x.fdname);
	return err;
}
