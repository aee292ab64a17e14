/*
 * format.c: the one-line text of an event (argus-dump(1)).
 *
 * Fields print as name=value: addresses (delta-coded fields) in hex,
 * signed fields in decimal, the rest in decimal, with names for syscall
 * numbers, user kinds, fd kinds and sleep states; strings are quoted with
 * C escapes, arrays print as comma-separated hex. A stack's ref is left
 * out when 0 (its frames are its own, as for every stack a reader gives).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "trace-local.h"

struct out {
	char *buf;
	size_t len, pos;
};

static void
put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;
	size_t room = o->pos < o->len ? o->len - o->pos : 0;

	va_start(ap, fmt);
	n = vsnprintf(room ? o->buf + o->pos : NULL, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->pos += (size_t)n;
}

static void
put_quoted(struct out *o, const char *s, size_t n)
{
	put(o, "\"");
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			put(o, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			put(o, "\\x%02x", c);
		else
			put(o, "%c", c);
	}
	put(o, "\"");
}

static const char *
state_name(uint64_t s)
{
	/* TASK_* bits as sched_switch reports them. */
	if (s == 0)
		return "R";
	if (s & 0x1)
		return "S";
	if (s & 0x2)
		return "D";
	if (s & 0x4)
		return "T";
	if (s & 0x8)
		return "t";
	if (s & 0x10 || s & 0x20)
		return "X";
	if (s & 0x400)
		return "I";
	return "?";
}

static void
put_fields(struct out *o, const struct trace_event *ev)
{
	const struct type_desc *d = &trace_types[ev->type];
	const char *sep = "";

	for (unsigned i = 0; d->kinds[i]; i++) {
		uint64_t v = ev->arg[i];
		const char *name = d->args[i];

		if (ev->type == TT_STACK && i == 2 && v == 0)
			continue;	/* frames its own: every stack read */
		put(o, "%s%s=", sep, name);
		sep = " ";
		if (ev->type == TT_SWITCH && i == 0) {
			put(o, "%s", state_name(v));
		} else if ((ev->type == TT_SYS_ENTER || ev->type == TT_SYS_EXIT) &&
		    i == 0 && trace_syscall_name(v)) {
			put(o, "%s", trace_syscall_name(v));
		} else if (ev->type == TT_USER && i == 0 &&
		    trace_user_kind_name((unsigned)v)) {
			put(o, "%s", trace_user_kind_name((unsigned)v));
		} else if (ev->type == TT_STACK && i == 1 &&
		    trace_user_kind_name((unsigned)v)) {
			put(o, "%s", trace_user_kind_name((unsigned)v));
		} else if (ev->type == TT_STACK && i == 1 && (v == TSK_WAIT ||
		    v == TSK_SAMPLE || v == TSK_KWAIT || v == TSK_KSAMPLE)) {
			put(o, "%s", v == TSK_WAIT ? "wait" : v == TSK_SAMPLE ?
			    "sample" : v == TSK_KWAIT ? "kernel" : "ksample");
		} else if (ev->type == TT_STACK && i == 1 &&
		    (v & 0xff) == TSK_WAKER && v >> 8 <= UINT32_MAX) {
			put(o, "waker:%llu", (unsigned long long)(v >> 8));
		} else if (ev->type == TT_FD && i == 2) {
			put(o, "%s", trace_fd_kind_name((unsigned)v));
		} else if (d->kinds[i] == FK_D) {
			put(o, "0x%llx", (unsigned long long)v);
		} else if (d->kinds[i] == FK_S) {
			put(o, "%lld", (long long)v);
		} else {
			put(o, "%llu", (unsigned long long)v);
		}
	}
	if (d->blob == BK_STR) {
		put(o, "%s%s=", sep, d->blob_name);
		put_quoted(o, ev->blob ? ev->blob : "", ev->blob_len);
	} else if (d->blob == BK_ARR) {
		const uint64_t *a = ev->blob;

		put(o, "%s%s=", sep, d->blob_name);
		for (uint32_t i = 0; i < ev->blob_len / 8; i++)
			put(o, "%s0x%llx", i ? "," : "", (unsigned long long)a[i]);
		if (ev->blob_len < 8)
			put(o, "-");
	}
}

size_t
trace_format_fields(const struct trace_event *ev, char *buf, size_t len)
{
	struct out o = { buf, len, 0 };

	if (len)
		buf[0] = '\0';
	if (ev->type > TT_NONE && ev->type < TT_NTYPES)
		put_fields(&o, ev);
	return o.pos;
}

size_t
trace_format_event(const struct trace_reader *r, const struct trace_event *ev,
    uint64_t base_ts, char *buf, size_t len)
{
	struct out o = { buf, len, 0 };
	static const char ctx[] = { '-', 's', 'h', 'n' };
	const struct trace_thread *t = r ? trace_reader_thread(r, ev->tid) : NULL;
	/* a thread whose record comes after its first events */
	if (t == NULL && r != NULL && ev->tid != 0)
		t = trace_reader_thread_ahead(r, ev->tid);
	const char *comm = t ? t->comm : (ev->tid == 0 ? "<idle>" : "?");

	if (len)
		buf[0] = '\0';
	if (base_ts == UINT64_MAX)
		put(&o, "%llu", (unsigned long long)ev->ts);
	else if (ev->ts >= base_ts)
		put(&o, "%4llu.%09llu", (unsigned long long)(ev->ts - base_ts) / 1000000000ULL,
		    (unsigned long long)(ev->ts - base_ts) % 1000000000ULL);
	else
		put(&o, "-%3llu.%09llu", (unsigned long long)(base_ts - ev->ts) / 1000000000ULL,
		    (unsigned long long)(base_ts - ev->ts) % 1000000000ULL);
	if (ev->cpu == TRACE_CPU_META)
		put(&o, " [meta]");
	else
		put(&o, " [%03u]", ev->cpu);
	put(&o, " %c %7u %-15s %-13s ", ctx[ev->flags & TRACE_CTX_MASK],
	    ev->tid, comm, trace_type_name(ev->type) ? trace_type_name(ev->type) : "?");
	if (ev->type > TT_NONE && ev->type < TT_NTYPES)
		put_fields(&o, ev);
	return o.pos;
}
