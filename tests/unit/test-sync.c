/*
 * test-sync.c: criterion tests of the clock alignment of several hosts'
 * traces from their messages (engine/sync-fit.c): sync_bounds() takes
 * the pairs as received minus sent, each way; sync_fit() takes their two
 * times (struct sync_pair), made here from a clock b of a given offset
 * and drift against a and latencies that vary from pair to pair.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>

#include "engine/engine.h"

#define T0 1000000000000ULL	/* 1000 s on a's clock */
#define SEC 1000000000ULL

/* b's clock at a's time ta: t0's offset off, drifting ppm */
static uint64_t
b_of(uint64_t ta, double off, double ppm)
{
	return (uint64_t)llround((double)ta + off + ppm * 1e-6 *
	    ((double)ta - (double)T0));
}

/* A latency of at least min ns that varies from k to k (up to min +
   180 µs), the least at the first and the last of n. */
static uint64_t
lat(size_t k, size_t n, uint64_t min)
{
	if (k == 0 || k == n - 1)
		return min;
	return min + (uint64_t)((k * 2654435761u) >> 7) % 180000;
}

/*
 * n messages each way, one a second from T0 on a's clock, b's replies
 * half a second after: b at offset off (ns at T0) drifting ppm; the
 * latencies at least lab from a to b, lba from b to a.
 */
static void
exchange(struct sync_pair *ab, struct sync_pair *ba, size_t n, double off,
    double ppm, uint64_t lab, uint64_t lba)
{
	for (size_t k = 0; k < n; k++) {
		uint64_t s = T0 + k * SEC;
		ab[k].send = s;
		ab[k].recv = b_of(s + lat(k, n, lab), off, ppm);
		uint64_t r = s + SEC / 2;
		ba[k].send = b_of(r, off, ppm);
		ba[k].recv = r + lat(n - 1 - k, n, lba);
	}
}

/* b's clock 3000 ns ahead of a's; latencies of 5 to 12 ns each way */
Test(sync, both_ways_bound_the_offset)
{
	int64_t ab[] = { 3000 + 5, 3000 + 12, 3000 + 7 };
	int64_t ba[] = { -3000 + 10, -3000 + 7 };
	struct sync_offset o;

	sync_bounds(ab, 3, ba, 2, &o);
	cr_assert(o.have_lo && o.have_hi && o.consistent && o.have_est);
	cr_assert_eq(o.ab, 3);
	cr_assert_eq(o.ba, 2);
	cr_assert_eq(o.hi, 3005, "the fastest message to b: %lld",
	    (long long)o.hi);
	cr_assert_eq(o.lo, 2993, "the fastest message from b: %lld",
	    (long long)o.lo);
	cr_assert_eq(o.est, 2999, "the middle of the bounds: %lld",
	    (long long)o.est);
	cr_assert_eq(o.uncertainty, 6);
	cr_assert(!o.have_drift && o.drift == 0 && o.cross == 0);
}

/* 2.5 s, no drift, 100 s of messages with latencies of 20 µs and more:
   a constant offset, the truth within its bounds and its uncertainty */
Test(sync, constant_offset_within_its_bounds)
{
	struct sync_pair ab[101], ba[101];
	struct sync_offset o;
	int64_t off = 2500000000;

	exchange(ab, ba, 101, (double)off, 0, 20000, 30000);
	sync_fit(ab, 101, ba, 101, &o);
	cr_assert(o.have_est && o.consistent && !o.have_drift);
	cr_assert_eq(o.ab, 101);
	cr_assert_eq(o.ba, 101);
	cr_assert_eq(o.hi, off + 20000);
	cr_assert_eq(o.lo, off - 30000);
	cr_assert_eq(o.est, off - 5000, "the middle: %lld", (long long)o.est);
	cr_assert_eq(o.uncertainty, 25000);
	cr_assert_leq(llabs(o.est - off), o.uncertainty);
	cr_assert_eq(o.ref, T0 + (100 * SEC + SEC / 2 + 30000) / 2);
	/* b's clock back on a's */
	cr_assert_eq(sync_to_a(&o, T0 + (uint64_t)o.est), T0);
	cr_assert_eq(sync_to_a(&o, 5), 0, "saturates at 0");
}

/* 50 ppm over 100 s (5 ms): the bounds of a constant offset cross by
   far; the line's slope within a few ppm, its offset at ref within the
   least latency */
Test(sync, drift_of_50_ppm_over_100_s)
{
	struct sync_pair ab[101], ba[101];
	struct sync_offset o;
	double off = 2500000000.0, ppm = 50;

	exchange(ab, ba, 101, off, ppm, 20000, 30000);
	sync_fit(ab, 101, ba, 101, &o);
	cr_assert(o.have_lo && o.have_hi && o.lo > o.hi,
	    "a constant offset does not fit");
	cr_assert(o.have_est && o.have_drift && o.consistent && o.cross == 0);
	cr_assert_lt(fabs(o.drift * 1e6 - ppm), 2, "drift %.3f ppm",
	    o.drift * 1e6);
	cr_assert_leq(fabs(o.drift * 1e6 - ppm), o.drift_uncertainty * 1e6,
	    "the truth within the slopes that fit (± %.3f ppm)",
	    o.drift_uncertainty * 1e6);
	cr_assert_gt(o.drift_uncertainty, 0);
	cr_assert_lt(o.drift_uncertainty * 1e6, 2);
	double truth = (double)b_of(o.ref, off, ppm) - (double)o.ref;
	cr_assert_lt(fabs((double)o.est - truth), 20000, "at ref: %lld, "
	    "the truth %.0f", (long long)o.est, truth);
	cr_assert_leq(fabs((double)o.est - truth), (double)o.uncertainty);
	cr_assert_lt(o.uncertainty, 30000);
	/* the line's inverse: b's clock at a time of a back within the
	   least latency */
	for (uint64_t t = T0; t <= T0 + 100 * SEC; t += 10 * SEC) {
		uint64_t back = sync_to_a(&o, b_of(t, off, ppm));
		cr_assert_lt(llabs((long long)(back - t)), 20000,
		    "%llu back as %llu", (unsigned long long)t,
		    (unsigned long long)back);
	}
}

/* the bounds cross by 1.5 ms with two messages each way a second apart
   (1000 ppm): sync_bounds() says so, a line fits them all */
Test(sync, crossing_bounds_fit_with_a_drift)
{
	struct sync_pair ab[2], ba[2];
	int64_t dab[2], dba[2];
	struct sync_offset o;

	for (int k = 0; k < 2; k++) {
		uint64_t s = T0 + (uint64_t)k * SEC;
		ab[k] = (struct sync_pair){ s, b_of(s + 5000, 1000, 1000) };
		uint64_t r = s + SEC / 2;
		ba[k] = (struct sync_pair){ b_of(r, 1000, 1000), r + 5000 };
		dab[k] = (int64_t)(ab[k].recv - ab[k].send);
		dba[k] = (int64_t)(ba[k].recv - ba[k].send);
	}
	sync_bounds(dab, 2, dba, 2, &o);
	cr_assert(o.have_lo && o.have_hi && !o.consistent && o.lo > o.hi);
	cr_assert_eq(o.cross, o.lo - o.hi);
	cr_assert_gt(o.cross, 1000000);
	sync_fit(ab, 2, ba, 2, &o);
	cr_assert(o.have_drift && o.consistent && o.cross == 0,
	    "cross %lld", (long long)o.cross);
	cr_assert_gt(o.lo, o.hi, "lo and hi stay the constant's bounds");
	cr_assert_lt(fabs(o.drift * 1e6 - 1000), 20, "drift %.3f ppm",
	    o.drift * 1e6);
	double truth = (double)b_of(o.ref, 1000, 1000) - (double)o.ref;
	cr_assert_leq(fabs((double)o.est - truth), 5000);
}

/* 0.2 ppm over 100 s (20 µs) under latencies of 20 µs and more: the
   bounds do not cross, the drift is not measured */
Test(sync, small_drift_is_not_measured)
{
	struct sync_pair ab[101], ba[101];
	struct sync_offset o;

	exchange(ab, ba, 101, -7000000, 0.2, 20000, 20000);
	sync_fit(ab, 101, ba, 101, &o);
	cr_assert(o.have_est && o.consistent && !o.have_drift);
	cr_assert_leq(o.lo, o.hi);
	cr_assert_eq(o.drift, 0);
}

/* one send stamped 40 µs late: the bounds cross by less than
   SYNC_STAMP_NS, a constant offset with the crossing said */
Test(sync, late_send_is_not_a_drift)
{
	struct sync_pair ab[11], ba[11];
	struct sync_offset o;

	exchange(ab, ba, 11, 4000, 0, 5000, 5000);
	ab[10].send += 40000;
	sync_fit(ab, 11, ba, 11, &o);
	cr_assert(o.have_est && !o.consistent && !o.have_drift);
	cr_assert_eq(o.hi, 4000 + 5000 - 40000);
	cr_assert_eq(o.lo, 4000 - 5000);
	cr_assert_eq(o.cross, 30000, "cross %lld", (long long)o.cross);
	cr_assert_eq(o.est, -16000);
	cr_assert_eq(o.uncertainty, 15000);
}

Test(sync, one_way_gives_one_bound)
{
	int64_t ab[] = { -500 + 40 };
	struct sync_pair p[] = { { T0, T0 - 460 }, { T0 + SEC, T0 + SEC -
	    300 } };
	struct sync_offset o;

	sync_bounds(ab, 1, NULL, 0, &o);
	cr_assert(o.have_hi && !o.have_lo && o.consistent);
	cr_assert_eq(o.hi, -460);
	sync_bounds(NULL, 0, ab, 1, &o);
	cr_assert(o.have_lo && !o.have_hi && o.consistent);
	cr_assert_eq(o.lo, 460);
	/* a to b only: the bound itself, unbounded below */
	sync_fit(p, 2, NULL, 0, &o);
	cr_assert(o.have_est && o.have_hi && !o.have_lo && o.consistent);
	cr_assert(!o.have_drift);
	cr_assert_eq(o.est, -460);
	cr_assert_eq(o.uncertainty, INT64_MAX);
	cr_assert_eq(o.ref, T0 + SEC / 2);
	cr_assert_eq(sync_to_a(&o, UINT64_MAX - 100), UINT64_MAX,
	    "saturates at UINT64_MAX");
	/* b to a only */
	sync_fit(NULL, 0, p, 2, &o);
	cr_assert(o.have_est && o.have_lo && !o.have_hi && !o.have_drift);
	cr_assert_eq(o.est, 460);
	cr_assert_eq(o.uncertainty, INT64_MAX);
	cr_assert_eq(sync_to_a(&o, T0), T0 - 460);
}

/* every receive 1 ms before its send, each way: no offset and no line
   fits; the middle of the crossed bounds, said inconsistent */
Test(sync, receives_before_sends_are_inconsistent)
{
	struct sync_pair ab[10], ba[10];
	struct sync_offset o;

	for (size_t k = 0; k < 10; k++) {
		uint64_t s = T0 + k * SEC / 10;
		ab[k] = (struct sync_pair){ s, s - 1000000 };
		ba[k] = (struct sync_pair){ s + SEC / 20, s + SEC / 20 -
		    1000000 };
	}
	sync_fit(ab, 10, ba, 10, &o);
	cr_assert(o.have_est && !o.consistent && !o.have_drift);
	cr_assert_eq(o.cross, 2000000);
	cr_assert_eq(o.est, 0);
	cr_assert_eq(o.uncertainty, 1000000);
}

/* clocks that drift, one message each way: the slope is not bounded
   (the bounds cross by 2 ms), no offset fits both */
Test(sync, crossing_bounds_are_inconsistent)
{
	int64_t ab[] = { 1000 + 5 };
	int64_t ba[] = { -2000 + 5 };
	struct sync_pair pab[] = { { T0, T0 + 1005 } };
	struct sync_pair pba[] = { { T0 + SEC + 2000000, T0 + SEC - 5 } };
	struct sync_offset o;

	sync_bounds(ab, 1, ba, 1, &o);
	cr_assert(o.have_lo && o.have_hi);
	cr_assert_not(o.consistent);
	cr_assert_gt(o.lo, o.hi);
	sync_fit(pab, 1, pba, 1, &o);
	cr_assert(o.have_est && !o.consistent && !o.have_drift);
	cr_assert_eq(o.lo, 2000005);
	cr_assert_eq(o.hi, 1005);
	cr_assert_eq(o.cross, 1999000);
	cr_assert_eq(o.est, 1000505);
}

Test(sync, no_pairs_no_bounds)
{
	struct sync_offset o;

	sync_bounds(NULL, 0, NULL, 0, &o);
	cr_assert(!o.have_lo && !o.have_hi && o.consistent && !o.have_est);
	cr_assert_eq(o.ab + o.ba, 0);
	sync_fit(NULL, 0, NULL, 0, &o);
	cr_assert(!o.have_lo && !o.have_hi && o.consistent && !o.have_est);
	cr_assert(!o.have_drift);
	cr_assert_eq(o.ab + o.ba, 0);
	cr_assert_eq(sync_to_a(&o, 12345), 12345);
}
