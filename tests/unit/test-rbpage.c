/*
 * test-rbpage.c: the ring-buffer page iterator on pages built here, entry
 * by entry, in the layout of tracefs's header_page and header_event.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "trace/rbpage-local.h"

#define HDR (8 + sizeof(long))

struct pb {
	uint8_t b[4096];
	size_t n;		/* bytes of data written after the header */
};

static void
put4(struct pb *p, uint32_t v)
{
	memcpy(p->b + HDR + p->n, &v, 4);
	p->n += 4;
}

static uint32_t
head(unsigned type, uint32_t delta)
{
	return type | delta << 5;
}

/* Finish the header: time stamp, data length and flags. */
static void
seal(struct pb *p, uint64_t ts, unsigned long flags)
{
	unsigned long commit = (unsigned long)p->n | flags;

	memcpy(p->b, &ts, 8);
	memcpy(p->b + 8, &commit, sizeof(long));
}

Test(rbpage, every_entry_kind)
{
	struct pb p = { 0 };
	struct rbpage it;
	const uint8_t *d;
	size_t sz;
	uint64_t ts;

	put4(&p, head(2, 5));		/* 8 bytes at +5 */
	put4(&p, 0x11111111);
	put4(&p, 0x22222222);
	put4(&p, head(30, 3));		/* extend: + (1 << 27) + 3 */
	put4(&p, 1);
	put4(&p, head(0, 0));		/* long record: 100 bytes */
	put4(&p, 104);
	for (int i = 0; i < 25; i++)
		put4(&p, 0x01010101u * (uint32_t)i);
	put4(&p, head(29, 7));		/* a discarded record: skipped */
	put4(&p, 12);
	put4(&p, 0xdead);
	put4(&p, 0xbeef);
	put4(&p, head(1, 1));		/* 4 bytes at +7 +1 */
	put4(&p, 0x33333333);
	seal(&p, 1000, 0);

	cr_assert_eq(rbpage_init(&it, p.b, sizeof(p.b)), 0);
	cr_assert_eq(it.missed, 0);
	d = rbpage_next(&it, &sz, &ts);
	cr_assert_not_null(d);
	cr_assert_eq(sz, 8);
	cr_assert_eq(ts, 1005);
	cr_assert_eq(d[0], 0x11);
	d = rbpage_next(&it, &sz, &ts);
	cr_assert_not_null(d);
	cr_assert_eq(sz, 100);
	cr_assert_eq(ts, 1005 + (1u << 27) + 3);
	cr_assert_eq(d[4], 1);
	cr_assert_eq(d[96], 24);
	d = rbpage_next(&it, &sz, &ts);
	cr_assert_not_null(d);
	cr_assert_eq(sz, 4);
	cr_assert_eq(ts, 1005 + (1u << 27) + 3 + 7 + 1);
	cr_assert_eq(d[0], 0x33);
	cr_assert_null(rbpage_next(&it, &sz, &ts));
	cr_assert_null(rbpage_next(&it, &sz, &ts));
}

Test(rbpage, absolute_time_stamp_and_empty_padding)
{
	struct pb p = { 0 };
	struct rbpage it;
	size_t sz;
	uint64_t ts;

	put4(&p, head(31, 9));		/* absolute: (2 << 27) | 9 */
	put4(&p, 2);
	put4(&p, head(1, 4));
	put4(&p, 0);
	put4(&p, head(29, 0));		/* empty padding: the page ends */
	put4(&p, 0);
	put4(&p, head(1, 4));		/* never reached */
	put4(&p, 0);
	seal(&p, 0xf800000000000123ull, 0);

	cr_assert_eq(rbpage_init(&it, p.b, sizeof(p.b)), 0);
	cr_assert_not_null(rbpage_next(&it, &sz, &ts));
	cr_assert_eq(ts, ((0xf8ull << 56) | (2ull << 27) | 9) + 4);
	cr_assert_null(rbpage_next(&it, &sz, &ts));
}

Test(rbpage, missed_events)
{
	struct pb p = { 0 };
	struct rbpage it;
	long lost = 1234;

	put4(&p, head(1, 1));
	put4(&p, 7);
	memcpy(p.b + HDR + p.n, &lost, sizeof(lost));
	seal(&p, 1, 1ul << 31 | 1ul << 30);
	cr_assert_eq(rbpage_init(&it, p.b, sizeof(p.b)), 0);
	cr_assert_eq(it.missed, 1234);
	seal(&p, 1, 1ul << 31);
	cr_assert_eq(rbpage_init(&it, p.b, sizeof(p.b)), 0);
	cr_assert_eq(it.missed, -1);
}

Test(rbpage, lengths_that_leave_the_page)
{
	struct pb p = { 0 };
	struct rbpage it;
	size_t sz;
	uint64_t ts;

	cr_assert_eq(rbpage_init(&it, p.b, HDR - 1), -1);
	put4(&p, head(1, 1));
	put4(&p, 7);
	put4(&p, head(0, 1));		/* claims 1 MB */
	put4(&p, 1u << 20);
	seal(&p, 1, 0);
	cr_assert_eq(rbpage_init(&it, p.b, sizeof(p.b)), 0);
	cr_assert_not_null(rbpage_next(&it, &sz, &ts));
	cr_assert_null(rbpage_next(&it, &sz, &ts));
	/* a commit longer than the page is cut to the page */
	seal(&p, 1, 1u << 26);
	cr_assert_eq(rbpage_init(&it, p.b, 64), 0);
	cr_assert_eq((size_t)(it.end - p.b), 64);
	/* a type-len record cut by the end of the data */
	p.n = 0;
	put4(&p, head(28, 1));		/* 112 bytes, but only 8 follow */
	put4(&p, 0);
	put4(&p, 0);
	seal(&p, 1, 0);
	cr_assert_eq(rbpage_init(&it, p.b, sizeof(p.b)), 0);
	cr_assert_null(rbpage_next(&it, &sz, &ts));
}
