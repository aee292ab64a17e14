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

#include "trace.h"

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
 *   TT_STACK        key offset of frames, aux number of frames
 *   sockets         key sk, aux ret
 *   timers          key timer, aux kind
 *   TT_SOFTIRQ_RAISE key vec, aux CPU
 *   others          key first field
 */
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

#endif
