/*
 * rbpage-local.h: an iterator over one page (sub-buffer) of the kernel's
 * ring buffer, as read in binary from per_cpu/cpuN/trace_pipe_raw.
 *
 * A page is a header (u64 time stamp, then a long "commit" word holding
 * the data length in its low 27 bits and the missed-events flags in bits
 * 31 and 30), then 4-byte aligned entries. Each entry starts with a u32:
 * type_len in the low 5 bits, a time delta in the upper 27. type_len 1 to
 * 28 is a record of type_len * 4 bytes; 0 is a record whose length (plus
 * 4) is in the next u32; 29 is padding (a discarded record; its length in
 * the next u32; an empty one ends the page); 30 extends the delta by the
 * next u32 shifted left 27; 31 is an absolute time stamp built the same
 * way. The layout is in events/header_page and events/header_event of
 * tracefs; this follows the host's word size and byte order, as does the
 * kernel that wrote the page. Nothing read from the page is trusted: a
 * length that leaves the page ends the iteration.
 */
#ifndef ARGUS_RBPAGE_LOCAL_H
#define ARGUS_RBPAGE_LOCAL_H

#include <stddef.h>
#include <stdint.h>

struct rbpage {
	const uint8_t *p, *end;		/* next entry, end of the data */
	uint64_t ts;			/* time stamp of the last entry */
	long long missed;		/* 0 none, -1 some (count unknown),
					   else the events lost before */
};

/* Start iterating over the page of size len at page; returns -1 when the
   page is too short to hold its header. */
int rbpage_init(struct rbpage *it, const void *page, size_t len);

/* The next record: its data, its length in *size and its time stamp in
   *ts; NULL at the end of the page. */
const void *rbpage_next(struct rbpage *it, size_t *size, uint64_t *ts);

#endif
