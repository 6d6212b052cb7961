/* mkccl extension of the profiler ABI: event calls that take their
 * timestamp from the caller. Optional, mkccl only (NCCL never looks for it).
 *
 * A profiler that exports ncclProfiler_v6 may also export
 * `mkcclProfilerTimed_v1` (a mkcclProfilerTimed_v1_t). The core then uses
 * these entries where one clock read stands for several calls made at one
 * moment: the proxy reports every ProxyOp/ProxyStep start, state and stop it
 * finds after one progress call with one timestamp (they all happened
 * during that call; the few ns between the calls were the profiler's own
 * time), and records a send step's SendGPUWait with its start's time.
 * Everything else about a call is the ncclProfiler_v6 entry's: same
 * handles, descriptors, states, arguments and results.
 *
 * ns: CLOCK_MONOTONIC in nanoseconds (tv_sec * 1e9 + tv_nsec), never 0. */
#ifndef MKCCL_ABI_PROFILER_MKCCL_PROFILER_TIMED_V1_H
#define MKCCL_ABI_PROFILER_MKCCL_PROFILER_TIMED_V1_H

#include <stdint.h>

#include "profiler/nccl_profiler.h"

#define MKCCL_PROFILER_TIMED_V1_SYMBOL "mkcclProfilerTimed_v1"

typedef struct {
  ncclResult_t (*startEventAt)(void* context, void** eHandle, ncclProfilerEventDescr_v6_t* eDescr, uint64_t ns);
  ncclResult_t (*stopEventAt)(void* eHandle, uint64_t ns);
  ncclResult_t (*recordEventStateAt)(void* eHandle, ncclProfilerEventState_v6_t eState,
                                     ncclProfilerEventStateArgs_v6_t* eStateArgs, uint64_t ns);
} mkcclProfilerTimed_v1_t;

#endif
