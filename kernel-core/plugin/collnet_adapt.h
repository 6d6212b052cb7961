/* Adapters presenting a collnet plugin of ABI v6..v11 as ncclCollNet_v12_t,
 * the version the core uses (v12 itself passes through unchanged).
 *
 * - One plugin per old version at a time: the v12 functions carry no `self`,
 *   so each adapter keeps its plugin in a static; wrapping a second plugin of
 *   the same version while one is held returns ncclInvalidUsage (silently:
 *   the loader reports it as "adapter busy").
 * - init: v6..v10 have no context. The plugin's init runs once, at the first
 *   init; every init returns a fresh ctx and finalize frees it (the plugin is
 *   never finalized, as under NCCL). listen drops the ctx for them.
 * - getProperties: the net ABI's properties of the same version, lifted with
 *   the net adapters' defaults (net_props_up.h, net_adapt.h).
 * - Sizes: v6..v8 take an `int` iallreduce count: counts above MAX_NET_SIZE
 *   fail with ncclInternalError before reaching the plugin; so do regMr
 *   sizes of 2^31 bytes or more (v6, v7). v8's scattered buffers have 32-bit
 *   sizes: parts above MAX_COLLNET_SIZE, or more than COLLNET_ADAPT_MAX_PARTS
 *   parts, fail the same way. v9..v11's SGEs are v12's, byte for byte.
 * - Missing functions are NULL in the v12 table; callers check: iallgather
 *   and ireducescatter (v6, v7), makeVDevice (v6..v8, or when the plugin has
 *   none). makeVDevice of v9..v11 merges at most 4 devices; more is
 *   ncclInvalidArgument. */
#ifndef MKCCL_PLUGIN_COLLNET_ADAPT_H
#define MKCCL_PLUGIN_COLLNET_ADAPT_H

#include "collnet/nccl_collnet.h"
#include "plugin/kind.h"

extern const plugin_adapter_t collnet_adapt_v6;
extern const plugin_adapter_t collnet_adapt_v7;
extern const plugin_adapter_t collnet_adapt_v8;
extern const plugin_adapter_t collnet_adapt_v9;
extern const plugin_adapter_t collnet_adapt_v10;
extern const plugin_adapter_t collnet_adapt_v11;
extern const plugin_adapter_t collnet_adapt_v12;

#endif
