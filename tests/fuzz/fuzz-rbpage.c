/*
 * fuzz-rbpage.c: libFuzzer target for the ring-buffer page iterator, the
 * parser of the pages the recorder reads from the kernel. Every record it
 * returns must lie inside the input, and the walk must end.
 */
#include <stdint.h>
#include <stdlib.h>

#include "trace/rbpage-local.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rbpage it;
	const uint8_t *d;
	size_t sz, n = 0;
	uint64_t ts;
	volatile uint8_t sink = 0;

	if (rbpage_init(&it, data, size) < 0)
		return 0;
	while ((d = rbpage_next(&it, &sz, &ts)) != NULL) {
		if (d < data || d + sz > data + size || ++n > size)
			abort();
		if (sz > 0)
			sink ^= d[0] ^ d[sz - 1];
	}
	(void)sink;
	return 0;
}
