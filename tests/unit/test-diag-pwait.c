/*
 * test-diag-pwait.c: criterion tests, on traces built in code, of the
 * wait of a process as a whole (engine/diag-pwait.c): a runtime that
 * runs its tasks on threads of its own waits for a reply with a deadline
 * and retries, so that no thread waits throughout.
 *
 * Threads: A and B of the runtime's process (A polls with a deadline;
 * when it passes, A wakes B, which wakes A back, the timer's task run on
 * another thread); S, a server of another process, busy on CPU 1 with
 * the request A sent it until it replies.
 */
#include <sys/syscall.h>

#include <criterion/criterion.h>

#include "graph-fixture.h"

#define MS 1000000ULL

static struct fx F;

enum { A = 300, B = 301, S = 400 };
#define EPA 0x4100	/* A's epoll descriptor */
#define REQ 0x8002	/* the request's socket, S's end */
#define REP 0x8001	/* the reply's socket, A's end */

/*
 * A sends the request and waits for the reply in n rounds: an epoll
 * slice of 240 ms that times out, then a futex wait that B ends; S
 * replies during the slice after. When s_wakes_b, S wakes B once, after
 * round n / 2 (a crossing of the process's border).
 */
static void
runtime_wait(unsigned n, int s_wakes_b)
{
	fx_init(&F);
	fx_thread(&F, A, A, "rt");
	fx_thread(&F, B, A, "rt");
	fx_thread(&F, S, S, "server");
	fx_block(&F, B, 0, SYS_futex, 0x5001);
	F.cpu = 1;
	fx_run(&F, 0, S);
	F.cpu = 0;
	fx_run(&F, 0, A);
	fx_ev(&F, A, TT_SYS_ENTER, SYS_write, 3, 0, 0);
	fx_ev(&F, A, TT_SK_DATA_READY, REQ, 1, 0, 0);
	fx_ev(&F, A, TT_SYS_EXIT, SYS_write, 8, 0, 0);
	for (unsigned k = 0; k < n; k++) {
		fx_slice(&F, A, SYS_epoll_wait, EPA, 240, 0);
		fx_ev(&F, A, TT_WAKING, B, 0, 120, 0);
		fx_block(&F, A, B, SYS_futex, 0x5000);
		fx_ev(&F, B, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
		fx_ev(&F, B, TT_WAKING, A, 0, 120, 0);
		fx_block(&F, B, A, SYS_futex, 0x5001);
		fx_ev(&F, A, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
		if (s_wakes_b && k == n / 2) {
			F.cpu = 1;
			fx_ev(&F, S, TT_WAKING, B, 0, 120, 0);
			F.cpu = 0;
			fx_block(&F, A, B, SYS_futex, 0x5000);
			fx_ev(&F, B, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
			fx_ev(&F, B, TT_WAKING, A, 0, 120, 0);
			fx_block(&F, B, A, SYS_futex, 0x5001);
			fx_ev(&F, A, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
		}
	}
	fx_block(&F, A, 0, SYS_epoll_wait, EPA);
	F.ts += 100 * MS;
	F.cpu = 1;
	fx_ev(&F, S, TT_SOCK_RECV, REQ, 1, 0, 8);
	fx_ev(&F, S, TT_SYS_ENTER, SYS_write, 9, 0, 0);
	fx_ev(&F, S, TT_SK_DATA_READY, REP, 1, 0, 0);
	fx_ev(&F, S, TT_WAKING, A, 0, 120, 0);
	fx_ev(&F, S, TT_SYS_EXIT, SYS_write, 8, 0, 0);
	fx_block(&F, S, 0, SYS_read, 9);
	F.cpu = 0;
	fx_run(&F, 0, A);
	fx_ev(&F, A, TT_SYS_EXIT, SYS_epoll_wait, 1, 0, 0);
	fx_ev(&F, A, TT_SOCK_RECV, REP, 1, 0, 10);
	fx_block(&F, A, 0, SYS_nanosleep, 0);
	F.ts += 5 * MS;
}

static struct diag *
diagnose(struct graph **g, uint32_t pid, uint64_t threshold)
{
	struct diag_opts o = { .threshold_ns = threshold, .pid = pid };
	struct diag *d = NULL;

	*g = fx_build(&F, NULL);
	cr_assert_not_null(*g);
	cr_assert_eq(diag_new(*g, &o, &d, NULL), 0);
	return d;
}

/* Named, the process's wait is the hang: from A's first wait after the
   request to the reply, S the culprit, the note saying why. */
Test(diag_pwait, a_runtime_waits_as_a_whole)
{
	struct graph *g;

	runtime_wait(10, 0);
	struct diag *d = diagnose(&g, A, 1000 * MS);
	cr_assert_eq(diag_nhangs(d), 1);
	const struct diag_hang *h = diag_hang(d, 0);
	cr_expect_eq(h->th.tid, A);
	cr_expect_eq(h->kind, DIAG_BLOCKED);
	cr_expect_geq(h->end_ns - h->start_ns, 2400 * MS);
	cr_expect_geq(h->wait.slices, 20, "A's waits in it: %d",
	    h->wait.slices);
	int named = 0;
	for (size_t i = 0; i < diag_nculprits(d, 0); i++)
		named |= diag_culprit(d, 0, i)->th.tid == S;
	cr_expect(named, "the busy server is the culprit");
	int noted = 0;
	for (size_t i = 0; i < diag_nnotes(d, 0); i++)
		noted |= strstr(diag_note(d, 0, i), "the process did") != NULL;
	cr_expect(noted, "a note says the process waited as a whole");
	diag_free(d);
	graph_free(g);
}

/* Without a name, an idle process is no hang: only the busy server's
   is found. */
Test(diag_pwait, only_for_a_process_named)
{
	struct graph *g;

	runtime_wait(10, 0);
	struct diag *d = diagnose(&g, 0, 1000 * MS);
	for (size_t i = 0; i < diag_nhangs(d); i++)
		cr_expect_eq(diag_hang(d, i)->th.tid, S, "hang %zu of %u", i,
		    diag_hang(d, i)->th.tid);
	diag_free(d);
	graph_free(g);
}

/* A wake-up from another process ends the process's wait: the halves
   are each shorter than the threshold. */
Test(diag_pwait, a_crossing_ends_it)
{
	struct graph *g;

	runtime_wait(10, 1);
	struct diag *d = diagnose(&g, A, 1600 * MS);
	cr_expect_eq(diag_nhangs(d), 0);
	diag_free(d);
	graph_free(g);
	runtime_wait(10, 0);
	d = diagnose(&g, A, 1600 * MS);
	cr_expect_eq(diag_nhangs(d), 1, "the same wait without it is one");
	diag_free(d);
	graph_free(g);
}
