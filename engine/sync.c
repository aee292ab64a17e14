/*
 * sync.c: the clocks of several hosts' traces aligned from the TCP and
 * UDP messages between them (argus-trace(5): sock_addr, and the sixth
 * field of sock_send and sock_recv: a TCP message's sequence number, a
 * UDP datagram's hash).
 *
 * struct sync_msgs holds one trace's messages: each send and receive of
 * a TCP or connected UDP socket whose addresses are known, as a struct
 * smsg (when, the connection seen from the sender, "SRC DST" hashed with
 * its protocol, the first sequence number and its length; a datagram's
 * hash as its sequence, of length 1). A send of trace a pairs with a
 * receive of trace b of the same connection that took its last byte (a
 * datagram: of the same hash): a send is
 * stamped when its call returns, after its last byte was queued (a
 * large send's first bytes may be read before it returns). A receive
 * never comes before its send, so each pair, kept as its two times
 * (struct sync_pair), bounds the offset of b's clock against a's (t_b =
 * t_a + offset): a message from a to b from above, one from b to a from
 * below. sync-fit.c fits a constant offset, or a line when the clocks
 * drift apart.
 */
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "engine-local.h"

struct smsg {
	uint64_t ts;
	uint64_t conn;		/* hash of "SRC DST", the sender's view */
	uint32_t seq, len;	/* its first byte's sequence, its bytes */
	uint64_t sk;		/* its socket */
	uint32_t tid;		/* the thread that sent or received it */
};

/* A message before its connection is known: its socket, whether a
   send, and whether a UDP datagram. */
struct raw {
	struct smsg m;
	uint64_t sk;
	int send, udp;
};

#define IPPROTO_TCP_ 6
#define IPPROTO_UDP_ 17
/* Mixed into the hash of a UDP "connection": TCP and UDP on the same
   addresses and ports are not one. */
#define UDP_CONN 0x9e3779b97f4a7c15ull

/* A socket's addresses from a sock_addr record, at ts. */
struct addr {
	uint64_t sk, ts;
	size_t str;		/* index in the strings */
};

struct sync_msgs {
	DARR(struct smsg) send, recv;
};

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
		return fnv64(t, n);
	size_t l = (size_t)(sp - t), r = n - l - 1;
	memcpy(buf, sp + 1, r);
	buf[r] = ' ';
	memcpy(buf + r + 1, t, l);
	return fnv64(buf, n);
}

static int
by_sk_ts(const void *x, const void *y)
{
	const struct addr *a = x, *b = y;

	if (a->sk != b->sk)
		return a->sk < b->sk ? -1 : 1;
	return a->ts < b->ts ? -1 : a->ts > b->ts;
}

/* The addresses of socket sk at ts: its last sock_addr record at or
   before ts, else its first after (a metadata record may be stamped a
   little after the message it names); NULL when none. */
static const struct addr *
addr_at(const struct addr *v, size_t n, uint64_t sk, uint64_t ts)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].sk < sk || (v[mid].sk == sk && v[mid].ts <= ts))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0 && v[lo - 1].sk == sk)
		return &v[lo - 1];
	return lo < n && v[lo].sk == sk ? &v[lo] : NULL;
}

int
sync_read(struct trace_reader *r, struct sync_msgs **out, char **cause)
{
	struct sync_msgs *m = xcalloc(1, sizeof(*m));
	DARR(char *) strs = { 0 };
	DARR(struct addr) addrs = { 0 };
	DARR(struct raw) raws = { 0 };
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
	while ((n = trace_reader_read(r, evs, 256)) > 0) {
		for (size_t i = 0; i < n; i++) {
			const struct trace_event *e = &evs[i];
			if (e->type == TT_SOCK_ADDR && e->blob != NULL) {
				char *t = xmalloc(e->blob_len + 1);
				memcpy(t, e->blob, e->blob_len);
				t[e->blob_len] = '\0';
				DPUSH(strs, t);
				struct addr a = { e->arg[0], e->ts, strs.n - 1 };
				DPUSH(addrs, a);
				continue;
			}
			if ((e->type != TT_SOCK_SEND &&
			    e->type != TT_SOCK_RECV) ||
			    (uint32_t)e->arg[5] == 0 || (int64_t)e->arg[3] <= 0 ||
			    (e->arg[2] != IPPROTO_TCP_ &&
			    e->arg[2] != IPPROTO_UDP_))
				continue;
			int udp = e->arg[2] == IPPROTO_UDP_;
			struct raw x = { { e->ts, 0, (uint32_t)e->arg[5],
			    udp ? 1 : (uint32_t)e->arg[3], e->arg[0], e->tid },
			    e->arg[0], e->type == TT_SOCK_SEND, udp };
			DPUSH(raws, x);
		}
	}
	qsort(addrs.v, addrs.n, sizeof(*addrs.v), by_sk_ts);
	for (size_t i = 0; i < raws.n; i++) {
		struct raw *x = &raws.v[i];
		const struct addr *a = addr_at(addrs.v, addrs.n, x->sk,
		    x->m.ts);
		if (a == NULL)
			continue;
		const char *t = strs.v[a->str];
		x->m.conn = conn_of(t, strlen(t), x->send);
		if (x->m.conn == 0)
			continue;
		if (x->udp)
			x->m.conn ^= UDP_CONN;
		if (x->send)
			DPUSH(m->send, x->m);
		else
			DPUSH(m->recv, x->m);
	}
	for (size_t i = 0; i < strs.n; i++)
		free(strs.v[i]);
	free(strs.v);
	free(addrs.v);
	free(raws.v);
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

/* The sequence of a message's last byte. */
static uint32_t
last_byte(const struct smsg *x)
{
	return x->seq + x->len - 1;
}

static int
by_conn_last(const void *x, const void *y)
{
	const struct smsg *a = x, *b = y;

	if (a->conn != b->conn)
		return a->conn < b->conn ? -1 : 1;
	if (last_byte(a) != last_byte(b))
		return last_byte(a) < last_byte(b) ? -1 : 1;
	return a->ts < b->ts ? -1 : a->ts > b->ts;
}

/*
 * The sends of s (sorted by connection and last byte) whose last byte a
 * receive of r took: for each pair, when sent and when received, into
 * *p (allocated); how many. (A sequence that wraps within a receive, or a
 * connection's addresses used again in the trace, are not told apart.)
 */
static size_t
pair(const struct smsg *s, size_t ns, const struct smsg *r, size_t nr,
    struct sync_pair **p)
{
	DARR(struct sync_pair) v = { 0 };

	for (size_t i = 0; i < nr; i++) {
		/* the first send of the connection whose last byte is at
		   or after the receive's first */
		size_t lo = 0, hi = ns;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (s[mid].conn < r[i].conn || (s[mid].conn ==
			    r[i].conn && last_byte(&s[mid]) < r[i].seq))
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < ns && s[lo].conn == r[i].conn &&
		    (uint64_t)last_byte(&s[lo]) < (uint64_t)r[i].seq +
		    r[i].len; lo++) {
			struct sync_pair x = { s[lo].ts, r[i].ts };
			DPUSH(v, x);
		}
	}
	*p = v.v != NULL ? v.v : xmalloc(sizeof(**p));
	return v.n;
}

void
sync_align(const struct sync_msgs *a, const struct sync_msgs *b,
    struct sync_offset *o)
{
	struct smsg *sa = xmalloc((a->send.n ? a->send.n : 1) * sizeof(*sa));
	struct smsg *sb = xmalloc((b->send.n ? b->send.n : 1) * sizeof(*sb));
	struct sync_pair *ab, *ba;

	memcpy(sa, a->send.v, a->send.n * sizeof(*sa));
	memcpy(sb, b->send.v, b->send.n * sizeof(*sb));
	qsort(sa, a->send.n, sizeof(*sa), by_conn_last);
	qsort(sb, b->send.n, sizeof(*sb), by_conn_last);
	size_t nab = pair(sa, a->send.n, b->recv.v, b->recv.n, &ab);
	size_t nba = pair(sb, b->send.n, a->recv.v, a->recv.n, &ba);
	sync_fit(ab, nab, ba, nba, o);
	free(ab);
	free(ba);
	free(sa);
	free(sb);
}

void
sync_each_pair(const struct sync_msgs *a, const struct sync_msgs *b,
    void (*fn)(void *arg, const struct sync_msg *send,
    const struct sync_msg *recv), void *arg)
{
	struct smsg *s = xmalloc((a->send.n ? a->send.n : 1) * sizeof(*s));
	size_t ns = a->send.n;

	memcpy(s, a->send.v, ns * sizeof(*s));
	qsort(s, ns, sizeof(*s), by_conn_last);
	for (size_t i = 0; i < b->recv.n; i++) {
		const struct smsg *r = &b->recv.v[i];
		size_t lo = 0, hi = ns;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (s[mid].conn < r->conn || (s[mid].conn == r->conn &&
			    last_byte(&s[mid]) < r->seq))
				lo = mid + 1;
			else
				hi = mid;
		}
		struct sync_msg rm = { r->ts, r->sk, r->tid };
		for (; lo < ns && s[lo].conn == r->conn &&
		    (uint64_t)last_byte(&s[lo]) < (uint64_t)r->seq + r->len;
		    lo++) {
			struct sync_msg sm = { s[lo].ts, s[lo].sk, s[lo].tid };
			fn(arg, &sm, &rm);
		}
	}
	free(s);
}
