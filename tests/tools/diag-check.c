/*
 * diag-check.c: check a diagnosis against a scenario's NAME.expect file
 * (tests/scenarios/README describes the line format).
 *
 *   diag-check TRACE EXPECT [--kernel-only] [--watch] [--comm NAME]
 *
 * Builds the graph of TRACE with the default rules, diagnoses it like
 * argus diagnose (engine/diag*.c) and checks the first hang against each
 * expectation line of the chosen set (lines with the "kernel-only: "
 * prefix with --kernel-only, the others without). Prints one line per
 * expectation: "pass LINE", "fail LINE: why" or "skip LINE: why" (needs
 * a watchpoint, a record this checker does not know, or the recording
 * named threads wrongly: a name the expectations use is absent from the
 * trace, or a thread of the diagnosis still carries the recorder's name
 * "argus"; then a mismatch says nothing about the diagnosis). Exit status 0 when it could run, 1 on
 * errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "trace/trace.h"

static const char *
val(const char *line, const char *key, char *buf, size_t len)
{
	size_t kl = strlen(key);

	for (const char *p = line; (p = strstr(p, key)) != NULL; p++) {
		if ((p == line || p[-1] == ' ') && p[kl] == '=') {
			size_t n = strcspn(p + kl + 1, " \n");
			if (n >= len)
				n = len - 1;
			memcpy(buf, p + kl + 1, n);
			buf[n] = '\0';
			return buf;
		}
	}
	return NULL;
}

/* Thread name pattern: exact, or a prefix when it ends in '*'. */
static int
name_is(const char *name, const char *pat)
{
	size_t n = strlen(pat);

	if (n > 0 && pat[n - 1] == '*')
		return strncmp(name, pat, n - 1) == 0;
	return strcmp(name, pat) == 0;
}

static int
wait_is(const struct diag_wait *w, const char *want)
{
	return strcmp(w->type, want) == 0;
}

static char why[512];
static const char *trace_path;	/* the recording being checked */
static int watch_mode;		/* recorded with argus watch on the flag */

/*
 * Whether the thread named writer wrote the flag during the hang: a
 * TU_FLAG_WRITE from argus watch between start and end. argus watch
 * writes its records when it reads the samples, up to its polling
 * interval after the access, hence the slack after end. 1 or 0.
 */
#define WATCH_SLACK_NS 200000000ull

static int
flag_written_by(const char *writer, uint64_t start, uint64_t end)
{
	struct trace_reader *r;
	struct trace_event ev;
	char *cause = NULL;
	size_t mine = 0, all = 0;

	if (trace_reader_open(&r, trace_path, &cause) != 0) {
		snprintf(why, sizeof(why), "%s", cause);
		free(cause);
		return 0;
	}
	while (trace_reader_next(r, &ev) && ev.ts <= end + WATCH_SLACK_NS) {
		if (ev.type != TT_USER || ev.arg[0] != TU_FLAG_WRITE ||
		    ev.ts < start)
			continue;
		const struct trace_thread *t = trace_reader_thread(r, ev.tid);

		all++;
		if (t && strcmp(t->comm, writer) == 0)
			mine++;
	}
	trace_reader_close(r);
	snprintf(why, sizeof(why), "%zu of %zu flag writes during the hang "
	    "by %s", mine, all, writer);
	return mine > 0;
}

static int
check(const struct diag *d, const char *rec, const char *line)
{
	const struct graph *g = diag_graph(d);
	const struct diag_hang *h = diag_nhangs(d) ? diag_hang(d, 0) : NULL;
	char b1[256], b2[64], b3[64], b4[64];

	why[0] = '\0';
	if (h == NULL && strcmp(rec, "scenario") != 0 &&
	    strcmp(rec, "record") != 0 && strcmp(rec, "exclude") != 0) {
		snprintf(why, sizeof(why), "no hang found");
		return 0;
	}
	if (strcmp(rec, "hang") == 0) {
		const char *t = val(line, "thread", b1, sizeof(b1));
		const char *k = val(line, "kind", b2, sizeof(b2));
		const char *m = val(line, "min_ms", b3, sizeof(b3));
		const char *w = val(line, "wait", b4, sizeof(b4));
		snprintf(why, sizeof(why), "hang 1 is %s %s %.0f ms wait %s",
		    h->th.comm, diag_kind_name(h->kind),
		    (double)(h->end_ns - h->start_ns) / 1e6,
		    h->kind == DIAG_BLOCKED ? h->wait.type : "-");
		return (!t || name_is(h->th.comm, t)) &&
		    (!k || strcmp(k, diag_kind_name(h->kind)) == 0) &&
		    (!m || h->end_ns - h->start_ns >= strtoull(m, NULL, 10) *
		    1000000ULL) && (!w || wait_is(&h->wait, w));
	}
	if (strcmp(rec, "similar") == 0) {
		const char *t = val(line, "thread", b1, sizeof(b1));
		const char *m = val(line, "min", b2, sizeof(b2));
		snprintf(why, sizeof(why), "%zu similar nodes of %s",
		    diag_nsimilar(d, 0), h->th.comm);
		return (!t || name_is(h->th.comm, t)) &&
		    (!m || diag_nsimilar(d, 0) >= strtoull(m, NULL, 10));
	}
	if (strcmp(rec, "path") == 0) {
		const char *t = val(line, "threads", b1, sizeof(b1));
		char got[256] = "";
		size_t n = diag_npath(d, 0), i = 0;
		for (size_t k = 0; k < n; k++) {
			const struct diag_step *s = diag_path(d, 0, k);
			if (strlen(got) + strlen(s->th.comm) + 2 < sizeof(got)) {
				strcat(got, k ? "," : "");
				strcat(got, s->th.comm);
			}
		}
		snprintf(why, sizeof(why), "path %s", got);
		if (t == NULL)
			return 1;
		char *save, *tok = strtok_r(b1, ",", &save);
		for (; tok != NULL; tok = strtok_r(NULL, ",", &save)) {
			while (i < n && !name_is(diag_path(d, 0, i)->th.comm,
			    tok))
				i++;
			if (i == n)
				return 0;
			i++;
		}
		return 1;
	}
	if (strcmp(rec, "culprit") == 0) {
		const char *dp = val(line, "depth", b2, sizeof(b2));
		const char *t = val(line, "thread", b1, sizeof(b1));
		const char *k = val(line, "kind", b3, sizeof(b3));
		const char *w = val(line, "wait", b4, sizeof(b4));
		char sv[64];
		const char *s = val(line, "serving", sv, sizeof(sv));
		char got[256] = "";
		for (size_t i = 0; i < diag_nculprits(d, 0); i++) {
			const struct diag_culprit *c = diag_culprit(d, 0, i);
			char one[96];
			snprintf(one, sizeof(one), "%s%u:%s:%s:%s", i ? " " : "",
			    c->depth, c->th.comm, diag_kind_name(c->kind),
			    c->kind == DIAG_BLOCKED ? c->wait.type :
			    c->serving.comm);
			if (strlen(got) + strlen(one) < sizeof(got))
				strcat(got, one);
			if ((!dp || c->depth == strtoul(dp, NULL, 10)) &&
			    (!t || name_is(c->th.comm, t)) &&
			    (!k || strcmp(k, diag_kind_name(c->kind)) == 0) &&
			    (!w || wait_is(&c->wait, w)) &&
			    (!s || name_is(c->serving.comm, s)))
				return 1;
		}
		snprintf(why, sizeof(why), "culprits: %s", got[0] ? got :
		    "none");
		return 0;
	}
	if (strcmp(rec, "cycle") == 0) {
		const struct diag_cycle *cy = diag_cycle(d, 0);
		const char *t = val(line, "threads", b1, sizeof(b1));
		const char *m = val(line, "timeout_ms", b2, sizeof(b2));
		if (cy == NULL) {
			snprintf(why, sizeof(why), "no cycle");
			return 0;
		}
		char got[256] = "";
		int ok = 1;
		size_t nt = 0;
		for (size_t i = 0; i < cy->ntids; i++) {
			const struct graph_thread *gt = graph_thread(g,
			    graph_thread_find(g, cy->tids[i]));
			strncat(got, gt->comm, sizeof(got) - strlen(got) - 2);
			strcat(got, " ");
		}
		if (t != NULL) {
			char *save, *tok = strtok_r(b1, ",", &save);
			for (; tok; tok = strtok_r(NULL, ",", &save), nt++) {
				int found = 0;
				for (size_t i = 0; i < cy->ntids; i++) {
					const struct graph_thread *gt =
					    graph_thread(g, graph_thread_find(g,
					    cy->tids[i]));
					found |= name_is(gt->comm, tok);
				}
				ok &= found;
			}
			ok &= nt == cy->ntids;
		}
		if (m != NULL) {
			double want = strtod(m, NULL) * 1e6;
			double got_ns = (double)cy->timeout_ns;
			ok &= got_ns >= want * 0.9 && got_ns <= want * 1.1;
		}
		snprintf(why, sizeof(why), "cycle %stimeout %.0f ms", got,
		    (double)cy->timeout_ns / 1e6);
		return ok;
	}
	if (strcmp(rec, "cause") == 0) {
		const char *t = val(line, "thread", b1, sizeof(b1));
		const struct diag_thread *ct = diag_cause_thread(d, 0);
		snprintf(why, sizeof(why), "cause %s (input node %s)",
		    ct ? ct->comm : "none", diag_cause_node(d, 0) !=
		    GRAPH_NONE ? "found" : "not found");
		return ct != NULL && (!t || name_is(ct->comm, t));
	}
	if (strcmp(rec, "wakeup") == 0) {
		const char *t = val(line, "thread", b1, sizeof(b1));
		const char *v = val(line, "via", b2, sizeof(b2));
		const char *c = val(line, "cause", b3, sizeof(b3));
		char got[256] = "";
		for (size_t i = 0; i < diag_nwakeups(d, 0); i++) {
			const struct diag_wakeup *w = diag_wakeup(d, 0, i);
			const char *via = graph_edge_kind_name((unsigned)w->via);
			char one[96];
			snprintf(one, sizeof(one), "%s%s<-%s-%s", i ? " " : "",
			    w->woken.comm, via, w->cause.comm);
			if (strlen(got) + strlen(one) < sizeof(got))
				strcat(got, one);
			if ((!t || name_is(w->woken.comm, t)) &&
			    (!v || strcmp(v, via) == 0) &&
			    (!c || name_is(w->cause.comm, c)))
				return 1;
		}
		snprintf(why, sizeof(why), "wake-ups: %s", got[0] ? got :
		    "none");
		return 0;
	}
	if (strcmp(rec, "exclude") == 0) {
		const char *t = val(line, "thread", b1, sizeof(b1));
		for (size_t i = 0; t && i < diag_nculprits(d, 0); i++)
			if (name_is(diag_culprit(d, 0, i)->th.comm, t)) {
				snprintf(why, sizeof(why), "%s is a culprit",
				    diag_culprit(d, 0, i)->th.comm);
				return 0;
			}
		return 1;
	}
	if (strcmp(rec, "stack") == 0) {
		const char *fn = val(line, "function", b1, sizeof(b1));
		size_t nsym = 0;
		for (size_t i = 0; fn && i < diag_nstacks(d, 0); i++) {
			const struct diag_stack *s = diag_stack(d, 0, i);
			for (size_t k = 0; s->symbols && k < s->nframes; k++) {
				const char *y = s->symbols[k];
				if (y == NULL)
					continue;
				nsym++;
				size_t n = strcspn(y, "+");
				if (strlen(fn) == n && strncmp(y, fn, n) == 0)
					return 1;
			}
		}
		snprintf(why, sizeof(why), "%s not in the %zu stacks of hang 1 "
		    "(%zu frames symbolized)", fn ? fn : "?",
		    diag_nstacks(d, 0), nsym);
		return 0;
	}
	if (strcmp(rec, "watch") == 0) {
		if (!watch_mode) {
			snprintf(why, sizeof(why), "needs a watchpoint recording");
			return -1;
		}
		return flag_written_by(val(line, "writer", b1, sizeof(b1)) ?
		    b1 : "?", h->start_ns, h->end_ns);
	}
	return -1;
}

int
main(int argc, char **argv)
{
	const char *trace = NULL, *expect = NULL;
	int konly = 0, watch = 0;
	struct diag_opts o = { 0 };

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--kernel-only") == 0)
			konly = 1;
		else if (strcmp(argv[i], "--watch") == 0)
			watch = watch_mode = 1;
		else if (strcmp(argv[i], "--comm") == 0 && i + 1 < argc)
			o.comm = argv[++i];
		else if (trace == NULL)
			trace = argv[i];
		else
			expect = argv[i];
	}
	if (trace == NULL || expect == NULL) {
		fprintf(stderr, "usage: diag-check TRACE EXPECT "
		    "[--kernel-only] [--watch] [--comm NAME]\n");
		return 1;
	}
	FILE *f = fopen(expect, "r");
	struct trace_reader *r = NULL;
	struct rules *rs = rules_new();
	struct graph *g = NULL;
	struct diag *d = NULL;
	char *cause = NULL;
	trace_path = trace;
	if (f == NULL || trace_reader_open(&r, trace, &cause) != 0 ||
	    rules_add_defaults(rs, &cause) != 0 ||
	    graph_build(r, rs, &g, &cause) != 0 ||
	    diag_new(g, &o, &d, &cause) != 0) {
		fprintf(stderr, "diag-check: %s\n", cause ? cause : expect);
		return 1;
	}
	if (getenv("DIAG_CHECK_REPORT") != NULL)
		diag_write_text(d, stdout, graph_first_ts(g));
	if (getenv("DIAG_CHECK_PATH") != NULL)
		for (size_t i = 0; i < diag_npath(d, 0); i++) {
			char b[256];
			const struct diag_step *s = diag_path(d, 0, i);
			graph_vertex_describe(g, s->node, b, sizeof(b));
			printf("  path %s <%s>\n", b, s->edge >= 0 ?
			    graph_edge_kind_name((unsigned)s->edge) : "");
		}
	/* thread names the expectations use that the trace lacks: then the
	   recording, not the diagnosis, is at fault for a mismatch */
	char missing[256] = "", line[512];
	while (fgets(line, sizeof(line), f) != NULL) {
		static const char *const keys[] = { "thread", "threads",
		    "cause", "serving", "writer" };
		if (strncmp(line, "exclude", 7) == 0 ||
		    strncmp(line, "kernel-only: exclude", 20) == 0)
			continue;
		for (size_t k = 0; k < sizeof(keys) / sizeof(*keys); k++) {
			char b[256], *save, *tok;
			if (val(line, keys[k], b, sizeof(b)) == NULL)
				continue;
			for (tok = strtok_r(b, ",", &save); tok != NULL;
			    tok = strtok_r(NULL, ",", &save)) {
				int found = strchr(tok, '*') != NULL;
				for (size_t ti = 0; !found &&
				    ti < graph_nthreads(g); ti++)
					found = strcmp(graph_thread(g,
					    (uint32_t)ti)->comm, tok) == 0;
				if (!found && strstr(missing, tok) == NULL &&
				    strlen(missing) + strlen(tok) + 2 <
				    sizeof(missing)) {
					strcat(missing, missing[0] ? "," : "");
					strcat(missing, tok);
				}
			}
		}
	}
	/* a program thread still named like the recorder (its name before
	   exec) is the same kind of naming fault of the recording */
	const struct diag_hang *h0 = diag_nhangs(d) ? diag_hang(d, 0) : NULL;
	int argus_named = h0 != NULL && strcmp(h0->th.comm, "argus") == 0;
	for (size_t i = 0; h0 != NULL && i < diag_npath(d, 0); i++)
		argus_named |= strcmp(diag_path(d, 0, i)->th.comm, "argus") == 0;
	for (size_t i = 0; h0 != NULL && i < diag_nculprits(d, 0); i++)
		argus_named |= strcmp(diag_culprit(d, 0, i)->th.comm,
		    "argus") == 0;
	if (argus_named && strlen(missing) + 8 < sizeof(missing))
		strcat(missing, missing[0] ? ",(argus)" : "(argus)");
	rewind(f);
	while (fgets(line, sizeof(line), f) != NULL) {
		char *p = line, rec[32];
		line[strcspn(line, "\n")] = '\0';
		if (*p == '\0' || *p == '#')
			continue;
		int is_k = strncmp(p, "kernel-only: ", 13) == 0;
		if (is_k != konly)
			continue;
		if (is_k)
			p += 13;
		size_t n = strcspn(p, " ");
		if (n >= sizeof(rec))
			continue;
		memcpy(rec, p, n);
		rec[n] = '\0';
		if (strcmp(rec, "scenario") == 0 || strcmp(rec, "record") == 0)
			continue;
		if (strstr(p, "needs=watch") != NULL && !watch) {
			printf("skip %s: needs a watchpoint recording\n", p);
			continue;
		}
		int rc = check(d, rec, p);
		if (rc > 0)
			printf("pass %s\n", p);
		else if (rc == 0 && missing[0])
			printf("skip %s: thread names of the recording are "
			    "wrong (absent: %s) (%s)\n", p, missing, why);
		else if (rc == 0)
			printf("fail %s: %s\n", p, why);
		else
			printf("skip %s: %s\n", p, why[0] ? why :
			    "unknown record");
	}
	fclose(f);
	diag_free(d);
	graph_free(g);
	trace_reader_close(r);
	rules_free(rs);
	return 0;
}
