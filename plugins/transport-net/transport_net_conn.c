/* Connection setup: the receiver listens and sends its handle; the sender
 * connects; both register their staging buffer (or their channel's pool)
 * with the net plugin. A p2p
 * connection to a peer that already has a shared comm skips the handshake
 * and uses that comm. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "transport/mkccl_conn_fifo_v1.h"
#include "transport_net.h"
#include "transport_net_gdr.h"
#include "transport_net_params.h"

#define NET_LOG(ctx, level, ...) (ctx)->services->log(level, NCCL_NET, __FILE__, __LINE__, __VA_ARGS__)

static ncclResult_t net_init(const mkcclTransportServices_v1* services, void** out) {
  transport_net_ctx_t* ctx = calloc(1, sizeof(*ctx));
  if (!ctx) return ncclSystemError;
  ctx->services = services;
  ctx->net = services->net ? services->net(services->ctx, &ctx->netContext) : NULL;
  ctx->sharedComms = (int)transport_net_param_NCCL_NET_SHARED_COMMS(services);
  ctx->forceFlush = (int)transport_net_param_MKCCL_NET_FORCE_FLUSH(services);
  ctx->sharedBuffers = transport_net_param_NCCL_NET_SHARED_BUFFERS(services) != 0;
  ctx->maxRecvs = 1;
  /* Cores that predate the GPUDirect services: parameters unset. */
  int gdrKnown = MKCCL_SERVICES_HAS(services, netGdrRead);
  ctx->gdrLevel = gdrKnown ? services->netGdrLevel : -1;
  ctx->gdrRead = gdrKnown ? services->netGdrRead : -1;
  if (ctx->net) {
    ncclNetProperties_v12_t props;
    memset(&props, 0, sizeof(props));
    if (ctx->net->getProperties(0, &props) == ncclSuccess && props.maxRecvs > 1)
      ctx->maxRecvs = props.maxRecvs < MKCCL_PROXY_MAX_SUBS ? props.maxRecvs : MKCCL_PROXY_MAX_SUBS;
    /* Device offload keeps one queue per receive comm, consumed in the
     * order it was posted: one connection per comm, one buffer per receive. */
    /* GPU memory through dma-buf where the plugin claims it (as NCCL does). */
    int dmaBufKnown = MKCCL_SERVICES_HAS(services, dmaBufFd);
    ctx->dmaBuf = (props.ptrSupport & NCCL_PTR_DMABUF) && ctx->net->regMrDmaBuf && dmaBufKnown && services->dmaBufFd;
    if (props.netDeviceType != NCCL_NET_DEVICE_HOST) {
      ctx->offload = 1;
      ctx->sharedComms = 0;
      ctx->sharedBuffers = 0; /* the executor unpacks into its own slots */
      ctx->maxRecvs = 1;
    }
  }
  transport_net_reg_init(ctx);
  *out = ctx;
  return ncclSuccess;
}

static ncclResult_t net_finalize(void* tctx) {
  transport_net_ctx_t* ctx = tctx;
  if (ctx->gdrConns || ctx->gdrFallbacks)
    NET_LOG(ctx, NCCL_LOG_INFO,
            "transport-net: rank %d: %d connection(s) had their step buffers in GPU memory (NCCL_PTR_CUDA), %d in host "
            "memory, %d moved to host memory after the plugin refused GPU memory; %d registration(s) of GPU memory "
            "through dma-buf",
            ctx->services->rank, ctx->gdrConns, ctx->hostConns, ctx->gdrFallbacks, ctx->dmaBufRegs);
  transport_net_reg_fini(ctx);
  free(tctx);
  return ncclSuccess;
}

static ncclResult_t net_can_connect(void* tctx, const mkcclPeer_v1* self, const mkcclPeer_v1* peer, int* ret) {
  (void)self, (void)peer;
  transport_net_ctx_t* ctx = tctx;
  *ret = ctx->net != NULL;
  return ncclSuccess;
}

/* Whether this side's step buffers go in GPU memory; the choice is said
 * once per communicator and direction at INFO. */
static int net_conn_gdr(transport_net_ctx_t* ctx, const mkcclConnSetup_v1* args, transport_net_conn_t* c) {
  ncclNetProperties_v12_t props;
  memset(&props, 0, sizeof(props));
  if (ctx->net->getProperties(c->netDev, &props) != ncclSuccess) props.ptrSupport = NCCL_PTR_HOST;
  c->forceFlushProp = props.forceFlush;
  const mkcclTransportServices_v1* sv = ctx->services;
  int pathKnown = MKCCL_SERVICES_HAS(sv, netGpuPath) && sv->netGpuPath;
  transport_net_gdr_in_t in = {args->deviceMem, props.ptrSupport, ctx->offload, c->isSend, ctx->gdrLevel,
                               ctx->gdrRead,    sv->sm,           pathKnown ? sv->netGpuPath(sv->ctx, c->netDev) : -1};
  char why[160];
  int gdr = transport_net_gdr_decide(&in, why, (int)sizeof(why));
  int bit = c->isSend ? 2 : 1;
  if (args->deviceMem && !(__atomic_fetch_or(&ctx->gdrSaid, bit, __ATOMIC_RELAXED) & bit)) {
    if (gdr)
      NET_LOG(ctx, NCCL_LOG_INFO, "transport-net: rank %d: GPUDirect RDMA for %s: step buffers in GPU memory (%s)",
              ctx->services->rank, c->isSend ? "sends" : "receives", why);
    else
      NET_LOG(ctx, NCCL_LOG_INFO, "transport-net: rank %d: %s staged in host memory: %s", ctx->services->rank,
              c->isSend ? "sends" : "receives", why);
  }
  return gdr;
}

/* Staging buffer and control words, in memory the executor can see. */
static ncclResult_t net_conn_alloc(transport_net_ctx_t* ctx, const mkcclConnSetup_v1* args, int isSend,
                                   transport_net_conn_t** out) {
  const mkcclTransportServices_v1* sv = ctx->services;
  if (!ctx->net) {
    NET_LOG(ctx, NCCL_LOG_WARN, "transport-net: no net plugin to connect rank %d", args->peer->rank);
    return ncclInternalError;
  }
  transport_net_conn_t* c = calloc(1, sizeof(*c));
  if (!c) return ncclSystemError;
  c->ctx = ctx;
  c->isSend = isSend;
  c->netDev = args->self->netDev < 0 ? 0 : args->self->netDev;
  c->peer = args->peer->rank;
  c->channelId = args->channelId;
  c->tag = args->channelId;
  c->stepSize = args->buffSizes[MKCCL_PROTO_SIMPLE] / MKCCL_STEPS;
  c->wantShared = ctx->sharedComms && args->connIndex == 1;
  c->needFlush = ctx->forceFlush;
  for (int i = 0; i < MKCCL_STEPS; i++) c->poolSlot[i] = -1;
  int gdr = net_conn_gdr(ctx, args, c);
  ncclResult_t res;
  if (ctx->sharedBuffers && args->connIndex == 1) {
    res = transport_net_pool_attach(ctx, args->channelId, isSend, c->stepSize, gdr, &c->pool);
  } else {
    c->onDevice = gdr;
    res = transport_net_buff_alloc(ctx, (size_t)c->stepSize * MKCCL_STEPS, gdr, &c->buff);
    if (res != ncclSuccess)
      NET_LOG(ctx, NCCL_LOG_WARN, "transport-net: allocating %d bytes of staging for rank %d failed (%d)",
              c->stepSize * MKCCL_STEPS, c->peer, res);
  }
  if (res != ncclSuccess) goto fail;
  res = sv->hostAlloc(sv->ctx, sizeof(mkcclSendMem_v1), (void**)&c->sendMem);
  if (res != ncclSuccess) goto fail_buff;
  res = sv->hostAlloc(sv->ctx, sizeof(mkcclRecvMem_v1), (void**)&c->recvMem);
  if (res != ncclSuccess) goto fail_send;
  conn_fifo_init(c->recvMem->connFifo);
  if (c->buff) __atomic_add_fetch(&ctx->stagingBytes, (uint64_t)c->stepSize * MKCCL_STEPS, __ATOMIC_RELAXED);
  __atomic_add_fetch(&ctx->nConns, 1, __ATOMIC_RELAXED);
  *out = c;
  return ncclSuccess;
fail_send:
  sv->hostFree(sv->ctx, c->sendMem);
fail_buff:
  if (c->pool) transport_net_pool_detach(ctx, c->pool);
  else transport_net_buff_free(ctx, c->buff, c->onDevice);
fail:
  free(c);
  return res;
}

static void net_conn_release(transport_net_conn_t* c) {
  transport_net_ctx_t* ctx = c->ctx;
  const mkcclTransportServices_v1* sv = ctx->services;
  __atomic_sub_fetch(&ctx->nConns, 1, __ATOMIC_RELAXED);
  sv->hostFree(sv->ctx, c->recvMem);
  sv->hostFree(sv->ctx, c->sendMem);
  if (c->pool) {
    transport_net_pool_detach(ctx, c->pool);
  } else {
    __atomic_sub_fetch(&ctx->stagingBytes, (uint64_t)c->stepSize * MKCCL_STEPS, __ATOMIC_RELAXED);
    transport_net_buff_free(ctx, c->buff, c->onDevice);
  }
  free(c);
}

static ncclResult_t net_send_setup(void* tctx, const mkcclConnSetup_v1* args, void* connectInfo, void** out) {
  transport_net_conn_t* c;
  ncclResult_t res = net_conn_alloc(tctx, args, 1, &c);
  if (res != ncclSuccess) return res;
  memset(connectInfo, 0, MKCCL_CONNECT_INFO_BYTES);
  *out = c;
  return ncclSuccess;
}

/* Listen, unless a shared comm with this peer exists (or is being made). */
static ncclResult_t net_recv_setup(void* tctx, const mkcclConnSetup_v1* args, void* connectInfo, void** out) {
  transport_net_ctx_t* ctx = tctx;
  transport_net_conn_t* c;
  ncclResult_t res = net_conn_alloc(ctx, args, 0, &c);
  if (res != ncclSuccess) return res;
  transport_net_connect_info_t* info = connectInfo;
  memset(info, 0, MKCCL_CONNECT_INFO_BYTES);
  info->rank = args->self->rank;
  transport_net_shared_t* s = c->wantShared ? transport_net_shared_find(ctx, c->peer, 0, c->netDev) : NULL;
  if (s) {
    info->shared = 1;
    c->shared = s;
    s->refs++;
    *out = c;
    return ncclSuccess;
  }
  void** listen = &c->listenComm;
  if (c->wantShared && (s = transport_net_shared_add(ctx, c->peer, 0, c->netDev)) != NULL) {
    c->shared = s;
    s->refs++;
    listen = &s->listenComm;
  }
  res = ctx->net->listen(ctx->netContext, c->netDev, info->handle, listen);
  if (res != ncclSuccess) {
    NET_LOG(ctx, NCCL_LOG_WARN, "transport-net: listen on net device %d failed (%d)", c->netDev, res);
    if (c->shared) transport_net_shared_release(ctx, c->shared);
    net_conn_release(c);
    return res;
  }
  *out = c;
  return ncclSuccess;
}

/* The core's device handle for this side, asked for once (older cores lend
 * no such service: then none). */
static ncclResult_t net_dev_handle(transport_net_conn_t* c) {
  const mkcclTransportServices_v1* sv = c->ctx->services;
  if (c->devHandleAsked) return ncclSuccess;
  c->devHandleAsked = 1;
  if (!MKCCL_SERVICES_HAS(sv, netDeviceHandleFree) ||
      !sv->netDeviceHandleAlloc)
    return ncclSuccess;
  return sv->netDeviceHandleAlloc(sv->ctx, !c->isSend, &c->devHandle);
}

static void net_dev_handle_free(transport_net_conn_t* c) {
  const mkcclTransportServices_v1* sv = c->ctx->services;
  if (c->devHandle && sv->netDeviceHandleFree) sv->netDeviceHandleFree(sv->ctx, c->devHandle);
  c->devHandle = c->offloadHandle = NULL;
}

/* Registers the step buffers, then counts where they are; a receive into
 * GPU memory is flushed when the GPU or the plugin needs it. */
static ncclResult_t net_register(transport_net_conn_t* c) {
  transport_net_ctx_t* ctx = c->ctx;
  ncclResult_t res = c->pool ? transport_net_pool_register(ctx, c->pool, c->netComm, &c->mhandle)
                             : transport_net_buff_register(ctx, c->netComm, &c->buff, (size_t)c->stepSize * MKCCL_STEPS,
                                                           &c->onDevice, 1, &c->mhandle);
  if (res != ncclSuccess) return res;
  int onDevice = c->pool ? c->pool->onDevice : c->onDevice;
  __atomic_add_fetch(onDevice ? &ctx->gdrConns : &ctx->hostConns, 1, __ATOMIC_RELAXED);
  if (onDevice && !c->isSend)
    c->needFlush |= transport_net_gdr_needs_flush(ctx->services->sm, c->forceFlushProp, ctx->forceFlush);
  return ncclSuccess;
}

static void net_fill_info(transport_net_conn_t* c, mkcclConnInfo_v1* info) {
  memset(info, 0, sizeof(*info));
  info->buffs[MKCCL_PROTO_SIMPLE] = c->pool ? c->pool->buff : c->buff;
  if (c->pool ? c->pool->onDevice : c->onDevice) info->flags |= MKCCL_CONN_DEVICE_MEM;
  info->stepSize[MKCCL_PROTO_SIMPLE] = c->stepSize;
  info->tail = &c->recvMem->tail;
  info->head = &c->sendMem->head;
  info->connFifo = c->recvMem->connFifo;
  /* A comm shared by a peer's p2p connections is driven by all of them; a
   * pool by every p2p connection of its channel. */
  info->flags |= MKCCL_CONN_PROXY | (c->isSend ? MKCCL_CONN_USE_FIFO : 0) |
                (c->shared || c->pool ? 0 : MKCCL_CONN_PROXY_LANE);
  /* OFFSET mode: recv steps say where they landed; send steps are granted
   * a slot (head counts grants) and the executor writes at its offset. */
  if (c->pool) info->flags |= MKCCL_CONN_USE_FIFO | (c->isSend ? MKCCL_CONN_SHARED : 0);
  /* PTR mode: the proxy sends such steps from the user's buffer; receives
   * may land in the user's buffer, which the entry then says. */
  if (c->isSend && c->ctx->ptrSend && transport_net_conn_user_ok(c)) info->flags |= MKCCL_CONN_PTR_READ;
  if (!c->isSend && c->ctx->ptrRecv) info->flags |= MKCCL_CONN_USE_FIFO;
  info->netDeviceHandle = c->offloadHandle;
}

/* Non-blocking as the net ABI is: ncclInProgress until the peer answered.
 * A sender told "shared" waits for the first channel to make the comm. */
static ncclResult_t net_send_connect(void* conn, const void* peerConnectInfo, mkcclConnInfo_v1* info) {
  transport_net_conn_t* c = conn;
  transport_net_ctx_t* ctx = c->ctx;
  if (!c->netComm) {
    if (!c->havePeerInfo) {
      memcpy(&c->peerInfo, peerConnectInfo, sizeof(c->peerInfo));
      c->havePeerInfo = 1;
    }
    transport_net_connect_info_t* peer = &c->peerInfo;
    if (peer->shared) {
      transport_net_shared_t* s = transport_net_shared_find(ctx, c->peer, 1, c->netDev);
      if (!s || !s->netComm) return ncclInProgress;
      c->shared = s;
      s->refs++;
      c->netComm = s->netComm;
    } else {
      ncclResult_t res = net_dev_handle(c);
      if (res != ncclSuccess) return res;
      ncclNetDeviceHandle_v12_t* devHandle = c->devHandle;
      void* comm = NULL;
      res = ctx->net->connect(ctx->netContext, c->netDev, peer->handle, &comm, &devHandle);
      if (res != ncclSuccess) return res;
      if (!comm) return ncclInProgress;
      c->netComm = comm;
      if (c->wantShared) {
        transport_net_shared_t* s = transport_net_shared_add(ctx, c->peer, 1, c->netDev);
        if (s) {
          s->netComm = comm;
          s->refs = 1;
          c->shared = s;
        }
      }
    }
    ncclResult_t res = net_register(c);
    if (res != ncclSuccess) return res;
  }
  net_fill_info(c, info);
  return ncclSuccess;
}

static ncclResult_t net_recv_connect(void* conn, const void* peerConnectInfo, mkcclConnInfo_v1* info) {
  (void)peerConnectInfo;
  transport_net_conn_t* c = conn;
  transport_net_ctx_t* ctx = c->ctx;
  if (!c->netComm) {
    transport_net_shared_t* s = c->shared;
    void** listen = s ? &s->listenComm : &c->listenComm;
    if (s && s->netComm) {
      c->netComm = s->netComm;
      c->needConsumed = s->needConsumed; /* a property of the comm, not of who accepted */
    } else if (s && !*listen) {
      return ncclInProgress; /* another channel accepts for us */
    } else {
      ncclResult_t res = net_dev_handle(c);
      if (res != ncclSuccess) return res;
      ncclNetDeviceHandle_v12_t* devHandle = c->devHandle;
      void* comm = NULL;
      res = ctx->net->accept(*listen, &comm, &devHandle);
      if (res != ncclSuccess) return res;
      if (!comm) return ncclInProgress;
      ctx->net->closeListen(*listen);
      *listen = NULL;
      c->netComm = comm;
      if (s) s->netComm = comm;
      const mkcclTransportServices_v1* sv = ctx->services;
      if (devHandle && devHandle == c->devHandle && devHandle->handle) {
        /* The plugin filled the core's handle: the executor unpacks. */
        c->offloadHandle = devHandle;
        c->needConsumed = sv->netDeviceNeedsProxyProgress(sv->ctx, devHandle);
      } else {
        c->needConsumed = (devHandle && devHandle->needsProxyProgress) != 0;
      }
      if (s) s->needConsumed = c->needConsumed;
    }
    ncclResult_t res = net_register(c);
    if (res != ncclSuccess) return res;
  }
  net_fill_info(c, info);
  return ncclSuccess;
}

static ncclResult_t net_free(void* conn) {
  transport_net_conn_t* c = conn;
  if (!c) return ncclSuccess;
  const ncclNet_v12_t* net = c->ctx->net;
  if (c->mhandle && c->pool) transport_net_pool_deregister(c->ctx, c->pool, c->netComm);
  else if (c->mhandle) net->deregMr(c->netComm, c->mhandle);
  if (c->shared) {
    transport_net_shared_release(c->ctx, c->shared);
  } else {
    transport_net_reg_drop_comm(c->ctx, c->netComm);
    if (c->netComm) (c->isSend ? net->closeSend : net->closeRecv)(c->netComm);
    if (c->listenComm) net->closeListen(c->listenComm);
  }
  net_dev_handle_free(c); /* after the comm: the plugin's part went with it */
  net_conn_release(c);
  return ncclSuccess;
}

static ncclResult_t net_stats(void* tctx, mkcclTransportStats_v1* out) {
  transport_net_ctx_t* ctx = tctx;
  if (out->size < offsetof(mkcclTransportStats_v1, offsetSteps) + sizeof(out->offsetSteps)) return ncclInvalidArgument;
  out->stagingBytes = __atomic_load_n(&ctx->stagingBytes, __ATOMIC_RELAXED);
  out->pools = __atomic_load_n(&ctx->nPools, __ATOMIC_RELAXED);
  out->conns = __atomic_load_n(&ctx->nConns, __ATOMIC_RELAXED);
  out->offsetSteps = __atomic_load_n(&ctx->offsetSteps, __ATOMIC_RELAXED);
  return ncclSuccess;
}

__attribute__((visibility("default"))) const mkcclTransport_v1 mkcclTransportPlugin_v1 = {
    .size = sizeof(mkcclTransport_v1),
    .abiVersion = MKCCL_TRANSPORT_ABI_V1,
    .name = "net",
    .init = net_init,
    .canConnect = net_can_connect,
    .send = {net_send_setup, net_send_connect, net_free, NULL, NULL, transport_net_send_progress, NULL},
    .recv = {net_recv_setup, net_recv_connect, net_free, NULL, NULL, transport_net_recv_progress, NULL},
    .finalize = net_finalize,
    .stats = net_stats,
    .memDeregister = transport_net_mem_deregister,
};
