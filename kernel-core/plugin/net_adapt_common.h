/* What the per-version net adapters share (net_adapt_v*.c, and the
 * property and vNIC helpers net_props_up.c and the collnet adapters). */
#ifndef MKCCL_PLUGIN_NET_ADAPT_COMMON_H
#define MKCCL_PLUGIN_NET_ADAPT_COMMON_H

#include <pthread.h>

#include "plugin/net_adapt.h"

/* Grouped receives one irecv may carry through a size-converting adapter. */
#define NET_ADAPT_MAX_RECVS 64

/* The one plugin an adapter holds, and how many inits are live. */
typedef struct {
  pthread_mutex_t lock;
  int held;  /* a plugin is wrapped */
  int inits; /* live contexts; the plugin's init ran when this left 0 */
} net_adapt_slot_t;
#define NET_ADAPT_SLOT_INIT {PTHREAD_MUTEX_INITIALIZER, 0, 0}

/* A context handed out for plugins without their own. */
typedef struct {
  ncclNetCommConfig_v12_t config;
  ncclNetCommConfig_v10_t configV10; /* what a v10 connect is given */
} net_adapt_ctx_t;

typedef ncclResult_t (*net_adapt_init_fn)(ncclDebugLogger_t log, ncclProfilerCallback_t prof);

ncclResult_t net_adapt_slot_take(net_adapt_slot_t* slot);
void net_adapt_slot_release(net_adapt_slot_t* slot);
/* init for plugins without a context: the plugin's init once, a ctx each time. */
ncclResult_t net_adapt_once_init(net_adapt_slot_t* slot, net_adapt_init_fn init, const ncclNetCommConfig_v12_t* config,
                                 ncclDebugLogger_t log, ncclProfilerCallback_t prof, void** ctx);
ncclResult_t net_adapt_once_finalize(net_adapt_slot_t* slot, void* ctx);

/* Defaults for every field an older version may lack. */
void net_adapt_props_defaults(ncclNetProperties_v12_t* props, int dev);
/* size_t sizes to int for v6..v8 (limit MAX_NET_SIZE). */
ncclResult_t net_adapt_sizes_to_int(const char* plugin, int version, int n, const size_t* sizes, int* out);
ncclResult_t net_adapt_size_to_int(const char* plugin, int version, const char* call, size_t size, long long limit,
                                   int* out);
/* v12 vProps to an older version's (at most `max` devices). */
ncclResult_t net_adapt_vprops_down(const char* plugin, int version, const ncclNetVDeviceProps_v12_t* in, int max,
                                   int* ndevs, int* devs);
/* An older version's vProps to v12's. */
void net_adapt_vprops_up(int ndevs, const int* devs, int max, ncclNetVDeviceProps_v12_t* out);
/* v6..v8 do not know the optional-completion hint. */
static inline void net_adapt_recv_hint_clear(void** request) {
  if (request && *request == (void*)NCCL_NET_OPTIONAL_RECV_COMPLETION) *request = NULL;
}

#endif
