/* Helpers the per-version collnet adapters share: the held plugin, init
 * once, int and SGE conversions (collnet_adapt.h). */
#include "plugin/collnet_adapt_common.h"

#include <stdlib.h>

#include "base/err.h"

/* A refusal is the candidate's outcome, reported by the loader: no WARN here. */
ncclResult_t collnet_adapt_slot_take(collnet_adapt_slot_t* slot) {
  pthread_mutex_lock(&slot->lock);
  int busy = slot->held;
  if (!busy) {
    slot->held = 1;
    slot->inits = 0;
  }
  pthread_mutex_unlock(&slot->lock);
  return busy ? ncclInvalidUsage : ncclSuccess;
}

void collnet_adapt_slot_release(collnet_adapt_slot_t* slot) {
  pthread_mutex_lock(&slot->lock);
  slot->held = 0;
  slot->inits = 0;
  pthread_mutex_unlock(&slot->lock);
}

ncclResult_t collnet_adapt_once_init(collnet_adapt_slot_t* slot, collnet_adapt_init_fn init, ncclDebugLogger_t log,
                                     void** ctx) {
  if (!ctx) return MK_FAIL(ncclInvalidArgument, "collnet init: ctx is NULL");
  /* The ctx only tells one init from another: the plugin never sees it. */
  void* c = malloc(1);
  if (!c) return MK_FAIL(ncclSystemError, "collnet init: out of memory");
  ncclResult_t res = ncclSuccess;
  pthread_mutex_lock(&slot->lock);
  if (slot->inits == 0) res = init(log); /* the plugin's error; it logged its own reason */
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
ncclResult_t collnet_adapt_once_finalize(collnet_adapt_slot_t* slot, void* ctx) {
  if (!ctx) return MK_FAIL(ncclInvalidArgument, "collnet finalize: ctx is NULL");
  pthread_mutex_lock(&slot->lock);
  if (slot->inits > 0) slot->inits--;
  pthread_mutex_unlock(&slot->lock);
  free(ctx);
  return ncclSuccess;
}

ncclResult_t collnet_adapt_to_int(const char* plugin, int version, const char* what, size_t value, long long limit,
                                  int* out) {
  if (value > (unsigned long long)limit)
    return MK_FAIL(ncclInternalError, "collnet plugin %s (ABI v%d): %s of %zu is over its limit of %lld", plugin,
                   version, what, value, limit);
  *out = (int)value;
  return ncclSuccess;
}

ncclResult_t collnet_adapt_sge_to_v8(const char* plugin, const char* call, int n, const ncclNetSGE_v12_t* in,
                                     ncclNetSGE_v8_t* out) {
  if (n < 0 || n > COLLNET_ADAPT_MAX_PARTS || (n > 0 && !in))
    return MK_FAIL(ncclInternalError, "collnet plugin %s (ABI v8): %s of %d parts (at most %d)", plugin, call, n,
                   COLLNET_ADAPT_MAX_PARTS);
  for (int i = 0; i < n; i++) {
    if (in[i].size > (size_t)MAX_COLLNET_SIZE)
      return MK_FAIL(ncclInternalError, "collnet plugin %s (ABI v8): %s part of %zu bytes is over its limit of %lld",
                     plugin, call, in[i].size, MAX_COLLNET_SIZE);
    out[i].mhandle = in[i].mhandle;
    out[i].address = in[i].address;
    out[i].size = (uint32_t)in[i].size;
  }
  return ncclSuccess;
}
