/* Profiler adapters: present a plugin of ABI v1..v5 as v6, the version the
 * core speaks (NCCL's own conversions): descriptors are rewritten for the
 * old layout, events an old version does not know (API events before v5,
 * KernelCh and NetPlugin before v3, copy-engine events before v6) get a
 * NULL handle without reaching the plugin, states it does not know are
 * dropped, and before v5 a Coll/P2p's parent is its Group. One plugin per
 * old version at a time (adapt_slot.h); v6 is the identity. Registered in
 * the profiler kind descriptor (plugin/kind.c). */
#ifndef MKCCL_PROFILE_ADAPT_H
#define MKCCL_PROFILE_ADAPT_H

#include "plugin/adapt_slot.h"
#include "plugin/kind.h"
#include "profiler/nccl_profiler.h"

extern const plugin_adapter_t profile_adapt_v1;
extern const plugin_adapter_t profile_adapt_v2;
extern const plugin_adapter_t profile_adapt_v3;
extern const plugin_adapter_t profile_adapt_v4;
extern const plugin_adapter_t profile_adapt_v5;
extern const plugin_adapter_t profile_adapt_v6;

/* v1..v3 share their state arguments' layout: 1 and *out filled when the
 * state reaches such a plugin (ProxyStep and ProxyCtrl states), 0 to drop it. */
int profile_adapt_old_state(ncclProfilerEventState_t state, const ncclProfilerEventStateArgs_v6_t* in,
                            ncclProfilerEventStateArgs_v3_t* out);

/* The core's event types an old version knows. */
#define PROFILE_TYPES_V1 \
  (ncclProfileGroup | ncclProfileColl | ncclProfileP2p | ncclProfileProxyOp | ncclProfileProxyStep | ncclProfileProxyCtrl)
#define PROFILE_TYPES_V3 (PROFILE_TYPES_V1 | ncclProfileKernelCh | ncclProfileNetPlugin)

#endif
