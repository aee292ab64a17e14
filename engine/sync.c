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
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/array.h"
#include "engine-local.h"

struct smsg {
	uint64_t ts;
	uint64_t conn;		/* hash of "SRC DST", the sender's view */
	uint32_t seq, len;	/* its first byte's sequence, its bytes */
	uint64_t sk;		/* its socket */
	uint32_t tid;		/* the thread that sent or received it */
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
	uint64_t conn[2];	/* conn_of() its tuple as a receive's [0]
				   and a send's [1], worked out once */
};

typedef DARR(struct smsg) msgv;

struct sync_msgs {
	msgv send, recv;
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
   little after the message it names); NULL when none. v is sorted by
   socket and time, first maps a socket to its first record there (a
   socket has one record, or a few). */
static const struct addr *
addr_at(const struct addr *v, size_t n, const struct hmap *first,
    uint64_t sk, uint64_t ts)
{
	const uint64_t *f = hmap_get(first, sk);

	if (f == NULL)
		return NULL;
	size_t i = (size_t)*f;
	while (i + 1 < n && v[i + 1].sk == sk && v[i + 1].ts <= ts)
		i++;
	return &v[i];
}

static uint32_t last_byte(const struct smsg *x);

/* The messages sorted for pairing: by connection and last byte (sends)
   or first byte (receives); messages alike in both stay in the order
   they were read. */
static uint64_t
msg_conn(const void *p)
{
	return ((const struct smsg *)p)->conn;
}

static uint64_t
msg_last(const void *p)
{
	return last_byte(p);
}

static uint64_t
msg_first(const void *p)
{
	return ((const struct smsg *)p)->seq;
}

static void
sort_msgs(struct smsg *v, size_t n, int send)
{
	radix_sort_records(v, n, sizeof(*v), msg_conn, 64, send ? msg_last :
	    msg_first, 32);
}

typedef DARR(char *) strv;
typedef DARR(struct addr) addrv;

/* Until its connection is known, a message's conn tells a UDP datagram
   (RAW_UDP) from a TCP message (0). */
#define RAW_UDP 1

/* What one decoding thread of sync_read() keeps. */
struct gather {
	struct trace_reader *r;
	size_t *next;			/* the next chunk to take (atomic) */
	uint64_t *done;			/* chunks decoded (atomic) */
	int tell;			/* this thread reports progress */
	strv strs;
	addrv addrs;
	msgv send, recv;		/* conn not known yet */
};

/* The messages and socket addresses of one decoded event. */
static void
gather_event(struct gather *x, const struct trace_event *e)
{
	if (e->type == TT_SOCK_ADDR && e->blob != NULL) {
		char *t = xmalloc(e->blob_len + 1);
		memcpy(t, e->blob, e->blob_len);
		t[e->blob_len] = '\0';
		DPUSH(x->strs, t);
		struct addr a = { e->arg[0], e->ts, x->strs.n - 1, { 0, 0 } };
		DPUSH(x->addrs, a);
		return;
	}
	if ((e->type != TT_SOCK_SEND && e->type != TT_SOCK_RECV) ||
	    (uint32_t)e->arg[5] == 0 || (int64_t)e->arg[3] <= 0 ||
	    (e->arg[2] != IPPROTO_TCP_ && e->arg[2] != IPPROTO_UDP_))
		return;
	int udp = e->arg[2] == IPPROTO_UDP_;
	struct smsg m = { e->ts, udp ? RAW_UDP : 0, (uint32_t)e->arg[5],
	    udp ? 1 : (uint32_t)e->arg[3], e->arg[0], e->tid };
	if (e->type == TT_SOCK_SEND)
		DPUSH(x->send, m);
	else
		DPUSH(x->recv, m);
}

/* The types sync_read() reads: messages and socket addresses. */
static const uint8_t msg_types[TT_NTYPES] = {
	[TT_SOCK_SEND] = 1, [TT_SOCK_RECV] = 1, [TT_SOCK_ADDR] = 1,
};

/* A decoding thread: chunks taken one at a time, in no order (what it
   keeps is sorted after). */
static void *
gather_main(void *arg)
{
	struct gather *x = arg;
	struct trace_chunk_buf *b = trace_chunk_buf_new();
	struct trace_event *evs = NULL;
	size_t cap = 0, nch = trace_reader_nchunks(x->r);

	for (;;) {
		size_t i = __atomic_fetch_add(x->next, 1, __ATOMIC_RELAXED);
		if (i >= nch)
			break;
		const struct trace_chunk_info *ci = trace_reader_chunk(x->r, i);
		if (ci->count > cap) {
			cap = ci->count;
			evs = xreallocarray(evs, cap, sizeof(*evs));
		}
		size_t n = trace_reader_decode_chunk_only(x->r, i, b, evs,
		    msg_types);
		for (size_t k = 0; k < n; k++)
			gather_event(x, &evs[k]);
		uint64_t d = __atomic_add_fetch(x->done, 1, __ATOMIC_RELAXED);
		if (x->tell)
			trace_reader_tell_progress(x->r, d);
	}
	free(evs);
	trace_chunk_buf_free(b);
	return NULL;
}

/* b's n elements of size sz after a's (of *na), b freed. */
static void *
concat(void *a, size_t *na, void *b, size_t n, size_t sz)
{
	if (n > 0) {
		a = xreallocarray(a, *na + n, sz);
		memcpy((char *)a + *na * sz, b, n * sz);
		*na += n;
	}
	free(b);
	return a;
}

/* The messages of v whose connection addrs tells, their conn set; the
   others dropped. */
static void
resolve(msgv *v, int send, const struct addr *addrs, size_t naddrs,
    const struct hmap *first)
{
	size_t k = 0;

	for (size_t i = 0; i < v->n; i++) {
		struct smsg x = v->v[i];
		const struct addr *a = addr_at(addrs, naddrs, first, x.sk,
		    x.ts);
		if (a == NULL || a->conn[send] == 0)
			continue;
		uint64_t udp = x.conn == RAW_UDP ? UDP_CONN : 0;
		x.conn = a->conn[send] ^ udp;
		v->v[k++] = x;
	}
	v->n = k;
}

/* One side's messages resolved (resolve()) and sorted as pairing walks
   them: the sends by connection and last byte, the receives by
   connection and first byte. */
struct settle {
	msgv *v;
	int send;
	const struct addr *addrs;
	size_t naddrs;
	const struct hmap *first;
};

static void *
settle_main(void *arg)
{
	struct settle *x = arg;

	resolve(x->v, x->send, x->addrs, x->naddrs, x->first);
	sort_msgs(x->v->v, x->v->n, x->send);
	return NULL;
}

int
sync_read(struct trace_reader *r, struct sync_msgs **out, char **cause)
{
	struct sync_msgs *m = xcalloc(1, sizeof(*m));
	size_t next = 0;
	uint64_t done = 0;
	struct gather g[2];
	pthread_t th;
	int two;

	(void)cause;
	*out = NULL;
	/* the chunks decoded on two threads when there are two CPUs: the
	   order of events does not matter here */
	memset(g, 0, sizeof(g));
	for (int k = 0; k < 2; k++) {
		g[k].r = r;
		g[k].next = &next;
		g[k].done = &done;
	}
	g[0].tell = 1;		/* the calling thread's */
	two = sysconf(_SC_NPROCESSORS_ONLN) > 1 &&
	    pthread_create(&th, NULL, gather_main, &g[1]) == 0;
	gather_main(&g[0]);
	if (two)
		pthread_join(th, NULL);
	/* the second thread's strings follow the first's */
	for (size_t i = 0; i < g[1].addrs.n; i++)
		g[1].addrs.v[i].str += g[0].strs.n;
	strv strs = g[0].strs;
	addrv addrs = g[0].addrs;
	strs.v = concat(strs.v, &strs.n, g[1].strs.v, g[1].strs.n,
	    sizeof(*strs.v));
	addrs.v = concat(addrs.v, &addrs.n, g[1].addrs.v, g[1].addrs.n,
	    sizeof(*addrs.v));
	m->send.v = concat(g[0].send.v, &g[0].send.n, g[1].send.v,
	    g[1].send.n, sizeof(struct smsg));
	m->send.n = m->send.cap = g[0].send.n;
	m->recv.v = concat(g[0].recv.v, &g[0].recv.n, g[1].recv.v,
	    g[1].recv.n, sizeof(struct smsg));
	m->recv.n = m->recv.cap = g[0].recv.n;
	qsort(addrs.v, addrs.n, sizeof(*addrs.v), by_sk_ts);
	struct hmap first;
	hmap_init(&first);
	for (size_t i = 0; i < addrs.n; i++) {
		int added;
		(void)hmap_put(&first, addrs.v[i].sk, i, &added);
		const char *t = strs.v[addrs.v[i].str];
		for (int k = 0; k < 2; k++)
			addrs.v[i].conn[k] = conn_of(t, strlen(t), k);
	}
	/* the receives on a second thread, the sends on this one */
	struct settle rs = { &m->recv, 0, addrs.v, addrs.n, &first };
	struct settle ss = { &m->send, 1, addrs.v, addrs.n, &first };
	two = two && pthread_create(&th, NULL, settle_main, &rs) == 0;
	settle_main(&ss);
	if (two)
		pthread_join(th, NULL);
	else
		settle_main(&rs);
	hmap_free(&first);
	for (size_t i = 0; i < strs.n; i++)
		free(strs.v[i]);
	free(strs.v);
	free(addrs.v);
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

/*
 * Each send of s whose last byte a receive of r took, with that
 * receive: fn(arg, send, receive). s is sorted by connection and last
 * byte, r by connection and first byte (sync_read()), so one walk of
 * both pairs them. (A sequence that wraps within a receive, or a
 * connection's addresses used again in the trace, are not told apart.)
 */
static void
walk_pairs(const struct smsg *s, size_t ns, const struct smsg *r, size_t nr,
    void (*fn)(void *, const struct smsg *, const struct smsg *), void *arg)
{
	size_t j = 0;

	for (size_t i = 0; i < nr; i++) {
		/* the first send of the connection whose last byte is at
		   or after the receive's first */
		while (j < ns && (s[j].conn < r[i].conn || (s[j].conn ==
		    r[i].conn && last_byte(&s[j]) < r[i].seq)))
			j++;
		for (size_t k = j; k < ns && s[k].conn == r[i].conn &&
		    (uint64_t)last_byte(&s[k]) < (uint64_t)r[i].seq +
		    r[i].len; k++)
			fn(arg, &s[k], &r[i]);
	}
}

static void
push_pair(void *arg, const struct smsg *s, const struct smsg *r)
{
	DARR(struct sync_pair) *v = arg;
	struct sync_pair x = { s->ts, r->ts };

	DPUSH(*v, x);
}

/* The pairs of walk_pairs() as their two times, into *p (allocated);
   how many. */
static size_t
pair(const struct smsg *s, size_t ns, const struct smsg *r, size_t nr,
    struct sync_pair **p)
{
	DARR(struct sync_pair) v = { 0 };

	walk_pairs(s, ns, r, nr, push_pair, &v);
	*p = v.v != NULL ? v.v : xmalloc(sizeof(**p));
	return v.n;
}

void
sync_align(const struct sync_msgs *a, const struct sync_msgs *b,
    struct sync_offset *o)
{
	struct sync_pair *ab, *ba;

	/* the sends are sorted by connection and last byte (sync_read()) */
	size_t nab = pair(a->send.v, a->send.n, b->recv.v, b->recv.n, &ab);
	size_t nba = pair(b->send.v, b->send.n, a->recv.v, a->recv.n, &ba);
	sync_fit(ab, nab, ba, nba, o);
	free(ab);
	free(ba);
}

struct each {
	void (*fn)(void *, const struct sync_msg *, const struct sync_msg *);
	void *arg;
};

static void
each_pair(void *arg, const struct smsg *s, const struct smsg *r)
{
	const struct each *e = arg;
	struct sync_msg sm = { s->ts, s->sk, s->tid };
	struct sync_msg rm = { r->ts, r->sk, r->tid };

	e->fn(e->arg, &sm, &rm);
}

void
sync_each_pair(const struct sync_msgs *a, const struct sync_msgs *b,
    void (*fn)(void *arg, const struct sync_msg *send,
    const struct sync_msg *recv), void *arg)
{
	struct each e = { fn, arg };

	walk_pairs(a->send.v, a->send.n, b->recv.v, b->recv.n, each_pair, &e);
}
