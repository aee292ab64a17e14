/*
 * test-diag-library.c: the streaming pass's library of similar nodes
 * (diag-scan-sim.c) names the waits the whole graph picks, and a hang
 * held to a window of the memory bound keeps its wait whole
 * (diag-search.c's tile(), struct graph_seed), as the whole graph has
 * them.
 *
 * Fixtures built in code: a main thread M polls, and after a message or
 * a wake-up from X1 or X2 waits on a lock (fx_lock_wait()); Z naps
 * between M's turns, so that a window of a few hundred events holds one
 * turn only.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>
#include <sys/syscall.h>

#include "engine/diag-local.h"
#include "graph-fixture.h"
#include "search-fixture.h"

#define MS 1000000ULL

static struct fx F;

enum { M = 100, X1 = 400, X2 = 401, Z = 402, X3 = 403, X4 = 404 };
#define LOCK 0x1000
#define POLLA 0x4000
#define SK1 0x8001
#define SK2 0x8002

/* The search's text report of the fixture's trace r. */
static char *
search_text(struct trace_reader *r, const struct diag_opts *o,
    const char *max)
{
	return search_text_at(r, o, max, F.ev[0].ts);
}

/* Z naps n times: events enough between M's turns that a window of 300
   events holds one turn. */
static void
naps(int n)
{
	for (int i = 0; i < n; i++) {
		fx_run(&F, 0, Z);
		fx_nap(&F, Z, 0, 0, 0);
		F.ts += MS / 5;
	}
}

/* M, in its poll, and X1, X2, Z asleep. */
static void
library_fixture(void)
{
	fx_init(&F);
	fx_thread(&F, M, M, "main");
	fx_thread(&F, X1, X1, "peer");
	fx_thread(&F, X2, X2, "other");
	fx_thread(&F, Z, Z, "napper");
	fx_ev(&F, M, TT_SYS_ENTER, SYS_poll, POLLA, 0, 0);
	fx_ev(&F, M, TT_SWITCH, 1, 0, 120, 0);
	fx_block(&F, X1, 0, SYS_nanosleep, 0);
	fx_block(&F, X2, 0, SYS_nanosleep, 0);
	fx_block(&F, Z, 0, SYS_nanosleep, 0);
	F.ts += 5 * MS;
}

/* The whole graph of the fixture in F picks for M's hang the wait that
   ended at end, and the pass names that wait among those M's hang may
   take (struct dcand's sim), so that a graph of a part of the trace
   holds it too; ranked prio (DS_*) when not -1. */
static void
library_names_as(uint64_t end, int prio)
{
	struct diag_opts o = { .threshold_ns = 10 * MS };
	char dir[] = "/tmp/argus-search-XXXXXX";
	struct trace_reader *r = fx_store(&F, dir);
	struct dscan sc;

	cr_assert_not_null(r);
	char *b = whole_text(r, &o, NULL);
	char *pb = picks(b);
	/* the first hang's pick: when it began, from the trace's start (the
	   wait began 100 us and a few events before its end) */
	const char *at = strstr(pb, "): at ");
	double want = (double)(end - 100000 - F.ev[0].ts) / 1e9;
	cr_assert(strncmp(b, "hang 1: main", 12) == 0 && at != NULL &&
	    at < strchr(pb, '\n') && fabs(atof(at + 6) - want) < 1e-5,
	    "%s\n(wanted the wait at %.6f s)", b, want);
	cr_assert_eq(trace_reader_seek(r, 0), 0);
	cr_assert_eq(diag_scan(r, NULL, &o, &sc), 0);
	const struct dcand *h = NULL;
	for (size_t i = 0; i < sc.nc; i++)
		if (sc.c[i].tid == M && sc.c[i].what == DC_WAIT &&
		    sc.c[i].en.aux == SYS_futex)
			h = &sc.c[i];
	cr_assert_not_null(h, "M's hang is a candidate");
	int named = 0;
	for (uint32_t i = 0; i < h->nsim; i++)
		if (h->sim[i][1] == end) {
			named = 1;
			cr_assert(prio < 0 || h->simprio[i] == prio,
			    "the pass ranks it %u, not %d", h->simprio[i],
			    prio);
		}
	cr_assert(named, "the pass names %u waits, none of them the one "
	    "ending at %llu", h->nsim, (unsigned long long)end);
	diag_scan_free(&sc);
	free(pb);
	free(b);
	cr_assert_eq(fx_unstore(r, dir), 0);
}

static void
library_names(uint64_t end)
{
	library_names_as(end, -1);
}

/* M's turns: one after a message from X1 (its wait ends at *end), three
   after messages from X2, and its hang, 50 ms, after one from X1. */
static void
peers_fixture(uint64_t *end)
{
	library_fixture();
	fx_lock_wait(&F, M, X1, SK1, LOCK, POLLA, 100, end);
	naps(150);
	for (int i = 0; i < 3; i++) {
		fx_lock_wait(&F, M, X2, SK2, LOCK, POLLA, 100, NULL);
		naps(150);
	}
	fx_lock_wait(&F, M, X1, SK1, LOCK, POLLA, 50000, NULL);
	naps(100);
}

/*
 * M's hang follows a message from X1; the waits of its class since the
 * one after X1's last message followed messages from X2, which the
 * whole graph's similar nodes may not be (they talked to another
 * process). The pass keeps the waits of a class by the peers of their
 * runs, and names X1's, far before the hang.
 */
Test(diag_library, keeps_each_peers_waits)
{
	uint64_t end;

	peers_fixture(&end);
	library_names(end);
}

/*
 * M's hang is ended by X1; the waits of its class since X1's last were
 * ended by X2, and the whole graph ranks first those the hang's waker
 * ended. The pass keeps the latest wait of each of the last processes
 * that ended one, and names X1's.
 */
Test(diag_library, keeps_each_wakers_last_wait)
{
	uint64_t end;

	library_fixture();
	fx_lock_wait(&F, M, X1, 0, LOCK, POLLA, 100, &end);
	naps(150);
	for (int i = 0; i < 3; i++) {
		fx_lock_wait(&F, M, X2, 0, LOCK, POLLA, 100, NULL);
		naps(150);
	}
	fx_lock_wait(&F, M, X1, 0, LOCK, POLLA, 50000, NULL);
	naps(100);
	library_names(end);
}

/* Threads X3 and X4 (403, 404), asleep, for more wakers than a class
   record keeps. */
static void
more_wakers(void)
{
	fx_thread(&F, X3, X3, "third");
	fx_thread(&F, X4, X4, "fourth");
	fx_block(&F, X3, 0, SYS_nanosleep, 0);
	fx_block(&F, X4, 0, SYS_nanosleep, 0);
}

/*
 * M's hang is ended by X1; since X1's last wait of its class, X2, X3
 * and X4 ended the others, more processes than a class's record keeps
 * the waits of. The pass keeps the latest wait that X1 ended of its
 * own, and names it first (the graph ranks it first).
 */
Test(diag_library, keeps_the_wakers_wait_past_other_wakers)
{
	uint64_t end;

	library_fixture();
	more_wakers();
	fx_lock_wait(&F, M, X1, 0, LOCK, POLLA, 100, &end);
	naps(150);
	for (uint32_t x = X2; x <= X4; x++) {
		fx_lock_wait(&F, M, x, 0, LOCK, POLLA, 100, NULL);
		naps(150);
	}
	fx_lock_wait(&F, M, X1, 0, LOCK, POLLA, 50000, NULL);
	naps(100);
	library_names_as(end, DS_PEER);
}

/*
 * M hangs first, ended by X1; after it X2 ends a wait of its class, then
 * X1. The graph ranks first, of the waits after a hang, those its waker
 * ended: the pass waits past X2's for X1's and names it.
 */
Test(diag_library, waits_for_the_wakers_wait_after)
{
	uint64_t end;

	library_fixture();
	naps(50);
	fx_lock_wait(&F, M, X1, 0, LOCK, POLLA, 50000, NULL);
	naps(150);
	fx_lock_wait(&F, M, X2, 0, LOCK, POLLA, 100, NULL);
	naps(150);
	fx_lock_wait(&F, M, X1, 0, LOCK, POLLA, 100, &end);
	naps(100);
	library_names_as(end, DS_AFTER_PEER);
}

/*
 * M's hang is ended by no thread (it runs again woken by none, as a
 * trace that lost the wake-up shows it), after X2 woke its poll. The
 * graph takes as its peer the process that ended the latest wait of its
 * call and resource before it, X1, not X2, whose wake-up came before
 * the wait: the pass ranks X1's wait as the peer's.
 */
Test(diag_library, a_wake_up_before_a_wait_did_not_end_it)
{
	uint64_t end;

	library_fixture();
	fx_lock_wait(&F, M, X2, 0, LOCK, POLLA, 100, NULL);
	naps(150);
	fx_lock_wait(&F, M, X1, 0, LOCK, POLLA, 100, &end);
	naps(150);
	fx_run(&F, 0, X2);		/* X2 wakes M's poll */
	fx_nap(&F, X2, 0, M, M);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_poll, 1, 0, 0);
	fx_block(&F, M, 0, SYS_futex, LOCK);
	F.ts += 50 * MS;
	fx_run(&F, 0, M);		/* woken by none */
	fx_ev(&F, M, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	fx_ev(&F, M, TT_SYS_ENTER, SYS_poll, POLLA, 0, 0);
	fx_ev(&F, M, TT_SWITCH, 1, 0, 120, 0);
	naps(100);
	library_names_as(end, DS_PEER);
}

/* M blocks in its lock for ms milliseconds and runs again woken by no
   thread; its poll after. */
static void
lock_wait_woken_by_none(uint64_t ms)
{
	fx_block(&F, M, 0, SYS_futex, LOCK);
	F.ts += ms * MS;
	fx_run(&F, 0, M);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	fx_ev(&F, M, TT_SYS_ENTER, SYS_poll, POLLA, 0, 0);
	fx_ev(&F, M, TT_SWITCH, 1, 0, 120, 0);
}

/*
 * X1 ends a lock wait of M; M's next one, short, is ended by no thread,
 * and so is its hang. The graph takes as the hang's peer the process
 * that ended the latest wait of its call and resource that one ended,
 * going back past those none did: X1, whose wait the pass ranks as the
 * peer's.
 */
Test(diag_library, the_peer_of_a_hang_no_one_woke_is_one_that_woke)
{
	uint64_t end;

	library_fixture();
	fx_lock_wait(&F, M, X1, 0, LOCK, POLLA, 100, &end);
	naps(150);
	lock_wait_woken_by_none(1);
	naps(150);
	fx_run(&F, 0, M);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_poll, 1, 0, 0);
	lock_wait_woken_by_none(50);
	naps(100);
	library_names_as(end, DS_PEER);
}

/* The first hang of report t, to the blank line or the report's notes
   after it, without the note that its answer comes from a part of the
   trace (malloc'd). */
static char *
first_hang(const char *t)
{
	char *out = strdup(t), *cut;

	if ((cut = strstr(out, "\n\n")) != NULL)
		*cut = 0;
	if ((cut = strstr(out, "\nnote: ")) != NULL)
		*cut = 0;
	if ((cut = strstr(out, "\n  note: answer from")) != NULL)
		*cut = 0;
	for (size_t n = strlen(out); n > 0 && out[n - 1] == '\n'; n--)
		out[n - 1] = 0;
	return out;
}

/*
 * The fixture in F, searched with windows held to max events: its first
 * hang is the whole graph's (but for the note that a part of the trace
 * answered, which it has), and the whole graph's has want.
 */
static void
held_first_hang(const char *max, const char *want)
{
	struct diag_opts o = { .threshold_ns = 10 * MS };
	char dir[] = "/tmp/argus-search-XXXXXX";
	struct trace_reader *r = fx_store(&F, dir);

	cr_assert_not_null(r);
	char *b = whole_text(r, &o, NULL);
	char *a = search_text(r, &o, max);
	char *ha = first_hang(a), *hb = first_hang(b);
	cr_assert_not_null(strstr(hb, want), "%s\n(wanted %s)", b, want);
	cr_assert_str_eq(ha, hb, "the search says\n%s\nthe whole graph says\n"
	    "%s", a, b);
	cr_assert_not_null(strstr(a, "of the trace only: it may rest on more"),
	    "%s", a);
	free(ha);
	free(hb);
	free(a);
	free(b);
	cr_assert_eq(fx_unstore(r, dir), 0);
}

/*
 * M's hang, held to a window of 300 events, holds fewer than those from
 * what its making reads (a lead of 50 ms of naps) to its end: its window
 * holds the whole wait and what history fits before it, so that it is
 * the whole graph's hang, blocked in its futex, not one cut by the
 * window's end (a thread running since then).
 */
Test(diag_library, held_window_holds_the_wait)
{
	uint64_t end;

	peers_fixture(&end);
	held_first_hang("300", "hang 1: main (100) blocked for 50.0 ms");
}

/*
 * M's hang holds more events than a window may (400 naps of Z while it
 * waits): its window ends a little after it and holds what fits before
 * its end, and the pass's waits in one call, M's and that of X1, which
 * woke it, are loaded from their start (struct graph_seed): the same
 * wait, ended by the same waker, asleep as long, as in the whole graph,
 * not threads running since the window opened.
 */
Test(diag_library, held_wait_longer_than_a_window_from_its_start)
{
	library_fixture();
	fx_lock_wait(&F, M, X1, 0, LOCK, POLLA, 100, NULL);
	naps(150);
	fx_run(&F, 0, X1);		/* X1 sleeps again */
	fx_nap(&F, X1, 0, 0, 0);
	fx_run(&F, 0, M);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_poll, 1, 0, 0);
	fx_block(&F, M, 0, SYS_futex, LOCK);
	naps(400);
	fx_run(&F, 0, X1);
	fx_nap(&F, X1, 0, M, M);
	fx_ev(&F, M, TT_SYS_EXIT, SYS_futex, 0, 0, 0);
	fx_ev(&F, M, TT_SYS_ENTER, SYS_poll, POLLA, 0, 0);
	fx_ev(&F, M, TT_SWITCH, 1, 0, 120, 0);
	naps(100);
	held_first_hang("1000", "\n  culprits:\n    1. peer (400) blocked "
	    "81.6 ms: sleep on sleep (nanosleep)");
}
