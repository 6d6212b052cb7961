/* User buffers in place (PTR mode): a send step the executor posted as an
 * address goes out from there (on GPU ranks a GPU buffer, where the step
 * buffers are GPU memory the plugin takes: GPUDirect RDMA), and a receive whose op carries its part of
 * a registered buffer lands there, under the net plugin's registration of
 * the user's registration (ncclCommRegister, or a window) that holds it.
 * Each (registration, net comm) is registered once, when a step first
 * needs it, and kept until the user deregisters the range or the comm
 * closes. A buffer that cannot be registered (no registration holds it,
 * the plugin's regMr refused it) goes through staging: a send step is
 * copied into its slot and sent from there, a receive lands in its slot
 * and the executor copies it out; said once per process at INFO.
 *
 * The proxy thread and executors helping a proxy lane look steps up, the
 * user's thread deregisters: one lock over the table. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport_net.h"
#include "transport_net_params.h"

#define NET_LOG(ctx, level, ...) (ctx)->services->log(level, NCCL_NET, __FILE__, __LINE__, __VA_ARGS__)

/* Bytes of PTR steps this process sent in place and copied, over every
 * communicator, and the registrations with net comms it holds; for tests,
 * which find them with dlsym. */
static uint64_t net_ptr_in_place, net_ptr_copied, net_ptr_recv;
static int net_ptr_regs, net_ptr_said;

/* Bytes sent in place; *copied: PTR send bytes copied first; *received:
 * bytes received in place; *regs: registrations held. */
__attribute__((visibility("default"))) uint64_t mkcclNetPtrBytes(uint64_t* copied, uint64_t* received, int* regs) {
  if (copied) *copied = __atomic_load_n(&net_ptr_copied, __ATOMIC_RELAXED);
  if (received) *received = __atomic_load_n(&net_ptr_recv, __ATOMIC_RELAXED);
  if (regs) *regs = __atomic_load_n(&net_ptr_regs, __ATOMIC_RELAXED);
  return __atomic_load_n(&net_ptr_in_place, __ATOMIC_RELAXED);
}

void transport_net_reg_count_recv(transport_net_ctx_t* ctx, uint64_t bytes) {
  __atomic_add_fetch(&ctx->ptrRecvBytes, bytes, __ATOMIC_RELAXED);
  __atomic_add_fetch(&net_ptr_recv, bytes, __ATOMIC_RELAXED);
}

void transport_net_reg_count(transport_net_ctx_t* ctx, int inPlace, uint64_t bytes) {
  __atomic_add_fetch(inPlace ? &ctx->ptrBytes : &ctx->ptrCopiedBytes, bytes, __ATOMIC_RELAXED);
  __atomic_add_fetch(inPlace ? &net_ptr_in_place : &net_ptr_copied, bytes, __ATOMIC_RELAXED);
}

void transport_net_reg_init(transport_net_ctx_t* ctx) {
  pthread_mutex_init(&ctx->regLock, NULL);
  ctx->ptrSend = transport_net_param_MKCCL_NET_PTR(ctx->services) != 0;
  ctx->ptrRecv = ctx->ptrSend && !ctx->offload;
  ctx->regFault = transport_net_param_MKCCL_NET_REG_FAULT(ctx->services) != 0;
}

void transport_net_reg_fini(transport_net_ctx_t* ctx) {
  uint64_t inPlace = __atomic_load_n(&ctx->ptrBytes, __ATOMIC_RELAXED);
  uint64_t copied = __atomic_load_n(&ctx->ptrCopiedBytes, __ATOMIC_RELAXED);
  uint64_t received = __atomic_load_n(&ctx->ptrRecvBytes, __ATOMIC_RELAXED);
  if (inPlace || copied || received)
    NET_LOG(ctx, NCCL_LOG_INFO,
            "rank %d: transport-net sent %llu bytes of registered buffers in place (%llu copied through staging), "
            "received %llu in place",
            ctx->services->rank, (unsigned long long)inPlace, (unsigned long long)copied, (unsigned long long)received);
  /* Every comm closed before finalize, and dropped its entries then. */
  free(ctx->regs);
  pthread_mutex_destroy(&ctx->regLock);
}

int transport_net_conn_user_ok(const transport_net_conn_t* c) {
  if (c->ctx->services->cudaDev < 0) return 1;
  return c->pool ? c->pool->onDevice : c->onDevice;
}

/* The registration service, where the core lends it. */
static int net_reg_find(transport_net_ctx_t* ctx, const void* ptr, size_t bytes, void** base, size_t* size) {
  const mkcclTransportServices_v1* sv = ctx->services;
  if (!MKCCL_SERVICES_HAS(sv, memRegFind) || !sv->memRegFind)
    return 0;
  return sv->memRegFind(sv->ctx, ptr, bytes, base, size) == ncclSuccess;
}

static void net_reg_say_once(transport_net_ctx_t* ctx, const transport_net_conn_t* c, const char* why) {
  if (__atomic_exchange_n(&net_ptr_said, 1, __ATOMIC_RELAXED)) return;
  NET_LOG(ctx, NCCL_LOG_INFO, "transport-net: rank %d: a registered buffer %s rank %d goes through staging: %s",
          ctx->services->rank, c->isSend ? "sent to" : "received from", c->peer, why);
}

/* The entry for (netComm, the registration holding [ptr, ptr + bytes)),
 * made on first use; NULL when no registration holds it. Lock held. */
static transport_net_ureg_t* net_reg_entry(transport_net_ctx_t* ctx, transport_net_conn_t* c, const char* ptr,
                                           size_t bytes) {
  for (int i = 0; i < ctx->nRegs; i++) {
    transport_net_ureg_t* r = &ctx->regs[i];
    if (r->netComm == c->netComm && ptr >= (const char*)r->base && (size_t)(ptr - (const char*)r->base) <= r->size &&
        bytes <= r->size - (size_t)(ptr - (const char*)r->base))
      return r;
  }
  void* base = NULL;
  size_t size = 0;
  if (!net_reg_find(ctx, ptr, bytes, &base, &size)) {
    net_reg_say_once(ctx, c, "it is not in a range of ncclCommRegister");
    return NULL;
  }
  if (ctx->nRegs == ctx->capRegs) {
    int cap = ctx->capRegs ? 2 * ctx->capRegs : 16;
    transport_net_ureg_t* grown = realloc(ctx->regs, (size_t)cap * sizeof(*grown));
    if (!grown) {
      net_reg_say_once(ctx, c, "out of memory for its registration");
      return NULL;
    }
    ctx->regs = grown;
    ctx->capRegs = cap;
  }
  void* mh = NULL;
  /* A GPU rank's registrations are of its GPU buffers (GPUDirect RDMA). */
  ncclResult_t res = ctx->regFault || !ctx->net->regMr ? ncclInvalidUsage
                     : ctx->services->cudaDev >= 0     ? transport_net_reg_cuda(ctx, c->netComm, base, size, &mh)
                                                       : ctx->net->regMr(c->netComm, base, size, NCCL_PTR_HOST, &mh);
  if (res != ncclSuccess) {
    mh = NULL; /* refused: remembered, so it is not asked again for every step */
    char why[160];
    snprintf(why, sizeof(why), "the net plugin's regMr of %zu bytes at %p failed (%d%s)", size, base, res,
             ctx->regFault ? ", MKCCL_NET_REG_FAULT" : !ctx->net->regMr ? ", the plugin has none" : "");
    net_reg_say_once(ctx, c, why);
  }
  transport_net_ureg_t* r = &ctx->regs[ctx->nRegs++];
  *r = (transport_net_ureg_t){base, size, c->netComm, mh};
  if (mh) __atomic_add_fetch(&net_ptr_regs, 1, __ATOMIC_RELAXED);
  return r;
}

void* transport_net_reg_mhandle(transport_net_ctx_t* ctx, transport_net_conn_t* c, const void* ptr, size_t bytes) {
  pthread_mutex_lock(&ctx->regLock);
  transport_net_ureg_t* r = net_reg_entry(ctx, c, ptr, bytes);
  void* mh = r ? r->mhandle : NULL;
  pthread_mutex_unlock(&ctx->regLock);
  return mh;
}

/* The entries of netComm (NULL: those of [base, base + size) on every
 * comm) deregistered and removed. Lock held. */
static void net_reg_drop(transport_net_ctx_t* ctx, void* netComm, void* base, size_t size) {
  for (int i = 0; i < ctx->nRegs;) {
    transport_net_ureg_t* r = &ctx->regs[i];
    int match = netComm ? r->netComm == netComm : (r->base == base && r->size == size);
    if (!match) {
      i++;
      continue;
    }
    if (r->mhandle) {
      ctx->net->deregMr(r->netComm, r->mhandle);
      __atomic_sub_fetch(&net_ptr_regs, 1, __ATOMIC_RELAXED);
    }
    *r = ctx->regs[--ctx->nRegs];
  }
}

void transport_net_reg_drop_comm(transport_net_ctx_t* ctx, void* netComm) {
  if (!netComm) return;
  pthread_mutex_lock(&ctx->regLock);
  net_reg_drop(ctx, netComm, NULL, 0);
  pthread_mutex_unlock(&ctx->regLock);
}

void transport_net_mem_deregister(void* tctx, void* base, size_t size) {
  transport_net_ctx_t* ctx = tctx;
  pthread_mutex_lock(&ctx->regLock);
  net_reg_drop(ctx, NULL, base, size);
  pthread_mutex_unlock(&ctx->regLock);
}
