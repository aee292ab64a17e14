/*
 * diag-local.h: internals of the diagnosis (engine/diag*.c).
 *
 * struct diag owns an array of struct dhang, one per hang diagnosed. A
 * dhang holds the public struct diag_hang and every result computed for
 * it (similar nodes, slice, critical path, culprits, cycle, wake-ups,
 * notes) in growable arrays that are cleared and refilled when another
 * similar node is picked. struct dwait is a wait found in a thread's
 * compact events: the blocking switch, the run that ended it, the system
 * call around it and the user-level wait (instrumentation) around that.
 */
#ifndef ARGUS_DIAG_LOCAL_H
#define ARGUS_DIAG_LOCAL_H

#include <errno.h>
#include <sys/syscall.h>

#include "engine-local.h"

#define DIAG_SCAN 96		/* events scanned around a wait */
#define DIAG_SLICE_GAP 50000000ULL	/* the most bookkeeping between two
					   slices, ns (diag-swait.c) */


/* DARR and DPUSH, the growable arrays of the results: common/array.h. */

struct dwait {
	uint32_t ti;		/* thread index */
	uint32_t sw;		/* the blocking TT_SWITCH */
	uint32_t run;		/* where it ran again: the GRAPH_EV_RUN
				   that ended it, or the first event of
				   its own when that switch was lost;
				   GRAPH_NONE: it never ended */
	uint32_t enter, exit;	/* the system call, or GRAPH_NONE */
	uint32_t uwait, udone;	/* TU_COND_WAIT/TU_LOCK_WAIT and its end */
	uint64_t start, end;	/* end: trace end when it never ended;
				   start: the first slice's when w.slices
				   > 1 */
	uint32_t first;		/* the first slice's blocking switch when
				   w.slices > 1 (sw is the last's) */
	struct diag_wait w;
};

/* A mapped file read for symbolization (e NULL: unreadable). */
struct delf {
	const char *path;		/* interned in the graph */
	struct elfaddr *e;
};

/* The symbols of one stack's frames ("func+0x12" or NULL each). */
struct dsyms {
	char **v;
	size_t n;
};

struct dhang {
	struct diag_hang pub;
	struct dwait dw;		/* pub.kind == DIAG_BLOCKED */
	DARR(struct diag_similar) sim;
	long picked;
	int by_default;
	DARR(struct diag_step) path;
	DARR(struct diag_step) crit;
	DARR(struct diag_cstep) cp;	/* the critical path (diag-path.c) */
	int cp_stop;			/* why it ends (enum diag_cstop) */
	const char *no_culprit;		/* a blocked hang without culprits:
					   why (a static phrase), else NULL */
	DARR(struct diag_culprit) cul;
	DARR(struct diag_wakeup) wk;
	uint64_t deep_lo, deep_hi;	/* the times the slices of the
					   deeper levels of the recursion
					   rest on (diag_span_steps()),
					   deep_lo UINT64_MAX: none */
	uint64_t wk_lo;			/* the earliest time wk rests on
					   (the start of a wait in progress
					   at the hang's start) */
	DARR(char *) dead;
	DARR(char *) notes;
	char *found;			/* how the search came to it (a note
					   kept across analyses), or NULL */
	DARR(struct diag_stack) stk;
	DARR(struct dsyms) syms;	/* symbol arrays of stk (owned) */
	uint32_t cyc_tids[64];
	struct diag_cycle cycle;
	int has_cycle;
	char *watch;
	uint32_t cause_node;
	struct diag_thread cause_th;
	int loop;			/* its thread idles in an event loop */
	int rank;			/* how it was found: 0 far longer than
					   the thread's other waits there, 1 a
					   request/reply or lock wait, 2 the
					   longest wait of a thread the user
					   named */
	size_t sim_sure;		/* the first sim_sure similar nodes
					   rank first whatever earlier waits
					   the thread had (exact signature,
					   before the hang, ended by its known
					   peer): more history cannot change
					   them (diag-window.c) */
	size_t cand;			/* the candidate it was made from
					   (d->cand), SIZE_MAX: none */
	uint32_t poll_enter, poll_exit;	/* a polling hang: the first failed
					   attempt (entry, exit), else GRAPH_NONE */
};

/* A hang found by the streaming search (diag-scan.c), to be made again
   in the graph of a window around it (diag_listed_hangs()). */
enum { DC_MARK, DC_RUN, DC_WAIT, DC_POLL, DC_LONGEST };
/* The ranks of a candidate's similar nodes, as diag-similar.c ranks
   them: its class before it ended by its peer, or by another; after it
   by its peer, or by another; a class of other peers (runs that talked
   to none). */
enum { DS_PEER, DS_BEFORE, DS_AFTER_PEER, DS_AFTER, DS_LOOSE, DS_NPRIO };
#define DC_NSIM 7	/* SIM_KEEP before of the run's peers and
			   SIM_KEEP of none (diag-scan-sim.c), the first
			   after and the first after its peer ended, one
			   to spare */

struct dcand {
	int what;		/* DC_*; DC_LONGEST: the longest wait of a
				   thread the user named, when none hung */
	uint32_t tid;
	uint64_t a, b;		/* mark, run: the span; wait: its blocking
				   switch and its end; poll: the entry of
				   the first attempt and the end */
	uint64_t enter_ts;	/* wait: its system call's entry; poll:
				   the exit of the first attempt */
	uint64_t last_ts;	/* poll: the exit of the last attempt */
	uint32_t n;		/* poll: attempts refused */
	int rank;		/* wait: 0 a hang; 1 a hang if it waits for
				   a request or a lock (the graph says) */
	struct graph_event en;	/* wait: its system call's entry, as the
				   load pass leaves it */
	const char *why;	/* DC_LONGEST: why it is not a hang */
	/* wait: earlier and later waits of its thread that the graph of
	   the whole trace may take as its similar node (diag-scan-sim.c):
	   the run that ends in each one, and its end */
	uint64_t sim[DC_NSIM][2];
	uint8_t simprio[DC_NSIM];	/* each one's rank, as the graph
					   may rank it (DS_*) */
	uint32_t nsim;
	/* wait: when it is one in one system call (not a semantic wait of
	   slices), it (sd[0]), and the wait in one call of its waker that
	   ended last before the waker woke it (sd[1]), as the pass saw them,
	   so that a graph of a window that opens during one of them loads
	   it from its start (struct graph_seed) */
	struct dseed {
		uint32_t tid;
		uint8_t state;		/* at its blocking switch */
		uint64_t enter_ts, sw, end;
		uint64_t arg[GRAPH_SEED_NARGS];	/* its entry's */
	} sd[2];
	uint32_t nsd;
};

/*
 * Timed slices of a thread the user did not name: no hang (see
 * diag-poll.c), but the report without hangs tells of the longest
 * stretch that would have made one (diag_why_slices()). A stretch
 * being followed (n slices on futex word key, the first entered at a,
 * the last ended at last), or the longest kept (dt long, of thread tid).
 */
struct dslices {
	uint64_t a, last, res, key, dt;
	uint32_t n, tid;
};
/* Follow the slices of thread tid at the exit (at ts) of the call
   entered by en, a timed slice when slice, in stretch u: a stretch a
   name would make a hang (at least POLL_MIN slices of diag-poll.c,
   threshold long, ended by a call on the same word that did not time
   out) goes to *best when longer (diag_slices_keep()). */
void diag_slices_step(struct dslices *u, struct dslices *best, uint32_t tid,
    const struct graph_event *en, uint64_t ts, int slice,
    uint64_t threshold);
/* Keep stretch x (n 0: none) in *best when longer, or as long and of a
   lower tid. */
void diag_slices_keep(struct dslices *best, const struct dslices *x);
/* why (taken over) followed by "; COMM (TID) waited ... in N timed
   slices ... (a hang when its thread is named ...)" for the longest
   stretch best, named as in graph g; why itself when there is none. */
char *diag_why_slices(const struct graph *g, const struct dslices *best,
    char *why);

/* The result of the streaming search: the candidates, and what the
   windows need of the whole trace. */
struct dscan {
	struct dcand *c;
	size_t nc;
	struct hmap idle;	/* tid -> its idle wait key + 1 */
	struct hmap loops;	/* tid -> 1: that wait is an event loop's */
	uint64_t first_ts, last_ts, threshold_ns;
	/* for the report when no thread hung (from_kernel()) */
	size_t nsel, nwaits;
	int lg_set;
	uint64_t lg_dt;
	struct dcand lg;	/* its longest wait in a system call */
	const char *lg_why;
	struct dslices sl;	/* as struct diag's */
};

struct diag {
	struct graph *g;
	struct diag_opts o;
	DARR(struct dhang) h;
	uint64_t last_ts;		/* the last event of the graph */
	struct hmap idle;		/* thread -> its idle wait key + 1 */
	struct hmap loops;		/* thread -> 1: that wait is an
					   event loop's */
	struct hmap peers;		/* vertex -> its peer set's hash + 1
					   (diag-similar.c, memoized) */
	DARR(struct delf) elfs;		/* files read for symbols */
	char *why;			/* why no hang was found, or NULL */
	struct dslices sl;		/* the longest timed slices of a
					   thread not named (from_kernel()) */
	const struct dscan *hist;	/* the idle waits of the whole trace
					   (diag-scan.c), or NULL */
	const struct dcand *cand;	/* the hangs to make (diag_listed_hangs),
					   or NULL: find them */
	size_t ncand;
	int needs_ends;			/* an answer read the trace's first
					   or last events (a rule about what a
					   thread did when the recording began
					   or ended): a window of the trace
					   must reach both (diag-window.c) */
};

/* diag-path.c: the critical path of thread ti over [a, b], walked back
   from b along wake-ups, into out (at most max steps, the first ti's);
   *stop gets why it ends (enum diag_cstop). Returns the steps. */
size_t diag_critical_path(const struct graph *g, uint32_t ti, uint64_t a,
    uint64_t b, uint64_t last_ts, struct diag_cstep *out, size_t max,
    int *stop);

/* The critical path of wait dw over its span, as steps (struct
   diag_step, the waiter first, each one's waker next) appended to out,
   a DARR of struct diag_step; returns how many (0: it never ended). */
size_t diag_cpath_steps(const struct graph *g, const struct dwait *dw,
    uint64_t last_ts, void *out);
/* The same from the path cs (n steps) already walked over dw's span. */
void diag_cpath_as_steps(const struct graph *g, const struct dwait *dw,
    const struct diag_cstep *cs, size_t n, void *out);

/* diag-pathdiff.c: the verdicts of hang h's critical path steps against
   the path of the normal run's wait twin (NULL: none), and which steps
   the path alone names as culprits. */
void diag_path_compare(struct diag *d, struct dhang *h,
    const struct dwait *twin);
/* The culprits of h's critical path that the diff did not name, added
   to h->cul (or a note says why not). */
void diag_path_culprits(struct diag *d, struct dhang *h);

/* diag-swait.c: semantic waits (see there). */
/* Whether a call's result says it came back empty-handed: its timeout
   (0 of poll and epoll, EAGAIN of sigtimedwait and of a read with a
   receive timeout, ETIMEDOUT) or a signal (EINTR, or the kernel's
   restart codes the exit tracepoint sees). */
int diag_slice_empty(uint32_t nr, int64_t ret);
/* A wait in slices followed in time order by the streaming search
   (diag-scan.c), as diag_swait_next() judges one in a graph. */
struct dsem {
	int on;			/* being followed */
	int open;		/* its last slice came back empty: it may go
				   on */
	int handed;		/* its thread handed something on since */
	uint64_t a;		/* the first slice's blocking switch */
	struct graph_event en;	/* the first slice's entry */
	uint64_t key;		/* diag_res_key() of its entries */
	uint64_t exit_ts;	/* the last slice's exit */
	uint64_t end;		/* when the last slice ended */
};
/* Whether system call nr may wait in timed slices. */
int diag_sys_sliced(uint32_t nr);
/* The blocking switch of the slice that continues the wait at switch
   sw of thread ti, or GRAPH_NONE when that wait ended it. */
uint32_t diag_swait_next(const struct graph *g, uint32_t ti, uint32_t sw);
/* The first (last) slice's blocking switch of the semantic wait holding
   the wait at switch sw; *n (may be NULL) gets the slices from there to
   sw, sw counted. */
uint32_t diag_swait_first(const struct graph *g, uint32_t ti, uint32_t sw,
    uint32_t *n);
uint32_t diag_swait_last(const struct graph *g, uint32_t ti, uint32_t sw,
    uint32_t *n);
/* The semantic wait holding the wait at switch sw: diag_wait_at() of
   its last slice, widened to its first (diag_swait_widen()). */
void diag_swait_at(const struct graph *g, uint32_t ti, uint32_t sw,
    uint64_t last_ts, struct dwait *dw);
/* dw, a wait's last slice, made the semantic wait of n slices from the
   one at switch first (nothing when n <= 1). */
void diag_swait_widen(const struct graph *g, struct dwait *dw,
    uint32_t first, uint32_t n);

/* diag-path.c: who ended thread ti's wait where it ran again at event
   run: a user thread (returned, *wts the time it did, *edge how: enum
   diag_cedge; a softirq's delivery or a kernel worker's run counts as
   the thread behind it), else GRAPH_NONE with *stop saying why there is
   none (its own timer, a device's interrupt, nothing recorded). */
uint32_t diag_waker_of(const struct graph *g, uint32_t ti, uint32_t run,
    uint64_t *wts, int *edge, int *stop);

/* diag-pwait.c: the longest wait of process pid as a whole, of at least
   min_ns: a gap between two crossings of its border (a wake-up, message,
   pipe data, signal or spawn between one of its user threads and one of
   another process) that ends with one in, while its threads ran for at
   most a tenth of it. Returns 1 with *dw the wait of the thread that
   crossing woke, from its first blocking wait in the gap (the slices:
   its waits there), else 0. */
int diag_pwait_longest(const struct graph *g, uint32_t pid, uint64_t min_ns,
    uint64_t last_ts, struct dwait *dw);

/* diag.c */
/* A thread as the notes name it: "comm (tid)", "host:comm (tid)" in a
   merged trace (the tid its host knows), in b. */
struct dwho { char s[96]; };
const char *diag_who(const struct graph *g, uint32_t ti, struct dwho *b);
void diag_thread_fill(const struct graph *g, uint32_t ti,
    struct diag_thread *t);
/* diag-wait.c: the wait whose blocking switch is event sw of thread
   ti. */
void diag_wait_at(const struct graph *g, uint32_t ti, uint32_t sw,
    uint64_t last_ts, struct dwait *dw);
/* Index of the event ending the wait whose blocking switch is event sw
   of thread ti: its switch back in, or, when that switch was lost, the
   first event the thread did itself; the thread's event count if the
   wait never ended. */
uint32_t diag_wait_end(const struct graph *g, uint32_t ti, uint32_t sw);

/* Key of a wait resource from its syscall entry: syscall, resource, kind. */
uint64_t diag_res_key(const struct graph_event *enter);

/* What event e adds to the run before a wait that a similar node's
   signature hashes (diag-similar.c, and the pass's library of similar
   nodes, diag-scan-sim.c): a system call entry, a user event that is
   no mark, probe or hang bracket; 0 for any other. */
static inline uint64_t
diag_run_item(const struct graph_event *e)
{
	if (e->type == TT_SYS_ENTER)
		return 1000 + e->aux;
	if (e->type == TT_USER && e->sub != TU_MARK && e->sub != TU_PROBE &&
	    e->sub != TU_HANG_BEGIN && e->sub != TU_HANG_END)
		return 100 + e->sub;
	return 0;
}

/* Cursor over the waits of a thread that sit in a syscall and ended. */
struct dwaits {
	uint32_t i;		/* next event to look at */
	uint32_t enter;		/* the wait's syscall entry */
	uint32_t sw, end;	/* its switch, and the event that ends it */
};
#define DWAITS_INIT { 0, GRAPH_NONE, GRAPH_NONE, GRAPH_NONE }

/* Move w to the next such wait of thread ti; 0 when there is none. */
int diag_next_wait(const struct graph *g, uint32_t ti, struct dwaits *w);
/* The wait of thread ti overlapping [a, b] the most, or 0. */
int diag_wait_overlapping(const struct diag *d, uint32_t ti, uint64_t a,
    uint64_t b, struct dwait *dw, uint64_t *overlap);
/* The timed slices of thread ti (diag_poll_timed_slice(): futex waits
   on one word back to back, each but the last ended by its timeout)
   overlapping [a, b] the most, taken together: 1 with *w the last
   slice's wait, *start the first's start and *overlap theirs; 0 when
   no run of two slices or more overlaps it. */
int diag_slices_overlapping(const struct diag *d, uint32_t ti, uint64_t a,
    uint64_t b, struct dwait *w, uint64_t *start, uint64_t *overlap);
/* Time thread ti was running or runnable (not blocked) within [a, b]. */
uint64_t diag_cpu_time(const struct graph *g, uint32_t ti, uint64_t a,
    uint64_t b);
/* First event of thread ti at or after ts. */
uint32_t diag_event_at(const struct graph *g, uint32_t ti, uint64_t ts);
/* Time of the first event of the run vertex v belongs to: its thread's
   first event after the wait before v (a similar node's signature and
   peers cover that run). */
uint64_t diag_run_start(const struct graph *g, uint32_t v);
/* The first event of the run of thread ti that ends in its wait at
   switch sw. */
uint32_t diag_run_first(const struct graph *g, uint32_t ti, uint32_t sw);
/* The other processes at the other end of the socket, pipe and eventfd
   messages (sent or received) of thread ti's events [from, sw), into
   pid (at most max, sorted, each once); returns how many. */
size_t diag_run_peers(const struct graph *g, uint32_t ti, uint32_t from,
    uint32_t sw, uint32_t *pid, size_t max);
/* Similar nodes of a blocked wait; fills h->sim. */
void diag_find_similar(struct diag *d, struct dhang *h);
void dnote(struct dhang *h, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void ddead(struct dhang *h, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int diag_user_thread(const struct graph *g, uint32_t ti);
/* Whether system call nr's result ret says "not now, try again". */
static inline int
diag_try_again(uint32_t nr, int64_t ret)
{
	if (ret == -EAGAIN || ret == -EBUSY || ret == -EALREADY)
		return 1;
	return nr == SYS_connect && (ret == -ECONNREFUSED ||
	    ret == -ENOENT || ret == -EINPROGRESS);
}
/* Whether thread ti is selected by the options (main_only: and is the
   main thread of its process when no thread or name is given). */
int diag_selected(const struct diag *d, uint32_t ti, int main_only);

/* The state bits of a switch out (its sub) for a stopped and a traced
   task, as sched_switch reports them. */
#define DIAG_TASK_STOPPED	0x4
#define DIAG_TASK_TRACED	0x8

/* Whether event e shows its thread on a CPU: anything it did itself in
   task context (not a stack or a record written on its behalf). */
static inline int
diag_own_activity(const struct graph_event *e)
{
	if (e->type == TT_STACK || (e->flags & GRAPH_EVF_CTX) != 0)
		return 0;
	if (e->type == TT_USER && (e->sub == TU_HANG_BEGIN ||
	    e->sub == TU_FLAG_WRITE || e->sub == TU_FLAG_READ))
		return 0;
	return 1;
}

/* Key of a wait for grouping: system call and resource (0: none). */
uint64_t diag_wait_key(const struct graph *g, const struct dwait *dw);
/* Key of thread ti's idle wait (for work or input): its event-loop wait
   (poll and the like, on the same resource at least 3 times) if it has
   one, else the poll-like call it waited in both when the recording
   started and at its end, else the wait it spends the most time in,
   among waits shorter than the threshold. */
uint64_t diag_idle_key(struct diag *d, uint32_t ti);
/* Whether thread ti's idle wait is an event loop's (see above). */
int diag_event_loop(struct diag *d, uint32_t ti);

/* Wake-ups of thread ti's long waits in [a, b] done from another
   context (interrupt, kernel worker), attributed to the thread behind
   them; appended to h->wk. */
void diag_wakeups_of(struct diag *d, struct dhang *h, uint32_t ti,
    uint64_t a, uint64_t b);

/* diag.c (hangs made by diag-hang.c and diag-poll.c) */
/* The hangs of d moved (sorted, their array grown): their cycles point
   to their own thread ids again. */
void diag_hangs_moved(struct diag *d);
/* A new hang of thread ti over [a, b] appended to d (not classified). */
struct dhang *diag_new_hang(struct diag *d, uint32_t ti, uint64_t a,
    uint64_t b, int src);

/* diag-wait.c */
/* Fill w's syscall, type and resource from a system call entry. */
void diag_describe_sys(const struct graph *g, const struct graph_event *en,
    struct diag_wait *w);

/* diag-poll.c */
/* Whether the wait of thread ti entered at event enter, blocking at
   switch sw, waits for a file lock (flock(2), or a lock attempt the
   kernel queued behind its holder). */
int diag_lock_wait(const struct graph *g, uint32_t ti, uint32_t enter,
    uint32_t sw);
/* Whether thread ti handed something to another thread or process just
   before the wait entered at event enter (woke or signalled a user
   thread, started one): a request/reply wait. Unless replies is set,
   what went only back to the processes whose message or wake-up
   started that stretch is an answer, not a request. */
int diag_outstanding(const struct graph *g, uint32_t ti, uint32_t enter,
    uint64_t threshold, int replies);
/* Whether a system call's exit makes it a timed slice: a futex wait
   that ended by its own timeout. Waited on again at once, on the same
   futex, it is how a thread waits for a lock or a turn in slices (a
   Java monitor's backoff, CPython's global interpreter lock). */
static inline int
diag_poll_timed_slice(uint32_t nr, int64_t ret)
{
	return nr == SYS_futex && ret == -ETIMEDOUT;
}
/* Whether a call between two timed slices on a futex (entered at
   enter, its exit at exit with ret) is a lock taken quickly on the way, which
   does not end the slices: a futex call (another word) of at most
   DIAG_SLICE_GAP, as an interpreter takes its global lock again after
   each slice (CPython's lock.acquire(timeout) in a loop). */
static inline int
diag_quick_lock(uint32_t nr, uint64_t enter, uint64_t exit, int64_t ret)
{
	/* a wait on it that timed out is a slice of another wait (for
	   that lock, in slices of its own) */
	return nr == SYS_futex && exit - enter <= DIAG_SLICE_GAP &&
	    ret != -ETIMEDOUT;
}
/* Whether the user named the threads to diagnose (--pid, --tid,
   --comm): they say it hung. Only then are timed slices a hang: a
   daemon's main loop waiting for work in slices (a queue read with a
   timeout, again and again) is idle, and one long wait in its place
   would be no hang either. */
static inline int
diag_opts_named(const struct diag_opts *o)
{
	return o->pid != 0 || o->tid != 0 || o->comm != NULL;
}
/* A polling stretch being followed: the same failing non-blocking
   operation retried after timed waits, or timed slices back to back. */
struct dpoll_stretch {
	uint32_t first;		/* exit of the first failed attempt */
	uint32_t enter;		/* its entry */
	uint32_t last;		/* exit of the last one */
	uint32_t n;		/* failed attempts */
	uint64_t res;		/* diag_res_key of the attempt */
	int timed;		/* a timed wait since the last attempt */
	int slices;		/* timed slices (diag_poll_timed_slice()) */
};
struct dpoll_found {
	struct dpoll_stretch s;
	uint64_t end;
};
/*
 * The polling stretches of one thread, followed by the pass over its
 * events in diag-hang.c: diag_poll_step() with each event i and the
 * system call it is in (entered at event enter, or GRAPH_NONE), before
 * the pass takes i into account.
 */
struct dpoll {
	uint32_t ti;
	struct dpoll_stretch s;
	DARR(struct dpoll_found) found;	/* stretches past the threshold */
	struct dslices us;		/* slices when no thread is named */
};
void diag_poll_init(struct dpoll *p, uint32_t ti);
void diag_poll_exit(struct diag *d, struct dpoll *p, uint32_t enter,
    uint32_t i);
void diag_poll_wait(struct diag *d, struct dpoll *p, uint32_t enter,
    uint32_t i);
static inline void
diag_poll_step(struct diag *d, struct dpoll *p, uint32_t enter, uint32_t i)
{
	const struct graph_event *e = &d->g->th[p->ti].ev[i];

	if (enter == GRAPH_NONE)
		return;
	if (e->type == TT_SYS_EXIT && (p->s.first != GRAPH_NONE ||
	    p->us.n != 0 ||
	    diag_try_again(d->g->th[p->ti].ev[enter].aux, (int64_t)e->key) ||
	    diag_poll_timed_slice(d->g->th[p->ti].ev[enter].aux,
	    (int64_t)e->key)))
		diag_poll_exit(d, p, enter, i);
	else if (p->s.first != GRAPH_NONE && e->type == TT_SWITCH &&
	    (e->flags & GRAPH_EVF_WAIT))
		diag_poll_wait(d, p, enter, i);
}
/* After the last event: the stretches past the threshold become yield
   hangs, in time order; frees what p holds. */
void diag_poll_end(struct diag *d, struct dpoll *p);
/* The thread holding a file lock on inode ino at time at for an owner
   other than owner (folded as in the compact event), and in *ev the
   event where it took it; GRAPH_NONE when none is recorded. */
uint32_t diag_lock_holder(const struct graph *g, uint64_t ino,
    uint32_t owner, uint64_t at, uint32_t *ev);
/* When hang h is a blocked or polling file lock attempt: 1 and its
   holder as a culprit in *c (its wait in *w when blocked), with a note
   naming the lock; else 0. */
int diag_lock_culprit(struct diag *d, struct dhang *h,
    struct diag_culprit *c, struct dwait *w);

/* diag-wait.c: whether system call nr is a poll-like wait (poll,
   select, epoll), a wait for a child, a wait for a signal (sigsuspend,
   sigtimedwait, pause). */
int diag_sys_poll(uint32_t nr);
int diag_sys_sleep(uint32_t nr);	/* nanosleep, clock_nanosleep */
int diag_sys_child(uint32_t nr);
int diag_sys_sigwait(uint32_t nr);

/* diag-scan.c */
/*
 * One streaming pass over the events of r from its position to its end:
 * the candidate hangs of the whole trace under options o (those the
 * history alone decides, and the waits that need the graph to decide),
 * the idle wait of every thread, and the longest wait for a report
 * without hangs. Memory grows with threads and resources, not events.
 * Returns 0 (it cannot fail); free with diag_scan_free().
 */
int diag_scan(struct trace_reader *r, const struct rules *rules,
    const struct diag_opts *o, struct dscan *out);
void diag_scan_free(struct dscan *sc);

/* diag-hang.c */
/* The hangs of d (not analysed yet), in time order. */
void diag_find_hangs(struct diag *d);
/*
 * The hangs of candidates d->cand made in d's graph (a window around
 * them) as the search of the whole graph makes them; a candidate whose
 * thread, events or system call are outside the graph makes nothing,
 * nor a wait of rank 1 the graph says is idle. Each hang's cand is the
 * index of its candidate.
 */
void diag_listed_hangs(struct diag *d);
/* The why of a report without hangs: nsel threads chosen, nwaits waits
   considered, the longest (thread ti, blocking switch sw, dt long) not
   a hang for reason why (NULL: no wait in a system call). */
char *diag_why_text(const struct graph *g, uint32_t ti, uint32_t sw,
    uint64_t last_ts, size_t nsel, size_t nwaits, uint64_t dt,
    const char *why);
/* diag-poll.c */
/* The polling hang of thread ti: first attempt's entry enter and exit
   first, last attempt's exit last, n attempts, ending at end. */
struct dhang *diag_poll_hang(struct diag *d, uint32_t ti, uint32_t enter,
    uint32_t first, uint32_t last, uint32_t n, uint64_t end);

/*
 * Of two hangs, x explained by y (x's thread is a culprit of y during
 * x): whether x goes after y in the report. Not when they explain each
 * other (y_by_x: a circular wait) and x, not y, was broken by its own
 * timeout: which of two threads waiting for each other blocks first is
 * a race, the one whose timeout broke the cycle is the hang. Used by
 * diag_find_hangs() and the streaming search alike.
 */
static inline int
diag_goes_after(int y_by_x, int x_timed_out, int y_timed_out)
{
	return !(y_by_x && x_timed_out && !y_timed_out);
}

/* diag-simwin.c */
struct diag_rate;
/* The trace's events over time, from its chunk index. */
struct diag_rate *diag_rate_new(struct trace_reader *r);
void diag_rate_free(struct diag_rate *dr);
/* The events of r in [from, to), about: each chunk's spread evenly over
   its time. */
double diag_rate_events(const struct diag_rate *dr, uint64_t from,
    uint64_t to);

/* A tile's graph: the tile [from, to]; each window around a similar
   node runs from pad before its run to after after its wait; max: the
   graph's bound of events; least: the events its windows may hold
   whatever the tile leaves; last: the trace's end. */
struct diag_simwin {
	uint64_t from, to, pad, after, max, least, last;
};
/*
 * The windows of the graph of the tile o->from, o->to for candidates
 * c[0..nc): the tile, and a window around each of their similar nodes
 * outside it (struct dcand's sim, the ranks the graph may give them
 * first (simprio), each taken while the events
 * of all of them stay within what the tile leaves of o->max and a
 * quarter of it, o->least at least), joined where they would overlap
 * or where a window's lead, o->pad at most, reaches into the one before
 * (a tile's whole lead would fill the gap to the windows before it). In
 * time order;
 * how many into *n; the array is the caller's to free.
 */
uint64_t (*diag_sim_windows(const struct diag_rate *dr,
    const struct dcand *const *c, size_t nc, const struct diag_simwin *o,
    size_t *n))[2];

/* diag-window.c */
/* Events of the chunks that overlap [from, to). */
uint64_t diag_window_events(struct trace_reader *r, uint64_t from,
    uint64_t to);
/* The most events a window may hold (DIAG_WINDOW_MAX_EVENTS, or
   ARGUS_WINDOW_MAX_EVENTS). */
uint64_t diag_window_max(void);
/* The largest window around at that holds at most max events, four
   fifths of them before at, found by chunks; 0 when the trace has no
   time. */
int diag_budget_window(struct trace_reader *r, uint64_t at, uint64_t max,
    uint64_t *from, uint64_t *to);
/* Hang i of d rests on a window that could not grow as its answer asks
   (want events, over max): a note says which part of the trace (first,
   last: the trace's) answered. */
void diag_note_limited(struct diag *d, size_t i, uint64_t first,
    uint64_t last, uint64_t want, uint64_t max);
/* Widen [*lo, *hi] to the times the steps v[0..n) of one slice rest on
   in d's window: theirs, and the window's start when the slice stops at
   a thread that was blocked since before it (diag-slice.c). */
void diag_span_steps(const struct diag *d, const struct diag_step *v,
    size_t n, uint64_t *lo, uint64_t *hi);
/* diag_window_short() for hang i of d alone (its decision also read
   what lies after lo). */
int diag_window_short_hang(const struct diag *d, size_t i, uint64_t lo,
    uint64_t *from, uint64_t *to);
/* The same for a decision that read the events in [lo, hi]. */
int diag_window_short_span(const struct diag *d, uint64_t lo, uint64_t hi,
    uint64_t *from, uint64_t *to);

/* diag-api.c */
/* diag_new() with the idle waits of the whole trace (hist, or NULL) and
   the hangs to make (cand, n of them; NULL: find them). */
int diag_new_listed(struct graph *g, const struct diag_opts *o,
    const struct dscan *hist, const struct dcand *cand, size_t ncand,
    struct diag **out, char **cause);

/* diag-diff.c */
/* One level of the culprit recursion: the diagnosed thread, its node,
   its wait and the window [a, b] it waited (the hang, or the wait of a
   culprit). */
struct level {
	uint32_t ti;
	uint32_t node;
	struct dwait dw;
	uint64_t a, b;
};
/* A culprit found by the diff, with its wait when blocked. */
struct dculprit {
	struct diag_culprit c;
	struct dwait w;
	int holder;		/* named as the idle holder (diag-diff.c) */
	int sliced;		/* blocked in timed slices: w is the last,
				   its start the first's */
};
/* The diff of a level against path p (n steps): every thread on it (the
   diagnosed one excepted) busy or blocked on a wait other than its idle
   one during the window, in path order; appended to out, an array of
   struct dculprit (cleared first). Returns their number. */
size_t diag_diff_path(struct diag *d, const struct level *lv,
    const struct diag_step *p, size_t n, void *out);
/* Of p, a level's own critical path (n steps: the waiter, then each
   one's waker), the steps up to the first thread the diff names: the
   culprit of this level; what lies beyond it explains that culprit,
   at the next depth. n when the diff names none. */
size_t diag_diff_cut(struct diag *d, const struct level *lv,
    const struct diag_step *p, size_t n);

/* diag-analyze.c */
/* Critical path, slice, diff, culprits, cycle, wake-ups, stacks of hang
   h (after the pick). */
void diag_analyze(struct diag *d, struct dhang *h);
void diag_clear_results(struct dhang *h);

/* The culprit of h that names culprit i's thread first: the one at the
   lowest depth (then the first); i itself when it is (diag_culprit_first
   without the public handle, for the stages). */
static inline size_t
diag_cul_first(const struct dhang *h, size_t i)
{
	size_t best = i;

	for (size_t k = 0; i < h->cul.n && k < h->cul.n; k++)
		if (h->cul.v[k].th.thread == h->cul.v[i].th.thread &&
		    (h->cul.v[k].depth < h->cul.v[best].depth ||
		    (h->cul.v[k].depth == h->cul.v[best].depth && k < best)))
			best = k;
	return best;
}

/* diag-stacks.c */
/* The stacks of hang h into h->stk (after its culprits and critical
   path): the hung thread's, its waker's at the wake-up that ended its
   wait, each culprit's and its waker's; symbolized from the recorded
   mappings of each stack's process and the ELF files they map. */
void diag_stacks(struct diag *d, struct dhang *h);
/* Frees the symbol arrays of h->stk. */
void diag_free_symbols(struct dhang *h);

/* diag-slice.c */
/* The slice of hang h's picked normal wait twin into h->path. */
void diag_slice_twin(struct diag *d, struct dhang *h,
    const struct dwait *twin);
/* A busy hang's walk back from its node to the input or the thread that
   started the work: h->path, h->cause_node, h->cause_th. */
void diag_slice_busy(struct diag *d, struct dhang *h);
/* Beam slice from a wait's normal twin (or its own wake-up), the
   diagnosed thread being self (its vertices before since end a path;
   horizon 0: the default look-back); appends the steps to out (a
   DARR of struct diag_step) and their event limits to *lims, and a
   dead end named what to h when the chain ends nowhere. Returns 0 when
   there was nothing to slice from. */
int diag_slice_wait(struct diag *d, struct dhang *h,
    const struct dwait *from, uint32_t self, uint64_t since,
    uint64_t horizon, void *out, uint32_t **lims, size_t *nlims,
    const char *what);
/* The normal twin of the wait of level lv (its most recent similar
   node) in *twin, and the horizon of a slice from it in *hz. Returns 0
   when the wait has no similar node. */
int diag_culprit_twin(struct diag *d, const struct level *lv,
    struct dwait *twin, uint64_t *hz);

/* diag-recurse.c */
/* Appends culprit c to h with its depth and the index of the culprit it
   explains (SIZE_MAX: the hang itself). */
void diag_add_culprit(struct dhang *h, struct diag_culprit *c,
    unsigned depth, size_t parent);
/* The culprits of hang h from level lv (the hang's wait) diffed against
   path p (n steps), then those of every blocked culprit, breadth first,
   until a node is not blocked, a thread repeats in its own chain (a
   circular wait: h's cycle, with the timeout that breaks it) or the
   bounds are reached. */
void diag_recurse(struct diag *d, struct dhang *h, const struct level *lv,
    const struct diag_step *p, size_t n);

#endif
