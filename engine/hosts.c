/*
 * hosts.c: several hosts' traces merged into one reader for a diagnosis.
 *
 * Each trace's TCP messages are read (sync.c), every two traces are
 * aligned from the messages between them, and each trace is placed on
 * the base clock (the first trace linked to any other) through the chain
 * of alignments with the least uncertainty: a tree grown from the base,
 * its edges the pairs of traces with messages both ways first. A trace
 * that no chain reaches is left out and said so. The merged reader
 * (trace_reader_merge()) then shows every aligned trace on the base
 * clock, and carries the messages paired across traces
 * (struct trace_msg_pair) for the graph builds.
 *
 * struct hosts_report says, per trace, its host name (made unique), its
 * offset and uncertainty, what it was aligned against and through how
 * many messages.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "engine-local.h"

/* An alignment of trace b against a: t_b = t_a + est + drift (t_a -
   ref), within unc (-1: a bound only, messages one way). */
struct link {
	int ok;
	int64_t est, unc;
	double drift;
	uint64_t ref;
	size_t msgs;
	int consistent;
};

static void
estimate(const struct sync_offset *o, struct link *l)
{
	memset(l, 0, sizeof(*l));
	l->msgs = o->ab + o->ba;
	l->consistent = o->consistent;
	if (!o->have_est)
		return;
	l->ok = 1;
	l->est = o->est;
	l->ref = o->ref;
	l->drift = o->have_drift ? o->drift : 0.0;
	l->unc = o->uncertainty == INT64_MAX || !(o->have_lo && o->have_hi) ?
	    -1 : o->uncertainty;
}

/* The same alignment seen from b: t_a = t_b + est' + drift' (t_b -
   ref'). */
static void
turn(const struct link *l, struct link *r)
{
	*r = *l;
	r->est = -l->est;
	if (l->drift != 0.0) {
		r->drift = -l->drift / (1.0 + l->drift);
		r->ref = (uint64_t)((int64_t)l->ref + l->est);
	}
}

/* A cost to compare chains by: a bound only weighs more than any
   estimate. */
static uint64_t
cost(const struct link *l)
{
	return l->unc < 0 ? (uint64_t)1 << 50 : (uint64_t)l->unc + 1;
}

/*
 * Host v placed through u: u's clock is t_u = t_0 + off_u + d_u (t_0 -
 * R_u), the link t_v = t_u + e + d (t_u - r). Then t_v = t_0 + off_v +
 * d_v (t_0 - R_v), with R_v = R_u when u drifts, else the link's r on
 * the base clock.
 */
static void
compose(const struct hosts_host *u, const struct link *l,
    struct hosts_host *v)
{
	double du = u->drift, d = l->drift;
	uint64_t R = u->drift != 0.0 ? u->ref :
	    trace_clockmap_apply(&(struct trace_clockmap){ u->offset, 0.0, 0 },
	    l->ref);
	/* t_u at t_0 = R */
	double tu = (double)R + (double)u->offset + du * ((double)R -
	    (double)u->ref);

	v->ref = R;
	v->drift = du + d + d * du;
	v->offset = (int64_t)llround(tu - (double)R + (double)l->est +
	    d * (tu - (double)l->ref));
}

size_t
hosts_place(struct sync_msgs *const *msgs, size_t n, struct hosts_host *v)
{
	struct link *lk = xcalloc(n * n, sizeof(*lk));
	size_t base = n;

	for (size_t a = 0; a < n; a++)
		for (size_t b = a + 1; b < n; b++) {
			struct sync_offset so;
			sync_align(msgs[a], msgs[b], &so);
			estimate(&so, &lk[a * n + b]);
			turn(&lk[a * n + b], &lk[b * n + a]);
		}
	for (size_t i = 0; i < n; i++) {
		v[i].merged = 0;
		v[i].via = -1;
		v[i].offset = 0;
		v[i].drift = 0.0;
		v[i].ref = 0;
		v[i].uncertainty = 0;
		v[i].pairs = 0;
		v[i].consistent = 1;
	}
	/* the base: the first trace linked to any */
	for (size_t i = 0; i < n && base == n; i++)
		for (size_t j = 0; j < n; j++)
			if (j != i && lk[i * n + j].ok) {
				base = i;
				break;
			}
	if (base == n) {
		free(lk);
		return n;
	}
	/* the least-cost chains from the base (Dijkstra over n nodes) */
	uint64_t *best = xcalloc(n, sizeof(*best));
	int *done = xcalloc(n, sizeof(*done));
	for (size_t i = 0; i < n; i++)
		best[i] = UINT64_MAX;
	best[base] = 0;
	v[base].merged = 1;
	for (;;) {
		size_t u = n;
		for (size_t i = 0; i < n; i++)
			if (!done[i] && best[i] != UINT64_MAX &&
			    (u == n || best[i] < best[u]))
				u = i;
		if (u == n)
			break;
		done[u] = 1;
		for (size_t w = 0; w < n; w++) {
			const struct link *l = &lk[u * n + w];
			if (done[w] || !l->ok || best[u] + cost(l) >= best[w])
				continue;
			best[w] = best[u] + cost(l);
			struct hosts_host *x = &v[w];
			x->merged = 1;
			x->via = (int)u;
			compose(&v[u], l, x);
			x->uncertainty = l->unc < 0 || v[u].uncertainty < 0 ?
			    -1 : v[u].uncertainty + l->unc;
			x->pairs = l->msgs;
			x->consistent = l->consistent && v[u].consistent;
		}
	}
	free(best);
	free(done);
	free(lk);
	return base;
}

struct pairing {
	DARR(struct trace_msg_pair) v;
	unsigned ha, hb;
	const struct trace_clockmap *ma, *mb;
};

static void
add_pair(void *arg, const struct sync_msg *s, const struct sync_msg *r)
{
	struct pairing *p = arg;
	struct trace_msg_pair x = {
		.send_ts = trace_clockmap_apply(p->ma, s->ts),
		.send_sk = trace_key_on_host(s->sk, p->ha),
		.recv_ts = trace_clockmap_apply(p->mb, r->ts),
		.recv_sk = trace_key_on_host(r->sk, p->hb),
		.send_tid = trace_tid_on_host(s->tid, p->ha),
		.recv_tid = trace_tid_on_host(r->tid, p->hb),
	};

	DPUSH(p->v, x);
}

static uint64_t
recv_time(const void *p)
{
	return ((const struct trace_msg_pair *)p)->recv_ts;
}

static uint64_t
send_time(const void *p)
{
	return ((const struct trace_msg_pair *)p)->send_ts;
}

/* The pairs by receive time, then send time. */
static void
sort_pairs(struct trace_msg_pair *p, size_t n)
{
	radix_sort_records(p, n, sizeof(*p), recv_time, 64, send_time, 64);
}

static void
push_warning(struct hosts_report *h, char *w)
{
	h->warnings = xreallocarray(h->warnings, h->nwarnings + 1,
	    sizeof(*h->warnings));
	h->warnings[h->nwarnings++] = w;
}

/* Unique names: a name met before gets "#2", "#3"... */
static void
name_hosts(struct hosts_report *h, struct trace_reader **rs)
{
	for (size_t i = 0; i < h->n; i++) {
		const char *nm = trace_reader_info(rs[i])->hostname;
		if (nm == NULL || *nm == '\0')
			nm = "host";
		char *cand = xstrdup(nm);
		size_t first = i;
		for (unsigned k = 2;; k++) {
			size_t j;
			for (j = 0; j < i; j++)
				if (strcmp(h->v[j].name, cand) == 0)
					break;
			if (j == i)
				break;
			if (first == i)
				first = j;
			free(cand);
			cand = xasprintf("%s#%u", nm, k);
		}
		if (first != i)
			push_warning(h, xasprintf("%s and %s both name host "
			    "%s: the second is shown as %s", h->v[first].path,
			    h->v[i].path, nm, cand));
		h->v[i].name = cand;
	}
}

/* The progress of the messages' reading, over every trace. */
struct tell {
	const struct hosts_opts *o;
	uint64_t before, total;		/* chunks of the traces read before */
};

static void
tell_progress(void *arg, uint64_t done, uint64_t total)
{
	struct tell *t = arg;

	(void)total;
	t->o->progress(t->o->arg, t->before + done, t->total);
}

/*
 * The messages of every trace into msgs[], one trace after another
 * (each one's chunks are decoded on two threads; reading the traces at
 * the same time as well made the merge no faster, measured, and the
 * diagnosis's peak memory a sixth larger: the threads' heaps stay).
 */
static int
read_all(struct trace_reader **rs, const char *const *paths, size_t n,
    const struct hosts_opts *o, struct sync_msgs **msgs, char **cause)
{
	struct tell t = { o, 0, 0 };
	int err = 0;

	for (size_t i = 0; i < n; i++)
		t.total += trace_reader_nchunks(rs[i]);
	for (size_t i = 0; i < n && err == 0; i++) {
		char *c = NULL;
		if (o != NULL && o->progress != NULL)
			trace_reader_on_progress(rs[i], tell_progress, &t);
		err = sync_read(rs[i], &msgs[i], &c);
		trace_reader_on_progress(rs[i], NULL, NULL);
		t.before += trace_reader_nchunks(rs[i]);
		if (err != 0 && cause)
			*cause = xasprintf("%s: %s", paths[i],
			    c ? c : "cannot read");
		free(c);
	}
	return err;
}

int
hosts_merge(struct trace_reader **rs, const char *const *paths, size_t n,
    const struct hosts_opts *o, struct trace_reader **out,
    struct hosts_report **rep, char **cause)
{
	struct hosts_report *h = xcalloc(1, sizeof(*h));
	struct sync_msgs **msgs = xcalloc(n, sizeof(*msgs));
	int err = 0;

	*out = NULL;
	*rep = NULL;
	if (n < 2 || n > TRACE_MAX_HOSTS) {
		if (cause)
			*cause = xasprintf("%zu traces: between 2 and %d hosts "
			    "can be merged", n, TRACE_MAX_HOSTS);
		err = GRAPH_ERANGE;
		goto fail;
	}
	h->n = n;
	h->v = xcalloc(n, sizeof(*h->v));
	for (size_t i = 0; i < n; i++) {
		h->v[i].path = xstrdup(paths[i]);
		h->v[i].via = -1;
	}
	if ((err = read_all(rs, paths, n, o, msgs, cause)) != 0)
		goto fail;
	name_hosts(h, rs);
	if (hosts_place(msgs, n, h->v) == n) {
		if (cause)
			*cause = xstrdup("no TCP message pairs one trace with "
			    "another: the clocks cannot be aligned (record "
			    "each host with --net)");
		err = GRAPH_ERANGE;
		goto fail;
	}
	/* the merged reader: the aligned traces, in the order given */
	struct trace_reader **in = xcalloc(n, sizeof(*in));
	struct trace_clockmap *maps = xcalloc(n, sizeof(*maps));
	const char **names = xcalloc(n, sizeof(*names));
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (!h->v[i].merged) {
			push_warning(h, xasprintf("%s (host %s): not aligned, "
			    "left out: no TCP message pairs it with the other "
			    "traces", paths[i], h->v[i].name));
			continue;
		}
		h->v[i].index = (unsigned)m;
		maps[m].offset = h->v[i].offset;
		maps[m].drift = h->v[i].drift;
		maps[m].ref = h->v[i].ref;
		names[m] = h->v[i].name;
		in[m++] = rs[i];
	}
	struct pairing p = { 0 };
	for (size_t a = 0; a < n; a++)
		for (size_t b = 0; b < n; b++) {
			if (a == b || !h->v[a].merged || !h->v[b].merged)
				continue;
			p.ha = h->v[a].index;
			p.hb = h->v[b].index;
			p.ma = &maps[p.ha];
			p.mb = &maps[p.hb];
			sync_each_pair(msgs[a], msgs[b], add_pair, &p);
		}
	sort_pairs(p.v.v, p.v.n);
	h->npairs = p.v.n;
	err = trace_reader_merge(out, in, maps, names, m, cause);
	if (err == 0) {
		trace_reader_set_pairs(*out, p.v.v, p.v.n);
		/* the readers left out are the caller's no more */
		for (size_t i = 0; i < n; i++)
			if (!h->v[i].merged)
				trace_reader_close(rs[i]);
		for (size_t i = 0; i < n; i++)
			rs[i] = NULL;
	}
	free(p.v.v);
	free(in);
	free(maps);
	free(names);
	if (err)
		goto fail;
	for (size_t i = 0; i < n; i++)
		sync_msgs_free(msgs[i]);
	free(msgs);
	*rep = h;
	return 0;
fail:
	for (size_t i = 0; i < n; i++)
		sync_msgs_free(msgs[i]);
	free(msgs);
	hosts_report_free(h);
	return err;
}

int
hosts_open(const char *const *paths, size_t n, struct trace_reader **out,
    struct hosts_report **rep, char **cause)
{
	struct trace_reader **rs = xcalloc(n ? n : 1, sizeof(*rs));
	int err = 0;

	*out = NULL;
	*rep = NULL;
	for (size_t i = 0; i < n && err == 0; i++) {
		char *c = NULL;
		if ((err = trace_reader_open(&rs[i], paths[i], &c)) != 0) {
			if (cause)
				*cause = c;
			else
				free(c);
		}
	}
	if (err == 0)
		err = hosts_merge(rs, paths, n, NULL, out, rep, cause);
	for (size_t i = 0; i < n; i++)
		trace_reader_close(rs[i]);
	free(rs);
	return err;
}

void
hosts_report_free(struct hosts_report *h)
{
	if (h == NULL)
		return;
	for (size_t i = 0; i < h->n; i++) {
		free(h->v[i].name);
		free(h->v[i].path);
	}
	for (size_t i = 0; i < h->nwarnings; i++)
		free(h->warnings[i]);
	free(h->warnings);
	free(h->v);
	free(h);
}

void
hosts_write_text(const struct hosts_report *h, FILE *f)
{
	for (size_t i = 0; i < h->n; i++) {
		const struct hosts_host *x = &h->v[i];
		fprintf(f, "host %s: %s", x->name, x->path);
		if (!x->merged) {
			fprintf(f, ", not aligned (left out)\n");
			continue;
		}
		if (x->via < 0) {
			fprintf(f, ", the base clock\n");
			continue;
		}
		fprintf(f, ", clock %+.6f s", (double)x->offset / 1e9);
		if (x->uncertainty >= 0)
			fprintf(f, " \u00b1 %.0f \u00b5s", (double)x->uncertainty /
			    1e3);
		else
			fprintf(f, " (a bound: messages one way only)");
		if (x->drift != 0.0)
			fprintf(f, ", drifting %+.2f ppm", x->drift * 1e6);
		size_t b = 0;
		while (b < h->n && !(h->v[b].merged && h->v[b].via < 0))
			b++;
		fprintf(f, " from %s's", b < h->n ? h->v[b].name : "?");
		if (b < h->n && &h->v[b] != &h->v[x->via])
			fprintf(f, ", through %s", h->v[x->via].name);
		fprintf(f, " (%zu messages with %s)%s\n", x->pairs,
		    h->v[x->via].name, x->consistent ? "" : "; inconsistent: "
		    "drift or a wrong pairing");
	}
}

void
hosts_write_json(const struct hosts_report *h, FILE *f)
{
	fprintf(f, "\"hosts\":[");
	for (size_t i = 0; i < h->n; i++) {
		const struct hosts_host *x = &h->v[i];
		fprintf(f, "%s{\"host\":", i ? "," : "");
		engine_json_str(f, x->name);
		fprintf(f, ",\"trace\":");
		engine_json_str(f, x->path);
		fprintf(f, ",\"merged\":%s", x->merged ? "true" : "false");
		if (x->merged)
		{
			fprintf(f, ",\"offset_ns\":%" PRId64 ",\"uncertainty_ns\":"
			    "%" PRId64 ",\"drift_ppm\":%.3f,\"ref_ns\":%" PRIu64
			    ",\"pairs\":%zu,\"against\":", x->offset,
			    x->uncertainty, x->drift * 1e6, x->ref, x->pairs);
			if (x->via < 0)
				fprintf(f, "null");
			else
				engine_json_str(f, h->v[x->via].name);
		}
		fprintf(f, "}");
	}
	fprintf(f, "],\"messages_paired\":%zu", h->npairs);
}
