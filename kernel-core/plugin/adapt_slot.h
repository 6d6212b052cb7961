/* The one-plugin slot of an old-version adapter: an adapter forwarding to
 * a table it keeps in a static holds one plugin at a time (as NCCL does);
 * wrapping the same table again is counted, another is refused
 * (ncclInvalidUsage, which the loader reports as "adapter busy") until the
 * last unwrap. Used by the tuner and profiler adapters. */
#ifndef MKCCL_PLUGIN_ADAPT_SLOT_H
#define MKCCL_PLUGIN_ADAPT_SLOT_H

#include "nccl.h"

typedef struct {
  const void* plugin; /* the wrapped table, NULL when free */
  int refs;
} adapt_slot_t;

ncclResult_t adapt_slot_take(adapt_slot_t* slot, const void* plugin);
void adapt_slot_drop(adapt_slot_t* slot);

#endif
