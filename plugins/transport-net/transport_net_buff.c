/* Step buffer memory of a connection or a pool: GPU memory when the side
 * uses GPUDirect RDMA (transport_net_gdr.c), host memory the executor sees
 * otherwise; and its registration with a net comm, NCCL_PTR_CUDA for GPU
 * memory (through a dma-buf where the plugin claims NCCL_PTR_DMABUF). A plugin that refuses GPU memory gets the buffer moved to host
 * memory (said once per communicator at INFO) while nobody holds it yet. */
#include <stddef.h>
#include <unistd.h>

#include "transport_net.h"

#define NET_LOG(ctx, level, ...) (ctx)->services->log(level, NCCL_NET, __FILE__, __LINE__, __VA_ARGS__)

ncclResult_t transport_net_buff_alloc(transport_net_ctx_t* ctx, size_t bytes, int onDevice, char** buff) {
  const mkcclTransportServices_v1* sv = ctx->services;
  void* p = NULL;
  ncclResult_t res = onDevice ? sv->deviceAlloc(sv->ctx, bytes, &p) : sv->hostAlloc(sv->ctx, bytes, &p);
  if (res != ncclSuccess) {
    NET_LOG(ctx, NCCL_LOG_WARN, "transport-net: allocating %zu bytes of %s memory for step buffers failed (%d)", bytes,
            onDevice ? "GPU" : "host", res);
    return res;
  }
  *buff = p;
  return ncclSuccess;
}

void transport_net_buff_free(transport_net_ctx_t* ctx, char* buff, int onDevice) {
  const mkcclTransportServices_v1* sv = ctx->services;
  if (!buff) return;
  if (onDevice) sv->deviceFree(sv->ctx, buff);
  else sv->hostFree(sv->ctx, buff);
}

/* GPU memory the plugin would not register: host memory instead. */
static ncclResult_t net_buff_to_host(transport_net_ctx_t* ctx, char** buff, size_t bytes, int* onDevice,
                                     ncclResult_t why) {
  char* host = NULL;
  ncclResult_t res = transport_net_buff_alloc(ctx, bytes, 0, &host);
  if (res != ncclSuccess) return res;
  transport_net_buff_free(ctx, *buff, 1);
  *buff = host;
  *onDevice = 0;
  if (!__atomic_exchange_n(&ctx->gdrFallbackSaid, 1, __ATOMIC_RELAXED))
    NET_LOG(ctx, NCCL_LOG_INFO,
            "transport-net: rank %d: the net plugin refused GPU memory (regMr NCCL_PTR_CUDA returned %d): "
            "net data goes through host memory",
            ctx->services->rank, why);
  __atomic_add_fetch(&ctx->gdrFallbacks, 1, __ATOMIC_RELAXED);
  return ncclSuccess;
}

ncclResult_t transport_net_reg_cuda(transport_net_ctx_t* ctx, void* netComm, void* ptr, size_t bytes, void** mhandle) {
  const mkcclTransportServices_v1* sv = ctx->services;
  int fd = -1;
  uint64_t offset = 0;
  if (ctx->dmaBuf && sv->dmaBufFd(sv->ctx, ptr, bytes, &fd, &offset) == ncclSuccess) {
    ncclResult_t res = ctx->net->regMrDmaBuf(netComm, ptr, bytes, NCCL_PTR_CUDA, offset, fd, mhandle);
    close(fd); /* the plugin holds its own reference once registered */
    int first = !__atomic_exchange_n(&ctx->dmaBufSaid, 1, __ATOMIC_RELAXED);
    if (res == ncclSuccess) {
      __atomic_add_fetch(&ctx->dmaBufRegs, 1, __ATOMIC_RELAXED);
      if (first) NET_LOG(ctx, NCCL_LOG_INFO, "transport-net: rank %d: GPU memory registered through dma-buf", sv->rank);
      return ncclSuccess;
    }
    if (first)
      NET_LOG(ctx, NCCL_LOG_INFO, "transport-net: rank %d: the net plugin's regMrDmaBuf failed (%d): regMr instead",
              sv->rank, res);
  }
  return ctx->net->regMr(netComm, ptr, bytes, NCCL_PTR_CUDA, mhandle);
}

ncclResult_t transport_net_buff_register(transport_net_ctx_t* ctx, void* netComm, char** buff, size_t bytes,
                                         int* onDevice, int movable, void** mhandle) {
  const ncclNet_v12_t* net = ctx->net;
  void* mh = NULL;
  ncclResult_t res = *onDevice ? transport_net_reg_cuda(ctx, netComm, *buff, bytes, &mh)
                               : net->regMr(netComm, *buff, bytes, NCCL_PTR_HOST, &mh);
  if (res != ncclSuccess && *onDevice && movable) {
    ncclResult_t moved = net_buff_to_host(ctx, buff, bytes, onDevice, res);
    if (moved != ncclSuccess) return moved;
    res = net->regMr(netComm, *buff, bytes, NCCL_PTR_HOST, &mh);
  }
  if (res != ncclSuccess) {
    NET_LOG(ctx, NCCL_LOG_WARN, "transport-net: registering %zu bytes of %s memory with the net plugin failed (%d)%s",
            bytes, *onDevice ? "GPU" : "host", res,
            *onDevice && !movable ? ": other connections use this pool in GPU memory already" : "");
    return res;
  }
  *mhandle = mh;
  return ncclSuccess;
}
