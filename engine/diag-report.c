/*
 * diag-report.c: the text report and the JSON object of a diagnosis
 * (argus-diagnose(1) documents both). Only reads struct diag through the
 * public accessors, like any other front end.
 */
#include <inttypes.h>
#include <string.h>

#include "diag-local.h"

static double
sec(uint64_t ts, uint64_t base)
{
	if (base == UINT64_MAX)
		return (double)ts;
	return (double)(ts >= base ? ts - base : 0) / 1e9;
}

static void
put_time(FILE *f, uint64_t ts, uint64_t base)
{
	if (base == UINT64_MAX)
		fprintf(f, "@%" PRIu64, ts);
	else
		fprintf(f, "%.6f s", sec(ts, base));
}

static void
put_dur(FILE *f, uint64_t ns)
{
	if (ns >= 1000000000ULL)
		fprintf(f, "%.3f s", (double)ns / 1e9);
	else
		fprintf(f, "%.1f ms", (double)ns / 1e6);
}

/* A thread's name: "comm", "host:comm" in a merged trace. */
static void
put_name(FILE *f, const struct diag_thread *t)
{
	if (t->host != NULL)
		fprintf(f, "%s:", t->host);
	fprintf(f, "%s", t->comm);
}

static void
put_thread(FILE *f, const struct diag_thread *t)
{
	uint32_t tid = trace_tid_local(t->tid), pid = trace_tid_local(t->pid);

	put_name(f, t);
	fprintf(f, " (%u", tid);
	if (t->process[0] && strcmp(t->process, t->comm) != 0)
		fprintf(f, ", process %s %u", t->process, pid);
	else if (t->pid != t->tid)
		fprintf(f, ", pid %u", pid);
	fprintf(f, ")");
}

static void
put_wait(FILE *f, const struct diag_wait *w)
{
	fprintf(f, "%s on %s", w->type, w->resource);
	if (w->syscall[0] && strcmp(w->syscall, w->type) != 0)
		fprintf(f, " (%s)", w->syscall);
	if (w->slices > 1)
		fprintf(f, ", in %u timed slices", w->slices);
	if (w->timed_out)
		fprintf(f, ", timed out");
	else if (w->has_result)
		fprintf(f, ", result %" PRId64, w->result);
	if (w->timeout_ns != 0) {
		fprintf(f, ", timeout ");
		put_dur(f, w->timeout_ns);
	}
}

/* One culprit's line, indented by its depth; a thread listed before at
   a lower depth (first, its index) is only referred to. */
static void
put_culprit(FILE *f, const struct diag_culprit *c,
    const struct diag_culprit *first)
{
	unsigned ind = c->depth > 0 ? c->depth - 1 : 0;

	fprintf(f, "    %*s%u. ", (int)(ind < 16 ? 2 * ind : 32), "",
	    c->depth);
	put_thread(f, &c->th);
	if (first != NULL) {
		fprintf(f, ", named above at depth %u%s\n", first->depth,
		    c->repeat ? " (again: a circular wait)" : "");
		return;
	}
	fprintf(f, " %s ", diag_kind_name(c->kind));
	put_dur(f, c->end_ns - c->start_ns);
	if (c->kind == DIAG_BLOCKED) {
		fprintf(f, ": ");
		put_wait(f, &c->wait);
	} else if (c->serving.tid != 0) {
		fprintf(f, ", serving %s", c->serving.comm);
	}
	if (c->repeat)
		fprintf(f, " (again: a circular wait)");
	fprintf(f, "\n");
}

/* What a stack of a hang is, as the text report says it. */
static void
put_stack_what(FILE *f, const struct diag_stack *s)
{
	switch (s->role) {
	case DIAG_STACK_HANG:
		fprintf(f, "stack");
		return;
	case DIAG_STACK_WAKER:
		fprintf(f, "stack of its waker ");
		break;
	case DIAG_STACK_CULPRIT:
		fprintf(f, "stack of culprit %zu, ", s->culprit + 1);
		break;
	default:
		fprintf(f, "stack of culprit %zu's waker ", s->culprit + 1);
		break;
	}
	put_name(f, &s->th);
	fprintf(f, " (%u)", trace_tid_local(s->th.tid));
}

/* The stacks of hang h, one line each: the hung thread's (two at most,
   and the kernel one),
   its waker's, and the culprits'. */
static void
put_stacks(FILE *f, const struct diag *d, size_t h, uint64_t base)
{
	size_t own = 0, depth = diag_options(d)->stack_depth ?
	    diag_options(d)->stack_depth : 12;

	for (size_t i = 0; i < diag_nstacks(d, h); i++) {
		const struct diag_stack *s = diag_stack(d, h, i);
		if (s->role == DIAG_STACK_HANG && s->kind != TSK_KWAIT &&
		    s->kind != TSK_KSAMPLE && own++ >= 2)
			continue;
		fprintf(f, "  ");
		put_stack_what(f, s);
		if (s->nframes == 0) {
			fprintf(f, ": none, it ran ");
			put_dur(f, s->ran_ns);
			fprintf(f, " in all, too little for a sample\n");
			continue;
		}
		fprintf(f, " at ");
		put_time(f, s->ts, base);
		if (s->kind == TSK_SAMPLE)
			fprintf(f, " (running: %u of %u samples)", s->samples,
			    s->of);
		else if (s->kind == TSK_WAKER)
			fprintf(f, " (waking)");
		else if (s->kind == TSK_WAIT)
			fprintf(f, " (where it waited)");
		else if (s->kind == TSK_KWAIT)
			fprintf(f, " (where it slept in the kernel)");
		else if (s->kind == TSK_KSAMPLE)
			fprintf(f, " (running in the kernel: %u of the %u "
			    "samples there)", s->samples, s->of);
		fprintf(f, ":");
		for (size_t k = 0; k < s->nframes && k < depth; k++)
			if (s->symbols != NULL && s->symbols[k] != NULL)
				fprintf(f, " %s", s->symbols[k]);
			else	/* in no recorded mapping: anonymous or
				   generated code, or a frame made up by
				   code without frame pointers */
				fprintf(f, " ?");
		if (s->nframes > depth)
			fprintf(f, " ...");
		if (s->nofp != NULL || s->cut || s->stopped) {
			fprintf(f, " (%zu frame%s", s->nframes,
			    s->nframes == 1 ? "" : "s");
			if (s->cut)
				fprintf(f, ", cut there");
			int at_end = s->nofp != NULL && s->stopped &&
			    (s->nofp_at + 1 == s->nframes ||
			    s->symbols[s->nofp_at + 1] == NULL);
			if (at_end)
				fprintf(f, "; the unwinding stopped at %.*s, "
				    "which keeps no frame pointer",
				    (int)strcspn(s->nofp, "+"), s->nofp);
			else if (s->nofp != NULL)
				fprintf(f, "; %.*s keeps no frame pointer: its "
				    "caller is missing", (int)strcspn(s->nofp,
				    "+"), s->nofp);
			if (s->stopped && !at_end)
				fprintf(f, "; the unwinding stopped: code "
				    "without frame pointers");
			fprintf(f, ")");
		}
		fprintf(f, "\n");
	}
}

/* The culprits explaining culprit parent (SIZE_MAX: the hang), in order,
   each followed by those explaining it: the tree, depth first. */
static void
put_culprits(FILE *f, const struct diag *d, size_t h, size_t parent)
{
	size_t n = diag_nculprits(d, h);

	for (size_t i = parent == SIZE_MAX ? 0 : parent + 1; i < n; i++) {
		const struct diag_culprit *c = diag_culprit(d, h, i);
		if (c->parent != parent)
			continue;
		size_t k = diag_culprit_first(d, h, i);
		put_culprit(f, c, k == i ? NULL : diag_culprit(d, h, k));
		put_culprits(f, d, h, i);
	}
}

void
diag_write_cpath_text(const struct diag *d, size_t h, FILE *f)
{
	size_t n = diag_ncpath(d, h);

	if (n == 0)
		return;
	fprintf(f, "  critical path (ends at %s):\n",
	    diag_cstop_name(diag_cpath_stop(d, h)));
	for (size_t i = 0; i < n; i++) {
		const struct diag_cstep *s = diag_cpath(d, h, i);
		fprintf(f, "    %zu. ", i);
		put_thread(f, &s->th);
		if (s->wait.type[0] != 0) {
			fprintf(f, " blocked ");
			put_dur(f, s->blocked_ns);
			fprintf(f, " in ");
			put_wait(f, &s->wait);
		}
		fprintf(f, ", running ");
		put_dur(f, s->running_ns);
		if (s->waker.tid != 0) {
			fprintf(f, "; ended by ");
			put_thread(f, &s->waker);
			fprintf(f, " (%s)", diag_cedge_name(s->edge));
		} else if (s->edge != DCE_NONE) {
			fprintf(f, "; ended by %s", diag_cedge_name(s->edge));
		}
		if (s->culprit)
			fprintf(f, " [culprit: %s]", diag_cwhy_name(s->culprit));
		else if (s->verdict != DCV_NONE && i > 0)
			fprintf(f, " [%s]", diag_cverdict_name(s->verdict));
		fprintf(f, "\n");
	}
}

int
diag_yield_polls(const struct diag_hang *x)
{
	return x->wait.syscall[0] != '\0' &&
	    strcmp(x->wait.syscall, "sched_yield") != 0;
}

void
diag_write_hang_text(const struct diag *d, size_t h, FILE *f,
    uint64_t base)
{
	diag_write_hang_text_n(d, h, h + 1, f, base);
}

void
diag_write_hang_text_n(const struct diag *d, size_t h, size_t number,
    FILE *f, uint64_t base)
{
	const struct diag_hang *x = diag_hang(d, h);
	const struct graph *g = diag_graph(d);
	size_t n;

	if (x == NULL)
		return;
	if (number > 0)
		fprintf(f, "hang %zu: ", number);
	put_thread(f, &x->th);
	fprintf(f, " %s for ", diag_kind_name(x->kind));
	put_dur(f, x->end_ns - x->start_ns);
	fprintf(f, " from ");
	put_time(f, x->start_ns, base);
	fprintf(f, "%s [%s]\n", x->ended ? "" : " (still at the end of the "
	    "trace)", diag_source_name(x->source));
	if (x->kind == DIAG_BLOCKED) {
		fprintf(f, "  waiting: ");
		put_wait(f, &x->wait);
		fprintf(f, "\n");
	} else if (x->kind == DIAG_BUSY) {
		fprintf(f, "  running or runnable for ");
		put_dur(f, x->cpu_ns);
		fprintf(f, "\n");
	} else if (x->kind == DIAG_YIELD && x->slices) {
		fprintf(f, "  waiting in slices: ");
		put_wait(f, &x->wait);
		fprintf(f, ", %u slices ended by their timeout before\n",
		    x->yields);
	} else if (x->kind == DIAG_YIELD && diag_yield_polls(x)) {
		fprintf(f, "  retrying: ");
		put_wait(f, &x->wait);
		fprintf(f, ", %u attempts refused\n", x->yields);
	} else if (x->kind == DIAG_YIELD) {
		fprintf(f, "  %u yields or short sleeps\n", x->yields);
	}
	if (x->lost > 0)
		fprintf(f, "  warning: the recorder lost %" PRIu64 " events "
		    "during this hang: a chain may stop short of its culprit\n",
		    x->lost);
	if (diag_options(d)->cpath_only) {
		diag_write_cpath_text(d, h, f);
		return;
	}
	if ((n = diag_nsimilar(d, h)) > 0) {
		long p = diag_picked(d, h);
		const struct diag_similar *s = diag_similar(d, h,
		    p >= 0 ? (size_t)p : 0);
		fprintf(f, "  similar normal nodes: %zu; picked #%ld%s: at ",
		    n, p + 1, diag_picked_by_default(d, h) ?
		    " (the most recent, by default; --pick N for another)" :
		    "");
		put_time(f, s->start_ns, base);
		fprintf(f, ", ");
		put_dur(f, s->duration_ns);
		fprintf(f, ", differs in %s\n", s->differs);
	}
	if ((n = diag_npath(d, h)) > 0) {
		fprintf(f, "  %s:", x->kind == DIAG_BUSY ?
		    "walk back from the busy node" : "normal wake-up path");
		uint32_t prev = GRAPH_NONE;
		for (size_t i = 0; i < n; i++) {
			const struct diag_step *st = diag_path(d, h, i);
			if (st->th.thread == prev && i + 1 < n)
				continue;
			if (i > 0)
				fprintf(f, " <-%s-", st->edge >= 0 ?
				    graph_edge_kind_name((unsigned)st->edge) :
				    "");
			fprintf(f, " %s%s", st->th.comm, st->input ?
			    " [input]" : "");
			prev = st->th.thread;
		}
		fprintf(f, "\n");
	}
	diag_write_cpath_text(d, h, f);
	const struct diag_thread *ct = diag_cause_thread(d, h);
	if (x->kind == DIAG_BUSY && ct != NULL)
		fprintf(f, "  started by %s%s\n", ct->comm,
		    diag_cause_node(d, h) != GRAPH_NONE ? " (input event)" :
		    "");
	if (diag_nculprits(d, h) > 0) {
		fprintf(f, "  culprits:\n");
		put_culprits(f, d, h, SIZE_MAX);
	} else if (x->kind == DIAG_BLOCKED) {
		fprintf(f, "  culprits: none found%s%s\n",
		    diag_why_no_culprit(d, h) ? ": " : "",
		    diag_why_no_culprit(d, h) ? diag_why_no_culprit(d, h) : "");
	}
	const struct diag_cycle *cy = diag_cycle(d, h);
	if (cy != NULL) {
		fprintf(f, "  cycle:");
		for (size_t i = 0; i < cy->ntids; i++) {
			uint32_t ti = graph_thread_find(g, cy->tids[i]);
			const struct graph_thread *t = graph_thread(g, ti);
			fprintf(f, "%s %s", i ? " ->" : "", t ? t->comm : "?");
		}
		if (cy->timeout_ns != 0) {
			fprintf(f, ", broken by a ");
			put_dur(f, cy->timeout_ns);
			fprintf(f, " timeout (a deadlock turned into a "
			    "livelock)");
		} else {
			fprintf(f, ", no timeout breaks it (a deadlock)");
		}
		fprintf(f, "\n");
	}
	for (size_t i = 0; i < diag_nwakeups(d, h); i++) {
		const struct diag_wakeup *w = diag_wakeup(d, h, i);
		fprintf(f, "  wake-up of %s at ", w->woken.comm);
		put_time(f, w->ts, base);
		fprintf(f, " through %s from %s\n",
		    graph_edge_kind_name((unsigned)w->via), w->cause.comm);
	}
	put_stacks(f, d, h, base);
	for (size_t i = 0; i < diag_ndead_ends(d, h); i++)
		fprintf(f, "  dead end: %s\n", diag_dead_end(d, h, i));
	for (size_t i = 0; i < diag_nnotes(d, h); i++)
		fprintf(f, "  note: %s\n", diag_note(d, h, i));
}

void
diag_write_text(const struct diag *d, FILE *f, uint64_t base)
{
	if (diag_options(d)->hosts != NULL) {
		hosts_write_text(diag_options(d)->hosts, f);
		fprintf(f, "\n");
	}
	if (diag_nhangs(d) == 0) {
		fprintf(f, "no hang found\n");
		if (diag_why_none(d) != NULL)
			fprintf(f, "  %s\n", diag_why_none(d));
		return;
	}
	for (size_t h = 0; h < diag_nhangs(d); h++) {
		if (h > 0)
			fprintf(f, "\n");
		diag_write_hang_text(d, h, f, base);
	}
}

/* --- JSON -------------------------------------------------------------- */

void
engine_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s != NULL && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void
jthread(FILE *f, const struct diag_thread *t)
{
	fprintf(f, "\"pid\":%u,\"tid\":%u,\"comm\":",
	    trace_tid_local(t->pid), trace_tid_local(t->tid));
	engine_json_str(f, t->comm);
	if (t->host != NULL) {
		fprintf(f, ",\"host\":");
		engine_json_str(f, t->host);
	}
	fprintf(f, ",\"process\":");
	engine_json_str(f, t->process);
}

static void
jnode(FILE *f, uint32_t v)
{
	if (v == GRAPH_NONE)
		fprintf(f, "null");
	else
		fprintf(f, "%u", v);
}

static void
jwait(FILE *f, const struct diag_wait *w)
{
	fprintf(f, "{\"syscall\":");
	engine_json_str(f, w->syscall);
	fprintf(f, ",\"type\":");
	engine_json_str(f, w->type);
	fprintf(f, ",\"resource\":");
	engine_json_str(f, w->resource);
	fprintf(f, ",\"result\":");
	if (w->has_result)
		fprintf(f, "%" PRId64, w->result);
	else
		fprintf(f, "null");
	if (w->slices > 1)
		fprintf(f, ",\"slices\":%u", w->slices);
	fprintf(f, ",\"timed_out\":%s,\"timeout_ns\":%" PRIu64 "}",
	    w->timed_out ? "true" : "false", w->timeout_ns);
}

void
diag_write_cpath_json(const struct diag *d, size_t h, FILE *f)
{
	fprintf(f, "\"critical_path_steps\":[");
	for (size_t i = 0; i < diag_ncpath(d, h); i++) {
		const struct diag_cstep *s = diag_cpath(d, h, i);
		fprintf(f, "%s{", i ? "," : "");
		jthread(f, &s->th);
		fprintf(f, ",\"wait\":");
		if (s->wait.type[0] != 0) {
			jwait(f, &s->wait);
		} else {
			fprintf(f, "null");
		}
		fprintf(f, ",\"wait_start_ns\":%" PRIu64 ",\"wait_end_ns\":%"
		    PRIu64 ",\"until_ns\":%" PRIu64 ",\"blocked_ns\":%" PRIu64
		    ",\"running_ns\":%" PRIu64 ",\"edge\":", s->wait_start,
		    s->wait_end, s->until, s->blocked_ns, s->running_ns);
		engine_json_str(f, diag_cedge_name(s->edge));
		fprintf(f, ",\"waker\":");
		if (s->waker.tid != 0) {
			fputc('{', f);
			jthread(f, &s->waker);
			fputc('}', f);
		} else {
			fprintf(f, "null");
		}
		fprintf(f, ",\"culprit\":");
		if (s->culprit)
			engine_json_str(f, diag_cwhy_name(s->culprit));
		else
			fprintf(f, "null");
		fprintf(f, ",\"verdict\":");
		if (s->verdict != DCV_NONE)
			engine_json_str(f, diag_cverdict_name(s->verdict));
		else
			fprintf(f, "null");
		fputc('}', f);
	}
	fprintf(f, "],\"critical_path_end\":");
	engine_json_str(f, diag_cstop_name(diag_cpath_stop(d, h)));
}

static void
jsteps(FILE *f, const struct diag *d, size_t h, int crit)
{
	size_t n = crit ? diag_ncritical(d, h) : diag_npath(d, h);

	fputc('[', f);
	for (size_t i = 0; i < n; i++) {
		const struct diag_step *s = crit ? diag_critical(d, h, i) :
		    diag_path(d, h, i);
		fprintf(f, "%s{\"node\":%u,", i ? "," : "", s->node);
		jthread(f, &s->th);
		fprintf(f, ",\"ts\":%" PRIu64 ",\"edge\":", s->ts);
		if (s->edge >= 0)
			engine_json_str(f, graph_edge_kind_name((unsigned)s->edge));
		else
			fprintf(f, "null");
		fprintf(f, ",\"input\":%s}", s->input ? "true" : "false");
	}
	fputc(']', f);
}

void
diag_write_hang_json(const struct diag *d, size_t h, FILE *f)
{
	const struct diag_hang *x = diag_hang(d, h);
	const struct graph *g = diag_graph(d);

	fprintf(f, "{\"thread\":{");
	jthread(f, &x->th);
	fprintf(f, "},\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64
	    ",\"duration_ns\":%" PRIu64 ",\"ended\":%s,\"kind\":\"%s\","
	    "\"source\":\"%s\",\"node\":", x->start_ns, x->end_ns,
	    x->end_ns - x->start_ns, x->ended ? "true" : "false",
	    diag_kind_name(x->kind), diag_source_name(x->source));
	jnode(f, x->node);
	fprintf(f, ",\"wait\":");
	if (x->kind == DIAG_BLOCKED || (x->kind == DIAG_YIELD && diag_yield_polls(x)))
		jwait(f, &x->wait);
	else
		fprintf(f, "null");
	fprintf(f, ",\"lost_events\":%" PRIu64, x->lost);
	if (diag_options(d)->cpath_only) {
		fputc(',', f);
		diag_write_cpath_json(d, h, f);
		fputc('}', f);
		return;
	}
	fprintf(f, ",\"cpu_ns\":%" PRIu64 ",\"yields\":%u,\"slices\":%s,"
	    "\"similar\":[", x->cpu_ns, x->yields,
	    x->slices ? "true" : "false");
	for (size_t i = 0; i < diag_nsimilar(d, h); i++) {
		const struct diag_similar *s = diag_similar(d, h, i);
		fprintf(f, "%s{\"node\":%u,\"start_ns\":%" PRIu64
		    ",\"duration_ns\":%" PRIu64 ",\"differs\":", i ? "," : "",
		    s->node, s->start_ns, s->duration_ns);
		engine_json_str(f, s->differs);
		fprintf(f, ",\"wait\":");
		jwait(f, &s->wait);
		fputc('}', f);
	}
	long p = diag_picked(d, h);
	fprintf(f, "],\"picked\":");
	if (p >= 0)
		fprintf(f, "%ld", p + 1);
	else
		fprintf(f, "null");
	fprintf(f, ",\"picked_by_default\":%s,\"baseline_path\":",
	    diag_picked_by_default(d, h) ? "true" : "false");
	jsteps(f, d, h, 0);
	fprintf(f, ",\"critical_path\":");
	jsteps(f, d, h, 1);
	fputc(',', f);
	diag_write_cpath_json(d, h, f);
	fprintf(f, ",\"culprits\":[");
	for (size_t i = 0; i < diag_nculprits(d, h); i++) {
		const struct diag_culprit *c = diag_culprit(d, h, i);
		fprintf(f, "%s{\"depth\":%u,", i ? "," : "", c->depth);
		jthread(f, &c->th);
		fprintf(f, ",\"kind\":\"%s\",\"node\":", diag_kind_name(c->kind));
		jnode(f, c->node);
		fprintf(f, ",\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64
		    ",\"wait\":", c->start_ns, c->end_ns);
		jwait(f, &c->wait);
		fprintf(f, ",\"serving\":");
		if (c->serving.tid != 0) {
			fputc('{', f);
			jthread(f, &c->serving);
			fputc('}', f);
		} else {
			fprintf(f, "null");
		}
		size_t k = diag_culprit_first(d, h, i);
		fprintf(f, ",\"repeat\":%s,\"first\":", c->repeat ? "true" :
		    "false");
		if (k != i)
			fprintf(f, "%zu", k);
		else
			fprintf(f, "null");
		fprintf(f, ",\"parent\":");
		if (c->parent != SIZE_MAX)
			fprintf(f, "%zu}", c->parent);
		else
			fprintf(f, "null}");
	}
	fprintf(f, "],\"no_culprit\":");
	if (diag_why_no_culprit(d, h) != NULL)
		engine_json_str(f, diag_why_no_culprit(d, h));
	else
		fprintf(f, "null");
	fprintf(f, ",\"cycle\":");
	const struct diag_cycle *cy = diag_cycle(d, h);
	if (cy != NULL) {
		fprintf(f, "{\"tids\":[");
		for (size_t i = 0; i < cy->ntids; i++)
			fprintf(f, "%s%u", i ? "," : "", cy->tids[i]);
		fprintf(f, "],\"comms\":[");
		for (size_t i = 0; i < cy->ntids; i++) {
			const struct graph_thread *t = graph_thread(g,
			    graph_thread_find(g, cy->tids[i]));
			fprintf(f, "%s", i ? "," : "");
			engine_json_str(f, t ? t->comm : "");
		}
		fprintf(f, "],\"timeout_ns\":%" PRIu64 ",\"timeout_tid\":%u}",
		    cy->timeout_ns, cy->timeout_tid);
	} else {
		fprintf(f, "null");
	}
	fprintf(f, ",\"wakeups\":[");
	for (size_t i = 0; i < diag_nwakeups(d, h); i++) {
		const struct diag_wakeup *w = diag_wakeup(d, h, i);
		fprintf(f, "%s{\"woken\":{", i ? "," : "");
		jthread(f, &w->woken);
		fprintf(f, "},\"via\":");
		engine_json_str(f, graph_edge_kind_name((unsigned)w->via));
		fprintf(f, ",\"cause\":{");
		jthread(f, &w->cause);
		fprintf(f, "},\"ts\":%" PRIu64 "}", w->ts);
	}
	fprintf(f, "],\"cause\":");
	const struct diag_thread *ct = diag_cause_thread(d, h);
	uint32_t cn = diag_cause_node(d, h);
	if (ct != NULL || cn != GRAPH_NONE) {
		fprintf(f, "{\"kind\":\"%s\",\"node\":",
		    cn != GRAPH_NONE ? "input" : "wakeup");
		jnode(f, cn);
		fprintf(f, ",\"thread\":");
		if (ct != NULL) {
			fputc('{', f);
			jthread(f, ct);
			fputc('}', f);
		} else {
			fprintf(f, "null");
		}
		fputc('}', f);
	} else {
		fprintf(f, "null");
	}
	fprintf(f, ",\"stacks\":[");
	for (size_t i = 0; i < diag_nstacks(d, h); i++) {
		const struct diag_stack *s = diag_stack(d, h, i);
		fprintf(f, "%s{\"role\":\"%s\",\"culprit\":", i ? "," : "",
		    diag_stack_role_name(s->role));
		if (s->role == DIAG_STACK_CULPRIT ||
		    s->role == DIAG_STACK_CULPRIT_WAKER)
			fprintf(f, "%zu", s->culprit);
		else
			fprintf(f, "null");
		fprintf(f, ",\"kind\":\"%s\",", diag_stack_kind_name(s->kind));
		jthread(f, &s->th);
		if (s->kind == TSK_SAMPLE || s->kind == TSK_KSAMPLE)
			fprintf(f, ",\"samples\":%u,\"of\":%u", s->samples,
			    s->of);
		if (s->nframes == 0)
			fprintf(f, ",\"none_ran_ns\":%" PRIu64, s->ran_ns);
		fprintf(f, ",\"cut\":%s,\"stopped\":%s,"
		    "\"no_frame_pointer\":", s->cut ? "true" : "false",
		    s->stopped ? "true" : "false");
		if (s->nofp != NULL)
			engine_json_str(f, s->nofp);
		else
			fprintf(f, "null");
		fprintf(f, ",\"ts\":%" PRIu64 ",\"frames\":[", s->ts);
		for (size_t k = 0; k < s->nframes; k++)
			fprintf(f, "%s\"0x%" PRIx64 "\"", k ? "," : "",
			    s->frames[k]);
		fprintf(f, "]");
		if (s->symbols != NULL) {
			fprintf(f, ",\"symbols\":[");
			for (size_t k = 0; k < s->nframes; k++) {
				fprintf(f, "%s", k ? "," : "");
				if (s->symbols[k] != NULL)
					engine_json_str(f, s->symbols[k]);
				else
					fprintf(f, "null");
			}
			fprintf(f, "]");
		}
		fprintf(f, "}");
	}
	fprintf(f, "],\"watch\":");
	if (diag_watch_hint(d, h) != NULL)
		engine_json_str(f, diag_watch_hint(d, h));
	else
		fprintf(f, "null");
	fprintf(f, ",\"dead_ends\":[");
	for (size_t i = 0; i < diag_ndead_ends(d, h); i++) {
		fprintf(f, "%s", i ? "," : "");
		engine_json_str(f, diag_dead_end(d, h, i));
	}
	fprintf(f, "],\"notes\":[");
	for (size_t i = 0; i < diag_nnotes(d, h); i++) {
		fprintf(f, "%s", i ? "," : "");
		engine_json_str(f, diag_note(d, h, i));
	}
	fprintf(f, "]}");
}

void
diag_write_json(const struct diag *d, FILE *f)
{
	fprintf(f, "{\"threshold_ns\":%" PRIu64 ",\"hangs\":[",
	    diag_options(d)->threshold_ns);
	for (size_t h = 0; h < diag_nhangs(d); h++) {
		if (h > 0)
			fputc(',', f);
		diag_write_hang_json(d, h, f);
	}
	fprintf(f, "]");
	if (diag_why_none(d) != NULL) {
		fprintf(f, ",\"why_none\":");
		engine_json_str(f, diag_why_none(d));
	}
	if (diag_options(d)->hosts != NULL) {
		fputc(',', f);
		hosts_write_json(diag_options(d)->hosts, f);
	}
	fprintf(f, "}\n");
}
