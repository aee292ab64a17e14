/*
 * wrap-loop.c: the main thread's event-loop wait (poll, ppoll, select,
 * pselect, epoll_wait, epoll_pwait).
 *
 * In the main thread each such call is a loop wait: entering it writes
 * TU_LOOP_WAIT (arg = timeout ms, or -1) and marks the thread idle for
 * the watchdog; returning writes TU_LOOP_WAKE (arg = result) and stamps
 * the time the thread went back to work. The return of a wait is thus
 * the boundary between two callouts. Other threads' calls pass through.
 * While the switch is off, a main-thread wait also re-checks (at most
 * once a second, no system call otherwise) whether a recorder started.
 */
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>

#include "instrument-local.h"

INS_REAL(int, poll, (struct pollfd *, nfds_t, int))
INS_REAL(int, ppoll, (struct pollfd *, nfds_t, const struct timespec *,
    const sigset_t *))
INS_REAL(int, select, (int, fd_set *, fd_set *, fd_set *, struct timeval *))
INS_REAL(int, pselect, (int, fd_set *, fd_set *, fd_set *,
    const struct timespec *, const sigset_t *))
INS_REAL(int, epoll_wait, (int, struct epoll_event *, int, int))
INS_REAL(int, epoll_pwait, (int, struct epoll_event *, int, int,
    const sigset_t *))

int ins_hang_end_if_active(void);

void
ins_loop_enter(void)
{
	ins.loop_seen = 1;
	ins.in_wait = 1;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	ins_hang_end_if_active();
}

void
ins_loop_leave(void)
{
	ins.wake_boot_ns = ins_boot_ns();
	ins.wake_ns = ins_mono_ns();
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	ins.in_wait = 0;
}

/* Whether this call is a main-thread loop wait to record. */
static inline int
loop_begin(int64_t timeout_ms)
{
	if (INS_LIKELY(ins_self.tid != 0) && ins_self.tid != ins.main_tid)
		return 0;
	if (ins_tid() != ins.main_tid)
		return 0;
	ins_recheck();		/* cheap unless a second has passed */
	if (!ins.on)
		return 0;
	if (!ins.watchdog_started)
		ins_watchdog_start();
	ins_emit(TU_LOOP_WAIT, 0, (uint64_t)timeout_ms, 0, NULL);
	ins_loop_enter();
	return 1;
}

static inline void
loop_end(int r)
{
	ins_loop_leave();
	ins_emit(TU_LOOP_WAKE, 0, (uint64_t)(int64_t)r, 0, NULL);
}

static int64_t
ts_ms(const struct timespec *t)
{
	return t ? (int64_t)t->tv_sec * 1000 + t->tv_nsec / 1000000 : -1;
}

INS_EXPORT int
poll(struct pollfd *fds, nfds_t n, int timeout)
{
	int r, rec = loop_begin(timeout);

	r = get_poll()(fds, n, timeout);
	if (rec)
		loop_end(r);
	return r;
}

INS_EXPORT int
ppoll(struct pollfd *fds, nfds_t n, const struct timespec *t,
    const sigset_t *mask)
{
	int r, rec = loop_begin(ts_ms(t));

	r = get_ppoll()(fds, n, t, mask);
	if (rec)
		loop_end(r);
	return r;
}

INS_EXPORT int
select(int n, fd_set *r_, fd_set *w, fd_set *e, struct timeval *t)
{
	int r, rec = loop_begin(t ? (int64_t)t->tv_sec * 1000 +
	    t->tv_usec / 1000 : -1);

	r = get_select()(n, r_, w, e, t);
	if (rec)
		loop_end(r);
	return r;
}

INS_EXPORT int
pselect(int n, fd_set *r_, fd_set *w, fd_set *e, const struct timespec *t,
    const sigset_t *mask)
{
	int r, rec = loop_begin(ts_ms(t));

	r = get_pselect()(n, r_, w, e, t, mask);
	if (rec)
		loop_end(r);
	return r;
}

INS_EXPORT int
epoll_wait(int epfd, struct epoll_event *ev, int max, int timeout)
{
	int r, rec = loop_begin(timeout);

	r = get_epoll_wait()(epfd, ev, max, timeout);
	if (rec)
		loop_end(r);
	return r;
}

INS_EXPORT int
epoll_pwait(int epfd, struct epoll_event *ev, int max, int timeout,
    const sigset_t *mask)
{
	int r, rec = loop_begin(timeout);

	r = get_epoll_pwait()(epfd, ev, max, timeout, mask);
	if (rec)
		loop_end(r);
	return r;
}
