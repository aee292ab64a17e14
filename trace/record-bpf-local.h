/*
 * record-bpf-local.h: the BPF backend's state, shared by record-bpf.c
 * (loading, attaching, reading the ring into pool pages) and
 * record-bpf-decode.c (turning those pages into trace events).
 *
 * struct rbpf holds the skeleton, the links of the programs attached,
 * the ring-buffer reader and the pool page being filled; RB_LOST is the
 * pseudo-record the reading thread writes for the losses the programs
 * count per CPU.
 */
#ifndef TRACE_RECORD_BPF_LOCAL_H
#define TRACE_RECORD_BPF_LOCAL_H

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <arpa/inet.h>
#include <linux/perf_event.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpf/record-bpf.h"
#include "record.skel.h"

#include "record-local.h"

#define RB_LOST RB_NKINDS	/* pseudo-record: a[0] records lost */
#define SLOT_MAX (8 + sizeof(struct rb_head) + 8 + RB_MARKER_MAX)

struct rbpf {
	struct record_bpf *skel;
	struct ring_buffer *ring;
	struct bpf_link **links;
	size_t nlinks;
	int nposs;		/* possible CPUs (per-CPU map values) */
	uint64_t *lost_seen;	/* per CPU, written as TT_LOST */
	uint64_t *lost_vals;
	uint8_t *page;		/* being filled by the reading thread */
	size_t off;
	FILE *log;		/* libbpf's messages while loading */
	int stats_fd;		/* holds the kernel's run-time counting
				   on (record_opts.bpf_stats), or -1 */
};

/* What ARGUS_BPF_REFUSE names (a comma list), made for the kernel to
   refuse, to test what the recorder does then: "cpu_clock", the
   sampler's program; "perf_event", the sampler's perf events;
   "task_work", BPF task work (taken as missing). record-bpf-open.c. */
int rbpf_refused(const char *what);

#endif
