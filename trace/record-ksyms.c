/*
 * record-ksyms.c: the kernel functions that the recorder's kernel stacks
 * (TSK_KWAIT, TSK_KSAMPLE) name, written as TT_KSYM records so that a trace read on
 * another boot or machine (another KASLR offset) still names them.
 *
 * struct rksyms holds the text symbols of /proc/kallsyms, read at the
 * first kernel stack: their addresses sorted (addr), and for each the
 * offset of its name in one block of names (NUL-terminated). A function
 * is written once a segment: r->ksyms_seg says which segment the set
 * r->ksyms_done (start address -> 1) belongs to, and a new segment
 * empties it, so that every segment names the functions of its own
 * stacks when the ring drops older ones. About 120 K functions take
 * 4 MB; a kernel that hides its addresses (kptr_restrict, all zero)
 * gives an empty table, and the stacks stay unnamed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/common.h"
#include "record-local.h"

struct rksyms {
	uint64_t *addr;		/* sorted */
	uint32_t *name;		/* offset in names, per addr */
	size_t n, cap;
	char *names;
	size_t nnames, capnames;
};

static int
by_addr(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

/* The text symbols of /proc/kallsyms, sorted; an empty table when it
   cannot be read or hides the addresses. */
static struct rksyms *
ksyms_read(void)
{
	struct rksyms *k = xcalloc(1, sizeof(*k));
	FILE *f = fopen("/proc/kallsyms", "re");
	char line[512];
	struct pair { uint64_t addr; uint32_t name; } *v = NULL;
	size_t nv = 0, capv = 0;

	if (f == NULL)
		return k;
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned long long a;
		char t, name[256];
		size_t len;

		if (sscanf(line, "%llx %c %255s", &a, &t, name) != 3 ||
		    (t != 't' && t != 'T') || a == 0)
			continue;
		len = strlen(name) + 1;
		DGROW(k->names, k->capnames, k->nnames + len, 1 << 16);
		memcpy(k->names + k->nnames, name, len);
		DGROW(v, capv, nv + 1, 1024);
		v[nv++] = (struct pair){ a, (uint32_t)k->nnames };
		k->nnames += len;
	}
	fclose(f);
	qsort(v, nv, sizeof(*v), by_addr);
	k->addr = xreallocarray(NULL, nv ? nv : 1, sizeof(*k->addr));
	k->name = xreallocarray(NULL, nv ? nv : 1, sizeof(*k->name));
	for (size_t i = 0; i < nv; i++) {
		k->addr[i] = v[i].addr;
		k->name[i] = v[i].name;
	}
	k->n = nv;
	free(v);
	return k;
}

/* The function holding address a: its index, or SIZE_MAX. */
static size_t
ksym_at(const struct rksyms *k, uint64_t a)
{
	size_t lo = 0, hi = k->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k->addr[mid] <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo == 0 ? SIZE_MAX : lo - 1;
}

void
rec_ksyms_need(struct recorder *r, uint64_t ts, int exact,
    const uint64_t *frames, size_t n)
{
	uint64_t seg = trace_writer_segment(r->w);

	if (r->ksyms == NULL)
		r->ksyms = ksyms_read();
	if (r->ksyms_seg != seg) {
		hmap_free(&r->ksyms_done);
		hmap_init(&r->ksyms_done);
		r->ksyms_seg = seg;
	}
	for (size_t i = 0; i < n; i++) {
		/* a return address is after its call: the byte before it */
		uint64_t a = frames[i] - (frames[i] != 0 && !(exact &&
		    i == 0));
		size_t k = frames[i] >= TRACE_KERNEL_ADDR ?
		    ksym_at(r->ksyms, a) : SIZE_MAX;
		struct trace_event ev;
		int added;

		if (k == SIZE_MAX)
			continue;
		(void)hmap_put(&r->ksyms_done, r->ksyms->addr[k], 1, &added);
		if (!added)
			continue;
		memset(&ev, 0, sizeof(ev));
		ev.type = TT_KSYM;
		ev.cpu = TRACE_CPU_META;
		ev.ts = rec_meta_ts(r, ts);
		ev.arg[0] = r->ksyms->addr[k];
		ev.arg[1] = k + 1 < r->ksyms->n ? r->ksyms->addr[k + 1] -
		    r->ksyms->addr[k] : 0;
		ev.blob = r->ksyms->names + r->ksyms->name[k];
		ev.blob_len = (uint32_t)strlen(ev.blob);
		rec_add(r, &ev);
	}
}

void
rec_ksyms_free(struct recorder *r)
{
	if (r->ksyms != NULL) {
		free(r->ksyms->addr);
		free(r->ksyms->name);
		free(r->ksyms->names);
		free(r->ksyms);
		r->ksyms = NULL;
	}
	hmap_free(&r->ksyms_done);
}
