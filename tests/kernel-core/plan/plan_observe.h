/* What the planner decided, as the recording test profiler saw it (shared
 * by the plan tests; plan_observe.c). Each rank reads its own process's
 * report. */
#ifndef PLAN_OBSERVE_H
#define PLAN_OBSERVE_H

#include "profiler/nccl_profiler.h"
#include "profiler_test_record.h"

/* The report of the test profiler library at `path`, already loaded by a
 * communicator; the library stays loaded until plan_observe_release. */
test_report_t* plan_observe_report(const char* path);
void plan_observe_release(void);
/* The profiler changes its activation mask (the host reads it at each event). */
void plan_observe_set_mask(int mask);

/* Holds (on = 1) or lets go of the profiler's lock, around reads of a
 * report the proxy thread may still be adding to. */
void plan_observe_lock(int on);

/* Records of `type` whose parent is record `parent` (-1: any parent). */
int plan_observe_children(const test_report_t* r, uint64_t type, int parent);
/* Index of the last record of `type` from `from` on, -1 if none. */
int plan_observe_last(const test_report_t* r, uint64_t type, int from);

#endif
