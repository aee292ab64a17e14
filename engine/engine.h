/*
 * engine.h: the event graph of argus, the one public interface of engine/.
 *
 * A graph is built in two passes. The load pass turns trace events into a
 * compact per-thread form (struct graph_event, about 24 bytes each): every
 * thread gets an array of its own events in time order, interrupt and
 * softirq sequences go to one pseudo-thread per CPU ("irq/N"), a context
 * switch becomes a wait (or preemption) event in the thread leaving the
 * CPU and a "run" event in the thread taking it. The build pass, which
 * depends on a rules set (struct rules), cuts each thread's events into
 * vertices (contiguous index ranges) and connects them with edges; it can
 * be run again on the same loaded events when the rules change. The first
 * build runs alongside the load, event by event.
 *
 * Vertices, threads and edges are named by dense indices (uint32_t). Edge
 * lookups are CSR style: the out-edges and the in-edges of a vertex are
 * each a contiguous list of edge indices.
 *
 * Error convention: functions that can fail return 0 or a positive code
 * (errno value or enum graph_error); graph_strerror() turns it into text;
 * many also fill *cause (when not NULL) with an allocated sentence.
 */
#ifndef ARGUS_ENGINE_H
#define ARGUS_ENGINE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace/trace.h"

enum graph_error {
	GRAPH_EBASE = 11000,
	GRAPH_ESYNTAX,		/* malformed rules line */
	GRAPH_ERANGE,		/* index out of range */
	GRAPH_ETOOBIG,		/* more than 2^32-2 events, vertices or edges */
	GRAPH_ETRACE,		/* the trace reader failed */
};

/* Text for an error code (errno or enum graph_error). */
const char *graph_strerror(int err);

#define GRAPH_NONE UINT32_MAX

/* --- rules (argus-rules(5)) -------------------------------------------- */

struct rules;

/* An empty rules set. */
struct rules *rules_new(void);
void rules_free(struct rules *rs);

/*
 * Parse rules text and append its rules to rs. fname names the text in
 * messages. On a malformed line, returns GRAPH_ESYNTAX with *cause set to
 * "FILE:LINE:COL: message" and leaves rs unchanged (all or nothing).
 */
int rules_parse(struct rules *rs, const char *text, const char *fname,
    char **cause);
/* Read a file and rules_parse() it. */
int rules_load_file(struct rules *rs, const char *path, char **cause);
/* Append the default rules shipped with argus (0, or an error with
   *cause set should they ever not parse). */
int rules_add_defaults(struct rules *rs, char **cause);
/* The text of the default rules. */
const char *rules_default_text(void);
/* Number of rules in a set. */
size_t rules_count(const struct rules *rs);
/* Write the rules back as text, one per line (normalised). */
void rules_write(const struct rules *rs, FILE *f);

/* --- building ---------------------------------------------------------- */

struct graph;

/*
 * Build a graph from an array of events in time order (as a reader returns
 * them) and a thread table. rules may be NULL (no rules at all). The
 * events are copied; neither array is needed afterwards.
 */
int graph_build_events(const struct trace_event *evs, size_t n,
    const struct trace_thread *threads, size_t nthreads,
    const struct rules *rules, struct graph **out, char **cause);

/* Build a graph from every event of an open reader, from its position. */
int graph_build(struct trace_reader *r, const struct rules *rules,
    struct graph **out, char **cause);

/*
 * Build a graph from the events of r in [from, to] (absolute ns) only:
 * the graph of a trace that began at from and ended at to, except that
 * the metadata records before from (descriptors, mappings, names) and
 * the thread records after to count as in the whole trace, the system
 * calls threads are in at from and the timers and work items they set
 * that are pending at from are loaded from a lead before it, and times
 * are told from the trace's first event. A window holding the whole
 * trace is the whole build (graph_build() from its start). Moves r.
 */
int graph_build_window(struct trace_reader *r, const struct rules *rules,
    uint64_t from, uint64_t to, struct graph **out, char **cause);
/*
 * Build one graph of n windows of r (win[k] = { from, to }, in time
 * order, apart), each one as graph_build_window() builds it: the graph's
 * part of a window is the graph of that window alone (its vertices and
 * edges; a thread's events of each window are a segment that no scan
 * of the diagnosis crosses), and the threads are the same in all.
 * GRAPH_ERANGE when the windows overlap or are out of order. Moves r.
 */
int graph_build_windows(struct trace_reader *r, const struct rules *rules,
    const uint64_t (*win)[2], size_t n, struct graph **out, char **cause);
/*
 * A wait in one system call that a pass over the trace saw begin before
 * a window of a graph and go on into it: its thread's entry (of which
 * the load reads the first GRAPH_SEED_NARGS arguments) and its blocking
 * switch (arg[1], the thread taking the CPU, 0), and when it ran again.
 */
#define GRAPH_SEED_NARGS 4
struct graph_seed {
	struct trace_event enter, sw;
	uint64_t end;
};
/*
 * graph_build_windows(), and the waits seeds[0..nseeds) loaded before
 * a window they began before and end in or after, when they began
 * after the window before it: the entry where the window's lead does
 * not hold it, and the switch, so that the wait is whole in the graph
 * as in the whole build even when the window opens long after it
 * began.
 */
int graph_build_seeded(struct trace_reader *r, const struct rules *rules,
    const uint64_t (*win)[2], size_t n, const struct graph_seed *seeds,
    size_t nseeds, struct graph **out, char **cause);
/* The window a graph was built over: 0 and UINT64_MAX for a whole
   build; of several windows, from the first one's start to the last
   one's end. */
void graph_window(const struct graph *g, uint64_t *from, uint64_t *to);

/*
 * Recompute vertices and edges with another rules set, reusing the loaded
 * events. Indices from before are invalid afterwards.
 */
int graph_rebuild(struct graph *g, const struct rules *rules, char **cause);

void graph_free(struct graph *g);

/* --- threads ----------------------------------------------------------- */

/* Flags of struct graph_thread. */
#define GRAPH_THREAD_KERNEL	0x1	/* kernel thread */
#define GRAPH_THREAD_IRQ	0x2	/* interrupt pseudo-thread of a CPU */
#define GRAPH_THREAD_IGNORED	0x4	/* ignored by a rule: no vertices */
#define GRAPH_THREAD_CULLED	0x8	/* culled by a rule: no edges */
#define GRAPH_THREAD_BATCH	0x10	/* its process is a batch server */
#define GRAPH_THREAD_MARKS	0x20	/* it has hang marks (TU_HANG_*) */

/* Pseudo thread ids of the per-CPU interrupt threads. */
#define GRAPH_IRQ_TID_BASE 0xfff00000u

struct graph_thread {
	uint32_t tid;
	uint32_t pid;			/* 0 for interrupt pseudo-threads */
	uint32_t flags;			/* GRAPH_THREAD_* */
	uint32_t nevents;
	uint32_t nvertices;
	const char *comm;		/* thread name */
	const char *process;		/* name of its process */
};

size_t graph_nthreads(const struct graph *g);
/* Thread i (0 <= i < graph_nthreads), or NULL; valid until the next
   graph_rebuild() or graph_free(). */
const struct graph_thread *graph_thread(const struct graph *g, uint32_t i);
/* The host of thread i of a merged trace's graph, or NULL for one
   trace's (its tid and pid on that host: trace_tid_local()). */
const char *graph_thread_host(const struct graph *g, uint32_t i);
/* Index of the thread with a tid, or GRAPH_NONE. */
uint32_t graph_thread_find(const struct graph *g, uint32_t tid);
/* The vertices of a thread in time order; *n gets their number. */
const uint32_t *graph_thread_vertices(const struct graph *g, uint32_t thread,
    size_t *n);

/* --- events ------------------------------------------------------------ */

/* Extra event types of the compact form (beyond enum trace_type). */
#define GRAPH_EV_RUN	200	/* the thread got a CPU (key: previous tid) */

/* Flags of struct graph_event. */
#define GRAPH_EVF_CTX	0x3	/* enum trace_ctx of the original event */
#define GRAPH_EVF_WAIT	0x4	/* TT_SWITCH: the thread blocked (a wait) */
#define GRAPH_EVF_FDRES	0x8	/* TT_SYS_ENTER: key is the fd's inode, sub
				   its enum trace_fd kind */
#define GRAPH_EVF_INSYS	0x10	/* TT_SWITCH: key/aux are the wait
				   resource (a0) and syscall nr */
#define GRAPH_EVF_LOCK	0x20	/* TT_SYS_ENTER of futex, and the TT_SWITCH
				   of its wait: a contended lock taken (a
				   wait for the word's "locked, waiters"
				   value 2, or a priority-inheritance lock) */
#define GRAPH_EVF_PRIVATE 0x40	/* TT_SYS_ENTER of futex: a private one
				   (FUTEX_PRIVATE_FLAG), which only threads
				   of the caller's process wake */

/*
 * One event in compact form. type is enum trace_type or GRAPH_EV_RUN.
 * key and aux by type:
 *   TT_SWITCH       key wait resource, aux syscall nr (GRAPH_EVF_INSYS),
 *                   sub prev_state (low bits)
 *   GRAPH_EV_RUN    key tid that left the CPU, aux CPU
 *   TT_WAKING, TT_WAKEUP_NEW, TT_SIGNAL_GEN, TT_FORK
 *                   key index of the target thread, aux target CPU/sig
 *   TT_SYS_ENTER    key a0 (or inode, GRAPH_EVF_FDRES), aux nr
 *   TT_SYS_EXIT     key ret (as int64), aux nr
 *   TT_USER         key key, sub kind, aux name string id (0 none)
 *   TT_IRQ_ENTRY    key irq, aux name string id
 *   TT_WQ_QUEUE     key work, aux workqueue name string id
 *   TT_STACK        key offset of frames, sub kind (enum
 *                   trace_stack_kind), aux number of frames (bits
 *                   0-7) | for TSK_WAKER the thread woken + 1 (bits
 *                   8-31, 0: unknown): graph_stack(), graph_stack_about()
 *   sockets         key sk, aux ret
 *   timers          key timer, aux kind
 *   TT_SOFTIRQ_RAISE key vec, aux CPU
 *   TT_FILELOCK     key inode, sub op (enum trace_filelock_op, bits 0-2)
 *                   | type (TRACE_FL_*, bits 3-4) | result (bits 5-6,
 *                   GRAPH_FL_*), aux the
 *                   owner folded to 32 bits
 *   others          key first field
 */
/* Result classes of a TT_FILELOCK compact event (sub >> 5). */
#define GRAPH_FL_OK	0	/* taken (or released) */
#define GRAPH_FL_AGAIN	1	/* conflict, non-blocking: EAGAIN */
#define GRAPH_FL_BLOCKED 2	/* queued behind the holder (a blocking
				   attempt that waits) */
#define GRAPH_FL_ERR	3	/* another error (EDEADLK, EINTR, ...) */

struct graph_event {
	uint64_t ts;
	uint64_t key;
	uint32_t aux;
	uint8_t type;
	uint8_t sub;
	uint16_t flags;
};

/* Event idx of a thread, or NULL. */
const struct graph_event *graph_event(const struct graph *g, uint32_t thread,
    uint32_t idx);
/* String of a string id (user event names, irq names), "" for 0. */
const char *graph_string(const struct graph *g, uint32_t id);
/* Frames of a TT_STACK event; *n gets their number. */
const uint64_t *graph_stack(const struct graph *g,
    const struct graph_event *ev, size_t *n);
#define GRAPH_STACK_NBITS 8
#define GRAPH_STACK_ABOUT_MAX (1u << 24)
/* The kernel function (TT_KSYM) holding kernel address addr of the
   host of thread or process tid (a merged trace's hosts each have their
   kernel), or NULL; *delta gets addr's distance from its start. */
const char *graph_ksym_at(const struct graph *g, uint32_t tid, uint64_t addr,
    uint64_t *delta);
/* Events looked at by graph_wait_stack() at most. */
#define GRAPH_WAIT_STACK_SCAN 4096
/* The stack a wait of thread left when its call returned (TSK_WAIT),
   looking from event idx (its blocking switch, or the event after a
   vertex that ends in it): until the thread, having returned, leaves the
   CPU again or makes another call after idx; NULL when none. */
const struct graph_event *graph_wait_stack(const struct graph *g,
    uint32_t thread, uint32_t idx);
/* The thread a waker's TT_STACK (TSK_WAKER) woke, or GRAPH_NONE. */
uint32_t graph_stack_about(const struct graph_event *ev);
/* One line describing an event ("sys_enter read(pipe:1234)", ...). */
void graph_event_describe(const struct graph *g,
    const struct graph_event *ev, char *buf, size_t len);

/* --- vertices ---------------------------------------------------------- */

enum graph_vertex_kind {
	GV_PLAIN = 0,		/* ordinary execution segment */
	GV_TASK,		/* a queued task (user thread pool) */
	GV_WORK,		/* a kernel work item */
	GV_CALLOUT,		/* a run-loop callout */
	GV_IRQ,			/* hard interrupt */
	GV_SOFTIRQ,		/* softirq */
	GV_TIMER,		/* timer expiry */
	GV_NKINDS
};

/* Flags of a vertex. */
#define GRAPH_VF_INPUT		0x1	/* holds a UI input event */
#define GRAPH_VF_WAIT		0x2	/* holds a wait */
#define GRAPH_VF_SPLIT		0x4	/* began at a split, not a wait */
#define GRAPH_VF_CULLWAKE	0x8	/* wake-ups from it are culled */

struct graph_vertex {
	uint32_t thread;	/* thread index */
	uint32_t first;		/* index of its first event in the thread */
	uint32_t nevents;
	uint8_t kind;		/* enum graph_vertex_kind */
	uint8_t flags;		/* GRAPH_VF_* */
	uint16_t spare;
};

size_t graph_nvertices(const struct graph *g);
/* Vertex v, or NULL when out of range. */
const struct graph_vertex *graph_vertex(const struct graph *g, uint32_t v);
/* Time span of a vertex: first and last event. */
uint64_t graph_vertex_start(const struct graph *g, uint32_t v);
uint64_t graph_vertex_end(const struct graph *g, uint32_t v);
/* The vertex of a thread (by tid) holding time ts: the last vertex that
   started at or before ts; GRAPH_NONE if none. */
uint32_t graph_vertex_at(const struct graph *g, uint32_t tid, uint64_t ts);
/* The vertex holding event idx of a thread, or GRAPH_NONE. */
uint32_t graph_vertex_of_event(const struct graph *g, uint32_t thread,
    uint32_t idx);
const char *graph_vertex_kind_name(unsigned kind);

/* --- edges ------------------------------------------------------------- */

enum graph_edge_kind {
	GE_WAKEUP = 0,		/* wake-up to the first event after the wait */
	GE_WAIT,		/* wait to the wake-up that ended it (weak) */
	GE_SEQ,			/* consecutive split segments of a thread (weak) */
	GE_MSG,			/* socket message send to receive */
	GE_REPLY,		/* request receive to reply send */
	GE_PIPE,		/* pipe, FIFO or eventfd write to read */
	GE_WORK,		/* kernel work queued to executed */
	GE_TASK,		/* user task submit to begin */
	GE_RUNLOOP,		/* run-loop submit to callout */
	GE_TIMER,		/* timer armed to expired */
	GE_FLAG,		/* shared flag write to next read */
	GE_SIGNAL,		/* signal generated to delivered */
	GE_SPAWN,		/* fork to the child's first run */
	GE_USER,		/* a "connect" rule */
	GE_RAISE,		/* softirq raised to its run on that CPU */
	GE_NKINDS
};

#define GRAPH_EF_WEAK	0x1

struct graph_edge {
	uint32_t src, dst;		/* vertices */
	uint32_t src_ev, dst_ev;	/* event indices in their threads */
	uint8_t kind;			/* enum graph_edge_kind */
	uint8_t flags;			/* GRAPH_EF_* */
	uint16_t spare;
};

size_t graph_nedges(const struct graph *g);
const struct graph_edge *graph_edge(const struct graph *g, uint32_t e);
/* Out-edges of v as edge indices (for graph_edge()), in time order of
   their targets; *n gets their number. */
const uint32_t *graph_out_edges(const struct graph *g, uint32_t v,
    size_t *n);
/* In-edges of v as edge indices, likewise. */
const uint32_t *graph_in_edges(const struct graph *g, uint32_t v, size_t *n);
const char *graph_edge_kind_name(unsigned kind);
int graph_edge_kind_weak(unsigned kind);

/* --- summaries --------------------------------------------------------- */

struct graph_stats {
	uint64_t events;		/* events in compact form */
	uint64_t trace_events;		/* events read */
	uint64_t vertices;
	uint64_t edges;
	uint64_t edges_by_kind[GE_NKINDS];
	uint64_t vertices_by_kind[GV_NKINDS];
	uint64_t threads;		/* real threads with events */
	uint64_t processes;
	uint64_t messages;		/* socket, pipe and eventfd messages */
	uint64_t lost;			/* events the kernel lost */
	uint64_t load_ns;		/* reading and loading, with the build
					   streamed alongside */
	uint64_t build_ns;		/* finishing the build (or the whole
					   rebuild) */
	uint64_t memory;		/* bytes held by the graph */
};
void graph_get_stats(const struct graph *g, struct graph_stats *st);

/*
 * Overconnection suspects: vertices whose strong edges reach two or more
 * other user-space processes, or with strong edges coming from two or
 * more vertices.
 * Fills up to max vertex ids in order of decreasing score; returns how
 * many suspects there are in total.
 */
size_t graph_suspects(const struct graph *g, uint32_t *out, size_t max);
/* Number of distinct other user-space processes v talks to (strong). */
unsigned graph_vertex_peers(const struct graph *g, uint32_t v);
/* Number of distinct vertices with strong edges into v. */
unsigned graph_vertex_strong_in(const struct graph *g, uint32_t v);

/*
 * Check the invariants of a built graph: every event of a thread with
 * vertices is in exactly one vertex, in order; every edge names events
 * inside its vertices; wake-up, wait, message and timer edges point
 * forward in time; no vertex spans a wait outside a task or callout.
 * Returns 0, or GRAPH_ERANGE with *cause describing the first violation.
 */
int graph_check(const struct graph *g, char **cause);

/* One-line label of a vertex ("#17 1234 comm task at 1.250000 s, 12.5 ms,
   30 ev": start in seconds from the first event loaded). */
void graph_vertex_describe(const struct graph *g, uint32_t v, char *buf,
    size_t len);

/*
 * Write the neighbourhood of v up to depth edges away (both directions)
 * as a Graphviz digraph.
 */
void graph_write_dot(const struct graph *g, uint32_t v, unsigned depth,
    FILE *f);

/* --- diagnosis (engine/diag*.c; prefix diag_) ------------------------- */
/*
 * The diagnosis phase (argus-diagnose(1)): find the hangs of a graph,
 * classify each one's spinning node (busy, blocked, yield loop), match it
 * against similar normal nodes of the same thread, slice backward from
 * the picked normal node, diff that path against the hang to find the
 * culprits, and recurse into each culprit until a node is not blocked or
 * a thread repeats (a circular wait). A struct diag holds every result;
 * the text report, the JSON object and an interactive front end all read
 * the same accessors. Everything is computed on diag_new() and again on
 * diag_pick(); accessors never fail and never compute.
 *
 * Pointers returned (structs, names, text) stay valid until the next
 * diag_pick()/diag_add_node() on the same hang list or diag_free(); names
 * point into the graph, which must outlive the diag. Times are absolute
 * nanoseconds on the trace clock.
 */

struct diag;

/* Kind of a spinning node or of a culprit. */
enum diag_kind {
	DIAG_NONE = 0,		/* nothing wrong found (running normally) */
	DIAG_BUSY,		/* running or runnable past the threshold */
	DIAG_BLOCKED,		/* one long wait */
	DIAG_YIELD,		/* a yield loop: yields or short sleeps */
};
const char *diag_kind_name(int kind);	/* "busy", "blocked", ... */

/* Where a hang came from. */
enum diag_source {
	DIAG_SRC_MARK = 0,	/* the instrumentation's hang marks */
	DIAG_SRC_KERNEL,	/* found in kernel events alone */
	DIAG_SRC_USER,		/* the time given by the user (--at) */
	DIAG_SRC_NODE,		/* a vertex given by diag_add_node() */
};
const char *diag_source_name(int src);

struct hosts_report;

struct diag_opts {
	uint32_t pid;		/* threads of this process only; 0: any */
	uint32_t tid;		/* this thread only; 0: see pid/comm */
	const char *comm;	/* threads (or processes) of this name; NULL */
	uint64_t at;		/* absolute ns: diagnose this time; 0: find */
	uint64_t threshold_ns;	/* 0: 1 s */
	unsigned pick;		/* similar node to take, 1-based; 0: first */
	unsigned max_depth;	/* culprit recursion; 0: 8 */
	unsigned beam;		/* beam width of the backward slice; 0: 8 */
	uint64_t max_events;	/* diag_search(): the most events a graph
				   may hold (memory); 0: no bound */
	/* diag_search(): called on the searching thread once the pass
	   is over and after each graph of windows, with the candidate
	   hangs of the pass settled so far (made hangs, or found none)
	   of all; done only grows, and ends equal to total. NULL: none */
	void (*progress)(void *arg, uint64_t done, uint64_t total);
	void *progress_arg;
	int cpath_only;		/* reports: each hang and its critical path
				   alone (diagnose --critical-path) */
	struct diag_stats *stats;	/* diag_search(), diag_at_window():
					   where the time went, added to
					   when not NULL */
	unsigned stack_depth;	/* text reports: frames of a stack shown
				   (diagnose --stack-depth); 0: 12 */
	const struct hosts_report *hosts;	/* a merged trace's hosts,
					   said in reports; NULL */
};

/* Where a diagnosis spent its time (diagnose --stats). */
struct diag_stats {
	uint64_t pass_events, pass_ns;	/* the streaming pass (diag_search())
					   over the trace's events */
	uint64_t candidates;		/* the candidate hangs it found */
	uint64_t graphs;		/* graphs built (whole, or windows) */
	uint64_t graph_events;		/* events read into them */
	uint64_t load_ns, build_ns;	/* their reading and loading (the build
					   streamed alongside), and the ends
					   of their builds */
	uint64_t analysis_ns;		/* the diagnosis in them, with the
					   reports */
	uint64_t merge_ns;		/* several hosts' traces: reading
					   their messages, aligning them and
					   merging (hosts_merge()) */
	uint64_t merge_events;		/* the events of those traces */
};
/* Add the figures of graph g (one more graph built) to st. */
void diag_stats_add_graph(struct diag_stats *st, const struct graph *g);

/* What a thread waited for (blocked nodes and culprits). */
struct diag_wait {
	const char *syscall;	/* "futex", "read", ... or "" */
	const char *type;	/* mutex, condvar, semaphore, futex, pipe,
				   socket, tty, timerfd, sleep, poll, child,
				   open, filelock, signal, stopped, yield,
				   other (as in argus-diagnose(1)) */
	char resource[64];	/* "futex:0x7f12...", "pipe:4711", ... */
	int64_t result;		/* syscall return, or the user-level result */
	int has_result;		/* result is known (the wait ended) */
	int timed_out;		/* ended by its timeout (ETIMEDOUT, 0 of poll) */
	uint64_t timeout_ns;	/* its timeout when known (the user-level
				   value, or the length of a wait that
				   timed out), else 0 */
	uint32_t wait_ev;	/* event index of the blocking switch */
	uint32_t slices;	/* the calls it took, timed slices on one
				   resource (diag-swait.c); 0 or 1: one */
};

/* A thread as reports name it. */
struct diag_thread {
	uint32_t thread;	/* graph thread index */
	uint32_t pid, tid;	/* as the graph has them (trace_tid_local():
				   on their host) */
	const char *comm;
	const char *process;
	const char *host;	/* of a merged trace, or NULL */
};

struct diag_hang {
	struct diag_thread th;
	uint64_t start_ns, end_ns;	/* end: last event seen if it never
					   ended in the trace */
	int kind;			/* enum diag_kind */
	int source;			/* enum diag_source */
	int ended;			/* the hang ended within the trace */
	uint32_t node;			/* the spinning vertex */
	struct diag_wait wait;		/* DIAG_BLOCKED */
	uint32_t yields;		/* DIAG_YIELD: yields/short sleeps,
					   attempts refused, or timed slices */
	int slices;			/* DIAG_YIELD: one futex waited on in
					   timed slices until woken (yields of
					   them ended by their timeout) */
	uint64_t cpu_ns;		/* time running or runnable (not
					   blocked) during the hang */
	uint64_t lost;			/* events the recorder lost during
					   the hang (its chains may stop
					   short) */
};
/* Whether yield hang x retried a system call on a resource (refused
   attempts, or timed slices): its wait names the call; else it yielded
   or slept polling a flag. */
int diag_yield_polls(const struct diag_hang *x);

/* A normal node similar to the hang's spinning node. */
struct diag_similar {
	uint32_t node;
	uint64_t start_ns, duration_ns;
	const char *differs;		/* "result", "duration" */
	struct diag_wait wait;
};

/* One vertex of a path (baseline slice, critical path, busy walk). */
struct diag_step {
	uint32_t node;
	struct diag_thread th;
	uint64_t ts;			/* start of the vertex */
	int edge;			/* enum graph_edge_kind of the edge from
					   this step to the previous (later)
					   one; -1 for the first step */
	int input;			/* the vertex holds an input event */
};

struct diag_culprit {
	unsigned depth;			/* 1: what the hung thread waited for */
	size_t parent;			/* culprit explained (index), or
					   SIZE_MAX for the hang itself */
	struct diag_thread th;
	int kind;			/* enum diag_kind */
	uint32_t node;
	uint64_t start_ns, end_ns;
	struct diag_wait wait;		/* DIAG_BLOCKED */
	struct diag_thread serving;	/* DIAG_BUSY: whose request it ran
					   (tid 0 when unknown) */
	int repeat;			/* its thread is already in the chain */
};

/* A wake-up during the hang done from another context (interrupt,
   kernel worker), attributed through an edge to the thread that caused
   it. */
struct diag_wakeup {
	struct diag_thread woken;
	int via;			/* enum graph_edge_kind: GE_WORK,
					   GE_TIMER, GE_MSG, GE_PIPE, GE_FLAG */
	struct diag_thread cause;
	uint64_t ts;
};

struct diag_cycle {
	const uint32_t *tids;		/* threads in the cycle, hung first */
	size_t ntids;
	uint64_t timeout_ns;		/* timeout that breaks it; 0 none */
	uint32_t timeout_tid;		/* whose wait times out */
};

/* Whose stack a struct diag_stack is, in the story of a hang. */
enum diag_stack_role {
	DIAG_STACK_HANG = 0,		/* the hung thread's: where it waited
					   (when its call returned), or where
					   it ran (samples) */
	DIAG_STACK_WAKER,		/* the waker's, at the wake-up that
					   ended the hang's wait */
	DIAG_STACK_CULPRIT,		/* a culprit's: where it waited, or
					   where it ran for a busy one */
	DIAG_STACK_CULPRIT_WAKER,	/* the waker's at the wake-up that
					   ended a culprit's wait */
};
const char *diag_stack_role_name(int role);
/* "wait", "waker", "sample", "kernel", or "user" (the instrumentation
   library's) for a TT_STACK kind (enum trace_stack_kind). */
const char *diag_stack_kind_name(int kind);

struct diag_stack {
	uint64_t ts;
	const uint64_t *frames;		/* innermost first */
	size_t nframes;
	const char *const *symbols;	/* per frame "func+0x12", or
					   "file+0xOFF" where no symbol
					   names it, or NULL when unresolved;
					   NULL array: no frame resolved
					   (from the recorded mappings of the
					   process and the symbol tables of
					   their files) */
	int role;			/* enum diag_stack_role */
	size_t culprit;			/* DIAG_STACK_CULPRIT*: its index */
	int kind;			/* TT_STACK's kind (enum
					   trace_stack_kind, or the TT_USER
					   kind of a library's stack) */
	struct diag_thread th;		/* whose stack it is */
	unsigned samples, of;		/* TSK_SAMPLE: the samples of the
					   span with this stack, of all;
					   TSK_KSAMPLE: the samples of that
					   place with this kernel stack, of
					   those of the place */
	int cut;			/* as deep as the recorder takes: the
					   callers beyond are not known */
	int stopped;			/* the unwinding stopped short: one
					   frame, or an outermost one in no
					   mapping (made up by code without
					   frame pointers) */
	uint64_t ran_ns;		/* no frames (nframes 0): a busy
					   culprit that ran this little in
					   all, too little for a sample */
	const char *nofp;		/* the first frame (its symbol) whose
					   function keeps no frame pointer, so
					   the unwinder skipped its caller or
					   stopped there; NULL: none known */
	size_t nofp_at;			/* its index */
};

/*
 * Diagnose graph g with options o (NULL: defaults). Returns 0 and *out,
 * or an error code with *cause set (bad thread selector: GRAPH_ERANGE).
 * Finding no hang is not an error (diag_nhangs() is 0).
 */
int diag_new(struct graph *g, const struct diag_opts *o, struct diag **out,
    char **cause);
void diag_free(struct diag *d);
const struct diag_opts *diag_options(const struct diag *d);
struct graph *diag_graph(const struct diag *d);

size_t diag_nhangs(const struct diag *d);
/* When no hang was found: why, in one sentence (the waits considered,
   the longest and the rule that dropped it), or NULL. */
const char *diag_why_none(const struct diag *d);
const struct diag_hang *diag_hang(const struct diag *d, size_t h);

/* Similar normal nodes of hang h, ranked (most recent first). */
size_t diag_nsimilar(const struct diag *d, size_t h);
const struct diag_similar *diag_similar(const struct diag *d, size_t h,
    size_t i);
/* Index of the picked similar node, or -1 (none); whether the pick was
   made by default (no --pick, no diag_pick()). */
long diag_picked(const struct diag *d, size_t h);
int diag_picked_by_default(const struct diag *d, size_t h);
/* Take similar node i of hang h (0-based): recomputes its slice, diff,
   culprits and cycle. GRAPH_ERANGE when out of range. */
int diag_pick(struct diag *d, size_t h, size_t i);

/* The backward slice from the picked normal node: the normal node first,
   then earlier vertices along wake-up, message, queue, timer and flag
   edges, to the input event or a dead end. For a busy hang: the walk
   back from the spinning node to the input that started the work. */
size_t diag_npath(const struct diag *d, size_t h);
const struct diag_step *diag_path(const struct diag *d, size_t h, size_t i);

/* How a step of the critical path was ended by its waker. */
enum diag_cedge {
	DCE_NONE = 0, DCE_WAKEUP, DCE_MESSAGE, DCE_PIPE, DCE_SIGNAL,
	DCE_TIMER, DCE_INTERRUPT, DCE_SPAWN, DCE_WORK
};
/* Why the critical path ends where it does. */
enum diag_cstop {
	DCS_UNKNOWN = 0,	/* no recorded waker */
	DCS_BEFORE,		/* a waker that acted before the interval */
	DCS_TIMER,		/* the thread's own timer or timeout */
	DCS_IRQ,		/* an interrupt from a device */
	DCS_RAN,		/* running since before the interval */
	DCS_CYCLE,		/* its waker is already on the path */
	DCS_DEPTH,		/* the step limit */
	DCS_NEVER,		/* a wait that never ended */
	DCS_RECSTART,		/* the thread's first event in the trace */
};
const char *diag_cedge_name(int edge);	/* "wakeup", "message", ... */
const char *diag_cstop_name(int stop);	/* a phrase */

/*
 * One step of the critical path (diag-path.c): thread th, its semantic
 * wait (wait, from wait_start to wait_end; an empty syscall and type
 * when none was found) and the thread that ended it (waker, tid 0 when
 * none: see the path's stop), which it woke by edge; then th ran until
 * `until`, when it woke the step before (the first step: the end of the
 * interval). blocked_ns and running_ns are its times in the interval.
 */
struct diag_cstep {
	struct diag_thread th;
	struct diag_wait wait;
	uint32_t wait_enter;		/* its system call's entry (event
					   index), GRAPH_NONE */
	uint64_t wait_start, wait_end, until;
	struct diag_thread waker;
	int edge;			/* enum diag_cedge */
	uint64_t blocked_ns, running_ns;
	uint64_t io_ns;			/* short waits for its own I/O between
					   its wait and until (running_ns
					   leaves them out) */
	int culprit;			/* the path alone names it (enum
					   diag_cwhy), 0: not */
	int verdict;			/* enum diag_cverdict, against the
					   normal run's path */
};
/* Why the critical path alone names a step's thread (a user thread
   other than the hung one, for at least a quarter of the hang). */
enum diag_cwhy {
	DCW_NONE = 0,
	DCW_BUSY,		/* it ran, the hang waiting for its work */
	DCW_ROOT,		/* where the path ends: its own wait */
	DCW_LONGER,		/* blocked far longer than on the normal
				   path */
	DCW_BLOCKED,		/* blocked in a wait other than its idle one
				   (no normal path says otherwise) */
};
const char *diag_cwhy_name(int why);

/* A critical path step compared with the picked normal run's path. */
enum diag_cverdict {
	DCV_NONE = 0,		/* no normal run to compare with */
	DCV_SAME,		/* its thread took as long there */
	DCV_LONGER,		/* its thread took far longer in the hang */
	DCV_EXTRA,		/* its thread is not on the normal path */
};
const char *diag_cverdict_name(int v);

/* The critical path of hang h: its thread over the hang, walked back
   along wake-ups; the hung thread first. */
size_t diag_ncpath(const struct diag *d, size_t h);
const struct diag_cstep *diag_cpath(const struct diag *d, size_t h,
    size_t i);
/* Why that path ends (enum diag_cstop). */
int diag_cpath_stop(const struct diag *d, size_t h);

/* The hang's own wake-up chain (critical path), when its wait ended:
   the vertex after the wait first, then its wakers backwards. */
size_t diag_ncritical(const struct diag *d, size_t h);
const struct diag_step *diag_critical(const struct diag *d, size_t h,
    size_t i);

/* Culprits of hang h, by depth then time. */
size_t diag_nculprits(const struct diag *d, size_t h);
const struct diag_culprit *diag_culprit(const struct diag *d, size_t h,
    size_t i);
/* Why blocked hang h has no culprit (a phrase), or NULL. */
const char *diag_why_no_culprit(const struct diag *d, size_t h);
/* The culprit of hang h that names culprit i's thread first: the one
   at the lowest depth (then the first); i itself when it is. Reports
   list a thread once and refer back to it from a later depth. */
size_t diag_culprit_first(const struct diag *d, size_t h, size_t i);

/* Circular wait found by the recursion, or NULL. */
const struct diag_cycle *diag_cycle(const struct diag *d, size_t h);

size_t diag_nwakeups(const struct diag *d, size_t h);
const struct diag_wakeup *diag_wakeup(const struct diag *d, size_t h,
    size_t i);

/* For a busy hang: the input vertex that started the work, or GRAPH_NONE;
   and the thread that sent that input (tid 0 when unknown). */
uint32_t diag_cause_node(const struct diag *d, size_t h);
const struct diag_thread *diag_cause_thread(const struct diag *d, size_t h);

/* Where chains end without reaching an input, as sentences. */
size_t diag_ndead_ends(const struct diag *d, size_t h);
const char *diag_dead_end(const struct diag *d, size_t h, size_t i);

/* Notes for the reader (the default pick, the watch command of a yield
   loop, a hang that never ended ...), as sentences. */
size_t diag_nnotes(const struct diag *d, size_t h);
const char *diag_note(const struct diag *d, size_t h, size_t i);

/* The stacks of hang h: its own first, then its waker's, then each
   culprit's and its waker's, in the culprits' order. */
size_t diag_nstacks(const struct diag *d, size_t h);
const struct diag_stack *diag_stack(const struct diag *d, size_t h,
    size_t i);

/* Frame addr of a stack of process pid taken at time ts as text into
   buf (len bytes): "func+0x12", or "file+0xOFF" where no symbol names it
   (returns 1), or "0x..." where no recorded mapping holds it (returns
   0). */
int diag_frame_text(struct diag *d, uint32_t pid, uint64_t ts, uint64_t addr,
    char *buf, size_t len);

/* For a yield loop: the command that would trace the flag ("argus watch
   --write PID ADDRESS"), or NULL. */
const char *diag_watch_hint(const struct diag *d, size_t h);

/*
 * Diagnose vertex v as a spinning node ("the culprit of the culprit" on
 * demand, or any vertex picked in an interface): appends a hang with
 * source DIAG_SRC_NODE and sets *h to its index. GRAPH_ERANGE when v is
 * not a vertex.
 */
int diag_add_node(struct diag *d, uint32_t v, size_t *h);

/*
 * Diagnose time o->at (not 0) over a window of the trace rather than
 * the whole of it: the graph of about DIAG_WINDOW_EVENTS events around
 * o->at (graph_build_window()), grown further back or to the end while
 * diag_window_short() says the answer could rest on what lies outside,
 * up to the whole trace or DIAG_WINDOW_MAX_EVENTS. The answer is the one
 * of the whole trace, unless that bound stopped the growth.
 * Returns 0 with the graph in *gp and its diagnosis in *dp (the caller
 * frees both), or an error with *cause set. Moves r.
 */
#define DIAG_WINDOW_EVENTS 2000000.0
/* A window never grows past this many events (under 1 GiB of graph;
   ARGUS_WINDOW_MAX_EVENTS sets another bound): the answer of the largest
   window is given, with a note in each hang that it may rest on more. */
#define DIAG_WINDOW_MAX_EVENTS 20000000.0
int diag_at_window(struct trace_reader *r, const struct rules *rules,
    const struct diag_opts *o, struct graph **gp, struct diag **dp,
    char **cause);

/*
 * The span of time that holds about nev events of r at the trace's
 * average rate, and least at least; ARGUS_WINDOW_EVENTS, when set,
 * replaces nev and lifts least (tests take small windows). The whole
 * trace's span, or least, when r has no events or no time.
 */
uint64_t diag_window_span(struct trace_reader *r, double nev, uint64_t least);
/*
 * For a diagnosis of a graph built over a window: 1 when its answer
 * could rest on events outside the window (a wait begun before it,
 * similar nodes older ones could outrank, a hang that never ended, a
 * step or culprit near an edge), with the window to try next in *from
 * and *to; 0 when the answer stands (always for a whole build).
 */
int diag_window_short(const struct diag *d, uint64_t *from, uint64_t *to);

/* The text report of every hang (argus-diagnose(1)); base_ts is the time
   printed as 0 (trace start), or UINT64_MAX for absolute ns. */
void diag_write_text(const struct diag *d, FILE *f, uint64_t base_ts);
/* The JSON object documented in argus-diagnose(1), one line. */
void diag_write_json(const struct diag *d, FILE *f);
/* The report of one hang only. */
void diag_write_hang_text(const struct diag *d, size_t h, FILE *f,
    uint64_t base_ts);
/* The same numbered number (0: without the "hang N: " before it). */
void diag_write_hang_text_n(const struct diag *d, size_t h, size_t number,
    FILE *f, uint64_t base_ts);
/* The JSON object of hang h (an element of "hangs"), on one line. */
void diag_write_hang_json(const struct diag *d, size_t h, FILE *f);
/* Hang h's critical path: its text lines ("  critical path ..."), and
   its JSON members ("critical_path_steps":[...],"critical_path_end":..)
   without braces around them. */
void diag_write_cpath_text(const struct diag *d, size_t h, FILE *f);
void diag_write_cpath_json(const struct diag *d, size_t h, FILE *f);

/*
 * The diagnosis of the whole trace r without its graph (no o->at): one
 * streaming pass over the events finds the candidate hangs in memory
 * proportional to threads (diag-scan.c), then each is made and analyzed
 * in the graph of a window around it, grown (as diag_at_window() grows
 * its window) until the hang's answer rests on nothing near the edges.
 * Writes the report to f as diag_write_json() (json) or
 * diag_write_text() (base_ts) would for the whole graph: the same
 * hangs, in the same order, with the same picks, paths and culprits
 * (vertex ids are the windows'). When found is not NULL, *found gets
 * the hangs of the report in its order (*nfound of them; free() it).
 * Returns 0, or an error with *cause set.
 */
struct diag_found {
	uint32_t tid;
	uint64_t start_ns, end_ns;	/* the hang, absolute */
};
int diag_search(struct trace_reader *r, const struct rules *rules,
    const struct diag_opts *o, int json, uint64_t base_ts, FILE *f,
    struct diag_found **found, size_t *nfound, char **cause);

/* The file mapped at address addr of process pid at time ts (the latest
   recorded mapping holding it that was read while the process ran the
   image it ran at ts, between its execs, or a fork reusing its pid;
   else, for a process recorded as having another's mappings, a fork
   without exec, that other's) and addr's offset in that file in *off;
   NULL when no recorded mapping holds it. */
const char *graph_map_at(const struct graph *g, uint32_t pid, uint64_t addr,
    uint64_t ts, uint64_t *off);
/* The first event time of the graph (trace start for reports). */
uint64_t graph_first_ts(const struct graph *g);
/* Extra fields of a TT_USER event (arg, arg2 of the trace event), 0 when
   it has none. Returns 1 when the event had any. */
int graph_user_args(const struct graph *g, uint32_t thread, uint32_t idx,
    uint64_t *arg, uint64_t *arg2);

/* --- export (engine/export.c; prefix export_) ------------------------ */
/*
 * A trace as Trace Event Format JSON, which Perfetto UI and
 * chrome://tracing open (argus-export(1)): one track per thread, named
 * "comm (tid)" under its process; slices for running, for each wait
 * (named with its resource) and for runnable time; flow arrows for
 * wake-ups. With a diagnosis: flows for messages (socket, pipe, request
 * and reply edges of its graph), the hangs and culprits as async slices
 * with their details as arguments, and a flow from each culprit to the
 * thread it held up. Written while the events are read: memory grows with
 * the threads and descriptors of the trace, not with its events (the
 * diagnosis' graph aside).
 */
struct export_opts {
	uint64_t from, to;		/* absolute ns; 0: trace start, end */
	uint64_t base_ns;		/* time 0 of the output; 0: the
					   trace start */
	const uint32_t *pids;		/* only these processes; */
	size_t npids;			/* 0: every process */
	const char *report;		/* text added as the "report" of a
					   global instant event, or NULL */
};

/*
 * Write the events of r in [o->from, o->to] (r is sought there) to f,
 * with the hangs, culprits and message flows of d when d is not NULL (d's
 * graph must come from the same trace). Returns 0, or an error with
 * *cause set: GRAPH_ERANGE for an empty window, a trace error, or EIO
 * when f failed.
 */
int export_chrome(struct trace_reader *r, const struct export_opts *o,
    const struct diag *d, FILE *f, char **cause);

/* --- view (engine/view*.c; prefix view_) ------------------------------ */
/*
 * Queries for interactive viewers (argus debug): the scheduling state of
 * threads over time, summarised per column of a timeline, and the single
 * step a viewer takes from a vertex to its waker or to what it wakes.
 * struct view caches per-thread state transitions (built on first use);
 * it reads the graph, which must outlive it, and is invalid after a
 * graph_rebuild() (free it and make a new one).
 */
struct view;

enum view_state {
	VS_NONE = 0,		/* no data: before its first event, exited */
	VS_RUNNING,		/* on a CPU */
	VS_RUNNABLE,		/* preempted, or woken and not yet running */
	VS_BLOCKED,		/* in a wait */
	VS_HANG,		/* (for viewers: a hang interval) */
	VS_NSTATES
};
const char *view_state_name(unsigned state);

struct view *view_new(const struct graph *g);
void view_free(struct view *vw);

/* State of thread (index) at ts. */
unsigned view_state_at(struct view *vw, uint32_t thread, uint64_t ts);

/* One column of a lane: the state holding most of its time, how many
   state changes (0xffff: many, sampled) and vertex starts it holds. */
struct view_cell {
	uint8_t state;		/* enum view_state */
	uint8_t spare;
	uint16_t changes;
	uint16_t vertices;
};

/*
 * Summarise thread over [t0, t1) in ncols equal columns into out[ncols].
 * The cost per column is bounded whatever the zoom.
 */
void view_lane(struct view *vw, uint32_t thread, uint64_t t0, uint64_t t1,
    unsigned ncols, struct view_cell *out);

/* The vertex that woke v: the source of the in-edge (other than the weak
   same-thread ones) reaching the earliest event of v, a strong edge
   winning a tie; GRAPH_NONE at a dead end. */
uint32_t view_waker(const struct graph *g, uint32_t v);
/* The first vertex v wakes or sends to (out-edges in time order), or
   GRAPH_NONE. */
uint32_t view_wakee(const struct graph *g, uint32_t v);

/* --- several hosts: clocks aligned from messages (sync.c) ------------ */

/* A trace's TCP messages whose connection and sequence were recorded. */
struct sync_msgs;

/* Read the messages of r (one pass over its events; moves r): 0 and
   *out, or GRAPH_ETRACE with *cause. */
int sync_read(struct trace_reader *r, struct sync_msgs **out, char **cause);
void sync_msgs_free(struct sync_msgs *m);
/* Its sends; its receives into *nrecv. */
size_t sync_nmsgs(const struct sync_msgs *m, size_t *nrecv);

/*
 * The clock of a trace b against a's: t_b = t_a + est + drift * (t_a -
 * ref), in ns, from the messages paired each way (sync_fit()); ref is the
 * middle of the pairs' span on a's clock.
 *
 * lo, hi: the bounds of a constant offset, always: at least lo when
 * have_lo (a message from b to a), at most hi when have_hi (one from a to
 * b). The estimate:
 *  - no pair: have_est 0, nothing set but the counts (consistent 1).
 *  - pairs one way only: est is the bound (hi or lo), uncertainty
 *    INT64_MAX (nothing bounds the other side), no drift.
 *  - both ways, a constant offset: est is the middle of [lo, hi],
 *    uncertainty half its width. When the bounds cross (lo > hi), est is
 *    still their middle, consistent 0, cross lo - hi, uncertainty half
 *    of cross.
 *  - both ways with a drift (have_drift): the line that leaves the most
 *    room to the pair it comes closest to, or else misses the worst pair
 *    by the least (half of cross, consistent 0); est its offset at ref.
 *    uncertainty and drift_uncertainty are the half-widths of the
 *    offsets at ref and of the slopes of the lines that fit every pair,
 *    or that miss none by more than cross.
 * The drift is used only when it is measured: messages went each way
 * both before and after some message the other way (else the slope is
 * unbounded), the constant bounds cross by more than SYNC_STAMP_NS (a
 * zero drift fits every pair exactly when they do not cross; a crossing
 * within SYNC_STAMP_NS may be sends stamped late), and the line's own
 * bounds cross by SYNC_STAMP_NS at most. When neither fits (pairs gone
 * wrong), the constant estimate stands, inconsistent.
 */
struct sync_offset {
	size_t ab, ba;		/* messages paired: a to b, b to a */
	int have_lo, have_hi;
	int64_t lo, hi;
	int consistent;		/* the estimate fits every pair (drifting
				   clocks, a pairing gone wrong or sends
				   stamped late make the bounds cross) */
	int have_est;		/* at least one pair */
	int64_t est;		/* the offset at ref, ns */
	uint64_t ref;		/* a time of trace a (0 from sync_bounds()) */
	int have_drift;
	double drift;		/* ns of b per ns of a, beyond 1; 0 if none */
	int64_t uncertainty;	/* half-width of the offsets at ref, ns */
	double drift_uncertainty; /* half-width of the slopes (have_drift) */
	int64_t cross;		/* by how much the estimate's bounds cross
				   when not consistent (the worst pair is
				   missed by half that), else 0 */
};

/* A constant offset's bounds that cross by at most this much may come
   from sends stamped late (at the end of their call, after their bytes
   left), not from a drift. */
#define SYNC_STAMP_NS 100000

/* A message paired: when sent on its sender's clock, when received on
   its receiver's. */
struct sync_pair {
	uint64_t send, recv;
};

/* Pair a's sends with b's receives and b's with a's (same connection,
   the receive's first byte among those sent) and sync_fit() them. */
void sync_align(const struct sync_msgs *a, const struct sync_msgs *b,
    struct sync_offset *o);
/* One side of a message: when, its socket, the thread. */
struct sync_msg {
	uint64_t ts, sk;
	uint32_t tid;
};
/* Call fn on each message from a to b (a send of a, the receive of b
   that took its last byte), as sync_align() pairs them. */
void sync_each_pair(const struct sync_msgs *a, const struct sync_msgs *b,
    void (*fn)(void *arg, const struct sync_msg *send,
    const struct sync_msg *recv), void *arg);
/* The clock of b against a from the pairs alone: ab[i], a message from a
   to b (send on a's clock, recv on b's); ba[i], from b to a. */
void sync_fit(const struct sync_pair *ab, size_t nab,
    const struct sync_pair *ba, size_t nba, struct sync_offset *o);
/* The constant bounds and estimate from the differences alone: ab[i],
   each message from a to b received (b's clock) minus sent (a's); ba[i],
   from b to a, received (a's) minus sent (b's). No drift; ref is 0. */
void sync_bounds(const int64_t *ab, size_t nab, const int64_t *ba,
    size_t nba, struct sync_offset *o);
/* A time of b's clock on a's clock (the inverse of o's line), saturating
   at 0 and UINT64_MAX; tb itself when o has no estimate. */
uint64_t sync_to_a(const struct sync_offset *o, uint64_t tb);


/* --- several hosts: traces merged (hosts.c) --------------------------- */

struct hosts_host {
	char *name;		/* its host name, made unique ("db#2") */
	char *path;
	int merged;		/* aligned, and in the merged trace */
	unsigned index;		/* its host number there (trace_tid_host()) */
	int via;		/* the trace it was aligned against; -1 for
				   the base clock's */
	int64_t offset;		/* t_this = t_base + offset + drift (t_base -
				   ref), ns */
	double drift;		/* ns per ns; 0 for a constant offset */
	uint64_t ref;
	int64_t uncertainty;	/* +- ns; -1 when only a bound is known */
	size_t pairs;		/* messages with the trace it was aligned
				   against */
	int consistent;		/* no bound crossed on its chain */
};

struct hosts_report {
	struct hosts_host *v;
	size_t n;
	char **warnings;	/* a line each, for stderr */
	size_t nwarnings;
	size_t npairs;		/* messages paired across traces */
};

/*
 * Merge the n traces of rs (paths[i] names rs[i]) into *out: read each
 * one's TCP messages, align every two from the messages between them,
 * place each on the base clock through the surest chain of alignments,
 * and merge those placed (trace_reader_merge()) with the messages
 * paired across them (trace_reader_set_pairs()). On success the readers
 * are the merged one's (a trace left out is closed) and rs[] is cleared;
 * *rep says what was done. Fails with GRAPH_ERANGE when no two traces
 * are linked (or n is not 2 to TRACE_MAX_HOSTS), or GRAPH_ETRACE; then
 * rs[] stays the caller's.
 */
struct hosts_opts {
	/* called on the calling thread as the traces' messages are read:
	   chunks read of the total, for a progress bar; may be NULL */
	void (*progress)(void *arg, uint64_t done, uint64_t total);
	void *arg;
};
/*
 * Place n traces' clocks from their messages (m[i], sync_read()): every
 * two aligned, then each placed on the base's clock (the first trace
 * linked to another) through the chain with the least uncertainty; v[i]
 * gets merged (placed), via, offset, drift, ref, uncertainty, pairs and
 * consistent. Returns the base, or n when no two traces are linked.
 */
size_t hosts_place(struct sync_msgs *const *m, size_t n, struct hosts_host *v);
int hosts_merge(struct trace_reader **rs, const char *const *paths, size_t n,
    const struct hosts_opts *o, struct trace_reader **out,
    struct hosts_report **rep, char **cause);
/* Open the n traces of paths and merge them as hosts_merge() does; the
   error of the first trace that fails to open (errno or TRACE_E*), or
   hosts_merge()'s. */
int hosts_open(const char *const *paths, size_t n, struct trace_reader **out,
    struct hosts_report **rep, char **cause);
void hosts_report_free(struct hosts_report *h);
/* A line per trace: its host, offset and what it was aligned against. */
void hosts_write_text(const struct hosts_report *h, FILE *f);
/* "hosts":[...],"messages_paired":N (a member of an enclosing object). */
void hosts_write_json(const struct hosts_report *h, FILE *f);

#endif
