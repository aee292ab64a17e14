/*
 * record-proc.c: the recorder's process view: thread table and fd identity.
 *
 * The thread table is an array of struct rthread (tid, pid, ppid, comm)
 * with a free list, indexed by a hash table (common/hmap.h) from tid to
 * slot. It is filled from /proc at start and kept by the decoder; every
 * change goes to the metadata stream through trace_writer_thread.
 *
 * The fd set is a second hash table, of the (pid, fd) pairs whose
 * identity has been written. The first time a recorded syscall names an fd, its identity is
 * read from /proc/PID/fd/FD (pipe or socket inode, path, tty, anon inode)
 * and, for unix sockets, the peer inode from a NETLINK_SOCK_DIAG query
 * for that one inode. A close() drops the pair so a reused number is
 * looked up again. The BPF programs of the kernel-only mode see no close:
 * they tell the inode (and its type) a descriptor names when first seen
 * blocking and when it names another (rec_fd_known()); when /proc says
 * another file by the time the event is read, the identity is made from
 * what they saw ("pipe:[INO]", "socket:[INO]", "file:[INO]" ...). The
 * executable mappings written for user addresses are record-maps.c's.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>

#include "common/array.h"
#include "common/common.h"
#include "bpf/record-bpf.h"
#include "record-local.h"

#define PF_KTHREAD 0x00200000

struct rthread *
rec_thread_find(struct recorder *r, uint32_t tid)
{
	uint64_t *i = tid != 0 ? hmap_get(&r->thr_of, tid) : NULL;

	return i != NULL ? &r->thr[*i] : NULL;
}

struct rthread *
rec_thread_add(struct recorder *r, uint32_t tid)
{
	struct rthread *t = rec_thread_find(r, tid);
	size_t i;

	if (t)
		return t;
	if (r->nthr_free > 0) {
		i = r->thr_free[--r->nthr_free];
	} else {
		DGROW(r->thr, r->thr_cap, r->nthr + 1, 4096);
		i = r->nthr++;
	}
	memset(&r->thr[i], 0, sizeof(r->thr[i]));
	r->thr[i].tid = tid;
	*hmap_put(&r->thr_of, tid, 0, NULL) = i;
	return &r->thr[i];
}

void
rec_thread_del(struct recorder *r, uint32_t tid)
{
	uint64_t i;

	if (tid == 0 || !hmap_del(&r->thr_of, tid, &i))
		return;
	r->thr[i].tid = 0;
	DGROW(r->thr_free, r->thr_free_cap, r->nthr_free + 1, 64);
	r->thr_free[r->nthr_free++] = (uint32_t)i;
}

uint64_t
rec_meta_ts(struct recorder *r, uint64_t ts)
{
	if (ts < r->meta_ts)
		ts = r->meta_ts;
	r->meta_ts = ts;
	return ts;
}

void
rec_thread_emit(struct recorder *r, uint64_t ts, const struct rthread *t)
{
	struct trace_thread tt;
	int err;

	if (r->err)
		return;
	memset(&tt, 0, sizeof(tt));
	tt.tid = t->tid;
	tt.pid = t->pid;
	tt.ppid = t->ppid;
	tt.flags = t->flags | (t->exited ? TRACE_THREAD_EXITED : 0);
	tt.start_ts = ts >= r->start_ts ? ts : 0;
	memcpy(tt.comm, t->comm, TRACE_COMM_LEN);
	tt.comm[TRACE_COMM_LEN - 1] = '\0';
	err = trace_writer_thread(r->w, rec_meta_ts(r, ts), &tt);
	if (err && !r->err)
		r->err = err;
	else if (!err)
		r->stored++;
}

/* Read "Name:", "Tgid:", "PPid:" of /proc/PID/task/TID/status. */
static int
read_status(const char *path, struct rthread *t)
{
	char line[256];
	FILE *f = fopen(path, "re");

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "Name:\t", 6) == 0) {
			size_t n = strcspn(line + 6, "\n");

			if (n >= sizeof(t->comm))
				n = sizeof(t->comm) - 1;
			memcpy(t->comm, line + 6, n);
			t->comm[n] = '\0';
		} else if (strncmp(line, "Tgid:\t", 6) == 0) {
			t->pid = (uint32_t)strtoul(line + 6, NULL, 10);
		} else if (strncmp(line, "PPid:\t", 6) == 0) {
			t->ppid = (uint32_t)strtoul(line + 6, NULL, 10);
			break;
		}
	}
	fclose(f);
	return 0;
}

struct rthread *
rec_thread_learn(struct recorder *r, uint32_t tid)
{
	struct rthread *t = rec_thread_find(r, tid), s;
	char path[64];

	if (t != NULL)
		return t;
	memset(&s, 0, sizeof(s));
	snprintf(path, sizeof(path), "/proc/%u/status", tid);
	(void)read_status(path, &s);
	t = rec_thread_add(r, tid);
	t->pid = s.pid;
	t->ppid = s.ppid;
	return t;
}

static int is_kthread(uint32_t pid);

void
rec_thread_recover(struct recorder *r, uint64_t ts, uint32_t tid)
{
	struct rthread s, *t;
	char path[64];

	memset(&s, 0, sizeof(s));
	snprintf(path, sizeof(path), "/proc/%u/status", tid);
	if (read_status(path, &s) != 0 || s.pid == 0) {
		(void)rec_thread_add(r, tid);	/* gone: not looked up again */
		return;
	}
	t = rec_thread_add(r, tid);
	t->pid = s.pid;
	t->ppid = s.ppid;
	t->flags = is_kthread(s.pid) ? TRACE_THREAD_KERNEL : 0;
	memcpy(t->comm, s.comm, sizeof(t->comm));
	t->comm_ts = ts;
	rec_thread_emit(r, ts, t);
}

static int
is_kthread(uint32_t pid)
{
	char path[64], buf[512], *p;
	unsigned long flags = 0;
	int fd, n;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = (int)read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if ((p = strrchr(buf, ')')) == NULL)
		return 0;
	/* After ")": state ppid pgrp session tty_nr tpgid flags */
	if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %lu", &flags) != 1)
		return 0;
	return (flags & PF_KTHREAD) != 0;
}

void
rec_proc_scan(struct recorder *r, uint64_t ts)
{
	DIR *d = opendir("/proc"), *td;
	struct dirent *de, *te;

	if (d == NULL)
		return;
	rec_scope_load(r);
	while ((de = readdir(d)) != NULL) {
		char path[300];
		uint32_t pid;
		int kt;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		pid = (uint32_t)strtoul(de->d_name, NULL, 10);
		kt = is_kthread(pid);
		if (!kt && !rec_scope_has(r, pid))
			continue;	/* outside the cgroup scope */
		if (!kt && r->scope_netns != 0) {
			/* a scoped recorder: the processes of its namespace
			   (kernel threads serve every one) */
			struct stat ns;
			snprintf(path, sizeof(path), "/proc/%u/ns/net", pid);
			if (stat(path, &ns) != 0 ||
			    (uint32_t)ns.st_ino != r->scope_netns)
				continue;
		}
		snprintf(path, sizeof(path), "/proc/%u/task", pid);
		if ((td = opendir(path)) == NULL)
			continue;
		while ((te = readdir(td)) != NULL) {
			struct rthread t, *nt;

			if (te->d_name[0] < '1' || te->d_name[0] > '9')
				continue;
			memset(&t, 0, sizeof(t));
			t.tid = (uint32_t)strtoul(te->d_name, NULL, 10);
			snprintf(path, sizeof(path), "/proc/%u/task/%u/status",
			    pid, t.tid);
			if (read_status(path, &t) != 0)
				continue;
			if (t.pid == 0)
				t.pid = pid;
			t.flags = kt ? TRACE_THREAD_KERNEL : 0;
			nt = rec_thread_add(r, t.tid);
			t.comm_ts = ts;
			if (nt->comm_ts > ts) {
				/* An event read before the scan renamed it. */
				memcpy(t.comm, nt->comm, sizeof(t.comm));
				t.comm_ts = nt->comm_ts;
			}
			*nt = t;
			rec_thread_emit(r, ts, nt);
		}
		closedir(td);
	}
	closedir(d);
}

/* --- fd identity --------------------------------------------------------- */

static inline uint64_t
fd_key(uint32_t pid, int fd)
{
	return (uint64_t)pid << 32 | (uint32_t)fd;
}

/* Add (pid, fd) to the set; returns 1 when it was there already. */
static int
fd_mark(struct recorder *r, uint32_t pid, int fd)
{
	int added;

	(void)hmap_put(&r->fds, fd_key(pid, fd), 1, &added);
	return !added;
}

void
rec_fd_closed(struct recorder *r, uint32_t pid, int fd)
{
	(void)hmap_del(&r->fds, fd_key(pid, fd), NULL);
}

/*
 * Ask sock_diag about a unix socket inode: 1 and *peer (0: none) when the
 * inode is a unix socket, 0 otherwise.
 */
static int
unix_peer(struct recorder *r, uint64_t ino, uint64_t *peerp)
{
	struct {
		struct nlmsghdr nlh;
		struct unix_diag_req req;
	} q;
	char buf[8192];
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	uint64_t peer = 0;
	int found = 0;

	*peerp = 0;
	if (r->diag_fd < 0) {
		r->diag_fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC,
		    NETLINK_SOCK_DIAG);
		if (r->diag_fd < 0)
			return 0;
	}
	memset(&q, 0, sizeof(q));
	q.nlh.nlmsg_len = sizeof(q);
	q.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	q.nlh.nlmsg_flags = NLM_F_REQUEST;
	q.req.sdiag_family = AF_UNIX;
	q.req.udiag_states = ~0u;
	q.req.udiag_ino = (uint32_t)ino;
	q.req.udiag_show = UDIAG_SHOW_PEER;
	q.req.udiag_cookie[0] = q.req.udiag_cookie[1] = ~0u;
	if (sendto(r->diag_fd, &q, sizeof(q), 0, (struct sockaddr *)&sa,
	    sizeof(sa)) < 0)
		return 0;
	ssize_t n = recv(r->diag_fd, buf, sizeof(buf), 0);
	if (n <= 0)
		return 0;
	for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, n);
	    h = NLMSG_NEXT(h, n)) {
		struct unix_diag_msg *m;
		struct rtattr *a;
		int alen;

		if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY)
			break;
		m = NLMSG_DATA(h);
		if (m->udiag_ino != (uint32_t)ino)
			continue;
		found = 1;
		alen = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*m)));
		for (a = (struct rtattr *)(m + 1); RTA_OK(a, alen);
		    a = RTA_NEXT(a, alen))
			if (a->rta_type == UNIX_DIAG_PEER)
				peer = *(uint32_t *)RTA_DATA(a);
	}
	*peerp = peer;
	return found;
}

/* Kind of a socket inode: unix (with its peer) or another family. */
static unsigned
sock_kind(struct recorder *r, uint64_t ino, uint64_t *peer)
{
	return unix_peer(r, ino, peer) ? TFD_UNIX : TFD_SOCKET;
}

/* The identity of an fd as the BPF programs saw it (want_ino, what),
   into link; its kind. */
static unsigned
fd_from_bpf(struct recorder *r, uint64_t want_ino, uint64_t what,
    char *link, size_t size, uint64_t *peer)
{
	unsigned long long i = (unsigned long long)want_ino;

	switch (what & S_IFMT) {
	case S_IFIFO:
		snprintf(link, size, "pipe:[%llu]", i);
		return TFD_PIPE;
	case S_IFSOCK:
		snprintf(link, size, "socket:[%llu]", i);
		if (RB_FD_FAMILY(what) != 0)
			return RB_FD_FAMILY(what) == AF_UNIX ? TFD_UNIX :
			    TFD_SOCKET;
		return sock_kind(r, want_ino, peer);
	case S_IFREG:
		snprintf(link, size, "file:[%llu]", i);
		return TFD_FILE;
	case S_IFCHR:
		snprintf(link, size, "%s:[%llu]",
		    what & RB_FD_TERMINAL ? "terminal" : "device", i);
		return what & RB_FD_TERMINAL ? TFD_TTY : TFD_OTHER;
	}
	if (what & RB_FD_EVENTFD) {
		snprintf(link, size, "anon_inode:[eventfd]");
		return TFD_EVENTFD;
	}
	snprintf(link, size, "inode:[%llu]", i);
	return TFD_OTHER;
}

/* rec_fd_seen() and rec_fd_known(): want_ino 0 when not known. */
static void
fd_identity(struct recorder *r, uint64_t ts, uint32_t pid, int fd,
    uint64_t want_ino, uint64_t what)
{
	char path[64], link[512];
	struct trace_event ev;
	struct stat st;
	ssize_t n;
	uint64_t ino = 0, peer = 0;
	unsigned kind = TFD_OTHER;

	if (fd < 0 || pid == 0 || fd_mark(r, pid, fd))
		return;
	/* a pipe or a socket: all /proc would say (a unix socket's peer
	   aside) the programs told already */
	int told = want_ino != 0 && ((what & S_IFMT) == S_IFIFO ?
	    (what & RB_FD_ANONPIPE) != 0 : (what & S_IFMT) == S_IFSOCK &&
	    RB_FD_FAMILY(what) != 0);
	n = 0;
	if (!told) {
		snprintf(path, sizeof(path), "/proc/%u/fd/%d", pid, fd);
		n = readlink(path, link, sizeof(link) - 1);
		if (n > 0) {
			link[n] = '\0';
			if (stat(path, &st) == 0)
				ino = st.st_ino;
		}
	}
	if (want_ino != 0 && (told || n <= 0 || ino != want_ino)) {
		/* told, or closed or reused since the programs saw it */
		kind = fd_from_bpf(r, want_ino, what, link, sizeof(link),
		    &peer);
		ino = want_ino;
		n = (ssize_t)strlen(link);
	} else if (n <= 0) {
		return;		/* gone already: nothing to say */
	} else if (strncmp(link, "pipe:[", 6) == 0) {
		kind = TFD_PIPE;
	} else if (strncmp(link, "socket:[", 8) == 0) {
		kind = sock_kind(r, ino, &peer);
	} else if (strcmp(link, "anon_inode:[eventfd]") == 0) {
		kind = TFD_EVENTFD;
	} else if (strcmp(link, "anon_inode:[timerfd]") == 0) {
		kind = TFD_TIMERFD;
	} else if (strcmp(link, "anon_inode:[eventpoll]") == 0) {
		kind = TFD_EPOLL;
	} else if (strncmp(link, "/dev/pts/", 9) == 0 ||
	    strcmp(link, "/dev/ptmx") == 0 ||
	    strncmp(link, "/dev/tty", 8) == 0 ||
	    strcmp(link, "/dev/console") == 0) {
		kind = TFD_TTY;
	} else if (link[0] == '/' && ino != 0 && S_ISFIFO(st.st_mode)) {
		kind = TFD_PIPE;	/* a named pipe: the same queue */
	} else if (link[0] == '/') {
		kind = TFD_FILE;
	}
	memset(&ev, 0, sizeof(ev));
	ev.type = TT_FD;
	ev.cpu = TRACE_CPU_META;
	ev.ts = rec_meta_ts(r, ts);
	ev.arg[0] = pid;
	ev.arg[1] = (uint32_t)fd;
	ev.arg[2] = kind;
	ev.arg[3] = ino;
	ev.arg[4] = peer;
	ev.blob = link;
	ev.blob_len = (uint32_t)n;
	rec_add(r, &ev);
	r->fd_written++;
}

void
rec_fd_seen(struct recorder *r, uint64_t ts, uint32_t pid, int fd)
{
	fd_identity(r, ts, pid, fd, 0, 0);
}

void
rec_fd_known(struct recorder *r, uint64_t ts, uint32_t pid, int fd,
    uint64_t ino, uint64_t what)
{
	rec_fd_closed(r, pid, fd);
	fd_identity(r, ts, pid, fd, ino, what);
}

void
rec_proc_exited(struct recorder *r, uint32_t pid)
{
	if (r->fds.n == 0 && r->maps.n == 0)
		return;
	DGROW(r->dead, r->dead_cap, r->ndead + 1, 64);
	r->dead[r->ndead++] = pid;
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

void
rec_proc_sweep(struct recorder *r)
{
	struct hmap keep;
	uint64_t key, v;
	size_t pos = 0;

	if (r->ndead == 0)
		return;
	rec_maps_sweep(r, r->dead, r->ndead);
	qsort(r->dead, r->ndead, sizeof(*r->dead), cmp_u32);
	hmap_init(&keep);
	while (hmap_next(&r->fds, &pos, &key, &v)) {
		uint32_t pid = (uint32_t)(key >> 32);

		if (!bsearch(&pid, r->dead, r->ndead, sizeof(*r->dead),
		    cmp_u32))
			(void)hmap_put(&keep, key, v, NULL);
	}
	hmap_free(&r->fds);
	r->fds = keep;
	r->ndead = 0;
}

void
rec_thread_exited(struct recorder *r, uint64_t ts, struct rthread *t)
{
	t->exited = 1;
	rec_thread_emit(r, ts, t);
	DGROW(r->gone, r->gone_cap, r->ngone + 1, 64);
	r->gone[r->ngone++] = t->tid;
}

void
rec_thread_reap(struct recorder *r)
{
	for (size_t i = 0; i < r->ngone_old; i++) {
		struct rthread *t = rec_thread_find(r, r->gone[i]);

		if (t != NULL && t->exited)	/* not a new thread since */
			rec_thread_del(r, t->tid);
	}
	if (r->ngone > r->ngone_old)
		memmove(r->gone, r->gone + r->ngone_old,
		    (r->ngone - r->ngone_old) * sizeof(*r->gone));
	r->ngone -= r->ngone_old;
	r->ngone_old = r->ngone;
}

void
rec_proc_free(struct recorder *r)
{
	hmap_free(&r->sktup);
	free(r->sktups);
	r->sktups = NULL;
	r->nsktups = r->capsktups = 0;
	free(r->gone);
	r->gone = NULL;
	r->ngone = r->ngone_old = r->gone_cap = 0;
	free(r->dead);
	r->dead = NULL;
	r->ndead = r->dead_cap = 0;
	free(r->thr);
	r->thr = NULL;
	r->nthr = r->thr_cap = 0;
	free(r->thr_free);
	r->thr_free = NULL;
	r->nthr_free = r->thr_free_cap = 0;
	hmap_free(&r->thr_of);
	hmap_free(&r->fds);
	rec_maps_free(r);
	rec_ksyms_free(r);
	if (r->diag_fd >= 0)
		close(r->diag_fd);
	r->diag_fd = -1;
}
