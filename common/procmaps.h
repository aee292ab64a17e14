/*
 * procmaps.h: the one reader of /proc/PID/maps.
 *
 * It reads the file with open(2) and read(2) into a buffer on the stack
 * and parses each line in place, without allocating, so libargus (which
 * links this file in) may call it from its wrappers and its watchdog as
 * well as the recorder and elfsym.c. A line is handed over as a struct
 * procmap whose path points into the buffer and is valid only during
 * the call. Lines longer than the buffer (PROCMAP_LINE) are skipped.
 */
#ifndef ARGUS_PROCMAPS_H
#define ARGUS_PROCMAPS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PROCMAP_LINE 4352	/* a path of PATH_MAX and the fields */

struct procmap {
	uint64_t start, end;	/* [start, end) */
	uint64_t off;		/* file offset of start */
	char perms[5];		/* "r-xp" */
	const char *path;	/* NUL-terminated; "" when anonymous */
	size_t pathlen;
};

/*
 * Parse one line of len bytes (no newline): 0 and *m, or -1 when it is
 * malformed. m->path points into line and is NUL-terminated only when
 * line[len] is a NUL.
 */
int procmap_parse(const char *line, size_t len, struct procmap *m);

/* Called for each mapping; a non-zero return stops the walk. */
typedef int (*procmap_fn)(void *ctx, const struct procmap *m);

/*
 * Call fn for every well-formed line of /proc/PID/maps, PID 0 being
 * the calling process (/proc/self/maps, safe in a signal handler).
 * Returns -1 (errno set) when the file cannot be opened, else what fn
 * returned last: 0 after the whole file, or the value that stopped it.
 */
int procmap_each(pid_t pid, procmap_fn fn, void *ctx);

#endif
