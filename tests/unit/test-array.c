/*
 * test-array.c: the growth of growable arrays (common/array.h): DGROW
 * doubles; DGROW_BIG doubles up to DARR_BIG bytes, then grows by halves,
 * so that an array holding most of a bounded graph leaves a third of
 * itself unused at most, not a half.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/array.h"

Test(array, small_arrays_double)
{
	cr_assert_eq(darr_cap(0, 1, 16), 16);
	cr_assert_eq(darr_cap(16, 17, 16), 32);
	cr_assert_eq(darr_cap_big(0, 1, 16, 24), 16);
	cr_assert_eq(darr_cap_big(16, 17, 16, 24), 32);
	/* 1000 elements of 24 bytes are well below DARR_BIG */
	cr_assert_eq(darr_cap_big(1000, 1001, 16, 24), 2000);
}

Test(array, big_arrays_grow_by_halves)
{
	size_t size = 24, cap = DARR_BIG / size + 1;

	cr_assert_eq(darr_cap_big(cap, cap + 1, 16, size), cap + cap / 2);
	/* many steps at once when asked for much more */
	size_t c = darr_cap_big(cap, 4 * cap, 16, size);
	cr_assert_geq(c, 4 * cap);
	cr_assert_lt(c, 6 * cap, "grown by halves, not doubled: %zu", c);
}

Test(array, grown_array_wastes_a_third_at_most)
{
	uint64_t *v = NULL;
	uint32_t cap = 0, n;
	size_t worst = 0;

	/* pushes one at a time, as a thread's events are: past DARR_BIG
	   bytes, never more than a third of the capacity unused (doubled,
	   a half) */
	for (n = 0; n < 2000000; n++) {
		DGROW_BIG(v, cap, n + 1, 16);
		v[n] = n;
		if ((size_t)cap * sizeof(*v) > 2 * DARR_BIG) {
			size_t unused = (size_t)(cap - (n + 1)) * 1000 / cap;
			if (unused > worst)
				worst = unused;
		}
	}
	cr_assert_geq(cap, n);
	cr_assert_eq(v[n - 1], n - 1);
	cr_assert_leq(worst, 334, "%zu per mille unused", worst);
	free(v);
}
