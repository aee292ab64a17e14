/*
 * argus.h: tracing points a program adds for argus (libargus(3)).
 *
 * Link with -largus (or load libargus.so with LD_PRELOAD and declare the
 * functions weak). Every function is cheap when no recorder runs (a load
 * and a branch) and never blocks, allocates or fails: a record that
 * cannot be written is dropped. All are async-signal-safe.
 *
 * Identifiers (task, queue, source, address) are any 64-bit values that
 * name the same thing at both ends of a connection, typically pointers.
 */
#ifndef ARGUS_H
#define ARGUS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Nonzero while records are written (a recorder runs). */
int argus_enabled(void);

/* A task is queued on queue (a work queue, thread pool, ...). */
void argus_task_submit(uint64_t task, uint64_t queue);
/* The calling thread starts and finishes running a queued task. */
void argus_task_begin(uint64_t task, uint64_t queue);
void argus_task_end(uint64_t task, uint64_t queue);

/* A run-loop source (timer, idle, message) is submitted to a loop. */
void argus_runloop_submit(uint64_t source);
/* The calling thread's run loop starts and finishes a callout. */
void argus_callout_begin(uint64_t source);
void argus_callout_end(uint64_t source);

/*
 * The calling thread's event loop enters and leaves its wait, for loops
 * that do not wait in poll, select or epoll (the hang watchdog watches
 * the main thread's waits).
 */
void argus_loop_wait_begin(void);
void argus_loop_wait_end(void);

/* A shared flag at addr is written with, or read as, value. */
void argus_flag_write(const volatile void *addr, uint64_t value);
void argus_flag_read(const volatile void *addr, uint64_t value);

/* A named mark (at most 64 bytes of name are kept) with a free value. */
void argus_mark(const char *name, uint64_t value);

/* A user input event was received (kind is the program's own code). */
void argus_input(uint64_t kind, const char *what);

#ifdef __cplusplus
}
#endif

#endif
