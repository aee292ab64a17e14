/*
 * trace.h: the argus trace store, the one public interface of trace/.
 *
 * A trace is a directory of segment files ("seg-NNNNNNNN.argus"). Each
 * segment starts with a self-describing header (host, clock, CPUs, the
 * event schema and the thread table valid at its start), continues with
 * chunks (a small header plus one zstd frame holding the events of one
 * CPU stream over a stretch of time) and, once complete, ends with a seek
 * index. argus-trace(5) documents the bytes.
 *
 * Events are decoded into struct trace_event: a timestamp, the thread
 * that was current on the CPU, the CPU, the interrupt context, up to six
 * numeric fields whose meaning depends on the type (see the table in
 * trace/schema.c and argus-trace(5)) and at most one variable-length
 * field (a string or an array of 64-bit values), interned by the reader.
 *
 * Error convention: functions that can fail return 0 or a positive error
 * code, either an errno value or one of enum trace_error (outside errno's
 * range); trace_strerror() turns either into text. Opening functions also
 * fill *cause, when not NULL, with an allocated sentence naming the file.
 */
#ifndef ARGUS_TRACE_H
#define ARGUS_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "trace/user-protocol.h"

enum trace_error {
	TRACE_EBASE = 10000,
	TRACE_EMAGIC,		/* not an argus segment or trace */
	TRACE_EVERSION,		/* format version newer than this argus */
	TRACE_ECORRUPT,		/* damaged header or index */
	TRACE_EEMPTY,		/* directory holds no segment */
	TRACE_EZSTD,		/* compression library failure */
	TRACE_EBOUND,		/* size bound too small for the segment size */
	TRACE_EORDER,		/* event older than the previous one of its CPU */
	TRACE_ELOCKED,		/* another writer holds the directory */
	TRACE_EARG,		/* invalid argument */
	TRACE_EUNSAFE,		/* trace directory owned or writable by others */
};

/* Text for an error code (errno or enum trace_error). */
const char *trace_strerror(int err);

/* Format version written by this argus. */
#define TRACE_FORMAT_VERSION 2

/* Event types. Numbers are this build's; files carry names (schema). */
enum trace_type {
	TT_NONE = 0,
	/* scheduling */
	TT_SWITCH,		/* prev_state, next_tid, next_prio */
	TT_WAKING,		/* wakee, target_cpu, prio */
	TT_WAKEUP_NEW,		/* wakee, target_cpu */
	TT_MIGRATE,		/* tid, orig_cpu, dest_cpu */
	/* task life */
	TT_FORK,		/* child, child_pid, clone_flags; blob comm */
	TT_EXEC,		/* pid, old_tid; blob filename */
	TT_EXIT,		/* tid */
	TT_RENAME,		/* tid; blob new comm */
	/* interrupts */
	TT_IRQ_ENTRY,		/* irq; blob handler name */
	TT_IRQ_EXIT,		/* irq, ret */
	TT_SOFTIRQ_ENTRY,	/* vec */
	TT_SOFTIRQ_EXIT,	/* vec */
	TT_SOFTIRQ_RAISE,	/* vec */
	TT_IPI,			/* kind (enum trace_ipi), arg; blob reason */
	/* timers */
	TT_TIMER_START,		/* timer, function, expires, kind, mode */
	TT_TIMER_CANCEL,	/* timer, kind */
	TT_TIMER_EXPIRE,	/* timer, kind, function */
	TT_TIMER_EXPIRE_EXIT,	/* timer, kind */
	/* work queues */
	TT_WQ_QUEUE,		/* work, function, req_cpu, cpu; blob wq */
	TT_WQ_START,		/* work, function */
	TT_WQ_END,		/* work, function */
	/* signals */
	TT_SIGNAL_GEN,		/* sig, target tid, code, result */
	TT_SIGNAL_DELIVER,	/* sig, code, handler */
	/* sockets */
	TT_SOCK_SEND,		/* sk, family, protocol, ret, flags, seq */
	TT_SOCK_RECV,		/* sk, family, protocol, ret, flags, seq */
	TT_SK_DATA_READY,	/* sk, family, protocol */
	/* syscalls */
	TT_SYS_ENTER,		/* nr, a0, a1, a2, a3, a4 */
	TT_SYS_EXIT,		/* nr, ret */
	/* user space (instrumentation library, probes, watchpoints) */
	TT_USER,		/* kind (enum trace_user), key, arg, arg2; blob name */
	TT_STACK,		/* tid, kind, ref; blob u64 frames, innermost first */
	/* metadata written by the recorder */
	TT_MMAP,		/* pid, start, len, pgoff, from; blob path
				   (from != 0, no path: pid has the
				   mappings of process from) */
	TT_FD,			/* pid, fd, kind (enum trace_fd), ino, peer; blob text */
	TT_THREAD,		/* tid, pid, ppid, start_ts, flags; blob comm */
	TT_LOST,		/* count (events the kernel lost on ev.cpu) */
	/* file locks */
	TT_FILELOCK,		/* op (enum trace_filelock_op), ino, dev,
				   type | flags << 8, ret, owner */
	TT_SOCK_ADDR,		/* sk, family, protocol; blob the local and
				   remote address and port, "ADDR:PORT
				   ADDR:PORT" (IPv6 in brackets) */
	TT_KSYM,		/* addr, size; blob name: a kernel function
				   the kernel stacks of its segment name
				   (from /proc/kallsyms at record time) */
	TT_STACKDEF,		/* id; blob u64 frames (TRACE_STACK_MAX) */
	TT_NTYPES
};

/* Interrupt context of an event, in trace_event.flags & TRACE_CTX_MASK. */
enum trace_ctx {
	TRACE_CTX_TASK = 0,
	TRACE_CTX_SOFTIRQ = 1,
	TRACE_CTX_HARDIRQ = 2,
	TRACE_CTX_NMI = 3,
};
#define TRACE_CTX_MASK 3u

/* Kinds of file descriptor identity (TT_FD). */
enum trace_fd {
	TFD_OTHER = 0,
	TFD_FILE,
	TFD_PIPE,		/* ino: pipe inode */
	TFD_UNIX,		/* ino: socket inode, peer: peer socket inode */
	TFD_TCP,
	TFD_UDP,
	TFD_TTY,
	TFD_EVENTFD,
	TFD_TIMERFD,
	TFD_EPOLL,
	TFD_SOCKET,		/* other socket families */
};

/* The op field of TT_FILELOCK: which kernel tracepoint of the filelock
   system. type is 0 read, 1 write, 2 unlock (TRACE_FL_*); flags are the
   kernel's FL_* bits; owner identifies the lock's owner (the open file of
   a flock or OFD lock, the process's file table of a POSIX lock). */
enum trace_filelock_op {
	TFL_POSIX = 1,		/* posix_lock_inode */
	TFL_FLOCK = 2,		/* flock_lock_inode */
	TFL_SETLK = 3,		/* fcntl_setlk */
	TFL_REMOVE_POSIX = 4,	/* locks_remove_posix (a close) */
};
#define TRACE_FL_RD 0
#define TRACE_FL_WR 1
#define TRACE_FL_UN 2

/*
 * The kind field of TT_STACK. The instrumentation library's stacks
 * carry the TT_USER kind (enum trace_user, below 0x40) of the record they
 * belong to; the recorder's own have these. tid is the thread whose
 * stack it is, which for TSK_WAKER is the waker, not the thread woken.
 */
enum trace_stack_kind {
	TSK_WAIT = 0,		/* a user stack where a wait of stack_ns or
				   more blocked, when its call returns */
	TSK_WAKER = 0x40,	/* the waker's user stack at the wake-up of a
				   thread blocked that long (a few µs after
				   its TT_WAKING); the kind's bits 8 and up
				   hold the tid of the thread woken */
	TSK_SAMPLE = 0x41,	/* a sample (RB_SAMPLE_HZ) of a thread that ran
				   that long without blocking */
	TSK_KWAIT = 0x42,	/* the kernel stack where a thread blocked ten
				   times that long slept, taken at its
				   wake-up */
	TSK_KSAMPLE = 0x43,	/* the kernel stack of a TSK_SAMPLE that found
				   its thread in the kernel (a system call,
				   a fault), innermost the interrupted
				   address; right after that sample, at its
				   time */
};
/* Where the kernel's addresses begin (x86-64): a frame at or above it is
   a kernel function's, named by the TT_KSYM records. */
#define TRACE_KERNEL_ADDR 0xffff800000000000ULL

enum trace_ipi { TIPI_SEND = 0, TIPI_ENTRY = 1, TIPI_EXIT = 2 };

/* The kind field of the timer events. */
enum trace_timer_kind { TTIMER_LIST = 0, TTIMER_HR = 1 };

/* Flags of struct trace_thread. */
#define TRACE_THREAD_KERNEL	0x1	/* a kernel thread */
#define TRACE_THREAD_EXITED	0x2	/* exited during the trace */

/* CPU number of the metadata stream (thread table updates, fds, maps). */
#define TRACE_CPU_META 0xffffu

#define TRACE_NARGS 6

struct trace_event {
	uint64_t ts;		/* nanoseconds on the trace clock */
	uint32_t tid;		/* thread current on the CPU; 0 is idle */
	uint16_t type;		/* enum trace_type */
	uint16_t cpu;		/* CPU, or TRACE_CPU_META */
	uint32_t flags;		/* enum trace_ctx in the low bits */
	uint32_t blob_len;	/* bytes at blob (a string has no NUL in len) */
	uint64_t arg[TRACE_NARGS];
	const void *blob;	/* NUL-terminated string, or uint64_t array */
};

#define TRACE_COMM_LEN 16

struct trace_thread {
	uint32_t tid;
	uint32_t pid;		/* thread group id */
	uint32_t ppid;
	uint32_t flags;		/* TRACE_THREAD_* */
	uint64_t start_ts;	/* 0 when it started before the trace */
	char comm[TRACE_COMM_LEN];
};

/* --- schema ------------------------------------------------------------ */

/* Short name of a type ("switch", "waking", ...), or NULL if unknown. */
const char *trace_type_name(unsigned type);
/* Type number of a name, or TT_NONE. */
unsigned trace_type_lookup(const char *name);
/* Number of numeric fields of a type and the name of field i. */
unsigned trace_type_nargs(unsigned type);
const char *trace_type_arg_name(unsigned type, unsigned i);
/* Name of the variable field, or NULL; whether it is a string (1) or array (2). */
const char *trace_type_blob_name(unsigned type);
int trace_type_blob_kind(unsigned type);
/*
 * Frames a TT_STACK event holds at most (both recorders' limit). A stack
 * of no frame, of a cut frame (a length not a multiple of 8) or of more
 * than these is malformed: trace_stack_malformed() is 1 for it (0 for a
 * well-formed stack and for any other event), and the reader and the
 * graph load skip it; so is a TT_STACKDEF of such frames. A stack is
 * stored once per segment: the writer defines it (TT_STACKDEF, id, on
 * the metadata stream) and writes its TT_STACK events with ref = id + 1
 * and no frames (ref 0: the event holds them, as before ref). Readers
 * resolve ref from the event's segment and return TT_STACK with its
 * frames and ref 0 (skipped, warned once, when the segment lacks the
 * definition), and the TT_STACKDEF records too, as metadata.
 */
#define TRACE_STACK_MAX 32
int trace_stack_malformed(const struct trace_event *ev);
/* Name of a TT_USER kind ("task_begin", ...), or NULL. */
const char *trace_user_kind_name(unsigned kind);
unsigned trace_user_kind_lookup(const char *name);
const char *trace_fd_kind_name(unsigned kind);
/* Name of a system call number of this architecture, or NULL. */
const char *trace_syscall_name(unsigned long nr);
/* Number of a system call name, or -1. */
long trace_syscall_lookup(const char *name);
/*
 * 1 when system call nr takes a file descriptor as its first argument
 * (reads, writes, socket calls, epoll waits, fsync, flock, fcntl, ioctl,
 * splice): what it waits on is that descriptor. 0 otherwise.
 */
int trace_syscall_fd_arg(unsigned long nr);

/* --- the trace directory as a trust boundary (trustdir.c) -------------- */

/*
 * Open a trace directory that this process may trust: a real directory
 * (a symbolic link is refused, with or without a trailing slash), owned
 * by the effective user or by root, and writable by nobody else (no write
 * bit for others; for the group only when it is the caller's own group
 * and the caller owns it). Returns a descriptor (O_DIRECTORY, close on
 * exec) or -1 with *err set (errno or TRACE_EUNSAFE) and *cause, when
 * not NULL, an allocated sentence naming dir.
 */
int trace_dir_open(const char *dir, int *err, char **cause);

/* As trace_dir_open, for dir relative to the directory at (or AT_FDCWD). */
int trace_dir_openat(int at, const char *dir, int *err, char **cause);

/*
 * Open a small file of a trusted directory (argus.pid, status) for
 * reading: never through a symbolic link, never blocking on a FIFO, only
 * a regular file. Returns a descriptor or -1 with errno set (EINVAL for
 * a file that is not regular).
 */
int trace_dir_open_file(int dirfd, const char *name);

/*
 * Read at most size - 1 bytes of a regular file of dirfd into buf (NUL
 * terminated). Returns the length, or -1 with errno set.
 */
ssize_t trace_dir_read_file(int dirfd, const char *name, char *buf,
    size_t size);

/* --- writer ------------------------------------------------------------ */

struct trace_writer;

struct trace_writer_opts {
	uint64_t size_bound;	/* bytes of segment files at most; 0: 2 GiB */
	uint64_t segment_size;	/* bytes per segment at most; 0: 64 MiB */
	uint32_t chunk_size;	/* raw bytes per chunk; 0: automatic */
	int zstd_level;		/* 0: default */
	mode_t file_mode;	/* 0: 0600 */
	gid_t group;		/* group of new files, (gid_t)-1: unchanged */
	uint32_t ncpus;		/* 0: online CPUs */
	const char *clock;	/* name of the trace clock; NULL: "boot" */
	int64_t realtime_offset;/* wall clock minus trace clock, ns */
	const char *hostname;	/* NULL: uname */
	const char *release;	/* NULL: uname */
	const char *boot_id;	/* NULL: /proc/sys/kernel/random/boot_id */
	const char *recorder;	/* backend named in the headers ("bpf",
				   "tracefs"), or NULL; kept, not copied */
	uint32_t recorder_pid;	/* the recording process, in the headers
				   (0: none), so that readers can tell
				   its threads from the traced ones */
	unsigned format;	/* 0: TRACE_FORMAT_VERSION; 1: the event
				   rows of argus before format 2 (tests) */
};

#define TRACE_DEFAULT_BOUND (2ULL << 30)
#define TRACE_DEFAULT_SEGMENT (64ULL << 20)
#define TRACE_MIN_SEGMENT (64u << 10)

/*
 * Open a trace directory for appending (created if missing, 0700, or 0750
 * with opts->group as its group). The directory must pass
 * trace_dir_open() (no symbolic link, no other owner, not writable by
 * others). Existing segments are kept, counted against the bound and
 * continued after. Only one writer may hold a directory (flock on
 * DIR/.lock). Returns 0 and *wp, or an error with *cause set.
 */
int trace_writer_open(struct trace_writer **wp, const char *dir,
    const struct trace_writer_opts *opts, char **cause);

/*
 * Append an event to the stream of ev->cpu. Events of one CPU must come in
 * non-decreasing time order (TRACE_EORDER otherwise, and the event is
 * dropped). The blob is copied. May compress and write a chunk. A
 * TT_STACK's ref is the writer's; a TT_STACKDEF is dropped (returns 0).
 */
int trace_writer_add(struct trace_writer *w, const struct trace_event *ev);

/*
 * Record a thread's identity at time ts: updates the table written into
 * every new segment header and appends a TT_THREAD event to the metadata
 * stream. With TRACE_THREAD_EXITED in flags the thread leaves the table
 * of later segments.
 */
int trace_writer_thread(struct trace_writer *w, uint64_t ts,
    const struct trace_thread *t);

/* Compress and write everything pending, so readers see it. */
int trace_writer_flush(struct trace_writer *w);

/* Flush, write the seek index of the open segment and release *w. */
int trace_writer_close(struct trace_writer *w);

struct trace_writer_stats {
	uint64_t events;	/* events accepted */
	uint64_t dropped;	/* events refused (TRACE_EORDER) */
	uint64_t chunks;	/* chunks written */
	uint64_t raw_bytes;	/* encoded bytes before compression */
	uint64_t disk_bytes;	/* bytes of segment files now on disk */
	uint64_t written_bytes;	/* bytes written since open */
	uint64_t segments;	/* segments now on disk */
	uint64_t deleted;	/* segments deleted to hold the bound */
};
void trace_writer_stats(const struct trace_writer *w,
    struct trace_writer_stats *st);

/*
 * The segment the events added from now on go to, as a number that
 * grows by one with each new segment (segments begun, counting the
 * one the next chunk opens when none is open). A metadata record
 * written under one number is in the segment of that number or a
 * later one.
 */
uint64_t trace_writer_segment(const struct trace_writer *w);

/* Detail of the last error of a writer (file and reason), or "". */
const char *trace_writer_error(const struct trace_writer *w);

/*
 * The trace directory's descriptor, opened and checked once by
 * trace_writer_open (trace_dir_open); valid until trace_writer_close.
 */
int trace_writer_dirfd(const struct trace_writer *w);

/* --- reader ------------------------------------------------------------ */

struct trace_reader;

struct trace_info {
	const char *hostname;
	const char *release;
	const char *clock;
	const char *boot_id;
	const char *recorder;		/* backend that recorded, or NULL */
	uint32_t recorder_pid;		/* its process, 0 when not recorded */
	uint32_t ncpus;
	uint32_t version;
	int64_t realtime_offset;	/* of the newest segment */
	uint64_t first_ts, last_ts;	/* from chunk headers; 0 if none */
	uint32_t nsegments;
	uint64_t nchunks;
	uint64_t nevents;		/* from chunk headers */
	uint64_t disk_bytes;
};

struct trace_segment_info {
	const char *path;
	uint64_t seq;
	uint64_t size;
	uint64_t first_ts, last_ts;
	uint64_t nchunks, nevents;
	int complete;			/* has a valid seek index */
	int skipped;			/* unreadable, or from another boot */
};

struct trace_damage {
	const char *path;
	uint64_t offset;
	const char *reason;
};

/* Called once per damaged spot as the reader meets it. */
typedef void (*trace_damage_fn)(const struct trace_damage *d, void *arg);

/*
 * Open a trace directory (or a single segment file) for reading. Reads
 * segment headers and seek indexes, and the chunk headers only of a
 * segment without an index; a chunk found through an index is checked
 * against its entry when first read. A directory must pass
 * trace_dir_open(); only regular files are read (a FIFO, a device or a
 * symbolic link in the directory is skipped, never waited on). Fails
 * when no segment is readable; damaged segments and chunks are skipped
 * and reported.
 */
int trace_reader_open(struct trace_reader **rp, const char *path,
    char **cause);
void trace_reader_close(struct trace_reader *r);

/* Report damage through fn (also kept for trace_reader_damage()). */
void trace_reader_on_damage(struct trace_reader *r, trace_damage_fn fn,
    void *arg);

/*
 * Call fn(arg, done, total) after each chunk trace_reader_next() or
 * trace_reader_read() decompresses: done chunks read of the total (for
 * progress bars). NULL stops.
 */
typedef void (*trace_progress_fn)(void *arg, uint64_t done, uint64_t total);
void trace_reader_on_progress(struct trace_reader *r, trace_progress_fn fn,
    void *arg);
/* For a caller that decodes chunks in bulk (trace_reader_decode_chunk()):
   call the progress function with done chunks of the total, from the
   thread that set it. */
void trace_reader_tell_progress(struct trace_reader *r, uint64_t done);

const struct trace_info *trace_reader_info(const struct trace_reader *r);
size_t trace_reader_nsegments(const struct trace_reader *r);
const struct trace_segment_info *trace_reader_segment(
    const struct trace_reader *r, size_t i);

/*
 * Position the reader at the first event at or after ts, using the seek
 * index; ts 0 rewinds. Chunks that end before ts are not decompressed.
 */
int trace_reader_seek(struct trace_reader *r, uint64_t ts);

/*
 * Next event in time order across CPUs and segments. Returns 1 and fills
 * *ev, or 0 at the end. ev->blob stays valid until the reader is closed.
 * Events of types this argus does not know are skipped.
 */
int trace_reader_next(struct trace_reader *r, struct trace_event *ev);

/* Up to n events into evs; returns how many (0 at the end). */
size_t trace_reader_read(struct trace_reader *r, struct trace_event *evs,
    size_t n);

/*
 * From now until the next seek or the close, decode the chunks the reader
 * will need next on a helper thread, whole, while trace_reader_next() and
 * trace_reader_read() only merge them: the same events, for a caller that
 * reads on and has a CPU to spare. Damage is reported as without it.
 * Returns 0, or -1 when the thread could not start (nothing changes).
 */
int trace_reader_decode_ahead(struct trace_reader *r);

/*
 * Thread table: every thread named by a segment header or a TT_THREAD
 * event read so far (all headers are read at open). Latest wins.
 */
const struct trace_thread *trace_reader_thread(const struct trace_reader *r,
    uint32_t tid);
size_t trace_reader_nthreads(const struct trace_reader *r);
const struct trace_thread *trace_reader_thread_at(const struct trace_reader *r,
    size_t i);

struct trace_reader_stats {
	uint64_t events;		/* events returned */
	uint64_t unknown;		/* events of unknown types skipped */
	uint64_t chunks_read;		/* chunks decompressed */
	uint64_t damaged;		/* damaged spots met */
	uint64_t lost;			/* sum of TT_LOST counts returned */
};
void trace_reader_stats(const struct trace_reader *r,
    struct trace_reader_stats *st);
size_t trace_reader_ndamage(const struct trace_reader *r);
const struct trace_damage *trace_reader_damage(const struct trace_reader *r,
    size_t i);

/* --- bulk access: chunks decoded independently, for loaders ----------- */

struct trace_chunk_info {
	uint16_t cpu;			/* or TRACE_CPU_META */
	uint32_t count;			/* events in the chunk's header */
	uint64_t first_ts, last_ts;
};

/*
 * Chunks of the trace: those of one CPU stream are consecutive and in time
 * order, streams one after another. A chunk decodes on its own, so a
 * loader may decode chunks on several threads and order events itself.
 */
size_t trace_reader_nchunks(const struct trace_reader *r);
const struct trace_chunk_info *trace_reader_chunk(const struct trace_reader *r,
    size_t i);

/* Decoding state (zstd context, buffers) for one thread. */
struct trace_chunk_buf;
struct trace_chunk_buf *trace_chunk_buf_new(void);
void trace_chunk_buf_free(struct trace_chunk_buf *b);

/*
 * Decode chunk i into evs, which has room for its count. Returns how many
 * events were stored: all of them, or those before a damaged spot (which
 * is reported once). Threads may decode at the same time, each with its
 * own buffer. Blobs live as long as the reader. TT_THREAD events are
 * returned but, unlike trace_reader_next(), do not update the thread table.
 */
size_t trace_reader_decode_chunk(struct trace_reader *r, size_t i,
    struct trace_chunk_buf *b, struct trace_event *evs);
/*
 * As trace_reader_decode_chunk(), storing only the events whose type
 * want[type] (TT_NTYPES entries) is set; a columnar chunk reads no
 * field of the others. want NULL: every event.
 */
size_t trace_reader_decode_chunk_only(struct trace_reader *r, size_t i,
    struct trace_chunk_buf *b, struct trace_event *evs, const uint8_t *want);

/*
 * Format an event as one line (no newline) into buf, the stable text of
 * argus-dump(1): time (seconds after base_ts, or absolute nanoseconds when
 * base_ts is UINT64_MAX), CPU, tid, comm (from r when not NULL), type name
 * and the fields as name=value. Returns the length it needed.
 */
size_t trace_format_event(const struct trace_reader *r,
    const struct trace_event *ev, uint64_t base_ts, char *buf, size_t len);
/* Only the "name=value ..." part of trace_format_event. */
size_t trace_format_fields(const struct trace_event *ev, char *buf,
    size_t len);

/*
 * Read the thread records of the whole trace ahead (the metadata
 * stream's chunks only), for trace_reader_thread_ahead(): the recorder
 * writes a thread's record when it learns of the thread, which may be
 * after the thread's first events. Call before reading events. Returns
 * 0, or an error when no chunk could be decoded (damaged chunks are
 * reported as usual).
 */
int trace_reader_read_ahead_threads(struct trace_reader *r);
/* The first record of thread tid anywhere in the trace (after
   trace_reader_read_ahead_threads()), or NULL. */
const struct trace_thread *trace_reader_thread_ahead(
    const struct trace_reader *r, uint32_t tid);
/*
 * Fill the reader's thread table (trace_reader_thread(),
 * trace_reader_thread_at()) from every thread record of the metadata
 * stream, as reading the whole trace would leave it (latest name, exit
 * flags), without decoding the event chunks. For listings that read no
 * event; not to be mixed with trace_reader_next(). Returns as
 * trace_reader_read_ahead_threads().
 */
int trace_reader_read_threads(struct trace_reader *r);

/* Duplicate of a string interned for the reader's life (for comm names). */
const char *trace_reader_intern(struct trace_reader *r, const char *s);

/* --- several hosts' traces read as one (trace/reader-multi.c) -------- */

/*
 * How a host's clock maps onto the merged trace's (the first host's):
 * t_host = t_first + offset + drift * (t_first - ref).
 */
struct trace_clockmap {
	int64_t offset;
	double drift;			/* ns per ns; 0 for a constant offset */
	uint64_t ref;
};

/* A time of the host's clock on the first's (saturating). */
uint64_t trace_clockmap_apply(const struct trace_clockmap *m, uint64_t t);

/*
 * In a merged trace, host k's threads and processes keep their own ids in
 * the low TRACE_TID_HOST_SHIFT bits and k above them (host 0's are as
 * recorded; 0, the idle task, stays 0). Keys of kernel objects (sockets,
 * timers, work items, inodes, user keys) get k in bits 48 and up.
 */
#define TRACE_TID_HOST_SHIFT 22
#define TRACE_MAX_HOSTS 64
uint32_t trace_tid_on_host(uint32_t tid, unsigned host);
/* The host of a merged trace's tid, and the tid on that host. */
unsigned trace_tid_host(uint32_t tid);
uint32_t trace_tid_local(uint32_t tid);
uint64_t trace_key_on_host(uint64_t key, unsigned host);
/* Host k's kernel address as a merged trace's TT_KSYM records give it:
   k in bits 40 to 45, each host's kernel apart (their symbols and
   KASLR differ) and still above TRACE_KERNEL_ADDR. Stack frames keep
   the host's own: a reader tags them with the host of their thread. */
uint64_t trace_kaddr_on_host(uint64_t addr, unsigned host);

/*
 * Read n hosts' traces (readers opened with trace_reader_open(), which
 * the merged reader then owns and closes) as one: host k's events with its clock mapped by maps[k]
 * (NULL: none mapped), its threads, CPUs and keys set apart as above,
 * named names[k] (NULL: the host name its trace records).
 * Every reading function works on the result; the bulk view lists host
 * after host. Fails (EINVAL, *cause) when n is 0 or above
 * TRACE_MAX_HOSTS; then the readers stay the caller's.
 */
int trace_reader_merge(struct trace_reader **rp, struct trace_reader **hosts,
    const struct trace_clockmap *maps, const char *const *names, size_t n,
    char **cause);
/* Hosts of a reader: 1 for one trace. */
size_t trace_reader_nhosts(const struct trace_reader *r);
/* Host k's name (the trace's host name for a plain reader), or NULL. */
const char *trace_reader_host_name(const struct trace_reader *r, size_t k);
/* The host of a CPU of the merged trace (0 for a plain reader). */
size_t trace_reader_cpu_host(const struct trace_reader *r, unsigned cpu);

/*
 * A TCP message between two hosts of a merged trace: a send and the
 * receive that took its last byte, in the merged trace's terms (times,
 * threads and sockets mapped). The engine pairs them (engine/sync.c) and
 * keeps them with the reader for its graph builds.
 */
struct trace_msg_pair {
	uint64_t send_ts, send_sk;
	uint64_t recv_ts, recv_sk;
	uint32_t send_tid, recv_tid;
};
void trace_reader_set_pairs(struct trace_reader *r,
    const struct trace_msg_pair *p, size_t n);
/* The pairs (sorted as set: by receive time, then send time), *n of
   them; NULL and 0 for a plain reader. */
const struct trace_msg_pair *trace_reader_pairs(const struct trace_reader *r,
    size_t *n);
/* The pairs' indices sorted by send time (then index), or NULL. */
const uint32_t *trace_reader_pairs_by_send(const struct trace_reader *r);

/* --- snapshots (trace/snapshot.c) ----------------------------------- */

struct trace_snapshot_stats {
	uint32_t segments;		/* segments in the snapshot */
	uint32_t linked, cloned, copied;	/* how each got there */
	uint32_t vanished;		/* deleted by the ring while copying */
	uint64_t bytes;			/* bytes of the snapshot's files */
	uint64_t bytes_copied;		/* of which copied byte by byte */
	uint64_t first_ts, last_ts;	/* span of the segments taken */
};

/*
 * Copy the segments of trace directory src holding events of the last
 * last_ns nanoseconds before its newest event (0: all) into dest, telling
 * fn (when not NULL) the bytes taken so far and in all, into dest, which
 * is created or must be empty and trusted as trace_dir_open trusts (not
 * another user's, writable by no one else), while a writer may still
 * append to src; a temporary file is always a new one (O_EXCL).
 * Closed segments are hard linked, else cloned (FICLONE), else copied;
 * the open one is copied up to its last complete chunk and closed with a
 * seek index, so dest is a complete trace on its own. Returns 0, or an
 * error with *cause set (and nothing left in dest).
 */
int trace_snapshot(const char *src, const char *dest, uint64_t last_ns,
    trace_progress_fn fn, void *arg, struct trace_snapshot_stats *st,
    char **cause);

/*
 * As trace_snapshot, into the new directory name of dirfd (a folder the
 * caller opened with trace_dir_open): nothing but src is looked up by
 * path, so a link put in the folder's place meanwhile is never followed.
 */
int trace_snapshot_in(const char *src, int dirfd, const char *name,
    uint64_t last_ns, struct trace_snapshot_stats *st, char **cause);

/*
 * Bound a folder of snapshots (subdirectories holding only segments):
 * delete the first ones by name (names start with their time) until at
 * most keep remain and their files add up to max_bytes at most (0: no
 * size bound); the last one always stays. *removed gets the count.
 * dir must be trusted (trace_dir_open); else its error.
 */
int trace_snapshot_prune(const char *dir, size_t keep, uint64_t max_bytes,
    size_t *removed);
/* The same for a folder opened by the caller (trace_dir_open). */
int trace_snapshot_prune_fd(int dirfd, size_t keep, uint64_t max_bytes,
    size_t *removed);

/* --- recorder (trace/record*.c) --------------------------------------- */

/*
 * The kernel flight recorder: a private tracefs instance whose per-CPU
 * raw buffers are read as binary, decoded with the kernel's format
 * descriptions and written through a trace_writer. Needs root.
 */
struct recorder;

enum record_set {
	RECORD_SET_SCHED = 0,	/* scheduling, interrupts, timers, task life */
	RECORD_SET_DEFAULT,	/* + work queues, signals, sockets, the
				   syscalls that block or communicate */
	RECORD_SET_FULL,	/* + every syscall */
};

/*
 * Where the kernel events come from. BPF: programs on tracepoints write
 * compact records into a ring buffer (syscalls only when they block or
 * wake another without blocking); tracefs: the instance's own buffers.
 * Either way a tracefs instance carries libargus's marker. Auto: BPF
 * where it loads, else tracefs.
 */
enum record_backend {
	RECORD_BACKEND_AUTO = 0,
	RECORD_BACKEND_TRACEFS,
	RECORD_BACKEND_BPF,
};

struct record_opts {
	const char *dir;		/* trace directory (created) */
	struct trace_writer_opts wopts;	/* bound, segment size, mode, group */
	int set;			/* enum record_set */
	unsigned buffer_kb;		/* kernel buffer per CPU; 0: 8192 */
	int marker_file;		/* publish ARGUS_MARKER_PATH_FILE */
	int backend;			/* enum record_backend */
	uint32_t scope_netns;		/* only the tasks of the network
					   namespace of this inode (BPF), with
					   kernel threads and interrupts; 0:
					   every task */
	uint64_t scope_cgroup;		/* only the tasks of the cgroup v2 of
					   this id and its descendants (BPF),
					   likewise; with scope_netns, the
					   tasks inside both; 0: every task */
	unsigned scope_cglevel;		/* its depth below the root */
	int scope_cgfd;			/* its directory, open while
					   recording (the caller's): the
					   thread table reads it */
	uint64_t stack_ns;		/* the user stack of each wait this
					   long or longer, at its end, its
					   waker's, samples of threads that
					   run that long (BPF); 0: none */
	unsigned stack_depth;		/* frames of a stack at most, 1 to
					   TRACE_STACK_MAX; 0: that */
	unsigned stack_rate;		/* stacks a CPU takes a second at
					   most for waits under ten times
					   stack_ns (BPF; longer ones always
					   get theirs); 0: no bound */
	int net_sends;			/* also the sends of TCP messages to
					   other hosts, with their sequence
					   (BPF; in the full set always) */
	int bpf_stats;			/* have the kernel count the BPF
					   programs' run time (two clock
					   reads a run, for every BPF program
					   of the system while it records) */
};

/* Backend by name ("auto", "tracefs", "bpf"); -1 when unknown. */
int record_backend_lookup(const char *name);
const char *record_backend_name(int backend);
/* Whether this build has the BPF backend. */
int record_have_bpf(void);
/* The backend a recorder runs on (never auto). */
int record_backend(const struct recorder *r);

#define RECORD_DEFAULT_BUFFER_KB 8192
/* Stacks a CPU takes a second at most, by default (--stack-rate). */
#define RECORD_DEFAULT_STACK_RATE 1000

/* Event set by name ("sched", "default", "full"); -1 when unknown. */
int record_set_lookup(const char *name);
const char *record_set_name(int set);

/*
 * Remove the tracefs instances left by recorders that died (named
 * "argus-PID" with PID no longer alive). Returns how many were removed.
 */
int record_remove_stale(void);

/*
 * Create the instance, enable the events of the set, open the trace
 * directory, scan /proc and start tracing. Events the kernel lacks are
 * skipped with a warning (record_warning). Returns 0 and *rp, or an error
 * with *cause set; nothing is left behind on failure.
 */
int record_open(struct recorder **rp, const struct record_opts *o,
    char **cause);

/*
 * The scopes of a recorder (record-scope.c). record_scope_netns: the
 * inode of network namespace arg into *ino: a path to one (a file of
 * /proc/PID/ns, or one ip-netns(8) bound), or a name ip-netns(8) gave
 * (/run/netns/NAME). record_scope_cgroup: the cgroup v2 directory path
 * (not a symbolic link) into o's scope_cgroup, scope_cglevel and
 * scope_cgfd. Either: 0, or -1 with *why set (one line, allocated);
 * what they open stays open for the life of the process.
 */
int record_scope_netns(const char *arg, uint32_t *ino, char **why);
int record_scope_cgroup(const char *path, struct record_opts *o,
    char **why);

/* Warnings gathered by record_open, e.g. missing kernel events. */
size_t record_nwarnings(const struct recorder *r);
const char *record_warning(const struct recorder *r, size_t i);

/* Path of the instance's trace_marker_raw (for ARGUS_MARKER). */
const char *record_marker_path(const struct recorder *r);

/*
 * The trace directory as record_open opened and checked it, once: the
 * caller writes its own files there (status, pid file) relative to this
 * descriptor, never by the directory's name, which may be renamed and
 * replaced meanwhile. Valid until record_close.
 */
int record_dirfd(const struct recorder *r);

/*
 * The trace_marker_raw of the recorder running now, for tools that add to
 * its trace (argus watch, argus probe): $ARGUS_MARKER, else the path the
 * recorder publishes in ARGUS_MARKER_PATH_FILE. 0 and buf filled, or -1
 * when no recorder runs.
 */
int record_marker_find(char *buf, size_t len);

/*
 * Read everything the kernel has buffered on every CPU and hand it to the
 * decoding thread, which stores it and then flushes the writer when flush
 * is set. Returns 0 or the first writer error met so far (the recorder
 * should then be closed).
 */
int record_poll(struct recorder *r, int flush);
/* Wait until every page read so far is decoded and stored (record_poll
   hands them to a decoding thread). */
void record_sync(struct recorder *r);

/* The hang marks of instrumented programs the recorder decoded. */
struct record_hang {
	uint64_t begun, ended;		/* TU_HANG_BEGIN, TU_HANG_END seen */
	uint64_t start_ts;		/* the last hang: when its thread
					   stopped answering (trace clock) */
	uint32_t tid, pid;		/* its hung thread and process */
	char comm[TRACE_COMM_LEN];	/* its process's name */
};

struct record_stats {
	uint64_t events;	/* kernel records decoded */
	uint64_t stored;	/* trace events written (incl. metadata) */
	uint64_t lost;		/* records the kernel lost (ring overruns) */
	uint64_t bytes;		/* raw bytes read from the kernel */
	uint64_t disk_bytes;	/* segment bytes on disk */
	uint64_t bound;
	uint64_t first_ts, last_ts;	/* of the events read */
	uint64_t fds;		/* fd identities written */
	uint32_t ncpus;
	struct record_hang hang;
	/* the kernel's time in the BPF backend's programs and their runs,
	   when the recorder had the kernel count them
	   (record_opts.bpf_stats); 0 else */
	uint64_t bpf_ns, bpf_runs;
	uint64_t stacks_skipped;	/* stacks of waits left out over the
					   budget (record_opts.stack_rate) */
};
void record_stats(const struct recorder *r, struct record_stats *st);

/*
 * Stop tracing, store what is left, close the trace and remove the
 * instance and the marker path file. Returns 0 or the first error.
 */
int record_close(struct recorder *r, char **cause);

/* --- uprobes (trace/uprobe.c; prefix uprobe_) ---------------------------- */

/*
 * The probes of argus probe are uprobe events of this system in tracefs's
 * uprobe_events; the recorder decodes them as TT_USER events of kind
 * TU_PROBE. Functions return 0 or an errno value (ENODEV: no tracefs
 * with uprobe_events).
 */
#define UPROBE_SYSTEM "argus_probes"

/* Whether tracefs (mounted now if needed) has uprobe_events. */
int uprobe_available(void);
/*
 * Define probe name at offset of the file binary (an absolute path),
 * with the fetch arguments in the uprobe syntax. The kernel's errors
 * come back: EEXIST or EBUSY (the name is taken), EINVAL (refused);
 * E2BIG when the line is too long.
 */
int uprobe_define(const char *name, const char *binary, uint64_t offset,
    char *const *fetch, size_t nfetch);
/* Enable probe name in the tracefs instance at instance_dir. */
int uprobe_enable(const char *instance_dir, const char *name);
/* Write the probes, one "NAME BINARY:0xOFFSET FETCH..." line each. */
int uprobe_list(FILE *out);
/*
 * Disable probe name in every instance, then delete it: ENOENT or
 * EINVAL (no such probe), EBUSY (enabled by another tracer).
 */
int uprobe_delete(const char *name);

#endif
