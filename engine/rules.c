/*
 * rules.c: the rules file (argus-rules(5)): parser, matching, defaults.
 *
 * A rules set is a flat array of struct rule. Each line of a rules text
 * holds one rule: a verb, an object and its arguments, separated by blanks;
 * '#' starts a comment. Event selectors have the form TYPE[:SUB][=NAME]
 * and are kept as struct rsel. Parsing goes into a scratch set that is
 * appended to the target only when the whole text is valid.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine-local.h"

static const char default_rules[] =
    "# Default rules of argus (see argus-rules(5)).\n"
    "#\n"
    "# Kernel housekeeping threads: keep their vertices, drop their edges.\n"
    "cull thread migration/*\n"
    "cull thread rcu_*\n"
    "cull thread cpuhp/*\n"
    "cull thread watchdog*\n"
    "cull thread idle_inject/*\n"
    "cull thread kcompactd*\n"
    "# Batch servers: every request received starts a new vertex.\n"
    "batch process dbus-daemon\n"
    "batch process dbus-broker\n"
    "batch process Xorg\n"
    "batch process Xwayland\n"
    "batch process gnome-shell\n"
    "batch process kwin_wayland\n"
    "batch process weston\n"
    "batch process sway\n"
    "# UI input: marks from the instrumentation library, terminal reads.\n"
    "input user:input\n"
    "input read:tty\n";

const char *
rules_default_text(void)
{
	return default_rules;
}

struct rules *
rules_new(void)
{
	return xcalloc(1, sizeof(struct rules));
}

static void
rule_clear(struct rule *r)
{
	free(r->pat);
	free(r->a.name);
	free(r->b.name);
	free(r->text);
}

void
rules_free(struct rules *rs)
{
	if (rs == NULL)
		return;
	for (size_t i = 0; i < rs->n; i++)
		rule_clear(&rs->v[i]);
	free(rs->v);
	free(rs);
}

size_t
rules_count(const struct rules *rs)
{
	return rs ? rs->n : 0;
}

void
rules_write(const struct rules *rs, FILE *f)
{
	for (size_t i = 0; i < rs->n; i++)
		fprintf(f, "%s\n", rs->v[i].text);
}

int
rules_match_name(const char *pat, const char *name)
{
	return fnmatch(pat, name, 0) == 0;
}

/* --- matching ---------------------------------------------------------- */

int
rsel_match(const struct graph *g, const struct rsel *s,
    const struct graph_event *ev, const struct graph_event *en)
{
	int64_t sub;
	const char *name = NULL;

	if (s->type == RSEL_READ || s->type == RSEL_WRITE) {
		if (ev->type != TT_SYS_EXIT || en == NULL ||
		    !(en->flags & GRAPH_EVF_FDRES) || (int64_t)ev->key < 0)
			return 0;
		if (s->type == RSEL_READ ? !sys_is_read(en->aux) :
		    !sys_is_write(en->aux))
			return 0;
		return s->sub < 0 || s->sub == en->sub;
	}
	if (s->type != ev->type)
		return 0;
	switch (ev->type) {
	case TT_USER:
		sub = ev->sub;
		name = g->strs[ev->aux < g->nstrs ? ev->aux : 0];
		break;
	case TT_IRQ_ENTRY: case TT_WQ_QUEUE:
		sub = (int64_t)ev->key;
		name = g->strs[ev->aux < g->nstrs ? ev->aux : 0];
		break;
	case TT_SYS_ENTER: case TT_SYS_EXIT:
		sub = ev->aux;
		break;
	default:
		sub = (int64_t)ev->key;
		break;
	}
	if (s->sub >= 0 && s->sub != sub)
		return 0;
	if (s->name != NULL && (name == NULL || fnmatch(s->name, name, 0)))
		return 0;
	return 1;
}

/* --- parsing ----------------------------------------------------------- */

struct tok {
	const char *s;
	size_t len;
	size_t col;		/* 1-based */
};

struct perr {
	char *msg;
	size_t col;
};

static int PRINTFLIKE(3, 4)
fail(struct perr *pe, size_t col, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&pe->msg, fmt, ap) < 0)
		pe->msg = NULL;
	va_end(ap);
	pe->col = col;
	return -1;
}

static char *
tokdup(const struct tok *t)
{
	return strndup(t->s, t->len);
}

static int
parse_num(const char *s, size_t len, int64_t *out)
{
	char buf[32], *end;

	if (len == 0 || len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	unsigned long long v = strtoull(buf, &end, 0);
	if (errno || *end != '\0' || !isdigit((unsigned char)buf[0]) ||
	    v > INT64_MAX)
		return -1;
	*out = (int64_t)v;
	return 0;
}

static int
parse_sel(const struct tok *t, struct rsel *s, struct perr *pe)
{
	const char *p = t->s, *e = t->s + t->len;
	const char *colon = memchr(p, ':', t->len);
	const char *eq = memchr(p, '=', t->len);
	char tname[32];

	if (colon != NULL && eq != NULL && eq < colon)
		colon = NULL;
	const char *tend = colon ? colon : eq ? eq : e;
	size_t tl = (size_t)(tend - p);
	if (tl == 0 || tl >= sizeof(tname))
		return fail(pe, t->col, "expected an event type");
	memcpy(tname, p, tl);
	tname[tl] = '\0';
	memset(s, 0, sizeof(*s));
	s->sub = -1;
	if (strcmp(tname, "run") == 0)
		s->type = GRAPH_EV_RUN;
	else if (strcmp(tname, "read") == 0)
		s->type = RSEL_READ;
	else if (strcmp(tname, "write") == 0)
		s->type = RSEL_WRITE;
	else if ((s->type = (uint16_t)trace_type_lookup(tname)) == TT_NONE)
		return fail(pe, t->col, "unknown event type '%s'", tname);
	if (colon != NULL) {
		const char *ss = colon + 1, *se = eq ? eq : e;
		size_t sl = (size_t)(se - ss), col = t->col + (size_t)(ss - p);
		char sub[40];
		if (sl == 0 || sl >= sizeof(sub))
			return fail(pe, col, "expected a subtype after ':'");
		memcpy(sub, ss, sl);
		sub[sl] = '\0';
		int64_t v;
		if (parse_num(ss, sl, &v) == 0) {
			s->sub = v;
		} else if (s->type == TT_USER) {
			unsigned k = trace_user_kind_lookup(sub);
			if (k == 0)
				return fail(pe, col, "unknown user event kind "
				    "'%s'", sub);
			s->sub = k;
		} else if (s->type == RSEL_READ || s->type == RSEL_WRITE) {
			for (unsigned k = 0; k <= TFD_SOCKET; k++)
				if (strcmp(trace_fd_kind_name(k), sub) == 0)
					s->sub = k;
			if (s->sub < 0)
				return fail(pe, col, "unknown fd kind '%s'",
				    sub);
		} else if (s->type == TT_SYS_ENTER || s->type == TT_SYS_EXIT) {
			long nr = trace_syscall_lookup(sub);
			if (nr >= 0)
				s->sub = nr;
			if (s->sub < 0)
				return fail(pe, col, "unknown syscall '%s'",
				    sub);
		} else {
			return fail(pe, col, "'%s' is not a number", sub);
		}
	}
	if (eq != NULL) {
		if (eq + 1 == e)
			return fail(pe, t->col + (size_t)(eq - p) + 1,
			    "expected a name after '='");
		s->name = strndup(eq + 1, (size_t)(e - eq - 1));
	}
	return 0;
}

static size_t
tokenize(const char *line, size_t len, struct tok *toks, size_t max,
    size_t *over)
{
	size_t n = 0, i = 0;

	*over = 0;
	while (i < len) {
		while (i < len && (line[i] == ' ' || line[i] == '\t' ||
		    line[i] == '\r'))
			i++;
		if (i >= len || line[i] == '#')
			break;
		size_t st = i;
		while (i < len && line[i] != ' ' && line[i] != '\t' &&
		    line[i] != '\r')
			i++;
		if (n == max) {
			*over = st + 1;
			break;
		}
		toks[n++] = (struct tok){ line + st, i - st, st + 1 };
	}
	return n;
}

static int
tokis(const struct tok *t, const char *s)
{
	return strlen(s) == t->len && memcmp(t->s, s, t->len) == 0;
}

static int
parse_line(const struct tok *tk, size_t n, struct rule *r, struct perr *pe)
{
	size_t want;

	memset(r, 0, sizeof(*r));
	if (tokis(&tk[0], "split")) {
		r->verb = RV_SPLIT;
		if (n < 3)
			return fail(pe, n < 2 ? tk[0].col + tk[0].len + 1 :
			    tk[1].col + tk[1].len + 1, "expected "
			    "'split event SELECTOR' or 'split symbol NAME'");
		if (tokis(&tk[1], "event")) {
			if (parse_sel(&tk[2], &r->a, pe))
				return -1;
		} else if (tokis(&tk[1], "symbol")) {
			r->a = (struct rsel){ .type = TT_USER, .sub = -1,
			    .name = tokdup(&tk[2]) };
		} else {
			return fail(pe, tk[1].col, "expected 'event' or "
			    "'symbol'");
		}
		want = 3;
	} else if (tokis(&tk[0], "batch")) {
		if (n < 2 || !tokis(&tk[1], "process"))
			return fail(pe, n < 2 ? tk[0].col + tk[0].len + 1 :
			    tk[1].col, "expected 'process'");
		if (n < 3)
			return fail(pe, tk[1].col + tk[1].len + 1,
			    "expected a process name");
		r->verb = RV_BATCH;
		r->pat = tokdup(&tk[2]);
		want = 3;
	} else if (tokis(&tk[0], "ignore") || tokis(&tk[0], "cull")) {
		int ign = tokis(&tk[0], "ignore");
		if (n < 2)
			return fail(pe, tk[0].col + tk[0].len + 1, "expected "
			    "'process', 'thread' or 'wakeup'");
		if (n < 3)
			return fail(pe, tk[1].col + tk[1].len + 1,
			    "expected a name or a selector");
		if (tokis(&tk[1], "process")) {
			r->verb = ign ? RV_IGNORE_PROC : RV_CULL_PROC;
			r->pat = tokdup(&tk[2]);
		} else if (tokis(&tk[1], "thread")) {
			r->verb = ign ? RV_IGNORE_THREAD : RV_CULL_THREAD;
			r->pat = tokdup(&tk[2]);
		} else if (tokis(&tk[1], "wakeup")) {
			r->verb = RV_CULL_WAKE;
			if (parse_sel(&tk[2], &r->a, pe))
				return -1;
		} else {
			return fail(pe, tk[1].col, "expected 'process', "
			    "'thread' or 'wakeup'");
		}
		want = 3;
	} else if (tokis(&tk[0], "connect")) {
		r->verb = RV_CONNECT;
		if (n < 3)
			return fail(pe, tk[n - 1].col + tk[n - 1].len + 1,
			    "expected two event selectors");
		if (parse_sel(&tk[1], &r->a, pe) || parse_sel(&tk[2], &r->b,
		    pe))
			return -1;
		want = 3;
		if (n >= 4) {
			if (tokis(&tk[3], "any"))
				r->key_any = 1;
			else if (!tokis(&tk[3], "key"))
				return fail(pe, tk[3].col, "expected 'key' or "
				    "'any'");
			want = 4;
		}
	} else if (tokis(&tk[0], "input")) {
		r->verb = RV_INPUT;
		if (n < 2)
			return fail(pe, tk[0].col + tk[0].len + 1,
			    "expected an event selector");
		if (parse_sel(&tk[1], &r->a, pe))
			return -1;
		want = 2;
	} else {
		return fail(pe, tk[0].col, "unknown rule '%.*s'",
		    (int)tk[0].len, tk[0].s);
	}
	if (n > want)
		return fail(pe, tk[want].col, "unexpected '%.*s'",
		    (int)tk[want].len, tk[want].s);
	/* normalised text */
	size_t tl = 0;
	for (size_t k = 0; k < n; k++)
		tl += tk[k].len + 1;
	r->text = xmalloc(tl + 1);
	r->text[0] = '\0';
	for (size_t k = 0; k < n; k++) {
		strncat(r->text, tk[k].s, tk[k].len);
		if (k + 1 < n)
			strcat(r->text, " ");
	}
	return 0;
}

static void
push_rule(struct rules *rs, const struct rule *r)
{
	DGROW(rs->v, rs->cap, rs->n + 1, 16);
	rs->v[rs->n++] = *r;
}

int
rules_parse(struct rules *rs, const char *text, const char *fname,
    char **cause)
{
	struct rules tmp = { 0 };
	const char *p = text;
	size_t lineno = 0;

	while (*p != '\0') {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		struct tok tk[8];
		struct perr pe = { 0 };
		struct rule r;
		size_t over, n;

		lineno++;
		n = tokenize(p, len, tk, ARRAY_SIZE(tk), &over);
		if (n > 0 && rs->n + tmp.n >= RULES_MAX) {
			fail(&pe, 1, "too many rules (at most %u)", RULES_MAX);
		} else if (over) {
			fail(&pe, over, "too many words");
		} else if (n > 0 && parse_line(tk, n, &r, &pe) == 0) {
			push_rule(&tmp, &r);
		} else if (n > 0) {
			rule_clear(&r);
		}
		if (pe.col) {
			if (cause)
				*cause = xasprintf("%s:%zu:%zu: %s", fname,
				    lineno, pe.col, pe.msg ? pe.msg : "error");
			free(pe.msg);
			for (size_t i = 0; i < tmp.n; i++)
				rule_clear(&tmp.v[i]);
			free(tmp.v);
			return GRAPH_ESYNTAX;
		}
		p += len;
		if (*p == '\n')
			p++;
	}
	for (size_t i = 0; i < tmp.n; i++)
		push_rule(rs, &tmp.v[i]);
	free(tmp.v);
	return 0;
}

/* A rules file is text a person writes: a few KiB. */
#define RULES_FILE_MAX (1u << 20)

int
rules_load_file(struct rules *rs, const char *path, char **cause)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat sb;
	char *buf = NULL, *nul;
	size_t len = 0;
	ssize_t k;
	int err = 0;

	if (cause)
		*cause = NULL;
	if (fd < 0 || fstat(fd, &sb) != 0) {
		err = errno;
		goto out;
	}
	if (S_ISDIR(sb.st_mode)) {
		err = EISDIR;
		goto out;
	}
	/* a pipe may be read (blocking), a FIFO nobody writes may not */
	if (S_ISFIFO(sb.st_mode))
		(void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	buf = xmalloc(RULES_FILE_MAX + 1);
	while (len <= RULES_FILE_MAX) {
		k = read(fd, buf + len, RULES_FILE_MAX + 1 - len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			err = errno;
			goto out;
		}
		if (k == 0)
			break;
		len += (size_t)k;
	}
	if (len > RULES_FILE_MAX) {
		if (cause)
			*cause = xasprintf("%s: larger than %u KiB: not a "
			    "rules file", path, RULES_FILE_MAX >> 10);
		err = EFBIG;
		goto out;
	}
	buf[len] = '\0';
	if ((nul = memchr(buf, '\0', len)) != NULL) {
		size_t line = 1, col = 1;

		for (const char *q = buf; q < nul; q++, col++)
			if (*q == '\n') {
				line++;
				col = 0;
			}
		if (cause)
			*cause = xasprintf("%s:%zu:%zu: a NUL byte (not a text "
			    "file)", path, line, col);
		err = GRAPH_ESYNTAX;
		goto out;
	}
	err = rules_parse(rs, buf, path, cause);
	free(buf);
	close(fd);
	return err;
out:
	if (err && cause && *cause == NULL)
		*cause = xasprintf("%s: %s", path, strerror(err));
	free(buf);
	if (fd >= 0)
		close(fd);
	return err;
}

int
rules_add_defaults(struct rules *rs, char **cause)
{
	return rules_parse(rs, default_rules, "default rules", cause);
}
