/*
 * test-sync.c: criterion tests of the clock alignment of several hosts'
 * traces from their messages (engine/sync.c, sync_bounds()): the pairs
 * are given as received minus sent, each way.
 */
#include <criterion/criterion.h>

#include "engine/engine.h"

/* b's clock 3000 ns ahead of a's; latencies of 5 to 12 ns each way */
Test(sync, both_ways_bound_the_offset)
{
	int64_t ab[] = { 3000 + 5, 3000 + 12, 3000 + 7 };
	int64_t ba[] = { -3000 + 10, -3000 + 7 };
	struct sync_offset o;

	sync_bounds(ab, 3, ba, 2, &o);
	cr_assert(o.have_lo && o.have_hi && o.consistent);
	cr_assert_eq(o.ab, 3);
	cr_assert_eq(o.ba, 2);
	cr_assert_eq(o.hi, 3005, "the fastest message to b: %lld",
	    (long long)o.hi);
	cr_assert_eq(o.lo, 2993, "the fastest message from b: %lld",
	    (long long)o.lo);
	cr_assert(o.lo <= 3000 && 3000 <= o.hi);
}

Test(sync, one_way_gives_one_bound)
{
	int64_t ab[] = { -500 + 40 };
	struct sync_offset o;

	sync_bounds(ab, 1, NULL, 0, &o);
	cr_assert(o.have_hi && !o.have_lo && o.consistent);
	cr_assert_eq(o.hi, -460);
	sync_bounds(NULL, 0, ab, 1, &o);
	cr_assert(o.have_lo && !o.have_hi && o.consistent);
	cr_assert_eq(o.lo, 460);
}

/* clocks that drift: early messages say one offset, late ones another,
   and no offset fits both */
Test(sync, crossing_bounds_are_inconsistent)
{
	int64_t ab[] = { 1000 + 5 };
	int64_t ba[] = { -2000 + 5 };
	struct sync_offset o;

	sync_bounds(ab, 1, ba, 1, &o);
	cr_assert(o.have_lo && o.have_hi);
	cr_assert_not(o.consistent);
	cr_assert_gt(o.lo, o.hi);
}

Test(sync, no_pairs_no_bounds)
{
	struct sync_offset o;

	sync_bounds(NULL, 0, NULL, 0, &o);
	cr_assert(!o.have_lo && !o.have_hi && o.consistent);
	cr_assert_eq(o.ab + o.ba, 0);
}
