/* Tuner adapters: present a plugin of ABI v2..v5 as v6, the version the
 * core works with. Each old version's adapter holds one plugin at a time
 * (as NCCL does: one tuner per process); wrapping the same plugin again is
 * counted, another one is refused until it is unwrapped. v6 is the identity.
 * Registered in the tuner kind descriptor (plugin/kind.c). */
#ifndef MKCCL_TUNE_ADAPT_H
#define MKCCL_TUNE_ADAPT_H

#include "plugin/adapt_slot.h"
#include "plugin/kind.h"
#include "tuner/nccl_tuner.h"

extern const plugin_adapter_t tune_adapt_v2;
extern const plugin_adapter_t tune_adapt_v3;
extern const plugin_adapter_t tune_adapt_v4;
extern const plugin_adapter_t tune_adapt_v5;
extern const plugin_adapter_t tune_adapt_v6;

/* v2's support flags (tune_adapt_common.c): whether the cost table offers CollNet / NVLS entries (v2's support flags). */
int tune_adapt_has_collnet(float** table);
int tune_adapt_has_nvls(float** table);

#endif
