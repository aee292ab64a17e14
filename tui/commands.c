/*
 * commands.c: the commands of the `:` line. A line is split into its
 * first word and the rest; the word is looked up (a unique prefix is
 * enough) in tui_commands (keys.c) and run by the function of the same
 * index in the table below. Each returns R_* bits and reports on the
 * status line.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tui-local.h"

typedef int (*cmd_fn)(struct tui *t, char *arg);

/* "1.5", "250ms": from the trace start; "@NS": absolute. */
static int
parse_when(const struct tui *t, const char *s, uint64_t *out)
{
	return parse_time_at(s, t->first_ts, out);
}

static int
c_goto(struct tui *t, char *arg)
{
	uint64_t v, ts;
	char *at = strchr(arg, '@');

	if (arg[0] == '#') {
		if (parse_u64(arg + 1, &v) != 0 || v >= graph_nvertices(t->g)) {
			tui_message(t, 1, "no vertex %s", arg);
			return R_STATUS;
		}
		return tui_goto_vertex(t, (uint32_t)v, 1);
	}
	if (at != NULL && at != arg) {
		*at = '\0';
		uint32_t vx;
		if (parse_u64(arg, &v) != 0 || parse_when(t, at + 1, &ts) != 0 ||
		    (vx = graph_vertex_at(t->g, (uint32_t)v, ts)) ==
		    GRAPH_NONE) {
			tui_message(t, 1, "no vertex of thread %s at %s", arg,
			    at + 1);
			return R_STATUS;
		}
		return tui_goto_vertex(t, vx, 1);
	}
	if (parse_when(t, arg, &ts) != 0) {
		tui_message(t, 1, "goto: expected TIME (1.5, 250ms, @NS), "
		    "#VERTEX or TID@TIME");
		return R_STATUS;
	}
	return tui_goto_time(t, ts, 1);
}

static int
c_thread(struct tui *t, char *arg)
{
	uint64_t v;
	uint32_t th = GRAPH_NONE;
	size_t n = graph_nthreads(t->g);

	if (parse_u64(arg, &v) == 0 && v <= UINT32_MAX)
		th = graph_thread_find(t->g, (uint32_t)v);
	for (uint32_t i = 0; th == GRAPH_NONE && i < n; i++)
		if (strcmp(graph_thread(t->g, i)->comm, arg) == 0 &&
		    graph_thread(t->g, i)->nevents > 0)
			th = i;
	for (uint32_t i = 0; th == GRAPH_NONE && i < n; i++)
		if (tui_match(graph_thread(t->g, i)->comm, arg) &&
		    graph_thread(t->g, i)->nevents > 0)
			th = i;
	if (th == GRAPH_NONE) {
		tui_message(t, 1, "no thread '%s'", arg);
		return R_STATUS;
	}
	tui_set_thread(t, th);
	tui_hist_push(t);
	tui_lanes(t);
	t->lane_top = 0;
	return R_ALL;
}

static int
c_filter(struct tui *t, char *arg)
{
	snprintf(t->filter, sizeof(t->filter), "%s", arg);
	tui_lanes(t);
	t->lane_top = 0;
	tui_message(t, 0, "%zu lanes", t->nlanes);
	return R_ALL;
}

static int
c_diagnose(struct tui *t, char *arg)
{
	size_t h;

	(void)arg;
	if (t->d == NULL || t->vertex == GRAPH_NONE ||
	    diag_add_node(t->d, t->vertex, &h) != 0) {
		tui_message(t, 1, "no vertex to diagnose at the cursor");
		return R_STATUS;
	}
	return tui_open_hang(t, h, 1);
}

static int
c_hang(struct tui *t, char *arg)
{
	uint64_t v;

	if (parse_u64(arg, &v) != 0 || v == 0 || t->d == NULL ||
	    v > diag_nhangs(t->d)) {
		tui_message(t, 1, "no hang '%s' (there are %zu)", arg,
		    t->d ? diag_nhangs(t->d) : 0);
		return R_STATUS;
	}
	return tui_open_hang(t, (size_t)v - 1, 1);
}

static int
c_hangs(struct tui *t, char *arg)
{
	return tui_search_command(t, arg);
}

static int
c_pick(struct tui *t, char *arg)
{
	uint64_t v;

	if (parse_u64(arg, &v) != 0 || v == 0) {
		tui_message(t, 1, "pick: expected a candidate number (1...)");
		return R_STATUS;
	}
	return tui_pick(t, (size_t)v - 1);
}

static int
c_slice(struct tui *t, char *arg)
{
	(void)arg;
	t->panes[P_DIFF].mode = 1;
	t->panes[P_DIFF].sel = t->panes[P_DIFF].top = 0;
	t->focus = P_DIFF;
	return R_ALL;
}

static int
c_diff(struct tui *t, char *arg)
{
	(void)arg;
	t->panes[P_DIFF].mode = 0;
	t->panes[P_DIFF].sel = t->panes[P_DIFF].top = 0;
	t->focus = P_DIFF;
	return R_ALL;
}

static int
c_rule(struct tui *t, char *arg)
{
	char *cause = NULL;
	size_t before = graph_nvertices(t->g), eb = graph_nedges(t->g);

	if (strncmp(arg, "add", 3) != 0 || !isspace((unsigned char)arg[3])) {
		tui_message(t, 1, "usage: rule add LINE (argus-rules(5))");
		return R_STATUS;
	}
	arg += 4;
	while (isspace((unsigned char)*arg))
		arg++;
	if (rules_parse(t->rules, arg, "command line", &cause) != 0) {
		tui_message(t, 1, "%s", cause ? cause : "bad rule");
		free(cause);
		return R_STATUS;
	}
	int r = tui_rebuild(t);
	tui_message(t, 0, "rule added (%zu rules): vertices %zu -> %zu, "
	    "edges %zu -> %zu", rules_count(t->rules), before,
	    graph_nvertices(t->g), eb, graph_nedges(t->g));
	return r;
}

static int
show_stream(struct tui *t, const char *title, int what)
{
	char *buf = NULL;
	size_t len = 0, n;
	FILE *f = open_memstream(&buf, &len);

	if (f == NULL) {
		tui_message(t, 1, "out of memory");
		return R_STATUS;
	}
	if (what == 0)
		rules_write(t->rules, f);
	else if (t->d != NULL)
		diag_write_text(t->d, f, t->first_ts);
	fclose(f);
	char **lines = tui_split_lines(buf, &n);
	free(buf);
	tui_show_text(t, title, lines, n);
	return R_ALL;
}

static int
c_rules(struct tui *t, char *arg)
{
	(void)arg;
	return show_stream(t, "rules in force (q closes)", 0);
}

static int
c_report(struct tui *t, char *arg)
{
	(void)arg;
	return show_stream(t, "report (q closes)", 1);
}

/*
 * The visible window as Trace Event Format JSON (engine/export.c), read
 * again from the trace with a reader of its own.
 */
static int
write_json(struct tui *t, const char *path)
{
	struct export_opts eo = { 0 };
	struct trace_reader *r;
	char *cause = NULL;
	const char *why;
	FILE *f;
	int err;

	if (tui_open_again(t->trace, t->traces, t->ntraces, &r, &cause) != 0) {
		tui_message(t, 1, "%s", cause);
		free(cause);
		return R_STATUS;
	}
	if ((f = out_fopen(path, &why)) == NULL) {
		tui_message(t, 1, "%s: %s", path, why);
		trace_reader_close(r);
		return R_STATUS;
	}
	eo.from = t->pos.t0;
	eo.to = t->pos.t1;
	eo.base_ns = t->first_ts;
	err = export_chrome(r, &eo, t->d, f, &cause);
	if (fclose(f) != 0 && err == 0)
		err = errno;
	trace_reader_close(r);
	if (err)
		tui_message(t, 1, "%s: %s", path, cause ? cause :
		    strerror(err));
	else
		tui_message(t, 0, "window written to %s (Trace Event Format)",
		    path);
	free(cause);
	return R_STATUS;
}

static int
c_write(struct tui *t, char *arg)
{
	const char *why;
	FILE *f;
	size_t n = strlen(arg);

	if (arg[0] == '\0') {
		tui_message(t, 1, "usage: write FILE");
		return R_STATUS;
	}
	if (n > 5 && strcmp(arg + n - 5, ".json") == 0)
		return write_json(t, arg);
	if (t->d == NULL) {
		tui_message(t, 1, "no diagnosis to write");
		return R_STATUS;
	}
	if ((f = out_fopen(arg, &why)) == NULL) {
		tui_message(t, 1, "%s: %s", arg, why);
		return R_STATUS;
	}
	diag_write_text(t->d, f, t->first_ts);
	if (fclose(f) != 0) {
		tui_message(t, 1, "%s: %s", arg, strerror(errno));
		return R_STATUS;
	}
	tui_message(t, 0, "report written to %s", arg);
	return R_STATUS;
}

static int
c_help(struct tui *t, char *arg)
{
	(void)t;
	(void)arg;
	ungetch('?');
	return 0;
}

static int
c_quit(struct tui *t, char *arg)
{
	(void)arg;
	t->quit = 1;
	return 0;
}

/* In the order of tui_commands (keys.c). */
static const cmd_fn fns[] = {
	c_goto, c_thread, c_filter, c_diagnose, c_hang, c_hangs, c_pick,
	c_slice, c_diff, c_rule, c_rules, c_report, c_write, c_help, c_quit,
};

int
tui_command(struct tui *t, const char *line)
{
	char *buf = xstrdup(line), *w = buf, *arg;
	size_t wl, found = SIZE_MAX, nfound = 0;
	int r;

	_Static_assert(ARRAY_SIZE(fns) == 15, "one function per command");
	while (isspace((unsigned char)*w))
		w++;
	if (*w == '\0') {
		free(buf);
		return 0;
	}
	wl = strcspn(w, " \t");
	arg = w + wl;
	if (*arg != '\0')
		*arg++ = '\0';
	while (isspace((unsigned char)*arg))
		arg++;
	arg[strcspn(arg, "\r\n")] = '\0';
	/* completion leaves a space after the last word */
	for (size_t l = strlen(arg); l > 0 && isspace((unsigned char)arg[l - 1]);)
		arg[--l] = '\0';
	for (size_t i = 0; i < tui_ncommands; i++) {
		if (strcmp(tui_commands[i].name, w) == 0) {
			found = i;
			nfound = 1;
			break;
		}
		if (strncmp(tui_commands[i].name, w, wl) == 0) {
			found = i;
			nfound++;
		}
	}
	if (nfound != 1) {
		tui_message(t, 1, "%s command '%s' (? for help)", nfound ?
		    "ambiguous" : "unknown", w);
		free(buf);
		return R_STATUS;
	}
	r = fns[found](t, arg);
	free(buf);
	return r;
}
