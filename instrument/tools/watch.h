/*
 * watch.h: hardware watchpoints on a variable of a running process, for
 * argus watch (linked into the argus binary, not into libargus.so:
 * instrument/tools/ holds the instrumentation tools of the binary).
 *
 * A watch sets one perf breakpoint event per thread of the process (two
 * when both reads and writes are watched) and turns every access into a
 * TU_FLAG_WRITE or TU_FLAG_READ marker record written on behalf of the
 * accessing thread into the recorder's marker file
 * (trace/user-protocol.h), and into a call of the caller's function.
 */
#ifndef ARGUS_WATCH_H
#define ARGUS_WATCH_H

#include <stdint.h>
#include <sys/types.h>

/* One access, as the watch reports it. */
struct watch_access {
	int write;		/* a write (else a read) */
	uint32_t tid;
	uint64_t addr;
	uint64_t value;		/* read from the process just after */
	uint64_t ip;		/* the instruction after the access */
};

typedef void (*watch_fn)(void *arg, const struct watch_access *a);

struct watch_opts {
	pid_t pid;
	uint64_t addr;
	unsigned len;		/* 1, 2, 4 or 8; addr is aligned to it */
	int mode;		/* 'r', 'w' or 0 (both) */
	int markfd;		/* the recorder's marker file, or -1 */
	watch_fn fn;		/* called for each access, or NULL */
	void *arg;
};

struct watch;

/*
 * Watch o->addr in every thread of o->pid. Returns 0 and *wp, or -1 with
 * *cause (free it): the process is gone, or a breakpoint cannot be set
 * in one of its threads. Takes o->markfd (closed by watch_close).
 */
int watch_open(struct watch **wp, const struct watch_opts *o, char **cause);
/* How many breakpoints are set. */
unsigned watch_nbreakpoints(const struct watch *w);
/* Wait up to timeout_ms for accesses, then report those that came. */
void watch_poll(struct watch *w, int timeout_ms);
/*
 * 1 when the process is gone (absent or a zombie); else set breakpoints
 * on its new threads and return 0.
 */
int watch_follow(struct watch *w);
/* Accesses reported so far: all, reads, writes. */
void watch_counts(const struct watch *w, unsigned long *hits,
    unsigned long *reads, unsigned long *writes);
/* Remove the breakpoints, close the files and free w (NULL is ok). */
void watch_close(struct watch *w);
/* Whether process pid is gone (absent, or a zombie not reaped). */
int watch_process_gone(pid_t pid);

#endif
