/*
 * test-instrument.c: unit tests of the instrumentation: ELF symbol lookup
 * (elfsym.c, used by argus watch and argus probe) and the exact bytes of
 * libargus's records, read back from a regular file given as
 * ARGUS_MARKER (one write per record, so the file holds the records
 * back to back).
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/elfsym.h"
#include "tests/unit/need-tracing.h"
#include "trace/user-protocol.h"
#include "trace/trace.h"

long instr_test_variable = 42;

static void
self_path(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);

	cr_assert(n > 0);
	buf[n] = 0;
}

Test(instr_elfsym, finds_function_and_offset)
{
	char exe[PATH_MAX];
	struct elfsym es;
	uint64_t off;

	self_path(exe, sizeof(exe));
	cr_assert_eq(elfsym_lookup(exe, "elfsym_lookup", &es), 0);
	cr_assert(es.is_func);
	cr_assert_gt(es.size, 0);
	cr_assert_eq(elfsym_vaddr_to_offset(exe, es.vaddr, &off), 0);
	cr_assert_eq(off, es.offset);
}

Test(instr_elfsym, runtime_address_of_variable)
{
	uint64_t addr = 0, size = 0;
	char file[PATH_MAX];

	cr_assert_eq(elfsym_in_process(getpid(), "instr_test_variable", &addr,
	    &size, file, sizeof(file)), 0);
	cr_assert_eq(addr, (uint64_t)(uintptr_t)&instr_test_variable);
	cr_assert_eq(size, sizeof(long));
	cr_assert(strstr(file, "run") != NULL);
}

Test(instr_elfsym, errors)
{
	char exe[PATH_MAX];
	struct elfsym es;
	uint64_t off, addr, size;

	self_path(exe, sizeof(exe));
	cr_assert_eq(elfsym_lookup(exe, "no_such_symbol_at_all", &es), ENOENT);
	cr_assert_eq(elfsym_lookup("/proc/self/status", "x", &es), ENOEXEC);
	cr_assert_eq(elfsym_lookup("/nonexistent/file", "x", &es), ENOENT);
	cr_assert_eq(elfsym_vaddr_to_offset(exe, 0x7fff00000000ull, &off),
	    ERANGE);
	cr_assert_eq(elfsym_in_process(999999999, "x", &addr, &size, NULL, 0),
	    ESRCH);
	/* a prefix of a name is not the name */
	cr_assert_eq(elfsym_lookup(exe, "elfsym_look", &es), ENOENT);
}

/* Read the next record of kind (ignoring others) from buf. */
static const struct argus_marker_hdr *
next_of(const unsigned char *buf, size_t len, size_t *pos, unsigned kind)
{
	while (*pos + sizeof(struct argus_marker_hdr) <= len) {
		const struct argus_marker_hdr *h = (const void *)(buf + *pos);

		cr_assert_eq(h->id, ARGUS_MARKER_ID);
		*pos += sizeof(*h) + h->len;
		cr_assert_leq(*pos, len);
		if (h->kind == kind)
			return h;
	}
	return NULL;
}

/* From offset from on: mapping records, then a stack of one frame or
   more, and no stack before the first mapping. */
static void
maps_then_stack(const unsigned char *buf, size_t n, size_t from)
{
	const struct argus_marker_hdr *h;
	size_t pos = from, at_map, at_stack;

	h = next_of(buf, n, &pos, ARGUS_MK_MMAP);
	cr_assert_not_null(h, "no mapping record");
	cr_assert_gt(h->arg, 0);
	at_map = pos;
	pos = from;
	h = next_of(buf, n, &pos, ARGUS_MK_STACK);
	cr_assert_not_null(h, "no stack record");
	cr_assert_gt(h->arg, 0, "a stack of no frames");
	at_stack = pos;
	cr_assert_lt(at_map, at_stack, "the stack came before the mappings");
}

/*
 * The records written to the instance inst, back as the bytes libargus
 * wrote (the kernel's text shows each record's id apart, then the rest
 * in hex). Returns how many bytes.
 */
static ssize_t
read_records(const char *inst, unsigned char *buf, size_t size)
{
	char path[PATH_MAX], line[8192];
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/trace", inst);
	f = fopen(path, "r");
	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f)) {
		const char *p = strstr(line, ": # 41524755 buf:");
		unsigned char b[2048];
		size_t k = 4, want;
		char *e;

		if (p == NULL)
			continue;
		memcpy(b, &(uint32_t){ ARGUS_MARKER_ID }, 4);
		for (p += 17; k < sizeof(b); p = e) {
			unsigned long v = strtoul(p, &e, 16);

			if (e == p)
				break;
			b[k++] = (unsigned char)v;
		}
		if (k < sizeof(struct argus_marker_hdr))
			continue;
		want = sizeof(struct argus_marker_hdr) +
		    ((const struct argus_marker_hdr *)(void *)b)->len;
		if (want > k || n + want > size)
			break;
		memcpy(buf + n, b, want);
		n += want;
	}
	fclose(f);
	return (ssize_t)n;
}

Test(instr_records, api_records_bytes)
{
	char exe[PATH_MAX], lib[PATH_MAX + 32], inst[128], mk[160];
	unsigned char buf[65536];
	const struct argus_marker_hdr *h;
	size_t pos = 0;
	ssize_t n;
	FILE *on;

	need_tracing();
	/* libargus writes only into a tracefs marker: an instance of ours */
	snprintf(inst, sizeof(inst), "/sys/kernel/tracing/instances/"
	    "argus-unit-%d", (int)getpid());
	if (mkdir(inst, 0700) != 0)
		cr_skip_test("no tracefs instance (%s)", strerror(errno));
	on = fopen(strcat(strcpy(mk, inst), "/tracing_on"), "w");
	cr_assert_not_null(on);
	fputs("1", on);
	fclose(on);
	snprintf(mk, sizeof(mk), "%s/trace_marker_raw", inst);
	self_path(exe, sizeof(exe));
	snprintf(lib, sizeof(lib), "%s/../../libargus.so", dirname(exe));
	setenv("ARGUS_MARKER", mk, 1);
	void *dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	cr_assert_not_null(dl, "%s", dlerror());
	int (*enabled)(void) = (int (*)(void))dlsym(dl, "argus_enabled");
	void (*mark)(const char *, uint64_t) =
	    (void (*)(const char *, uint64_t))dlsym(dl, "argus_mark");
	void (*submit)(uint64_t, uint64_t) =
	    (void (*)(uint64_t, uint64_t))dlsym(dl, "argus_task_submit");
	void (*fw)(const volatile void *, uint64_t) =
	    (void (*)(const volatile void *, uint64_t))dlsym(dl, "argus_flag_write");
	cr_assert(enabled && mark && submit && fw);
	/* internals are hidden */
	cr_assert_null(dlsym(dl, "ins_emit"));
	cr_assert_null(dlsym(dl, "ins"));
	cr_assert(enabled());
	mark("hello", 7);
	submit(11, 22);
	fw(&instr_test_variable, 5);
	n = read_records(inst, buf, sizeof(buf));
	cr_assert_gt(n, 0);

	/* no stack yet, hence no mapping written */
	cr_assert_null(next_of(buf, (size_t)n, &pos, ARGUS_MK_MMAP));
	pos = 0;
	h = next_of(buf, (size_t)n, &pos, TU_MARK);
	cr_assert_not_null(h);
	cr_assert_eq(h->len, 5);
	cr_assert_eq(memcmp(h + 1, "hello", 5), 0);
	cr_assert_eq(h->arg, 7);
	h = next_of(buf, (size_t)n, &pos, TU_TASK_SUBMIT);
	cr_assert_not_null(h);
	cr_assert_eq(h->key, 11);
	cr_assert_eq(h->arg, 22);
	cr_assert_eq(h->len, 0);
	h = next_of(buf, (size_t)n, &pos, TU_FLAG_WRITE);
	cr_assert_not_null(h);
	cr_assert_eq(h->key, (uint64_t)(uintptr_t)&instr_test_variable);
	cr_assert_eq(h->arg, 5);
	cr_assert_neq(h->arg2, 0);	/* the caller's address */

	/* a wait of the main thread records a stack, preceded by the
	   mappings that symbolize it */
	int (*tw)(pthread_cond_t *, pthread_mutex_t *,
	    const struct timespec *) = (int (*)(pthread_cond_t *,
	    pthread_mutex_t *, const struct timespec *))dlsym(dl,
	    "pthread_cond_timedwait");
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	struct timespec past = { 1, 0 };
	cr_assert_not_null(tw);
	pthread_mutex_lock(&m);
	cr_assert_eq(tw(&c, &m, &past), ETIMEDOUT);
	pthread_mutex_unlock(&m);
	size_t end = (size_t)n;
	n = read_records(inst, buf, sizeof(buf));
	cr_assert_gt((size_t)n, end);
	maps_then_stack(buf, (size_t)n, end);

	/* so does a forked child's, under its own pid */
	pid_t child = fork();
	cr_assert_geq(child, 0);
	if (child == 0) {
		pthread_mutex_lock(&m);
		_exit(tw(&c, &m, &past) == ETIMEDOUT ? 0 : 1);
	}
	int st;
	cr_assert_eq(waitpid(child, &st, 0), child);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	end = (size_t)n;
	n = read_records(inst, buf, sizeof(buf));
	cr_assert_gt((size_t)n, end);
	maps_then_stack(buf, (size_t)n, end);
	/* the instance goes once libargus lets go of its marker, which it
	   does within a second of tracing_on 0, at a recorded wait (no
	   watchdog thread runs: this process made no loop wait); libargus
	   stays loaded until this test's process ends */
	on = fopen(strcat(strcpy(mk, inst), "/tracing_on"), "w");
	if (on) {
		fputs("0", on);
		fclose(on);
	}
	int gone = 0;
	for (int i = 0; i < 60 && !(gone = rmdir(inst) == 0); i++) {
		pthread_mutex_lock(&m);
		(void)tw(&c, &m, &past);
		pthread_mutex_unlock(&m);
		usleep(50000);
	}
	cr_assert(gone, "the instance stayed: libargus kept its marker");
}

Test(instr_records, off_writes_nothing)
{
	char exe[PATH_MAX], lib[PATH_MAX + 32];

	self_path(exe, sizeof(exe));
	snprintf(lib, sizeof(lib), "%s/../../libargus.so", dirname(exe));
	unsetenv("ARGUS_MARKER");
	if (access(ARGUS_MARKER_PATH_FILE, F_OK) == 0)
		cr_skip_test("a recorder is running");
	void *dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	cr_assert_not_null(dl, "%s", dlerror());
	int (*enabled)(void) = (int (*)(void))dlsym(dl, "argus_enabled");
	cr_assert_not_null(enabled);
	cr_assert_eq(enabled(), 0);
}
