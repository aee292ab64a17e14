/*
 * core.c: libargus state, the on/off switch, record writing, stack walks
 * and the mapping records.
 *
 * The switch is one int (ins.on) read by every wrapper: when it is 0 a
 * wrapper costs a load and a branch. The marker descriptor ins.fd is
 * written only inside a section of ins.mk_guard, and every other
 * descriptor used only inside one of ins.tmp_guard (wrap-fd.c), so a
 * program closing them (close_range, closefrom, dup2...) waits for
 * those uses and the library lets go of the number first. Switching
 * off closes the marker once its writers are done, which releases the
 * recorder's instance (an open trace_marker_raw pins an instance).
 * Switching on later, and off (the recorder's instance's tracing_on
 * going to 0, or the path file disappearing), and a marker's number
 * that no longer holds the marker (a program that closed it behind the
 * wrappers) are noticed by ins_recheck(), run at most once a second
 * (at once after the marker was let go) from the watchdog (once a
 * main-thread loop wait started it), main-thread loop waits and
 * recorded waits.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/procmaps.h"
#include "instrument-local.h"

struct ins_state ins = { .fd = -1, .hang_ns = 2000000000ull };
__thread struct ins_thread ins_self __attribute__((tls_model("initial-exec")));

static char cur_path[256];
static char env_path[256];		/* ARGUS_MARKER */
static uintptr_t self_lo, self_hi;	/* libargus's own code */
static int recheck_busy;

void *
ins_next(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

pid_t
ins_tid(void)
{
	if (INS_UNLIKELY(ins_self.tid == 0))
		ins_self.tid = (pid_t)syscall(SYS_gettid);
	return ins_self.tid;
}

uint64_t
ins_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t
ins_boot_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void
write_record(unsigned kind, pid_t proxy, uint64_t key, uint64_t arg,
    uint64_t arg2, const void *payload, size_t len)
{
	char buf[sizeof(struct argus_marker_hdr) + 8 +
	    ARGUS_MARKER_MAX_FRAMES * 8];
	struct argus_marker_hdr *h = (struct argus_marker_hdr *)buf;
	size_t off = sizeof(*h);
	int saved = errno;

	if (proxy) {
		uint64_t t = (uint32_t)proxy;

		memcpy(buf + off, &t, 8);
		off += 8;
		kind |= ARGUS_MK_PROXY;
	}
	if (len > sizeof(buf) - off)
		len = sizeof(buf) - off;
	if (len)
		memcpy(buf + off, payload, len);
	off += len;
	h->id = ARGUS_MARKER_ID;
	h->kind = (uint16_t)kind;
	h->len = (uint16_t)(off - sizeof(*h));
	h->key = key;
	h->arg = arg;
	h->arg2 = arg2;
	/* a record lost is not an error of the app: nothing to do, but for
	   a number closed behind the wrappers (let go of, not written again;
	   a marker whose buffer is off fails with EBADF too, but is open);
	   syscall(): write() is a cancellation point, a section must end */
	if (ins_fd_enter(&ins.mk_guard)) {
		int fd = __atomic_load_n(&ins.fd, __ATOMIC_ACQUIRE);

		if (fd >= 0 && syscall(SYS_write, fd, buf, off) < 0 &&
		    errno == EBADF && fcntl(fd, F_GETFD) < 0)
			ins_fd_lost(fd);
		ins_fd_leave(&ins.mk_guard);
	}
	errno = saved;
}

void
ins_emit(unsigned kind, uint64_t key, uint64_t arg, uint64_t arg2,
    const char *name)
{
	if (!ins.on)
		return;
	write_record(kind, 0, key, arg, arg2, name,
	    name ? strnlen(name, ARGUS_MARKER_MAX_NAME) : 0);
}

void
ins_emit_proxy(pid_t proxy_tid, unsigned kind, uint64_t key, uint64_t arg,
    uint64_t arg2, const char *name, size_t namelen)
{
	if (!ins.on)
		return;
	if (namelen > ARGUS_MARKER_MAX_NAME)
		namelen = ARGUS_MARKER_MAX_NAME;
	write_record(kind, proxy_tid, key, arg, arg2, name, namelen);
}

void
ins_emit_stack(pid_t proxy_tid, unsigned kind, const uint64_t *frames,
    unsigned n)
{
	if (!ins.on || n == 0)
		return;
	if (__atomic_exchange_n(&ins.maps_due, 0, __ATOMIC_ACQ_REL)) {
		ins_record_maps();
		if (ins.maps_due)
			return;	/* no stack before the mappings */
	}
	if (n > ARGUS_MARKER_MAX_FRAMES)
		n = ARGUS_MARKER_MAX_FRAMES;
	write_record(ARGUS_MK_STACK, proxy_tid, kind, n, 0, frames,
	    (size_t)n * 8);
}

unsigned
ins_walk_from(uintptr_t pc, uintptr_t sp, uintptr_t fp, uintptr_t hi,
    uint64_t *frames, unsigned max)
{
	unsigned n = 0;
	uintptr_t a, end;

	if (pc && n < max)
		frames[n++] = pc;
	/*
	 * Functions without frames (a libc wrapper, a leaf) keep their
	 * callers' return addresses between sp and the first frame: take up
	 * to four code addresses from there.
	 */
	sp &= ~(uintptr_t)7;
	end = fp > sp && fp < hi ? fp : sp + 256;
	if (end > sp + 4096)
		end = sp + 4096;
	if (end > hi)
		end = hi;
	for (a = sp; a < end && n < max && n < 5; a += 8) {
		uintptr_t v = *(uintptr_t *)a;

		if (ins_is_text(v) && !(v >= self_lo && v < self_hi))
			frames[n++] = v;
	}
	return n + ins_walk_fp(0, fp, sp, hi, frames + n, max - n);
}

unsigned
ins_walk_fp(uintptr_t pc, uintptr_t fp, uintptr_t lo, uintptr_t hi,
    uint64_t *frames, unsigned max)
{
	unsigned n = 0;

	if (pc && n < max)
		frames[n++] = pc;
	while (n < max) {
		uintptr_t next, ret;

		if (fp < lo || fp > hi - 16 || (fp & 7))
			break;
		next = ((uintptr_t *)fp)[0];
		ret = ((uintptr_t *)fp)[1];
		if (ret < 4096)
			break;
		frames[n++] = ret;
		if (next <= fp)
			break;
		fp = next;
	}
	return n;
}

__attribute__((noinline)) unsigned
ins_stack_here(uint64_t *frames, unsigned max)
{
	uintptr_t fp = (uintptr_t)__builtin_frame_address(0);

	if (ins_tid() != ins.main_tid || !ins.main_stack_hi)
		return 0;
	unsigned n = ins_walk_fp(0, fp, fp, ins.main_stack_hi, frames, max);
	unsigned skip = 0;

	/* drop the frames inside libargus (the wrappers) */
	while (skip < n && frames[skip] >= self_lo && frames[skip] < self_hi)
		skip++;
	memmove(frames, frames + skip, (n - skip) * sizeof(*frames));
	return n - skip;
}

/* --- /proc/self/maps without allocation (common/procmaps.h) ----------- */

/* Executable ranges, for the watchdog's stack scan (refreshed on switch). */
#define INS_MAX_TEXT 128
static struct { uintptr_t lo, hi; } text[INS_MAX_TEXT];
static unsigned ntext, ntext_new;

static void
stack_line(const struct procmap *m)
{
	if (m->pathlen == 7 && memcmp(m->path, "[stack]", 7) == 0) {
		ins.main_stack_lo = m->start;
		ins.main_stack_hi = m->end;
	}
	if (m->perms[2] == 'x' && (uintptr_t)ins_init >= m->start &&
	    (uintptr_t)ins_init < m->end) {
		self_lo = m->start;
		self_hi = m->end;
	}
	if (m->perms[2] == 'x' && ntext_new < INS_MAX_TEXT) {
		text[ntext_new].lo = m->start;
		text[ntext_new].hi = m->end;
		ntext_new++;
	}
}

/* Refresh the stack bounds and text ranges; one thread at a time (a
   second caller meanwhile returns: the table is being refreshed). */
static int scanning;
static procmap_fn scan_also;	/* under scanning */

static int
scan_line(void *ctx, const struct procmap *m)
{
	stack_line(m);
	return scan_also ? scan_also(ctx, m) : 0;
}

/* One read of the mappings: refresh the stack bounds and text ranges,
   and hand every line to also (may be NULL) too. Returns 0, or -1 when
   the program was closing descriptors (nothing read). */
static int
scan_maps_and(procmap_fn also)
{
	int cancel;

	if (!ins_fd_enter(&ins.tmp_guard))
		return -1;
	/* open() and read() are cancellation points: a section must end */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	if (__atomic_exchange_n(&scanning, 1, __ATOMIC_ACQUIRE)) {
		if (also)	/* being refreshed: only the extra work */
			(void)procmap_each(0, also, NULL);
	} else {
		ntext_new = 0;
		scan_also = also;
		(void)procmap_each(0, scan_line, NULL);
		ntext = ntext_new;
		__atomic_store_n(&scanning, 0, __ATOMIC_RELEASE);
	}
	pthread_setcancelstate(cancel, NULL);
	ins_fd_leave(&ins.tmp_guard);
	return 0;
}

static void
scan_maps(void)
{
	(void)scan_maps_and(NULL);
}

int
ins_is_text(uintptr_t pc)
{
	for (unsigned i = 0; i < ntext; i++)
		if (pc >= text[i].lo && pc < text[i].hi)
			return 1;
	return 0;
}

static int
mmap_line(void *ctx, const struct procmap *m)
{
	(void)ctx;
	if (m->perms[2] != 'x' || m->pathlen == 0)
		return 0;
	write_record(ARGUS_MK_MMAP, 0, m->start, m->end - m->start, m->off,
	    m->path, m->pathlen > 240 ? 240 : m->pathlen);
	return 0;
}

void
ins_record_maps(void)
{
	if (ins.on && scan_maps_and(mmap_line) != 0)
		ins.maps_due = 1;	/* not now: before the next stack */
}

/* --- switch ------------------------------------------------------------ */

/* Both run inside a section of ins.tmp_guard, by one thread at a time
   (ins_init, or ins_recheck under recheck_busy). */
int
ins_switch_on(const char *path)
{
	dev_t dev, old_dev = ins.fd_dev;
	ino_t ino, old_ino = ins.fd_ino;
	int fd = ins_fd_open_marker(path, &dev, &ino), old;

	if (fd < 0)
		return -1;
	ins.fd_dev = dev;
	ins.fd_ino = ino;
	old = __atomic_exchange_n(&ins.fd, fd, __ATOMIC_ACQ_REL);
	if (old >= 0)		/* another recorder's marker */
		ins_fd_retire(old, old_dev, old_ino);
	strncpy(cur_path, path, sizeof(cur_path) - 1);
	__atomic_store_n(&ins.maps_due, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&ins.on, 1, __ATOMIC_RELEASE);
	scan_maps();
	return 0;
}

void
ins_switch_off(void)
{
	int fd;

	__atomic_store_n(&ins.on, 0, __ATOMIC_RELEASE);
	cur_path[0] = 0;
	fd = __atomic_exchange_n(&ins.fd, -1, __ATOMIC_ACQ_REL);
	if (fd >= 0)
		ins_fd_retire(fd, ins.fd_dev, ins.fd_ino);
}

/* Read the recorder's path file into buf; returns 0 or -1 if absent.
   This and instance_on() run inside a section of ins.tmp_guard. */
static int
read_path_file(char *buf, size_t size)
{
	int fd = open(ARGUS_MARKER_PATH_FILE, O_RDONLY | O_NONBLOCK |
	    O_CLOEXEC);
	ssize_t r;

	if (fd < 0)
		return -1;
	r = read(fd, buf, size - 1);
	close(fd);
	if (r <= 0)
		return -1;
	buf[r] = 0;
	while (r > 0 && (buf[r - 1] == '\n' || buf[r - 1] == ' '))
		buf[--r] = 0;
	return r > 0 ? 0 : -1;
}

/*
 * The recorder's instance is pinned by every open marker descriptor (the
 * kernel refuses to remove it), so libargus lets go when the instance's
 * tracing_on reads 0: -1 unknown (no such file), 0 off, 1 on.
 */
static int
instance_on(const char *marker)
{
	char path[300], c = 0;
	const char *slash = strrchr(marker, '/');
	int fd;

	if (!slash || (size_t)(slash - marker) + 12 > sizeof(path))
		return -1;
	memcpy(path, marker, (size_t)(slash - marker));
	strcpy(path + (slash - marker), "/tracing_on");
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (read(fd, &c, 1) != 1)
		c = 0;
	close(fd);
	return c == '0' ? 0 : 1;
}

void
ins_recheck(void)
{
	char path[256];
	uint64_t now = ins_mono_ns();
	int cancel, fd;

	if (now < ins.next_check_ns)
		return;
	if (__atomic_exchange_n(&recheck_busy, 1, __ATOMIC_ACQUIRE))
		return;
	if (!ins_fd_enter(&ins.tmp_guard)) {
		/* the program is closing descriptors: at the next call */
		__atomic_store_n(&recheck_busy, 0, __ATOMIC_RELEASE);
		return;
	}
	/* open() and read() are cancellation points: a section must end */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	ins.next_check_ns = now + 1000000000ull;
	/* the marker's number holds another file: closed behind the
	   wrappers and taken again by the program, which keeps it */
	fd = __atomic_load_n(&ins.fd, __ATOMIC_ACQUIRE);
	if (fd >= 0 && !ins_fd_is(fd, ins.fd_dev, ins.fd_ino))
		ins_fd_lost(fd);
	if (ins.from_env) {
		snprintf(path, sizeof(path), "%s", env_path);
	} else if (read_path_file(path, sizeof(path)) != 0) {
		if (ins.on)
			ins_switch_off();
		goto out;
	}
	if (instance_on(path) == 0) {
		if (ins.on)
			ins_switch_off();
	} else if (!ins.on || strcmp(path, cur_path) != 0) {
		ins_switch_on(path);
	}
out:
	pthread_setcancelstate(cancel, NULL);
	ins_fd_leave(&ins.tmp_guard);
	__atomic_store_n(&recheck_busy, 0, __ATOMIC_RELEASE);
}

/* --- life cycle ---------------------------------------------------------- */

static void
atfork_child(void)
{
	ins_self.tid = 0;
	ins_self.busy = 0;
	ins_fd_atfork_child();
	ins.pid = getpid();
	/* the forking thread is the child's only, hence main, thread */
	ins.main_tid = ins_tid();
	ins.main_stack_lo = ins.main_stack_hi = 0;
	/* the forking thread's stack bounds (reading the mappings is cheap;
	   writing them is not: they are written again, under the child's
	   pid, only before its first stack, if it ever writes one) */
	scanning = 0;		/* a parent's thread may have been scanning */
	scan_maps();
	recheck_busy = 0;
	ins_watchdog_atfork_child();
	ins.maps_due = 1;
}

static int inited;

void
ins_init(void)
{
	const char *e;
	char path[256];

	if (__atomic_exchange_n(&inited, 1, __ATOMIC_ACQ_REL))
		return;
	ins.pid = getpid();
	ins.main_tid = ins.pid;
	scan_maps();
	{
		uint64_t ms;

		/* 1 ms to a day; anything else keeps the default */
		if (ins_env_u64("ARGUS_HANG_MS", 1, 86400000, &ms) == 0)
			ins.hang_ns = ms * 1000000ull;
	}
	pthread_atfork(NULL, NULL, atfork_child);
	e = getenv("ARGUS_MARKER");
	if (e && *e) {
		ins.from_env = 1;
		snprintf(env_path, sizeof(env_path), "%s", e);
	}
	ins.next_check_ns = ins_mono_ns() + 1000000000ull;
	if (ins_fd_enter(&ins.tmp_guard)) {
		if (ins.from_env) {
			if (instance_on(e) != 0)
				ins_switch_on(e);
		} else if (read_path_file(path, sizeof(path)) == 0 &&
		    instance_on(path) != 0) {
			ins_switch_on(path);
		}
		ins_fd_leave(&ins.tmp_guard);
	} else {
		ins.next_check_ns = 0;	/* at the first recheck */
	}
	/* no watchdog thread yet: it starts at the main thread's first loop
	   wait, the first hang it can see. A second thread from the start
	   would make a program that changes its ids abort when it changes
	   its capabilities on its own thread first (setpriv(1): setresuid,
	   capset, setresgid, which glibc makes every thread do and the
	   watchdog, without CAP_SETGID then, fails) */
}

__attribute__((constructor)) static void
ins_ctor(void)
{
	ins_init();
}
