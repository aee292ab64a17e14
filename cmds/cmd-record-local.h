/*
 * cmd-record-local.h: what argus record (cmd-record.c) shares with argus
 * start, stop and status (cmd-start.c): the recorder options and the
 * recording loop.
 */
#ifndef ARGUS_CMD_RECORD_LOCAL_H
#define ARGUS_CMD_RECORD_LOCAL_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "trace/trace.h"

struct ropts {
	struct record_opts ro;
	uint64_t duration_ns;
	char **command;
	int quiet;
	int no_instrument;	/* kernel events only: no libargus */
	const char *snap_dir;	/* --snapshot-on-hang DIR, or NULL */
	char *snap_dir_buf;	/* snap_dir made absolute (allocated) */
	unsigned snap_keep;	/* snapshots kept at most */
	uint64_t snap_bytes;	/* their bytes at most */
	/* record -- COMMAND under sudo: whom the command runs as */
	int drop;		/* set by sudo_identity */
	uid_t uid;
	gid_t gid;
	char user[64];		/* for the supplementary groups, or "" */
	pid_t parent;		/* the recorder, for the child's checks */
};

/*
 * Under sudo (root with SUDO_UID set), fill o->drop, uid, gid and user
 * from SUDO_UID, SUDO_GID (else the user's own group) and SUDO_USER,
 * each checked: a value that is not an id, or a user id alone that names
 * no user, is an error (printed as command name's; returns 1), never a
 * silent fall back to root. Returns 0 otherwise.
 */
int sudo_identity(const char *name, struct ropts *o);

/*
 * Parse the options shared by record and start (name is the command).
 * Returns -1 to go on, or the exit status: 0 after --help, 2 on a usage
 * error (printed).
 */
int parse_ropts(const char *name, int argc, char **argv, struct ropts *o);

/*
 * The recording loop shared by record and start. ready_fd (or -1: record)
 * marks the daemon of start: it gets "ok" once recording runs and its
 * first segment with events is on disk (or after 5 s without one), or
 * the error line; the daemon logs into DIR/argus.log and writes
 * DIR/argus.pid, which it removes at its end. Every file the recorder
 * writes in DIR is opened relative to the directory record_open checked
 * (record_dirfd), never by DIR's name. Returns the exit status.
 */
int run_recorder(const char *name, struct ropts *o, int ready_fd,
    int progress);

/*
 * Snapshots at hangs (cmd-snapshot.c): hangsnap_poll, called at each of
 * the loop's flushes with the recorder's statistics, starts a snapshot
 * of trace_dir into a new directory of snap_dir once a hang marked by an
 * instrumented program has ended and reached the disk (or has gone on
 * for 10 s), then prunes snap_dir to keep snapshots and max_bytes.
 * hangsnap_finish, after the recorder is closed, takes one still due;
 * hangsnap_free waits for a snapshot under way. name is the command.
 */
struct hangsnap;
/*
 * snap_dir must be trusted as a trace directory is (trace_dir_open), at
 * start (or missing: it is made at the first snapshot) and at each
 * snapshot, which is refused with a logged error otherwise; NULL and
 * *cause (allocated) when it exists and is not.
 */
struct hangsnap *hangsnap_new(const char *trace_dir, const char *snap_dir,
    unsigned keep, uint64_t max_bytes, char **cause);
void hangsnap_poll(struct hangsnap *h, const char *name,
    const struct record_stats *st, uint64_t now, int stopping);
void hangsnap_finish(struct hangsnap *h, const char *name,
    const struct record_stats *st);
void hangsnap_free(struct hangsnap *h, const char *name);

/* Print the snapshots of folder dir, oldest first (for argus status). */
void hangsnap_list(const char *dir, FILE *f);

#define SNAP_DEFAULT_KEEP 10
#define SNAP_DEFAULT_BYTES (1ULL << 30)

#endif
