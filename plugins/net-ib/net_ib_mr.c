/* Memory registration through the device's cache (net_ib_mrcache.c).
 * Host memory and, with peer memory (nvidia-peermem), CUDA pointers go to
 * ibv_reg_mr; dma-bufs to ibv_reg_dmabuf_mr. The mhandle is the entry. */
#include <errno.h>
#include <string.h>

#include "net_ib.h"

#define IB_MR_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

int net_ib_mr_reg(void* ctx, const net_ib_mr_request_t* req, void** mrOut, uint32_t* lkey, uint32_t* rkey) {
  struct ibv_pd* pd = ctx;
  struct ibv_mr* mr = req->fd >= 0 ? ibv_reg_dmabuf_mr(pd, req->offset, req->len, req->start, req->fd, IB_MR_ACCESS)
                                   : ibv_reg_mr(pd, (void*)req->start, req->len, IB_MR_ACCESS);
  if (!mr) {
    IB_WARN("%s(%p, %zu) failed: %s", req->fd >= 0 ? "ibv_reg_dmabuf_mr" : "ibv_reg_mr", (void*)req->start, req->len,
            strerror(errno));
    return -1;
  }
  *mrOut = mr;
  *lkey = mr->lkey;
  *rkey = mr->rkey;
  return 0;
}

void net_ib_mr_dereg(void* ctx, void* mr) {
  (void)ctx;
  int rc = ibv_dereg_mr(mr);
  if (rc != 0) IB_WARN("ibv_dereg_mr failed: %s", strerror(rc));
}

static net_ib_dev_t* net_ib_mr_dev(void* comm) {
  net_ib_comm_t* c = comm;
  return c && (c->type == IB_COMM_SEND || c->type == IB_COMM_RECV) ? c->dev : NULL;
}

static ncclResult_t net_ib_reg(void* comm, void* data, size_t size, int type, int fd, uint64_t offset, void** mhandle) {
  net_ib_dev_t* d = net_ib_mr_dev(comm);
  if (!d || !mhandle || (!data && size)) {
    IB_WARN("regMr: bad arguments (comm %p, data %p, size %zu)", comm, data, size);
    return ncclInvalidArgument;
  }
  if (type != NCCL_PTR_HOST && type != NCCL_PTR_CUDA && type != NCCL_PTR_DMABUF) {
    IB_WARN("regMr: unknown pointer type %d", type);
    return ncclInvalidArgument;
  }
  if (type != NCCL_PTR_HOST && !(fd >= 0 ? d->dmabuf : d->gdr)) {
    IB_WARN("%s:%d: regMr of GPU memory, but %s", d->name, d->port,
            fd >= 0 ? "dma-buf registration is not supported" : "no peer-memory module (nvidia-peermem) is loaded");
    return ncclInvalidArgument;
  }
  net_ib_mr_entry_t* e;
  if (net_ib_mrcache_get(d->mrs, data, size, type, fd, offset, &e) != 0) return ncclSystemError;
  *mhandle = e;
  return ncclSuccess;
}

ncclResult_t net_ib_reg_mr(void* comm, void* data, size_t size, int type, void** mhandle) {
  return net_ib_reg(comm, data, size, type, -1, 0, mhandle);
}

ncclResult_t net_ib_reg_mr_dmabuf(void* comm, void* data, size_t size, int type, uint64_t offset, int fd,
                                  void** mhandle) {
  return net_ib_reg(comm, data, size, type, fd, offset, mhandle);
}

ncclResult_t net_ib_dereg_mr(void* comm, void* mhandle) {
  net_ib_dev_t* d = net_ib_mr_dev(comm);
  if (!d) {
    IB_WARN("deregMr: not a send or recv comm");
    return ncclInvalidArgument;
  }
  if (mhandle && net_ib_mrcache_put(d->mrs, mhandle) != 0) {
    IB_WARN("deregMr: %p is not a registration of this device", mhandle);
    return ncclInvalidArgument;
  }
  return ncclSuccess;
}
