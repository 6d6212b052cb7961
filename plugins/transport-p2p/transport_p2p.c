/* transport-p2p: GPU to GPU on one host, executor to executor, no proxy.
 *
 * Each side allocates one region of device memory: [control words][steps].
 * Write mode: the receiver's region holds the step buffer; the sender's GPU
 * writes data and the tail into it and reads its own head. Read mode (the
 * default on Ampere only, as in NCCL; NCCL_P2P_READ_ENABLE overrides; on
 * Hopper write mode moves more): the buffer lives with the sender, which writes locally and publishes the tail remotely; the
 * receiver reads the data across the link. A peer in this process maps the
 * region by pointer (peer access enabled); another process opens a CUDA IPC
 * handle. LL lines (ring connections, when the core asks for them) always
 * live with the receiver, after its control words: the sender stores data
 * and flag together across the link and the receiver polls its own memory. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "transport_p2p.h"

static atomic_int p2pDirectSaid; /* said once per process at INFO */

static ncclResult_t p2p_init(const mkcclTransportServices_v1* services, void** out) {
  p2p_ctx_t* ctx = calloc(1, sizeof(*ctx));
  if (!ctx) return ncclSystemError;
  ctx->services = services;
  ctx->readMode = services->p2pRead >= 0 ? services->p2pRead : services->sm == 80;
  *out = ctx;
  return ncclSuccess;
}

static ncclResult_t p2p_finalize(void* tctx) {
  free(tctx);
  return ncclSuccess;
}

static ncclResult_t p2p_can_connect(void* tctx, const mkcclPeer_v1* self, const mkcclPeer_v1* peer, int* ret) {
  p2p_ctx_t* ctx = tctx;
  const mkcclTransportServices_v1* sv = ctx->services;
  *ret = 0;
  if (self->cudaDev < 0 || peer->cudaDev < 0 || self->hostHash != peer->hostHash || !sv->peerAccess) return ncclSuccess;
  if (sv->p2pLevel == 0 && peer->busId != self->busId) return ncclSuccess; /* NCCL_P2P_LEVEL=LOC */
  return sv->peerAccess(sv->ctx, peer, ret);
}

/* Our region: control words, and the step buffer when it lives here. */
static ncclResult_t p2p_setup(void* tctx, const mkcclConnSetup_v1* args, void* connectInfo, void** out, int isSend) {
  p2p_ctx_t* ctx = tctx;
  const mkcclTransportServices_v1* sv = ctx->services;
  p2p_conn_t* c = calloc(1, sizeof(*c));
  if (!c) return ncclSystemError;
  c->ctx = ctx;
  c->isSend = isSend;
  c->stepSize = args->buffSizes[MKCCL_PROTO_SIMPLE] / MKCCL_STEPS;
  c->myPidHash = args->self->pidHash;
  c->localHasBuffer = isSend ? ctx->readMode : !ctx->readMode;
  c->llBytes = isSend ? 0 : args->buffSizes[MKCCL_PROTO_LL];
  size_t bytes = P2P_CTRL_BYTES + (size_t)c->llBytes + (c->localHasBuffer ? (size_t)c->stepSize * MKCCL_STEPS : 0);
  ncclResult_t res = sv->deviceAlloc(sv->ctx, bytes, (void**)&c->local);
  if (res != ncclSuccess) {
    free(c);
    return res;
  }
  p2p_connect_info_t info;
  memset(&info, 0, sizeof(info));
  info.readMode = ctx->readMode;
  info.hasBuffer = c->localHasBuffer;
  info.pidHash = args->self->pidHash;
  info.bytes = bytes;
  info.llBytes = (uint64_t)c->llBytes;
  info.ptr = c->local;
  res = sv->ipcHandle(sv->ctx, c->local, info.ipc);
  if (res != ncclSuccess) {
    sv->deviceFree(sv->ctx, c->local);
    free(c);
    return res;
  }
  memset(connectInfo, 0, MKCCL_CONNECT_INFO_BYTES);
  memcpy(connectInfo, &info, sizeof(info));
  *out = c;
  return ncclSuccess;
}

static ncclResult_t p2p_send_setup(void* tctx, const mkcclConnSetup_v1* args, void* ci, void** out) {
  return p2p_setup(tctx, args, ci, out, 1);
}
static ncclResult_t p2p_recv_setup(void* tctx, const mkcclConnSetup_v1* args, void* ci, void** out) {
  return p2p_setup(tctx, args, ci, out, 0);
}

static ncclResult_t p2p_connect(void* conn, const void* peerConnectInfo, mkcclConnInfo_v1* info) {
  p2p_conn_t* c = conn;
  p2p_connect_info_t peer;
  memcpy(&peer, peerConnectInfo, sizeof(peer));
  if (peer.readMode != c->ctx->readMode) {
    P2P_LOG(c->ctx, NCCL_LOG_WARN, "transport-p2p: peer uses P2P %s mode, this rank %s (set NCCL_P2P_READ_ENABLE alike)",
            peer.readMode ? "read" : "write", c->ctx->readMode ? "read" : "write");
    return ncclInvalidUsage;
  }
  if (!c->remote) {
    if (peer.pidHash == c->myPidHash) {
      c->remote = peer.ptr;
    } else {
      ncclResult_t res = p2p_import_open(c, &peer);
      if (res != ncclSuccess) return res;
    }
  }
  char* sendRegion = c->isSend ? c->local : c->remote;
  char* recvRegion = c->isSend ? c->remote : c->local;
  char* buffRegion = c->localHasBuffer ? c->local : c->remote;
  size_t llBytes = c->isSend ? peer.llBytes : (size_t)c->llBytes; /* the receiver's */
  memset(info, 0, sizeof(*info));
  info->buffs[MKCCL_PROTO_SIMPLE] = buffRegion + P2P_CTRL_BYTES + (buffRegion == recvRegion ? llBytes : 0);
  info->stepSize[MKCCL_PROTO_SIMPLE] = c->stepSize;
  if (llBytes > 0) {
    info->buffs[MKCCL_PROTO_LL] = recvRegion + P2P_CTRL_BYTES;
    info->stepSize[MKCCL_PROTO_LL] = (int32_t)(llBytes / MKCCL_STEPS);
  }
  info->tail = &((mkcclRecvMem_v1*)recvRegion)->tail;
  info->head = &((mkcclSendMem_v1*)sendRegion)->head;
  info->connFifo = NULL;
  info->flags = MKCCL_CONN_DEVICE_MEM;
  /* The receiver reads the sender's buffer where it is: sends post
   * addresses in the receiver's FIFO, one copy in place of two. A peer of
   * this process reads any buffer; one of another process those whose
   * address the core knows there (in a window it maps). */
  const mkcclTransportServices_v1* sv = c->ctx->services;
  if (MKCCL_SERVICES_HAS(sv, p2pDirect) && sv->p2pDirect) {
    info->connFifo = ((mkcclRecvMem_v1*)recvRegion)->connFifo;
    info->flags |= MKCCL_CONN_USE_FIFO |
                   (peer.pidHash == c->myPidHash ? MKCCL_CONN_PTR_READ | MKCCL_CONN_PTR_ANY : MKCCL_CONN_PTR_PEER);
    if (c->isSend && !atomic_exchange(&p2pDirectSaid, 1))
      P2P_LOG(c->ctx, NCCL_LOG_INFO, "transport-p2p: P2P direct: the receiver reads %s", peer.pidHash == c->myPidHash
              ? "the send buffer in place (a peer of this process)" : "window send buffers in place (another process)");
  }
  return ncclSuccess;
}

static ncclResult_t p2p_free(void* conn) {
  p2p_conn_t* c = conn;
  if (!c) return ncclSuccess;
  const mkcclTransportServices_v1* sv = c->ctx->services;
  p2p_import_close(c);
  sv->deviceFree(sv->ctx, c->local);
  free(c);
  return ncclSuccess;
}

__attribute__((visibility("default"))) const mkcclTransport_v1 mkcclTransportPlugin_v1 = {
    .size = sizeof(mkcclTransport_v1),
    .abiVersion = MKCCL_TRANSPORT_ABI_V1,
    .name = "p2p",
    .init = p2p_init,
    .canConnect = p2p_can_connect,
    .send = {p2p_send_setup, p2p_connect, p2p_free, NULL, NULL, NULL, NULL},
    .recv = {p2p_recv_setup, p2p_connect, p2p_free, NULL, NULL, NULL, NULL},
    .finalize = p2p_finalize,
};

__attribute__((visibility("default"))) const mkcclPluginInfo_v1_t mkcclPluginInfo_v1 = {
    sizeof(mkcclPluginInfo_v1_t), MKCCL_PLUGIN_ABI_VERSION, "transport-p2p", "0.1.0", NULL, 0, NULL};
