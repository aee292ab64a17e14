/*
 * hmap.c: open-addressing hash table from u64 keys to u64 values.
 *
 * Linear probing over power-of-two arrays (keys, values, a used byte per
 * slot); the table doubles at 50% load (hmap.h); deletion shifts the
 * following entries of the probe run back so that no tombstones are
 * needed.
 */
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "common.h"
#include "hmap.h"

static inline size_t
slot_of(uint64_t key, size_t mask)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	return (size_t)key & mask;
}

void
hmap_init(struct hmap *m)
{
	memset(m, 0, sizeof(*m));
}

void
hmap_free(struct hmap *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	memset(m, 0, sizeof(*m));
}

void
hmap_clear(struct hmap *m)
{
	if (m->used != NULL)
		memset(m->used, 0, m->cap);
	m->n = 0;
}

static void
grow(struct hmap *m)
{
	struct hmap o = *m;
	size_t cap = darr_cap(o.cap, o.cap + 1, 64);

	m->keys = xmalloc(cap * sizeof(*m->keys));
	m->vals = xmalloc(cap * sizeof(*m->vals));
	m->used = xcalloc(cap, 1);
	m->cap = cap;
	m->n = 0;
	for (size_t i = 0; i < o.cap; i++) {
		if (!o.used[i])
			continue;
		size_t s = slot_of(o.keys[i], cap - 1);
		while (m->used[s])
			s = (s + 1) & (cap - 1);
		m->used[s] = 1;
		m->keys[s] = o.keys[i];
		m->vals[s] = o.vals[i];
		m->n++;
	}
	free(o.keys);
	free(o.vals);
	free(o.used);
}

uint64_t *
hmap_get(const struct hmap *m, uint64_t key)
{
	if (m->n == 0)
		return NULL;
	size_t mask = m->cap - 1, s = slot_of(key, mask);
	while (m->used[s]) {
		if (m->keys[s] == key)
			return &m->vals[s];
		s = (s + 1) & mask;
	}
	return NULL;
}

uint64_t *
hmap_put(struct hmap *m, uint64_t key, uint64_t dflt, int *added)
{
	if ((m->n + 1) * 2 > m->cap)
		grow(m);
	size_t mask = m->cap - 1, s = slot_of(key, mask);
	while (m->used[s]) {
		if (m->keys[s] == key) {
			if (added)
				*added = 0;
			return &m->vals[s];
		}
		s = (s + 1) & mask;
	}
	m->used[s] = 1;
	m->keys[s] = key;
	m->vals[s] = dflt;
	m->n++;
	if (added)
		*added = 1;
	return &m->vals[s];
}

int
hmap_del(struct hmap *m, uint64_t key, uint64_t *val)
{
	if (m->n == 0)
		return 0;
	size_t mask = m->cap - 1, s = slot_of(key, mask);
	while (m->used[s] && m->keys[s] != key)
		s = (s + 1) & mask;
	if (!m->used[s])
		return 0;
	if (val)
		*val = m->vals[s];
	m->used[s] = 0;
	m->n--;
	/* Shift back the rest of the probe run. */
	size_t hole = s, j = s;
	for (;;) {
		j = (j + 1) & mask;
		if (!m->used[j])
			break;
		size_t home = slot_of(m->keys[j], mask);
		/* Move j to hole unless home lies cyclically in (hole, j]. */
		if ((j > hole && (home <= hole || home > j)) ||
		    (j < hole && (home <= hole && home > j))) {
			m->keys[hole] = m->keys[j];
			m->vals[hole] = m->vals[j];
			m->used[hole] = 1;
			m->used[j] = 0;
			hole = j;
		}
	}
	return 1;
}

int
hmap_next(const struct hmap *m, size_t *pos, uint64_t *key, uint64_t *val)
{
	for (size_t i = *pos; i < m->cap; i++) {
		if (!m->used[i])
			continue;
		*key = m->keys[i];
		*val = m->vals[i];
		*pos = i + 1;
		return 1;
	}
	*pos = m->cap;
	return 0;
}
