/*
 * segment.c: the fixed layouts of a segment file: the CRC, growable
 * buffers, the chunk header and the self-describing segment header.
 *
 * Segment header: 24 fixed bytes (magic "ARGUSSEG", u32 version, u32
 * total header length, u32 crc32 of the bytes after the fixed part, u32
 * reserved) and a body of varints and strings (varint length + bytes):
 * seq, created_ts, realtime offset (zigzag), ncpus, clock, hostname,
 * release, boot id, the schema (per type: id, name, field kinds, blob
 * kind, field names, blob name) and the thread table (per thread: tid,
 * pid, ppid, flags, start_ts, comm). Bytes after the thread table and
 * before the header length are extensions, each a varint tag, a varint
 * length and that many bytes; a reader skips the tags it does not know
 * (and a reader older than extensions skips them all). Tag 1 holds the
 * 16-byte id of the recording the segment belongs to, tag 2 the name of
 * the recorder's backend ("bpf" or "tracefs").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/common.h"
#include "trace-local.h"

static uint32_t crc_table[256];

static void
crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_table[i] = c;
	}
}

uint32_t
trace_crc32(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	if (crc_table[1] == 0)
		crc_init();
	crc = ~crc;
	while (len--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

void
buf_reserve(struct buf *b, size_t more)
{
	DGROW(b->data, b->cap, b->len + more, 4096);
}

void
buf_put(struct buf *b, const void *p, size_t n)
{
	if (n == 0)
		return;
	buf_reserve(b, n);
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

void
buf_varint(struct buf *b, uint64_t v)
{
	buf_reserve(b, 10);
	b->len = (size_t)(put_varint(b->data + b->len, v) - b->data);
}

void
buf_str(struct buf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	buf_varint(b, n);
	buf_put(b, s ? s : "", n);
}

void
buf_free(struct buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

void
chunk_hdr_encode(const struct chunk_hdr *h, uint8_t out[CHUNK_HDR_LEN])
{
	put_le32(out, CHUNK_MAGIC);
	put_le16(out + 4, h->cpu);
	put_le16(out + 6, h->flags);
	put_le32(out + 8, h->count);
	put_le32(out + 12, h->csize);
	put_le32(out + 16, h->rsize);
	put_le64(out + 20, h->first_ts);
	put_le64(out + 28, h->last_ts);
	put_le32(out + 36, h->first_tid);
	put_le32(out + 40, trace_crc32(0, out, 40));
}

int
chunk_hdr_decode(struct chunk_hdr *h, const uint8_t in[CHUNK_HDR_LEN])
{
	h->magic = get_le32(in);
	if (h->magic != CHUNK_MAGIC)
		return -1;
	h->crc = get_le32(in + 40);
	if (h->crc != trace_crc32(0, in, 40))
		return -1;
	h->cpu = get_le16(in + 4);
	h->flags = get_le16(in + 6);
	h->count = get_le32(in + 8);
	h->csize = get_le32(in + 12);
	h->rsize = get_le32(in + 16);
	h->first_ts = get_le64(in + 20);
	h->last_ts = get_le64(in + 28);
	h->first_tid = get_le32(in + 36);
	if (h->first_ts > h->last_ts)
		return -1;
	return 0;
}

/* The most events rsize decompressed bytes may hold. */
static uint32_t
max_events_raw(uint64_t rsize)
{
	uint64_t n = rsize / CHUNK_MIN_EVENT_LEN;

	return n < CHUNK_MAX_EVENTS ? (uint32_t)n : CHUNK_MAX_EVENTS;
}

uint32_t
chunk_max_events(uint64_t csize)
{
	if (csize > MAX_RAW_CHUNK)
		csize = MAX_RAW_CHUNK;
	uint64_t rsize = csize * ZSTD_MAX_EXPANSION;

	return max_events_raw(rsize < MAX_RAW_CHUNK ? rsize : MAX_RAW_CHUNK);
}

const char *
chunk_hdr_impossible(const struct chunk_hdr *h)
{
	if (h->csize > MAX_RAW_CHUNK || h->rsize > MAX_RAW_CHUNK)
		return "damaged chunk: larger than a chunk may be (skipped)";
	if (h->rsize > (uint64_t)h->csize * ZSTD_MAX_EXPANSION)
		return "damaged chunk: more bytes decompressed than its "
		    "frame can make (skipped)";
	if (h->count > max_events_raw(h->rsize))
		return "damaged chunk: more events than its size can hold "
		    "(skipped)";
	return NULL;
}

void
seg_header_encode(struct buf *b, const struct seg_header *h)
{
	size_t start = b->len;

	buf_reserve(b, SEG_FIXED_LEN);
	memset(b->data + start, 0, SEG_FIXED_LEN);
	memcpy(b->data + start, SEG_MAGIC, SEG_MAGIC_LEN);
	b->len += SEG_FIXED_LEN;

	buf_varint(b, h->seq);
	buf_varint(b, h->created_ts);
	buf_varint(b, zigzag(h->realtime_offset));
	buf_varint(b, h->ncpus);
	buf_str(b, h->clock);
	buf_str(b, h->hostname);
	buf_str(b, h->release);
	buf_str(b, h->boot_id);

	buf_varint(b, TT_NTYPES - 1);
	for (unsigned t = 1; t < TT_NTYPES; t++) {
		const struct type_desc *d = &trace_types[t];
		unsigned n = (unsigned)strlen(d->kinds);

		buf_varint(b, t);
		buf_str(b, d->name);
		buf_str(b, d->kinds);
		buf_varint(b, (uint64_t)d->blob);
		for (unsigned i = 0; i < n; i++)
			buf_str(b, d->args[i]);
		buf_str(b, d->blob_name);
	}

	buf_varint(b, h->nthreads);
	for (size_t i = 0; i < h->nthreads; i++) {
		const struct trace_thread *t = &h->threads[i];

		buf_varint(b, t->tid);
		buf_varint(b, t->pid);
		buf_varint(b, t->ppid);
		buf_varint(b, t->flags);
		buf_varint(b, t->start_ts);
		buf_put(b, (uint8_t[]){ (uint8_t)strnlen(t->comm, TRACE_COMM_LEN) }, 1);
		buf_put(b, t->comm, strnlen(t->comm, TRACE_COMM_LEN));
	}
	if (h->recorder != NULL) {
		size_t n = strnlen(h->recorder, SEG_EXT_RECORDER_MAX);

		buf_varint(b, SEG_EXT_RECORDER);
		buf_varint(b, n);
		buf_put(b, h->recorder, n);
	}
	if (h->recorder_pid != 0) {
		uint8_t pid[4];

		put_le32(pid, h->recorder_pid);
		buf_varint(b, SEG_EXT_RECORDER_PID);
		buf_varint(b, sizeof(pid));
		buf_put(b, pid, sizeof(pid));
	}
	if (h->has_rec_id) {
		buf_varint(b, SEG_EXT_REC_ID);
		buf_varint(b, TRACE_REC_ID_LEN);
		buf_put(b, h->rec_id, TRACE_REC_ID_LEN);
	}

	uint32_t len = (uint32_t)(b->len - start);
	uint8_t *fixed = b->data + start;

	put_le32(fixed + 8, h->version ? h->version : TRACE_FORMAT_VERSION);
	put_le32(fixed + 12, len);
	put_le32(fixed + 16, trace_crc32(0, fixed + SEG_FIXED_LEN,
	    len - SEG_FIXED_LEN));
}

/* Cursor over the header body; any overrun sets bad. */
struct cur {
	const uint8_t *p, *end;
	int bad;
};

static uint64_t
cur_varint(struct cur *c)
{
	uint64_t v = 0;

	if (c->bad || get_varint(&c->p, c->end, &v) != 0)
		c->bad = 1;
	return c->bad ? 0 : v;
}

static char *
cur_str(struct cur *c)
{
	uint64_t n = cur_varint(c);
	char *s;

	if (c->bad || n > (uint64_t)(c->end - c->p)) {
		c->bad = 1;
		return xstrdup("");
	}
	s = xmalloc(n + 1);
	memcpy(s, c->p, n);
	s[n] = '\0';
	c->p += n;
	return s;
}

int
seg_header_decode(struct seg_header *h, const uint8_t *p, size_t len,
    size_t *need)
{
	struct cur c;
	uint32_t hlen, crc;

	memset(h, 0, sizeof(*h));
	if (len < SEG_FIXED_LEN) {
		if (len >= SEG_MAGIC_LEN && memcmp(p, SEG_MAGIC, SEG_MAGIC_LEN))
			return TRACE_EMAGIC;
		*need = SEG_FIXED_LEN;
		return EAGAIN;
	}
	if (memcmp(p, SEG_MAGIC, SEG_MAGIC_LEN) != 0)
		return TRACE_EMAGIC;
	h->version = get_le32(p + 8);
	if (h->version > TRACE_FORMAT_VERSION)
		return TRACE_EVERSION;
	if (h->version == 0)
		return TRACE_ECORRUPT;
	hlen = get_le32(p + 12);
	crc = get_le32(p + 16);
	if (hlen < SEG_FIXED_LEN || hlen > (64u << 20))
		return TRACE_ECORRUPT;
	if (len < hlen) {
		*need = hlen;
		return EAGAIN;
	}
	if (trace_crc32(0, p + SEG_FIXED_LEN, hlen - SEG_FIXED_LEN) != crc)
		return TRACE_ECORRUPT;
	h->header_len = hlen;

	c.p = p + SEG_FIXED_LEN;
	c.end = p + hlen;
	c.bad = 0;
	h->seq = cur_varint(&c);
	h->created_ts = cur_varint(&c);
	h->realtime_offset = unzigzag(cur_varint(&c));
	h->ncpus = (uint32_t)cur_varint(&c);
	h->clock = cur_str(&c);
	h->hostname = cur_str(&c);
	h->release = cur_str(&c);
	h->boot_id = cur_str(&c);

	uint64_t ntypes = cur_varint(&c);

	if (ntypes > 65535)
		c.bad = 1;
	/* File type ids are small integers; map them through a table. */
	h->ntypes = 0;
	for (uint64_t i = 0; i < ntypes && !c.bad; i++) {
		uint64_t id = cur_varint(&c);
		char *name = cur_str(&c);
		char *kinds = cur_str(&c);
		uint64_t blob = cur_varint(&c);
		size_t nk = strlen(kinds);

		if (id == 0 || id > 65535 || nk > TRACE_NARGS || blob > BK_ARR)
			c.bad = 1;
		for (size_t k = 0; k < nk && !c.bad; k++)
			if (!strchr("usdt", kinds[k]))
				c.bad = 1;
		for (size_t k = 0; k < nk; k++)
			free(cur_str(&c));
		free(cur_str(&c));
		if (!c.bad && id >= h->ntypes) {
			uint32_t n = (uint32_t)id + 1;

			h->type_map = xreallocarray(h->type_map, n, sizeof(*h->type_map));
			h->type_nargs = xreallocarray(h->type_nargs, n, 1);
			h->type_kinds = xreallocarray(h->type_kinds, n, sizeof(char *));
			h->type_blob = xreallocarray(h->type_blob, n, 1);
			for (uint32_t k = h->ntypes; k < n; k++) {
				h->type_map[k] = TT_NONE;
				h->type_nargs[k] = 0;
				h->type_kinds[k] = NULL;
				h->type_blob[k] = 0;
			}
			h->ntypes = n;
		}
		if (!c.bad && h->type_kinds[id] == NULL) {
			unsigned local = trace_type_lookup(name);

			/* A known name with another blob kind is not ours. */
			if (local != TT_NONE && trace_types[local].blob != (int)blob)
				local = TT_NONE;
			h->type_map[id] = (uint16_t)local;
			h->type_nargs[id] = (uint8_t)nk;
			h->type_kinds[id] = kinds;
			h->type_blob[id] = (uint8_t)blob;
			kinds = NULL;
		}
		free(name);
		free(kinds);
	}

	uint64_t nthreads = cur_varint(&c);

	if (nthreads > (uint64_t)(c.end - c.p))
		c.bad = 1;
	if (!c.bad && nthreads > 0)
		h->threads = xcalloc(nthreads, sizeof(*h->threads));
	for (uint64_t i = 0; i < nthreads && !c.bad; i++) {
		struct trace_thread *t = &h->threads[i];
		uint8_t n;

		t->tid = (uint32_t)cur_varint(&c);
		t->pid = (uint32_t)cur_varint(&c);
		t->ppid = (uint32_t)cur_varint(&c);
		t->flags = (uint32_t)cur_varint(&c);
		t->start_ts = cur_varint(&c);
		if (c.bad || c.p >= c.end) {
			c.bad = 1;
			break;
		}
		n = *c.p++;
		if (n >= TRACE_COMM_LEN || n > c.end - c.p) {
			c.bad = 1;
			break;
		}
		memcpy(t->comm, c.p, n);
		t->comm[n] = '\0';
		c.p += n;
		h->nthreads = (size_t)i + 1;
	}
	if (c.bad) {
		seg_header_free(h);
		return TRACE_ECORRUPT;
	}
	/* Extensions: unknown tags are skipped, a torn one ends them. */
	while (c.p < c.end) {
		uint64_t tag = cur_varint(&c), n = cur_varint(&c);

		if (c.bad || n > (uint64_t)(c.end - c.p))
			break;
		if (tag == SEG_EXT_REC_ID && n == TRACE_REC_ID_LEN) {
			memcpy(h->rec_id, c.p, TRACE_REC_ID_LEN);
			h->has_rec_id = 1;
		} else if (tag == SEG_EXT_RECORDER_PID && n == 4) {
			h->recorder_pid = get_le32(c.p);
		} else if (tag == SEG_EXT_RECORDER && n > 0 &&
		    n <= SEG_EXT_RECORDER_MAX && h->recorder == NULL) {
			h->recorder = xmalloc((size_t)n + 1);
			memcpy(h->recorder, c.p, (size_t)n);
			h->recorder[n] = '\0';
		}
		c.p += n;
	}
	h->plan = xcalloc(h->ntypes ? h->ntypes : 1, sizeof(*h->plan));
	for (uint32_t i = 0; i < h->ntypes; i++) {
		struct type_plan *pl = &h->plan[i];

		if (h->type_kinds[i] == NULL)
			continue;
		pl->valid = 1;
		pl->local = h->type_map[i];
		pl->blob = h->type_blob[i];
		pl->nargs = h->type_nargs[i];
		memcpy(pl->kinds, h->type_kinds[i], pl->nargs);
	}
	h->header_len = hlen;
	return 0;
}

void
seg_header_free(struct seg_header *h)
{
	free(h->clock);
	free(h->hostname);
	free(h->release);
	free(h->boot_id);
	free(h->recorder);
	for (uint32_t i = 0; i < h->ntypes; i++)
		free(h->type_kinds[i]);
	free(h->type_map);
	free(h->type_nargs);
	free(h->type_kinds);
	free(h->type_blob);
	free(h->plan);
	free(h->threads);
	memset(h, 0, sizeof(*h));
}
