/*
 * record-ksyms.c: the kernel functions that the recorder's kernel stacks
 * (TSK_KWAIT, TSK_KSAMPLE) name, written as TT_KSYM records so that a trace read on
 * another boot or machine (another KASLR offset) still names them.
 *
 * struct rksyms holds the text symbols of /proc/kallsyms, read when the
 * recorder starts with stacks on (rec_ksyms_load), else at the first
 * kernel stack: their addresses sorted (addr), and for each the
 * offset of its name in one block of names (NUL-terminated). A function
 * is written once a segment: r->ksyms_seg says which segment the set
 * r->ksyms_done (start address -> 1) belongs to, and a new segment
 * empties it, so that every segment names the functions of its own
 * stacks when the ring drops older ones. About 120 K functions take
 * 4 MB; a kernel that hides its addresses (kptr_restrict, all zero)
 * gives an empty table, and the stacks stay unnamed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* The value of the hex digit c, or -1. */
static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The whole of /proc/kallsyms (NUL-terminated, allocated), or NULL. */
static char *
slurp_kallsyms(size_t *len)
{
	int fd = open("/proc/kallsyms", O_RDONLY | O_CLOEXEC);
	size_t n = 0, cap = 0;
	char *buf = NULL;
	ssize_t got;

	if (fd < 0)
		return NULL;
	for (;;) {
		DGROW(buf, cap, n + (1 << 16) + 1, 1 << 20);
		got = read(fd, buf + n, cap - n - 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		n += (size_t)got;
	}
	close(fd);
	if (buf == NULL)
		return NULL;
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* The text symbols of /proc/kallsyms, sorted; an empty table when it
   cannot be read or hides the addresses. One read of the file and a
   parse by hand ("ADDR T NAME [MODULE]" lines, in the order of
   addresses but for modules): a fraction of what a line at a time
   through stdio costs, paid once, when the recorder starts. */
static struct rksyms *
ksyms_read(void)
{
	struct rksyms *k = xcalloc(1, sizeof(*k));
	struct pair { uint64_t addr; uint32_t name; } *v = NULL;
	size_t nv = 0, capv = 0, len = 0;
	char *buf = slurp_kallsyms(&len), *p, *end;
	int sorted = 1;

	if (buf == NULL)
		return k;
	for (p = buf, end = buf + len; p < end; ) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *eol = nl ? nl : end, *q = p, *name;
		uint64_t a = 0;
		int d, digits = 0;

		for (; q < eol && (d = hexval((unsigned char)*q)) >= 0; q++) {
			a = a << 4 | (uint64_t)d;
			digits++;
		}
		/* " t name" (or T): a text symbol */
		if (digits > 0 && digits <= 16 && a != 0 && eol - q > 3 &&
		    q[0] == ' ' && (q[1] == 't' || q[1] == 'T') &&
		    q[2] == ' ') {
			name = q + 3;
			size_t nl_len = strcspn(name, " \t\n");
			if (name + nl_len > eol)
				nl_len = (size_t)(eol - name);
			if (nl_len > 0 && nl_len < 256) {
				DGROW(k->names, k->capnames,
				    k->nnames + nl_len + 1, 1 << 20);
				memcpy(k->names + k->nnames, name, nl_len);
				k->names[k->nnames + nl_len] = '\0';
				DGROW(v, capv, nv + 1, 1 << 14);
				if (nv > 0 && v[nv - 1].addr > a)
					sorted = 0;
				v[nv++] = (struct pair){ a,
				    (uint32_t)k->nnames };
				k->nnames += nl_len + 1;
			}
		}
		p = eol + 1;
	}
	free(buf);
	if (!sorted)
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

void
rec_ksyms_load(struct recorder *r)
{
	if (r->ksyms == NULL)
		r->ksyms = ksyms_read();
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
