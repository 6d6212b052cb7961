/* What the per-version collnet adapters share (collnet_adapt_v*.c only). */
#ifndef MKCCL_PLUGIN_COLLNET_ADAPT_COMMON_H
#define MKCCL_PLUGIN_COLLNET_ADAPT_COMMON_H

#include <pthread.h>

#include "plugin/collnet_adapt.h"

/* Scattered parts one v8 iallgather/ireducescatter may carry. */
#define COLLNET_ADAPT_MAX_PARTS 16

/* The one plugin an adapter holds, and how many inits are live. */
typedef struct {
  pthread_mutex_t lock;
  int held;  /* a plugin is wrapped */
  int inits; /* live contexts; the plugin's init ran when this left 0 */
} collnet_adapt_slot_t;
#define COLLNET_ADAPT_SLOT_INIT {PTHREAD_MUTEX_INITIALIZER, 0, 0}

typedef ncclResult_t (*collnet_adapt_init_fn)(ncclDebugLogger_t log);

ncclResult_t collnet_adapt_slot_take(collnet_adapt_slot_t* slot);
void collnet_adapt_slot_release(collnet_adapt_slot_t* slot);
/* init for plugins without a context: the plugin's init once, a ctx each time. */
ncclResult_t collnet_adapt_once_init(collnet_adapt_slot_t* slot, collnet_adapt_init_fn init, ncclDebugLogger_t log,
                                     void** ctx);
ncclResult_t collnet_adapt_once_finalize(collnet_adapt_slot_t* slot, void* ctx);

/* A size_t size or count down to an old version's int (at most `limit`). */
ncclResult_t collnet_adapt_to_int(const char* plugin, int version, const char* what, size_t value, long long limit,
                                  int* out);
/* v12 scattered parts to v8's 32-bit ones (out holds COLLNET_ADAPT_MAX_PARTS). */
ncclResult_t collnet_adapt_sge_to_v8(const char* plugin, const char* call, int n, const ncclNetSGE_v12_t* in,
                                     ncclNetSGE_v8_t* out);

#endif
