/*
 * test-record.c: the flight recorder against the real kernel (root).
 *
 * Each test runs the argus binary (found next to this test runner's build
 * directory, or $ARGUS) on tests/progs/rec-known, whose threads do a known
 * number of wake-ups and messages, and reads the trace back with the
 * trace_reader API, comparing exact counts per thread.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/unit/need-tracing.h"
#include "trace/trace.h"

#define N 20

static char bdir[PATH_MAX];

/* Build directory of this runner: .../B/tests/unit/run -> .../B */
static const char *
build_dir(void)
{
	ssize_t n;

	if (bdir[0])
		return bdir;
	n = readlink("/proc/self/exe", bdir, sizeof(bdir) - 1);
	cr_assert(n > 0);
	bdir[n] = '\0';
	for (int i = 0; i < 3; i++)
		*strrchr(bdir, '/') = '\0';
	return bdir;
}

static char *
argus_bin(void)
{
	static char p[PATH_MAX + 16];
	const char *env = getenv("ARGUS");

	if (env && access(env, X_OK) == 0) {
		snprintf(p, sizeof(p), "%s", env);
		return p;
	}
	snprintf(p, sizeof(p), "%s/argus", build_dir());
	if (access(p, X_OK) == 0)
		return p;
	snprintf(p, sizeof(p), "%s/../argus", build_dir());
	return p;
}

static char *
prog(void)
{
	static char p[PATH_MAX + 32];

	snprintf(p, sizeof(p), "%s/tests/progs/rec-known", build_dir());
	return p;
}

/*
 * The record tests run one at a time (criterion runs tests in parallel):
 * the rotation test's load would otherwise overrun the kernel buffers of
 * the exact-count test. The lock is held until the test process exits.
 */
static void
serialize(void)
{
	int fd = open("/tmp/argus-record-tests.lock", O_RDWR | O_CREAT |
	    O_CLOEXEC, 0600);

	cr_assert(fd >= 0);
	cr_assert_eq(flock(fd, LOCK_EX), 0);
}

static int
rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(p);
}

static void
rmtree(const char *dir)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static char *
tmpdir(void)
{
	char t[] = "/tmp/argus-rec-XXXXXX";
	char *d = mkdtemp(t);

	cr_assert(d != NULL);
	return strdup(d);
}

/* Start argv with stdout to out (or inherited); returns the pid. */
static pid_t
spawn(char *const argv[], const char *out)
{
	pid_t pid = fork();

	cr_assert(pid >= 0);
	if (pid == 0) {
		if (out) {
			int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);

			dup2(fd, 1);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

static int
wait_status(pid_t pid)
{
	int ws;

	cr_assert(waitpid(pid, &ws, 0) == pid);
	return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

static int
instance_exists(pid_t pid)
{
	char p[128];
	struct stat st;

	snprintf(p, sizeof(p), "/sys/kernel/tracing/instances/argus-%d",
	    (int)pid);
	return stat(p, &st) == 0;
}

struct known {
	int a, b, p_pipe, c_pipe, p_unix, c_unix, t_sleep, t_mark, n;
};

static void
parse_known(const char *out, struct known *k)
{
	FILE *f = fopen(out, "r");
	char line[128];
	int x, y, z;

	cr_assert(f != NULL);
	memset(k, 0, sizeof(*k));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "condvar %d %d %d", &x, &y, &z) == 3)
			k->a = x, k->b = y, k->n = z;
		else if (sscanf(line, "pipe %d %d", &x, &y) == 2)
			k->p_pipe = x, k->c_pipe = y;
		else if (sscanf(line, "unix %d %d", &x, &y) == 2)
			k->p_unix = x, k->c_unix = y;
		else if (sscanf(line, "sleep %d", &x) == 1)
			k->t_sleep = x;
		else if (sscanf(line, "marker %d", &x) == 1)
			k->t_mark = x;
	}
	fclose(f);
	cr_assert(k->a && k->b && k->p_pipe && k->c_pipe && k->p_unix &&
	    k->t_sleep, "rec-known did not report all its phases");
}

struct fdid {
	uint64_t kind, ino, peer;
};

/* What tests/progs/rec-known.c writes with ARGUS_MK_PROXY and _MMAP. */
#define REC_PROXY_TID 0x12345u
#define REC_MMAP_START 0x7000000ull
#define REC_MMAP_LEN 0x2000ull
#define REC_MMAP_OFF 0x1000ull
#define REC_MMAP_PATH "/rec-known-mmap"

Test(record, known_program, .timeout = 60)
{
	need_tracing();
	serialize();
	char *dir = tmpdir(), out[PATH_MAX];
	char *argv[] = { argus_bin(), "record", "-q", "-o", dir, "--",
	    prog(), "20", NULL };
	struct trace_reader *r;
	struct trace_reader_stats rs;
	struct trace_event ev;
	struct known k;
	char *cause = NULL;
	pid_t rec;
	unsigned wake_ab = 0, pw = 0, pr = 0, cw = 0, cr = 0;
	unsigned usend = 0, urecv = 0, mark = 0, stacks = 0, longsleep = 0;
	unsigned maps = 0, pmark = 0, pstack = 0, pmap = 0;
	unsigned bthr = 0, bpid_bad = 0, bnamed = 0;
	uint64_t keys = 0, sleep_enter = 0;
	struct fdid fp101 = { 0 }, fc100 = { 0 }, fp104 = { 0 }, fc105 = { 0 };

	snprintf(out, sizeof(out), "%s.out", dir);
	/* the pipe round trips block nobody: the BPF recorder keeps such
	   calls with its program on every system call's exit, which it
	   takes where the kernel lacks rseq_update (the default set keeps
	   only the calls that block, record.sh tests it) */
	setenv("ARGUS_BPF_SKIP", "rseq_update", 1);
	rec = spawn(argv, out);
	unsetenv("ARGUS_BPF_SKIP");
	cr_assert_eq(wait_status(rec), 0, "argus record failed");
	cr_expect(!instance_exists(rec), "the tracefs instance was left");
	parse_known(out, &k);
	cr_assert_eq(k.n, N);

	cr_assert_eq(trace_reader_open(&r, dir, &cause), 0, "%s", cause);
	while (trace_reader_next(r, &ev) == 1) {
		int ctx = ev.flags & TRACE_CTX_MASK;

		switch (ev.type) {
		case TT_WAKING:
			if (ctx == TRACE_CTX_TASK && ev.tid == (uint32_t)k.a &&
			    ev.arg[0] == (uint64_t)k.b)
				wake_ab++;
			break;
		case TT_SYS_ENTER:
			if (ev.tid == (uint32_t)k.p_pipe && ev.arg[0] == SYS_write &&
			    ev.arg[1] == 101)
				pw++;
			if (ev.tid == (uint32_t)k.p_pipe && ev.arg[0] == SYS_read &&
			    ev.arg[1] == 102)
				pr++;
			if (ev.tid == (uint32_t)k.c_pipe && ev.arg[0] == SYS_read &&
			    ev.arg[1] == 100)
				cr++;
			if (ev.tid == (uint32_t)k.c_pipe && ev.arg[0] == SYS_write &&
			    ev.arg[1] == 103)
				cw++;
			if (ev.tid == (uint32_t)k.t_sleep &&
			    (ev.arg[0] == SYS_clock_nanosleep ||
			    ev.arg[0] == SYS_nanosleep))
				sleep_enter = ev.ts;
			break;
		case TT_SYS_EXIT:
			if (ev.tid == (uint32_t)k.t_sleep && sleep_enter &&
			    (ev.arg[0] == SYS_clock_nanosleep ||
			    ev.arg[0] == SYS_nanosleep)) {
				/* The 50 ms sleep, not the final 400 ms linger. */
				if (ev.ts - sleep_enter >= 50000000ull &&
				    ev.ts - sleep_enter < 300000000ull)
					longsleep++;
				sleep_enter = 0;
			}
			break;
		case TT_SK_DATA_READY:	/* the sender's side */
			if (ev.tid == (uint32_t)k.p_unix || ev.tid ==
			    (uint32_t)k.c_unix)
				usend++;
			break;
		case TT_SOCK_RECV:
			if (ev.tid == (uint32_t)k.p_unix || ev.tid ==
			    (uint32_t)k.c_unix)
				urecv++;
			break;
		case TT_USER:
			if (ev.tid == (uint32_t)k.t_mark && ev.arg[0] == TU_MARK &&
			    ev.blob_len == 8 && memcmp(ev.blob, "rec-test", 8) == 0 &&
			    ev.arg[2] == 7) {
				mark++;
				if (ev.arg[1] < 64)
					keys |= 1ull << ev.arg[1];
			}
			if (ev.tid == REC_PROXY_TID && ev.arg[0] == TU_MARK &&
			    ev.arg[1] == 42 && ev.blob_len == 9 &&
			    memcmp(ev.blob, "rec-proxy", 9) == 0)
				pmark++;
			break;
		case TT_STACK:
			if (ev.tid == (uint32_t)k.t_mark && ev.arg[1] == TU_MARK &&
			    ev.blob_len == 24 &&
			    ((const uint64_t *)ev.blob)[0] == 0x401000 &&
			    ((const uint64_t *)ev.blob)[2] == 0x403000)
				stacks++;
			if (ev.tid == REC_PROXY_TID && ev.arg[0] == REC_PROXY_TID &&
			    ev.arg[1] == TU_MARK && ev.blob_len == 24 &&
			    ((const uint64_t *)ev.blob)[1] == 0x402000)
				pstack++;
			break;
		case TT_MMAP:
			if (ev.arg[0] == (uint64_t)k.t_mark && ev.blob_len > 10 &&
			    strcmp((const char *)ev.blob + ev.blob_len - 10,
			    "/rec-known") == 0 && ev.arg[2] > 0)
				maps++;
			if (ev.arg[0] == (uint64_t)k.t_mark &&
			    ev.arg[1] == REC_MMAP_START &&
			    ev.arg[2] == REC_MMAP_LEN && ev.arg[3] == REC_MMAP_OFF &&
			    ev.blob_len == sizeof(REC_MMAP_PATH) - 1 &&
			    memcmp(ev.blob, REC_MMAP_PATH, ev.blob_len) == 0)
				pmap++;
			break;
		case TT_THREAD:
			/* B, a thread of A's process, never its own */
			if (ev.arg[0] == (uint64_t)k.b) {
				bthr++;
				/* 0: unknown (gone before it was read) */
				if (ev.arg[1] != (uint64_t)k.a && ev.arg[1] != 0)
					bpid_bad++;
				if (ev.blob_len == 4 &&
				    memcmp(ev.blob, "rk-b", 4) == 0)
					bnamed++;
			}
			break;
		case TT_FD: {
			struct fdid id = { ev.arg[2], ev.arg[3], ev.arg[4] };

			if (ev.arg[0] == (uint64_t)k.p_pipe && ev.arg[1] == 101)
				fp101 = id;
			if (ev.arg[0] == (uint64_t)k.c_pipe && ev.arg[1] == 100)
				fc100 = id;
			if (ev.arg[0] == (uint64_t)k.p_unix && ev.arg[1] == 104)
				fp104 = id;
			if (ev.arg[0] == (uint64_t)k.c_unix && ev.arg[1] == 105)
				fc105 = id;
			break;
		}
		default:
			break;
		}
	}
	cr_expect_eq(wake_ab, N, "condvar: %u wake-ups A->B, want %d",
	    wake_ab, N);
	cr_expect_eq(pw, N, "pipe: parent wrote %u times", pw);
	cr_expect_eq(cr, N, "pipe: child read %u times", cr);
	cr_expect_eq(cw, N, "pipe: child wrote %u times", cw);
	cr_expect_eq(pr, N, "pipe: parent read %u times", pr);
	cr_expect_eq(usend, 2 * N, "unix: %u data-ready (sends)", usend);
	cr_expect_eq(urecv, 2 * N, "unix: %u receives", urecv);
	cr_expect_eq(longsleep, 1, "sleep: %u sleeps of 50 ms", longsleep);
	cr_expect_gt(bthr, 0, "no thread record of B");
	cr_expect_eq(bpid_bad, 0, "%u of B's %u thread records name "
	    "another process", bpid_bad, bthr);
	cr_expect_gt(bnamed, 0, "B's name was not recorded");
	if (k.t_mark) {
		cr_expect_eq(mark, N, "marker: %u marks", mark);
		cr_expect_eq(keys, (1ull << N) - 1, "marker keys %llx",
		    (unsigned long long)keys);
		cr_expect_eq(stacks, 1, "marker: %u stacks", stacks);
		cr_expect_geq(maps, 1, "no executable mapping of rec-known");
		cr_expect_eq(pmark, 1, "proxy: %u marks", pmark);
		cr_expect_eq(pstack, 1, "proxy: %u stacks", pstack);
		cr_expect_eq(pmap, 1, "mapping records: %u", pmap);
	}
	cr_expect_eq(fp101.kind, TFD_PIPE, "fd 101 of the parent: kind %llu",
	    (unsigned long long)fp101.kind);
	cr_expect(fp101.ino != 0 && fp101.ino == fc100.ino,
	    "pipe ends differ: %llu %llu", (unsigned long long)fp101.ino,
	    (unsigned long long)fc100.ino);
	cr_expect_eq(fp104.kind, TFD_UNIX);
	cr_expect(fp104.peer != 0 && fp104.peer == fc105.ino &&
	    fc105.peer == fp104.ino, "unix peers do not match");
	{
		const struct trace_thread *ta = trace_reader_thread(r, k.a);
		const struct trace_thread *tb = trace_reader_thread(r, k.b);

		cr_expect(ta && tb && tb->pid == (uint32_t)k.a &&
		    ta->pid == (uint32_t)k.a, "thread table lacks A or B");
		cr_expect(tb && strcmp(tb->comm, "rk-b") == 0);
	}
	trace_reader_stats(r, &rs);
	cr_expect_eq(rs.lost, 0, "%llu events lost", (unsigned long long)rs.lost);
	trace_reader_close(r);
	rmtree(dir);
	unlink(out);
}

Test(record, exit_status_of_command, .timeout = 30)
{
	need_tracing();
	serialize();
	char *dir = tmpdir();
	char *argv[] = { argus_bin(), "record", "-q", "--events", "sched",
	    "-o", dir, "--", "/bin/sh", "-c", "exit 7", NULL };

	cr_expect_eq(wait_status(spawn(argv, NULL)), 7);
	rmtree(dir);
}

static uint64_t
seg_bytes(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	uint64_t sum = 0;

	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		char p[PATH_MAX + 300];
		struct stat st;

		if (strncmp(de->d_name, "seg-", 4) != 0)
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		if (stat(p, &st) == 0)
			sum += (uint64_t)st.st_size;
	}
	closedir(d);
	return sum;
}

static void
msleep(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

Test(record, sigkill_leaves_readable_trace, .timeout = 30)
{
	need_tracing();
	serialize();
	char *dir = tmpdir(), *dir2 = tmpdir();
	char *argv[] = { argus_bin(), "record", "-q", "-o", dir, NULL };
	char *argv2[] = { argus_bin(), "record", "-q", "--duration", "0.3",
	    "-o", dir2, NULL };
	struct trace_reader *r;
	struct trace_event ev;
	char *cause = NULL;
	uint64_t n = 0;
	pid_t rec = spawn(argv, NULL);

	msleep(2500);		/* past the first 1 s flush */
	kill(rec, SIGKILL);
	cr_assert_eq(wait_status(rec), 128 + SIGKILL);
	cr_expect(instance_exists(rec));
	cr_assert_eq(trace_reader_open(&r, dir, &cause), 0, "%s", cause);
	while (trace_reader_next(r, &ev) == 1)
		n++;
	cr_expect_gt(n, 0, "no event readable after SIGKILL");
	trace_reader_close(r);
	/* The next recorder removes the dead one's instance. */
	cr_expect_eq(wait_status(spawn(argv2, NULL)), 0);
	cr_expect(!instance_exists(rec), "stale instance argus-%d kept",
	    (int)rec);
	rmtree(dir);
	rmtree(dir2);
}

Test(record, rotation_keeps_bound, .timeout = 60)
{
	need_tracing();
	serialize();
	char *dir = tmpdir();
	char *argv[] = { argus_bin(), "record", "-q", "--events", "full",
	    "--size", "1M", "--segment", "256K", "--duration", "4",
	    "-o", dir, NULL };
	/* load until the recorder stops: a fixed amount compressed to
	   about the bound itself (1 byte an event) and rotated only some
	   of the times */
	char *load[] = { "/bin/dd", "if=/dev/zero", "of=/dev/null", "bs=1",
	    "count=100000000", "status=none", NULL };
	uint64_t maxb = 0;
	pid_t rec = spawn(argv, NULL), ld;
	struct trace_reader *r;
	char *cause = NULL;
	int st;

	msleep(300);
	ld = spawn(load, NULL);
	while (waitpid(rec, &st, WNOHANG) == 0) {
		uint64_t b = seg_bytes(dir);

		if (b > maxb)
			maxb = b;
		msleep(20);
	}
	kill(ld, SIGKILL);
	waitpid(ld, NULL, 0);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	cr_expect_leq(maxb, 1u << 20, "disk use %llu over the 1 MiB bound",
	    (unsigned long long)maxb);
	cr_assert_eq(trace_reader_open(&r, dir, &cause), 0, "%s", cause);
	cr_expect_geq(trace_reader_info(r)->nsegments, 2);
	cr_expect_gt(trace_reader_segment(r, 0)->seq, 1,
	    "no segment was rotated out");
	trace_reader_close(r);
	rmtree(dir);
}

Test(record, lost_events_counted, .timeout = 60)
{
	need_tracing();
	serialize();
	char *dir = tmpdir();
	/* 8 KiB per CPU cannot hold 100 ms of 600,000 syscalls. */
	char *argv[] = { argus_bin(), "record", "-q", "--events", "full",
	    "--buffer-kb", "8", "-o", dir, "--", "/bin/dd", "if=/dev/zero",
	    "of=/dev/null", "bs=1", "count=300000", "status=none", NULL };
	struct trace_reader *r;
	struct trace_reader_stats rs;
	struct trace_event ev;
	char *cause = NULL;
	uint64_t lost = 0, n = 0, ncpus;

	cr_assert_eq(wait_status(spawn(argv, NULL)), 0);
	cr_assert_eq(trace_reader_open(&r, dir, &cause), 0, "%s", cause);
	ncpus = trace_reader_info(r)->ncpus;
	while (trace_reader_next(r, &ev) == 1) {
		n++;
		if (ev.type == TT_LOST) {
			cr_expect_lt(ev.cpu, ncpus);
			lost += ev.arg[0];
		}
	}
	trace_reader_stats(r, &rs);
	cr_expect_gt(lost, 0, "no loss recorded with an 8 KiB buffer");
	cr_expect_eq(rs.lost, lost);
	/* Read plus lost covers at least the 600,000 syscalls' enter/exit. */
	cr_expect_geq(n + lost, 1200000, "%llu read + %llu lost",
	    (unsigned long long)n, (unsigned long long)lost);
	trace_reader_close(r);
	rmtree(dir);
}
