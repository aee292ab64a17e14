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

struct sthr {
	uint32_t tid, pid, flags;	/* GRAPH_THREAD_KERNEL, _IRQ */
	char comm[TRACE_COMM_LEN];
	/* the open system call (the load's t->sys), and the last entry */
	int insys, nw, nw_final;
	struct graph_event sys, nwe;
	uint32_t seq;			/* entries so far */
	DARR(uint64_t) pend;		/* ended waits counting on nwe */
	DARR(size_t) pc;		/* candidates counting on sys */
	/* the wait in progress */
	int waiting, sw_nw, sw_insys;
	uint64_t sw_ts;
	struct graph_event sw_sys;
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
};

/* diag-scan-end.c: the end of the pass over s: the candidates that
   still make hangs, the longest wait of the chosen threads, the idle
   wait of every thread, into out; s's arrays move to out or are freed. */
void diag_scan_settle(struct scan *s, struct dscan *out);

#endif
