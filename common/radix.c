/*
 * radix.c: a stable least-significant-digit radix sort of 64-bit keys
 * carried with a 32-bit index, sixteen bits a pass over ping-pong
 * buffers. Sorting by a second key, then stably by a first, sorts by
 * both: the callers sort large arrays of records this way, through
 * their indices, where qsort's comparisons and 48-byte moves cost most.
 */
#include <stdlib.h>
#include <string.h>

#include "common.h"

void
radix_sort64(uint64_t *key, uint32_t *idx, size_t n, unsigned bits)
{
	uint64_t *k2 = xreallocarray(NULL, n ? n : 1, sizeof(*k2));
	uint32_t *i2 = xreallocarray(NULL, n ? n : 1, sizeof(*i2));
	size_t *count = xmalloc(65537 * sizeof(*count));
	uint64_t *ka = key, *kb = k2;
	uint32_t *ia = idx, *ib = i2;

	for (unsigned sh = 0; sh < bits && sh < 64; sh += 16) {
		memset(count, 0, 65537 * sizeof(*count));
		for (size_t i = 0; i < n; i++)
			count[((ka[i] >> sh) & 0xffff) + 1]++;
		if (n == 0 || count[((ka[0] >> sh) & 0xffff) + 1] == n)
			continue;	/* one digit for all: nothing moves */
		for (size_t b = 1; b <= 65536; b++)
			count[b] += count[b - 1];
		for (size_t i = 0; i < n; i++) {
			size_t at = count[(ka[i] >> sh) & 0xffff]++;
			kb[at] = ka[i];
			ib[at] = ia[i];
		}
		uint64_t *kt = ka;
		uint32_t *it = ia;
		ka = kb;
		kb = kt;
		ia = ib;
		ib = it;
	}
	if (ka != key) {
		memcpy(key, ka, n * sizeof(*key));
		memcpy(idx, ia, n * sizeof(*idx));
	}
	free(count);
	free(k2);
	free(i2);
}

void
radix_sort_records(void *v, size_t n, size_t size,
    uint64_t (*first)(const void *), unsigned first_bits,
    uint64_t (*then)(const void *), unsigned then_bits)
{
	uint64_t *k = xreallocarray(NULL, n ? n : 1, sizeof(*k));
	uint32_t *ix = xreallocarray(NULL, n ? n : 1, sizeof(*ix));
	char *in = v, *out = xreallocarray(NULL, n ? n : 1, size);

	for (size_t i = 0; i < n; i++) {
		k[i] = then(in + i * size);
		ix[i] = (uint32_t)i;
	}
	radix_sort64(k, ix, n, then_bits);
	for (size_t i = 0; i < n; i++)
		k[i] = first(in + (size_t)ix[i] * size);
	radix_sort64(k, ix, n, first_bits);
	for (size_t i = 0; i < n; i++)
		memcpy(out + i * size, in + (size_t)ix[i] * size, size);
	memcpy(v, out, n * size);
	free(out);
	free(ix);
	free(k);
}
