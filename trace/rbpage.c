/*
 * rbpage.c: the kernel ring-buffer page iterator (format in
 * rbpage-local.h). It replaces libtraceevent's kbuffer on the recorder's
 * reading path: the same walk, inlined, at a fraction of the cost.
 */
#include <string.h>

#include "rbpage-local.h"

#define RB_COMMIT_MASK ((1u << 27) - 1)
#define RB_MISSED_EVENTS (1ul << 31)
#define RB_MISSED_STORED (1ul << 30)
#define RB_TS_SHIFT 27
#define RB_TS_MSB (0xf8ull << 56)	/* kept from the page's clock */
#define RB_DATA_MAX 28
#define RB_PADDING 29
#define RB_TIME_EXTEND 30
#define RB_TIME_STAMP 31

static inline uint32_t
rd4(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

int
rbpage_init(struct rbpage *it, const void *page, size_t len)
{
	const uint8_t *b = page;
	size_t hdr = 8 + sizeof(long), size;
	unsigned long commit;
	uint64_t ts;

	memset(it, 0, sizeof(*it));
	if (len < hdr)
		return -1;
	memcpy(&ts, b, 8);
	memcpy(&commit, b + 8, sizeof(long));
	size = commit & RB_COMMIT_MASK;
	if (size > len - hdr)
		size = len - hdr;
	it->ts = ts;
	it->p = b + hdr;
	it->end = it->p + size;
	if (commit & RB_MISSED_EVENTS) {
		long n;

		it->missed = -1;
		if ((commit & RB_MISSED_STORED) &&
		    hdr + size + sizeof(long) <= len) {
			memcpy(&n, it->end, sizeof(long));
			if (n > 0)
				it->missed = n;
		}
	}
	return 0;
}

const void *
rbpage_next(struct rbpage *it, size_t *size, uint64_t *ts)
{
	while (it->end - it->p >= 4) {
		uint32_t h = rd4(it->p);
		unsigned type = h & 31;
		uint64_t delta = h >> 5;
		const uint8_t *data = it->p + 4;
		size_t len;

		if (type == RB_TIME_EXTEND || type == RB_TIME_STAMP) {
			if (it->end - data < 4)
				break;
			delta |= (uint64_t)rd4(data) << RB_TS_SHIFT;
			it->p = data + 4;
			if (type == RB_TIME_EXTEND)
				it->ts += delta;
			else
				it->ts = delta | (it->ts & RB_TS_MSB);
			continue;
		}
		if (type == RB_PADDING) {
			if (it->end - data < 4)
				break;
			/* the length counts from the length word on */
			len = (rd4(data) + (size_t)3) & ~(size_t)3;
			if (len < 4 || len > (size_t)(it->end - data))
				break;		/* 0: the rest of the page is empty */
			it->ts += delta;
			it->p = data + len;
			continue;
		}
		if (type == 0) {
			if (it->end - data < 4)
				break;
			len = rd4(data);
			if (len < 4)
				break;
			len = ((len - 4) + 3) & ~(size_t)3;
			data += 4;
		} else {
			len = (size_t)type * 4;
		}
		if (len > (size_t)(it->end - data))
			break;
		it->ts += delta;
		it->p = data + len;
		*size = len;
		*ts = it->ts;
		return data;
	}
	it->p = it->end;
	return NULL;
}
