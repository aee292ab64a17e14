/*
 * user-protocol.h: the user-event protocol between instrument/ (libargus,
 * argus watch, argus probe) and the recorder in trace/: the kinds of user
 * events (enum trace_user) and the binary records libargus writes into the
 * recorder's trace_marker_raw, which the recorder decodes into TT_USER and
 * TT_STACK events. Dependencies run one way: instrument/ includes this
 * file; nothing here includes anything of instrument/.
 *
 * One write() is one record: a fixed header, then len bytes: the name
 * (no NUL) for user kinds, or len/8 little-endian u64 frames (innermost
 * first) for ARGUS_MK_STACK. The thread is the writer's (the kernel
 * records common_pid), the time the kernel's.
 */
#ifndef ARGUS_USER_PROTOCOL_H
#define ARGUS_USER_PROTOCOL_H

#include <stdint.h>

/* Subkinds of TT_USER events (argus.h and the recorder share them). */
enum trace_user {
	TU_MARK = 1,		/* named mark; arg free */
	TU_TASK_SUBMIT,		/* key task id, arg queue */
	TU_TASK_BEGIN,
	TU_TASK_END,
	TU_RUNLOOP_SUBMIT,	/* key source id */
	TU_CALLOUT_BEGIN,
	TU_CALLOUT_END,
	TU_FLAG_WRITE,		/* key address, arg value, arg2 ip */
	TU_FLAG_READ,
	TU_INPUT,		/* a UI input event was received */
	TU_HANG_BEGIN,		/* key main tid, arg threshold ns */
	TU_HANG_END,
	TU_LOCK_WAIT,		/* key lock address, arg op */
	TU_LOCK_ACQUIRED,
	TU_LOCK_RELEASE,
	TU_COND_WAIT,		/* key cond address, arg timeout ns (0 none) */
	TU_COND_DONE,		/* key cond address, arg result */
	TU_COND_SIGNAL,		/* key cond address, arg broadcast */
	TU_LOOP_WAIT,		/* main loop entered its wait */
	TU_LOOP_WAKE,		/* main loop wait returned */
	TU_PROBE,		/* uprobe hit; name in blob */
	TU_NKINDS
};

#define ARGUS_MARKER_ID 0x41524755u	/* "UGRA" little-endian */
#define ARGUS_MK_STACK 0x100		/* kind of a stack record */
#define ARGUS_MARKER_MAX_NAME 64
#define ARGUS_MARKER_MAX_FRAMES 32

/*
 * Additions (backward-compatible: older records are unchanged).
 *
 * ARGUS_MK_MMAP: one executable (or file-backed) mapping of the writer's
 * process, written by libargus when it switches on: key = start address,
 * arg = length, arg2 = file offset, payload = the path (no NUL). The
 * recorder turns it into a TT_MMAP event for the writer's pid.
 *
 * ARGUS_MK_PROXY, or-ed into kind: the record is about another thread
 * than the writer (argus watch writing for the thread that touched a
 * watched flag; the watchdog writing a hang mark and the stack for the
 * main thread). The payload then starts with a little-endian u64 whose
 * low 32 bits are that thread's tid; the name or frames follow, and len
 * counts the 8 bytes. The recorder uses that tid for the TT_USER or
 * TT_STACK event instead of the writer's.
 */
#define ARGUS_MK_MMAP 0x101
#define ARGUS_MK_PROXY 0x8000

/*
 * Fields as libargus fills them, beyond enum trace_user's comments:
 * lock kinds: arg = 0 mutex, 1 rwlock read, 2 rwlock write, 3 semaphore;
 * TU_LOCK_ACQUIRED arg2 = result. TU_COND_WAIT arg2 = the mutex.
 * TU_LOOP_WAIT arg = timeout ms (-1 none); TU_LOOP_WAKE arg = result.
 * TU_HANG_BEGIN (proxy, for the main thread) and TU_HANG_END: arg2 =
 * CLOCK_BOOTTIME ns when the main thread left its loop wait (the start
 * of the unresponsive interval); TU_HANG_END arg = hang length ns.
 * TU_MARK "sched_yield": arg = yields since the previous such record.
 * TU_CALLOUT_* / TU_RUNLOOP_SUBMIT from GLib: key = source id, arg =
 * the GMainContext; TU_TASK_* from GLib pools: key = data, arg = pool.
 * TU_FLAG_* from argus watch (proxy): key = address, arg = value, arg2 =
 * the instruction after the access.
 */

struct argus_marker_hdr {
	uint32_t id;		/* ARGUS_MARKER_ID */
	uint16_t kind;		/* enum trace_user, or ARGUS_MK_STACK */
	uint16_t len;		/* payload bytes after the header */
	uint64_t key;		/* stack: the TT_USER kind it belongs to */
	uint64_t arg;
	uint64_t arg2;
};

/*
 * Where the recorder tells libargus which trace_marker_raw to write to:
 * the recorder writes the path into this file while it runs and removes
 * it when it stops. libargus also accepts ARGUS_MARKER=PATH.
 */
#define ARGUS_MARKER_PATH_FILE "/run/argus/marker"

#endif
