/*
 * record-decode.c: from raw kernel records to trace events.
 *
 * The table evtab lists every kernel event the recorder knows, the event
 * set that first enables it, the decoder kind and the names of the fields
 * it needs. At start the formats are loaded once through libtraceevent;
 * each enabled event's id gets a struct decoder holding the offset, size
 * and signedness of its fields, so a record is decoded with fixed-offset
 * loads. Event ids met later that are not in the table (uprobes added to
 * the instance by `argus probe`) are looked up lazily from their format
 * file; those of the system "argus_probes" become TT_USER/TU_PROBE.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <event-parse.h>
#include <tracefs.h>

#include "common/array.h"
#include "common/common.h"
#include "user-protocol.h"
#include "rbpage-local.h"
#include "record-local.h"

_Static_assert(ARGUS_MARKER_MAX_FRAMES <= TRACE_STACK_MAX,
    "readers drop longer stacks");

#define PROBE_SYSTEM "argus_probes"

/* Common fields of every record (stable kernel ABI). */
#define COMMON_FLAGS_OFF 2
#define COMMON_PID_OFF 4
#define TF_HARDIRQ 0x08
#define TF_SOFTIRQ 0x10
#define TF_NMI 0x40
/* syscalls:sys_enter_NAME: __syscall_nr (int) at 8, arguments from 16. */
#define SYSC_ARGS_OFF 16

#define S RECORD_SET_SCHED
#define D RECORD_SET_DEFAULT
#define E(sys, nm, set, k, miss, ...) \
	{ sys, nm, set, k, { __VA_ARGS__ }, miss }

const struct evspec rec_evtab[] = {
	E("sched", "sched_switch", S, DK_SWITCH, "every wait and run",
	    "prev_state", "next_pid", "next_prio"),
	E("sched", "sched_waking", S, DK_WAKING, "who woke whom",
	    "pid", "target_cpu", "prio"),
	E("sched", "sched_wakeup_new", S, DK_WAKEUP_NEW, "first runs of new threads",
	    "pid", "target_cpu"),
	E("task", "task_newtask", S, DK_NEWTASK, "thread creation",
	    "pid", "comm", "clone_flags"),
	E("sched", "sched_process_exec", S, DK_EXEC, "program changes (exec)",
	    "pid", "old_pid", "filename"),
	E("sched", "sched_process_exit", S, DK_EXIT, "thread exits", "pid",
	    "group_dead"),
	E("task", "task_rename", S, DK_RENAME, "thread names set after the start",
	    "pid", "newcomm"),
	E("irq", "irq_handler_entry", S, DK_IRQ_ENTRY, "interrupt boundaries",
	    "irq", "name"),
	E("irq", "irq_handler_exit", S, DK_IRQ_EXIT, "interrupt boundaries",
	    "irq", "ret"),
	E("irq", "softirq_entry", S, DK_SOFTIRQ_ENTRY, "softirq boundaries",
	    "vec"),
	E("irq", "softirq_exit", S, DK_SOFTIRQ_EXIT, "softirq boundaries",
	    "vec"),
	E("irq", "softirq_raise", D, DK_SOFTIRQ_RAISE, "who raised a softirq",
	    "vec"),
	E("ipi", "ipi_send_cpu", S, DK_IPI_CPU, "inter-processor wake-ups",
	    "cpu"),
	E("ipi", "ipi_send_cpumask", S, DK_IPI_MASK, "inter-processor wake-ups",
	    "cpumask"),
	E("timer", "hrtimer_start", S, DK_HRT_START, "timer causes of wake-ups",
	    "hrtimer", "function", "expires", "mode"),
	E("timer", "hrtimer_cancel", S, DK_HRT_CANCEL, "timer cancels",
	    "hrtimer"),
	E("timer", "hrtimer_expire_entry", S, DK_HRT_EXPIRE,
	    "timer causes of wake-ups", "hrtimer", "function"),
	E("timer", "hrtimer_expire_exit", S, DK_HRT_EXIT, "timer boundaries",
	    "hrtimer"),
	E("timer", "timer_start", S, DK_TMR_START, "timer causes of wake-ups",
	    "timer", "function", "expires", "flags"),
	E("timer", "timer_cancel", S, DK_TMR_CANCEL, "timer cancels", "timer"),
	E("timer", "timer_expire_entry", S, DK_TMR_EXPIRE,
	    "timer causes of wake-ups", "timer", "function"),
	E("timer", "timer_expire_exit", S, DK_TMR_EXIT, "timer boundaries",
	    "timer"),
	E("workqueue", "workqueue_queue_work", D, DK_WQ_QUEUE,
	    "kernel work-queue edges", "work", "function", "workqueue",
	    "req_cpu", "cpu"),
	E("workqueue", "workqueue_execute_start", D, DK_WQ_START,
	    "kernel work-queue edges", "work", "function"),
	E("workqueue", "workqueue_execute_end", D, DK_WQ_END,
	    "kernel work-queue edges", "work", "function"),
	E("signal", "signal_generate", D, DK_SIG_GEN, "signal edges",
	    "sig", "pid", "code", "result"),
	E("signal", "signal_deliver", D, DK_SIG_DELIVER, "signal edges",
	    "sig", "code", "sa_handler"),
	/* the sender's side of a message is sk_data_ready (it names the
	   receiving socket): send lengths only in the full set */
	E("sock", "sock_send_length", RECORD_SET_FULL, DK_SOCK_SEND,
	    "socket send lengths",
	    "sk", "family", "protocol", "ret", "flags"),
	E("sock", "sock_recv_length", D, DK_SOCK_RECV, "socket messages",
	    "sk", "family", "protocol", "ret", "flags"),
	E("sock", "sk_data_ready", D, DK_SK_READY, "socket message edges",
	    "skaddr", "family", "protocol"),
	/* file locks: who holds the lock a blocked or polling attempt
	   waits for */
	E("filelock", "posix_lock_inode", D, DK_FL_POSIX, "file lock holders",
	    "i_ino", "s_dev", "type", "flags", "ret", "owner"),
	E("filelock", "flock_lock_inode", D, DK_FL_FLOCK, "file lock holders",
	    "i_ino", "s_dev", "type", "flags", "ret", "owner"),
	E("filelock", "fcntl_setlk", D, DK_FL_SETLK, "file lock holders",
	    "i_ino", "s_dev", "type", "flags", "ret", "owner"),
	E("filelock", "locks_remove_posix", D, DK_FL_REMOVE, "file lock holders",
	    "i_ino", "s_dev", "type", "flags", "ret", "owner"),
	E("raw_syscalls", "sys_enter", RECORD_SET_FULL, DK_SYS_ENTER,
	    "syscalls (wait resources, messages)", "id", "args"),
	E("raw_syscalls", "sys_exit", RECORD_SET_FULL, DK_SYS_EXIT,
	    "syscall results", "id", "ret"),
	E("ftrace", "raw_data", S, DK_RAW_DATA, NULL, "id"),
};
const size_t rec_nevtab = ARRAY_SIZE(rec_evtab);

static void
field_of(struct tep_event *e, const char *name, struct rfield *f)
{
	struct tep_format_field *ff;

	memset(f, 0, sizeof(*f));
	if (name == NULL || (ff = tep_find_field(e, name)) == NULL)
		return;
	f->off = (uint16_t)ff->offset;
	f->size = (uint16_t)ff->size;
	f->sign = (ff->flags & TEP_FIELD_IS_SIGNED) != 0;
	f->dataloc = (ff->flags & TEP_FIELD_IS_DYNAMIC) != 0;
	if (ff->flags & TEP_FIELD_IS_ARRAY && !f->dataloc && ff->arraylen)
		f->size = (uint16_t)ff->size;	/* char comm[16] */
}

static struct decoder *
dec_slot(struct recorder *r, unsigned id)
{
	if (id >= r->ndec) {
		unsigned old = r->ndec;

		DGROW(r->dec, r->ndec, (size_t)id + 1, 1024);
		memset(r->dec + old, 0, (r->ndec - old) * sizeof(*r->dec));
	}
	return &r->dec[id];
}

void
rec_decode_add(struct recorder *r, unsigned id, int kind)
{
	struct decoder *d = dec_slot(r, id);

	d->kind = (uint8_t)kind;
	d->known = 1;
}

int
rec_decode_init(struct recorder *r, char **cause)
{
	static const char *systems[] = { "sched", "task", "irq", "ipi",
	    "timer", "workqueue", "signal", "sock", "raw_syscalls", "ftrace",
	    "filelock", NULL };

	r->tep = tracefs_local_events_system(NULL, systems);
	if (r->tep == NULL) {
		*cause = xasprintf("cannot read the kernel's event formats: %s",
		    strerror(errno ? errno : EIO));
		return errno ? errno : EIO;
	}
	for (size_t i = 0; i < rec_nevtab; i++) {
		const struct evspec *s = &rec_evtab[i];
		struct tep_event *e;
		struct decoder *d;

		if (s->set > r->set)
			continue;
		e = tep_find_event_by_name(r->tep, s->sys, s->name);
		if (e == NULL)
			continue;	/* warned about when enabling */
		d = dec_slot(r, (unsigned)e->id);
		d->kind = s->kind;
		d->known = 1;
		for (int k = 0; k < DEC_MAXF; k++)
			field_of(e, s->fields[k], &d->f[k]);
	}
	return 0;
}

void
rec_decode_free(struct recorder *r)
{
	for (unsigned i = 0; i < r->ndec; i++)
		free(r->dec[i].name);
	free(r->dec);
	r->dec = NULL;
	r->ndec = 0;
	if (r->tep)
		tep_free(r->tep);
	r->tep = NULL;
}

/* Look up an id we have not met: a probe of argus_probes, or not ours. */
static void
dec_lazy(struct recorder *r, unsigned id)
{
	struct decoder *d = dec_slot(r, id);
	struct tep_event *e;

	d->known = 1;
	d->kind = DK_NONE;
	e = tep_find_event(r->tep, (int)id);
	if (e == NULL) {
		/* Parse the formats of the probe system, looking for id. */
		char **evs = tracefs_system_events(NULL, PROBE_SYSTEM);

		for (size_t i = 0; evs && evs[i] && e == NULL; i++) {
			int sz = 0;
			char *buf = tracefs_event_file_read(NULL, PROBE_SYSTEM,
			    evs[i], "format", &sz);

			if (buf && tep_find_event_by_name(r->tep, PROBE_SYSTEM,
			    evs[i]) == NULL)
				tep_parse_event(r->tep, buf, (size_t)sz,
				    PROBE_SYSTEM);
			free(buf);
			e = tep_find_event(r->tep, (int)id);
		}
		tracefs_list_free(evs);
	}
	if (e == NULL || e->system == NULL ||
	    strcmp(e->system, PROBE_SYSTEM) != 0)
		return;
	d->kind = DK_PROBE;
	d->name = xstrdup(e->name);
	field_of(e, "__probe_ip", &d->f[0]);
}

const char *
rec_probe_name(struct recorder *r, unsigned id)
{
	if (id >= r->ndec || !r->dec[id].known)
		dec_lazy(r, id);
	return r->dec[id].kind == DK_PROBE ? r->dec[id].name : NULL;
}

static inline uint64_t
getu(const uint8_t *p, size_t len, const struct rfield *f)
{
	uint8_t v1;
	uint16_t v2;
	uint32_t v4;
	uint64_t v8;

	if (f->size == 0 || (size_t)f->off + f->size > len)
		return 0;
	switch (f->size) {
	case 1:
		memcpy(&v1, p + f->off, 1);
		return f->sign ? (uint64_t)(int64_t)(int8_t)v1 : v1;
	case 2:
		memcpy(&v2, p + f->off, 2);
		return f->sign ? (uint64_t)(int64_t)(int16_t)v2 : v2;
	case 4:
		memcpy(&v4, p + f->off, 4);
		return f->sign ? (uint64_t)(int64_t)(int32_t)v4 : v4;
	default:
		memcpy(&v8, p + f->off, 8);
		return v8;
	}
}

/* String field (char[N] or __data_loc char[]); length without NUL. */
static const char *
getstr(const uint8_t *p, size_t len, const struct rfield *f, uint32_t *slen)
{
	const char *s;
	size_t max;

	*slen = 0;
	if (f->size == 0 || (size_t)f->off + f->size > len)
		return "";
	if (f->dataloc) {
		uint32_t v;

		memcpy(&v, p + f->off, 4);
		if ((v & 0xffff) + (v >> 16) > len)
			return "";
		s = (const char *)p + (v & 0xffff);
		max = v >> 16;
	} else {
		s = (const char *)p + f->off;
		max = f->size;
	}
	*slen = (uint32_t)strnlen(s, max);
	return s;
}

/* See record-local.h (a new task's parent group, a stack's process). */
uint32_t
rec_tgid_of(struct recorder *r, uint32_t tid)
{
	struct rthread *t = rec_thread_find(r, tid);

	return t ? t->pid : tid;
}

/* A hang mark: counted, and the last hang's thread kept (record_stats). */
static void
note_hang(struct recorder *r, unsigned kind, const struct trace_event *ev)
{
	struct rthread *t;

	if (kind == TU_HANG_END) {
		r->hang.ended++;
		return;
	}
	r->hang.begun++;
	r->hang.tid = ev->tid;
	/* arg2: when the thread left its loop wait, if earlier */
	r->hang.start_ts = ev->arg[3] && ev->arg[3] < ev->ts ? ev->arg[3] :
	    ev->ts;
	t = rec_thread_find(r, ev->tid);
	r->hang.pid = t ? t->pid : ev->tid;
	if (t && t->pid != t->tid)
		t = rec_thread_find(r, t->pid);
	snprintf(r->hang.comm, sizeof(r->hang.comm), "%s", t ? t->comm : "");
}

/*
 * A record libargus wrote into trace_marker_raw (trace/user-protocol.h): a user event,
 * the stack of one, or a mapping of the writer's process. With
 * ARGUS_MK_PROXY the event is about the thread named at the head of the
 * payload; it stays in the writer's CPU stream (the tid is stored).
 */
void
rec_decode_marker(struct recorder *r, struct trace_event *ev,
    const uint8_t *p, size_t len)
{
	struct argus_marker_hdr h;
	uint64_t frames[ARGUS_MARKER_MAX_FRAMES];
	char name[ARGUS_MARKER_MAX_NAME + 1];
	char path[4096];
	const uint8_t *pl;
	size_t plen, n;
	unsigned kind;

	if (len < 8 + sizeof(h))
		return;
	memcpy(&h, p + 8, sizeof(h));
	if (h.id != ARGUS_MARKER_ID || 8 + sizeof(h) + h.len > len)
		return;
	pl = p + 8 + sizeof(h);
	plen = h.len;
	kind = h.kind;
	if (kind == ARGUS_MK_MMAP) {
		uint32_t pid = rec_tgid_of(r, ev->tid);

		n = plen < sizeof(path) - 1 ? plen : sizeof(path) - 1;
		memcpy(path, pl, n);
		path[n] = '\0';
		ev->type = TT_MMAP;
		ev->cpu = TRACE_CPU_META;
		ev->ts = rec_meta_ts(r, ev->ts);
		ev->flags = 0;
		ev->tid = 0;
		ev->arg[0] = pid;
		ev->arg[1] = h.key;
		ev->arg[2] = h.arg;
		ev->arg[3] = h.arg2;
		ev->blob = path;
		ev->blob_len = (uint32_t)strnlen(path, n);
		rec_add(r, ev);
		rec_maps_written(r, pid);
		return;
	}
	if (kind & ARGUS_MK_PROXY) {
		uint64_t who;

		if (plen < 8)
			return;
		memcpy(&who, pl, 8);
		if ((uint32_t)who == 0)
			return;
		ev->tid = (uint32_t)who;
		pl += 8;
		plen -= 8;
		kind &= ~(unsigned)ARGUS_MK_PROXY;
	}
	if (kind == ARGUS_MK_STACK) {
		if (plen == 0 || plen % 8 != 0)
			return;		/* no frame, or a cut one */
		n = plen / 8;
		if (n > ARGUS_MARKER_MAX_FRAMES)
			n = ARGUS_MARKER_MAX_FRAMES;
		memcpy(frames, pl, n * 8);
		ev->type = TT_STACK;
		ev->arg[0] = ev->tid;
		ev->arg[1] = h.key;
		ev->blob = frames;
		ev->blob_len = (uint32_t)(n * 8);
		rec_add(r, ev);
		rec_maps_need(r, ev->ts, rec_tgid_of(r, ev->tid), frames, n);
		return;
	}
	if (kind == 0 || kind >= TU_NKINDS)
		return;
	n = plen > ARGUS_MARKER_MAX_NAME ? ARGUS_MARKER_MAX_NAME : plen;
	memcpy(name, pl, n);
	name[n] = '\0';
	ev->type = TT_USER;
	ev->arg[0] = kind;
	ev->arg[1] = h.key;
	ev->arg[2] = h.arg;
	ev->arg[3] = h.arg2;
	ev->blob = name;
	ev->blob_len = (uint32_t)strnlen(name, n);
	rec_add(r, ev);
	if (kind == TU_HANG_BEGIN || kind == TU_HANG_END)
		note_hang(r, kind, ev);
}

void
rec_emit(struct recorder *r, struct trace_event *ev, uint64_t group_dead)
{
	uint64_t ts = ev->ts;
	uint32_t sl = ev->blob_len;
	const char *s = ev->blob;
	struct rthread *t;

	if (r->lost != 0 && ev->tid != 0 && ev->type != TT_FORK &&
	    rec_thread_find(r, ev->tid) == NULL)
		rec_thread_recover(r, ts, ev->tid);
	switch (ev->type) {
	case TT_FORK: {
		uint32_t child = (uint32_t)ev->arg[0];
		uint64_t flags = ev->arg[2];
		struct rthread *par = rec_thread_find(r, ev->tid);
		uint32_t ptgid = par ? par->pid : ev->tid;

		ev->arg[1] = flags & 0x00010000 /* CLONE_THREAD */ ?
		    ptgid : child;
		t = rec_thread_add(r, child);
		if (t->exited && t->comm_ts <= ts) {
			/* the tid of a thread gone, reused */
			memset(t, 0, sizeof(*t));
			t->tid = child;
		}
		t->pid = (uint32_t)ev->arg[1];
		t->ppid = flags & 0x00010000 ? (par ? par->ppid : 0) : ptgid;
		t->flags = 0;
		t->forked = !(flags & 0x00010000);
		if (t->forked)	/* a pid reused: not the old one's mappings */
			rec_maps_changed(r, child);
		if (t->comm_ts <= ts) {
			memcpy(t->comm, s, sl < TRACE_COMM_LEN ? sl :
			    TRACE_COMM_LEN - 1);
			t->comm[sl < TRACE_COMM_LEN ? sl : TRACE_COMM_LEN - 1] = '\0';
			t->comm_ts = ts;
		}
		rec_add(r, ev);
		rec_thread_emit(r, ts, t);
		return;
	}
	case TT_EXEC:
		rec_maps_changed(r, (uint32_t)ev->arg[0]);
		if ((t = rec_thread_find(r, (uint32_t)ev->arg[0])) != NULL)
			t->forked = 0;
		if (ev->arg[0] != ev->arg[1]) {
			/* A non-leader thread exec'd: it takes the leader's tid. */
			rec_thread_del(r, (uint32_t)ev->arg[1]);
		}
		break;
	case TT_EXIT:
		rec_add(r, ev);
		t = rec_thread_find(r, (uint32_t)ev->arg[0]);
		if (group_dead)	/* the whole process is gone */
			rec_proc_exited(r, t ? t->pid : (uint32_t)ev->arg[0]);
		if (t && !t->exited)
			rec_thread_exited(r, ts, t);
		return;
	case TT_RENAME:
		rec_add(r, ev);
		t = rec_thread_learn(r, (uint32_t)ev->arg[0]);
		if (sl >= TRACE_COMM_LEN)
			sl = TRACE_COMM_LEN - 1;
		if (t->comm_ts <= ts) {
			memcpy(t->comm, s, sl);
			t->comm[sl] = '\0';
			t->comm_ts = ts;
		}
		rec_thread_emit(r, ts, t);	/* still gone if exited */
		return;
	case TT_SYS_ENTER:
		rec_add(r, ev);
		if (ev->arg[0] == SYS_close)
			rec_fd_closed(r, rec_tgid_of(r, ev->tid), (int)ev->arg[1]);
		else if (trace_syscall_fd_arg(ev->arg[0]) && ev->flags == TRACE_CTX_TASK)
			rec_fd_seen(r, ts, rec_tgid_of(r, ev->tid), (int)ev->arg[1]);
		return;
	case TT_SYS_EXIT:
		rec_add(r, ev);
		if ((ev->arg[0] == SYS_accept || ev->arg[0] == SYS_accept4) &&
		    (int64_t)ev->arg[1] >= 0)
			rec_fd_seen(r, ts, rec_tgid_of(r, ev->tid), (int)ev->arg[1]);
		return;
	default:
		break;
	}
	rec_add(r, ev);
}

static void
dec_record(struct recorder *r, unsigned cpu, uint64_t ts, const uint8_t *p,
    size_t len)
{
	struct trace_event ev;
	struct decoder *d;
	const struct rfield *f;
	uint16_t id;
	uint8_t cf;
	int32_t pid;
	uint32_t sl;
	const char *s;

	if (len < 8)
		return;
	memcpy(&id, p, 2);
	if (id >= r->ndec || !r->dec[id].known)
		dec_lazy(r, id);
	d = &r->dec[id];
	if (d->kind == DK_NONE)
		return;
	f = d->f;
	r->events++;
	memset(&ev, 0, sizeof(ev));
	ev.ts = ts;
	ev.cpu = (uint16_t)cpu;
	memcpy(&pid, p + COMMON_PID_OFF, 4);
	ev.tid = (uint32_t)pid;
	cf = p[COMMON_FLAGS_OFF];
	ev.flags = cf & TF_NMI ? TRACE_CTX_NMI : cf & TF_HARDIRQ ?
	    TRACE_CTX_HARDIRQ : cf & TF_SOFTIRQ ? TRACE_CTX_SOFTIRQ :
	    TRACE_CTX_TASK;

	switch (d->kind) {
	case DK_SWITCH:
		ev.type = TT_SWITCH;
		ev.arg[0] = getu(p, len, &f[0]);
		ev.arg[1] = (uint32_t)getu(p, len, &f[1]);
		ev.arg[2] = (uint32_t)getu(p, len, &f[2]);
		break;
	case DK_WAKING:
		ev.type = TT_WAKING;
		ev.arg[0] = (uint32_t)getu(p, len, &f[0]);
		ev.arg[1] = (uint32_t)getu(p, len, &f[1]);
		ev.arg[2] = (uint32_t)getu(p, len, &f[2]);
		break;
	case DK_WAKEUP_NEW:
		ev.type = TT_WAKEUP_NEW;
		ev.arg[0] = (uint32_t)getu(p, len, &f[0]);
		ev.arg[1] = (uint32_t)getu(p, len, &f[1]);
		break;
	case DK_NEWTASK:
		ev.type = TT_FORK;
		ev.arg[0] = (uint32_t)getu(p, len, &f[0]);
		ev.arg[2] = getu(p, len, &f[2]);
		ev.blob = getstr(p, len, &f[1], &ev.blob_len);
		rec_emit(r, &ev, 0);
		return;
	case DK_EXEC:
		ev.type = TT_EXEC;
		ev.arg[0] = (uint32_t)getu(p, len, &f[0]);
		ev.arg[1] = (uint32_t)getu(p, len, &f[1]);
		ev.blob = getstr(p, len, &f[2], &ev.blob_len);
		rec_emit(r, &ev, 0);
		return;
	case DK_EXIT:
		ev.type = TT_EXIT;
		ev.arg[0] = (uint32_t)getu(p, len, &f[0]);
		rec_emit(r, &ev, getu(p, len, &f[1]));
		return;
	case DK_RENAME:
		ev.type = TT_RENAME;
		ev.arg[0] = (uint32_t)getu(p, len, &f[0]);
		ev.blob = getstr(p, len, &f[1], &ev.blob_len);
		rec_emit(r, &ev, 0);
		return;
	case DK_IRQ_ENTRY:
		ev.type = TT_IRQ_ENTRY;
		ev.arg[0] = (uint32_t)getu(p, len, &f[0]);
		s = getstr(p, len, &f[1], &sl);
		ev.blob = s;
		ev.blob_len = sl;
		break;
	case DK_IRQ_EXIT:
		ev.type = TT_IRQ_EXIT;
		ev.arg[0] = (uint32_t)getu(p, len, &f[0]);
		ev.arg[1] = getu(p, len, &f[1]);
		break;
	case DK_SOFTIRQ_ENTRY:
	case DK_SOFTIRQ_EXIT:
	case DK_SOFTIRQ_RAISE:
		ev.type = d->kind == DK_SOFTIRQ_ENTRY ? TT_SOFTIRQ_ENTRY :
		    d->kind == DK_SOFTIRQ_EXIT ? TT_SOFTIRQ_EXIT :
		    TT_SOFTIRQ_RAISE;
		ev.arg[0] = getu(p, len, &f[0]);
		break;
	case DK_IPI_CPU:
	case DK_IPI_MASK:
		ev.type = TT_IPI;
		ev.arg[0] = TIPI_SEND;
		if (d->kind == DK_IPI_CPU) {
			ev.arg[1] = getu(p, len, &f[0]);
		} else {
			/* cpumask (data_loc): first word of the mask. */
			uint32_t v;

			memcpy(&v, p + f[0].off, 4);
			if (f[0].size && (v & 0xffff) + 8 <= len)
				memcpy(&ev.arg[1], p + (v & 0xffff),
				    (v >> 16) < 8 ? (v >> 16) : 8);
			ev.arg[1] |= 1ull << 63;	/* a mask, not a CPU */
		}
		break;
	case DK_HRT_START:
	case DK_TMR_START:
		ev.type = TT_TIMER_START;
		ev.arg[0] = getu(p, len, &f[0]);
		ev.arg[1] = getu(p, len, &f[1]);
		ev.arg[2] = getu(p, len, &f[2]);
		ev.arg[3] = d->kind == DK_HRT_START ? TTIMER_HR : TTIMER_LIST;
		ev.arg[4] = getu(p, len, &f[3]);
		break;
	case DK_HRT_CANCEL:
	case DK_TMR_CANCEL:
		ev.type = TT_TIMER_CANCEL;
		ev.arg[0] = getu(p, len, &f[0]);
		ev.arg[1] = d->kind == DK_HRT_CANCEL ? TTIMER_HR : TTIMER_LIST;
		break;
	case DK_HRT_EXPIRE:
	case DK_TMR_EXPIRE:
		ev.type = TT_TIMER_EXPIRE;
		ev.arg[0] = getu(p, len, &f[0]);
		ev.arg[1] = d->kind == DK_HRT_EXPIRE ? TTIMER_HR : TTIMER_LIST;
		ev.arg[2] = getu(p, len, &f[1]);
		break;
	case DK_HRT_EXIT:
	case DK_TMR_EXIT:
		ev.type = TT_TIMER_EXPIRE_EXIT;
		ev.arg[0] = getu(p, len, &f[0]);
		ev.arg[1] = d->kind == DK_HRT_EXIT ? TTIMER_HR : TTIMER_LIST;
		break;
	case DK_WQ_QUEUE:
		ev.type = TT_WQ_QUEUE;
		ev.arg[0] = getu(p, len, &f[0]);
		ev.arg[1] = getu(p, len, &f[1]);
		ev.arg[2] = (uint32_t)getu(p, len, &f[3]);
		ev.arg[3] = (uint32_t)getu(p, len, &f[4]);
		s = getstr(p, len, &f[2], &sl);
		ev.blob = s;
		ev.blob_len = sl;
		break;
	case DK_WQ_START:
	case DK_WQ_END:
		ev.type = d->kind == DK_WQ_START ? TT_WQ_START : TT_WQ_END;
		ev.arg[0] = getu(p, len, &f[0]);
		ev.arg[1] = getu(p, len, &f[1]);
		break;
	case DK_SIG_GEN:
		ev.type = TT_SIGNAL_GEN;
		ev.arg[0] = getu(p, len, &f[0]);
		ev.arg[1] = (uint32_t)getu(p, len, &f[1]);
		ev.arg[2] = getu(p, len, &f[2]);
		ev.arg[3] = getu(p, len, &f[3]);
		break;
	case DK_SIG_DELIVER:
		ev.type = TT_SIGNAL_DELIVER;
		ev.arg[0] = getu(p, len, &f[0]);
		ev.arg[1] = getu(p, len, &f[1]);
		ev.arg[2] = getu(p, len, &f[2]);
		break;
	case DK_SOCK_SEND:
	case DK_SOCK_RECV:
		ev.type = d->kind == DK_SOCK_SEND ? TT_SOCK_SEND : TT_SOCK_RECV;
		for (int k = 0; k < 5; k++)
			ev.arg[k] = getu(p, len, &f[k]);
		break;
	case DK_SK_READY:
		ev.type = TT_SK_DATA_READY;
		for (int k = 0; k < 3; k++)
			ev.arg[k] = getu(p, len, &f[k]);
		break;
	case DK_FL_POSIX: case DK_FL_FLOCK: case DK_FL_SETLK:
	case DK_FL_REMOVE:
		ev.type = TT_FILELOCK;
		ev.arg[0] = (uint64_t)(d->kind - DK_FL_POSIX + TFL_POSIX);
		ev.arg[1] = getu(p, len, &f[0]);
		ev.arg[2] = getu(p, len, &f[1]);
		ev.arg[3] = (getu(p, len, &f[2]) & 0xff) |
		    (getu(p, len, &f[3]) << 8);
		ev.arg[4] = getu(p, len, &f[4]);	/* sign-extended */
		ev.arg[5] = getu(p, len, &f[5]);
		break;
	case DK_SYS_ENTER:
	case DK_SYSC_ENTER: {
		uint64_t args[6] = { 0 };

		ev.type = TT_SYS_ENTER;
		if (d->kind == DK_SYS_ENTER) {
			ev.arg[0] = getu(p, len, &f[0]);
			if ((size_t)f[1].off + 48 <= len && f[1].size)
				memcpy(args, p + f[1].off, 48);
		} else {
			/* __syscall_nr at 8, then one 8-byte slot per argument. */
			int32_t nr;
			size_t n = len > SYSC_ARGS_OFF ?
			    (len - SYSC_ARGS_OFF) / 8 : 0;

			if (len < 12)
				return;
			memcpy(&nr, p + 8, 4);
			ev.arg[0] = (uint64_t)(int64_t)nr;
			memcpy(args, p + SYSC_ARGS_OFF, (n > 6 ? 6 : n) * 8);
		}
		memcpy(&ev.arg[1], args, 5 * sizeof(uint64_t));
		rec_emit(r, &ev, 0);
		return;
	}
	case DK_SYS_EXIT:
	case DK_SYSC_EXIT:
		ev.type = TT_SYS_EXIT;
		if (d->kind == DK_SYS_EXIT) {
			ev.arg[0] = getu(p, len, &f[0]);
			ev.arg[1] = getu(p, len, &f[1]);
		} else {
			int32_t nr;

			if (len < SYSC_ARGS_OFF + 8)
				return;
			memcpy(&nr, p + 8, 4);
			ev.arg[0] = (uint64_t)(int64_t)nr;
			memcpy(&ev.arg[1], p + SYSC_ARGS_OFF, 8);
		}
		rec_emit(r, &ev, 0);
		return;
	case DK_RAW_DATA:
		rec_decode_marker(r, &ev, p, len);
		return;
	case DK_PROBE:
		/* A uprobe fires in its thread, from the breakpoint trap
		 * (which the kernel flags as NMI-like): task context. */
		ev.flags = TRACE_CTX_TASK;
		ev.type = TT_USER;
		ev.arg[0] = TU_PROBE;
		ev.arg[2] = getu(p, len, &f[0]);
		ev.blob = d->name;
		ev.blob_len = (uint32_t)strlen(d->name);
		rec_add(r, &ev);
		rec_maps_seen(r, ts, rec_tgid_of(r, ev.tid));
		return;
	default:
		return;
	}
	rec_add(r, &ev);
}

void
rec_decode_page(struct recorder *r, unsigned cpu, const uint8_t *page,
    size_t len)
{
	struct rbpage it;
	const void *data;
	size_t sz;
	uint64_t ts;

	if (rbpage_init(&it, page, len) < 0)
		return;
	data = rbpage_next(&it, &sz, &ts);
	if (it.missed != 0)
		rec_sync_lost(r, cpu, data ? ts : 0);
	while (data) {
		if (ts < r->cpus[cpu].last_ts)
			ts = r->cpus[cpu].last_ts;
		r->cpus[cpu].last_ts = ts;
		if (sz > 0)
			dec_record(r, cpu, ts, data, sz);
		data = rbpage_next(&it, &sz, &ts);
	}
}
