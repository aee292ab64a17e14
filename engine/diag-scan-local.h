/*
 * diag-scan-local.h: the state of the streaming search (diag-scan.c, the
 * pass; diag-scan-end.c, what the pass leaves: the candidates that make
 * hangs, the longest wait, the idle waits).
 *
 * Each thread of the trace gets a struct sthr, and a table from wait
 * resource to a struct kstat in the scan's array (see diag-scan.c).
 */
#ifndef ARGUS_DIAG_SCAN_LOCAL_H
#define ARGUS_DIAG_SCAN_LOCAL_H

#include "diag-local.h"

#define POLL_MIN 3

struct kstat {
	uint64_t shortest, count;	/* diag_next_wait() waits */
	uint64_t tot, polls;		/* diag_idle_key() */
};

#define SIM_NPEER 8	/* the peers a run keeps, at most */

/* The latest wait of a loose class of a thread: its call and resource,
   of runs of some peers or of any (loose_key() in diag-scan-sim.c). A
   thread waits in a few such classes: it keeps the last SIM_NLOOSE. */
#define SIM_NLOOSE 8
struct simloose {
	uint64_t key;		/* 0: none */
	uint64_t end;
	uint32_t waker;
};

/* A table of latest waits (struct simlast), open addressing by key;
   one that fills starts again. */
struct simtab {
	struct simlast *v;
	uint32_t cap, n;
};

struct sthr {
	uint32_t tid, pid, flags;	/* GRAPH_THREAD_KERNEL, _IRQ */
	char comm[TRACE_COMM_LEN];
	/* the open system call (the load's t->sys), and the last entry */
	int insys, nw, nw_final;
	struct graph_event sys, nwe;
	uint64_t sys_arg[GRAPH_SEED_NARGS];	/* the entry's arguments */
	uint32_t seq;			/* entries so far */
	DARR(uint64_t) pend;		/* ended waits counting on nwe */
	DARR(size_t) pc;		/* candidates counting on sys */
	/* the wait in progress */
	int waiting, sw_nw, sw_insys;
	uint64_t sw_ts;
	struct graph_event sw_sys;
	uint64_t sw_arg[GRAPH_SEED_NARGS];
	uint8_t sw_state;
	uint64_t sw_end;		/* when it ran again, or 0 */
	/* a stretch without a wait */
	int run_set;
	uint64_t runfrom;
	/* its longest wait in a system call */
	int lg_set;
	uint64_t lg_dt, lg_sw;
	uint32_t lg_seq;
	struct graph_event lg_sys;
	/* statistics */
	struct hmap keys;		/* res key -> index in scan.ks */
	uint64_t nwaits;
	uint64_t idle_best, idle_bt;
	int idle_loop;
	/* the loop waited in at both ends */
	int first_sys, last_sys, wait_after;
	uint32_t first_nr;
	struct graph_event last_en;
	/* a polling stretch */
	struct dslices us, usb;	/* timed slices when no thread is named:
				   being followed, the longest kept */
	int ps, ps_timed, ps_slices, pt_pending;
	uint64_t ps_enter, ps_first, ps_last, ps_res;
	uint32_t ps_n, pt_dist;
	/* hang marks */
	int begun;
	uint64_t begun_a;
	/* a wait in timed slices (named threads, diag-swait.c): the call
	   in progress blocked (at cb_sw, first, to cb_end), and the
	   semantic wait being followed */
	int cb;
	uint64_t cb_sw, cb_end;
	uint64_t woken_at;		/* last wake-up or signal from another
					   thread, in its context */
	struct dsem sem;
	/* the library of similar nodes (diag-scan-sim.c): the run since
	   its last wait (its hash, last item, first event), and the last
	   wait of the call in progress (pw: one to record at its exit;
	   pw_cand: the candidate it made + 1, or 0) */
	uint64_t runh, runprev, run_ts;
	int run_new, pw;
	uint32_t rpeer[SIM_NPEER];	/* the processes its run exchanged
					   messages with (diag_sim_msg()) */
	uint32_t nrpeer;
	uint64_t pw_runh, pw_peers, pw_run, pw_sw, pw_end;
	uint32_t wk_pid;		/* the process of the user thread
					   that woke it last since its last
					   wait began, or 0 */
	int wk_seed;			/* that thread's last wait in a
					   system call, ended before it woke
					   this one (wk_sd) */
	struct dseed wk_sd;
	uint32_t pw_waker;		/* wk_pid when pw ran again */
	int pw_ran;
	size_t pw_cand;
	struct simrec *rt;		/* its classes' records, open
					   addressing by key */
	uint32_t rcap, rn;
	int last_ok;			/* its last class and its record */
	uint64_t last_key;
	uint32_t last_rec;
	struct simloose lz[SIM_NLOOSE];	/* the latest waits of its last
					   loose classes */
	struct simtab bywaker;		/* those of its classes, one a
					   waker ended */
	struct simpend *spend;		/* its waits not in their records
					   yet: they go in SIM_PEND at a
					   time, or when a candidate needs
					   them */
	uint32_t nspend;
};

#define SIM_PEND 16
#define SIM_QLEN 16	/* senders kept of the data a socket holds */
#define SIM_KEEP 2	/* the waits a class keeps */
#define SIM_LOOSE 0x6c6f6f7365ULL	/* tells a loose record's key */
#define SIM_WAKER 0x77616b6572ULL	/* a record of one waker's */
#define SIM_ANY 0x616e79ULL	/* a loose record of runs of any peers */
#define SIM_WAITERS 8	/* candidates waiting on one class, at most */
#define SIM_MAXCAP 4096	/* a thread's table of records, at most (256 KiB,
			   2048 classes) */
#define SIM_LASTCAP 8192	/* a table of latest waits, at most (256 KiB) */

/* A wait of a thread ended, to go in the record of its class: its
   class and its run's peers, the run that ends in it, its switch and
   end, its call's result, the candidate it made + 1 (or 0), and the
   process that ended it. */
struct simpend {
	uint64_t base, peers;	/* its class, and its run's peers (their
				   hash; 0: none) */
	uint64_t loose;		/* its call and resource (the loose records
				   keep who ended the latest: the peer of
				   a hang no one woke) */
	uint64_t run, sw, end;
	int64_t ret;
	size_t cand;
	uint32_t waker;		/* who ended it (struct sthr's wk_pid) */
};

/* A wait kept in the library, in 24 bytes: its end, its length and the
   run that ends in it before that (in microseconds, at most 2^32), its
   call's result (clamped to 32 bits; INT32_MIN: none). */
struct simw {
	uint64_t end;
	uint32_t dur, back;
	int32_t ret;
	uint32_t waker;		/* the process that ended it, or 0 */
};

/* The latest waits of one class of one thread, newest first: the last
   of each of the last SIM_KEEP processes that ended one, in one cache
   line. */
struct simrec {
	uint64_t key;		/* its class (1 for 0); 0: a free slot */
	uint32_t waiter;	/* the first candidate waiting for the next
				   one (struct simwaiter) + 1, or 0 */
	uint8_t n, unused[3];
	struct simw w[SIM_KEEP];
};

_Static_assert(sizeof(struct simrec) == 64, "a class record fills a line");

/* The latest wait of a class that one process ended (waker_key() in
   diag-scan-sim.c). */
struct simlast {
	uint64_t key;		/* 1 for 0; 0: a free slot */
	struct simw w;
};



/* The senders of the data a socket holds, oldest first (a ring from
   head; the oldest go when it is full): each receive takes one, as the
   graph's queues of messages do. */
struct simq {
	uint32_t pid[SIM_QLEN];
	uint8_t head, len;
};

/* A candidate waiting for the first wait of its class after its own,
   and for the first one its peer ended (the graph ranks those first). */
struct simwaiter {
	size_t cand;
	int64_t ret;
	uint32_t next;		/* the next one of the class + 1, or 0 */
	uint32_t peer;		/* the process the hang waits on, or 0 */
	int took;		/* it has its nearest one */
};

struct scan {
	const struct diag_opts *o;
	const struct rules *rs;
	uint64_t th;
	struct sthr *t;
	size_t nt, capt;
	struct hmap bytid;		/* tid -> index in t */
	struct hmap fd;			/* pid << 32 | fd -> kind << 56 | ino */
	DARR(struct kstat) ks;
	DARR(struct dcand) c;
	uint64_t last_ts, first_ts;
	/* the library of similar nodes (diag-scan-sim.c) */
	DARR(struct simwaiter) waiters;
	struct hmap skq;		/* socket -> index in q + 1 */
	DARR(struct simq) q;
	struct hmap skown;		/* socket -> its last receiver */
};

/* diag-scan-sim.c, the library of similar nodes: event ge of thread t
   (its run's items); a switch of t at ts that blocked it; the exit (with
   ret) of t's call in progress, which records its last wait, and gives
   the candidate it made the waits it may be similar to; at the end of
   the pass, every thread's waits into their records (before the
   candidates' sim[] are read), then the library freed. */
void diag_sim_item(struct sthr *t, const struct graph_event *ge);
void diag_sim_switch(struct scan *s, struct sthr *t, uint64_t ts);
#define DIAG_SIM_NORET INT64_MIN	/* a call with no exit (yet) */
void diag_sim_exit(struct scan *s, struct sthr *t, int64_t ret);
void diag_sim_flush_all(struct scan *s);
/* A socket event ev: data made ready (t its sender, NULL in an interrupt
   context) or received by t: the peers of t's run. */
void diag_sim_msg(struct scan *s, struct sthr *t, const struct trace_event *ev);
void diag_sim_free(struct scan *s);

/* diag-scan-end.c: the end of the pass over s: the candidates that
   still make hangs, the longest wait of the chosen threads, the idle
   wait of every thread, into out; s's arrays move to out or are freed. */
void diag_scan_settle(struct scan *s, struct dscan *out);

#endif
