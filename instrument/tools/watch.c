/*
 * watch.c: hardware watchpoints for argus watch (see watch.h).
 *
 * One perf event (PERF_TYPE_BREAKPOINT, sample period 1) per thread of the
 * process, each with its own ring buffer (the kernel refuses ring buffers
 * on inherited per-task events, so new threads are found by rescanning
 * /proc/PID/task, watch_follow); watch_poll polls them and turns each
 * sample into a TU_FLAG_WRITE or TU_FLAG_READ marker record written on
 * behalf of the accessing thread (ARGUS_MK_PROXY, trace/user-protocol.h):
 * key = address, arg = the value read from /proc/PID/mem just after the
 * access, arg2 = the instruction address (the one after the access: data
 * breakpoints trap after the instruction). x86 has no read-only
 * breakpoints, so watching reads takes two debug registers per thread: a
 * write breakpoint and a read/write one; a read/write hit that has a write
 * hit of the same thread, instruction and time is the same access, any
 * other is a read. Samples of one poll round are gathered, sorted by time
 * and matched.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/common.h"
#include "instrument/tools/watch.h"
#include "trace/user-protocol.h"

#define W_PAGES 8		/* data pages per ring buffer */
#define W_MAXFD 1024

struct wsample {
	uint64_t time, ip;
	uint32_t tid;
	int is_w;		/* from the write breakpoint */
};

#define W_MAXSAMPLES 8192

struct watch {
	pid_t pid;
	uint64_t addr;
	unsigned len;
	int mode;		/* 'r', 'w' or 0 (both) */
	int memfd, markfd;
	watch_fn fn;
	void *arg;
	unsigned long hits, reads, writes;
	size_t pagesz;
	int fds[W_MAXFD];
	pid_t tids[W_MAXFD];
	int is_w[W_MAXFD];
	struct wsample samples[W_MAXSAMPLES];
	unsigned nsamples;
	void *rings[W_MAXFD];
	unsigned nfd;
};

static int
open_bp(struct watch *w, pid_t tid, int bp_type, const char **why)
{
	struct perf_event_attr a;
	int fd;
	void *ring;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_BREAKPOINT;
	a.bp_type = (uint32_t)bp_type;
	a.bp_addr = w->addr;
	a.bp_len = w->len;
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
	    PERF_SAMPLE_ADDR;
	a.wakeup_events = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.precise_ip = 0;
	fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1,
	    PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		*why = errno == ENOSPC ? "no free debug register" :
		    errno == ESRCH ? "thread gone" :
		    errno == EINVAL ? "invalid address or length for a watchpoint" :
		    strerror(errno);
		return -errno;
	}
	ring = mmap(NULL, (W_PAGES + 1) * w->pagesz, PROT_READ | PROT_WRITE,
	    MAP_SHARED, fd, 0);
	if (ring == MAP_FAILED) {
		*why = strerror(errno);
		close(fd);
		return -errno;
	}
	w->tids[w->nfd] = tid;
	w->is_w[w->nfd] = bp_type == HW_BREAKPOINT_W;
	w->fds[w->nfd] = fd;
	w->rings[w->nfd] = ring;
	w->nfd++;
	return 0;
}

static void
emit(struct watch *w, unsigned kind, uint32_t tid, uint64_t value,
    uint64_t ip)
{
	struct {
		struct argus_marker_hdr h;
		uint64_t tid;
	} __attribute__((packed)) r;

	if (w->fn) {
		struct watch_access a = { kind == TU_FLAG_WRITE, tid, w->addr,
		    value, ip };

		w->fn(w->arg, &a);
	}
	if (w->markfd < 0)
		return;
	r.h.id = ARGUS_MARKER_ID;
	r.h.kind = (uint16_t)(kind | ARGUS_MK_PROXY);
	r.h.len = 8;
	r.h.key = w->addr;
	r.h.arg = value;
	r.h.arg2 = ip;
	r.tid = tid;
	if (write(w->markfd, &r, sizeof(r)) < 0 && errno == EBADF)
		w->markfd = -1;
}

static void
on_sample(struct watch *w, uint64_t ip, uint32_t tid, unsigned kind)
{
	uint64_t value = 0;

	if (w->memfd >= 0 && pread(w->memfd, &value, w->len,
	    (off_t)w->addr) != (ssize_t)w->len)
		value = 0;
	w->hits++;
	if (kind == TU_FLAG_WRITE)
		w->writes++;
	else
		w->reads++;
	emit(w, kind, tid, value, ip);
}

static int
by_time(const void *a, const void *b)
{
	const struct wsample *x = a, *y = b;

	return x->time < y->time ? -1 : x->time > y->time;
}

/* Classify and emit the gathered samples (see the top comment). */
static void
flush_samples(struct watch *w)
{
	struct wsample *s = w->samples;
	unsigned n = w->nsamples;

	qsort(s, n, sizeof(*s), by_time);
	for (unsigned i = 0; i < n; i++) {
		int dup = 0;

		if (s[i].is_w) {
			on_sample(w, s[i].ip, s[i].tid, TU_FLAG_WRITE);
			continue;
		}
		if (w->mode == 0)
			for (unsigned j = i >= 4 ? i - 4 : 0; j < n && j <= i + 4;
			    j++)
				if (s[j].is_w && s[j].tid == s[i].tid &&
				    s[j].ip == s[i].ip &&
				    (s[j].time > s[i].time ? s[j].time - s[i].time :
				    s[i].time - s[j].time) < 100000)
					dup = 1;
		if (!dup)
			on_sample(w, s[i].ip, s[i].tid, TU_FLAG_READ);
	}
	w->nsamples = 0;
}

/* Consume the samples of one ring buffer. */
static void
drain(struct watch *w, unsigned i)
{
	struct perf_event_mmap_page *mp = w->rings[i];
	unsigned char *data = (unsigned char *)mp + w->pagesz;
	uint64_t size = (uint64_t)W_PAGES * w->pagesz;
	uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = mp->data_tail;

	while (tail < head) {
		struct perf_event_header eh;
		unsigned char rec[64];

		for (size_t k = 0; k < sizeof(eh); k++)
			((unsigned char *)&eh)[k] = data[(tail + k) % size];
		if (eh.size < sizeof(eh))
			break;
		if (eh.type == PERF_RECORD_SAMPLE && eh.size >= sizeof(eh) + 32) {
			for (size_t k = 0; k < 32 && k < sizeof(rec); k++)
				rec[k] = data[(tail + sizeof(eh) + k) % size];
			struct wsample *ws;

			if (w->nsamples == W_MAXSAMPLES)
				flush_samples(w);
			ws = &w->samples[w->nsamples++];
			memcpy(&ws->ip, rec, 8);
			memcpy(&ws->tid, rec + 12, 4);
			memcpy(&ws->time, rec + 16, 8);
			ws->is_w = w->is_w[i];
		}
		tail += eh.size;
	}
	__atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
}

/*
 * Open breakpoints on the threads of the process not watched yet.
 * Returns 0, or -1 with *why (NULL: process gone) and *bad_tid.
 */
static int
scan_threads(struct watch *w, const char **why, int *bad_tid)
{
	char path[64], *endp;
	struct dirent *de;
	DIR *d;

	*why = NULL;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)w->pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d)) && w->nfd < W_MAXFD) {
		long tid = strtol(de->d_name, &endp, 10);
		unsigned i;
		int r;

		if (*endp || tid <= 0)
			continue;
		for (i = 0; i < w->nfd && w->tids[i] != (pid_t)tid; i++)
			;
		if (i < w->nfd)
			continue;
		r = open_bp(w, (pid_t)tid, w->mode == 'r' ? HW_BREAKPOINT_RW :
		    HW_BREAKPOINT_W, why);
		if (r == 0 && w->mode == 0)
			r = open_bp(w, (pid_t)tid, HW_BREAKPOINT_RW, why);
		if (r == -ESRCH)
			continue;	/* the thread exited meanwhile */
		if (r < 0) {
			closedir(d);
			*bad_tid = (int)tid;
			return -1;
		}
	}
	closedir(d);
	return 0;
}

int
watch_process_gone(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	int gone = 1;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 1;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) && p[1])
		gone = p[2] == 'Z' || p[2] == 'X';
	fclose(f);
	return gone;
}


int
watch_open(struct watch **wp, const struct watch_opts *o, char **cause)
{
	struct watch *w = xcalloc(1, sizeof(*w));
	const char *why = NULL;
	char path[64];
	int bad_tid = 0;

	w->pid = o->pid;
	w->addr = o->addr;
	w->len = o->len;
	w->mode = o->mode;
	w->markfd = o->markfd;
	w->fn = o->fn;
	w->arg = o->arg;
	w->pagesz = (size_t)sysconf(_SC_PAGESIZE);
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)w->pid);
	w->memfd = open(path, O_RDONLY | O_CLOEXEC);
	if (scan_threads(w, &why, &bad_tid) != 0 || w->nfd == 0) {
		*cause = why ? xasprintf("cannot watch 0x%llx in thread %d: %s",
		    (unsigned long long)w->addr, bad_tid, why) :
		    xasprintf("process %d is gone", (int)w->pid);
		watch_close(w);
		return -1;
	}
	*wp = w;
	return 0;
}

unsigned
watch_nbreakpoints(const struct watch *w)
{
	return w->nfd;
}

void
watch_poll(struct watch *w, int timeout_ms)
{
	struct pollfd pf[W_MAXFD];

	for (unsigned i = 0; i < w->nfd; i++) {
		pf[i].fd = w->fds[i];
		pf[i].events = POLLIN;
	}
	poll(pf, w->nfd, timeout_ms);
	for (unsigned i = 0; i < w->nfd; i++)
		drain(w, i);
	flush_samples(w);
}

int
watch_follow(struct watch *w)
{
	const char *why;
	int bad_tid;

	if (watch_process_gone(w->pid))
		return 1;
	scan_threads(w, &why, &bad_tid);
	return 0;
}

void
watch_counts(const struct watch *w, unsigned long *hits,
    unsigned long *reads, unsigned long *writes)
{
	*hits = w->hits;
	*reads = w->reads;
	*writes = w->writes;
}

void
watch_close(struct watch *w)
{
	if (w == NULL)
		return;
	for (unsigned i = 0; i < w->nfd; i++) {
		munmap(w->rings[i], (W_PAGES + 1) * w->pagesz);
		close(w->fds[i]);
	}
	if (w->memfd >= 0)
		close(w->memfd);
	if (w->markfd >= 0)
		close(w->markfd);
	free(w);
}
