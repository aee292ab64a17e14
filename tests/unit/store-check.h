/*
 * store-check.h: helpers of the store tests (criterion assertions): a
 * scratch directory, a writer and a reader on it, and event comparison.
 */
#ifndef STORE_CHECK_H
#define STORE_CHECK_H

#include "store-fixture.h"

/* A new directory under /tmp (freed by the caller), and its removal. */
char *fix_tmpdir(void);
void fix_rm_rf(const char *dir);
/* A writer on dir of FIX_NCPUS CPUs, 16 KiB chunks, writing format
   (0: the current one); a reader of dir. Both assert success. */
struct trace_writer *fix_open_writer(const char *dir, uint64_t bound,
    uint64_t seg, unsigned format);
struct trace_reader *fix_open_reader(const char *dir);
/* A trace in dir of the generator's events 0 to n - 1 (fix_gen_event()),
   its segments of 64 MiB at most, written and closed. */
void fix_write_gen(const char *dir, size_t n);
/* Assert that two events are the same (time, type, thread, CPU, context,
   fields and blob). */
void fix_assert_same(const struct trace_event *a, const struct trace_event *b);
/* trace_reader_next() but for the stack definitions (asserted well
   formed) the writer adds; the definitions a reader of dir returns. */
int fix_next(struct trace_reader *r, struct trace_event *ev);
size_t fix_count_defs(const char *dir);
/* Read r to its end (the stack definitions only checked well formed), asserting that each event is the generator's;
   returns how many, and raises per_cpu_max[cpu] (when not NULL) to one
   past the highest index read on each CPU. */
size_t fix_read_checked(struct trace_reader *r, size_t *per_cpu_max);

#endif
