/*
 * wrap-fd.c: the descriptors of libargus, kept apart from the program's.
 *
 * libargus holds one descriptor for long, the recorder's marker
 * (ins.fd), and others for a moment (files of /proc and /run it reads).
 * A program may close any number: one by one (a close() loop), by range
 * (close_range, closefrom, as daemons do) or by dup2() over it, then
 * open a file of its own that takes the number. libargus must then
 * neither write records into that file nor close it. So:
 *
 *  - every use of a descriptor by the library is a section of a guard
 *    (ins_fd_enter/ins_fd_leave): ins.mk_guard for writes to the marker,
 *    ins.tmp_guard for everything else;
 *  - the wrappers below of close, close_range, closefrom, dup2 and dup3
 *    announce the call in tmp_guard and wait until its sections are
 *    done; when the call reaches the marker's number they do the same in
 *    mk_guard and let go of the number (ins.fd = -1, records stop) before
 *    the call; the next ins_recheck() opens the marker anew. Announcing
 *    and entering are each an atomic read-modify-write followed by a
 *    read of the other side's counter, so one side always sees the other;
 *  - against a descriptor closed behind the wrappers (the bare system
 *    call), the marker sits at a high number (three quarters of the
 *    descriptor limit, at most 768), which the program's next open() does
 *    not take: the next record's write fails with EBADF and the library
 *    lets go of the number; and ins_recheck() compares, at most once a
 *    second, the number's file with the device and inode noted at open.
 *
 * State: the two guards and ins.fd, ins.fd_dev, ins.fd_ino (core.c's
 * struct ins_state), and the depth of sections of each thread (TLS).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "instrument-local.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

INS_REAL(int, close, (int))
INS_REAL(int, close_range, (unsigned, unsigned, int))
INS_REAL(void, closefrom, (int))
INS_REAL(int, dup2, (int, int))
INS_REAL(int, dup3, (int, int, int))

/*
 * A close waits this long at most for the sections to end. A section
 * lasts a system call or two; one cut short (a longjmp out of a signal
 * handler) would otherwise hold up every later close.
 */
#define INS_DRAIN_NS 500000000ull

int
ins_fd_enter(struct ins_fdguard *g)
{
	ins_self.fd_sections++;
	__atomic_add_fetch(&g->users, 1, __ATOMIC_SEQ_CST);
	if (INS_LIKELY(!__atomic_load_n(&g->closing, __ATOMIC_SEQ_CST)))
		return 1;
	ins_fd_leave(g);
	return 0;
}

void
ins_fd_leave(struct ins_fdguard *g)
{
	__atomic_sub_fetch(&g->users, 1, __ATOMIC_RELEASE);
	ins_self.fd_sections--;
}

/* Announce a close in g and wait for g's sections to end. */
static void
close_begin(struct ins_fdguard *g)
{
	uint64_t until = 0, now;

	__atomic_add_fetch(&g->closing, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&g->users, __ATOMIC_SEQ_CST) != 0) {
		now = ins_mono_ns();
		if (until == 0)
			until = now + INS_DRAIN_NS;
		else if (now > until)
			break;
		syscall(SYS_sched_yield);	/* not our sched_yield */
	}
}

static void
close_end(struct ins_fdguard *g)
{
	__atomic_sub_fetch(&g->closing, 1, __ATOMIC_RELEASE);
}

void
ins_fd_lost(int fd)
{
	if (fd < 0 || !__atomic_compare_exchange_n(&ins.fd, &fd, -1, 0,
	    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return;
	__atomic_store_n(&ins.on, 0, __ATOMIC_RELEASE);
	ins.next_check_ns = 0;
}

int
ins_fd_is(int fd, dev_t dev, ino_t ino)
{
	struct stat st;

	return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == dev &&
	    st.st_ino == ino;
}

int
ins_fd_open_marker(const char *path, dev_t *dev, ino_t *ino)
{
	struct stat st;
	struct rlimit rl;
	int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return -1;
	/* records go to a recorder's marker, never into any other file */
	if (!ins_marker_ok(fd) || fstat(fd, &st) != 0 ||
	    !S_ISREG(st.st_mode)) {
		close(fd);	/* inside a section: the real close */
		return -1;
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rlim_t lim = rl.rlim_cur < 1024 ? rl.rlim_cur : 1024;
		int high = (int)(lim / 4 * 3), h;

		if (high > fd && (h = fcntl(fd, F_DUPFD_CLOEXEC, high)) >= 0) {
			close(fd);
			fd = h;
		}
	}
	*dev = st.st_dev;
	*ino = st.st_ino;
	return fd;
}

void
ins_fd_retire(int fd, dev_t dev, ino_t ino)
{
	close_begin(&ins.mk_guard);
	if (ins_fd_is(fd, dev, ino))
		close(fd);	/* inside a section: the real close */
	close_end(&ins.mk_guard);
}

void
ins_fd_atfork_child(void)
{
	/* the parent's other threads, in a section or a close, are gone */
	ins.mk_guard.users = ins.mk_guard.closing = 0;
	ins.tmp_guard.users = ins.tmp_guard.closing = 0;
	ins_self.fd_sections = 0;
}

/* --- the wrappers -------------------------------------------------------- */

/*
 * Before a call of the program that closes the numbers lo to hi: wait
 * for the library's sections (tmp_guard); if the marker's number is
 * among them, let go of it once its writers are done. Returns whether
 * it did (mk_guard then stays announced until after_close()).
 */
static int
before_close(unsigned lo, unsigned hi)
{
	int fd;

	close_begin(&ins.tmp_guard);
	fd = __atomic_load_n(&ins.fd, __ATOMIC_ACQUIRE);
	/* a vfork child has descriptors of its own: nothing to let go */
	if (fd < 0 || (unsigned)fd < lo || (unsigned)fd > hi ||
	    getpid() != ins.pid)
		return 0;
	close_begin(&ins.mk_guard);
	ins_fd_lost(fd);
	return 1;
}

static void
after_close(int marker)
{
	if (marker)
		close_end(&ins.mk_guard);
	close_end(&ins.tmp_guard);
}

/* A call from inside a section is the library's own. */
#define INS_OWN_CALL() (ins_self.fd_sections != 0)

INS_EXPORT int
close(int fd)
{
	if (INS_OWN_CALL() || fd < 0)
		return get_close()(fd);
	/* close() is a cancellation point: announce before it, not across */
	after_close(before_close((unsigned)fd, (unsigned)fd));
	return get_close()(fd);
}

INS_EXPORT int
close_range(unsigned lo, unsigned hi, int flags)
{
	int (*real)(unsigned, unsigned, int) = get_close_range();
	int m = 0, r, e;

	if (!INS_OWN_CALL() && lo <= hi && !(flags & CLOSE_RANGE_CLOEXEC))
		m = 1 + before_close(lo, hi);
	r = real ? real(lo, hi, flags) :
	    (int)syscall(SYS_close_range, lo, hi, flags);
	e = errno;
	if (m)
		after_close(m - 1);
	errno = e;
	return r;
}

INS_EXPORT void
closefrom(int lo)
{
	void (*real)(int) = get_closefrom();
	int m = 0, e;

	if (lo < 0)
		lo = 0;
	if (!INS_OWN_CALL())
		m = 1 + before_close((unsigned)lo, UINT_MAX);
	if (real)
		real(lo);
	else
		(void)syscall(SYS_close_range, (unsigned)lo, UINT_MAX, 0);
	e = errno;
	if (m)
		after_close(m - 1);
	errno = e;
}

INS_EXPORT int
dup2(int from, int to)
{
	int m = 0, r, e;

	if (!INS_OWN_CALL() && to >= 0 && to != from)
		m = 1 + before_close((unsigned)to, (unsigned)to);
	r = get_dup2()(from, to);
	e = errno;
	if (m)
		after_close(m - 1);
	errno = e;
	return r;
}

INS_EXPORT int
dup3(int from, int to, int flags)
{
	int m = 0, r, e;

	if (!INS_OWN_CALL() && to >= 0 && to != from)
		m = 1 + before_close((unsigned)to, (unsigned)to);
	r = get_dup3()(from, to, flags);
	e = errno;
	if (m)
		after_close(m - 1);
	errno = e;
	return r;
}
