/*
 * record-local.h: internals of the kernel flight recorder (record*.c).
 *
 * A recorder owns one private tracefs instance ("argus-PID"), one open
 * trace_pipe_raw descriptor and one page buffer per CPU, a libtraceevent
 * handle holding the formats of the enabled events, and a table indexed
 * by kernel event id ("decoders") that says which trace type an id maps
 * to and where each needed field sits in the raw record. Decoding a record
 * is then a table lookup and a few fixed-offset loads: no text parsing.
 *
 * Two hash tables ride along: the thread table (tid -> pid, ppid, comm),
 * seeded from /proc and kept current by fork/exec/exit/rename events, and
 * the set of (pid, fd) pairs whose identity was already written as TT_FD.
 */
#ifndef ARGUS_RECORD_LOCAL_H
#define ARGUS_RECORD_LOCAL_H

#include <stdint.h>

#include "common/hmap.h"
#include "trace.h"

struct tep_handle;

/* Kinds of decoders: how a kernel event becomes a trace_event. */
enum dec_kind {
	DK_NONE = 0,		/* id seen, not ours: skip */
	DK_SWITCH, DK_WAKING, DK_WAKEUP_NEW, DK_NEWTASK, DK_EXEC, DK_EXIT,
	DK_RENAME, DK_IRQ_ENTRY, DK_IRQ_EXIT, DK_SOFTIRQ_ENTRY,
	DK_SOFTIRQ_EXIT, DK_IPI_CPU, DK_IPI_MASK,
	DK_HRT_START, DK_HRT_CANCEL, DK_HRT_EXPIRE, DK_HRT_EXIT,
	DK_TMR_START, DK_TMR_CANCEL, DK_TMR_EXPIRE, DK_TMR_EXIT,
	DK_WQ_QUEUE, DK_WQ_START, DK_WQ_END, DK_SIG_GEN, DK_SIG_DELIVER,
	DK_SOCK_SEND, DK_SOCK_RECV, DK_SK_READY, DK_SYS_ENTER, DK_SYS_EXIT,
	DK_RAW_DATA, DK_PROBE, DK_SOFTIRQ_RAISE,
	DK_SYSC_ENTER, DK_SYSC_EXIT,	/* syscalls:sys_enter_NAME, sys_exit_NAME */
	DK_FL_POSIX, DK_FL_FLOCK, DK_FL_SETLK, DK_FL_REMOVE, /* filelock */
};

#define DEC_MAXF 7

/* One field of a raw record: offset and size (0: absent), signedness. */
struct rfield {
	uint16_t off, size;
	uint8_t sign, dataloc;	/* dataloc: __data_loc string */
};

struct decoder {
	uint8_t kind;		/* enum dec_kind */
	uint8_t known;		/* id has been looked up */
	struct rfield f[DEC_MAXF];
	char *name;		/* probe name (DK_PROBE) */
};

/*
 * A kernel event the recorder knows: set that enables it (enum
 * record_set), decoder, needed field names (decoder order), and what the
 * analysis misses without it (for the warning).
 */
struct evspec {
	const char *sys, *name;
	int set;
	uint8_t kind;
	const char *fields[DEC_MAXF];
	const char *miss;
};

extern const struct evspec rec_evtab[];
extern const size_t rec_nevtab;

/* Thread table entry; tid 0 marks a free slot of recorder.thr. */
struct rthread {
	uint32_t tid, pid, ppid, flags;
	char comm[TRACE_COMM_LEN];
	/*
	 * Time of the event that set comm. CPUs are read one after another,
	 * so an older fork may be decoded after a newer rename: only a newer
	 * event may change the name.
	 */
	uint64_t comm_ts;
	/*
	 * Exited: the entry stays until the end of the next poll, so events
	 * of the thread read later from another CPU (its rename, its last
	 * switch) still find its process and name.
	 */
	int exited;
	/* A process forked (its fork seen) without exec since: it has its
	   parent's (ppid's) mappings (record-maps.c). */
	int forked;
};

struct rcpu {
	int fd;			/* trace_pipe_raw, nonblocking */
	uint64_t last_ts;
	uint64_t lost;		/* lost events written for this CPU */
};

/* What the decoding thread has done, as of its last entry. */
struct rec_snap {
	uint64_t events, stored, lost, fds, last_ts, disk_bytes;
	struct record_hang hang;
	int err;
};

struct pump;

struct recorder {
	char *dir;
	char *inst_name;
	char *inst_path;	/* tracing_dir/instances/NAME */
	char *marker_path;	/* .../trace_marker_raw */
	int marker_file;	/* we wrote ARGUS_MARKER_PATH_FILE */
	struct trace_writer *w;
	struct tep_handle *tep;
	unsigned ncpus;
	struct rcpu *cpus;
	unsigned subbuf;	/* bytes per sub-buffer (page) */
	struct pump *pump;	/* reading and decoding threads */
	int set;		/* enum record_set */
	uint32_t scope_netns;	/* record_opts': 0, or the network
				   namespace whose tasks alone are kept */
	uint64_t scope_cgroup;	/* record_opts': 0, or the cgroup id */
	int scope_cgfd;		/* record_opts': its directory */
	uint32_t *cg_pids;	/* the processes of its subtree at start,
				   sorted (rec_scope_load) */
	size_t ncg_pids, cg_cap;
	struct rbpf *bpf;	/* the BPF backend, or NULL: tracefs */
	uint64_t bound;

	struct decoder *dec;	/* indexed by kernel event id */
	unsigned ndec;

	struct hmap thr_of;	/* tid -> index in thr */
	struct rthread *thr;	/* the threads, and free slots */
	size_t nthr, thr_cap;
	uint32_t *thr_free;	/* indices of the free slots of thr */
	size_t nthr_free, thr_free_cap;

	struct hmap fds;	/* pid << 32 | (uint32_t)fd: identity written */
	struct hmap maps;	/* pid -> its mappings (record-maps.c) */
	struct rksyms *ksyms;	/* kernel functions (record-ksyms.c) */
	struct hmap ksyms_done;	/* their addresses written in segment */
	uint64_t ksyms_seg;	/* this one */
	struct hmap sktup;	/* TCP socket -> index + 1 in sktups */
	struct sktup {		/* its sock_addr record (record-bpf.c) */
		uint64_t seg;	/* segments begun when last written */
		uint32_t family, len;
		uint32_t proto;	/* 6 TCP, 17 UDP */
		char text[112];	/* "ADDR:PORT ADDR:PORT" */
	} *sktups;
	size_t nsktups, capsktups;
	int diag_fd;		/* NETLINK_SOCK_DIAG socket or -1 */
	int guard_fd;		/* pipe to the guard process, or -1 */
	pid_t guard_pid;	/* the guard (record-guard.c), or -1 */
	uint32_t *gone;		/* tids exited: [0, ngone_old) in the
				   poll before, the rest in this one */
	size_t ngone, ngone_old, gone_cap;
	uint32_t *dead;		/* pids exited since the last sweep */
	size_t ndead, dead_cap;

	uint64_t meta_ts;	/* last timestamp of the metadata stream */
	uint64_t events, stored, lost, pages, bytes, fd_written;
	uint64_t start_ts;
	struct record_hang hang;	/* hang marks decoded */
	int err;		/* first writer error, sticky */
	char **warn;
	size_t nwarn;
};

/* record-decode.c */
/* Allocate the format handle and the decoder table (reads header_page). */
int rec_decode_init(struct recorder *r, char **cause);
void rec_decode_free(struct recorder *r);
/* Decode the records of kernel event id as kind (enum dec_kind). */
void rec_decode_add(struct recorder *r, unsigned id, int kind);
/* Decode every record of the page (len bytes) read from cpu. */
void rec_decode_page(struct recorder *r, unsigned cpu, const uint8_t *page,
    size_t len);

/*
 * Store ev (filled as its trace type says) with what it implies for the
 * thread table and the fd set: TT_FORK (arg[0] child, arg[2] clone
 * flags; arg[1] is computed), TT_EXEC, TT_EXIT (group_dead: the process
 * is gone), TT_RENAME, TT_SYS_ENTER (close, fds), TT_SYS_EXIT (accept).
 * Both backends' decoders end here.
 */
void rec_emit(struct recorder *r, struct trace_event *ev, uint64_t group_dead);
/* A record written into trace_marker_raw: p holds 8 bytes of head, then
   the bytes written (len in all). */
void rec_decode_marker(struct recorder *r, struct trace_event *ev,
    const uint8_t *p, size_t len);
/* Name of the argus_probes event of kernel id, or NULL. */
const char *rec_probe_name(struct recorder *r, unsigned id);

/* record-pump.c */
/* Start the decoding thread; the decoder state is its own from now on. */
int rec_pump_start(struct recorder *r, char **cause);
/* Read every CPU's pages into the queue, then queue the end of the poll
   (with flush: the writer is flushed then). Returns the decoding thread's
   first error. */
int rec_pump_read(struct recorder *r, int flush);
/* Wait until everything queued is decoded and stored. */
void rec_pump_drain(struct recorder *r);
void rec_pump_snapshot(const struct recorder *r, struct rec_snap *s);
/* For the BPF reader: a free pool page (NULL when none), one given
   back unused, one filled and queued for the decoding thread. */
uint8_t *rec_pump_get(struct recorder *r);
void rec_pump_put(struct recorder *r, uint8_t *page);
void rec_pump_queue(struct recorder *r, uint8_t *page);
/* Stop the thread once the queue is drained (when started), free all. */
void rec_pump_free(struct recorder *r);

/* record-proc.c */
/* Scan /proc and write every thread through trace_writer_thread (a
   scoped recorder: the kernel threads and the scope's processes). */
void rec_proc_scan(struct recorder *r, uint64_t ts);
struct rthread *rec_thread_find(struct recorder *r, uint32_t tid);
struct rthread *rec_thread_add(struct recorder *r, uint32_t tid);
/* Thread tid, added when unknown with its process and parent read from
   /proc (0 when it is gone: an event may arrive before its creation's,
   read from another CPU, and the thread is not its own process). */
struct rthread *rec_thread_learn(struct recorder *r, uint32_t tid);
/* A thread met in an event at ts but unknown, once events were lost
   (its fork, exec and renames may be among them): its name and process
   from /proc, written to the metadata stream; a thread already gone is
   added nameless, so it is not looked up again. */
void rec_thread_recover(struct recorder *r, uint64_t ts, uint32_t tid);
void rec_thread_del(struct recorder *r, uint32_t tid);
/* Write the thread's identity to the metadata stream (exited once
   rec_thread_exited marked it: a later event read late keeps it so). */
void rec_thread_emit(struct recorder *r, uint64_t ts, const struct rthread *t);
/* Timestamp for the metadata stream: never older than the last one. */
uint64_t rec_meta_ts(struct recorder *r, uint64_t ts);
/* An fd of pid was used at ts; write its identity the first time. */
void rec_fd_seen(struct recorder *r, uint64_t ts, uint32_t pid, int fd);
/*
 * The BPF programs saw fd of pid name inode ino at ts (what: its S_IFMT
 * bits, RB_FD_EVENTFD or RB_FD_TERMINAL): its identity is written now,
 * from /proc when the fd still names that inode, else from ino and
 * what (the number was reused since).
 */
void rec_fd_known(struct recorder *r, uint64_t ts, uint32_t pid, int fd,
    uint64_t ino, uint64_t what);
/* fd was closed: forget it so a reused number is looked up again. */
void rec_fd_closed(struct recorder *r, uint32_t pid, int fd);
/* The process of thread tid as the thread table has it, else tid. */
uint32_t rec_tgid_of(struct recorder *r, uint32_t tid);
/* Thread t exited at ts: its record says so, and it is forgotten after
   the next poll, by rec_thread_reap. */
void rec_thread_exited(struct recorder *r, uint64_t ts, struct rthread *t);
/* At the end of a poll: forget the threads exited in the poll before. */
void rec_thread_reap(struct recorder *r);
/*
 * Process pid exited: its fd and maps marks are dropped at the next
 * rec_proc_sweep() (one pass over the set for all the exits of a poll),
 * so that a reused pid is looked up afresh.
 */
void rec_proc_exited(struct recorder *r, uint32_t pid);
void rec_proc_sweep(struct recorder *r);
void rec_proc_free(struct recorder *r);

/* record-maps.c */
/*
 * Addresses of process pid (frames, n of them; 0 for none known)
 * appear in the trace at ts: its executable mappings are written as
 * TT_MMAP when the segment being written has none of them yet or an
 * address falls outside those written (read again a second after the
 * last read, then less often while addresses stay outside: see
 * record-maps.c); for a process forked without exec whose addresses fall
 * in its parent's mappings, one TT_MMAP record naming the process whose
 * records hold them (`from`) instead.
 */
void rec_maps_need(struct recorder *r, uint64_t ts, uint32_t pid,
    const uint64_t *frames, size_t n);
/* rec_maps_need() for an address not at hand (a probe hit). */
void rec_maps_seen(struct recorder *r, uint64_t ts, uint32_t pid);
/* libargus wrote pid's mappings itself: in this segment none are read. */
void rec_maps_written(struct recorder *r, uint32_t pid);
/* pid exec'd, or is a new process's: its mappings are forgotten. */
void rec_maps_changed(struct recorder *r, uint32_t pid);
/* The processes dead[0..n) exited: forgotten (rec_proc_sweep). */
void rec_maps_sweep(struct recorder *r, const uint32_t *dead, size_t n);
void rec_maps_free(struct recorder *r);

/* record-ksyms.c */
/*
 * Kernel stack frames (n of them) appear in the trace at ts: the kernel
 * functions they fall in that the segment being written does not name
 * yet are written as TT_KSYM records (from /proc/kallsyms, read once).
 * A frame is a return address, the function of the byte before it;
 * exact: the innermost is where the code was (a sample's), its own.
 */
void rec_ksyms_need(struct recorder *r, uint64_t ts, int exact,
    const uint64_t *frames, size_t n);
/* Read /proc/kallsyms now, once (a recorder taking kernel stacks, at
   its start: its cost, tens of milliseconds, is not paid while it
   records). */
void rec_ksyms_load(struct recorder *r);
void rec_ksyms_free(struct recorder *r);

/* record-scope.c: rec_scope_load reads the pids of the scope cgroup's
   subtree (nothing without one); rec_scope_has says whether process pid
   was among them (always, without a cgroup scope). */
void rec_scope_load(struct recorder *r);
int rec_scope_has(const struct recorder *r, uint32_t pid);

/* record-bpf.c: the BPF backend (stubs failing with ENOTSUP in a build
   without it) */
struct rbpf;
/* Open and load the set's programs (nothing runs yet); the verifier's
   log goes to a file the error names. */
int rec_bpf_open(struct recorder *r, const struct record_opts *o,
    char **cause);
/* Attach the programs: recording starts. */
int rec_bpf_start(struct recorder *r, char **cause);
/* Probes of `argus probe`: not recorded by the BPF backend (a no-op). */
void rec_bpf_probes(struct recorder *r);
/* Copy what the ring holds into pool pages (reading thread). */
void rec_bpf_read(struct recorder *r);
/* Decode a page rec_bpf_read queued (decoding thread). */
void rec_bpf_decode_page(struct recorder *r, const uint8_t *page,
    size_t len);
/* Detach every program (recording stops); rec_bpf_free releases all. */
void rec_bpf_stop(struct recorder *r);
void rec_bpf_free(struct recorder *r);
/* The kernel's run time of the programs loaded and their runs when
   record_opts.bpf_stats had the kernel count them (0 and 0 else, and on
   tracefs); valid until rec_bpf_free. */
void rec_bpf_cost(const struct recorder *r, uint64_t *ns, uint64_t *runs);
/* Stacks of waits the BPF programs left out over their budget
   (record_opts.stack_rate); 0 on tracefs. */
uint64_t rec_bpf_stacks_skipped(const struct recorder *r);

/* record.c */
void rec_warn(struct recorder *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/*
 * A page of cpu said events were lost before it (not always how many):
 * write a TT_LOST at ts for what the CPU's overrun counter has grown by
 * since the last one. Page counts are not used, so nothing counts twice.
 */
void rec_sync_lost(struct recorder *r, unsigned cpu, uint64_t ts);
/* The time of a TT_LOST of cpu noticed at ts (0: unknown): not before
   the CPU's last event, nor before the recording started (a loss seen
   before a CPU's first event would otherwise fall outside the segment,
   where readers take its chunk for damaged). */
uint64_t rec_lost_ts(const struct recorder *r, unsigned cpu, uint64_t ts);
/* Add an event to the writer, keeping the first error. */
void rec_add(struct recorder *r, const struct trace_event *ev);

/* --- the guard process (record-guard.c) -------------------------------- */

/*
 * Fork the guard of r's instance (r->inst_path and r->marker_path set):
 * when r's process ends, even by SIGKILL, the guard turns the instance
 * off and removes it. Returns 0 or errno (then there is no guard).
 */
int rec_guard_start(struct recorder *r);
/* After the instance is removed: release the guard and reap it. */
void rec_guard_stop(struct recorder *r);

#endif
