/*
 * rec-known.c: a program with known behaviour for the recorder's tests.
 *
 * Each phase prints one line naming the threads involved, so the test can
 * count their events in the trace:
 *   condvar A B N    thread A wakes thread B through a condition variable
 *                    N times (B is asleep each time: A waits 3 ms first)
 *   pipe P C N       process P sends one byte to C over a pipe (fds 100 ->
 *                    101... see below) and C answers, N round trips
 *   unix P C N       the same over a unix socket pair with send/recv
 *   sleep T MS       thread T sleeps MS milliseconds once
 *   marker T N       thread T writes N marks and one stack record into
 *                    $ARGUS_MARKER (skipped when unset), then one proxy
 *                    mark "rec-proxy" and a proxy stack for the made-up
 *                    thread REC_PROXY_TID, and one mapping record
 *                    (REC_MMAP_*)
 * Descriptors: pipe P->C write 101 read 100, C->P write 103 read 102;
 * unix socket P end 104, C end 105.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "trace/user-protocol.h"
#include "trace/trace.h"

/* Shared with tests/unit/test-record.c. */
#define REC_PROXY_TID 0x12345u		/* the payload has 0xdead in the high bits */
#define REC_MMAP_START 0x7000000ull
#define REC_MMAP_LEN 0x2000ull
#define REC_MMAP_OFF 0x1000ull
#define REC_MMAP_PATH "/rec-known-mmap"

/*
 * The recorder reads descriptor identities from /proc shortly after the
 * fact, so the children keep theirs open a little after the last use.
 */
#define LINGER_MS 400

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int turn, nrounds;
static volatile pid_t b_tid;

static pid_t
gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static void
msleep(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static void *
thread_b(void *arg)
{
	int seen = 0;

	(void)arg;
	/* named at once: the rename may be read before the creation */
	prctl(PR_SET_NAME, "rk-b", 0, 0, 0);
	b_tid = gettid_();
	pthread_mutex_lock(&mu);
	while (seen < nrounds) {
		while (turn == seen)
			pthread_cond_wait(&cv, &mu);
		seen = turn;
	}
	pthread_mutex_unlock(&mu);
	return NULL;
}

/*
 * Wait until thread tid (of any process) sleeps, state S in /proc, at
 * most 5 s: a signal then always wakes it, however loaded the machine,
 * and its call blocks for sure. A recorder of blocking calls sees a
 * call's fd only when the call blocks, and on one CPU a wake-up may
 * preempt its waker, so that no call of a ping-pong ever blocks.
 */
static void
wait_sleeping(pid_t tid)
{
	char path[64], buf[256];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)tid);
	for (int i = 0; i < 5000; i++) {
		FILE *f = fopen(path, "re");
		char *p = NULL;

		if (f != NULL) {
			if (fgets(buf, sizeof(buf), f) != NULL)
				p = strrchr(buf, ')');
			fclose(f);
		}
		if (p == NULL || (p[1] == ' ' && p[2] == 'S'))
			return;
		msleep(1);
	}
}

static void
phase_condvar(int n)
{
	pthread_t b;

	nrounds = n;
	pthread_create(&b, NULL, thread_b, NULL);
	while (b_tid == 0)
		msleep(1);
	for (int i = 0; i < n; i++) {
		msleep(1);
		wait_sleeping(b_tid);	/* B is back in its wait */
		pthread_mutex_lock(&mu);
		turn++;
		pthread_mutex_unlock(&mu);
		pthread_cond_signal(&cv);
	}
	pthread_join(b, NULL);
	printf("condvar %d %d %d\n", (int)gettid_(), (int)b_tid, n);
}

static void
xread(int fd, char *c)
{
	while (read(fd, c, 1) != 1)
		if (errno != EINTR)
			exit(3);
}

static void
xwrite(int fd, const char *c)
{
	while (write(fd, c, 1) != 1)
		if (errno != EINTR)
			exit(3);
}

static void
phase_pipe(int n)
{
	int a[2], b[2];
	pid_t c;
	char ch = 'x';

	if (pipe(a) || pipe(b))
		exit(2);
	dup2(a[0], 100), dup2(a[1], 101), dup2(b[0], 102), dup2(b[1], 103);
	close(a[0]), close(a[1]), close(b[0]), close(b[1]);
	fflush(stdout);
	c = fork();
	if (c == 0) {
		close(101), close(102);
		for (int i = 0; i < n; i++) {
			xread(100, &ch);
			xwrite(103, &ch);
		}
		msleep(LINGER_MS);
		_exit(0);
	}
	close(100), close(103);
	for (int i = 0; i < n; i++) {
		xwrite(101, &ch);
		xread(102, &ch);
	}
	waitpid(c, NULL, 0);
	close(101), close(102);
	printf("pipe %d %d %d\n", (int)getpid(), (int)c, n);
}

static void
phase_unix(int n)
{
	int sv[2];
	pid_t c;
	char ch = 'u';

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		exit(2);
	dup2(sv[0], 104), dup2(sv[1], 105);
	close(sv[0]), close(sv[1]);
	fflush(stdout);
	c = fork();
	if (c == 0) {
		close(104);
		for (int i = 0; i < n; i++) {
			if (recv(105, &ch, 1, 0) != 1)
				_exit(3);
			if (i == 0)
				wait_sleeping(getppid());
			if (send(105, &ch, 1, 0) != 1)
				_exit(3);
		}
		msleep(LINGER_MS);
		_exit(0);
	}
	close(105);
	wait_sleeping(c);	/* in its first recv */
	for (int i = 0; i < n; i++) {
		if (send(104, &ch, 1, 0) != 1 || recv(104, &ch, 1, 0) != 1)
			exit(3);
	}
	waitpid(c, NULL, 0);
	close(104);
	printf("unix %d %d %d\n", (int)getpid(), (int)c, n);
}

static void
phase_marker(int n)
{
	const char *path = getenv("ARGUS_MARKER");
	struct {
		struct argus_marker_hdr h;
		char payload[ARGUS_MARKER_MAX_FRAMES * 8];
	} rec;
	uint64_t frames[3] = { 0x401000, 0x402000, 0x403000 };
	int fd;

	if (path == NULL || (fd = open(path, O_WRONLY | O_CLOEXEC)) < 0) {
		printf("marker 0 0\n");
		return;
	}
	for (int i = 0; i < n; i++) {
		memset(&rec, 0, sizeof(rec));
		rec.h.id = ARGUS_MARKER_ID;
		rec.h.kind = TU_MARK;
		rec.h.len = 8;
		rec.h.key = (uint64_t)i;
		rec.h.arg = 7;
		memcpy(rec.payload, "rec-test", 8);
		if (write(fd, &rec, sizeof(rec.h) + rec.h.len) < 0)
			exit(4);
	}
	memset(&rec, 0, sizeof(rec));
	rec.h.id = ARGUS_MARKER_ID;
	rec.h.kind = ARGUS_MK_STACK;
	rec.h.len = sizeof(frames);
	rec.h.key = TU_MARK;
	memcpy(rec.payload, frames, sizeof(frames));
	if (write(fd, &rec, sizeof(rec.h) + rec.h.len) < 0)
		exit(4);

	/* About another thread: its tid first in the payload. */
	uint64_t who = 0xdead00000000ull | REC_PROXY_TID;

	memset(&rec, 0, sizeof(rec));
	rec.h.id = ARGUS_MARKER_ID;
	rec.h.kind = TU_MARK | ARGUS_MK_PROXY;
	rec.h.len = 8 + 9;
	rec.h.key = 42;
	memcpy(rec.payload, &who, 8);
	memcpy(rec.payload + 8, "rec-proxy", 9);
	if (write(fd, &rec, sizeof(rec.h) + rec.h.len) < 0)
		exit(4);
	memset(&rec, 0, sizeof(rec));
	rec.h.id = ARGUS_MARKER_ID;
	rec.h.kind = ARGUS_MK_STACK | ARGUS_MK_PROXY;
	rec.h.len = 8 + sizeof(frames);
	rec.h.key = TU_MARK;
	memcpy(rec.payload, &who, 8);
	memcpy(rec.payload + 8, frames, sizeof(frames));
	if (write(fd, &rec, sizeof(rec.h) + rec.h.len) < 0)
		exit(4);
	memset(&rec, 0, sizeof(rec));
	rec.h.id = ARGUS_MARKER_ID;
	rec.h.kind = ARGUS_MK_MMAP;
	rec.h.len = sizeof(REC_MMAP_PATH) - 1;
	rec.h.key = REC_MMAP_START;
	rec.h.arg = REC_MMAP_LEN;
	rec.h.arg2 = REC_MMAP_OFF;
	memcpy(rec.payload, REC_MMAP_PATH, rec.h.len);
	if (write(fd, &rec, sizeof(rec.h) + rec.h.len) < 0)
		exit(4);
	close(fd);
	printf("marker %d %d\n", (int)gettid_(), n);
}

int
main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20;

	setvbuf(stdout, NULL, _IOLBF, 0);
	phase_condvar(n);
	phase_pipe(n);
	phase_unix(n);
	{
		pid_t t = gettid_();

		msleep(50);
		printf("sleep %d 50\n", (int)t);
	}
	phase_marker(n);
	msleep(LINGER_MS);	/* maps are read when the stack is decoded */
	return 0;
}
