/*
 * hmap.h: the hash table of argus, from u64 keys to u64 values.
 *
 * Open addressing with linear probing over power-of-two arrays (keys,
 * values, a used byte per slot); the table doubles at 50% load; deletion
 * shifts the following entries of the probe run back, so there are no
 * tombstones. A value pointer stays valid until the next hmap_put or
 * hmap_del. Larger records live in an array of their own, and the table
 * maps their key to an index (or a pointer).
 */
#ifndef ARGUS_HMAP_H
#define ARGUS_HMAP_H

#include <stddef.h>
#include <stdint.h>

struct hmap {
	uint64_t *keys;
	uint64_t *vals;
	uint8_t *used;
	size_t cap;		/* power of two */
	size_t n;
};

/* An empty table (all zero is one too). */
void hmap_init(struct hmap *m);
/* Free the arrays; the table is empty again. */
void hmap_free(struct hmap *m);
/* Remove every key, keeping the arrays. */
void hmap_clear(struct hmap *m);
/* Pointer to the value of key, or NULL. */
uint64_t *hmap_get(const struct hmap *m, uint64_t key);
/* Pointer to the value of key, inserted as dflt when missing. */
uint64_t *hmap_put(struct hmap *m, uint64_t key, uint64_t dflt, int *added);
/* Remove key; returns 1 if it was there (and its value in *val). */
int hmap_del(struct hmap *m, uint64_t key, uint64_t *val);
/*
 * Iterate: start with *pos = 0; each call returns 1 with the next key and
 * its value, or 0 at the end. The table must not change meanwhile.
 */
int hmap_next(const struct hmap *m, size_t *pos, uint64_t *key,
    uint64_t *val);

#endif
