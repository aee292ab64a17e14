/*
 * glib.c: GLib's main loop and thread pools, for programs that use them
 * (libargus does not link GLib: the wrappers resolve GLib's definitions
 * with RTLD_NEXT at first call, and are never called otherwise).
 *
 * Run loop: every source attached (g_source_attach by the program, and
 * the g_idle_add / g_timeout_add family) is a submission
 * (TU_RUNLOOP_SUBMIT, key = source id, arg = context). Its dispatch is
 * a callout: the source's function table is swapped for a shim that
 * writes TU_CALLOUT_BEGIN / TU_CALLOUT_END (key = source id) around the
 * original dispatch. Shims live in a static table, one per distinct
 * original table (a program has a handful: idle, timeout, io, ...);
 * when it is full, sources are left alone. Swapping happens only while
 * recording.
 *
 * Thread pools: g_thread_pool_new's function is replaced by a trampoline
 * (one small allocation per pool, at creation) writing TU_TASK_BEGIN /
 * TU_TASK_END (key = the pushed data, arg = the pool) around it;
 * g_thread_pool_push writes TU_TASK_SUBMIT with the same key.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "instrument-local.h"

/* The few GLib types used, as GLib's public headers define them. */
typedef void *gpointer;
typedef unsigned int guint;
typedef int gint;
typedef int gboolean;
typedef gboolean (*GSourceFunc)(gpointer);
typedef void (*GFunc)(gpointer, gpointer);
typedef void (*GDestroyNotify)(gpointer);

typedef struct GSourceFuncs {
	gboolean (*prepare)(void *source, gint *timeout);
	gboolean (*check)(void *source);
	gboolean (*dispatch)(void *source, GSourceFunc cb, gpointer data);
	void (*finalize)(void *source);
	void *closure_callback;
	void *closure_marshal;
} GSourceFuncs;

typedef struct GSource {
	gpointer callback_data;
	void *callback_funcs;
	const GSourceFuncs *source_funcs;
	guint ref_count;
	void *context;
	gint priority;
	guint flags;
	guint source_id;
	/* more fields follow; not used */
} GSource;

typedef struct GThreadPool {
	GFunc func;
	gpointer user_data;
	gboolean exclusive;
} GThreadPool;

INS_REAL(guint, g_source_attach, (GSource *, void *))
INS_REAL(GSource *, g_main_context_find_source_by_id, (void *, guint))
INS_REAL(guint, g_idle_add, (GSourceFunc, gpointer))
INS_REAL(guint, g_idle_add_full, (gint, GSourceFunc, gpointer, GDestroyNotify))
INS_REAL(guint, g_timeout_add, (guint, GSourceFunc, gpointer))
INS_REAL(guint, g_timeout_add_full, (gint, guint, GSourceFunc, gpointer,
    GDestroyNotify))
INS_REAL(guint, g_timeout_add_seconds, (guint, GSourceFunc, gpointer))
INS_REAL(guint, g_timeout_add_seconds_full, (gint, guint, GSourceFunc,
    gpointer, GDestroyNotify))
INS_REAL(GThreadPool *, g_thread_pool_new, (GFunc, gpointer, gint, gboolean,
    void **))
INS_REAL(GThreadPool *, g_thread_pool_new_full, (GFunc, gpointer,
    GDestroyNotify, gint, gboolean, void **))
INS_REAL(gboolean, g_thread_pool_push, (GThreadPool *, gpointer, void **))

/* The exported wrappers (GLib's prototypes, with the types above). */
guint g_source_attach(GSource *s, void *ctx);
guint g_idle_add(GSourceFunc f, gpointer d);
guint g_idle_add_full(gint prio, GSourceFunc f, gpointer d, GDestroyNotify n);
guint g_timeout_add(guint ms, GSourceFunc f, gpointer d);
guint g_timeout_add_full(gint prio, guint ms, GSourceFunc f, gpointer d,
    GDestroyNotify n);
guint g_timeout_add_seconds(guint s, GSourceFunc f, gpointer d);
guint g_timeout_add_seconds_full(gint prio, guint s, GSourceFunc f,
    gpointer d, GDestroyNotify n);
GThreadPool *g_thread_pool_new(GFunc func, gpointer user_data, gint max,
    gboolean excl, void **err);
GThreadPool *g_thread_pool_new_full(GFunc func, gpointer user_data,
    GDestroyNotify item_free, gint max, gboolean excl, void **err);
gboolean g_thread_pool_push(GThreadPool *pool, gpointer data, void **err);

#define NSHIM 32

static struct shim {
	const GSourceFuncs *orig;
	GSourceFuncs funcs;
} shims[NSHIM];
static unsigned nshim;
static char shim_lock;		/* spin lock: held for a table scan */

static gboolean
shim_dispatch(void *source, GSourceFunc cb, gpointer data)
{
	GSource *s = source;
	const struct shim *sh = (const struct shim *)((const char *)
	    s->source_funcs - offsetof(struct shim, funcs));
	guint id = s->source_id;
	gboolean r;

	ins_emit(TU_CALLOUT_BEGIN, id, (uintptr_t)s->context, 0, NULL);
	r = sh->orig->dispatch(source, cb, data);
	ins_emit(TU_CALLOUT_END, id, (uintptr_t)s->context, (uint64_t)r, NULL);
	return r;
}

/* The shim table for orig, created on first use; NULL when full. */
static const GSourceFuncs *
shim_for(const GSourceFuncs *orig)
{
	const GSourceFuncs *r = NULL;
	unsigned i;

	if (!orig || !orig->dispatch || orig->dispatch == shim_dispatch)
		return NULL;
	while (__atomic_test_and_set(&shim_lock, __ATOMIC_ACQUIRE))
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#else
		;
#endif
	for (i = 0; i < nshim; i++)
		if (shims[i].orig == orig)
			break;
	if (i == nshim && nshim < NSHIM) {
		shims[i].orig = orig;
		shims[i].funcs = *orig;
		shims[i].funcs.dispatch = shim_dispatch;
		nshim++;
	}
	if (i < nshim)
		r = &shims[i].funcs;
	__atomic_clear(&shim_lock, __ATOMIC_RELEASE);
	return r;
}

INS_EXPORT guint
g_source_attach(GSource *s, void *ctx)
{
	guint id;

	if (INS_LIKELY(!ins.on))
		return get_g_source_attach()(s, ctx);
	if (s && !ins_self.busy) {
		const GSourceFuncs *sh = shim_for(s->source_funcs);

		if (sh)
			s->source_funcs = sh;
	}
	id = get_g_source_attach()(s, ctx);
	ins_emit(TU_RUNLOOP_SUBMIT, id, (uintptr_t)ctx, 0, NULL);
	return id;
}

/*
 * GLib attaches the sources of its g_idle_add / g_timeout_add family
 * with internal calls our g_source_attach does not see: find the source
 * by id after the fact and do the same (a dispatch that races with this
 * in another thread goes unrecorded).
 */
static guint
added(guint id)
{
	GSource *s;
	const GSourceFuncs *sh;

	if (INS_LIKELY(!ins.on) || id == 0)
		return id;
	s = get_g_main_context_find_source_by_id()(NULL, id);
	if (!s)
		return id;
	sh = shim_for(s->source_funcs);
	if (sh)
		s->source_funcs = sh;
	ins_emit(TU_RUNLOOP_SUBMIT, id, (uintptr_t)s->context, 0, NULL);
	return id;
}

INS_EXPORT guint
g_idle_add(GSourceFunc f, gpointer d)
{
	return added(get_g_idle_add()(f, d));
}

INS_EXPORT guint
g_idle_add_full(gint prio, GSourceFunc f, gpointer d, GDestroyNotify n)
{
	return added(get_g_idle_add_full()(prio, f, d, n));
}

INS_EXPORT guint
g_timeout_add(guint ms, GSourceFunc f, gpointer d)
{
	return added(get_g_timeout_add()(ms, f, d));
}

INS_EXPORT guint
g_timeout_add_full(gint prio, guint ms, GSourceFunc f, gpointer d,
    GDestroyNotify n)
{
	return added(get_g_timeout_add_full()(prio, ms, f, d, n));
}

INS_EXPORT guint
g_timeout_add_seconds(guint sec, GSourceFunc f, gpointer d)
{
	return added(get_g_timeout_add_seconds()(sec, f, d));
}

INS_EXPORT guint
g_timeout_add_seconds_full(gint prio, guint sec, GSourceFunc f, gpointer d,
    GDestroyNotify n)
{
	return added(get_g_timeout_add_seconds_full()(prio, sec, f, d, n));
}

/* --- thread pools -------------------------------------------------------- */

struct pool_tramp {
	GFunc func;
	gpointer user_data;
	GThreadPool *pool;
};

static void
pool_func(gpointer data, gpointer tramp_)
{
	struct pool_tramp *t = tramp_;

	ins_emit(TU_TASK_BEGIN, (uintptr_t)data, (uintptr_t)t->pool, 0, NULL);
	t->func(data, t->user_data);
	ins_emit(TU_TASK_END, (uintptr_t)data, (uintptr_t)t->pool, 0, NULL);
}

static GThreadPool *
pool_new(GFunc func, gpointer user_data, GDestroyNotify item_free,
    gint max, gboolean excl, void **err, int full)
{
	struct pool_tramp *t = malloc(sizeof(*t));
	GThreadPool *p;

	if (!t)
		return full ? get_g_thread_pool_new_full()(func, user_data,
		    item_free, max, excl, err) :
		    get_g_thread_pool_new()(func, user_data, max, excl, err);
	t->func = func;
	t->user_data = user_data;
	t->pool = NULL;
	p = full ? get_g_thread_pool_new_full()(pool_func, t, item_free, max,
	    excl, err) : get_g_thread_pool_new()(pool_func, t, max, excl, err);
	if (!p) {
		free(t);
		return NULL;
	}
	/* GLib calls p->func(task, p->user_data): they stay ours */
	__atomic_store_n(&t->pool, p, __ATOMIC_RELEASE);
	return p;
}

INS_EXPORT GThreadPool *
g_thread_pool_new(GFunc func, gpointer user_data, gint max, gboolean excl,
    void **err)
{
	return pool_new(func, user_data, NULL, max, excl, err, 0);
}

INS_EXPORT GThreadPool *
g_thread_pool_new_full(GFunc func, gpointer user_data, GDestroyNotify item_free,
    gint max, gboolean excl, void **err)
{
	return pool_new(func, user_data, item_free, max, excl, err, 1);
}

INS_EXPORT gboolean
g_thread_pool_push(GThreadPool *pool, gpointer data, void **err)
{
	ins_emit(TU_TASK_SUBMIT, (uintptr_t)data, (uintptr_t)pool, 0, NULL);
	return get_g_thread_pool_push()(pool, data, err);
}
