/*
 * fixture-writer.h: the trace writer that the tools writing small
 * hand-made traces share (mkhang, mkwake), included by one tool each.
 *
 * One writer per program: fw_open() opens it on a directory with fixed
 * host details; fw_ev() adds an event at the clock fw_now (1 s on the
 * trace clock at first), which then moves on 10 us, and a tool may move
 * it further itself; fw_thread() names a thread. A failed write is
 * remembered and fw_close() reports it.
 */
#ifndef ARGUS_FIXTURE_WRITER_H
#define ARGUS_FIXTURE_WRITER_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace.h"

static struct trace_writer *fw;
static uint64_t fw_now = 1000000000ULL;	/* 1 s on the trace clock */
static int fw_failed;

/*
 * Open the writer on dir for a trace of ncpus CPUs, its boot id naming
 * the tool prog. Returns 0, or 1 after saying why on stderr as prog.
 */
static int
fw_open(const char *prog, const char *dir, unsigned ncpus)
{
	struct trace_writer_opts o;
	char boot_id[64];
	char *cause = NULL;

	snprintf(boot_id, sizeof(boot_id), "00000000-%s", prog);
	memset(&o, 0, sizeof(o));
	o.ncpus = ncpus;
	o.group = (gid_t)-1;
	o.hostname = "testhost";
	o.release = "6.18.0-test";
	o.boot_id = boot_id;
	if (trace_writer_open(&fw, dir, &o, &cause) != 0) {
		fprintf(stderr, "%s: %s\n", prog, cause);
		free(cause);
		return 1;
	}
	return 0;
}

/* Add an event of tid on cpu at fw_now, then move the clock on 10 us. */
static void
fw_ev(uint32_t tid, unsigned cpu, unsigned type, uint64_t a0, uint64_t a1,
    uint64_t a2, uint64_t a3)
{
	struct trace_event e;

	memset(&e, 0, sizeof(e));
	e.ts = fw_now;
	e.tid = tid;
	e.type = (uint16_t)type;
	e.cpu = (uint16_t)cpu;
	e.arg[0] = a0;
	e.arg[1] = a1;
	e.arg[2] = a2;
	e.arg[3] = a3;
	if (trace_writer_add(fw, &e) != 0)
		fw_failed = 1;
	fw_now += 10000;		/* 10 us between events */
}

/* Name thread tid of process pid (whose parent is init) comm. */
static void
fw_thread(uint32_t tid, uint32_t pid, const char *comm)
{
	struct trace_thread t;

	memset(&t, 0, sizeof(t));
	t.tid = tid;
	t.pid = pid;
	t.ppid = 1;
	snprintf(t.comm, sizeof(t.comm), "%s", comm);
	if (trace_writer_thread(fw, 1, &t) != 0)
		fw_failed = 1;
}

/*
 * Close the writer on dir. Returns 0, or 1 after saying on stderr, as
 * prog, that writing failed (then or at any write before).
 */
static int
fw_close(const char *prog, const char *dir)
{
	if (trace_writer_close(fw) != 0 || fw_failed) {
		fprintf(stderr, "%s: writing %s failed\n", prog, dir);
		return 1;
	}
	return 0;
}

#endif
