/*
 * sync-fit.c: the line that maps trace a's clock onto trace b's, from
 * the messages paired between them (sync.c pairs them; the contract of
 * struct sync_offset is in engine.h).
 *
 * Each pair is a point (u, v): u a time of a's clock less ref, v b's
 * clock minus a's there, less a base (the constant upper bound), both in
 * ns as doubles. A message from a to b, sent at x on a's clock and
 * received at y on b's, gives v = y - x: the offset plus a latency, so
 * the line lies on or below the point. One from b to a, received at x on
 * a's clock and sent at y on b's, gives v = y - x: the offset less a
 * latency, so the line lies on or above it. Only the lower convex hull
 * of the first points and the upper hull of the second (struct hull,
 * vertices by u) can touch a line. A line of slope d and offset f at ref
 * fits when L(d) <= f <= U(d), with U(d) the least v - d u over the lower
 * hull (concave in d) and L(d) the greatest over the upper hull
 * (convex). Their difference W(d) is concave and piecewise linear, its
 * breakpoints the slopes of the hulls' edges: its maximum is the line
 * with the most room to the pair it comes closest to (or that misses the
 * worst pair by the least), the middle of [L, U] at that slope; the
 * slopes where W falls to zero bound the drifts that fit.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "engine-local.h"

struct pt {
	double u, v;
};

/* A convex chain: n vertices by increasing u, no two with the same u. */
struct hull {
	struct pt *p;
	size_t n;
};

/* a - b, exactly when it fits an int64_t. */
static double
sub64(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_sub_overflow(a, b, &r))
		return (double)a - (double)b;
	return (double)r;
}

/* The middle of a and b, without overflow. */
static int64_t
mid64(int64_t a, int64_t b)
{
	return a / 2 + b / 2 + (a % 2 + b % 2) / 2;
}

/* |a - b| / 2 rounded up, saturating at INT64_MAX. */
static int64_t
half_gap(int64_t a, int64_t b)
{
	uint64_t g = a > b ? (uint64_t)a - (uint64_t)b : (uint64_t)b -
	    (uint64_t)a;

	return (int64_t)(g / 2 + g % 2);
}

/* A double of ns as an int64_t, rounded, saturating. */
static int64_t
to64(double x)
{
	if (!(x < 9.2e18))
		return x != x ? 0 : INT64_MAX;
	if (x < -9.2e18)
		return INT64_MIN;
	return (int64_t)llround(x);
}

static int
by_u_v(const void *x, const void *y)
{
	const struct pt *a = x, *b = y;

	if (a->u != b->u)
		return a->u < b->u ? -1 : 1;
	return a->v < b->v ? -1 : a->v > b->v;
}

static int
by_u_rv(const void *x, const void *y)
{
	const struct pt *a = x, *b = y;

	if (a->u != b->u)
		return a->u < b->u ? -1 : 1;
	return a->v > b->v ? -1 : a->v < b->v;
}

/* > 0 when o, a, b turn counterclockwise. */
static double
turn(const struct pt *o, const struct pt *a, const struct pt *b)
{
	return (a->u - o->u) * (b->v - o->v) - (a->v - o->v) * (b->u - o->u);
}

/*
 * The lower hull (upper when upper) of p[0..n), in place (monotone
 * chain): of points with the same u, the lowest (highest) only.
 */
static struct hull
make_hull(struct pt *p, size_t n, int upper)
{
	struct hull h = { p, 0 };

	qsort(p, n, sizeof(*p), upper ? by_u_rv : by_u_v);
	for (size_t i = 0; i < n; i++) {
		if (h.n > 0 && p[h.n - 1].u == p[i].u)
			continue;
		while (h.n >= 2 && (upper ? turn(&p[h.n - 2], &p[h.n - 1],
		    &p[i]) >= 0 : turn(&p[h.n - 2], &p[h.n - 1], &p[i]) <= 0))
			h.n--;
		p[h.n++] = p[i];
	}
	return h;
}

/* The slope of the edge that ends at vertex k >= 1. */
static double
edge(const struct hull *h, size_t k)
{
	return (h->p[k].v - h->p[k - 1].v) / (h->p[k].u - h->p[k - 1].u);
}

/* The least (the greatest when upper) v - d u over h. */
static double
support(const struct hull *h, double d, int upper)
{
	double best = h->p[0].v - d * h->p[0].u;

	for (size_t i = 1; i < h->n; i++) {
		double x = h->p[i].v - d * h->p[i].u;
		if (upper ? x > best : x < best)
			best = x;
	}
	return best;
}

struct fit {
	const struct hull *lo, *up;	/* under a to b, over b to a */
	double *bk;			/* the breakpoints of W, sorted */
	size_t nbk;
};

static double
width(const struct fit *f, double d)
{
	return support(f->lo, d, 0) - support(f->up, d, 1);
}

static int
by_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

/* The slope in [d0, d1] where U of the lower hull h is greatest, or L
   of the upper hull h (upper) least: where the vertex that gives it
   passes from before ref to after. */
static double
turning(const struct hull *h, int upper, double d0, double d1)
{
	size_t k = 0;

	while (k < h->n && (upper ? h->p[k].u <= 0 : h->p[k].u < 0))
		k++;
	if (k == 0)
		return upper ? d1 : d0;
	if (k == h->n)
		return upper ? d0 : d1;
	double d = edge(h, k);
	return d < d0 ? d0 : d > d1 ? d1 : d;
}

/*
 * The line of f (both hulls' u ranges overlap so W falls on both sides):
 * *d the slope of W's maximum *w, *f0 the middle of [L, U] there; the
 * slopes [*d0, *d1] and the offsets [*o0, *o1] of the lines that miss no
 * pair by more than max(0, -*w).
 */
static void
best_line(const struct fit *f, double *d, double *w, double *f0,
    double *d0, double *d1, double *o0, double *o1)
{
	const double *b = f->bk;
	size_t lo = 0, hi = f->nbk - 1;

	/* W is concave: the first breakpoint not below the next */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (width(f, b[mid]) < width(f, b[mid + 1]))
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t top = lo;
	*d = b[top];
	*w = width(f, *d);
	if (top + 1 < f->nbk && width(f, b[top + 1]) >= *w)
		*d = b[top] + (b[top + 1] - b[top]) / 2;	/* flat */
	*f0 = (support(f->lo, *d, 0) + support(f->up, *d, 1)) / 2;
	double loose = *w < 0 ? -*w : 0, thr = -2 * loose;

	/* left: the breakpoints before top below thr, W rising */
	lo = 0, hi = top;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (width(f, b[mid]) < thr)
			lo = mid + 1;
		else
			hi = mid;
	}
	double wl = width(f, b[lo]);
	if (lo == 0) {
		double s = f->up->p[f->up->n - 1].u - f->lo->p[0].u;
		*d0 = b[0] - (wl - thr) / s;
	} else {
		double wp = width(f, b[lo - 1]);
		*d0 = b[lo - 1] + (thr - wp) * (b[lo] - b[lo - 1]) / (wl - wp);
	}
	/* right: the first breakpoint after top below thr, W falling */
	lo = top, hi = f->nbk;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (width(f, b[mid]) >= thr)
			lo = mid + 1;
		else
			hi = mid;
	}
	double wr = width(f, b[lo - 1]);
	if (lo == f->nbk) {
		double s = f->lo->p[f->lo->n - 1].u - f->up->p[0].u;
		*d1 = b[lo - 1] + (wr - thr) / s;
	} else {
		double wn = width(f, b[lo]);
		*d1 = b[lo - 1] + (wr - thr) * (b[lo] - b[lo - 1]) / (wr - wn);
	}
	*o1 = support(f->lo, turning(f->lo, 0, *d0, *d1), 0) + loose;
	*o0 = support(f->up, turning(f->up, 1, *d0, *d1), 1) - loose;
}

/* The constant estimate from o's bounds (see struct sync_offset). */
static void
constant(struct sync_offset *o)
{
	o->have_est = o->have_lo || o->have_hi;
	o->consistent = 1;
	if (o->have_lo && o->have_hi) {
		o->est = mid64(o->lo, o->hi);
		o->uncertainty = half_gap(o->lo, o->hi);
		if (o->lo > o->hi) {
			o->consistent = 0;
			uint64_t c = (uint64_t)o->lo - (uint64_t)o->hi;
			o->cross = c > INT64_MAX ? INT64_MAX : (int64_t)c;
		}
	} else if (o->have_lo || o->have_hi) {
		o->est = o->have_hi ? o->hi : o->lo;
		o->uncertainty = INT64_MAX;
	}
}

static void
bound_hi(struct sync_offset *o, int64_t d)
{
	if (!o->have_hi || d < o->hi) {
		o->hi = d;
		o->have_hi = 1;
	}
}

static void
bound_lo(struct sync_offset *o, int64_t d)
{
	if (!o->have_lo || d > o->lo) {
		o->lo = d;
		o->have_lo = 1;
	}
}

void
sync_bounds(const int64_t *ab, size_t nab, const int64_t *ba, size_t nba,
    struct sync_offset *o)
{
	memset(o, 0, sizeof(*o));
	o->ab = nab;
	o->ba = nba;
	/* a to b: received (b's clock) = sent (a's) + offset + latency */
	for (size_t i = 0; i < nab; i++)
		bound_hi(o, ab[i]);
	/* b to a: received (a's) = sent (b's) - offset + latency, so
	   offset >= sent - received */
	for (size_t i = 0; i < nba; i++)
		bound_lo(o, ba[i] == INT64_MIN ? INT64_MAX : -ba[i]);
	constant(o);
}

/* The points of the pairs: a to b under the line, b to a over it. */
static size_t
points(const struct sync_pair *v, size_t n, int toa, uint64_t ref,
    int64_t base, struct pt *out)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t x = toa ? v[i].recv : v[i].send;
		int64_t diff = toa ? (int64_t)(v[i].send - v[i].recv) :
		    (int64_t)(v[i].recv - v[i].send);
		out[i].u = (double)(int64_t)(x - ref);
		out[i].v = sub64(diff, base);
	}
	return n;
}

/* Replace o's constant estimate by the line through the pairs when the
   drift is measured (see struct sync_offset). */
static void
fit_line(const struct sync_pair *ab, size_t nab, const struct sync_pair *ba,
    size_t nba, struct sync_offset *o)
{
	struct pt *pa = xmalloc(nab * sizeof(*pa));
	struct pt *pb = xmalloc(nba * sizeof(*pb));
	int64_t base = o->hi;

	points(ab, nab, 0, o->ref, base, pa);
	points(ba, nba, 1, o->ref, base, pb);
	struct hull lo = make_hull(pa, nab, 0), up = make_hull(pb, nba, 1);
	/* the slope is bounded when messages went each way after some
	   message the other way */
	if (up.p[up.n - 1].u > lo.p[0].u && lo.p[lo.n - 1].u > up.p[0].u) {
		struct fit f = { &lo, &up, xmalloc((lo.n + up.n) *
		    sizeof(double)), 0 };
		for (size_t k = 1; k < lo.n; k++)
			f.bk[f.nbk++] = edge(&lo, k);
		for (size_t k = 1; k < up.n; k++)
			f.bk[f.nbk++] = edge(&up, k);
		qsort(f.bk, f.nbk, sizeof(double), by_double);
		double d, w, f0, d0, d1, o0, o1;
		best_line(&f, &d, &w, &f0, &d0, &d1, &o0, &o1);
		if (-w <= SYNC_STAMP_NS) {
			o->have_drift = 1;
			o->drift = d;
			o->drift_uncertainty = (d1 - d0) / 2;
			o->est = to64((double)base + f0);
			o->uncertainty = to64((o1 - o0) / 2 + 0.5);
			o->cross = w < 0 ? to64(-w) : 0;
			o->consistent = o->cross == 0;
		}
		free(f.bk);
	}
	free(pa);
	free(pb);
}

void
sync_fit(const struct sync_pair *ab, size_t nab, const struct sync_pair *ba,
    size_t nba, struct sync_offset *o)
{
	uint64_t x0 = UINT64_MAX, x1 = 0;

	memset(o, 0, sizeof(*o));
	o->ab = nab;
	o->ba = nba;
	for (size_t i = 0; i < nab; i++) {
		bound_hi(o, (int64_t)(ab[i].recv - ab[i].send));
		x0 = ab[i].send < x0 ? ab[i].send : x0;
		x1 = ab[i].send > x1 ? ab[i].send : x1;
	}
	for (size_t i = 0; i < nba; i++) {
		bound_lo(o, (int64_t)(ba[i].send - ba[i].recv));
		x0 = ba[i].recv < x0 ? ba[i].recv : x0;
		x1 = ba[i].recv > x1 ? ba[i].recv : x1;
	}
	constant(o);
	if (!o->have_est)
		return;
	o->ref = x0 + (x1 - x0) / 2;
	if (o->have_lo && o->have_hi && o->cross > SYNC_STAMP_NS)
		fit_line(ab, nab, ba, nba, o);
}

uint64_t
sync_to_a(const struct sync_offset *o, uint64_t tb)
{
	if (!o->have_est)
		return tb;
	if (!o->have_drift || !(o->drift > -1)) {
		if (o->est >= 0)
			return tb >= (uint64_t)o->est ? tb - (uint64_t)o->est : 0;
		uint64_t add = (uint64_t)0 - (uint64_t)o->est;
		return tb > UINT64_MAX - add ? UINT64_MAX : tb + add;
	}
	/* tb = ta + est + drift (ta - ref) */
	long double r = (long double)tb - (long double)o->ref -
	    (long double)o->est;
	long double ta = (long double)o->ref + r / (1.0L + o->drift);
	if (!(ta > 0))
		return 0;
	if (ta >= 18446744073709551615.0L)
		return UINT64_MAX;
	return (uint64_t)(ta + 0.5L);
}
