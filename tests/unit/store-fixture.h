/*
 * store-fixture.h: deterministic event streams for the store tests.
 *
 * fix_gen_event(i) is the i-th event of an endless stream over FIX_NCPUS
 * CPUs whose timestamps grow with i (so time order is index order and
 * each CPU's events are in order); fix_index_of() recovers i from an
 * event read back, so a test can regenerate and compare it.
 */
#ifndef STORE_FIXTURE_H
#define STORE_FIXTURE_H

#include <stddef.h>

#include "trace/trace.h"

#define FIX_NCPUS 4

void fix_gen_event(struct trace_event *e, size_t i);
size_t fix_index_of(const struct trace_event *e);
/* An event of type t with extreme values in every field, at time ts. */
void fix_event_of_type(struct trace_event *e, unsigned t, unsigned rep,
    uint64_t ts);


#endif
