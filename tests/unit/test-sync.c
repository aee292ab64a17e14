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

/*
 * The offsets at o->ref of slope d that fit every pair, straight from the
 * pairs, less o->est: at most the least received minus sent from a to b,
 * at least the greatest sent minus received from b to a. Its width.
 */
static double
room(const struct sync_pair *ab, size_t nab, const struct sync_pair *ba,
    size_t nba, const struct sync_offset *o, double d, double *lo,
    double *hi)
{
	*hi = INFINITY;
	*lo = -INFINITY;
	for (size_t i = 0; i < nab; i++) {
		double v = (double)((int64_t)(ab[i].recv - ab[i].send) -
		    o->est) - d * (double)(int64_t)(ab[i].send - o->ref);
		*hi = v < *hi ? v : *hi;
	}
	for (size_t i = 0; i < nba; i++) {
		double v = (double)((int64_t)(ba[i].send - ba[i].recv) -
		    o->est) - d * (double)(int64_t)(ba[i].recv - o->ref);
		*lo = v > *lo ? v : *lo;
	}
	return *hi - *lo;
}

/* The slope where the room at d0 (fits) and d1 (does not) ends. */
static double
edge_of_fit(const struct sync_pair *ab, size_t nab,
    const struct sync_pair *ba, size_t nba, const struct sync_offset *o,
    double d0, double d1)
{
	double lo, hi;

	for (int i = 0; i < 200; i++) {
		double m = d0 + (d1 - d0) / 2;
		if (room(ab, nab, ba, nba, o, m, &lo, &hi) >= 0)
			d0 = m;
		else
			d1 = m;
	}
	return d0;
}

/*
 * o's line and uncertainties against the lines that fit every pair,
 * found from the pairs alone: the line fits; the slopes that fit span
 * 2 drift_uncertainty, to 0.1 %; the offsets at ref of the lines that fit
 * (at 2001 slopes) span 2 uncertainty, to 0.1 % and a ns, est among them.
 */
static void
check_region(const struct sync_pair *ab, size_t nab,
    const struct sync_pair *ba, size_t nba, const struct sync_offset *o)
{
	double lo, hi, du = o->drift_uncertainty, omin = INFINITY,
	    omax = -INFINITY;

	cr_assert_geq(room(ab, nab, ba, nba, o, o->drift, &lo, &hi), 0);
	cr_assert(lo <= 0.5 && hi >= -0.5, "the line fits: [%g, %g]", lo,
	    hi);
	double d0 = edge_of_fit(ab, nab, ba, nba, o, o->drift, o->drift -
	    10 * du - 1e-9);
	double d1 = edge_of_fit(ab, nab, ba, nba, o, o->drift, o->drift +
	    10 * du + 1e-9);
	cr_assert_lt(fabs((d1 - d0) / 2 - du), 1e-3 * du, "the slopes that "
	    "fit: %+.4f to %+.4f ppm about the drift, uncertainty %.4f",
	    (d0 - o->drift) * 1e6, (d1 - o->drift) * 1e6, du * 1e6);
	for (int k = 0; k <= 2000; k++) {
		room(ab, nab, ba, nba, o, d0 + (d1 - d0) * k / 2000, &lo, &hi);
		omin = lo < omin ? lo : omin;
		omax = hi > omax ? hi : omax;
	}
	double u = (double)o->uncertainty;
	cr_assert_lt(fabs((omax - omin) / 2 - u), 1e-3 * u + 1,
	    "offsets at ref within [%+.0f, %+.0f] of est, uncertainty %.0f",
	    omin, omax, u);
	cr_assert(omin <= 0.5 && omax >= -0.5);
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
   least latency (20 µs, the last message to b takes 60) */
Test(sync, drift_of_50_ppm_over_100_s)
{
	struct sync_pair ab[101], ba[101];
	struct sync_offset o;
	double off = 2500000000.0, ppm = 50;

	exchange(ab, ba, 101, off, ppm, 20000, 30000);
	ab[100].recv += 40000;	/* not the least latency at both ends */
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
	check_region(ab, 101, ba, 101, &o);
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
	check_region(ab, 2, ba, 2, &o);
}

/* two messages each way, a second apart, 1000 ppm, latencies that
   differ: the offsets at ref of the lines that fit reach further than
   the line's own room, above (the first) or below (the second) */
Test(sync, uneven_latencies_widen_the_offsets)
{
	static const uint64_t lat[2][4] = {
		{ 38000, 32000, 41000, 20000 },
		{ 16000, 22000, 23000, 34000 },
	};
	struct sync_pair ab[2], ba[2];
	struct sync_offset o;
	double lo, hi;

	for (int c = 0; c < 2; c++) {
		for (int k = 0; k < 2; k++) {
			uint64_t s = T0 + (uint64_t)k * SEC, r = s + SEC / 2;
			ab[k] = (struct sync_pair){ s, b_of(s + lat[c][k], 1000,
			    1000) };
			ba[k] = (struct sync_pair){ b_of(r, 1000, 1000), r +
			    lat[c][2 + k] };
		}
		sync_fit(ab, 2, ba, 2, &o);
		cr_assert(o.have_drift && o.consistent);
		double w = room(ab, 2, ba, 2, &o, o.drift, &lo, &hi);
		cr_assert_gt((double)o.uncertainty, w / 2 + 1000,
		    "case %d: uncertainty %lld, the line's room %.0f", c,
		    (long long)o.uncertainty, w);
		check_region(ab, 2, ba, 2, &o);
	}
}

/* 1000 ppm, least latency 5 µs, one send amid the others stamped 15 µs
   late (its receive 10 µs before it): no line fits, their bounds cross
   by 5 µs at least; the line that misses by the least is still taken,
   said inconsistent */
Test(sync, drift_with_a_late_send)
{
	struct sync_pair ab[11], ba[11];
	struct sync_offset o;

	exchange(ab, ba, 11, 1000, 1000, 5000, 5000);
	ab[5].recv = b_of(ab[5].send + 5000, 1000, 1000);
	ab[5].send += 15000;
	sync_fit(ab, 11, ba, 11, &o);
	cr_assert(o.have_est && o.have_drift && !o.consistent);
	cr_assert(o.cross > 4990 && o.cross < 5010, "cross %lld",
	    (long long)o.cross);
	cr_assert_lt(fabs(o.drift * 1e6 - 1000), 2, "drift %.3f ppm",
	    o.drift * 1e6);
	cr_assert_geq(o.uncertainty, o.cross / 2);
	cr_assert_lt(o.uncertainty, 20000);
	double truth = (double)b_of(o.ref, 1000, 1000) - (double)o.ref;
	cr_assert_lt(fabs((double)o.est - truth), 10000);
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

/* 30 ppm over a second and a half, two messages each way: a line fits,
   but the bounds cross by less than SYNC_STAMP_NS (35 µs), which a late
   send would explain: a constant offset */
Test(sync, small_crossing_is_not_a_drift)
{
	struct sync_pair ab[2], ba[2];
	struct sync_offset o;

	exchange(ab, ba, 2, 4000, 30, 5000, 5000);
	sync_fit(ab, 2, ba, 2, &o);
	cr_assert(o.have_est && !o.consistent && !o.have_drift);
	cr_assert_eq(o.hi, 9000);
	cr_assert_eq(o.lo, 44000);
	cr_assert_eq(o.cross, 35000);
	cr_assert_eq(o.est, 26500);
	cr_assert_eq(o.uncertainty, 17500);
}

/* one send stamped 40 µs late among messages a second apart: the
   bounds cross by less than SYNC_STAMP_NS, a constant offset with the
   crossing said */
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
