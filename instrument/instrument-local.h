/*
 * instrument-local.h: internals of libargus.so shared by its files.
 *
 * State: one global struct ins_state (the marker descriptor, the on/off
 * switch read by every wrapper, the main thread's identity and stack
 * bounds, the watchdog's clock) and a per-thread struct ins_thread in
 * initial-exec TLS (cached tid, a recursion guard). Nothing here
 * allocates; records are built on the stack and written with one write().
 */
#ifndef ARGUS_INSTRUMENT_LOCAL_H
#define ARGUS_INSTRUMENT_LOCAL_H

#include <stdint.h>
#include <sys/types.h>

#include "trace/user-protocol.h"

#define INS_EXPORT __attribute__((visibility("default")))
#define INS_LIKELY(x) __builtin_expect(!!(x), 1)
#define INS_UNLIKELY(x) __builtin_expect(!!(x), 0)

/*
 * A guard over descriptors of libargus (wrap-fd.c): code of the library
 * that uses one runs as a section counted in users; a call of the
 * program that may close one announces itself in closing and waits for
 * users to drain; no section starts while a close is announced.
 */
struct ins_fdguard {
	int users;
	int closing;
};

struct ins_state {
	volatile int on;		/* records are written (fd valid) */
	int fd;				/* marker fd; -1 while off */
	dev_t fd_dev;			/* fd's file, noted at open */
	ino_t fd_ino;
	struct ins_fdguard mk_guard;	/* writes to fd */
	struct ins_fdguard tmp_guard;	/* every other descriptor */
	int from_env;			/* ARGUS_MARKER given: never re-check */
	pid_t pid;
	pid_t main_tid;
	uintptr_t main_stack_lo, main_stack_hi;	/* [lo, hi) of main stack */
	uint64_t hang_ns;		/* watchdog threshold */
	uint64_t next_check_ns;		/* next re-check of the path file */
	/* main thread loop state, written by main, read by the watchdog */
	volatile int in_wait;		/* main is inside its loop wait */
	volatile uint64_t wake_ns;	/* monotonic time main left its wait */
	volatile uint64_t wake_boot_ns;	/* same, on CLOCK_BOOTTIME */
	volatile int watchdog_started;
	volatile int loop_seen;		/* main ever entered a loop wait */
	volatile int maps_due;		/* mappings not yet written since
					   switch-on or fork */
};

struct ins_thread {
	pid_t tid;
	int busy;			/* inside a wrapper's recording code */
	int fd_sections;		/* depth of ins_fd_enter() sections */
};

extern struct ins_state ins;
extern __thread struct ins_thread ins_self
    __attribute__((tls_model("initial-exec")));

/* Initialize once (constructor, or the first wrapper called before it). */
void ins_init(void);
/* The calling thread's tid (cached in TLS). */
pid_t ins_tid(void);
/* Monotonic / boot time in ns (vDSO, no syscall). */
uint64_t ins_mono_ns(void);
uint64_t ins_boot_ns(void);

/*
 * Write one record for the calling thread (proxy_tid 0) or, with the
 * ARGUS_MK_PROXY bit, on behalf of proxy_tid. name may be NULL. Does
 * nothing when off. Async-signal-safe.
 */
void ins_emit(unsigned kind, uint64_t key, uint64_t arg, uint64_t arg2,
    const char *name);
void ins_emit_proxy(pid_t proxy_tid, unsigned kind, uint64_t key,
    uint64_t arg, uint64_t arg2, const char *name, size_t namelen);
/* Write a stack record (frames innermost first) after a record of kind. */
void ins_emit_stack(pid_t proxy_tid, unsigned kind, const uint64_t *frames,
    unsigned n);

/*
 * Walk frame pointers from fp (first frame pc), staying inside [lo, hi).
 * Returns the number of frames stored (at most max). Never faults on a
 * chain that leaves the bounds.
 */
unsigned ins_walk_fp(uintptr_t pc, uintptr_t fp, uintptr_t lo, uintptr_t hi,
    uint64_t *frames, unsigned max);
/*
 * Stack of an interrupted or blocked context: pc, then up to four code
 * addresses found between sp and fp (callers of frameless functions),
 * then the frame-pointer chain from fp, all inside [sp, hi).
 */
unsigned ins_walk_from(uintptr_t pc, uintptr_t sp, uintptr_t fp,
    uintptr_t hi, uint64_t *frames, unsigned max);
/* The calling thread's stack (used for main-thread waits). */
unsigned ins_stack_here(uint64_t *frames, unsigned max);

/* Whether pc lies in an executable mapping (as of the last scan). */
int ins_is_text(uintptr_t pc);
/* Re-check the path file when due (cheap when not due). */
void ins_recheck(void);
/* Switch on (open the marker at path) or off. */
int ins_switch_on(const char *path);

/* --- the environment (env.c) --------------------------------------------- */

/*
 * Parse the variable name as a decimal number in [min, max] (digits only).
 * Returns 0 and *out, or -1 when unset or not such a number.
 */
int ins_env_u64(const char *name, uint64_t min, uint64_t max, uint64_t *out);
/*
 * The watchdog's signal: ARGUS_SIGNAL when it is a real-time signal, the
 * default SIGRTMAX-2 when unset, 0 (no signal) for any other value.
 */
int ins_env_signal(void);
/* Is fd the trace_marker_raw file of a tracefs instance? */
int ins_marker_ok(int fd);
void ins_switch_off(void);
/* Record the process's executable mappings (ARGUS_MK_MMAP records). */
/* Write the executable mappings before the process's first stack record
   after switch-on or fork (a process with no stacks writes none). */
void ins_record_maps(void);

/* Loop wait bracket for the main thread (wrap-loop.c). */
void ins_loop_enter(void);
void ins_loop_leave(void);
/* Start the watchdog thread if it is not running (watchdog.c). */
void ins_watchdog_start(void);
void ins_watchdog_atfork_child(void);

/* --- descriptors of libargus (wrap-fd.c) ------------------------------------ */

/*
 * Enter a section that uses descriptors under guard g: 1, or 0 (and no
 * section) while a close that may reach them is under way. Sections
 * nest; the wrappers of wrap-fd.c let the calls of a thread inside one
 * through untouched. Async-signal-safe.
 */
int ins_fd_enter(struct ins_fdguard *g);
void ins_fd_leave(struct ins_fdguard *g);
/*
 * Open path for writing as the marker: a tracefs trace_marker_raw file,
 * moved to a high number the program's next open() does not take, its
 * device and inode in *dev, *ino. Returns the descriptor or -1. Inside a
 * tmp_guard section.
 */
int ins_fd_open_marker(const char *path, dev_t *dev, ino_t *ino);
/* Does fd still refer to the file of device dev and inode ino? */
int ins_fd_is(int fd, dev_t dev, ino_t ino);
/*
 * The marker's number fd is no longer the library's (closed, or another
 * file now): stop writing to it, without closing it, and have the next
 * ins_recheck() open the marker anew. Nothing if ins.fd is no longer fd.
 */
void ins_fd_lost(int fd);
/* Close fd, a marker no longer in ins.fd, once its writers are done, if
   it still is the file of dev and ino. Inside a tmp_guard section. */
void ins_fd_retire(int fd, dev_t dev, ino_t ino);
/* A forked child's guards: no section of the parent's threads runs. */
void ins_fd_atfork_child(void);

/* Resolve the next definition of a symbol (RTLD_NEXT). */
void *ins_next(const char *name);

#define INS_REAL(ret, name, args)					\
	static ret (*real_##name) args;					\
	static inline ret (*get_##name(void)) args			\
	{								\
		if (INS_UNLIKELY(!real_##name))				\
			real_##name = (ret (*) args)ins_next(#name);	\
		return real_##name;					\
	}

#endif
