/* Memory registration as the provider asks for it: only when FI_MR_LOCAL
 * (or FI_MR_HMEM for device memory, or a flush read) needs a descriptor;
 * keys picked by us unless FI_MR_PROV_KEY; bound to the endpoint when
 * FI_MR_ENDPOINT. Callers hold the device lock. */
#include <stdlib.h>
#include <sys/uio.h>

#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include "net_ofi.h"

ncclResult_t net_ofi_mr_register(net_ofi_dev_t* d, void* data, size_t size, int type, net_ofi_mr_t** out) {
  int cuda = type == NCCL_PTR_CUDA;
  if (type != NCCL_PTR_HOST && !cuda) {
    OFI_WARN("%s: regMr type %d not supported (host or CUDA)", d->nic->name, type);
    return ncclInvalidArgument;
  }
  if (cuda && !d->nic->hmem) {
    OFI_WARN("%s: regMr of a CUDA pointer, but the provider offers no FI_HMEM", d->nic->name);
    return ncclInvalidArgument;
  }
  if (!data && size > 0) {
    OFI_WARN("%s: regMr of NULL with size %zu", d->nic->name, size);
    return ncclInvalidArgument;
  }
  net_ofi_mr_t* mr = calloc(1, sizeof(*mr));
  if (!mr) return ncclSystemError;
  mr->base = data;
  mr->size = size;
  mr->cuda = cuda;
  int needed = (d->mrMode & FI_MR_LOCAL) || cuda || d->nic->rma;
  if (!needed || size == 0) {
    *out = mr;
    return ncclSuccess;
  }
  struct iovec iov = {data, size};
  struct fi_mr_attr attr = {0};
  attr.mr_iov = &iov;
  attr.iov_count = 1;
  attr.access = FI_SEND | FI_RECV | (d->nic->rma ? (cuda ? FI_REMOTE_READ : FI_READ) : 0);
  attr.requested_key = (d->mrMode & FI_MR_PROV_KEY) ? 0 : ++d->nextKey;
  attr.iface = FI_HMEM_SYSTEM;
  if (cuda) {
    attr.iface = FI_HMEM_CUDA;
    if (net_ofi_cuda_device(data, &attr.device.cuda) != 0) {
      OFI_WARN("%s: regMr: %p is not a CUDA pointer libcuda knows", d->nic->name, data);
      free(mr);
      return ncclInvalidArgument;
    }
  }
  int rc = fi_mr_regattr(d->domain, &attr, 0, &mr->mr);
  if (rc != 0) {
    OFI_WARN("%s: fi_mr_regattr(%p, %zu) failed: %s", d->nic->name, data, size, fi_strerror(-rc));
    free(mr);
    return ncclSystemError;
  }
  if (d->mrMode & FI_MR_ENDPOINT) {
    rc = fi_mr_bind(mr->mr, &d->ep->fid, 0);
    if (rc == 0) rc = fi_mr_enable(mr->mr);
    if (rc != 0) {
      OFI_WARN("%s: binding a memory region to the endpoint failed: %s", d->nic->name, fi_strerror(-rc));
      fi_close(&mr->mr->fid);
      free(mr);
      return ncclSystemError;
    }
  }
  mr->desc = fi_mr_desc(mr->mr);
  OFI_LOG(NCCL_LOG_TRACE, NCCL_NET, "%s: registered %p (%zu bytes%s), key %llu", d->nic->name, data, size,
          cuda ? ", CUDA" : "", (unsigned long long)fi_mr_key(mr->mr));
  *out = mr;
  return ncclSuccess;
}

void net_ofi_mr_deregister(net_ofi_dev_t* d, net_ofi_mr_t* mr) {
  (void)d;
  if (!mr) return;
  if (mr->mr) fi_close(&mr->mr->fid);
  free(mr);
}

/* Send and recv comms only: a listen comm has no peer to register for. */
static net_ofi_dev_t* net_ofi_comm_dev(void* comm) {
  net_ofi_obj_t* o = comm;
  return o && (o->type == OFI_OBJ_SEND || o->type == OFI_OBJ_RECV) ? o->dev : NULL;
}

ncclResult_t net_ofi_reg_mr(void* comm, void* data, size_t size, int type, void** mhandle) {
  net_ofi_dev_t* d = net_ofi_comm_dev(comm);
  if (!d || !mhandle) {
    OFI_WARN("regMr: NULL comm or mhandle");
    return ncclInvalidArgument;
  }
  net_ofi_mr_t* mr = NULL;
  pthread_mutex_lock(&d->lock);
  ncclResult_t res = net_ofi_mr_register(d, data, size, type, &mr);
  pthread_mutex_unlock(&d->lock);
  if (res == ncclSuccess) *mhandle = mr;
  return res;
}

/* libfabric 1.17 has no dma-buf registration: we do not report
 * NCCL_PTR_DMABUF, so an fd here is a caller's mistake. */
ncclResult_t net_ofi_reg_mr_dmabuf(void* comm, void* data, size_t size, int type, uint64_t offset, int fd,
                                   void** mhandle) {
  (void)offset;
  if (type == NCCL_PTR_DMABUF || fd >= 0) {
    OFI_WARN("regMrDmaBuf: dma-buf registration not supported (ptrSupport has no NCCL_PTR_DMABUF)");
    return ncclInvalidArgument;
  }
  return net_ofi_reg_mr(comm, data, size, type, mhandle);
}

ncclResult_t net_ofi_dereg_mr(void* comm, void* mhandle) {
  net_ofi_dev_t* d = net_ofi_comm_dev(comm);
  if (!d) {
    OFI_WARN("deregMr: NULL comm");
    return ncclInvalidArgument;
  }
  if (!mhandle) return ncclSuccess;
  pthread_mutex_lock(&d->lock);
  net_ofi_mr_deregister(d, mhandle);
  pthread_mutex_unlock(&d->lock);
  return ncclSuccess;
}
