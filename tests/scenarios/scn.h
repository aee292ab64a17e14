/*
 * scn.h: helpers shared by the hang scenario programs (header only, so that
 * every scenario stays one C file and one binary).
 *
 * Common command line:  [-q] [--iterations N] [--hang-at K] [--delay MS]
 *   -q            print only the final summary line
 *   --iterations  number of iterations (input events), 1..100
 *   --hang-at     first hung iteration (1-based); iterations K..N hang;
 *                 by default only the last one
 *   --delay       sleep MS milliseconds before the first input event
 *                 (time for a watcher such as `argus watch` to attach)
 *
 * Output on stderr: one line per iteration, "NAME: iter I ms=T [hang]",
 * and always, last, "NAME: max_ms=T normal_max_ms=T hung=N iterations=N".
 */
#ifndef SCN_H
#define SCN_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SCN_MAX_CHILDREN 8
#define SCN_ALARM_BASE_S 10	/* + 3 s per iteration: a safety net */

struct scn_opts {
	int quiet;
	int iterations;
	int hang_at;
	int delay_ms;
};

struct scn_state {
	const char *prog;
	struct scn_opts opt;
	double max_ms;
	double normal_max_ms;
	int hung;
	pid_t children[SCN_MAX_CHILDREN];
	int nchildren;
	unsigned alarm_s;
	volatile sig_atomic_t dying;	/* the alarm fired: no more messages */
};

static struct scn_state scn;

/* One-line error and exit 1; also used in children (they exit 1 too). */
static inline void __attribute__((noreturn, format(printf, 1, 2)))
scn_die(const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	int e = errno;

	if (scn.dying)
		_exit(1);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (e)
		fprintf(stderr, "%s: %s: %s\n", scn.prog, msg, strerror(e));
	else
		fprintf(stderr, "%s: %s\n", scn.prog, msg);
	exit(1);
}

/* The same for a failure that is no system call's (errno not shown). */
#define scn_fail(...) (errno = 0, scn_die(__VA_ARGS__))

static inline void __attribute__((noreturn))
scn_usage(const char *why)
{
	fprintf(stderr, "%s: %s (usage: %s [-q] [--iterations N] "
		"[--hang-at K] [--delay MS])\n", scn.prog, why, scn.prog);
	exit(2);
}

static inline double
scn_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static inline void
scn_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Name the calling thread (the process too, when it is the main thread). */
static inline void
scn_name(const char *name)
{
	if (prctl(PR_SET_NAME, name, 0, 0, 0) != 0)
		scn_die("prctl(PR_SET_NAME, %s)", name);
}

static inline int
scn_is_hung(int iter)
{
	return iter >= scn.opt.hang_at;
}

static inline void
scn_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			scn_die("write");
		p += n;
		len -= (size_t)n;
	}
}

/* Read exactly len bytes; returns 0 at end of file before any byte, 1
 * when the buffer is full; dies on errors and on a short message. */
static inline int
scn_read_full(int fd, void *buf, size_t len)
{
	char *p = buf;
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, p + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			scn_die("read");
		if (n == 0) {
			if (got == 0)
				return 0;
			scn_fail("short message (%zu of %zu bytes)", got, len);
		}
		got += (size_t)n;
	}
	return 1;
}

/* Wait until fd is readable (the event-loop wait of a main thread). */
static inline void
scn_poll_in(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	while (poll(&p, 1, -1) < 0)
		if (errno != EINTR)
			scn_die("poll");
}

static inline void
scn_close(int *f)
{
	if (*f >= 0)
		close(*f);
	*f = -1;
}

static inline void
scn_pipe(int fds[2])
{
	if (pipe2(fds, O_CLOEXEC) != 0)
		scn_die("pipe");
}

static inline void
scn_thread(pthread_t *t, void *(*fn)(void *), void *arg)
{
	int e = pthread_create(t, NULL, fn, arg);

	if (e) {
		errno = e;
		scn_die("pthread_create");
	}
}

static inline void
scn_join(pthread_t t)
{
	int e = pthread_join(t, NULL);

	if (e) {
		errno = e;
		scn_die("pthread_join");
	}
}

/* fork; the child names itself, runs fn and exits with its status. */
static inline pid_t
scn_fork(const char *name, int (*fn)(void *), void *arg)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		scn_die("fork");
	if (pid == 0) {
		alarm(scn.alarm_s);
		scn.nchildren = 0;
		scn.prog = name;
		scn_name(name);
		_exit(fn(arg));
	}
	if (scn.nchildren < SCN_MAX_CHILDREN)
		scn.children[scn.nchildren++] = pid;
	return pid;
}

/* Reap one child; an abnormal end is an error of the whole scenario. */
static inline void
scn_reap(pid_t pid, const char *name)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			scn_die("waitpid(%s)", name);
	if (WIFSIGNALED(st))
		scn_fail("%s killed by signal %d", name, WTERMSIG(st));
	if (WEXITSTATUS(st) != 0)
		scn_fail("%s exited with status %d", name, WEXITSTATUS(st));
	for (int i = 0; i < scn.nchildren; i++)
		if (scn.children[i] == pid)
			scn.children[i] = 0;
}

/* A scenario that never ends is a bug: kill the children and fail. */
static inline void
scn_on_alarm(int sig)
{
	static const char msg[] = ": timed out, giving up\n";
	char line[64];
	size_t n = strlen(scn.prog);

	(void)sig;
	scn.dying = 1;
	if (n > sizeof(line) - sizeof(msg))
		n = sizeof(line) - sizeof(msg);
	memcpy(line, scn.prog, n);
	memcpy(line + n, msg, sizeof(msg) - 1);
	if (write(2, line, n + sizeof(msg) - 1) < 0)
		n = 0;
	for (int i = 0; i < scn.nchildren; i++)
		if (scn.children[i] > 0)
			kill(scn.children[i], SIGKILL);
	_exit(1);
}

static inline int
scn_int_arg(const char *s, int lo, int hi)
{
	char *end;
	long v;

	if (!s)
		scn_usage("missing number");
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < lo || v > hi)
		scn_usage("bad number");
	return (int)v;
}

/*
 * Parse the common options, name the main thread, arm the safety alarm and
 * ignore SIGPIPE (a peer that exits early shows as EPIPE, not a signal).
 */
static inline void
scn_init(int argc, char **argv, const char *name, int iters)
{
	struct sigaction sa = { .sa_handler = scn_on_alarm };
	int hang_set = 0;

	scn.prog = name;
	scn.opt.iterations = iters;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-q")) {
			scn.opt.quiet = 1;
		} else if (!strcmp(argv[i], "--iterations")) {
			scn.opt.iterations = scn_int_arg(argv[++i], 1, 100);
		} else if (!strcmp(argv[i], "--hang-at")) {
			scn.opt.hang_at = scn_int_arg(argv[++i], 1, 101);
			hang_set = 1;
		} else if (!strcmp(argv[i], "--delay")) {
			scn.opt.delay_ms = scn_int_arg(argv[++i], 0, 60000);
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf("usage: %s [-q] [--iterations N] [--hang-at K] "
			       "[--delay MS]\n", name);
			exit(0);
		} else {
			scn_usage("unknown option");
		}
	}
	if (!hang_set)
		scn.opt.hang_at = scn.opt.iterations;
	scn_name(name);
	sigaction(SIGALRM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	scn.alarm_s = SCN_ALARM_BASE_S + 3 * (unsigned)scn.opt.iterations +
		      (unsigned)scn.opt.delay_ms / 1000;
	alarm(scn.alarm_s);
}

static inline void
scn_report(int iter, double ms)
{
	int hung = scn_is_hung(iter);

	if (ms > scn.max_ms)
		scn.max_ms = ms;
	if (!hung && ms > scn.normal_max_ms)
		scn.normal_max_ms = ms;
	scn.hung += hung;
	if (!scn.opt.quiet)
		fprintf(stderr, "%s: iter %d ms=%.1f%s\n", scn.prog, iter, ms,
			hung ? " hang" : "");
}

/*
 * The main thread's event loop: wait in poll for a key press (an int32
 * written by the input thread) on key_r, handle it, report how long it
 * took, acknowledge on ack_w. Returns when the input side closes.
 */
static inline void
scn_key_loop(int key_r, int ack_w, void (*handle)(int32_t key))
{
	int32_t key;
	char ack = 'k';
	double t0;

	for (;;) {
		scn_poll_in(key_r);
		if (!scn_read_full(key_r, &key, sizeof(key)))
			break;
		t0 = scn_now_ms();
		handle(key);
		scn_report(key, scn_now_ms() - t0);
		scn_write_all(ack_w, &ack, 1);
	}
}

static inline void
scn_summary(void)
{
	fprintf(stderr, "%s: max_ms=%.0f normal_max_ms=%.0f hung=%d "
		"iterations=%d\n", scn.prog, scn.max_ms, scn.normal_max_ms,
		scn.hung, scn.opt.iterations);
}

#endif
