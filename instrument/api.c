/*
 * api.c: the public functions of argus.h. Each writes one record (no
 * state of its own); see argus.h for the contracts and trace/user-protocol.h for the
 * record fields.
 */
#include <stddef.h>
#include <stdint.h>

#include "argus.h"
#include "instrument-local.h"

INS_EXPORT int
argus_enabled(void)
{
	return ins.on;
}

INS_EXPORT void
argus_task_submit(uint64_t task, uint64_t queue)
{
	ins_emit(TU_TASK_SUBMIT, task, queue, 0, NULL);
}

INS_EXPORT void
argus_task_begin(uint64_t task, uint64_t queue)
{
	ins_emit(TU_TASK_BEGIN, task, queue, 0, NULL);
}

INS_EXPORT void
argus_task_end(uint64_t task, uint64_t queue)
{
	ins_emit(TU_TASK_END, task, queue, 0, NULL);
}

INS_EXPORT void
argus_runloop_submit(uint64_t source)
{
	ins_emit(TU_RUNLOOP_SUBMIT, source, 0, 0, NULL);
}

INS_EXPORT void
argus_callout_begin(uint64_t source)
{
	ins_emit(TU_CALLOUT_BEGIN, source, 0, 0, NULL);
}

INS_EXPORT void
argus_callout_end(uint64_t source)
{
	ins_emit(TU_CALLOUT_END, source, 0, 0, NULL);
}

INS_EXPORT void
argus_loop_wait_begin(void)
{
	if (ins_tid() != ins.main_tid)
		return;
	if (ins.on && !ins.watchdog_started)
		ins_watchdog_start();
	ins_emit(TU_LOOP_WAIT, 0, (uint64_t)-1, 0, NULL);
	ins_loop_enter();
}

INS_EXPORT void
argus_loop_wait_end(void)
{
	if (ins_tid() != ins.main_tid)
		return;
	ins_loop_leave();
	ins_emit(TU_LOOP_WAKE, 0, 0, 0, NULL);
}

INS_EXPORT void
argus_flag_write(const volatile void *addr, uint64_t value)
{
	ins_emit(TU_FLAG_WRITE, (uintptr_t)addr, value,
	    (uintptr_t)__builtin_return_address(0), NULL);
}

INS_EXPORT void
argus_flag_read(const volatile void *addr, uint64_t value)
{
	ins_emit(TU_FLAG_READ, (uintptr_t)addr, value,
	    (uintptr_t)__builtin_return_address(0), NULL);
}

INS_EXPORT void
argus_mark(const char *name, uint64_t value)
{
	ins_emit(TU_MARK, 0, value, 0, name);
}

INS_EXPORT void
argus_input(uint64_t kind, const char *what)
{
	ins_emit(TU_INPUT, kind, 0, 0, what);
}
