/*
 * wrap-pthread.c: RTLD_NEXT wrappers of the pthread and semaphore waits.
 *
 * No state of its own beyond the resolved next definitions (one static
 * pointer per function, filled at first use). When the switch is off a
 * wrapper is a load, a branch and a call. When on, only waits that
 * block are recorded: a lock is first tried; if it is busy the wrapper
 * writes TU_LOCK_WAIT, blocks, then TU_LOCK_ACQUIRED. A release is
 * recorded only when the lock word says some thread waits (glibc's
 * layouts), a condition signal only when the condition has waiters, so
 * uncontended code pays no system call.
 *
 * Record fields (see also trace/user-protocol.h): lock kinds key = address, arg = op
 * (INS_OP_*), arg2 = result for ACQUIRED; TU_COND_WAIT arg = relative
 * timeout ns (0 none), arg2 = mutex; TU_COND_DONE arg = result.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <time.h>

#include "instrument-local.h"

enum { INS_OP_MUTEX = 0, INS_OP_RDLOCK, INS_OP_WRLOCK, INS_OP_SEM };

INS_REAL(int, pthread_mutex_lock, (pthread_mutex_t *))
INS_REAL(int, pthread_mutex_trylock, (pthread_mutex_t *))
INS_REAL(int, pthread_mutex_timedlock, (pthread_mutex_t *,
    const struct timespec *))
INS_REAL(int, pthread_mutex_unlock, (pthread_mutex_t *))
INS_REAL(int, pthread_rwlock_rdlock, (pthread_rwlock_t *))
INS_REAL(int, pthread_rwlock_tryrdlock, (pthread_rwlock_t *))
INS_REAL(int, pthread_rwlock_wrlock, (pthread_rwlock_t *))
INS_REAL(int, pthread_rwlock_trywrlock, (pthread_rwlock_t *))
INS_REAL(int, pthread_rwlock_unlock, (pthread_rwlock_t *))
INS_REAL(int, sem_wait, (sem_t *))
INS_REAL(int, sem_trywait, (sem_t *))
INS_REAL(int, sem_timedwait, (sem_t *, const struct timespec *))
INS_REAL(int, sem_clockwait, (sem_t *, clockid_t, const struct timespec *))
INS_REAL(int, pthread_cond_clockwait, (pthread_cond_t *, pthread_mutex_t *,
    clockid_t, const struct timespec *))
INS_REAL(int, sem_post, (sem_t *))
INS_REAL(int, sched_yield, (void))

/* Condition functions are versioned in glibc: take the current ones. */
static int (*real_cond_wait)(pthread_cond_t *, pthread_mutex_t *);
static int (*real_cond_timedwait)(pthread_cond_t *, pthread_mutex_t *,
    const struct timespec *);
static int (*real_cond_signal)(pthread_cond_t *);
static int (*real_cond_broadcast)(pthread_cond_t *);

static void *
next_cond(const char *name)
{
	void *p = dlvsym(RTLD_NEXT, name, "GLIBC_2.3.2");

	return p ? p : ins_next(name);
}

/* Record the start of a blocking wait, with the stack in the main thread. */
static void
wait_begin(unsigned kind, const void *obj, uint64_t arg, uint64_t arg2)
{
	uint64_t frames[ARGUS_MARKER_MAX_FRAMES];
	unsigned n;

	ins_recheck();		/* at most once a second: the recorder left? */
	ins_emit(kind, (uintptr_t)obj, arg, arg2, NULL);
	if (ins_tid() == ins.main_tid) {
		n = ins_stack_here(frames, ARGUS_MARKER_MAX_FRAMES);
		ins_emit_stack(0, kind, frames, n);
	}
}

/* --- mutexes ----------------------------------------------------------- */

INS_EXPORT int
pthread_mutex_lock(pthread_mutex_t *m)
{
	int r;

	if (INS_LIKELY(!ins.on))
		return get_pthread_mutex_lock()(m);
	r = get_pthread_mutex_trylock()(m);
	if (r != EBUSY)
		return r;
	wait_begin(TU_LOCK_WAIT, m, INS_OP_MUTEX, 0);
	r = get_pthread_mutex_lock()(m);
	ins_emit(TU_LOCK_ACQUIRED, (uintptr_t)m, INS_OP_MUTEX, (uint64_t)r,
	    NULL);
	return r;
}

INS_EXPORT int
pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abs)
{
	int r;

	if (INS_LIKELY(!ins.on))
		return get_pthread_mutex_timedlock()(m, abs);
	r = get_pthread_mutex_trylock()(m);
	if (r != EBUSY)
		return r;
	wait_begin(TU_LOCK_WAIT, m, INS_OP_MUTEX, 0);
	r = get_pthread_mutex_timedlock()(m, abs);
	ins_emit(TU_LOCK_ACQUIRED, (uintptr_t)m, INS_OP_MUTEX, (uint64_t)r,
	    NULL);
	return r;
}

INS_EXPORT int
pthread_mutex_unlock(pthread_mutex_t *m)
{
	if (INS_LIKELY(!ins.on))
		return get_pthread_mutex_unlock()(m);
#ifdef __GLIBC__
	{
		unsigned lock = (unsigned)m->__data.__lock;

		/* 2: locked with waiters; FUTEX_WAITERS: PI/robust waiters */
		if ((lock == 2 || (lock & 0x80000000u)) &&
		    m->__data.__count <= 1)
			ins_emit(TU_LOCK_RELEASE, (uintptr_t)m, INS_OP_MUTEX, 0,
			    NULL);
	}
#else
	ins_emit(TU_LOCK_RELEASE, (uintptr_t)m, INS_OP_MUTEX, 0, NULL);
#endif
	return get_pthread_mutex_unlock()(m);
}

/* --- read-write locks --------------------------------------------------- */

static int
rw_lock(pthread_rwlock_t *l, int (*trylock)(pthread_rwlock_t *),
    int (*lock)(pthread_rwlock_t *), unsigned op)
{
	int r = trylock(l);

	if (r != EBUSY)
		return r;
	wait_begin(TU_LOCK_WAIT, l, op, 0);
	r = lock(l);
	ins_emit(TU_LOCK_ACQUIRED, (uintptr_t)l, op, (uint64_t)r, NULL);
	return r;
}

INS_EXPORT int
pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
	if (INS_LIKELY(!ins.on))
		return get_pthread_rwlock_rdlock()(l);
	return rw_lock(l, get_pthread_rwlock_tryrdlock(),
	    get_pthread_rwlock_rdlock(), INS_OP_RDLOCK);
}

INS_EXPORT int
pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
	if (INS_LIKELY(!ins.on))
		return get_pthread_rwlock_wrlock()(l);
	return rw_lock(l, get_pthread_rwlock_trywrlock(),
	    get_pthread_rwlock_wrlock(), INS_OP_WRLOCK);
}

INS_EXPORT int
pthread_rwlock_unlock(pthread_rwlock_t *l)
{
	if (INS_LIKELY(!ins.on))
		return get_pthread_rwlock_unlock()(l);
#ifdef __GLIBC__
	/* readers waiting (bit 2) or a writer waiting on the futexes */
	if ((l->__data.__readers & 4) || l->__data.__writers_futex > 1 ||
	    l->__data.__wrphase_futex > 1)
		ins_emit(TU_LOCK_RELEASE, (uintptr_t)l, INS_OP_WRLOCK, 0,
		    NULL);
#else
	ins_emit(TU_LOCK_RELEASE, (uintptr_t)l, INS_OP_WRLOCK, 0, NULL);
#endif
	return get_pthread_rwlock_unlock()(l);
}

/* --- condition variables ------------------------------------------------- */

static uint64_t
rel_timeout(const struct timespec *abs, clockid_t clock)
{
	struct timespec now;
	int64_t ns;

	if (!abs)
		return 0;
	clock_gettime(clock, &now);
	ns = (int64_t)(abs->tv_sec - now.tv_sec) * 1000000000 +
	    (abs->tv_nsec - now.tv_nsec);
	return ns > 0 ? (uint64_t)ns : 1;
}

/* The clock of a condition (glibc keeps it in bit 1 of __wrefs). */
static clockid_t
cond_clock(pthread_cond_t *c)
{
#ifdef __GLIBC__
	return (__atomic_load_n(&c->__data.__wrefs, __ATOMIC_RELAXED) & 2) ?
	    CLOCK_MONOTONIC : CLOCK_REALTIME;
#else
	(void)c;
	return CLOCK_REALTIME;
#endif
}

INS_EXPORT int
pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	int r;

	if (INS_UNLIKELY(!real_cond_wait))
		real_cond_wait = next_cond("pthread_cond_wait");
	if (INS_LIKELY(!ins.on))
		return real_cond_wait(c, m);
	wait_begin(TU_COND_WAIT, c, 0, (uintptr_t)m);
	r = real_cond_wait(c, m);
	ins_emit(TU_COND_DONE, (uintptr_t)c, (uint64_t)r, (uintptr_t)m, NULL);
	return r;
}

INS_EXPORT int
pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
    const struct timespec *abs)
{
	int r;

	if (INS_UNLIKELY(!real_cond_timedwait))
		real_cond_timedwait = next_cond("pthread_cond_timedwait");
	if (INS_LIKELY(!ins.on))
		return real_cond_timedwait(c, m, abs);
	wait_begin(TU_COND_WAIT, c, rel_timeout(abs, cond_clock(c)), (uintptr_t)m);
	r = real_cond_timedwait(c, m, abs);
	ins_emit(TU_COND_DONE, (uintptr_t)c, (uint64_t)r, (uintptr_t)m, NULL);
	return r;
}

INS_EXPORT int
pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
    const struct timespec *abs)
{
	int r;

	if (INS_LIKELY(!ins.on))
		return get_pthread_cond_clockwait()(c, m, clock, abs);
	wait_begin(TU_COND_WAIT, c, rel_timeout(abs, clock), (uintptr_t)m);
	r = get_pthread_cond_clockwait()(c, m, clock, abs);
	ins_emit(TU_COND_DONE, (uintptr_t)c, (uint64_t)r, (uintptr_t)m, NULL);
	return r;
}

/* Whether a condition has waiters (glibc keeps their count in __wrefs). */
static int
cond_has_waiters(pthread_cond_t *c)
{
#ifdef __GLIBC__
	return (__atomic_load_n(&c->__data.__wrefs, __ATOMIC_RELAXED) >> 3) != 0;
#else
	(void)c;
	return 1;
#endif
}

INS_EXPORT int
pthread_cond_signal(pthread_cond_t *c)
{
	if (INS_UNLIKELY(!real_cond_signal))
		real_cond_signal = next_cond("pthread_cond_signal");
	if (INS_UNLIKELY(ins.on) && cond_has_waiters(c))
		ins_emit(TU_COND_SIGNAL, (uintptr_t)c, 0, 0, NULL);
	return real_cond_signal(c);
}

INS_EXPORT int
pthread_cond_broadcast(pthread_cond_t *c)
{
	if (INS_UNLIKELY(!real_cond_broadcast))
		real_cond_broadcast = next_cond("pthread_cond_broadcast");
	if (INS_UNLIKELY(ins.on) && cond_has_waiters(c))
		ins_emit(TU_COND_SIGNAL, (uintptr_t)c, 1, 0, NULL);
	return real_cond_broadcast(c);
}

/* --- semaphores ---------------------------------------------------------- */

INS_EXPORT int
sem_wait(sem_t *s)
{
	int r;

	if (INS_LIKELY(!ins.on))
		return get_sem_wait()(s);
	if (get_sem_trywait()(s) == 0)
		return 0;
	wait_begin(TU_LOCK_WAIT, s, INS_OP_SEM, 0);
	r = get_sem_wait()(s);
	ins_emit(TU_LOCK_ACQUIRED, (uintptr_t)s, INS_OP_SEM,
	    (uint64_t)(r == 0 ? 0 : errno), NULL);
	return r;
}

INS_EXPORT int
sem_timedwait(sem_t *s, const struct timespec *abs)
{
	int r;

	if (INS_LIKELY(!ins.on))
		return get_sem_timedwait()(s, abs);
	if (get_sem_trywait()(s) == 0)
		return 0;
	wait_begin(TU_LOCK_WAIT, s, INS_OP_SEM, rel_timeout(abs, CLOCK_REALTIME));
	r = get_sem_timedwait()(s, abs);
	ins_emit(TU_LOCK_ACQUIRED, (uintptr_t)s, INS_OP_SEM,
	    (uint64_t)(r == 0 ? 0 : errno), NULL);
	return r;
}

INS_EXPORT int
sem_clockwait(sem_t *s, clockid_t clock, const struct timespec *abs)
{
	int r;

	if (INS_LIKELY(!ins.on))
		return get_sem_clockwait()(s, clock, abs);
	if (get_sem_trywait()(s) == 0)
		return 0;
	wait_begin(TU_LOCK_WAIT, s, INS_OP_SEM, rel_timeout(abs, clock));
	r = get_sem_clockwait()(s, clock, abs);
	ins_emit(TU_LOCK_ACQUIRED, (uintptr_t)s, INS_OP_SEM,
	    (uint64_t)(r == 0 ? 0 : errno), NULL);
	return r;
}

INS_EXPORT int
sem_post(sem_t *s)
{
	if (INS_UNLIKELY(ins.on)) {
		uint64_t data;

		/* glibc: waiters counted in the high half of the first word */
		__builtin_memcpy(&data, s, sizeof(data));
		if (data >> 32)
			ins_emit(TU_LOCK_RELEASE, (uintptr_t)s, INS_OP_SEM, 0,
			    NULL);
	}
	return get_sem_post()(s);
}

/* --- sched_yield --------------------------------------------------------- */

static __thread uint64_t yield_last_ns __attribute__((tls_model("initial-exec")));
static __thread uint64_t yield_count __attribute__((tls_model("initial-exec")));

/*
 * Yields are coalesced: at most one TU_MARK "sched_yield" per thread and
 * millisecond, arg = yields since the previous record, so a yield loop is
 * visible without a record per call.
 */
INS_EXPORT int
sched_yield(void)
{
	if (INS_UNLIKELY(ins.on)) {
		uint64_t now = ins_mono_ns();

		yield_count++;
		if (now - yield_last_ns >= 1000000) {
			ins_emit(TU_MARK, 0, yield_count, 0, "sched_yield");
			yield_count = 0;
			yield_last_ns = now;
		}
	}
	return get_sched_yield()();
}
