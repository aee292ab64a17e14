/*
 * store-fixture.c: the generators of store-fixture.h.
 */
#include <string.h>

#include "store-fixture.h"
#include "trace/trace-local.h"

#define BASE_TS 1000000ULL
#define STEP 16ULL

static const char *const names[] = {
	"frame", "input", "idle", "flush", "layout", "paint", "commit",
};
static const uint64_t frames[4][5] = {
	{ 0x55550001000ULL, 0x55550002000ULL, 0x7f0000001234ULL },
	{ 0x55550001100ULL, 0x55550002100ULL },
	{ 0x55550001000ULL, 0x55550002200ULL, 0x7f0000001234ULL, 0x7f0000005678ULL },
	{ 0x55550003000ULL },
};
static const unsigned nframes[4] = { 3, 2, 4, 1 };

void
fix_gen_event(struct trace_event *e, size_t i)
{
	static const uint16_t types[] = {
		TT_SWITCH, TT_WAKING, TT_SYS_ENTER, TT_SYS_EXIT, TT_SWITCH,
		TT_SOCK_SEND, TT_WAKING, TT_USER, TT_TIMER_START, TT_SYS_ENTER,
		TT_SYS_EXIT, TT_STACK, TT_IRQ_ENTRY, TT_IRQ_EXIT,
	};
	size_t k = i % (sizeof(types) / sizeof(types[0]));

	memset(e, 0, sizeof(*e));
	e->ts = BASE_TS + i * STEP + (i % 3);
	e->cpu = (uint16_t)((i * 7 + i / 13) % FIX_NCPUS);
	e->tid = (uint32_t)(100 + (i / 5) % 40);
	e->type = types[k];
	switch (e->type) {
	case TT_SWITCH:
		e->arg[0] = (i % 4) ? 1 : 0;
		e->arg[1] = 100 + (i / 3) % 40;
		e->arg[2] = 120;
		break;
	case TT_WAKING:
		e->arg[0] = 100 + (i / 7) % 40;
		e->arg[1] = i % FIX_NCPUS;
		e->arg[2] = 120;
		break;
	case TT_SYS_ENTER:
		e->arg[0] = (i % 2) ? 202 : 0;
		e->arg[1] = 0x7ffd00001000ULL + (i % 64) * 8;
		e->arg[2] = 128;
		e->arg[3] = 1;
		break;
	case TT_SYS_EXIT:
		e->arg[0] = (i % 2) ? 202 : 0;
		e->arg[1] = (i % 5 == 0) ? (uint64_t)-110 : 0;
		break;
	case TT_SOCK_SEND:
		e->arg[0] = 0xffff888012340000ULL + (i % 16) * 0x400;
		e->arg[1] = 1;
		e->arg[3] = 100;
		break;
	case TT_USER:
		e->arg[0] = TU_CALLOUT_BEGIN + i % 2;
		e->arg[1] = 0x5555deadb000ULL + (i % 8);
		e->blob = names[i % 7];
		e->blob_len = (uint32_t)strlen(names[i % 7]);
		break;
	case TT_TIMER_START:
		e->arg[0] = 0xffff8880aa000000ULL + (i % 32) * 64;
		e->arg[1] = 0xffffffff81100000ULL;
		e->arg[2] = e->ts + 4000000;
		e->arg[3] = 1;
		break;
	case TT_STACK:
		e->arg[0] = e->tid;
		e->arg[1] = TU_COND_WAIT;
		e->blob = frames[i % 4];
		e->blob_len = nframes[i % 4] * 8;
		break;
	case TT_IRQ_ENTRY:
		e->flags = TRACE_CTX_HARDIRQ;
		e->arg[0] = 24 + i % 3;
		e->blob = (i % 3) ? "virtio0-input" : "eth0";
		e->blob_len = (uint32_t)strlen(e->blob);
		break;
	case TT_IRQ_EXIT:
		e->flags = TRACE_CTX_HARDIRQ;
		e->arg[0] = 24 + i % 3;
		e->arg[1] = 1;
		break;
	}
}

size_t
fix_index_of(const struct trace_event *e)
{
	return (size_t)((e->ts - BASE_TS) / STEP);
}

void
fix_event_of_type(struct trace_event *e, unsigned t, unsigned rep,
    uint64_t ts)
{
	static uint64_t arr[3];
	const struct type_desc *d = &trace_types[t];

	memset(e, 0, sizeof(*e));
	e->ts = ts;
	e->type = (uint16_t)t;
	e->cpu = (t == TT_THREAD) ? TRACE_CPU_META : (uint16_t)(t % FIX_NCPUS);
	e->tid = 1000 + t + rep;
	e->flags = t % 4;
	for (unsigned i = 0; d->kinds[i]; i++) {
		switch (d->kinds[i]) {
		case FK_S:
			e->arg[i] = (uint64_t)(int64_t)-(123456789 + (int)i + (int)rep);
			break;
		case FK_D:
			e->arg[i] = 0xffff8880deadbe00ULL + rep * 0x1000 + i;
			break;
		case FK_T:
			e->arg[i] = 4000000 + i + rep;
			break;
		default:
			e->arg[i] = (rep ? UINT64_MAX : 0x123456789abcULL) - i;
			break;
		}
	}
	if (t == TT_STACK)
		e->arg[2] = 0;		/* the writer's, and 0 when read */
	if (d->blob == BK_STR) {
		e->blob = rep ? d->name : "";
		e->blob_len = (uint32_t)strlen(e->blob);
	} else if (d->blob == BK_ARR) {
		arr[0] = 0x7fffffffe000ULL;
		arr[1] = 0x555555554000ULL + rep;
		arr[2] = UINT64_MAX;
		e->blob = arr;
		e->blob_len = rep ? 24 : 8;	/* a stack has a frame at least */
	}
}
