/*
 * test-diag-stack.c: criterion tests of the symbolization of the hung
 * thread's user stacks (engine/diag-api.c, common/elfaddr.c), and of the
 * kernel stack of a busy culprit's samples (engine/diag-stacks.c). The trace
 * is built in code (tests/unit/graph-fixture.h); its one mapping is this
 * test binary, placed at a made-up address.
 */
#include <limits.h>
#include <stdlib.h>
#include <criterion/criterion.h>

#include "common/elfsym.h"
#include "graph-fixture.h"

#define MS 1000000ULL
#define BASE 0x10000000ULL

static struct fx F;

/* A function of this binary for the stack to point into. */
int diag_stack_probe_fn(int x);

int
diag_stack_probe_fn(int x)
{
	return x * 3 + 1;
}

Test(diag_stack, frames_symbolized_from_mappings)
{
	char exe[PATH_MAX];
	struct elfsym es;
	enum { M = 100 };

	cr_assert_not_null(realpath("/proc/self/exe", exe));
	cr_assert_eq(elfsym_lookup(exe, "diag_stack_probe_fn", &es), 0);
	/* the frames: 5 bytes into the function, then an unmapped one */
	uint64_t frames[2] = { BASE + es.offset + 5, 0x7000 };

	fx_init(&F);
	fx_thread(&F, M, M, "app");
	fx_ev(&F, 0, TT_MMAP, M, BASE, 1ULL << 30, 0);
	fx_blob(&F, exe);
	uint64_t t0 = fx_run(&F, 0, M);
	fx_ev(&F, M, TT_SYS_ENTER, SYS_getpid, 0, 0, 0);
	fx_ev(&F, M, TT_STACK, M, TU_HANG_BEGIN, 0, 0);
	F.ev[F.n - 1].blob = frames;
	F.ev[F.n - 1].blob_len = sizeof(frames);
	F.ts += 50 * MS;
	fx_ev(&F, M, TT_USER, TU_HANG_END, M, F.ts - t0, t0);
	fx_block(&F, M, 0, SYS_poll, 0);
	struct graph *g = fx_build(&F, NULL);
	cr_assert_not_null(g);
	struct diag_opts o = { .threshold_ns = 10 * MS };
	struct diag *d = NULL;
	cr_assert_eq(diag_new(g, &o, &d, NULL), 0);
	cr_assert_eq(diag_nhangs(d), 1);
	cr_assert_eq(diag_nstacks(d, 0), 1);
	const struct diag_stack *s = diag_stack(d, 0, 0);
	cr_assert_eq(s->nframes, 2);
	cr_assert_not_null(s->symbols);
	cr_assert_str_eq(s->symbols[0], "diag_stack_probe_fn+0x5");
	cr_assert_null(s->symbols[1]);
	/* the same after computing again */
	if (diag_nsimilar(d, 0) > 0)
		cr_assert_eq(diag_pick(d, 0, 0), 0);
	cr_assert_str_eq(diag_stack(d, 0, 0)->symbols[0],
	    "diag_stack_probe_fn+0x5");
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	diag_write_text(d, f, graph_first_ts(g));
	diag_write_json(d, f);
	fclose(f);
	cr_assert_not_null(strstr(buf, "stack at"));
	cr_assert_not_null(strstr(buf, " diag_stack_probe_fn+0x5 ?"));
	cr_assert_not_null(strstr(buf,
	    "\"symbols\":[\"diag_stack_probe_fn+0x5\",null]"));
	free(buf);
	diag_free(d);
	graph_free(g);
	cr_assert_eq(diag_stack_probe_fn(1), 4);
}

/*
 * A process forked without exec is recorded as having its parent's
 * mappings (TT_MMAP from, no path): its addresses are looked up there,
 * through a chain too; its own mappings, once written, come first; a
 * process with no such record (a trace before `from`) has only its own,
 * and a loop of records ends.
 */
Test(diag_stack, mappings_from_fork_parent)
{
	enum { P = 100, C = 200, G = 300, X = 400, L1 = 500, L2 = 600 };
	uint64_t off = 0;

	fx_init(&F);
	fx_thread(&F, P, P, "parent");
	fx_thread(&F, C, C, "child");
	F.th[F.nth - 1].ppid = P;
	fx_thread(&F, G, G, "grandchild");
	F.th[F.nth - 1].ppid = C;
	fx_thread(&F, X, X, "other");
	F.th[F.nth - 1].ppid = P;
	fx_ev(&F, 0, TT_MMAP, P, BASE, 0x1000, 0x2000);
	fx_blob(&F, "/usr/bin/app");
	fx_ev(&F, 0, TT_MMAP, C, 0, 0, 0);
	F.ev[F.n - 1].arg[4] = P;
	fx_ev(&F, 0, TT_MMAP, G, 0, 0, 0);
	F.ev[F.n - 1].arg[4] = C;
	/* the grandchild's own, later: first, the parent's still behind */
	fx_ev(&F, 0, TT_MMAP, G, BASE + 0x1000, 0x1000, 0);
	fx_blob(&F, "/usr/lib/libplugin.so");
	fx_ev(&F, 0, TT_MMAP, L1, 0, 0, 0);
	F.ev[F.n - 1].arg[4] = L2;
	fx_ev(&F, 0, TT_MMAP, L2, 0, 0, 0);
	F.ev[F.n - 1].arg[4] = L1;
	fx_run(&F, 0, P);
	struct graph *g = fx_build(&F, NULL);
	cr_assert_not_null(g);
	cr_assert_str_eq(graph_map_at(g, P, BASE + 0x10, 0, &off), "/usr/bin/app");
	cr_assert_eq(off, 0x2010);
	cr_assert_str_eq(graph_map_at(g, C, BASE + 0x20, 0, &off), "/usr/bin/app");
	cr_assert_eq(off, 0x2020);
	cr_assert_str_eq(graph_map_at(g, G, BASE + 0x30, 0, &off), "/usr/bin/app");
	cr_assert_str_eq(graph_map_at(g, G, BASE + 0x1030, 0, &off),
	    "/usr/lib/libplugin.so");
	cr_assert_eq(off, 0x30);
	cr_assert_null(graph_map_at(g, C, BASE + 0x1030, 0, &off));
	/* no record: the parent's are not guessed */
	cr_assert_null(graph_map_at(g, X, BASE + 0x10, 0, &off));
	cr_assert_null(graph_map_at(g, L1, BASE + 0x10, 0, &off));
	graph_free(g);
}

/*
 * A process that execs runs a new image: its addresses are looked up in
 * the mappings read while it ran the image of the stack's time, even
 * where the new image maps the same addresses, and whether they were
 * read before or after the stack; a pid a new process reuses (its fork)
 * starts anew too.
 */
Test(diag_stack, mappings_of_the_image_at_the_time)
{
	enum { P = 100, Q = 200 };
	uint64_t off = 0;

	fx_init(&F);
	fx_thread(&F, P, P, "old");
	fx_thread(&F, Q, Q, "q");
	uint64_t t0 = fx_run(&F, 0, P);
	uint64_t t1 = fx_ev(&F, 0, TT_MMAP, P, BASE, 0x1000, 0);
	fx_blob(&F, "/usr/bin/old");
	uint64_t tx = fx_ev(&F, P, TT_EXEC, P, P, 0, 0);
	fx_blob(&F, "/usr/bin/new");
	uint64_t t2 = fx_ev(&F, P, TT_SWITCH, 0, 0, 120, 0);
	uint64_t t3 = fx_ev(&F, 0, TT_MMAP, P, BASE, 0x1000, 0);
	fx_blob(&F, "/usr/bin/new");
	/* Q's pid taken by a new process, whose mappings are other */
	fx_ev(&F, 0, TT_MMAP, Q, BASE, 0x1000, 0);
	fx_blob(&F, "/usr/bin/q1");
	uint64_t tf = fx_ev(&F, P, TT_FORK, Q, Q, 0, 0);
	fx_blob(&F, "q");
	fx_ev(&F, 0, TT_MMAP, Q, BASE, 0x1000, 0);
	fx_blob(&F, "/usr/bin/q2");
	struct graph *g = fx_build(&F, NULL);
	cr_assert_not_null(g);
	cr_assert_str_eq(graph_map_at(g, P, BASE + 0x10, t0, &off),
	    "/usr/bin/old");
	cr_assert_str_eq(graph_map_at(g, P, BASE + 0x10, t1 + 1, &off),
	    "/usr/bin/old");
	cr_assert_str_eq(graph_map_at(g, P, BASE + 0x10, tx, &off),
	    "/usr/bin/new");
	cr_assert_str_eq(graph_map_at(g, P, BASE + 0x10, t2, &off),
	    "/usr/bin/new");
	cr_assert_str_eq(graph_map_at(g, P, BASE + 0x10, t3 + 5000, &off),
	    "/usr/bin/new");
	cr_assert_eq(off, 0x10);
	cr_assert_str_eq(graph_map_at(g, Q, BASE, tf - 1, &off),
	    "/usr/bin/q1");
	cr_assert_str_eq(graph_map_at(g, Q, BASE, tf, &off), "/usr/bin/q2");
	graph_free(g);
}

/* Kernel frames are named by the trace's TT_KSYM records (the functions
   of /proc/kallsyms the recorder wrote), whatever machine reads it; one
   outside every record stays unnamed. */
Test(diag_stack, kernel_frames_from_ksym_records)
{
	enum { M = 100 };
	const uint64_t K = 0xffffffff81400000ULL;
	uint64_t delta = 0;

	fx_init(&F);
	fx_thread(&F, M, M, "app");
	fx_ev(&F, 0, TT_KSYM, K, 0x100, 0, 0);
	fx_blob(&F, "pipe_read");
	fx_ev(&F, 0, TT_KSYM, K + 0x100, 0x80, 0, 0);
	fx_blob(&F, "vfs_read");
	fx_ev(&F, 0, TT_KSYM, K, 0x100, 0, 0);	/* again: once */
	fx_blob(&F, "pipe_read");
	fx_ev(&F, 0, TT_KSYM, 0x1000, 0x10, 0, 0);	/* not the kernel's */
	fx_blob(&F, "user_fn");
	fx_run(&F, 0, M);
	struct graph *g = fx_build(&F, NULL);
	cr_assert_not_null(g);
	cr_assert_str_eq(graph_ksym_at(g, M, K + 0x42, &delta), "pipe_read");
	cr_assert_eq(delta, 0x42);
	cr_assert_str_eq(graph_ksym_at(g, M, K + 0x17f, &delta),
	    "vfs_read");
	cr_assert_eq(delta, 0x7f);
	cr_assert_null(graph_ksym_at(g, M, K + 0x180, &delta));
	cr_assert_null(graph_ksym_at(g, M, K - 1, &delta));
	cr_assert_null(graph_ksym_at(g, M, 0x1004, &delta));
	struct diag *d = NULL;
	struct diag_opts o = { .threshold_ns = 10 * MS };
	char buf[64];
	cr_assert_eq(diag_new(g, &o, &d, NULL), 0);
	cr_assert_eq(diag_frame_text(d, M, 0, K + 0x43, buf, sizeof(buf)), 1);
	cr_assert_str_eq(buf, "pipe_read+0x43");
	cr_assert_eq(diag_frame_text(d, M, 0, K + 0x200, buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "0xffffffff81400200");
	diag_free(d);
	graph_free(g);
}

/* A merged trace: two hosts' kernels name the same addresses
   differently (other builds, or KASLR); each host's frames are named by
   its own records (the merged reader tags them, trace_kaddr_on_host()). */
Test(diag_stack, kernel_frames_of_each_host)
{
	const uint64_t K = 0xffffffff81400000ULL;
	const uint32_t a = 100, b = trace_tid_on_host(100, 1);
	uint64_t delta = 0;

	fx_init(&F);
	fx_thread(&F, a, a, "app");
	fx_thread(&F, b, b, "app");
	fx_ev(&F, 0, TT_KSYM, K, 0x100, 0, 0);
	fx_blob(&F, "pipe_read");
	fx_ev(&F, 0, TT_KSYM, trace_kaddr_on_host(K, 1), 0x100, 0, 0);
	fx_blob(&F, "futex_wait");
	fx_run(&F, 0, a);
	struct graph *g = fx_build(&F, NULL);
	cr_assert_not_null(g);
	cr_assert_gt(trace_kaddr_on_host(K, 1), TRACE_KERNEL_ADDR);
	cr_assert_str_eq(graph_ksym_at(g, a, K + 0x42, &delta), "pipe_read");
	cr_assert_str_eq(graph_ksym_at(g, b, K + 0x42, &delta),
	    "futex_wait");
	cr_assert_eq(delta, 0x42);
	struct diag *d = NULL;
	struct diag_opts o = { .threshold_ns = 10 * MS };
	char buf[64];
	cr_assert_eq(diag_new(g, &o, &d, NULL), 0);
	cr_assert_eq(diag_frame_text(d, b, 0, K + 0x43, buf, sizeof(buf)), 1);
	cr_assert_str_eq(buf, "futex_wait+0x43");
	diag_free(d);
	graph_free(g);
}

/* A sample of thread tid at user place pc (an address in no mapping:
   its own place), and with its time, when k is not NULL, its kernel
   stack k[nk] (TSK_KSAMPLE); then 20 ms of running. */
static void
sample(uint32_t tid, const uint64_t *pc, const uint64_t *k, size_t nk)
{
	uint64_t ts = fx_ev(&F, tid, TT_STACK, tid, TSK_SAMPLE, 0, 0);

	F.ev[F.n - 1].blob = pc;
	F.ev[F.n - 1].blob_len = sizeof(*pc);
	if (k != NULL) {
		fx_ev(&F, tid, TT_STACK, tid, TSK_KSAMPLE, 0, 0);
		F.ev[F.n - 1].ts = ts;
		F.ev[F.n - 1].blob = k;
		F.ev[F.n - 1].blob_len = (uint32_t)(nk * sizeof(*k));
	}
	F.ts += 20 * MS;
}

/*
 * M waits in wait4 for its child H, which runs 500 ms: 6 samples at one
 * place P, 4 of them in the kernel in pipe_read called by vfs_read (at
 * other offsets each time), 1 in other_fn, 1 in user code; 4 samples at
 * another place Q, all in other_fn, the most frequent kernel place of
 * all the samples. The culprit's stacks: its sample at P (6 of 10), then
 * the kernel stack of P's samples (pipe_read, 4 of 6), with the time
 * of the last one of them, and no other.
 */
Test(diag_stack, busy_culprit_kernel_stack_of_its_place)
{
	enum { M = 100, H = 101 };
	const uint64_t K = 0xffffffff81400000ULL;
	static const uint64_t P = 0x7000, Q = 0x8000;
	static const uint64_t pr[4][2] = { { K + 0x10, K + 0x105 },
	    { K + 0x20, K + 0x106 }, { K + 0x30, K + 0x105 },
	    { K + 0x10, K + 0x107 } };
	static const uint64_t other[2] = { K + 0x210, K + 0x105 };
	uint64_t ts = 0;

	fx_init(&F);
	fx_thread(&F, M, M, "main");
	fx_ev(&F, 0, TT_KSYM, K, 0x100, 0, 0);
	fx_blob(&F, "pipe_read");
	fx_ev(&F, 0, TT_KSYM, K + 0x100, 0x80, 0, 0);
	fx_blob(&F, "vfs_read");
	fx_ev(&F, 0, TT_KSYM, K + 0x200, 0x80, 0, 0);
	fx_blob(&F, "other_fn");
	fx_fork(&F, M, H, "child");
	fx_block(&F, M, H, SYS_wait4, (uint64_t)-1);
	F.ts += 40 * MS;
	for (int i = 0; i < 4; i++) {
		sample(H, &P, pr[i], 2);
		if (i == 3)	/* the place's last: the one shown */
			ts = F.ev[F.n - 1].ts;
		sample(H, &Q, other, 2);
	}
	sample(H, &P, other, 2);
	sample(H, &P, NULL, 0);
	F.ts += 200 * MS;
	fx_ev(&F, H, TT_WAKING, M, 0, 120, 0);
	fx_exit(&F, H, M);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_wait4, H, 0, 0);
	fx_block(&F, M, 0, SYS_read, 5);
	struct graph *g = fx_build(&F, NULL);
	cr_assert_not_null(g);
	struct diag_opts o = { .threshold_ns = 100 * MS };
	struct diag *d = NULL;
	cr_assert_eq(diag_new(g, &o, &d, NULL), 0);
	cr_assert_geq(diag_nhangs(d), 1);
	cr_assert_eq(diag_hang(d, 0)->th.tid, M);
	const struct diag_stack *us = NULL, *ks = NULL;
	size_t nks = 0;
	for (size_t i = 0; i < diag_nstacks(d, 0); i++) {
		const struct diag_stack *s = diag_stack(d, 0, i);
		if (s->role != DIAG_STACK_CULPRIT)
			continue;
		if (s->kind == TSK_SAMPLE)
			us = s;
		else if (s->kind == TSK_KSAMPLE && ks == NULL)
			ks = s;
		nks += s->kind == TSK_KSAMPLE;
	}
	cr_assert_not_null(us);
	cr_assert_eq(us->frames[0], P);
	cr_assert_eq(us->samples, 6);
	cr_assert_eq(us->of, 10);
	cr_assert_not_null(ks);
	cr_assert_eq(nks, 1);
	cr_assert_eq(ks->samples, 4);
	cr_assert_eq(ks->of, 6);
	cr_assert_eq(ks->ts, ts);
	cr_assert_not_null(ks->symbols);
	/* the innermost frame is where the code was: named as it is */
	cr_assert_str_eq(ks->symbols[0], "pipe_read+0x10");
	cr_assert_str_eq(ks->symbols[1], "vfs_read+0x7");
	cr_assert_str_eq(diag_stack_kind_name(ks->kind), "ksample");
	diag_free(d);
	graph_free(g);
}
