/* Adapters presenting a net plugin of ABI v6..v11 as ncclNet_v12_t, the
 * version the core uses (v12 itself passes through unchanged).
 *
 * - One plugin per old version at a time: the v12 functions carry no `self`,
 *   so each adapter keeps its plugin in a static. Wrapping a second plugin of
 *   the same version while one is held returns ncclInvalidUsage (silently:
 *   the loader reports it as the candidate's outcome).
 * - init: v6..v10 have no per-communicator context. The plugin's own init
 *   runs once per process, at the first init; every init returns a fresh ctx
 *   (holding the comm's config: v10 gets it at connect) and finalize frees it.
 * - getProperties: what an old version lacks gets NCCL's defaults: forceFlush
 *   and regIsGlobal 0, netDeviceType HOST, vProps {1, {dev}}, maxP2pBytes
 *   MAX_NET_SIZE and maxCollBytes MAX_COLLNET_SIZE (v6..v8),
 *   maxMultiRequestSize 1 (v6..v10), railId/planeId NCCL_NET_ID_UNDEF.
 * - Sizes: v6..v8 take `int`: isend/irecv sizes above MAX_NET_SIZE (their
 *   maxP2pBytes) fail with ncclInternalError; so do regMr sizes above INT_MAX
 *   (v6, v7). v6 allows NCCL_NET_MAX_REQUESTS_V6 outstanding requests per
 *   comm, later versions NCCL_NET_MAX_REQUESTS (net_adapt_max_requests).
 * - irecv: v6..v8 do not know NCCL_NET_OPTIONAL_RECV_COMPLETION; the hint is
 *   cleared before their irecv. Profiler handles are dropped below v10.
 * - Missing functions are NULL in the v12 table; callers check: getDeviceMr
 *   and irecvConsumed (v6), makeVDevice (v6..v8, or when the plugin has none),
 *   setNetAttr (v6..v10). regMrDmaBuf is the plugin's own, possibly NULL.
 * - makeVDevice: v9..v11 merge at most 4 devices; more is ncclInvalidArgument. */
#ifndef MKCCL_PLUGIN_NET_ADAPT_H
#define MKCCL_PLUGIN_NET_ADAPT_H

#include "net/nccl_net.h"
#include "plugin/kind.h"

extern const plugin_adapter_t net_adapt_v6;
extern const plugin_adapter_t net_adapt_v7;
extern const plugin_adapter_t net_adapt_v8;
extern const plugin_adapter_t net_adapt_v9;
extern const plugin_adapter_t net_adapt_v10;
extern const plugin_adapter_t net_adapt_v11;
extern const plugin_adapter_t net_adapt_v12;

/* Outstanding requests per comm a plugin of `version` accepts. */
static inline int net_adapt_max_requests(int version) {
  return version <= 6 ? NCCL_NET_MAX_REQUESTS_V6 : NCCL_NET_MAX_REQUESTS;
}

#endif
