/*
 * engine-local.h: internals shared by the files of engine/.
 *
 * struct graph holds the loaded events (per-thread arrays of struct
 * graph_event plus "order", the thread index of every compact event in
 * global time order, so that the build pass can replay the trace without
 * reading it again), and the built part (vertices, edges in CSR form).
 * struct build_pass is the state of one build pass, shared by graph-build.c and
 * graph-conn.c. The hash table (common/hmap.h) is used everywhere a key
 * (tid, socket, timer, work, flag address) must be matched to the last
 * event that mentioned it.
 */
#ifndef ARGUS_ENGINE_LOCAL_H
#define ARGUS_ENGINE_LOCAL_H

#include <stdint.h>

#include "common/array.h"
#include "common/common.h"
#include "common/hmap.h"
#include "engine.h"

/* --- keys ------------------------------------------------------------- */

static inline uint64_t
pack2(uint32_t a, uint32_t b)
{
	return (uint64_t)a << 32 | b;
}
#define HI32(x) ((uint32_t)((x) >> 32))
#define LO32(x) ((uint32_t)(x))

/* --- rules ------------------------------------------------------------- */

/* Pseudo types of selectors beyond enum trace_type. */
#define RSEL_READ	201	/* a read syscall exit on an fd of kind sub */
#define RSEL_WRITE	202	/* a write syscall exit on an fd of kind sub */

struct rsel {
	uint16_t type;		/* enum trace_type, GRAPH_EV_RUN or RSEL_* */
	int64_t sub;		/* -1: any */
	char *name;		/* fnmatch pattern on the event's name, or NULL */
};

enum rule_verb {
	RV_SPLIT,		/* split before events matching a */
	RV_BATCH,		/* process pattern is a batch server */
	RV_IGNORE_PROC, RV_IGNORE_THREAD,
	RV_CULL_PROC, RV_CULL_THREAD,
	RV_CULL_WAKE,		/* wake-ups from vertices starting with a */
	RV_CONNECT,		/* a -> b by key (key_any: any) */
	RV_INPUT,		/* events matching a are UI input */
};

struct rule {
	int verb;
	int key_any;
	char *pat;		/* process or thread pattern */
	struct rsel a, b;
	char *text;		/* normalised text */
};

#define RULES_MAX 65535	/* rule indices are 16 bits in the build */

struct rules {
	struct rule *v;
	size_t n, cap;
};

/* --- graph ------------------------------------------------------------- */

struct gthread {
	uint32_t tid, pid;
	uint32_t flags;		/* GRAPH_THREAD_* */
	uint32_t ppid;
	char comm[TRACE_COMM_LEN];
	struct graph_event *ev;
	uint32_t nev, cap;
	uint32_t *vtx;		/* vertices in time order */
	uint32_t nvtx, capvtx;
	/* load state */
	uint32_t sys;		/* index of the open TT_SYS_ENTER, or
				   GRAPH_NONE */
	/* a graph of several windows: the first event of each of its
	   segments after the first (its events of one window), ascending */
	uint32_t *seg;
	uint32_t nseg;
};

/* The first event of the segment of thread t that event i is in: 0 but
   in a graph of several windows (graph_build_windows()), where no scan
   of a thread's events crosses from one window into another. */
static inline uint32_t
gthread_seg_first(const struct gthread *t, uint32_t i)
{
	uint32_t f = 0;

	for (uint32_t k = 0; k < t->nseg && t->seg[k] <= i; k++)
		f = t->seg[k];
	return f;
}

/* The index after the last event of the segment of thread t that event
   i is in: t->nev but in a graph of several windows. */
static inline uint32_t
gthread_seg_end(const struct gthread *t, uint32_t i)
{
	for (uint32_t k = 0; k < t->nseg; k++)
		if (t->seg[k] > i)
			return t->seg[k];
	return t->nev;
}

struct gedge_buf {
	struct graph_edge *v;
	size_t n, cap;
};

struct graph {
	/* loaded */
	struct gthread *th;
	uint32_t nth, capth;
	struct hmap tidmap;		/* tid -> thread index */
	uint32_t *tiddirect;		/* tid < ntiddirect -> index + 1 */
	uint32_t ntiddirect;		/* TID_DIRECT per host */
	uint32_t *order;		/* runs: thread index | (length-1) << 20 */
	size_t norder, caporder;
	uint64_t nevents;		/* compact events */
	int toomany;			/* more than ORDER_MAXTH threads */
	char **strs;			/* interned strings, [0] = "" */
	uint32_t nstrs, capstrs;
	struct hmap strmap;		/* string hash -> id chain head */
	uint64_t *frames;		/* stack frames pool */
	size_t nframes, capframes;
	struct gmap {			/* recorded file mappings (TT_MMAP) */
		uint32_t pid, path;	/* path: interned string */
		uint64_t start, len, pgoff;
		uint64_t ts;		/* when it was read */
	} *maps;
	size_t nmaps, capmaps;
	struct gimage {			/* a process's new image: its exec,
					   or a fork that reuses a pid */
		uint32_t pid;
		uint32_t prev;		/* the pid's one before + 1, 0: none */
		uint64_t ts;
	} *images;
	size_t nimages, capimages;
	struct hmap lastimage;		/* pid -> its last in images + 1 */
	struct hmap mapfrom;		/* pid -> the process whose mappings
					   it has (TT_MMAP from) */
	struct gksym {			/* kernel functions (TT_KSYM) */
		uint64_t addr, size;
		uint32_t name;		/* interned string */
	} *ksyms;
	size_t nksyms, capksyms;
	struct hmap ksymset;		/* addr -> 1: loaded */
	struct hmap fdmap;		/* pid<<32|fd -> kind<<56 | ino */
	struct hmap uargs;		/* thread<<32|idx of a TT_USER event ->
					   index of its (arg, arg2) in uargv */
	uint64_t *uargv;		/* pairs: arg, arg2 */
	size_t nuargv, capuargv;
	uint64_t trace_events, lost;
	struct glost {			/* a loss the recorder noticed */
		uint64_t ts, n;		/* when, and events lost before */
	} *losts;			/* in load order */
	size_t nlosts, caplosts;
	uint64_t first_ts;		/* earliest event loaded */
	uint64_t lead_from;		/* a window: where the search for the
					   calls and waits open at win_from
					   began (graph-read.c) */
	struct hmap skseed;		/* a window: socket -> pid of the
					   process that last received on it
					   in the lead (the whole build's
					   owner when the window opens) */
	struct hmap pipeseed;		/* a window: pipe inode -> pid of its
					   last reader in the lead, alike */
	uint64_t win_from, win_to;	/* the events loaded: those in
					   [win_from, win_to], with every
					   record of the metadata stream
					   before (0, UINT64_MAX: all); of
					   several windows, the one
					   loading */
	size_t *gap_order;		/* where each gap between windows is
					   in order (no run crosses one) */
	size_t ngaps;
	struct hmap (*seeds)[2];	/* several windows: skseed and
					   pipeseed of each window loaded */
	size_t nseeds;
	uint64_t load_ns;
	uint32_t ncpu_threads;
	/* built */
	struct graph_vertex *vx;
	uint32_t nvx, capvx;
	struct graph_edge *ed;		/* in creation order */
	size_t ned, caped;
	uint32_t *out_off;		/* nvx + 1 */
	uint32_t *in_off;		/* nvx + 1 */
	uint32_t *in_idx;		/* edge indices sorted by dst */
	uint32_t *out_idx;		/* edge indices sorted by src */
	uint64_t build_ns;
	uint64_t nmsg;			/* messages matched by the build */
	struct ghost {			/* the hosts of a merged trace */
		char *name;
		uint32_t cpu0;		/* its first CPU there */
	} *hosts;
	size_t nhosts;			/* 0 for one trace */
	const struct trace_msg_pair *xpairs;	/* messages between hosts
					   of a merged trace (the reader's),
					   by receive time */
	const uint32_t *xby_send;	/* their indices by send time */
	size_t nxpairs;
	uint32_t *leader;		/* per thread: the thread naming its
					   process (pid == tid), or itself */
	int pid_changed;		/* a thread's pid changed after it had
					   events: a streamed build is stale */
	struct build_pass *stream;	/* build fed as events are loaded */
	struct graph_thread *pub;	/* public view of each thread */
};

/* Order entries: a thread index and a run length of its events. */
#define TID_DIRECT (1u << 22)
#define ORDER_TBITS 20
#define ORDER_MAXTH (1u << ORDER_TBITS)
#define ORDER_MAXRUN (1u << (32 - ORDER_TBITS))

/* --- build state (graph-build.c, graph-conn.c; prefix gb_) ------------ */

#define QMAX 4096		/* messages kept unreceived per endpoint */
#define CTX_DEPTH 4		/* nested contexts a thread's replay keeps */

/* Replay state of one thread. */
struct thread_replay {
	uint32_t cur;		/* open vertex */
	uint32_t split_from;	/* vertex to join by a weak edge */
	uint32_t level;		/* callout level */
	uint32_t peer;		/* peer process of the open vertex */
	uint32_t wait_v, wait_e;
	uint32_t wake_v, wake_e;
	uint32_t sig_v, sig_e;
	uint32_t sys;		/* open TT_SYS_ENTER */
	uint32_t pos;		/* replay cursor */
	uint32_t rx_pid, rx_v, rx_e;
	uint32_t woke_ed, wait_ed;	/* the wake-up and wait edges of its
					   last run (indices in ed), or
					   GRAPH_NONE */
	/* the open contexts, innermost last (level of them; those deeper
	   than CTX_DEPTH share the last slot): each one's vertex kind and
	   the edge that started it (a raise, a timer, a work item: an
	   index in ed, or GRAPH_NONE); resumed, the edge to start the
	   next vertex with */
	uint32_t cause[CTX_DEPTH];
	uint32_t resumed;
	uint8_t kinds[CTX_DEPTH];
	uint8_t wake_kind;
	uint8_t waiting;
	uint8_t had_rx;
	uint8_t ready;		/* its rule flags are computed */
	uint8_t handed;		/* since its last wait it runs because
				   another thread of its process woke it
				   (it relays that thread's work) */
	uint8_t answered;	/* the open vertex sent a reply to the
				   process it received a request from: the
				   next receive is another request */
};

/* A thread's replay as a build or a window starts it. */
static inline struct thread_replay
gb_replay_fresh(void)
{
	return (struct thread_replay){ .cur = GRAPH_NONE,
	    .split_from = GRAPH_NONE, .wait_v = GRAPH_NONE,
	    .wake_v = GRAPH_NONE, .sig_v = GRAPH_NONE, .sys = GRAPH_NONE,
	    .woke_ed = GRAPH_NONE, .wait_ed = GRAPH_NONE,
	    .resumed = GRAPH_NONE };
}

/* A message sent and not yet received (or pipe bytes not yet read). */
struct qnode {
	uint32_t v, e, pid, next;
	uint64_t end;
};

/* The FIFO of one endpoint (socket or pipe inode) in the qnode pool. */
struct queue {
	uint32_t head, tail, len;
	uint64_t wpos, rpos;
};

/* Everything one build pass needs besides the graph. */
struct build_pass {
	struct graph *g;
	const struct rules *rs;
	struct thread_replay *st;
	struct graph_edge *ed;
	size_t ned, caped;
	struct qnode *qn;
	uint32_t nqn, capqn, qfree;
	struct queue *q;
	uint32_t nq, capq;
	uint32_t nst, capst;	/* per-thread states in st */
	uint64_t t0;
	struct hmap sockq, skowner, pipeq, pipereader, efd;
	struct hmap timers, works, tasks, runloops, flags, conn, raises;
	uint8_t rtypes[256];	/* RT_* bits: which rules look at a type */
	uint16_t *rlist[256];	/* per type: indices of rules to try */
	uint16_t nrlist[256];
	uint8_t rfdonly[256];	/* per type: all its rules need GRAPH_EVF_FDRES */
	uint8_t any_cullwake;
	uint64_t nmsg;		/* messages matched (even inside a vertex) */
	/* messages between hosts (g->xpairs): cursors into them by send
	   and by receive time (the build goes in time order), and the
	   vertex and event of each send once built */
	size_t xs, xr;
	int xseek;			/* the cursors are placed */
	uint32_t (*xsrc)[2];
};

#define RT_SPLIT	0x1
#define RT_INPUT	0x2
#define RT_CONNECT	0x4

/*
 * A build: gb_new() clears the built part of g and starts; gb_step() takes
 * event i of thread ti (events must come in time order); gb_stale() says
 * whether names or pids changed since the threads were first seen (then
 * the result would differ from a replay: gb_abort() and replay instead);
 * gb_finish() sorts the edges and frees the build state. gb_seed() takes
 * what window win's lead learnt (g->seeds[win]; past them, the window
 * loading: g->skseed, g->pipeseed) into the build's
 * state; gb_new() does it too, for the builds that start once the lead
 * is read.
 */
struct build_pass *gb_new(struct graph *g, const struct rules *rules);
void gb_seed(struct build_pass *b, size_t win);
/* A gap between two windows of one graph: every thread's replay, the
   messages in flight and the keyed connections start again as at the
   start of a window; the vertices and edges built stay. */
void gb_gap(struct build_pass *b);
void gb_step(struct build_pass *b, uint32_t ti, uint32_t i);
int gb_stale(struct build_pass *b);
void gb_abort(struct build_pass *b);
int gb_finish(struct build_pass *b, char **cause);
/* The rule flags (RULE_FLAGS) of thread ti under the names known now;
   sets its process leader (the thread naming its process). */
#define RULE_FLAGS (GRAPH_THREAD_IGNORED | GRAPH_THREAD_CULLED | \
	GRAPH_THREAD_BATCH)
uint32_t gb_thread_flags(struct graph *g, const struct rules *rs,
    uint32_t ti);
/* Room in b's per-thread state for every thread of its graph. */
void gb_grow_state(struct build_pass *b);

/* Add an edge from event se of vertex sv to event de of vertex dv;
   returns its index in b->ed, or GRAPH_NONE when none is added (a loop, a
   culled thread). */
uint32_t gb_edge(struct build_pass *b, uint32_t sv, uint32_t se, uint32_t dv,
    uint32_t de, unsigned kind);
/*
 * Add event i of thread ti to its open vertex (opening one if needed);
 * returns the vertex, or GRAPH_NONE when no vertex can be opened. One
 * function for graph-build.c and graph-conn.c (the compiler inlines it
 * within graph-build.c).
 */
uint32_t gb_add(struct build_pass *b, uint32_t ti, uint32_t i);
/* Whether vertex v belongs to another user thread of ti's process. */
int gb_sibling(const struct graph *g, uint32_t ti, uint32_t v);
/* End the open vertex of thread ti at a boundary that is not a wait. */
void gb_split(struct build_pass *b, uint32_t ti);
void gb_peer_pre(struct build_pass *b, uint32_t ti, uint32_t pid);
/* Before a receive from process pid (0: unknown): the request boundary
   rule, a thread that answered a request in its open vertex starts a new
   vertex at the next receive from another process. */
void gb_request_pre(struct build_pass *b, uint32_t ti, uint32_t pid);
void gb_peer_post(struct build_pass *b, uint32_t ti, uint32_t pid);
void gb_reply_check(struct build_pass *b, uint32_t ti, uint32_t pid, uint32_t v,
    uint32_t e);
void gb_received(struct build_pass *b, uint32_t ti, uint32_t pid, uint32_t v,
    uint32_t e);
uint32_t gb_queue_of(struct build_pass *b, struct hmap *m, uint64_t key,
    int create);
void gb_q_push(struct build_pass *b, uint32_t qi, uint32_t v, uint32_t e,
    uint32_t pid, uint64_t end);
void gb_q_pop(struct build_pass *b, uint32_t qi);
void gb_keyed_set(struct hmap *m, uint64_t key, uint32_t v, uint32_t e);
uint32_t gb_keyed_take(struct build_pass *b, struct hmap *m, uint64_t key,
    uint32_t v, uint32_t e, unsigned kind);
void gb_rules_event(struct build_pass *b, uint32_t ti, uint32_t i, int post,
    const struct graph_event *en);
void gb_on_sys_exit(struct build_pass *b, uint32_t ti, uint32_t i);
/*
 * Messages between hosts (g->xpairs). gb_xpairs_init: ready them for a
 * build (gb_new()). gb_xpair: the pair whose send (send set) or receive
 * is the event on socket sk at ts, or GRAPH_NONE; asked in time order,
 * as the build goes (a cursor each way).
 */
void gb_xpairs_init(struct build_pass *b);
uint32_t gb_xpair(struct build_pass *b, uint64_t sk, uint64_t ts, int send);
/*
 * Event i of thread ti received data sent at event se of vertex sv, in
 * the read or receive call entered at event en. When that call blocked
 * and the wake-up that ended its wait came from another thread before
 * the thread ran, the data's sender is what woke it (the run's wake-up
 * and wait edges are moved to the sender) when either:
 * - the data was sent after that wake-up (a wake-up for something else:
 *   a peer's read freeing buffer space wakes every waiter of the
 *   socket); or
 * - from_host: it came from another host of a merged trace, and an
 *   interrupt context of this host (its network stack) woke the call.
 */
void gb_data_woke(struct build_pass *b, uint32_t ti, uint32_t en, uint32_t i,
    uint32_t sv, uint32_t se, int from_host);

/* graph-load.c */
struct graph *graph_alloc(void);
uint32_t graph_thread_get(struct graph *g, uint32_t tid);
/* Take the hosts and cross-host messages of a merged reader r into g
   (before its build starts). */
void graph_take_hosts(struct graph *g, const struct trace_reader *r);
/* The host of CPU cpu of g (0 for one trace). */
unsigned graph_cpu_host(const struct graph *g, unsigned cpu);
void graph_load_thread(struct graph *g, const struct trace_thread *t);
void graph_load_event(struct graph *g, const struct trace_event *ev);
void graph_load_finish(struct graph *g);
uint32_t graph_intern(struct graph *g, const char *s, size_t len);

/* graph-read.c */
/* A window's lead_from (0 for a whole build). */
uint64_t graph_lead_from(const struct graph *g);
/* Hand every event of r from its position to its end to fn, in batches
   in time order, decoded on a second thread when graph_two_threads()
   allows (as graph_build() reads). */
void graph_feed(struct trace_reader *r,
    void (*fn)(void *, const struct trace_event *, size_t), void *arg);

/* graph-lead.c */
/* Whether a load runs on two threads: more than one CPU online, and
   ARGUS_LOAD_THREADS not 1. */
int graph_two_threads(void);
/* Chunk i of r decoded with b into *evs, grown (*cap) to its count: how
   many events. */
size_t graph_chunk_events(struct trace_reader *r, size_t i,
    struct trace_chunk_buf *b, struct trace_event **evs, size_t *cap);
/*
 * Before the events of g's window [g->win_from, ...]: the system calls,
 * timers and work items open when it opens, loaded from a lead of lead
 * ns before it (g->lead_from), and the sockets' and pipes' owners then
 * (g->skseed, g->pipeseed). The waits seeds[0..nseeds) are loaded
 * with them (graph_build_seeded()). *merged says whether the lead was
 * read from the time merge: the reader is then past the window's start
 * and *rest holds the window's first events (*nrest; the caller frees
 * *rest); else the caller seeks to the window. 0, or the trace's
 * error.
 */
int graph_load_open_calls(struct graph *g, struct trace_reader *r,
    uint64_t lead, const struct graph_seed *const *seeds, size_t nseeds,
    struct trace_event **rest, size_t *nrest, int *merged);

/* graph-build.c */
int graph_do_build(struct graph *g, const struct rules *rules, char **cause);
void graph_clear_built(struct graph *g);

/* rules.c */
/* Whether event ev matches a selector; enter is the open TT_SYS_ENTER of
   a TT_SYS_EXIT (or NULL). */
int rsel_match(const struct graph *g, const struct rsel *s,
    const struct graph_event *ev, const struct graph_event *enter);
int rules_match_name(const char *pat, const char *name);

/* Syscall families (graph-load.c). */
int sys_is_read(uint32_t nr);
int sys_is_write(uint32_t nr);

/* s as a JSON string, quoted and escaped (NULL: ""). */
void engine_json_str(FILE *f, const char *s);

#endif
