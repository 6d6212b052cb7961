/* Helpers the per-version net adapters share: the held plugin, init once,
 * property defaults, size and vNIC conversions (see net_adapt.h). */
#include "plugin/net_adapt_common.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"

/* A refusal is the candidate's outcome, reported by the loader: no WARN here. */
ncclResult_t net_adapt_slot_take(net_adapt_slot_t* slot) {
  pthread_mutex_lock(&slot->lock);
  int busy = slot->held;
  if (!busy) {
    slot->held = 1;
    slot->inits = 0;
  }
  pthread_mutex_unlock(&slot->lock);
  return busy ? ncclInvalidUsage : ncclSuccess;
}

void net_adapt_slot_release(net_adapt_slot_t* slot) {
  pthread_mutex_lock(&slot->lock);
  slot->held = 0;
  slot->inits = 0;
  pthread_mutex_unlock(&slot->lock);
}

ncclResult_t net_adapt_once_init(net_adapt_slot_t* slot, net_adapt_init_fn init, const ncclNetCommConfig_v12_t* config,
                                 ncclDebugLogger_t log, ncclProfilerCallback_t prof, void** ctx) {
  if (!ctx) return MK_FAIL(ncclInvalidArgument, "net init: ctx is NULL");
  net_adapt_ctx_t* c = calloc(1, sizeof(*c));
  if (!c) return MK_FAIL(ncclSystemError, "net init: out of memory");
  c->config.trafficClass = config ? config->trafficClass : NCCL_NET_TRAFFIC_CLASS_UNDEF;
  c->configV10.trafficClass = c->config.trafficClass;
  ncclResult_t res = ncclSuccess;
  pthread_mutex_lock(&slot->lock);
  if (slot->inits == 0) res = init(log, prof); /* the plugin's error; it logged its own reason */
  if (res == ncclSuccess) slot->inits++;
  pthread_mutex_unlock(&slot->lock);
  if (res != ncclSuccess) {
    free(c);
    return res;
  }
  *ctx = c;
  return ncclSuccess;
}

/* Old plugins cannot be finalized: the last finalize only drops the count. */
ncclResult_t net_adapt_once_finalize(net_adapt_slot_t* slot, void* ctx) {
  if (!ctx) return MK_FAIL(ncclInvalidArgument, "net finalize: ctx is NULL");
  pthread_mutex_lock(&slot->lock);
  if (slot->inits > 0) slot->inits--;
  pthread_mutex_unlock(&slot->lock);
  free(ctx);
  return ncclSuccess;
}

void net_adapt_props_defaults(ncclNetProperties_v12_t* props, int dev) {
  memset(props, 0, sizeof(*props));
  props->netDeviceType = NCCL_NET_DEVICE_HOST;
  props->netDeviceVersion = NCCL_NET_DEVICE_INVALID_VERSION;
  props->vProps.ndevs = 1;
  props->vProps.devs[0] = dev;
  props->maxP2pBytes = MAX_NET_SIZE;
  props->maxCollBytes = MAX_COLLNET_SIZE;
  props->maxMultiRequestSize = 1;
  props->railId = NCCL_NET_ID_UNDEF;
  props->planeId = NCCL_NET_ID_UNDEF;
}

ncclResult_t net_adapt_size_to_int(const char* plugin, int version, const char* call, size_t size, long long limit,
                                   int* out) {
  if (size > (unsigned long long)limit)
    return MK_FAIL(ncclInternalError, "net plugin %s (ABI v%d): %s of %zu bytes is over its limit of %lld", plugin,
                   version, call, size, limit);
  *out = (int)size;
  return ncclSuccess;
}

ncclResult_t net_adapt_sizes_to_int(const char* plugin, int version, int n, const size_t* sizes, int* out) {
  if (n < 0 || n > NET_ADAPT_MAX_RECVS)
    return MK_FAIL(ncclInternalError, "net plugin %s (ABI v%d): irecv of %d buffers (at most %d)", plugin, version, n,
                   NET_ADAPT_MAX_RECVS);
  for (int i = 0; i < n; i++) MK_CHECK(net_adapt_size_to_int(plugin, version, "irecv", sizes[i], MAX_NET_SIZE, &out[i]));
  return ncclSuccess;
}

ncclResult_t net_adapt_vprops_down(const char* plugin, int version, const ncclNetVDeviceProps_v12_t* in, int max,
                                   int* ndevs, int* devs) {
  if (!in || in->ndevs < 0 || in->ndevs > max)
    return MK_FAIL(ncclInvalidArgument, "net plugin %s (ABI v%d): a virtual NIC merges at most %d devices, not %d",
                   plugin, version, max, in ? in->ndevs : -1);
  *ndevs = in->ndevs;
  for (int i = 0; i < in->ndevs; i++) devs[i] = in->devs[i];
  return ncclSuccess;
}

void net_adapt_vprops_up(int ndevs, const int* devs, int max, ncclNetVDeviceProps_v12_t* out) {
  if (ndevs < 0) ndevs = 0;
  if (ndevs > max) ndevs = max; /* a plugin bug: keep what the struct can hold */
  out->ndevs = ndevs;
  for (int i = 0; i < ndevs; i++) out->devs[i] = devs[i];
}
