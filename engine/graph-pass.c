/*
 * graph-pass.c: a build pass's life (struct build_pass, engine-local.h):
 * its state made and its rules' lists (gb_new()), the check that a
 * streamed build is still what a replay would give (gb_stale()), a
 * replay (graph_do_build()), and its end: the edges indexed by source
 * and destination (compressed rows, make_csr()) and the working state
 * freed (gb_finish()). The events themselves go through gb_step()
 * (graph-build.c).
 */
#include <stdlib.h>
#include <string.h>

#include "engine-local.h"

/* Forget the built part; the vertex and edge arrays are kept for reuse
   (already faulted-in memory makes a rebuild faster). */
void
graph_clear_built(struct graph *g)
{
	free(g->out_off);
	free(g->in_off);
	free(g->in_idx);
	free(g->out_idx);
	g->out_off = g->in_off = g->in_idx = g->out_idx = NULL;
	g->nvx = 0;
	g->ned = 0;
	for (uint32_t i = 0; i < g->nth; i++)
		g->th[i].nvtx = 0;
}

/*
 * Index the edges (left in creation order) by source and by destination:
 * two counting sorts into arrays of edge indices.
 */
static void
make_csr(struct graph *g, struct build_pass *b)
{
	uint32_t nv = g->nvx;
	size_t ne = b->ned;

	/* off[v] counts, then ends; filling backwards leaves the starts */
	g->out_off = xcalloc((size_t)nv + 1, sizeof(uint32_t));
	g->in_off = xcalloc((size_t)nv + 1, sizeof(uint32_t));
	for (size_t e = 0; e < ne; e++) {
		g->out_off[b->ed[e].src]++;
		g->in_off[b->ed[e].dst]++;
	}
	for (uint32_t v = 1; v <= nv; v++) {
		g->out_off[v] += g->out_off[v - 1];
		g->in_off[v] += g->in_off[v - 1];
	}
	g->out_idx = xmalloc((ne ? ne : 1) * sizeof(uint32_t));
	g->in_idx = xmalloc((ne ? ne : 1) * sizeof(uint32_t));
	for (size_t e = ne; e-- > 0;) {
		g->out_idx[--g->out_off[b->ed[e].src]] = (uint32_t)e;
		g->in_idx[--g->in_off[b->ed[e].dst]] = (uint32_t)e;
	}
	g->ed = b->ed;
	g->caped = b->caped;
	b->ed = NULL;
	g->ned = ne;
}

void
gb_seed(struct build_pass *b, size_t win)
{
	const struct graph *g = b->g;
	const struct hmap *sk = win < g->nseeds ? &g->seeds[win][0] :
	    &g->skseed;
	const struct hmap *pipe = win < g->nseeds ? &g->seeds[win][1] :
	    &g->pipeseed;
	size_t pos = 0;
	uint64_t k, pid;

	while (hmap_next(sk, &pos, &k, &pid))
		*hmap_put(&b->skowner, k, 0, NULL) = pid;
	pos = 0;
	while (hmap_next(pipe, &pos, &k, &pid))
		*hmap_put(&b->pipereader, k, 0, NULL) = pid;
}

void
gb_gap(struct build_pass *b)
{
	struct hmap *maps[] = { &b->sockq, &b->skowner, &b->pipeq,
	    &b->pipereader, &b->efd, &b->timers, &b->works, &b->tasks,
	    &b->runloops, &b->flags, &b->conn, &b->raises };

	gb_grow_state(b);
	for (uint32_t i = 0; i < b->nst; i++) {
		struct thread_replay *s = &b->st[i];
		uint32_t pos = s->pos;
		uint8_t ready = s->ready;
		*s = gb_replay_fresh();
		s->pos = pos;
		s->ready = ready;
	}
	for (size_t m = 0; m < ARRAY_SIZE(maps); m++)
		hmap_clear(maps[m]);
	b->nq = 0;
	b->nqn = 0;
	b->qfree = GRAPH_NONE;
	b->xs = b->xr = 0;
	b->xseek = 0;
}

struct build_pass *
gb_new(struct graph *g, const struct rules *rules)
{
	static const struct rules none;
	struct build_pass *b = xcalloc(1, sizeof(*b));

	b->g = g;
	b->rs = rules ? rules : &none;
	b->qfree = GRAPH_NONE;
	b->t0 = now_ns();
	graph_clear_built(g);
	b->ed = g->ed;
	b->caped = g->caped;
	g->ed = NULL;
	if (b->ed == NULL) {
		b->caped = 4096;
		b->ed = xmalloc(b->caped * sizeof(*b->ed));
	}
	gb_grow_state(b);
	struct hmap *maps[] = { &b->sockq, &b->skowner, &b->pipeq,
	    &b->pipereader, &b->efd, &b->timers, &b->works, &b->tasks,
	    &b->runloops, &b->flags, &b->conn, &b->raises };
	for (size_t m = 0; m < ARRAY_SIZE(maps); m++)
		hmap_init(maps[m]);
	gb_xpairs_init(b);
	gb_seed(b, 0);
	for (size_t r = 0; r < b->rs->n; r++) {
		const struct rule *ru = &b->rs->v[r];
		unsigned ta = ru->a.type == RSEL_READ ||
		    ru->a.type == RSEL_WRITE ? TT_SYS_EXIT : ru->a.type;
		unsigned tb = ru->b.type == RSEL_READ ||
		    ru->b.type == RSEL_WRITE ? TT_SYS_EXIT : ru->b.type;
		unsigned types[2] = { ta & 0xff, tb & 0xff }, nt = 1;
		switch (ru->verb) {
		case RV_SPLIT: b->rtypes[ta & 0xff] |= RT_SPLIT; break;
		case RV_INPUT: b->rtypes[ta & 0xff] |= RT_INPUT; break;
		case RV_CONNECT:
			b->rtypes[ta & 0xff] |= RT_CONNECT;
			b->rtypes[tb & 0xff] |= RT_CONNECT;
			nt = ta == tb ? 1 : 2;
			break;
		case RV_CULL_WAKE: b->any_cullwake = 1; continue;
		default: continue;
		}
		for (unsigned k = 0; k < nt; k++) {
			unsigned ty = types[k];
			const struct rsel *sel = k == 0 ? &ru->a : &ru->b;
			int fdonly = sel->type == RSEL_READ ||
			    sel->type == RSEL_WRITE;
			if (ru->verb == RV_CONNECT && nt == 1)
				fdonly = fdonly && (ru->b.type == RSEL_READ ||
				    ru->b.type == RSEL_WRITE);
			if (b->nrlist[ty] == 0)
				b->rfdonly[ty] = (uint8_t)fdonly;
			else if (!fdonly)
				b->rfdonly[ty] = 0;
			b->rlist[ty] = xreallocarray(b->rlist[ty],
			    b->nrlist[ty] + 1u, sizeof(uint16_t));
			b->rlist[ty][b->nrlist[ty]++] = (uint16_t)r;
		}
	}
	return b;
}

int
gb_stale(struct build_pass *b)
{
	struct graph *g = b->g;

	gb_grow_state(b);
	if (g->pid_changed)
		return 1;
	for (uint32_t i = 0; i < g->nth; i++) {
		uint32_t old = g->th[i].flags & RULE_FLAGS;
		uint32_t fl = gb_thread_flags(g, b->rs, i);
		if (b->st[i].ready && fl != old)
			return 1;
		if (!b->st[i].ready)
			g->th[i].flags = (g->th[i].flags & ~RULE_FLAGS) | fl;
	}
	return 0;
}

/* Free the working state of a build (not its edges); may be repeated. */
static void
gb_free_work(struct build_pass *b)
{
	struct hmap *maps[] = { &b->sockq, &b->skowner, &b->pipeq,
	    &b->pipereader, &b->efd, &b->timers, &b->works, &b->tasks,
	    &b->runloops, &b->flags, &b->conn, &b->raises };

	for (size_t m = 0; m < ARRAY_SIZE(maps); m++)
		hmap_free(maps[m]);
	free(b->q);
	free(b->qn);
	b->q = NULL;
	b->qn = NULL;
	for (unsigned k = 0; k < 256; k++) {
		free(b->rlist[k]);
		b->rlist[k] = NULL;
	}
	free(b->st);
	b->st = NULL;
	b->nst = b->capst = 0;
	free(b->xsrc);
	b->xsrc = NULL;
}

static void
gb_free(struct build_pass *b)
{
	gb_free_work(b);
	free(b->ed);
	free(b);
}

void
gb_abort(struct build_pass *b)
{
	/* keep the edge buffer for the next build */
	b->g->ed = b->ed;
	b->g->caped = b->caped;
	b->ed = NULL;
	gb_free(b);
}

int
gb_finish(struct build_pass *b, char **cause)
{
	struct graph *g = b->g;

	gb_grow_state(b);
	if (b->ned >= UINT32_MAX) {
		if (cause)
			*cause = xstrdup("more than 2^32 edges");
		gb_abort(b);
		graph_clear_built(g);
		return GRAPH_ETOOBIG;
	}
	for (uint32_t i = 0; i < g->nth; i++)
		if (!b->st[i].ready)
			g->th[i].flags = (g->th[i].flags & ~RULE_FLAGS) |
			    gb_thread_flags(g, b->rs, i);
	/* memory given back now is reused (and already faulted in) below */
	gb_free_work(b);
	make_csr(g, b);
	g->nmsg = b->nmsg;
	free(g->pub);
	g->pub = xcalloc(g->nth ? g->nth : 1, sizeof(*g->pub));
	for (uint32_t i = 0; i < g->nth; i++) {
		const struct gthread *t = &g->th[i];
		g->pub[i] = (struct graph_thread){ .tid = t->tid,
		    .pid = t->pid, .flags = t->flags, .nevents = t->nev,
		    .nvertices = t->nvtx, .comm = t->comm,
		    .process = g->th[g->leader[i]].comm };
	}
	g->build_ns = now_ns() - b->t0;
	gb_free(b);
	return 0;
}

/* Build by replaying the loaded events in time order. */
int
graph_do_build(struct graph *g, const struct rules *rules, char **cause)
{
	struct build_pass *b = gb_new(g, rules);

	for (uint32_t i = 0; i < g->nth; i++) {
		b->st[i].ready = 1;
		g->th[i].flags = (g->th[i].flags & ~RULE_FLAGS) |
		    gb_thread_flags(g, b->rs, i);
	}
	size_t gap = 0;		/* the next gap between windows */
	for (size_t k = 0; k < g->norder; k++) {
		while (gap < g->ngaps && g->gap_order[gap] == k) {
			gb_gap(b);
			gb_seed(b, ++gap);
		}
		if (k + 6 < g->norder) {
			/* the events of one thread are read in sequence,
			   but threads interleave: fetch ahead */
			uint32_t tj = g->order[k + 6] & (ORDER_MAXTH - 1);
			__builtin_prefetch(&g->th[tj].ev[b->st[tj].pos]);
			__builtin_prefetch(&b->st[tj]);
		}
		uint32_t ti = g->order[k] & (ORDER_MAXTH - 1);
		uint32_t run = (g->order[k] >> ORDER_TBITS) + 1;
		for (; run > 0; run--)
			gb_step(b, ti, b->st[ti].pos++);
	}
	return gb_finish(b, cause);
}
