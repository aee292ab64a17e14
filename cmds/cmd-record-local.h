/*
 * cmd-record-local.h: what argus record (cmd-record.c) shares with argus
 * start, stop and status (cmd-start.c): the recorder options and the
 * recording loop.
 */
#ifndef ARGUS_CMD_RECORD_LOCAL_H
#define ARGUS_CMD_RECORD_LOCAL_H

#include <stdint.h>
#include <sys/types.h>

#include "trace/trace.h"

struct ropts {
	struct record_opts ro;
	uint64_t duration_ns;
	char **command;
	int quiet;
	int no_instrument;	/* kernel events only: no libargus */
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
 * The recording loop shared by record and start. ready_fd (or -1) gets
 * "ok" once recording runs, or the error line. Returns the exit status.
 */
int run_recorder(const char *name, struct ropts *o, int ready_fd,
    int progress);

#endif
