/*
 * record-maps.c: the recorder's executable mappings of the processes
 * whose user addresses (stack frames, probe hits) it writes.
 *
 * Those addresses are symbolized offline from TT_MMAP records. A process
 * has an entry in r->maps (pid -> struct rmproc *) once it needed them;
 * the entry points to a struct rmlist, the sorted, merged address ranges
 * of the executable mappings written for one process (its owner) in one
 * segment, file-backed or not (the file-backed ones are the TT_MMAP
 * records; an anonymous range, JIT code or [vdso], counts as known so
 * that its frames cause no new read). A list is shared, counted, between
 * its owner and the processes forked from it without exec, which have
 * the same mappings: for those a single TT_MMAP record of no path and
 * `from` set to the owner says so, and the engine looks their addresses
 * up in the owner's mappings (graph_map_at).
 *
 * The cost is bounded by what is needed: /proc/PID/maps is read only
 * when a process has no list valid in the segment being written (every
 * segment names the mappings of its stacks, so the ring may drop older
 * ones), or when a frame falls outside its list (a library loaded
 * since), then after REREAD_NS, twice as long each time a read leaves
 * frames outside (up to REREAD_MAX_NS), so that frames in memory that
 * is no mapping at all (garbage of an unwinder without frame pointers)
 * cost a read a minute at most, past the first few. A process
 * forked without exec whose frames all fall in its parent's list gets
 * the one record saying so instead of a read. Entries go at the process's
 * exit (rec_proc_sweep), its exec and a fork that reuses its pid; a list
 * goes with its last user.
 */
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/common.h"
#include "common/procmaps.h"
#include "record-local.h"

/* Least time between two reads of one process's maps for frames that
   fall outside what was read, doubled each time the frames stay outside
   up to the most. */
#define REREAD_NS 1000000000ull
#define REREAD_MAX_NS (64 * REREAD_NS)

struct rmlist {
	uint32_t owner;		/* pid whose TT_MMAP records they are */
	uint32_t refs;
	uint64_t seg;		/* segments begun when written */
	int any;		/* libargus wrote them: any address is known */
	size_t n, cap;
	struct rmrange {
		uint64_t start, end;	/* [start, end) */
	} *r;
};

struct rmproc {
	struct rmlist *l;	/* its list (its own or its parent's), or NULL */
	uint64_t seg;		/* segments begun when its own records or its
				   `from` record were written; 0: none */
	uint64_t read_ts;	/* last read of its own maps, 0: none */
	uint64_t wait_ns;	/* before another for frames outside */
};

static void
list_put(struct rmlist *l)
{
	if (l != NULL && --l->refs == 0) {
		free(l->r);
		free(l);
	}
}

static struct rmlist *
list_get(struct rmlist *l)
{
	if (l != NULL)
		l->refs++;
	return l;
}

/* 1 when every non-zero frame falls in a range of l. */
static int
list_covers(const struct rmlist *l, const uint64_t *frames, size_t n)
{
	if (l->any)
		return 1;
	for (size_t i = 0; i < n; i++) {
		uint64_t a = frames[i];
		size_t lo = 0, hi = l->n;

		if (a == 0)
			continue;
		while (lo < hi) {	/* first range ending after a */
			size_t mid = lo + (hi - lo) / 2;

			if (l->r[mid].end <= a)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == l->n || a < l->r[lo].start)
			return 0;
	}
	return 1;
}

/* The segment being written. */
static uint64_t
seg_now(struct recorder *r)
{
	return trace_writer_segment(r->w);
}

static struct rmproc *
proc_get(struct recorder *r, uint32_t pid)
{
	uint64_t *v = hmap_get(&r->maps, pid);

	return v != NULL ? (struct rmproc *)(uintptr_t)*v : NULL;
}

static struct rmproc *
proc_add(struct recorder *r, uint32_t pid)
{
	int added;
	uint64_t *v = hmap_put(&r->maps, pid, 0, &added);

	if (added)
		*v = (uintptr_t)xcalloc(1, sizeof(struct rmproc));
	return (struct rmproc *)(uintptr_t)*v;
}

static void
proc_del(struct recorder *r, uint32_t pid)
{
	uint64_t v;

	if (hmap_del(&r->maps, pid, &v)) {
		struct rmproc *p = (struct rmproc *)(uintptr_t)v;

		list_put(p->l);
		free(p);
	}
}

struct maps_ctx {
	struct recorder *r;
	uint64_t ts;
	uint32_t pid;
	struct rmlist *l;
};

/* A TT_MMAP event for an executable file mapping; every executable
   range into the list. */
static int
maps_line(void *c, const struct procmap *m)
{
	struct maps_ctx *mc = c;
	struct rmlist *l = mc->l;
	struct trace_event ev;

	if (m->perms[2] != 'x' || m->end <= m->start)
		return 0;
	if (l->n > 0 && l->r[l->n - 1].end == m->start) {
		l->r[l->n - 1].end = m->end;
	} else if (l->n == 0 || l->r[l->n - 1].end < m->start) {
		DGROW(l->r, l->cap, l->n + 1, 16);
		l->r[l->n++] = (struct rmrange){ m->start, m->end };
	}	/* else out of order: /proc gives them sorted */
	if (m->path[0] != '/')
		return 0;
	memset(&ev, 0, sizeof(ev));
	ev.type = TT_MMAP;
	ev.cpu = TRACE_CPU_META;
	ev.ts = rec_meta_ts(mc->r, mc->ts);
	ev.arg[0] = mc->pid;
	ev.arg[1] = m->start;
	ev.arg[2] = m->end - m->start;
	ev.arg[3] = m->off;
	ev.blob = m->path;
	ev.blob_len = (uint32_t)m->pathlen;
	rec_add(mc->r, &ev);
	return 0;
}

/*
 * Read pid's maps, writing them as TT_MMAP: p's list becomes them (an
 * empty list when the process is gone). p must be pid's entry; frames
 * (n) the addresses that asked for it.
 */
static void
read_own(struct recorder *r, struct rmproc *p, uint64_t ts, uint32_t pid,
    const uint64_t *frames, size_t n)
{
	struct rmlist *l = xcalloc(1, sizeof(*l));
	struct maps_ctx mc = { r, ts, pid, l };

	l->owner = pid;
	l->refs = 1;
	/* the number before the records: they are in that segment or a
	   later one (then written again, never missing) */
	l->seg = seg_now(r);
	(void)procmap_each((pid_t)pid, maps_line, &mc);
	list_put(p->l);
	p->l = l;
	p->seg = l->seg;
	p->read_ts = ts ? ts : 1;
	if (list_covers(l, frames, n) || p->wait_ns == 0)
		p->wait_ns = REREAD_NS;
	else if (p->wait_ns < REREAD_MAX_NS)
		p->wait_ns *= 2;
}

/* The record saying pid's mappings are those of l's owner (whose
   records are in segment l->seg, the one being written). */
static void
write_from(struct recorder *r, uint64_t ts, uint32_t pid, struct rmproc *p,
    struct rmlist *l)
{
	struct trace_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = TT_MMAP;
	ev.cpu = TRACE_CPU_META;
	ev.ts = rec_meta_ts(r, ts);
	ev.arg[0] = pid;
	ev.arg[4] = l->owner;
	rec_add(r, &ev);
	if (p->l != l) {
		list_put(p->l);
		p->l = list_get(l);
	}
	p->seg = l->seg;
}

/* Own records valid in segment seg and read within wait_ns of ts: no
   new read for frames outside them. */
static int
read_recently(const struct rmproc *p, uint32_t pid, uint64_t seg, uint64_t ts)
{
	return p->l != NULL && p->l->owner == pid && p->seg == seg &&
	    p->read_ts != 0 && ts < p->read_ts + p->wait_ns;
}

/*
 * The list to use for the frames of a process forked from ppid without
 * exec, or NULL: ppid's (its own or the one it shares), when its owner's
 * records are in segment seg and it holds the frames; else ppid's maps
 * read now, when ppid is alive and was not read within its wait_ns.
 */
static struct rmlist *
parent_list(struct recorder *r, uint64_t ts, uint32_t ppid, uint64_t seg,
    const uint64_t *frames, size_t n)
{
	struct rmproc *q = proc_get(r, ppid);

	if (q != NULL && q->l != NULL && q->l->seg == seg &&
	    list_covers(q->l, frames, n))
		return q->l;
	if (q != NULL && read_recently(q, ppid, seg, ts))
		return NULL;
	if (rec_thread_find(r, ppid) == NULL)
		return NULL;		/* gone */
	q = proc_add(r, ppid);
	read_own(r, q, ts, ppid, NULL, 0);	/* not its own frames */
	if (q->l->n == 0 && !q->l->any)
		return NULL;		/* gone meanwhile */
	return list_covers(q->l, frames, n) ? q->l : NULL;
}

void
rec_maps_need(struct recorder *r, uint64_t ts, uint32_t pid,
    const uint64_t *frames, size_t n)
{
	struct rmproc *p;
	struct rthread *t;
	uint64_t seg;

	if (pid == 0)
		return;
	seg = seg_now(r);
	p = proc_get(r, pid);
	if (p != NULL && p->l != NULL && p->seg == seg &&
	    list_covers(p->l, frames, n))
		return;
	if (p != NULL && read_recently(p, pid, seg, ts))
		return;		/* read already: anonymous code, or garbage */
	t = rec_thread_find(r, pid);
	if (t != NULL && t->forked && t->ppid != 0 && t->ppid != pid &&
	    (p == NULL || p->l == NULL || p->l->owner != pid)) {
		/* forked without exec, no records of its own: its parent's
		   mappings when they hold its frames */
		struct rmlist *l = parent_list(r, ts, t->ppid, seg, frames, n);

		if (l != NULL) {
			write_from(r, ts, pid, p ? p : proc_add(r, pid), l);
			return;
		}
	}
	if (p == NULL)
		p = proc_add(r, pid);
	read_own(r, p, ts, pid, frames, n);
}

void
rec_maps_seen(struct recorder *r, uint64_t ts, uint32_t pid)
{
	rec_maps_need(r, ts, pid, NULL, 0);
}

void
rec_maps_written(struct recorder *r, uint32_t pid)
{
	struct rmproc *p;
	uint64_t seg;

	if (pid == 0)
		return;
	seg = seg_now(r);
	p = proc_add(r, pid);
	if (p->l != NULL && p->l->any && p->l->owner == pid && p->seg == seg)
		return;
	list_put(p->l);
	p->l = xcalloc(1, sizeof(*p->l));
	p->l->owner = pid;
	p->l->refs = 1;
	p->l->any = 1;
	p->l->seg = seg;
	p->seg = seg;
	p->read_ts = 0;
}

void
rec_maps_changed(struct recorder *r, uint32_t pid)
{
	proc_del(r, pid);
}

void
rec_maps_sweep(struct recorder *r, const uint32_t *dead, size_t n)
{
	for (size_t i = 0; i < n && r->maps.n > 0; i++)
		proc_del(r, dead[i]);
}

void
rec_maps_free(struct recorder *r)
{
	size_t pos = 0;
	uint64_t key, v;

	while (hmap_next(&r->maps, &pos, &key, &v)) {
		struct rmproc *p = (struct rmproc *)(uintptr_t)v;

		list_put(p->l);
		free(p);
	}
	hmap_free(&r->maps);
}
