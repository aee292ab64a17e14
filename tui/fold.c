/*
 * fold.c: which threads the timeline folds away (key f shows them again).
 *
 * Two kinds of lanes say nothing about a hang and crowd the screen of a
 * system-wide recording:
 *
 *  - idle kernel threads: a kernel thread that ran (or a CPU's interrupt
 *    lane that was in interrupts) at most FOLD_RUN_PERMILLE of the
 *    visible window, which covers one without any event in it. The window changes with every zoom and pan, so
 *    the timeline asks again when it does (t->fold_t0, fold_t1).
 *  - the recorder: its process, as the trace's headers name it. A trace
 *    of an older argus does not name it, but the recorder never records
 *    its own system calls (every thread of it with BPF, its main thread
 *    with tracefs): a process is also taken for a recorder when its main
 *    thread is named "argus", ran in the trace and has not one system
 *    call event there. All their threads fold. The list (t->rec_pids, a
 *    few at most) is made once per model (t->gen).
 *
 * Threads pinned by tui_lanes() (the hang, its paths and culprits, the
 * threads visited) never fold: tui_lanes() asks only about the others.
 */
#include <string.h>

#include "trace/trace.h"
#include "tui-local.h"

/* A kernel thread running at most this share (per mille) of the window
   is idle. */
#define FOLD_RUN_PERMILLE 10

/* Does thread th have a system call event? */
static int
has_syscall(const struct graph *g, uint32_t th)
{
	const struct graph_thread *gt = graph_thread(g, th);

	for (uint32_t i = 0; i < gt->nevents; i++) {
		const struct graph_event *ev = graph_event(g, th, i);
		if (ev->type == TT_SYS_ENTER || ev->type == TT_SYS_EXIT)
			return 1;
	}
	return 0;
}

/* Find the recorder's processes of the current model (see above). */
static void
find_recorder(struct tui *t)
{
	size_t n = graph_nthreads(t->g);

	t->nrec = 0;
	const struct trace_info *in = t->reader != NULL ?
	    trace_reader_info(t->reader) : NULL;
	if (in != NULL && in->recorder_pid != 0)
		t->rec_pids[t->nrec++] = in->recorder_pid;
	for (uint32_t i = 0; i < n && t->nrec < ARRAY_SIZE(t->rec_pids);
	    i++) {
		const struct graph_thread *gt = graph_thread(t->g, i);
		if (gt->tid != gt->pid || gt->pid == 0 || gt->nevents == 0 ||
		    (gt->flags & GRAPH_THREAD_KERNEL) ||
		    strcmp(gt->comm, "argus") != 0 || has_syscall(t->g, i) ||
		    (t->nrec > 0 && t->rec_pids[0] == gt->pid))
			continue;
		t->rec_pids[t->nrec++] = gt->pid;
	}
	t->rec_gen = t->gen + 1;
}

static int
is_recorder(struct tui *t, const struct graph_thread *gt)
{
	if (t->rec_gen != t->gen + 1)
		find_recorder(t);
	for (size_t i = 0; i < t->nrec; i++)
		if (gt->pid == t->rec_pids[i])
			return 1;
	return 0;
}

/* First event of thread th at or after ts (nev when none). */
static uint32_t
first_at(const struct graph *g, uint32_t th, uint32_t nev, uint64_t ts)
{
	uint32_t lo = 0, hi = nev;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (graph_event(g, th, mid)->ts < ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Time kernel thread th ran in [t0, t1): from each "run" event to the
   switch that follows, from t0 when it was running then; the walk
   stops once it passes need. */
static uint64_t
ran_in(struct tui *t, uint32_t th, uint64_t t0, uint64_t t1, uint64_t need)
{
	const struct graph_thread *gt = graph_thread(t->g, th);
	int running = view_state_at(t->vw, th, t0) == VS_RUNNING;
	uint64_t since = t0, ran = 0;

	for (uint32_t i = first_at(t->g, th, gt->nevents, t0);
	    i < gt->nevents && ran <= need; i++) {
		const struct graph_event *ev = graph_event(t->g, th, i);
		if (ev->ts >= t1)
			break;
		if (ev->type == GRAPH_EV_RUN && !running) {
			running = 1;
			since = ev->ts;
		} else if (ev->type == TT_SWITCH && running) {
			running = 0;
			/* a run of one instant still shows it woke */
			ran += ev->ts > since ? ev->ts - since : 1;
		}
	}
	return running ? ran + (t1 - since) : ran;
}

/* Time the interrupt lane th spent in interrupts in [t0, t1) (its
   vertices, which do not overlap), up to past need. */
static uint64_t
irq_in(const struct graph *g, uint32_t th, uint64_t t0, uint64_t t1,
    uint64_t need)
{
	size_t n, lo = 0, hi;
	const uint32_t *vs = graph_thread_vertices(g, th, &n);
	uint64_t ran = 0;

	hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (graph_vertex_end(g, vs[mid]) < t0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < n && ran <= need; i++) {
		uint64_t s = graph_vertex_start(g, vs[i]);
		uint64_t e = graph_vertex_end(g, vs[i]);
		if (s >= t1)
			break;
		s = s < t0 ? t0 : s;
		e = e > t1 ? t1 : e;
		ran += e > s ? e - s : 1;
	}
	return ran;
}

int
tui_fold_lane(struct tui *t, uint32_t th)
{
	const struct graph_thread *gt = graph_thread(t->g, th);

	if (gt == NULL)
		return 0;
	if (gt->flags & GRAPH_THREAD_KERNEL) {
		uint64_t t0 = t->pos.t0, t1 = t->pos.t1;
		uint64_t need = (t1 - t0) / 1000 * FOLD_RUN_PERMILLE;
		if (t1 <= t0 || t->vw == NULL)
			return 0;
		return (gt->flags & GRAPH_THREAD_IRQ ? irq_in(t->g, th, t0, t1,
		    need) : ran_in(t, th, t0, t1, need)) <= need;
	}
	return is_recorder(t, gt);
}
