/*
 * test-hosts.c: criterion tests of several hosts' traces merged
 * (trace/reader-multi.c, engine/hosts.c) on two traces written here.
 *
 * Host "alpha" (a client) and host "beta" (a server) each have a thread
 * 100 and a socket at the same kernel address, as two machines could;
 * beta's clock runs 5 s ahead of alpha's. The client sends a request
 * (10 bytes) at 1 ms of its clock and receives the reply (20 bytes) at
 * 3 ms; the server receives at 1.5 ms and replies at 2.5 ms of alpha's
 * clock. So the offset lies within 5 s +- 0.5 ms, and the merged trace
 * runs send, receive, send, receive.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "common/common.h"
#include "engine/engine.h"
#include "store-check.h"

#define SK 0xffff888000001000ULL
#define SHIFT 5000000000ULL
#define MS 1000000ULL

static void
add(struct trace_writer *w, uint64_t ts, uint32_t tid, uint16_t cpu,
    unsigned type, const uint64_t *args, size_t nargs, const char *blob)
{
	struct trace_event e = { 0 };

	e.ts = ts;
	e.tid = tid;
	e.cpu = cpu;
	e.type = (uint16_t)type;
	for (size_t i = 0; i < nargs; i++)
		e.arg[i] = args[i];
	if (blob != NULL) {
		e.blob = blob;
		e.blob_len = (uint32_t)strlen(blob);
	}
	cr_assert_eq(trace_writer_add(w, &e), 0);
}

/* One host's trace: its thread 100 (comm), the socket's addresses, then
   its messages: (time, send?, bytes, sequence). */
static char *
host_trace(const char *host, const char *comm, const char *tuple,
    const uint64_t (*msg)[4], size_t nmsg)
{
	char *dir = fix_tmpdir();
	struct trace_writer_opts o = { 0 };
	struct trace_writer *w;
	char *cause = NULL;

	o.ncpus = 2;
	o.group = (gid_t)-1;
	o.hostname = host;
	o.release = "6.0-test";
	o.boot_id = host;
	cr_assert_eq(trace_writer_open(&w, dir, &o, &cause), 0, "%s",
	    cause ? cause : "?");
	uint64_t t0 = msg[0][0] - 100000;
	uint64_t th[] = { 100, 100, 1, 0, 0 };
	add(w, t0, 100, TRACE_CPU_META, TT_THREAD, th, 5, comm);
	uint64_t sa[] = { SK, 2, 6 };
	add(w, t0 + 1, 100, TRACE_CPU_META, TT_SOCK_ADDR, sa, 3, tuple);
	for (size_t i = 0; i < nmsg; i++) {
		uint64_t a[] = { SK, 2, 6, msg[i][2], 0, msg[i][3] };
		add(w, msg[i][0], 100, 0, msg[i][1] ? TT_SOCK_SEND :
		    TT_SOCK_RECV, a, 6, NULL);
	}
	cr_assert_eq(trace_writer_close(w), 0);
	return dir;
}

static char *alpha, *beta;

static void
make_traces(void)
{
	static const uint64_t a[][4] = {
		{ 1 * MS, 1, 10, 1000 },	/* the request */
		{ 3 * MS, 0, 20, 5000 },	/* the reply */
	};
	static const uint64_t b[][4] = {
		{ SHIFT + 1500000, 0, 10, 1000 },
		{ SHIFT + 2500000, 1, 20, 5000 },
	};

	alpha = host_trace("alpha", "cli", "10.0.0.1:5000 10.0.0.2:80", a, 2);
	beta = host_trace("beta", "srv", "10.0.0.2:80 10.0.0.1:5000", b, 2);
}

static void
drop_traces(void)
{
	fix_rm_rf(alpha);
	fix_rm_rf(beta);
	free(alpha);
	free(beta);
}

static struct trace_reader *
merged(struct hosts_report **rep)
{
	const char *paths[] = { alpha, beta };
	struct trace_reader *r;
	char *cause = NULL;

	cr_assert_eq(hosts_open(paths, 2, &r, rep, &cause), 0, "%s",
	    cause ? cause : "?");
	return r;
}

TestSuite(hosts, .init = make_traces, .fini = drop_traces);

Test(hosts, clocks_aligned_from_the_messages)
{
	struct hosts_report *h;
	struct trace_reader *r = merged(&h);

	cr_assert_eq(h->n, 2);
	cr_assert(h->v[0].merged && h->v[1].merged);
	cr_assert_str_eq(h->v[0].name, "alpha");
	cr_assert_str_eq(h->v[1].name, "beta");
	cr_assert_eq(h->v[0].via, -1);
	cr_assert_eq(h->v[1].via, 0);
	cr_assert_eq(h->v[1].pairs, 2);
	/* within 5 s - 0.5 ms and 5 s + 0.5 ms; the middle */
	cr_assert_eq(h->v[1].offset, (int64_t)SHIFT, "offset %lld",
	    (long long)h->v[1].offset);
	cr_assert_eq(h->v[1].uncertainty, 500000);
	cr_assert_eq(h->npairs, 2);
	cr_assert_eq(trace_reader_nhosts(r), 2);
	cr_assert_str_eq(trace_reader_host_name(r, 1), "beta");
	trace_reader_close(r);
	hosts_report_free(h);
}

Test(hosts, merged_events_in_time_order_host_qualified)
{
	struct hosts_report *h;
	struct trace_reader *r = merged(&h);
	struct trace_event ev;
	unsigned type[4];
	uint32_t tid[4];
	uint64_t ts[4], sk[4];
	size_t n = 0;

	while (trace_reader_next(r, &ev))
		if (ev.type == TT_SOCK_SEND || ev.type == TT_SOCK_RECV) {
			cr_assert_lt(n, 4);
			type[n] = ev.type;
			tid[n] = ev.tid;
			ts[n] = ev.ts;
			sk[n++] = ev.arg[0];
		}
	cr_assert_eq(n, 4);
	cr_assert(type[0] == TT_SOCK_SEND && type[1] == TT_SOCK_RECV &&
	    type[2] == TT_SOCK_SEND && type[3] == TT_SOCK_RECV);
	cr_assert_eq(ts[0], 1 * MS);
	cr_assert_eq(ts[1], 1500000, "beta's receive on alpha's clock");
	cr_assert_eq(ts[3], 3 * MS);
	/* the same thread id and socket address on two hosts, told apart */
	cr_assert_eq(tid[0], 100);
	cr_assert_eq(tid[1], trace_tid_on_host(100, 1));
	cr_assert_eq(trace_tid_host(tid[1]), 1);
	cr_assert_eq(trace_tid_local(tid[1]), 100);
	cr_assert_eq(sk[0], SK);
	cr_assert_neq(sk[1], SK);
	cr_assert_str_eq(trace_reader_thread(r, 100)->comm, "cli");
	cr_assert_str_eq(trace_reader_thread(r, tid[1])->comm, "srv");
	/* the bulk view: the same events, mapped the same way */
	size_t same = 0;
	struct trace_chunk_buf *b = trace_chunk_buf_new();
	for (size_t i = 0; i < trace_reader_nchunks(r); i++) {
		const struct trace_chunk_info *c = trace_reader_chunk(r, i);
		struct trace_event *evs = calloc(c->count + 1, sizeof(*evs));
		size_t k = trace_reader_decode_chunk(r, i, b, evs);
		for (size_t j = 0; j < k; j++)
			for (size_t x = 0; x < n; x++)
				if (evs[j].type == type[x] && evs[j].ts == ts[x] &&
				    evs[j].tid == tid[x] && evs[j].arg[0] == sk[x])
					same++;
		free(evs);
	}
	trace_chunk_buf_free(b);
	cr_assert_eq(same, 4);
	/* a seek on the merged clock */
	cr_assert_eq(trace_reader_seek(r, 2 * MS), 0);
	while (trace_reader_next(r, &ev))
		cr_assert_geq(ev.ts, 2 * MS);
	trace_reader_close(r);
	hosts_report_free(h);
}

/* The receive of a message from another host is joined to its send by a
   message edge, as a message within one host is. */
Test(hosts, messages_between_hosts_become_edges)
{
	struct hosts_report *h;
	struct trace_reader *r = merged(&h);
	struct graph *g;
	char *cause = NULL;
	size_t found = 0;

	cr_assert_eq(graph_build(r, NULL, &g, &cause), 0);
	for (size_t e = 0; e < graph_nedges(g); e++) {
		const struct graph_edge *x = graph_edge(g, (uint32_t)e);
		if (x->kind != GE_MSG)
			continue;
		uint32_t st = graph_thread(g, graph_vertex(g, x->src)->thread)->tid;
		uint32_t dt = graph_thread(g, graph_vertex(g, x->dst)->thread)->tid;
		cr_assert_neq(trace_tid_host(st), trace_tid_host(dt));
		found++;
	}
	cr_assert_eq(found, 2, "a message edge each way: %zu", found);
	uint32_t srv = graph_thread_find(g, trace_tid_on_host(100, 1));
	cr_assert_neq(srv, GRAPH_NONE);
	cr_assert_str_eq(graph_thread_host(g, srv), "beta");
	graph_free(g);
	trace_reader_close(r);
	hosts_report_free(h);
}

Test(hosts, a_trace_with_no_pairs_is_left_out)
{
	static const uint64_t c[][4] = { { 2 * MS, 1, 10, 77 } };
	char *other = host_trace("gamma", "x", "10.9.9.9:1 10.8.8.8:2", c, 1);
	const char *paths[] = { alpha, beta, other };
	struct trace_reader *r;
	struct hosts_report *h;
	char *cause = NULL;

	cr_assert_eq(hosts_open(paths, 3, &r, &h, &cause), 0);
	cr_assert_not(h->v[2].merged);
	cr_assert_eq(h->nwarnings, 1);
	cr_assert(strstr(h->warnings[0], "not aligned") != NULL);
	cr_assert_eq(trace_reader_nhosts(r), 2);
	trace_reader_close(r);
	hosts_report_free(h);
	/* nothing links two traces: an error, said */
	const char *lone[] = { alpha, other };
	cr_assert_neq(hosts_open(lone, 2, &r, &h, &cause), 0);
	cr_assert_not_null(cause);
	free(cause);
	fix_rm_rf(other);
	free(other);
}
