/*
 * record-bpf-decode.c: the BPF backend's decoding thread: each record of
 * the pool pages the reading thread filled (record-bpf.c), [u32 length]
 * [u32 0][record, padded to 8 bytes] ended by a zero length, becomes
 * the trace_event the tracefs decoder would write for the same kernel
 * event (rb_kinds gives each kind its trace type, field count and
 * string size), ending in the same rec_emit; a stack's user and kernel
 * frames also have their mappings and kernel functions written.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/common.h"
#include "record-local.h"

#ifndef ARGUS_BPF

void
rec_bpf_decode_page(struct recorder *r, const uint8_t *page, size_t len)
{
	(void)r;
	(void)page;
	(void)len;
}

#else

#include "record-bpf-local.h"

/* Trace type, fields and string bytes of each kind. */
static const struct {
	uint16_t type;
	uint8_t n;
	uint16_t str;
} rb_kinds[RB_NKINDS + 1] = {
	[RB_SWITCH] = { TT_SWITCH, 3, 0 },
	[RB_WAKING] = { TT_WAKING, 3, 0 },
	[RB_WAKEUP_NEW] = { TT_WAKEUP_NEW, 2, 0 },
	[RB_FORK] = { TT_FORK, 2, 16 },
	[RB_EXEC] = { TT_EXEC, 2, RB_PATH },
	[RB_EXIT] = { TT_EXIT, 2, 0 },
	[RB_RENAME] = { TT_RENAME, 1, 16 },
	[RB_IRQ_ENTRY] = { TT_IRQ_ENTRY, 1, RB_NAME },
	[RB_IRQ_EXIT] = { TT_IRQ_EXIT, 2, 0 },
	[RB_SOFTIRQ_ENTRY] = { TT_SOFTIRQ_ENTRY, 1, 0 },
	[RB_SOFTIRQ_EXIT] = { TT_SOFTIRQ_EXIT, 1, 0 },
	[RB_SOFTIRQ_RAISE] = { TT_SOFTIRQ_RAISE, 1, 0 },
	[RB_IPI] = { TT_IPI, 2, 0 },
	[RB_TIMER_START] = { TT_TIMER_START, 5, 0 },
	[RB_TIMER_CANCEL] = { TT_TIMER_CANCEL, 2, 0 },
	[RB_TIMER_EXPIRE] = { TT_TIMER_EXPIRE, 3, 0 },
	[RB_TIMER_EXPIRE_EXIT] = { TT_TIMER_EXPIRE_EXIT, 2, 0 },
	[RB_WQ_QUEUE] = { TT_WQ_QUEUE, 4, RB_NAME },
	[RB_WQ_START] = { TT_WQ_START, 2, 0 },
	[RB_WQ_END] = { TT_WQ_END, 2, 0 },
	[RB_SIGNAL_GEN] = { TT_SIGNAL_GEN, 4, 0 },
	[RB_SIGNAL_DELIVER] = { TT_SIGNAL_DELIVER, 3, 0 },
	[RB_SOCK_SEND] = { TT_SOCK_SEND, 6, 0 },
	[RB_SOCK_RECV] = { TT_SOCK_RECV, 6, 0 },
	[RB_SK_DATA_READY] = { TT_SK_DATA_READY, 3, 0 },
	[RB_SYS_ENTER] = { TT_SYS_ENTER, 6, 0 },
	[RB_SYS_EXIT] = { TT_SYS_EXIT, 2, 0 },
	[RB_MARKER] = { TT_USER, 1, 0 },
	[RB_PROBE] = { TT_USER, 2, 0 },
	[RB_FILELOCK] = { TT_FILELOCK, 6, 0 },
	[RB_FD_INO] = { TT_FD, 4, 0 },	/* not kept: see dec_one() */
	[RB_BLOCK] = { TT_SYS_ENTER, 9, 0 },	/* and TT_SWITCH: dec_one() */
	[RB_SOCK_ADDR] = { TT_SOCK_ADDR, 8, 0 },	/* text: sock_addr() */
	[RB_STACK] = { TT_STACK, 1, 0 },	/* and kind, n frames: dec_one() */
	[RB_LOST] = { TT_LOST, 1, 0 },
};

/* --- decoding (the decoding thread) ------------------------------------- */

/* "ADDR:PORT" of an address of family fam (a: IPv4's in a[0], IPv6's
   in a[0..2)) into b; an IPv4 address mapped into IPv6 as IPv4. */
static void
put_addr(char *b, size_t len, unsigned fam, const uint64_t *a, unsigned port)
{
	char t[INET6_ADDRSTRLEN];
	uint8_t x[16];

	if (fam == AF_INET) {
		uint32_t v = (uint32_t)a[0];
		inet_ntop(AF_INET, &v, t, sizeof(t));
		snprintf(b, len, "%s:%u", t, port);
		return;
	}
	memcpy(x, &a[0], 8);
	memcpy(x + 8, &a[1], 8);
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	    0xff, 0xff };
	if (memcmp(x, mapped, 12) == 0) {
		inet_ntop(AF_INET, x + 12, t, sizeof(t));
		snprintf(b, len, "%s:%u", t, port);
		return;
	}
	inet_ntop(AF_INET6, x, t, sizeof(t));
	snprintf(b, len, "[%s]:%u", t, port);
}

/* The segment being written (its number). */
static uint64_t
segments_begun(struct recorder *r)
{
	return trace_writer_segment(r->w);
}

/* Write socket k's sock_addr record at time ts (its thread tid). */
static void
put_sock_addr(struct recorder *r, struct sktup *k, uint64_t sk,
    uint64_t ts, uint32_t tid)
{
	struct trace_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = TT_SOCK_ADDR;
	ev.tid = tid;
	ev.arg[0] = sk;
	ev.arg[1] = k->family;
	ev.arg[2] = k->proto;
	ev.cpu = TRACE_CPU_META;
	ev.ts = rec_meta_ts(r, ts);
	ev.blob = k->text;
	ev.blob_len = k->len;
	rec_add(r, &ev);
	k->seg = segments_begun(r);
}

/*
 * A TCP or connected UDP socket's addresses (RB_SOCK_ADDR, once a
 * socket, again when a UDP socket connects to another peer): kept, and
 * written as a metadata record now and again into each later segment
 * before the socket's first message there (sock_message()), so that
 * every segment names the connections of its messages.
 */
static void
sock_addr(struct recorder *r, struct trace_event *ev, const uint64_t *a)
{
	char l[INET6_ADDRSTRLEN + 16], rm[INET6_ADDRSTRLEN + 16];
	unsigned fam = (unsigned)a[1];
	int added;

	if (fam != AF_INET && fam != AF_INET6)
		return;
	put_addr(l, sizeof(l), fam, &a[4], (unsigned)(a[3] & 0xffff));
	put_addr(rm, sizeof(rm), fam, fam == AF_INET ? &a[5] : &a[6],
	    (unsigned)(a[3] >> 16 & 0xffff));
	uint64_t *ix = hmap_put(&r->sktup, a[0], 0, &added);
	if (added) {
		DGROW(r->sktups, r->capsktups, r->nsktups + 1, 64);
		*ix = ++r->nsktups;
	}
	struct sktup *k = &r->sktups[*ix - 1];
	int n = snprintf(k->text, sizeof(k->text), "%s %s", l, rm);
	k->len = n > 0 && (size_t)n < sizeof(k->text) ? (uint32_t)n :
	    (uint32_t)strlen(k->text);
	k->family = fam;
	k->proto = (uint32_t)a[2];
	put_sock_addr(r, k, a[0], ev->ts, ev->tid);
}

/* Before a TCP or UDP message of socket sk: its addresses, when the
   segment being written has not had them. */
static void
sock_message(struct recorder *r, const struct trace_event *ev)
{
	const uint64_t *ix = ev->arg[5] != 0 ? hmap_get(&r->sktup,
	    ev->arg[0]) : NULL;

	if (ix == NULL)
		return;
	struct sktup *k = &r->sktups[*ix - 1];
	if (k->seg != segments_begun(r))
		put_sock_addr(r, k, ev->arg[0], ev->ts, ev->tid);
}

static void
dec_one(struct recorder *r, const uint8_t *p, size_t len)
{
	struct rb_head h;
	struct trace_event ev;
	uint64_t a[RB_FIELDS_MAX] = { 0 };
	unsigned n;
	char str[RB_PATH + 1];

	memcpy(&h, p, sizeof(h));
	if (h.kind == RB_NONE || h.kind > RB_LOST || h.cpu >= r->ncpus)
		return;
	n = rb_kinds[h.kind].n;
	if (len < sizeof(h) + n * 8 + rb_kinds[h.kind].str)
		return;
	memcpy(a, p + sizeof(h), n * 8);
	memset(&ev, 0, sizeof(ev));
	if (h.ts < r->cpus[h.cpu].last_ts)
		h.ts = r->cpus[h.cpu].last_ts;
	if (h.kind == RB_LOST) {
		ev.type = TT_LOST;
		ev.cpu = h.cpu;
		ev.ts = rec_lost_ts(r, h.cpu, 0);
		ev.arg[0] = a[0];
		r->lost += a[0];
		rec_add(r, &ev);
		return;
	}
	r->cpus[h.cpu].last_ts = h.ts;
	r->events++;
	ev.ts = h.ts;
	ev.tid = h.tid;
	ev.cpu = h.cpu;
	ev.flags = h.ctx & TRACE_CTX_MASK;
	ev.type = rb_kinds[h.kind].type;
	if (h.kind == RB_BLOCK) {
		/* the entry (number and five arguments), then the switch
		   (its three fields), at the same time */
		memcpy(ev.arg, a, sizeof(ev.arg));
		rec_emit(r, &ev, 0);
		memset(ev.arg, 0, sizeof(ev.arg));
		memcpy(ev.arg, a + TRACE_NARGS, 3 * sizeof(a[0]));
		ev.type = TT_SWITCH;
		rec_emit(r, &ev, 0);
		return;
	}
	/* a kind of more fields than an event has (RB_SOCK_ADDR) reads
	   them from a[] */
	memcpy(ev.arg, a, (n < TRACE_NARGS ? n : TRACE_NARGS) * 8);
	if (rb_kinds[h.kind].str) {
		size_t sl = rb_kinds[h.kind].str;

		memcpy(str, p + sizeof(h) + n * 8, sl);
		str[sl] = '\0';
		ev.blob = str;
		ev.blob_len = (uint32_t)strlen(str);
	}
	switch (h.kind) {
	case RB_STACK: {
		uint64_t nf = a[0] < RB_STACK_MAX ? a[0] : RB_STACK_MAX;
		uint64_t kind, fr[RB_STACK_MAX];

		if (len < sizeof(h) + 16 + nf * 8 || nf == 0)
			return;
		memcpy(&kind, p + sizeof(h) + 8, 8);
		if (kind != TSK_WAIT && (kind & 0xff) != TSK_WAKER &&
		    kind != TSK_SAMPLE && kind != TSK_KWAIT &&
		    kind != TSK_KSAMPLE)
			return;
		memset(ev.arg, 0, sizeof(ev.arg));
		ev.arg[0] = h.tid;
		ev.arg[1] = kind;
		ev.blob = p + sizeof(h) + 16;
		ev.blob_len = (uint32_t)(nf * 8);
		rec_add(r, &ev);
		memcpy(fr, ev.blob, nf * 8);
		if (kind == TSK_KWAIT || kind == TSK_KSAMPLE)
			rec_ksyms_need(r, ev.ts, kind == TSK_KSAMPLE, fr,
			    (size_t)nf);
		else
			rec_maps_need(r, ev.ts, rec_tgid_of(r, ev.tid), fr,
			    (size_t)nf);
		return;
	}
	case RB_SOCK_ADDR:
		sock_addr(r, &ev, a);
		return;
	case RB_SOCK_SEND: case RB_SOCK_RECV:
		sock_message(r, &ev);
		rec_emit(r, &ev, 0);
		return;
	case RB_FD_INO:
		/* written now, from what the programs saw when /proc says
		   another file */
		rec_fd_known(r, h.ts, (uint32_t)a[0], (int)a[1], a[2], a[3]);
		return;
	case RB_FORK:
		ev.arg[0] = a[0];
		ev.arg[1] = 0;
		ev.arg[2] = a[1];
		rec_emit(r, &ev, 0);
		return;
	case RB_EXIT:
		ev.arg[1] = 0;
		rec_emit(r, &ev, a[1]);
		return;
	case RB_MARKER: {
		size_t ml = a[0] < RB_MARKER_MAX ? (size_t)a[0] : RB_MARKER_MAX;

		if (len < sizeof(h) + 8 + ml)
			return;
		memset(ev.arg, 0, sizeof(ev.arg));
		/* 8 bytes of head before the bytes written, as raw_data */
		rec_decode_marker(r, &ev, p + sizeof(h), 8 + ml);
		return;
	}
	case RB_PROBE: {
		const char *name = rec_probe_name(r, (unsigned)a[0]);

		if (name == NULL)
			return;
		ev.flags = TRACE_CTX_TASK;
		ev.arg[0] = TU_PROBE;
		ev.arg[1] = 0;
		ev.arg[2] = a[1];
		ev.blob = name;
		ev.blob_len = (uint32_t)strlen(name);
		rec_add(r, &ev);
		rec_maps_seen(r, ev.ts, rec_tgid_of(r, ev.tid));
		return;
	}
	default:
		rec_emit(r, &ev, 0);
		return;
	}
}

void
rec_bpf_decode_page(struct recorder *r, const uint8_t *page, size_t len)
{
	size_t off = 0;

	while (off + 8 <= len) {
		uint32_t n;

		memcpy(&n, page + off, 4);
		if (n == 0 || off + 8 + n > len)
			break;
		dec_one(r, page + off + 8, n);
		off += 8 + ((n + 7) & ~(size_t)7);
	}
}

#endif
