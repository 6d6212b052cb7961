/* Step slot pools of point-to-point connections (OFFSET mode): one per
 * (channel, direction) of a communicator, allocated when its first
 * connection is set up, registered once with each net comm that uses it,
 * freed with its last connection.
 *
 * Invariant (no deadlock, no shared slot):
 * - a slot is held by exactly one step, from its grant (send: before the
 *   executor writes it; recv: before the irecv is posted) until that step is
 *   done (send: its isend completed; recv: the executor consumed it, head
 *   past it); freeMask has its bit clear all that time;
 * - every sub takes a ticket when its op starts, and only the sub whose
 *   ticket is being served takes slots; it is served until all its steps
 *   have one. Ops start in post order, which on one channel is the order
 *   the executor runs them; so slots are granted in the order the
 *   executor will free them (consume, or have sent), and every held slot
 *   belongs to a step the executor reaches before any step still waiting
 *   for one. A step waiting for a slot thus only waits for earlier steps,
 *   and those never wait for later ones. */
#include <stdlib.h>
#include <string.h>

#include "transport_net.h"

#define NET_LOG(ctx, level, ...) (ctx)->services->log(level, NCCL_NET, __FILE__, __LINE__, __VA_ARGS__)
#define NET_POOL_ALL ((uint32_t)((1ull << MKCCL_SHARED_STEPS) - 1))

static size_t net_pool_bytes(const transport_net_pool_t* pool) {
  return (size_t)pool->stepSize * MKCCL_SHARED_STEPS;
}

ncclResult_t transport_net_pool_attach(transport_net_ctx_t* ctx, int channelId, int isSend, int stepSize,
                                       int onDevice, transport_net_pool_t** out) {
  int idx = channelId * 2 + (isSend ? 1 : 0);
  if (channelId < 0 || idx >= NET_POOL_MAX) {
    NET_LOG(ctx, NCCL_LOG_WARN, "transport-net: channel %d has no shared buffer pool (at most %d channels)",
            channelId, NET_POOL_MAX / 2);
    return ncclInternalError;
  }
  transport_net_pool_t* pool = ctx->pools[idx];
  if (pool) {
    if (pool->stepSize != stepSize) {
      NET_LOG(ctx, NCCL_LOG_WARN, "transport-net: channel %d pool has steps of %d bytes, a connection wants %d",
              channelId, pool->stepSize, stepSize);
      return ncclInternalError;
    }
    pool->refs++;
    *out = pool;
    return ncclSuccess;
  }
  pool = calloc(1, sizeof(*pool));
  if (!pool) return ncclSystemError;
  pool->used = 1;
  pool->channelId = channelId;
  pool->isSend = isSend;
  pool->stepSize = stepSize;
  pool->freeMask = NET_POOL_ALL;
  pool->onDevice = onDevice;
  ncclResult_t res = transport_net_buff_alloc(ctx, net_pool_bytes(pool), onDevice, &pool->buff);
  if (res != ncclSuccess) {
    NET_LOG(ctx, NCCL_LOG_WARN, "transport-net: allocating a %zu-byte pool for channel %d failed (%d)",
            net_pool_bytes(pool), channelId, res);
    free(pool);
    return res;
  }
  pool->refs = 1;
  ctx->pools[idx] = pool;
  __atomic_add_fetch(&ctx->stagingBytes, net_pool_bytes(pool), __ATOMIC_RELAXED);
  __atomic_add_fetch(&ctx->nPools, 1, __ATOMIC_RELAXED);
  *out = pool;
  return ncclSuccess;
}

void transport_net_pool_detach(transport_net_ctx_t* ctx, transport_net_pool_t* pool) {
  if (--pool->refs > 0) return;
  ctx->pools[pool->channelId * 2 + (pool->isSend ? 1 : 0)] = NULL;
  __atomic_sub_fetch(&ctx->stagingBytes, net_pool_bytes(pool), __ATOMIC_RELAXED);
  __atomic_sub_fetch(&ctx->nPools, 1, __ATOMIC_RELAXED);
  transport_net_buff_free(ctx, pool->buff, pool->onDevice);
  free(pool);
}

ncclResult_t transport_net_pool_register(transport_net_ctx_t* ctx, transport_net_pool_t* pool, void* netComm,
                                         void** mhandle) {
  for (int i = 0; i < pool->nregs; i++)
    if (pool->regs[i].netComm == netComm) {
      pool->regs[i].refs++;
      *mhandle = pool->regs[i].mhandle;
      return ncclSuccess;
    }
  if (pool->nregs == NET_POOL_MAX_REGS) {
    NET_LOG(ctx, NCCL_LOG_WARN, "transport-net: channel %d pool is registered with %d net comms already",
            pool->channelId, NET_POOL_MAX_REGS);
    return ncclInternalError;
  }
  /* Movable only before any comm registered it: until then no connection
   * handed the pool's address to its executor. */
  void* mh = NULL;
  ncclResult_t res = transport_net_buff_register(ctx, netComm, &pool->buff, net_pool_bytes(pool), &pool->onDevice,
                                                 pool->nregs == 0, &mh);
  if (res != ncclSuccess) {
    NET_LOG(ctx, NCCL_LOG_WARN, "transport-net: registering channel %d's %zu-byte pool with the net plugin failed (%d)",
            pool->channelId, net_pool_bytes(pool), res);
    return res;
  }
  pool->regs[pool->nregs++] = (transport_net_pool_reg_t){netComm, mh, 1};
  *mhandle = mh;
  return ncclSuccess;
}

/* Before netComm closes: the last connection of it deregisters. */
void transport_net_pool_deregister(transport_net_ctx_t* ctx, transport_net_pool_t* pool, void* netComm) {
  for (int i = 0; i < pool->nregs; i++) {
    transport_net_pool_reg_t* r = &pool->regs[i];
    if (r->netComm != netComm) continue;
    if (--r->refs > 0) return;
    ctx->net->deregMr(netComm, r->mhandle);
    *r = pool->regs[--pool->nregs];
    return;
  }
}

int transport_net_pool_take(transport_net_pool_t* pool) {
  if (!pool->freeMask) return -1;
  int slot = __builtin_ctz(pool->freeMask);
  pool->freeMask &= ~(1u << slot);
  return slot;
}

void transport_net_pool_put(transport_net_pool_t* pool, int slot) { pool->freeMask |= 1u << slot; }

int transport_net_pool_free_slots(const transport_net_pool_t* pool) { return __builtin_popcount(pool->freeMask); }
