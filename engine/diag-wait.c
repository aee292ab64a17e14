/*
 * diag-wait.c: what a thread waits for at a blocking switch (struct
 * dwait, diag_wait_at()): the system call around it described by its
 * type and resource (diag_describe_sys(): a futex word, a descriptor's
 * file, a child, a signal, an open, a file lock, ...), a stop by a
 * signal or a tracer, the instrumentation's user-level wait around it,
 * and where the thread ran again. The syscall sets that name the kinds
 * of waits live here (diag_sys_poll() and the others).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "diag-local.h"

static int
is_sys(uint32_t nr, const long *set)
{
	for (; *set >= 0; set++)
		if ((long)nr == *set)
			return 1;
	return 0;
}

static const long sleeps[] = { SYS_nanosleep, SYS_clock_nanosleep, -1 };
static const long polls[] = { SYS_poll, SYS_ppoll, SYS_select,
	SYS_pselect6, SYS_epoll_wait, SYS_epoll_pwait,
#ifdef SYS_epoll_pwait2
	SYS_epoll_pwait2,
#endif
	-1 };
static const long epolls[] = { SYS_epoll_wait, SYS_epoll_pwait,
#ifdef SYS_epoll_pwait2
	SYS_epoll_pwait2,
#endif
	-1 };
/* a wait for a child process: for work the thread started */
static const long children[] = { SYS_wait4, SYS_waitid, -1 };
static const long sigwaits[] = { SYS_rt_sigsuspend, SYS_rt_sigtimedwait,
#ifdef SYS_pause
	SYS_pause,
#endif
	-1 };
/* an open that may block (a FIFO's, a device's) */
static const long opens[] = { SYS_openat,
#ifdef SYS_open
	SYS_open, SYS_creat,
#endif
#ifdef SYS_openat2
	SYS_openat2,
#endif
	-1 };
static const long recvs[] = { SYS_recvfrom, SYS_recvmsg, SYS_recvmmsg,
	SYS_sendto, SYS_sendmsg, SYS_accept, SYS_accept4, SYS_connect, -1 };

int
diag_sys_poll(uint32_t nr)
{
	return is_sys(nr, polls);
}

int
diag_sys_sleep(uint32_t nr)
{
	return is_sys(nr, sleeps);
}

int
diag_sys_child(uint32_t nr)
{
	return is_sys(nr, children);
}

int
diag_sys_sigwait(uint32_t nr)
{
	return is_sys(nr, sigwaits);
}

static const char *
fd_type(unsigned kind)
{
	switch (kind) {
	case TFD_PIPE: return "pipe";
	case TFD_UNIX: case TFD_TCP: case TFD_UDP: case TFD_SOCKET:
		return "socket";
	case TFD_TTY: return "tty";
	case TFD_TIMERFD: return "timerfd";
	case TFD_EVENTFD: return "eventfd";
	case TFD_FILE: return "file";
	}
	return "other";
}

void
diag_describe_sys(const struct graph *g, const struct graph_event *en,
    struct diag_wait *w)
{
	const char *n = trace_syscall_name(en->aux);

	w->syscall = n != NULL ? n : "";
	if (en->aux == SYS_futex) {
		w->type = "futex";
		snprintf(w->resource, sizeof(w->resource), "futex:0x%llx",
		    (unsigned long long)en->key);
	} else if (en->flags & GRAPH_EVF_FDRES) {
		w->type = fd_type(en->sub);
		snprintf(w->resource, sizeof(w->resource), "%s:%llu",
		    trace_fd_kind_name(en->sub) != NULL ?
		    trace_fd_kind_name(en->sub) : "fd",
		    (unsigned long long)en->key);
	} else if (is_sys(en->aux, sleeps)) {
		w->type = "sleep";
		snprintf(w->resource, sizeof(w->resource), "sleep");
	} else if (is_sys(en->aux, epolls)) {
		/* an epoll set is a resource of its own: a server may wait
		   for requests in one set and for a lock in another */
		w->type = "poll";
		snprintf(w->resource, sizeof(w->resource), "%s:fd%llu",
		    w->syscall, (unsigned long long)en->key);
	} else if (is_sys(en->aux, polls)) {
		w->type = "poll";
		snprintf(w->resource, sizeof(w->resource), "%s", w->syscall);
	} else if (is_sys(en->aux, recvs)) {
		w->type = "socket";
		snprintf(w->resource, sizeof(w->resource), "fd:%llu",
		    (unsigned long long)en->key);
	} else if (en->aux == SYS_wait4) {
		/* the pid argument: -1 any child, 0 or -pgid a group */
		int32_t pid = (int32_t)en->key;
		w->type = "child";
		if (pid > 0)
			snprintf(w->resource, sizeof(w->resource),
			    "child:%" PRId32, pid);
		else
			snprintf(w->resource, sizeof(w->resource), "%s",
			    pid == -1 ? "child:any" : "child:group");
	} else if (en->aux == SYS_waitid) {
		/* the idtype argument: P_ALL, P_PID, P_PGID, P_PIDFD */
		w->type = "child";
		snprintf(w->resource, sizeof(w->resource), "%s",
		    en->key == 0 ? "child:any" : en->key == 2 ?
		    "child:group" : "child:one");
	} else if (is_sys(en->aux, sigwaits)) {
		/* a wait for a signal: a shell's for its children
		   (SIGCHLD), a daemon's for its next job; the signal set's
		   address tells the places it waits from apart (the
		   similar nodes' signatures hash the resource) */
		w->type = "signal";
		snprintf(w->resource, sizeof(w->resource), "%s:0x%llx",
		    w->syscall, (unsigned long long)en->key);
	} else if (is_sys(en->aux, opens)) {
		/* an open that blocks: a FIFO waiting for its other end, a
		   device; the path is not in a kernel-only trace, the
		   directory is (openat's first argument) */
		w->type = "open";
		int at = en->aux == SYS_openat;
#ifdef SYS_openat2
		at |= en->aux == SYS_openat2;
#endif
		if (at && (int32_t)en->key == AT_FDCWD)
			snprintf(w->resource, sizeof(w->resource), "%s:cwd",
			    w->syscall);
		else if (at)
			snprintf(w->resource, sizeof(w->resource),
			    "%s:fd%" PRId32, w->syscall, (int32_t)en->key);
		else	/* the path's address, as any other call's */
			snprintf(w->resource, sizeof(w->resource), "%s:0x%llx",
			    w->syscall, (unsigned long long)en->key);
	} else if (en->aux == SYS_flock || en->aux == SYS_fcntl) {
		/* fcntl(2) blocks only for a record lock (F_SETLKW,
		   F_OFD_SETLKW) */
		w->type = "filelock";
		snprintf(w->resource, sizeof(w->resource), "%s:fd%llu",
		    w->syscall, (unsigned long long)en->key);
	} else if (en->aux == SYS_sched_yield) {
		w->type = "yield";
		snprintf(w->resource, sizeof(w->resource), "sched_yield");
	} else if (sys_is_read(en->aux) || sys_is_write(en->aux)) {
		w->type = "other";
		snprintf(w->resource, sizeof(w->resource), "fd:%llu",
		    (unsigned long long)en->key);
	} else {
		w->type = "other";
		snprintf(w->resource, sizeof(w->resource), "%s:0x%llx",
		    w->syscall[0] ? w->syscall : "sys",
		    (unsigned long long)en->key);
	}
	(void)g;
}

uint32_t
diag_wait_end(const struct graph *g, uint32_t ti, uint32_t sw)
{
	const struct gthread *t = &g->th[ti];
	uint32_t end = gthread_seg_end(t, sw);

	for (uint32_t k = sw + 1; k < end; k++)
		if (t->ev[k].type == GRAPH_EV_RUN || diag_own_activity(&t->ev[k]))
			return k;
	return t->nev;
}

static int
is_uwait(const struct graph_event *e)
{
	return e->type == TT_USER && (e->sub == TU_COND_WAIT ||
	    e->sub == TU_LOCK_WAIT);
}

static int
is_udone(const struct graph_event *e)
{
	return e->type == TT_USER && (e->sub == TU_COND_DONE ||
	    e->sub == TU_LOCK_ACQUIRED);
}

/*
 * A thread that switched out stopped (switch sw): by a stop signal it
 * took just before, "signal:SIGSTOP" (SIGTSTP, SIGTTIN, SIGTTOU); by a
 * tracer, "ptrace"; else "stopped". The system call it was in, if any,
 * stays named in w->syscall.
 */
static void
describe_stop(const struct gthread *t, uint32_t sw, struct diag_wait *w)
{
	static const char *const names[] = { "SIGSTOP", "SIGTSTP",
	    "SIGTTIN", "SIGTTOU" };
	const char *what = t->ev[sw].sub & DIAG_TASK_TRACED ? "ptrace" :
	    "stopped";

	w->type = "stopped";
	for (uint32_t i = sw; i-- > gthread_seg_first(t, sw) &&
	    i + DIAG_SCAN > sw;) {
		const struct graph_event *e = &t->ev[i];
		if (e->type == TT_SWITCH || e->type == GRAPH_EV_RUN)
			break;
		if (e->type == TT_SIGNAL_DELIVER && e->key >= SIGSTOP &&
		    e->key <= SIGTTOU) {
			snprintf(w->resource, sizeof(w->resource),
			    "signal:%s", names[e->key - SIGSTOP]);
			return;
		}
	}
	snprintf(w->resource, sizeof(w->resource), "%s", what);
}

void
diag_wait_at(const struct graph *g, uint32_t ti, uint32_t sw,
    uint64_t last_ts, struct dwait *dw)
{
	const struct gthread *t = &g->th[ti];
	const struct graph_event *ev = t->ev;
	uint32_t i, lo = gthread_seg_first(t, sw), hi = gthread_seg_end(t, sw);

	memset(dw, 0, sizeof(*dw));
	dw->ti = ti;
	dw->sw = sw;
	dw->run = dw->enter = dw->exit = dw->uwait = dw->udone = GRAPH_NONE;
	dw->w.syscall = "";
	dw->w.type = "other";
	dw->w.wait_ev = sw;
	snprintf(dw->w.resource, sizeof(dw->w.resource), "cpu");
	/* where it ran again: its switch back in, or the first thing it did
	   when that switch was lost */
	i = diag_wait_end(g, ti, sw);
	if (i < t->nev)
		dw->run = i;
	for (i = sw; i-- > lo && i + DIAG_SCAN > sw;) {
		if (ev[i].type == TT_SYS_EXIT)
			break;
		if (ev[i].type == TT_SYS_ENTER) {
			dw->enter = i;
			break;
		}
	}
	uint32_t after = dw->run;
	if (dw->enter != GRAPH_NONE && after != GRAPH_NONE)
		for (i = after; i < hi && i < after + DIAG_SCAN; i++) {
			if (ev[i].type == TT_SYS_ENTER)
				break;
			if (ev[i].type == TT_SYS_EXIT) {
				dw->exit = i;
				break;
			}
		}
	/* the user-level wait around it */
	uint32_t from = dw->enter != GRAPH_NONE ? dw->enter : sw;
	for (i = from; i-- > lo && i + DIAG_SCAN > from;) {
		if (is_udone(&ev[i]))
			break;
		if (is_uwait(&ev[i])) {
			dw->uwait = i;
			break;
		}
	}
	if (dw->uwait != GRAPH_NONE && after != GRAPH_NONE)
		for (i = after; i < hi && i < after + DIAG_SCAN; i++) {
			if (is_uwait(&ev[i]))
				break;
			if (is_udone(&ev[i]) && ev[i].key == ev[dw->uwait].key) {
				dw->udone = i;
				break;
			}
		}
	if (dw->enter != GRAPH_NONE) {
		diag_describe_sys(g, &ev[dw->enter], &dw->w);
	} else if (ev[sw].flags & GRAPH_EVF_INSYS) {
		struct graph_event en = ev[sw];
		en.type = TT_SYS_ENTER;
		en.flags &= (uint16_t)~GRAPH_EVF_FDRES;
		diag_describe_sys(g, &en, &dw->w);
	} else {
		dw->w.type = "other";
		snprintf(dw->w.resource, sizeof(dw->w.resource), "kernel");
	}
	/* stopped, in a system call (the tracer attached during a sleep)
	   or out of one: what it waits for is whoever stopped it */
	if (ev[sw].sub & (DIAG_TASK_STOPPED | DIAG_TASK_TRACED))
		describe_stop(t, sw, &dw->w);
	dw->start = ev[sw].ts;
	if (dw->enter != GRAPH_NONE)
		dw->start = ev[dw->enter].ts;
	dw->end = after != GRAPH_NONE ? ev[after].ts : last_ts;
	if (dw->exit != GRAPH_NONE) {
		dw->end = ev[dw->exit].ts;
		dw->w.result = (int64_t)ev[dw->exit].key;
		dw->w.has_result = 1;
		if (ev[dw->enter].aux == SYS_futex && dw->w.result == -ETIMEDOUT)
			dw->w.timed_out = 1;
		if (is_sys(ev[dw->enter].aux, polls) && dw->w.result == 0)
			dw->w.timed_out = 1;
	}
	if (dw->uwait != GRAPH_NONE) {
		const struct graph_event *u = &ev[dw->uwait];
		uint64_t a, a2;
		graph_user_args(g, ti, dw->uwait, &a, &a2);
		if (u->sub == TU_COND_WAIT) {
			dw->w.type = "condvar";
			/* libargus writes 1 for "a timed wait" (no value) */
			dw->w.timeout_ns = a > 1000 ? a : 0;
		} else {
			dw->w.type = a == 3 ? "semaphore" : a == 0 ? "mutex" :
			    "rwlock";
		}
		snprintf(dw->w.resource, sizeof(dw->w.resource), "%s:0x%llx",
		    dw->w.type, (unsigned long long)u->key);
		dw->start = u->ts;
		if (dw->udone != GRAPH_NONE) {
			graph_user_args(g, ti, dw->udone, &a, &a2);
			dw->end = ev[dw->udone].ts;
			dw->w.result = ev[dw->udone].sub == TU_COND_DONE ?
			    (int64_t)a : (int64_t)a2;
			dw->w.has_result = 1;
			dw->w.timed_out = dw->w.result == ETIMEDOUT;
		}
	}
	if (dw->w.timed_out && dw->w.timeout_ns == 0)
		dw->w.timeout_ns = dw->end - dw->start;
}

