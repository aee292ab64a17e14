/*
 * graph-load.c: the load pass, trace events to the compact per-thread form.
 *
 * Each real thread gets an array of struct graph_event; interrupt-context
 * events (and irq entry/exit) go to one pseudo-thread per CPU, so that they
 * are cut out of the interrupted thread. A context switch becomes a
 * TT_SWITCH event (a wait when the thread blocked, with the resource of
 * its open syscall) in the thread leaving the CPU and a GRAPH_EV_RUN event
 * in the one taking it. g->order records the thread of each compact event
 * in arrival (time) order, as runs of one thread's consecutive events, so
 * that the build pass can replay them.
 */
#include <errno.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "engine-local.h"

struct graph *
graph_alloc(void)
{
	struct graph *g = xcalloc(1, sizeof(*g));

	g->win_to = UINT64_MAX;
	hmap_init(&g->tidmap);
	hmap_init(&g->strmap);
	hmap_init(&g->fdmap);
	hmap_init(&g->mapfrom);
	hmap_init(&g->lastimage);
	hmap_init(&g->ksymset);
	hmap_init(&g->uargs);
	hmap_init(&g->skseed);
	hmap_init(&g->pipeseed);
	g->tiddirect = xcalloc(TID_DIRECT, sizeof(*g->tiddirect));
	g->ntiddirect = TID_DIRECT;
	g->strs = xmalloc(16 * sizeof(*g->strs));
	g->capstrs = 16;
	g->strs[0] = xstrdup("");
	g->nstrs = 1;
	return g;
}

int
sys_is_read(uint32_t nr)
{
	switch (nr) {
	case SYS_read: case SYS_readv: case SYS_pread64: case SYS_preadv:
		return 1;
	}
	return 0;
}

int
sys_is_write(uint32_t nr)
{
	switch (nr) {
	case SYS_write: case SYS_writev: case SYS_pwrite64: case SYS_pwritev:
		return 1;
	}
	return 0;
}

static uint32_t
new_thread(struct graph *g, uint32_t tid)
{
	if (g->nth == ORDER_MAXTH) {
		g->toomany = 1;		/* graph_build fails with ETOOBIG */
		return 0;
	}
	DGROW(g->th, g->capth, g->nth + 1, 64);
	struct gthread *t = &g->th[g->nth];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->pid = tid;
	t->sys = GRAPH_NONE;
	if (tid >= GRAPH_IRQ_TID_BASE) {
		unsigned cpu = tid - GRAPH_IRQ_TID_BASE;
		t->pid = 0;
		t->flags = GRAPH_THREAD_IRQ | GRAPH_THREAD_KERNEL;
		snprintf(t->comm, sizeof(t->comm), "irq/%u", g->nhosts ?
		    cpu - g->hosts[graph_cpu_host(g, cpu)].cpu0 : cpu);
	}
	*hmap_put(&g->tidmap, tid, 0, NULL) = g->nth;
	if (tid < g->ntiddirect)
		g->tiddirect[tid] = g->nth + 1;
	return g->nth++;
}

void
graph_take_hosts(struct graph *g, const struct trace_reader *r)
{
	size_t n = trace_reader_nhosts(r);

	g->xpairs = trace_reader_pairs(r, &g->nxpairs);
	g->xby_send = trace_reader_pairs_by_send(r);
	if (n <= 1 || g->nhosts != 0)
		return;
	/* each host's tids straight into the table too (its pages are
	   touched only where a tid falls) */
	uint32_t nd = (uint32_t)n << TRACE_TID_HOST_SHIFT;
	uint32_t *d = xcalloc(nd, sizeof(*d));
	memcpy(d, g->tiddirect, g->ntiddirect * sizeof(*d));
	free(g->tiddirect);
	g->tiddirect = d;
	g->ntiddirect = nd;
	g->hosts = xcalloc(n, sizeof(*g->hosts));
	g->nhosts = n;
	for (size_t k = 0; k < n; k++) {
		const char *nm = trace_reader_host_name(r, k);
		g->hosts[k].name = xstrdup(nm != NULL ? nm : "");
		g->hosts[k].cpu0 = UINT32_MAX;
	}
	for (unsigned cpu = 0; cpu < TRACE_CPU_META; cpu++) {
		size_t k = trace_reader_cpu_host(r, cpu);
		if (g->hosts[k].cpu0 == UINT32_MAX)
			g->hosts[k].cpu0 = cpu;
		if (k == n - 1)
			break;
	}
}

const char *
graph_thread_host(const struct graph *g, uint32_t i)
{
	if (g->nhosts == 0 || i >= g->nth)
		return NULL;
	uint32_t tid = g->th[i].tid;
	unsigned k = tid >= GRAPH_IRQ_TID_BASE ?
	    graph_cpu_host(g, tid - GRAPH_IRQ_TID_BASE) : trace_tid_host(tid);
	return k < g->nhosts ? g->hosts[k].name : NULL;
}

unsigned
graph_cpu_host(const struct graph *g, unsigned cpu)
{
	for (size_t k = g->nhosts; k-- > 0;)
		if (g->hosts[k].cpu0 != UINT32_MAX && cpu >= g->hosts[k].cpu0)
			return (unsigned)k;
	return 0;
}

uint32_t
graph_thread_get(struct graph *g, uint32_t tid)
{
	if (tid < g->ntiddirect && g->tiddirect[tid] != 0)
		return g->tiddirect[tid] - 1;
	uint64_t *v = hmap_get(&g->tidmap, tid);

	return v ? (uint32_t)*v : new_thread(g, tid);
}

static void
set_comm(struct gthread *t, const char *s, size_t len)
{
	if (len >= TRACE_COMM_LEN)
		len = TRACE_COMM_LEN - 1;
	memcpy(t->comm, s, len);
	t->comm[len] = '\0';
}

void
graph_load_thread(struct graph *g, const struct trace_thread *tt)
{
	if (tt->tid == 0)
		return;
	uint32_t ti = graph_thread_get(g, tt->tid);
	struct gthread *t = &g->th[ti];
	if (tt->pid != 0 && tt->pid != t->pid) {
		if (t->nev > 0)
			g->pid_changed = 1;
		t->pid = tt->pid;
	}
	t->ppid = tt->ppid;
	if (tt->flags & TRACE_THREAD_KERNEL)
		t->flags |= GRAPH_THREAD_KERNEL;
	if (tt->comm[0] != '\0')
		set_comm(t, tt->comm, strnlen(tt->comm, TRACE_COMM_LEN));
}

uint32_t
graph_intern(struct graph *g, const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ULL;

	if (len == 0)
		return 0;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	for (;; h++) {
		int added;
		uint64_t *v = hmap_put(&g->strmap, h, 0, &added);
		if (!added) {
			const char *o = g->strs[*v];
			if (strlen(o) == len && memcmp(o, s, len) == 0)
				return (uint32_t)*v;
			continue;
		}
		DGROW(g->strs, g->capstrs, g->nstrs + 1, 16);
		char *c = xmalloc(len + 1);
		memcpy(c, s, len);
		c[len] = '\0';
		g->strs[g->nstrs] = c;
		*v = g->nstrs;
		return g->nstrs++;
	}
}

static uint32_t
push(struct graph *g, uint32_t ti, const struct graph_event *ge)
{
	struct gthread *t = &g->th[ti];

	DGROW_BIG(t->ev, t->cap, t->nev + 1, 16);
	if (t->nev >= UINT32_MAX - 2) {
		g->toomany = 1;		/* graph_build fails with ETOOBIG */
		return t->nev;
	}
	uint32_t idx = t->nev++;
	t->ev[idx] = *ge;
	g->nevents++;
	size_t floor = g->ngaps > 0 ? g->gap_order[g->ngaps - 1] : 0;
	uint32_t *last = g->norder > floor ? &g->order[g->norder - 1] : NULL;
	if (last != NULL && (*last & (ORDER_MAXTH - 1)) == ti &&
	    (*last >> ORDER_TBITS) < ORDER_MAXRUN - 1) {
		*last += ORDER_MAXTH;
	} else {
		DGROW_BIG(g->order, g->caporder, g->norder + 1, 4096);
		g->order[g->norder++] = ti;
	}
	if (g->stream != NULL)
		gb_step(g->stream, ti, idx);
	return idx;
}

static uint32_t
clamp_ret(uint64_t v)
{
	int64_t s = (int64_t)v;

	if (s < 0)
		return 0;
	return s > UINT32_MAX ? UINT32_MAX : (uint32_t)s;
}

static const char *
blob_str(const struct trace_event *ev, size_t *len)
{
	*len = ev->blob != NULL ? ev->blob_len : 0;
	return ev->blob;
}

static void
load_switch(struct graph *g, const struct trace_event *ev)
{
	struct graph_event ge = { .ts = ev->ts, .type = TT_SWITCH };

	if (ev->tid != 0) {
		uint32_t ti = graph_thread_get(g, ev->tid);
		struct gthread *t = &g->th[ti];
		ge.sub = (uint8_t)ev->arg[0];
		ge.aux = UINT32_MAX;
		if ((ev->arg[0] & 0xff) != 0)
			ge.flags |= GRAPH_EVF_WAIT;
		if (t->sys != GRAPH_NONE) {
			ge.key = t->ev[t->sys].key;
			ge.aux = t->ev[t->sys].aux;
			ge.flags |= GRAPH_EVF_INSYS |
			    (t->ev[t->sys].flags & GRAPH_EVF_LOCK);
		}
		push(g, ti, &ge);
	}
	if (ev->arg[1] != 0) {
		struct graph_event re = { .ts = ev->ts, .type = GRAPH_EV_RUN,
		    .key = ev->tid, .aux = ev->cpu };
		push(g, graph_thread_get(g, (uint32_t)ev->arg[1]), &re);
	}
}

/* Whether futex(2) with op and val takes a contended lock: glibc's locks
   wait for the word's value 2 ("locked, with waiters"); PI locks have an
   operation of their own. Condition variables, semaphores and one-shot
   flags wait for other values. */
static int
futex_locks(uint64_t op, uint64_t val)
{
	switch ((uint32_t)op & (uint32_t)FUTEX_CMD_MASK) {
	case FUTEX_WAIT:
		return (uint32_t)val == 2;
	case FUTEX_LOCK_PI: case FUTEX_LOCK_PI2:
		return 1;
	}
	return 0;
}

static void
load_sys_exit(struct graph *g, struct gthread *t, struct graph_event *ge)
{
	if (t->sys == GRAPH_NONE)
		return;
	struct graph_event *en = &t->ev[t->sys];
	t->sys = GRAPH_NONE;
	if (!sys_is_read(en->aux) && !sys_is_write(en->aux))
		return;
	uint64_t *fd = hmap_get(&g->fdmap, (uint64_t)t->pid << 32 |
	    (uint32_t)en->key);
	if (fd == NULL)
		return;
	en->key = *fd & 0x00ffffffffffffffULL;
	en->sub = (uint8_t)(*fd >> 56);
	en->flags |= GRAPH_EVF_FDRES;
	(void)ge;
}

/* A file mapping of a process, once per (pid, start, len, pgoff); or
   that a process has the mappings of another (from). */
/* The start of the image process pid ran at ts: the time of its last
   exec (or fork of that pid) at or before ts, 0 when none is known;
   *next (when not NULL) the time of the next one, UINT64_MAX if none. */
static uint64_t
image_of(const struct graph *g, uint32_t pid, uint64_t ts, uint64_t *next)
{
	uint64_t lo = 0, hi = UINT64_MAX;
	const uint64_t *last = hmap_get(&g->lastimage, pid);

	for (uint64_t i = last ? *last : 0; i != 0; i = g->images[i - 1].prev) {
		const struct gimage *im = &g->images[i - 1];
		if (im->ts <= ts && im->ts > lo)
			lo = im->ts;
		else if (im->ts > ts && im->ts < hi)
			hi = im->ts;
	}
	if (next)
		*next = hi;
	return lo;
}

/* Process pid has a new image from ts on (an exec, or a new process
   of that pid). */
static void
add_image(struct graph *g, uint32_t pid, uint64_t ts)
{
	uint64_t *last = hmap_put(&g->lastimage, pid, 0, NULL);

	DGROW(g->images, g->capimages, g->nimages + 1, 16);
	g->images[g->nimages++] = (struct gimage){ pid, (uint32_t)*last, ts };
	*last = g->nimages;
}

static void
load_mmap(struct graph *g, const struct trace_event *ev)
{
	size_t len;
	const char *s = blob_str(ev, &len);
	struct gmap m = { .pid = (uint32_t)ev->arg[0], .start = ev->arg[1],
	    .len = ev->arg[2], .pgoff = ev->arg[3], .ts = ev->ts };

	if (ev->arg[4] != 0 && ev->arg[4] != m.pid && len == 0) {
		*hmap_put(&g->mapfrom, m.pid, 0, NULL) = (uint32_t)ev->arg[4];
		return;
	}
	if (len == 0 || s[0] != '/')
		return;		/* [vdso] and the like: nothing to read */
	m.path = graph_intern(g, s, len);
	/* once an image (the same mapping of a later segment) */
	for (size_t i = g->nmaps; i-- > 0;)
		if (g->maps[i].pid == m.pid && g->maps[i].start == m.start &&
		    g->maps[i].len == m.len && g->maps[i].pgoff == m.pgoff &&
		    g->maps[i].path == m.path &&
		    image_of(g, m.pid, g->maps[i].ts, NULL) ==
		    image_of(g, m.pid, m.ts, NULL))
			return;
	DGROW(g->maps, g->capmaps, g->nmaps + 1, 16);
	g->maps[g->nmaps++] = m;
}

/* A kernel function a kernel stack names (TT_KSYM), once. */
static void
load_ksym(struct graph *g, const struct trace_event *ev)
{
	size_t len;
	const char *s = blob_str(ev, &len);
	int added;

	if (len == 0 || ev->arg[0] < TRACE_KERNEL_ADDR)
		return;
	(void)hmap_put(&g->ksymset, ev->arg[0], 1, &added);
	if (!added)
		return;
	DGROW(g->ksyms, g->capksyms, g->nksyms + 1, 64);
	g->ksyms[g->nksyms++] = (struct gksym){ ev->arg[0], ev->arg[1],
	    graph_intern(g, s, len) };
}

const char *
graph_ksym_at(const struct graph *g, uint32_t tid, uint64_t addr,
    uint64_t *delta)
{
	const struct gksym *best = NULL;

	addr = trace_kaddr_on_host(addr, trace_tid_host(tid));

	/* a few hundred functions a trace: a scan */
	for (size_t i = 0; i < g->nksyms; i++) {
		const struct gksym *k = &g->ksyms[i];
		if (k->addr <= addr && (best == NULL || k->addr > best->addr))
			best = k;
	}
	if (best == NULL || (best->size != 0 && addr - best->addr >=
	    best->size))
		return NULL;
	*delta = addr - best->addr;
	return g->strs[best->name];
}

/* Processes followed from one to the one whose mappings it has, at most:
   a chain written by a recorder is one long; a loop stops here. */
#define MAPFROM_MAX 8

const char *
graph_map_at(const struct graph *g, uint32_t pid, uint64_t addr,
    uint64_t ts, uint64_t *off)
{
	for (int hop = 0; hop <= MAPFROM_MAX; hop++) {
		const uint64_t *from;
		uint64_t hi, lo = image_of(g, pid, ts, &hi);

		for (size_t i = g->nmaps; i-- > 0;) {
			const struct gmap *m = &g->maps[i];
			if (m->pid == pid && addr >= m->start &&
			    addr - m->start < m->len && m->ts >= lo &&
			    m->ts < hi) {
				*off = addr - m->start + m->pgoff;
				return g->strs[m->path];
			}
		}
		if ((from = hmap_get(&g->mapfrom, pid)) == NULL)
			break;
		pid = (uint32_t)*from;
	}
	return NULL;
}

/* Result class of a file lock operation's return value (GRAPH_FL_*). */
static unsigned
fl_result(int64_t ret)
{
	if (ret == 0)
		return GRAPH_FL_OK;
	if (ret == -EAGAIN)
		return GRAPH_FL_AGAIN;
	/* the kernel's FILE_LOCK_DEFERRED: queued behind the holder */
	return ret == 1 ? GRAPH_FL_BLOCKED : GRAPH_FL_ERR;
}

void
graph_load_event(struct graph *g, const struct trace_event *ev)
{
	unsigned ctx = ev->flags & TRACE_CTX_MASK;
	struct graph_event ge = { .ts = ev->ts, .key = ev->arg[0],
	    .aux = (uint32_t)ev->arg[1], .type = (uint8_t)ev->type,
	    .flags = (uint16_t)ctx };
	uint32_t ti;
	size_t len;
	const char *s;

	g->trace_events++;
	if (ev->ts != 0 && (g->first_ts == 0 || ev->ts < g->first_ts))
		g->first_ts = ev->ts;
	switch (ev->type) {
	case TT_NONE: case TT_MIGRATE:
	case TT_SOCK_ADDR:	/* a connection's addresses: not used yet */
	case TT_STACKDEF:	/* the reader gave its stacks their frames */
		return;
	case TT_MMAP:
		load_mmap(g, ev);
		return;
	case TT_KSYM:
		load_ksym(g, ev);
		return;
	case TT_LOST:
		g->lost += ev->arg[0];
		DGROW(g->losts, g->caplosts, g->nlosts + 1, 16);
		g->losts[g->nlosts++] = (struct glost){ ev->ts, ev->arg[0] };
		return;
	case TT_THREAD: {
		struct trace_thread tt = { .tid = (uint32_t)ev->arg[0],
		    .pid = (uint32_t)ev->arg[1], .ppid = (uint32_t)ev->arg[2],
		    .start_ts = ev->arg[3], .flags = (uint32_t)ev->arg[4] };
		s = blob_str(ev, &len);
		if (len >= TRACE_COMM_LEN)
			len = TRACE_COMM_LEN - 1;
		if (len)
			memcpy(tt.comm, s, len);
		graph_load_thread(g, &tt);
		return;
	}
	case TT_FD:
		*hmap_put(&g->fdmap, ev->arg[0] << 32 | (uint32_t)ev->arg[1],
		    0, NULL) = (ev->arg[2] << 56) |
		    (ev->arg[3] & 0x00ffffffffffffffULL);
		return;
	case TT_SWITCH:
		if (ctx == TRACE_CTX_TASK) {
			load_switch(g, ev);
			return;
		}
		break;
	}
	if (ev->type >= TT_NTYPES)
		return;
	/* a reader leaves these out (and warns); events handed in as an
	   array may still hold them */
	if (trace_stack_malformed(ev))
		return;
	if (ctx != TRACE_CTX_TASK || ev->type == TT_IRQ_ENTRY ||
	    ev->type == TT_IRQ_EXIT || ev->type == TT_IPI) {
		if (ev->cpu == TRACE_CPU_META)
			return;
		ti = graph_thread_get(g, GRAPH_IRQ_TID_BASE + ev->cpu);
	} else if (ev->type == TT_STACK && ev->arg[0] != 0) {
		ti = graph_thread_get(g, (uint32_t)ev->arg[0]);
	} else if (ev->tid == 0) {
		return;		/* the idle task */
	} else {
		ti = graph_thread_get(g, ev->tid);
	}
	struct gthread *t = &g->th[ti];
	switch (ev->type) {
	case TT_WAKING: case TT_WAKEUP_NEW:
		if (ev->arg[0] == 0)
			return;
		ge.key = graph_thread_get(g, (uint32_t)ev->arg[0]);
		break;
	case TT_FORK: {
		uint32_t ci = graph_thread_get(g, (uint32_t)ev->arg[0]);
		struct gthread *c = &g->th[ci];
		if (ev->arg[0] == ev->arg[1])	/* a process, a pid anew */
			add_image(g, (uint32_t)ev->arg[1], ev->ts);
		if (ev->arg[1] != 0 && c->pid != (uint32_t)ev->arg[1]) {
			if (c->nev > 0)
				g->pid_changed = 1;
			c->pid = (uint32_t)ev->arg[1];
		}
		s = blob_str(ev, &len);
		if (len)
			set_comm(c, s, len);
		else
			memcpy(c->comm, g->th[ti].comm, TRACE_COMM_LEN);
		t = &g->th[ti];
		ge.key = ci;
		ge.aux = c->pid;
		break;
	}
	case TT_EXEC:
		add_image(g, (uint32_t)ev->arg[0], ev->ts);
		s = blob_str(ev, &len);
		if (len) {
			const char *b = memrchr(s, '/', len);
			if (b != NULL) {
				len -= (size_t)(b + 1 - s);
				s = b + 1;
			}
			set_comm(t, s, len);
		}
		break;
	case TT_RENAME:
		s = blob_str(ev, &len);
		if (len) {
			uint32_t ri = graph_thread_get(g, (uint32_t)ev->arg[0]);
			set_comm(&g->th[ri], s, len);
		}
		t = &g->th[ti];
		break;
	case TT_IRQ_ENTRY: case TT_WQ_QUEUE:
		s = blob_str(ev, &len);
		ge.aux = graph_intern(g, s, len);
		break;
	case TT_SIGNAL_GEN:
		ge.key = graph_thread_get(g, (uint32_t)ev->arg[1]);
		ge.aux = (uint32_t)ev->arg[0];
		t = &g->th[ti];
		break;
	case TT_SOCK_SEND: case TT_SOCK_RECV:
		ge.aux = clamp_ret(ev->arg[3]);
		break;
	case TT_TIMER_START:
		ge.aux = (uint32_t)ev->arg[3];
		break;
	case TT_FILELOCK:
		/* key inode, sub op | type << 3 | result class << 5, aux
		   the owner's low bits (see engine.h) */
		ge.key = ev->arg[1];
		ge.sub = (uint8_t)((ev->arg[0] & 7) | (ev->arg[3] & 3) << 3 |
		    fl_result((int64_t)ev->arg[4]) << 5);
		ge.aux = (uint32_t)(ev->arg[5] ^ ev->arg[5] >> 32);
		break;
	case TT_SOFTIRQ_RAISE:
		ge.aux = ev->cpu;
		break;
	case TT_SYS_ENTER:
		ge.key = ev->arg[1];
		ge.aux = (uint32_t)ev->arg[0];
		if (ge.aux == SYS_futex && futex_locks(ev->arg[2], ev->arg[3]))
			ge.flags |= GRAPH_EVF_LOCK;
		if (ge.aux == SYS_futex && (ev->arg[2] & FUTEX_PRIVATE_FLAG))
			ge.flags |= GRAPH_EVF_PRIVATE;
		t->sys = t->nev;
		break;
	case TT_SYS_EXIT:
		ge.key = ev->arg[1];
		ge.aux = (uint32_t)ev->arg[0];
		load_sys_exit(g, t, &ge);
		break;
	case TT_USER:
		ge.sub = (uint8_t)ev->arg[0];
		ge.key = ev->arg[1];
		if (ge.sub == TU_HANG_BEGIN || ge.sub == TU_HANG_END)
			g->th[ti].flags |= GRAPH_THREAD_MARKS;
		s = blob_str(ev, &len);
		ge.aux = graph_intern(g, s, len);
		t = &g->th[ti];
		if (ev->arg[2] != 0 || ev->arg[3] != 0) {
			/* arg and arg2 do not fit the compact event */
			DGROW(g->uargv, g->capuargv, g->nuargv + 2, 64);
			*hmap_put(&g->uargs, pack2(ti, t->nev), 0, NULL) =
			    g->nuargv;
			g->uargv[g->nuargv++] = ev->arg[2];
			g->uargv[g->nuargv++] = ev->arg[3];
		}
		break;
	case TT_STACK: {
		size_t nf = ev->blob != NULL ? ev->blob_len / 8 : 0;
		DGROW(g->frames, g->capframes, g->nframes + nf, 64);
		if (nf)
			memcpy(g->frames + g->nframes, ev->blob, nf * 8);
		ge.key = g->nframes;
		ge.aux = (uint32_t)nf;
		ge.sub = (uint8_t)ev->arg[1];
		g->nframes += nf;
		/* a waker's: the thread it woke, when the graph can say */
		if (ge.sub == TSK_WAKER && (ev->arg[1] >> 8) != 0) {
			uint32_t w = graph_thread_get(g,
			    (uint32_t)(ev->arg[1] >> 8));
			if (w + 1 < GRAPH_STACK_ABOUT_MAX)
				ge.aux |= (w + 1) << GRAPH_STACK_NBITS;
		}
		break;
	}
	}
	push(g, ti, &ge);
}

void
graph_load_finish(struct graph *g)
{
	for (uint32_t i = 0; i < g->nth; i++)
		if (g->th[i].flags & GRAPH_THREAD_IRQ)
			g->ncpu_threads++;
}

int
graph_user_args(const struct graph *g, uint32_t thread, uint32_t idx,
    uint64_t *arg, uint64_t *arg2)
{
	const uint64_t *p = hmap_get(&g->uargs, pack2(thread, idx));

	*arg = p != NULL ? g->uargv[*p] : 0;
	*arg2 = p != NULL ? g->uargv[*p + 1] : 0;
	return p != NULL;
}

uint64_t
graph_first_ts(const struct graph *g)
{
	return g->first_ts;
}
