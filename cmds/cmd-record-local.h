/*
 * cmd-record-local.h: what argus record (cmd-record.c) shares with argus
 * start, stop and status (cmd-start.c): the recorder options and the
 * recording loop.
 */
#ifndef ARGUS_CMD_RECORD_LOCAL_H
#define ARGUS_CMD_RECORD_LOCAL_H

#include <stdint.h>

#include "trace/trace.h"

struct ropts {
	struct record_opts ro;
	uint64_t duration_ns;
	char **command;
	int quiet;
	int no_instrument;	/* kernel events only: no libargus */
};

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
