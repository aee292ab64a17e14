/*
 * schema.c: the table of event types: names, field names and encodings.
 *
 * This table is the schema written into every segment header; readers map
 * a file's types to theirs by name and skip the ones they do not know.
 * New fields are only ever appended to a type; new types get new names.
 */
#include <string.h>

#include "trace-local.h"

#define T(id, nm, k, bk, bn, ...) \
	[id] = { .name = nm, .kinds = k, .args = { __VA_ARGS__ }, \
		 .blob = bk, .blob_name = bn }

const struct type_desc trace_types[TT_NTYPES] = {
	T(TT_SWITCH, "switch", "utu", BK_NONE, NULL,
	    "prev_state", "next_tid", "next_prio"),
	T(TT_WAKING, "waking", "tuu", BK_NONE, NULL,
	    "wakee", "target_cpu", "prio"),
	T(TT_WAKEUP_NEW, "wakeup_new", "tu", BK_NONE, NULL,
	    "wakee", "target_cpu"),
	T(TT_MIGRATE, "migrate", "tuu", BK_NONE, NULL,
	    "tid", "orig_cpu", "dest_cpu"),
	T(TT_FORK, "fork", "ttu", BK_STR, "comm",
	    "child", "child_pid", "clone_flags"),
	T(TT_EXEC, "exec", "tt", BK_STR, "filename", "pid", "old_tid"),
	T(TT_EXIT, "exit", "t", BK_NONE, NULL, "tid"),
	T(TT_RENAME, "rename", "t", BK_STR, "comm", "tid"),
	T(TT_IRQ_ENTRY, "irq_entry", "u", BK_STR, "name", "irq"),
	T(TT_IRQ_EXIT, "irq_exit", "us", BK_NONE, NULL, "irq", "ret"),
	T(TT_SOFTIRQ_ENTRY, "softirq_entry", "u", BK_NONE, NULL, "vec"),
	T(TT_SOFTIRQ_EXIT, "softirq_exit", "u", BK_NONE, NULL, "vec"),
	T(TT_SOFTIRQ_RAISE, "softirq_raise", "u", BK_NONE, NULL, "vec"),
	T(TT_IPI, "ipi", "uu", BK_STR, "reason", "kind", "arg"),
	T(TT_TIMER_START, "timer_start", "dddud", BK_NONE, NULL,
	    "timer", "function", "expires", "kind", "mode"),
	T(TT_TIMER_CANCEL, "timer_cancel", "du", BK_NONE, NULL,
	    "timer", "kind"),
	T(TT_TIMER_EXPIRE, "timer_expire", "dud", BK_NONE, NULL,
	    "timer", "kind", "function"),
	T(TT_TIMER_EXPIRE_EXIT, "timer_expire_exit", "du", BK_NONE, NULL,
	    "timer", "kind"),
	T(TT_WQ_QUEUE, "wq_queue", "dduu", BK_STR, "workqueue",
	    "work", "function", "req_cpu", "cpu"),
	T(TT_WQ_START, "wq_start", "dd", BK_NONE, NULL, "work", "function"),
	T(TT_WQ_END, "wq_end", "dd", BK_NONE, NULL, "work", "function"),
	T(TT_SIGNAL_GEN, "signal_gen", "utss", BK_NONE, NULL,
	    "sig", "target", "code", "result"),
	T(TT_SIGNAL_DELIVER, "signal_deliver", "usd", BK_NONE, NULL,
	    "sig", "code", "handler"),
	T(TT_SOCK_SEND, "sock_send", "duusuu", BK_NONE, NULL,
	    "sk", "family", "protocol", "ret", "flags", "seq"),
	T(TT_SOCK_RECV, "sock_recv", "duusuu", BK_NONE, NULL,
	    "sk", "family", "protocol", "ret", "flags", "seq"),
	T(TT_SK_DATA_READY, "sk_data_ready", "duu", BK_NONE, NULL,
	    "sk", "family", "protocol"),
	T(TT_SYS_ENTER, "sys_enter", "uddddd", BK_NONE, NULL,
	    "nr", "a0", "a1", "a2", "a3", "a4"),
	T(TT_SYS_EXIT, "sys_exit", "us", BK_NONE, NULL, "nr", "ret"),
	T(TT_USER, "user", "uddd", BK_STR, "name",
	    "kind", "key", "arg", "arg2"),
	T(TT_STACK, "stack", "tuu", BK_ARR, "frames", "tid", "kind", "ref"),
	T(TT_MMAP, "mmap", "tdddt", BK_STR, "path",
	    "pid", "start", "len", "pgoff", "from"),
	T(TT_FD, "fd", "tuudd", BK_STR, "desc",
	    "pid", "fd", "kind", "ino", "peer"),
	T(TT_THREAD, "thread", "tttdu", BK_STR, "comm",
	    "tid", "pid", "ppid", "start_ts", "flags"),
	T(TT_LOST, "lost", "u", BK_NONE, NULL, "count"),
	T(TT_FILELOCK, "filelock", "uduusd", BK_NONE, NULL,
	    "op", "ino", "dev", "type", "ret", "owner"),
	T(TT_SOCK_ADDR, "sock_addr", "duu", BK_STR, "tuple",
	    "sk", "family", "protocol"),
	T(TT_KSYM, "ksym", "du", BK_STR, "name", "addr", "size"),
	T(TT_STACKDEF, "stackdef", "u", BK_ARR, "frames", "id"),
};

static const char *const user_kinds[TU_NKINDS] = {
	[TU_MARK] = "mark",
	[TU_TASK_SUBMIT] = "task_submit",
	[TU_TASK_BEGIN] = "task_begin",
	[TU_TASK_END] = "task_end",
	[TU_RUNLOOP_SUBMIT] = "runloop_submit",
	[TU_CALLOUT_BEGIN] = "callout_begin",
	[TU_CALLOUT_END] = "callout_end",
	[TU_FLAG_WRITE] = "flag_write",
	[TU_FLAG_READ] = "flag_read",
	[TU_INPUT] = "input",
	[TU_HANG_BEGIN] = "hang_begin",
	[TU_HANG_END] = "hang_end",
	[TU_LOCK_WAIT] = "lock_wait",
	[TU_LOCK_ACQUIRED] = "lock_acquired",
	[TU_LOCK_RELEASE] = "lock_release",
	[TU_COND_WAIT] = "cond_wait",
	[TU_COND_DONE] = "cond_done",
	[TU_COND_SIGNAL] = "cond_signal",
	[TU_LOOP_WAIT] = "loop_wait",
	[TU_LOOP_WAKE] = "loop_wake",
	[TU_PROBE] = "probe",
};

static const char *const fd_kinds[] = {
	[TFD_OTHER] = "other", [TFD_FILE] = "file", [TFD_PIPE] = "pipe",
	[TFD_UNIX] = "unix", [TFD_TCP] = "tcp", [TFD_UDP] = "udp",
	[TFD_TTY] = "tty", [TFD_EVENTFD] = "eventfd",
	[TFD_TIMERFD] = "timerfd", [TFD_EPOLL] = "epoll",
	[TFD_SOCKET] = "socket",
};

const char *
trace_type_name(unsigned type)
{
	return type < TT_NTYPES ? trace_types[type].name : NULL;
}

unsigned
trace_type_lookup(const char *name)
{
	for (unsigned t = 1; t < TT_NTYPES; t++)
		if (strcmp(trace_types[t].name, name) == 0)
			return t;
	return TT_NONE;
}

unsigned
trace_type_nargs(unsigned type)
{
	return type > 0 && type < TT_NTYPES ?
	    (unsigned)strlen(trace_types[type].kinds) : 0;
}

const char *
trace_type_arg_name(unsigned type, unsigned i)
{
	return i < trace_type_nargs(type) ? trace_types[type].args[i] : NULL;
}

const char *
trace_type_blob_name(unsigned type)
{
	return type < TT_NTYPES ? trace_types[type].blob_name : NULL;
}

int
trace_type_blob_kind(unsigned type)
{
	return type < TT_NTYPES ? trace_types[type].blob : BK_NONE;
}

int
trace_stack_malformed(const struct trace_event *ev)
{
	if (ev->type != TT_STACK && ev->type != TT_STACKDEF)
		return 0;
	return ev->blob == NULL || ev->blob_len == 0 || ev->blob_len % 8 != 0 ||
	    ev->blob_len / 8 > TRACE_STACK_MAX;
}

const char *
trace_user_kind_name(unsigned kind)
{
	return kind < TU_NKINDS ? user_kinds[kind] : NULL;
}

unsigned
trace_user_kind_lookup(const char *name)
{
	for (unsigned k = 1; k < TU_NKINDS; k++)
		if (user_kinds[k] && strcmp(user_kinds[k], name) == 0)
			return k;
	return 0;
}

const char *
trace_fd_kind_name(unsigned kind)
{
	return kind < sizeof(fd_kinds) / sizeof(fd_kinds[0]) ? fd_kinds[kind] : "other";
}
