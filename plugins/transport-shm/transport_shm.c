/* The transport: setup creates our segment, connect maps the peer's. */
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "transport/mkccl_conn_fifo_v1.h"
#include "transport_shm.h"
#include "transport_shm_params.h"

#define SHM_LOG(ctx, level, ...) (ctx)->services->log(level, NCCL_SHM, __FILE__, __LINE__, __VA_ARGS__)
#define SHM_ALIGN 4096

static size_t shm_round(size_t x) { return (x + SHM_ALIGN - 1) / SHM_ALIGN * SHM_ALIGN; }

/* Receiver segment: header, recvMem (tail + FIFO), LL lines (host ranks,
 * when asked: in the page's spare room, zero as created, so no flag is
 * valid), step buffers. */
#define SHM_LL_OFF 1024
_Static_assert(sizeof(shm_header_t) + sizeof(mkcclRecvMem_v1) <= SHM_LL_OFF, "recvMem overlaps the LL lines");
static size_t shm_recv_buffs_off(void) { return shm_round(sizeof(shm_header_t) + sizeof(mkcclRecvMem_v1)); }
static int shm_ll_max(void) { return (int)(shm_recv_buffs_off() - SHM_LL_OFF); }
static mkcclRecvMem_v1* shm_recv_mem(void* seg) { return (mkcclRecvMem_v1*)((char*)seg + sizeof(shm_header_t)); }
/* Sender segment: header, sendMem (head). */
static mkcclSendMem_v1* shm_send_mem(void* seg) { return (mkcclSendMem_v1*)((char*)seg + sizeof(shm_header_t)); }

static ncclResult_t shm_init(const mkcclTransportServices_v1* services, void** out) {
  shm_ctx_t* ctx = calloc(1, sizeof(*ctx));
  if (!ctx) return ncclSystemError;
  ctx->services = services;
  /* Single copy between host ranks only: GPU ranks' buffers are device memory. */
  ctx->cma = services->cudaDev < 0 && transport_shm_param_MKCCL_SHM_CMA(services) != 0;
  ctx->cmaFault = (int)transport_shm_param_MKCCL_SHM_CMA_FAULT(services);
  ctx->map = services->cudaDev < 0 && transport_shm_param_MKCCL_SHM_MAP(services) != 0;
  pthread_mutex_init(&ctx->mapLock, NULL);
  int swept = shm_segment_sweep_dead();
  if (swept) SHM_LOG(ctx, NCCL_LOG_INFO, "transport-shm: removed %d segment(s) of dead processes", swept);
  *out = ctx;
  return ncclSuccess;
}

static ncclResult_t shm_finalize(void* tctx) {
  shm_ctx_t* ctx = tctx;
  shm_map_drop_all(ctx);
  pthread_mutex_destroy(&ctx->mapLock);
  free(ctx);
  return ncclSuccess;
}

/* Same host, and both ranks host executors or both GPU executors (GPUs
 * reach the segments through host registration: pinned staging). */
static ncclResult_t shm_can_connect(void* tctx, const mkcclPeer_v1* self, const mkcclPeer_v1* peer, int* ret) {
  shm_ctx_t* ctx = tctx;
  int gpus = self->cudaDev >= 0 && peer->cudaDev >= 0 && ctx->services->hostRegister;
  int hosts = self->cudaDev < 0 && peer->cudaDev < 0;
  *ret = self->hostHash == peer->hostHash && (gpus || hosts);
  return ncclSuccess;
}

/* For a GPU executor: the address the GPU uses for a mapped segment. */
static ncclResult_t shm_gpu_map(shm_conn_t* c, void* seg, size_t bytes, void** dev) {
  const mkcclTransportServices_v1* sv = c->ctx->services;
  if (sv->cudaDev < 0) {
    *dev = seg;
    return ncclSuccess;
  }
  return sv->hostRegister(sv->ctx, seg, bytes, dev);
}

static ncclResult_t shm_setup(void* tctx, const mkcclConnSetup_v1* args, void* connectInfo, void** out, int isSend) {
  shm_ctx_t* ctx = tctx;
  shm_conn_t* c = calloc(1, sizeof(*c));
  if (!c) return ncclSystemError;
  c->ctx = ctx;
  c->isSend = isSend;
  c->peerPid = args->peer->pid;
  c->stepSize = args->buffSizes[MKCCL_PROTO_SIMPLE] / MKCCL_STEPS;
  /* LL lines for host executors only: the GPU kernels' LL (ring lines of
   * NCCL_LL_BUFFSIZE) has not been run over SHM. */
  int ll = args->buffSizes[MKCCL_PROTO_LL];
  if (!isSend && ctx->services->cudaDev < 0 && ll > 0 && ll <= shm_ll_max() && ll % (MKCCL_STEPS * 16) == 0)
    c->llBytes = ll;
  c->localBytes = isSend ? shm_round(sizeof(shm_header_t) + sizeof(mkcclSendMem_v1))
                         : shm_recv_buffs_off() + shm_round((size_t)c->stepSize * MKCCL_STEPS);
  int err = shm_segment_create(c->localBytes, c->name, sizeof(c->name), &c->local);
  if (err) {
    SHM_LOG(ctx, NCCL_LOG_WARN, "transport-shm: cannot create a %zu-byte segment: %s", c->localBytes, strerror(-err));
    free(c);
    return ncclSystemError;
  }
  shm_header_t* h = c->local;
  h->magic = SHM_MAGIC;
  if (getrandom(&h->token, sizeof(h->token), 0) != (ssize_t)sizeof(h->token)) h->token = (uint64_t)(uintptr_t)h;
  if (!isSend) conn_fifo_init(shm_recv_mem(c->local)->connFifo);
  shm_connect_info_t* info = connectInfo;
  memset(info, 0, MKCCL_CONNECT_INFO_BYTES);
  memcpy(info->name, c->name, sizeof(info->name));
  info->bytes = c->localBytes;
  info->rank = args->self->rank;
  info->llBytes = c->llBytes;
  info->header = (uint64_t)(uintptr_t)c->local;
  *out = c;
  return ncclSuccess;
}

static ncclResult_t shm_send_setup(void* tctx, const mkcclConnSetup_v1* args, void* connectInfo, void** out) {
  return shm_setup(tctx, args, connectInfo, out, 1);
}
static ncclResult_t shm_recv_setup(void* tctx, const mkcclConnSetup_v1* args, void* connectInfo, void** out) {
  return shm_setup(tctx, args, connectInfo, out, 0);
}

/* Map the peer's segment (once), unlink its name, mark it mapped; then wait
 * for the peer to have mapped ours before unlinking our name. */
static ncclResult_t shm_connect(void* conn, const void* peerConnectInfo, mkcclConnInfo_v1* info) {
  shm_conn_t* c = conn;
  if (!c->remote) {
    shm_connect_info_t peer;
    memcpy(&peer, peerConnectInfo, sizeof(peer));
    peer.name[SHM_NAME_MAX - 1] = '\0';
    int err = shm_segment_open(peer.name, peer.bytes, &c->remote);
    if (err) {
      SHM_LOG(c->ctx, NCCL_LOG_WARN, "transport-shm: cannot map rank %d's segment %s: %s", peer.rank, peer.name,
              strerror(-err));
      return ncclSystemError;
    }
    c->remoteBytes = peer.bytes;
    if (c->isSend) c->llBytes = peer.llBytes > 0 && peer.llBytes <= shm_ll_max() ? peer.llBytes : 0;
    shm_header_t* h = c->remote;
    if (h->magic != SHM_MAGIC) {
      SHM_LOG(c->ctx, NCCL_LOG_WARN, "transport-shm: segment %s of rank %d is not ours", peer.name, peer.rank);
      return ncclSystemError;
    }
    shm_segment_unlink(peer.name);
    /* The receiver answers whether it reads the sender's memory in place
     * before the sender can finish connecting (it waits for the answer). */
    if (!c->isSend) {
      int host = c->ctx->services->cudaDev < 0;
      c->cmaOk = host && shm_cma_probe(c, peer.header, peer.rank);
      c->mapOk = host && shm_map_probe(c, peer.header, peer.name, peer.rank);
      uint32_t reads = SHM_READS_ANSWERED | (c->cmaOk ? SHM_READS_CMA : 0) | (c->mapOk ? SHM_READS_MAP : 0);
      __atomic_store_n(&((shm_header_t*)c->local)->reads, reads, __ATOMIC_RELEASE);
    }
    __atomic_store_n(&h->peerMapped, 1, __ATOMIC_RELEASE);
  }
  if (c->isSend) {
    uint32_t reads = __atomic_load_n(&((shm_header_t*)c->remote)->reads, __ATOMIC_ACQUIRE);
    if (reads == SHM_READS_PENDING) return ncclInProgress;
    c->cmaOk = (reads & SHM_READS_CMA) && c->ctx->cma;
    c->mapOk = (reads & SHM_READS_MAP) && c->ctx->map;
  }
  if (!c->unlinked) {
    if (!__atomic_load_n(&((shm_header_t*)c->local)->peerMapped, __ATOMIC_ACQUIRE)) return ncclInProgress;
    shm_segment_unlink(c->name);
    c->unlinked = 1;
  }
  if (!c->localDev) {
    ncclResult_t res = shm_gpu_map(c, c->local, c->localBytes, &c->localDev);
    if (res == ncclSuccess) res = shm_gpu_map(c, c->remote, c->remoteBytes, &c->remoteDev);
    if (res != ncclSuccess) return res;
  }
  memset(info, 0, sizeof(*info));
  void* recvSeg = c->isSend ? c->remoteDev : c->localDev;
  void* sendSeg = c->isSend ? c->localDev : c->remoteDev;
  info->buffs[MKCCL_PROTO_SIMPLE] = (char*)recvSeg + shm_recv_buffs_off();
  info->stepSize[MKCCL_PROTO_SIMPLE] = c->stepSize;
  if (c->llBytes) {
    info->buffs[MKCCL_PROTO_LL] = (char*)recvSeg + SHM_LL_OFF;
    info->stepSize[MKCCL_PROTO_LL] = c->llBytes / MKCCL_STEPS;
  }
  info->tail = &shm_recv_mem(recvSeg)->tail;
  info->head = &shm_send_mem(sendSeg)->head;
  info->connFifo = shm_recv_mem(recvSeg)->connFifo;
  info->flags = 0;
  if (c->cmaOk) info->flags |= MKCCL_CONN_PTR_READ;
  if (c->mapOk) info->flags |= MKCCL_CONN_PTR_MAP;
  if (!c->isSend && (c->cmaOk || c->mapOk)) info->ptrRead = shm_map_read, info->ptrCtx = c;
  if (!c->isSend && c->mapOk) info->ptrMap = shm_map_at;
  return ncclSuccess;
}

static ncclResult_t shm_free(void* conn) {
  shm_conn_t* c = conn;
  if (!c) return ncclSuccess;
  const mkcclTransportServices_v1* sv = c->ctx->services;
  if (sv->cudaDev >= 0) {
    if (c->remoteDev) sv->hostUnregister(sv->ctx, c->remote);
    if (c->localDev) sv->hostUnregister(sv->ctx, c->local);
  }
  shm_segment_close(c->remote, c->remoteBytes);
  if (!c->unlinked) shm_segment_unlink(c->name);
  shm_segment_close(c->local, c->localBytes);
  free(c);
  return ncclSuccess;
}

__attribute__((visibility("default"))) const mkcclTransport_v1 mkcclTransportPlugin_v1 = {
    .size = sizeof(mkcclTransport_v1),
    .abiVersion = MKCCL_TRANSPORT_ABI_V1,
    .name = "shm",
    .init = shm_init,
    .canConnect = shm_can_connect,
    .send = {shm_send_setup, shm_connect, shm_free, NULL, NULL, NULL, NULL},
    .recv = {shm_recv_setup, shm_connect, shm_free, NULL, NULL, NULL, NULL},
    .finalize = shm_finalize,
};
