/*
 * diag-scan-end.c: what the streaming search's pass (diag-scan.c) leaves,
 * settled: which candidates still make hangs (decided from the history as
 * diag-hang.c decides them), the longest wait of the chosen threads for a
 * report without hangs, and the idle wait of every thread for the
 * windows. Reads struct scan (diag-scan-local.h); calls nothing of the
 * pass.
 */
#include <stdlib.h>
#include <string.h>

#include "diag-scan-local.h"

/* diag_selected() over the names and processes of the scan. */
static int
selected(const struct scan *s, const struct sthr *t, int main_only)
{
	const struct diag_opts *o = s->o;
	uint64_t *p = hmap_get(&s->bytid, t->pid);
	const char *pname = p != NULL ? s->t[*p].comm : t->comm;

	if ((t->flags & (GRAPH_THREAD_KERNEL | GRAPH_THREAD_IRQ)) ||
	    t->pid == 0 || t->comm[0] == '\0')
		return 0;
	for (size_t r = 0; s->rs != NULL && r < s->rs->n; r++) {
		const struct rule *ru = &s->rs->v[r];
		if ((ru->verb == RV_IGNORE_PROC &&
		    rules_match_name(ru->pat, pname)) ||
		    (ru->verb == RV_IGNORE_THREAD &&
		    rules_match_name(ru->pat, t->comm)))
			return 0;
	}
	if (o->tid != 0)
		return trace_tid_local(t->tid) == o->tid;
	if (o->pid != 0 && trace_tid_local(t->pid) != o->pid)
		return 0;
	if (o->comm != NULL)
		return strcmp(t->comm, o->comm) == 0 ||
		    (t->tid == t->pid && strcmp(pname, o->comm) == 0);
	return !main_only || t->tid == t->pid;
}

/* The idle wait of t (diag_idle_key()), with the loop seen at both
   ends of the recording when no loop turned three times. */
static uint64_t
idle_key(const struct sthr *t)
{
	if (t->idle_loop)
		return t->idle_best;
	if (t->first_sys == TT_SYS_EXIT && diag_sys_poll(t->first_nr) &&
	    t->last_sys == TT_SYS_ENTER && t->last_en.aux == t->first_nr &&
	    t->wait_after)
		return diag_res_key(&t->last_en);
	return t->idle_best;
}

/* How a wait of t on c->en for c->b - c->a compares with the thread's
   other waits there (kernel_thread_hangs()): far longer, or alone. */
static void
compare(const struct scan *s, const struct dcand *c, const struct sthr *t,
    int *far, int *alone)
{
	uint64_t len = c->b - c->a, k = diag_res_key(&c->en);
	uint64_t *p = hmap_get(&t->keys, k);
	const struct kstat *x = p != NULL ? &s->ks.v[*p] : NULL;

	*far = x != NULL && x->shortest <= len / 2;
	*alone = x == NULL || x->count <= 1;
}

/* Whether candidate c (its thread t) still makes a hang: marks only
   when some thread has marks; waits far longer than the others there
   and not the idle one (rank 0), or that may wait for a request or a
   lock (rank 1, decided in the graph). */
static int
keep(struct scan *s, struct dcand *c, const struct sthr *t, int marks)
{
	int far, alone;

	if (marks)
		return c->what == DC_MARK && selected(s, t, 0);
	if (c->what == DC_MARK || !selected(s, t, 1))
		return 0;
	if (c->what != DC_WAIT)
		return 1;
	compare(s, c, t, &far, &alone);
	if (far && diag_res_key(&c->en) != idle_key(t)) {
		c->rank = 0;
		return 1;
	}
	c->rank = 1;
	return (far || alone) && !diag_sys_sleep(c->en.aux);
}

void
diag_scan_settle(struct scan *s, struct dscan *out)
{
	int marks = 0;

	for (size_t i = 0; i < s->c.n; i++) {
		struct dcand *c = &s->c.v[i];
		if (c->b == UINT64_MAX)
			c->b = s->last_ts;
		if (c->what == DC_MARK &&
		    selected(s, &s->t[*hmap_get(&s->bytid, c->tid)], 0))
			marks = 1;
	}
	/* the candidates that still make hangs */
	size_t k = 0;
	for (size_t i = 0; i < s->c.n; i++) {
		struct dcand *c = &s->c.v[i];
		if (keep(s, c, &s->t[*hmap_get(&s->bytid, c->tid)], marks))
			s->c.v[k++] = *c;
	}
	s->c.n = k;
	/* the longest wait, for a report without hangs */
	out->lg_dt = 0;
	for (size_t i = 0; i < s->nt; i++) {
		struct sthr *t = &s->t[i];
		if (!selected(s, t, 1))
			continue;
		out->nsel++;
		out->nwaits += t->nwaits;
		diag_slices_keep(&out->sl, &t->usb);
		if (t->lg_set && (!out->lg_set || t->lg_dt > out->lg_dt)) {
			out->lg_set = 1;
			out->lg_dt = t->lg_dt;
			out->lg.what = DC_LONGEST;
			out->lg.tid = t->tid;
			out->lg.a = t->lg_sw;
			out->lg.b = t->lg_sw + t->lg_dt;
			out->lg.enter_ts = t->lg_sys.ts;
			out->lg.en = t->lg_sys;
			int far, alone;
			compare(s, &out->lg, t, &far, &alone);
			if (t->lg_dt < s->th)
				out->lg_why = "shorter than the threshold";
			else if (!far && !alone)
				out->lg_why = "not longer than its other "
				    "waits there";
			else if (diag_sys_sleep(t->lg_sys.aux))
				out->lg_why = "a sleep";
			else
				out->lg_why = "an idle wait (nothing handed "
				    "to another thread before it)";
		}
	}
	/* the idle waits of every thread, for the windows */
	hmap_init(&out->idle);
	hmap_init(&out->loops);
	for (size_t i = 0; i < s->nt; i++) {
		const struct sthr *t = &s->t[i];
		*hmap_put(&out->idle, t->tid, 0, NULL) = idle_key(t) + 1;
		if (t->idle_loop)
			*hmap_put(&out->loops, t->tid, 0, NULL) = 1;
		hmap_free(&s->t[i].keys);
		free(s->t[i].pend.v);
		free(s->t[i].pc.v);
	}
	out->c = s->c.v;
	out->nc = s->c.n;
	out->first_ts = s->first_ts;
	out->last_ts = s->last_ts;
	out->threshold_ns = s->th;
	free(s->t);
	free(s->ks.v);
	hmap_free(&s->bytid);
	hmap_free(&s->fd);
}
