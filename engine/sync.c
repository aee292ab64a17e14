/*
 * sync.c: the clocks of several hosts' traces aligned from the TCP
 * messages between them (argus-trace(5): sock_addr, and the sequence
 * number of sock_send and sock_recv).
 *
 * struct sync_msgs holds one trace's messages: each send and receive of
 * a TCP socket whose addresses are known, as a struct smsg (when, the
 * connection seen from the sender, "SRC DST" hashed, the first sequence
 * number and, for a send, its length). A send of trace a pairs with a
 * receive of trace b of the same connection whose first byte it sent.
 * A receive never comes before its send, so each pair bounds the offset
 * of b's clock against a's (t_b = t_a + offset): a message from a to b
 * from above, one from b to a from below (sync_bounds()). The offset
 * alone is estimated; a drift between the clocks widens the bounds, or
 * makes them cross, which is said.
 */
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/hmap.h"
#include "engine-local.h"

struct smsg {
	uint64_t ts;
	uint64_t conn;		/* hash of "SRC DST", the sender's view */
	uint32_t seq, len;	/* len 0: a receive */
};

struct sync_msgs {
	DARR(struct smsg) send, recv;
};

static uint64_t
hash_str(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	return h;
}

/* The connection's hash as its sender sees it, from a socket's tuple
   "LOCAL REMOTE": a send's as it is, a receive's turned round. */
static uint64_t
conn_of(const char *t, size_t n, int send)
{
	const char *sp = memchr(t, ' ', n);
	char buf[160];

	if (sp == NULL || n >= sizeof(buf))
		return 0;
	if (send)
		return hash_str(t, n);
	size_t l = (size_t)(sp - t), r = n - l - 1;
	memcpy(buf, sp + 1, r);
	buf[r] = ' ';
	memcpy(buf + r + 1, t, l);
	return hash_str(buf, n);
}

int
sync_read(struct trace_reader *r, struct sync_msgs **out, char **cause)
{
	struct sync_msgs *m = xcalloc(1, sizeof(*m));
	struct hmap tup;	/* sk -> index in strs + 1 */
	DARR(char *) strs = { 0 };
	struct trace_event evs[256];
	size_t n;
	int err;

	*out = NULL;
	if ((err = trace_reader_seek(r, 0)) != 0) {
		if (cause)
			*cause = xstrdup(trace_strerror(err));
		free(m);
		return GRAPH_ETRACE;
	}
	hmap_init(&tup);
	while ((n = trace_reader_read(r, evs, 256)) > 0) {
		for (size_t i = 0; i < n; i++) {
			const struct trace_event *e = &evs[i];
			if (e->type == TT_SOCK_ADDR && e->blob != NULL) {
				char *s = xmalloc(e->blob_len + 1);
				memcpy(s, e->blob, e->blob_len);
				s[e->blob_len] = '\0';
				DPUSH(strs, s);
				*hmap_put(&tup, e->arg[0], 0, NULL) = strs.n;
				continue;
			}
			if ((e->type != TT_SOCK_SEND &&
			    e->type != TT_SOCK_RECV) || e->arg[5] == 0 ||
			    (int64_t)e->arg[3] <= 0)
				continue;
			const uint64_t *k = hmap_get(&tup, e->arg[0]);
			if (k == NULL)
				continue;
			const char *s = strs.v[*k - 1];
			int send = e->type == TT_SOCK_SEND;
			struct smsg x = { e->ts, conn_of(s, strlen(s), send),
			    (uint32_t)e->arg[5], send ? (uint32_t)e->arg[3] :
			    0 };
			if (x.conn == 0)
				continue;
			if (send)
				DPUSH(m->send, x);
			else
				DPUSH(m->recv, x);
		}
	}
	for (size_t i = 0; i < strs.n; i++)
		free(strs.v[i]);
	free(strs.v);
	hmap_free(&tup);
	*out = m;
	return 0;
}

void
sync_msgs_free(struct sync_msgs *m)
{
	if (m == NULL)
		return;
	free(m->send.v);
	free(m->recv.v);
	free(m);
}

size_t
sync_nmsgs(const struct sync_msgs *m, size_t *nrecv)
{
	*nrecv = m->recv.n;
	return m->send.n;
}

static int
by_conn_seq(const void *x, const void *y)
{
	const struct smsg *a = x, *b = y;

	if (a->conn != b->conn)
		return a->conn < b->conn ? -1 : 1;
	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	return a->ts < b->ts ? -1 : a->ts > b->ts;
}

/*
 * The sends of s (sorted by connection and sequence) that the receives
 * of r took the first byte of: for each pair, when received minus when
 * sent, into *d (grown); how many.
 */
static size_t
pair(const struct smsg *s, size_t ns, const struct smsg *r, size_t nr,
    int64_t **d)
{
	size_t n = 0;

	*d = xmalloc((nr ? nr : 1) * sizeof(**d));
	for (size_t i = 0; i < nr; i++) {
		/* the last send of the connection starting at or before
		   the receive's first byte */
		size_t lo = 0, hi = ns;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (s[mid].conn < r[i].conn || (s[mid].conn ==
			    r[i].conn && s[mid].seq <= r[i].seq))
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == 0)
			continue;
		const struct smsg *x = &s[lo - 1];
		if (x->conn != r[i].conn ||
		    (uint32_t)(r[i].seq - x->seq) >= x->len)
			continue;
		(*d)[n++] = (int64_t)(r[i].ts - x->ts);
	}
	return n;
}

void
sync_bounds(const int64_t *ab, size_t nab, const int64_t *ba, size_t nba,
    struct sync_offset *o)
{
	memset(o, 0, sizeof(*o));
	o->ab = nab;
	o->ba = nba;
	/* a to b: received (b's clock) = sent (a's) + offset + latency */
	for (size_t i = 0; i < nab; i++)
		if (!o->have_hi || ab[i] < o->hi) {
			o->hi = ab[i];
			o->have_hi = 1;
		}
	/* b to a: received (a's) = sent (b's) - offset + latency, so
	   offset >= sent - received */
	for (size_t i = 0; i < nba; i++)
		if (!o->have_lo || -ba[i] > o->lo) {
			o->lo = -ba[i];
			o->have_lo = 1;
		}
	o->consistent = !(o->have_lo && o->have_hi && o->lo > o->hi);
}

void
sync_align(const struct sync_msgs *a, const struct sync_msgs *b,
    struct sync_offset *o)
{
	struct smsg *sa = xmalloc((a->send.n ? a->send.n : 1) * sizeof(*sa));
	struct smsg *sb = xmalloc((b->send.n ? b->send.n : 1) * sizeof(*sb));
	int64_t *ab, *ba;

	memcpy(sa, a->send.v, a->send.n * sizeof(*sa));
	memcpy(sb, b->send.v, b->send.n * sizeof(*sb));
	qsort(sa, a->send.n, sizeof(*sa), by_conn_seq);
	qsort(sb, b->send.n, sizeof(*sb), by_conn_seq);
	size_t nab = pair(sa, a->send.n, b->recv.v, b->recv.n, &ab);
	size_t nba = pair(sb, b->send.n, a->recv.v, a->recv.n, &ba);
	sync_bounds(ab, nab, ba, nba, o);
	free(ab);
	free(ba);
	free(sa);
	free(sb);
}
