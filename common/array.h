/*
 * array.h: growable arrays.
 *
 * A growable array is a pointer, a count and a capacity. DARR(type)
 * declares one as an anonymous struct { v, n, cap }; DGROW works on any
 * pointer and capacity, also ones kept as separate fields of a struct.
 * The capacity starts at a given first size and doubles, so n pushes cost
 * O(n) copies in all. Growth aborts on OOM (xreallocarray), like every
 * allocation of argus. Element addresses change when the array grows.
 */
#ifndef ARGUS_ARRAY_H
#define ARGUS_ARRAY_H

#include <stddef.h>

#include "common/common.h"

/* A growable array of type: v[0 .. n) used, cap allocated. */
#define DARR(type) struct { type *v; size_t n, cap; }

/*
 * Make the array p of capacity cap (an lvalue of any unsigned type) hold
 * at least need elements: cap becomes first, then doubles until it is
 * enough, and p is reallocated. Nothing happens when cap >= need.
 */
#define DGROW(p, cap, need, first) do {					\
	if ((size_t)(need) > (size_t)(cap)) {				\
		(cap) = darr_cap((cap), (need), (first));		\
		(p) = xreallocarray((p), (cap), sizeof(*(p)));		\
	}								\
} while (0)

/*
 * As DGROW, but past DARR_BIG bytes the capacity grows by a half rather
 * than doubling: for the arrays that hold most of a bounded graph, whose
 * size the bound counts. Doubled, up to half of one is empty, and many
 * filled at one rate cross a power of two together: on 1 G generated
 * events, graphs of 45 M events took 58 bytes an event, against 44 for
 * 40 M. (By a quarter, the heap's holes between one graph and the next
 * took back what it saved.)
 */
#define DGROW_BIG(p, cap, need, first) do {				\
	if ((size_t)(need) > (size_t)(cap)) {				\
		(cap) = darr_cap_big((cap), (need), (first),		\
		    sizeof(*(p)));					\
		(p) = xreallocarray((p), (cap), sizeof(*(p)));		\
	}								\
} while (0)

#define DARR_BIG (1u << 20)

/* Append x to the DARR a. */
#define DPUSH(a, x) do {						\
	DGROW((a).v, (a).cap, (a).n + 1, 8);				\
	(a).v[(a).n++] = (x);						\
} while (0)

/*
 * The capacity after growing one of capacity cap to hold need elements:
 * first when cap is 0, then doubled until it reaches need. Aborts when it
 * would overflow.
 */
size_t darr_cap(size_t cap, size_t need, size_t first);

/*
 * darr_cap(), but by halves once cap elements of size bytes are past
 * DARR_BIG bytes.
 */
size_t darr_cap_big(size_t cap, size_t need, size_t first, size_t size);

#endif
