/* The data path: isend/irecv post tagged operations, test reads the CQ.
 * Each comm owns NCCL_NET_MAX_REQUESTS requests; a full pool or a busy
 * provider (EAGAIN) hands back a NULL request, which the caller retries. A
 * grouped receive the provider takes only in part keeps the rest in the
 * comm's backlog, posted before anything newer so tags still match in order. */
#include <string.h>

#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include "net_ofi.h"

static net_ofi_req_t* net_ofi_req_get(net_ofi_comm_t* c) {
  for (int r = 0; r < OFI_MAX_REQUESTS; r++) {
    net_ofi_req_t* req = &c->reqs[r];
    if (!req->used) {
      req->used = 1;
      req->n = req->posted = req->pending = req->err = 0;
      memset(req->sizes, 0, sizeof(req->sizes));
      return req;
    }
  }
  return NULL;
}

static int net_ofi_comm_valid(const net_ofi_comm_t* c, int type) { return c && c->hdr.type == type; }

ncclResult_t net_ofi_isend(void* sendComm, void* data, size_t size, int tag, void* mhandle, void* phandle,
                           void** request) {
  (void)phandle;
  net_ofi_comm_t* c = sendComm;
  if (!net_ofi_comm_valid(c, OFI_OBJ_SEND) || !request || (size > 0 && !data)) {
    OFI_WARN("isend: bad arguments (comm %p, data %p, size %zu, request %p)", sendComm, data, size, (void*)request);
    return ncclInvalidArgument;
  }
  net_ofi_dev_t* d = c->hdr.dev;
  net_ofi_mr_t* mr = mhandle;
  *request = NULL;
  pthread_mutex_lock(&d->lock);
  ncclResult_t res = ncclSuccess;
  net_ofi_req_t* req = NULL;
  if (c->failed) {
    OFI_WARN("%s: isend on a comm whose peer failed: %s", d->nic->name, fi_strerror(c->failed));
    res = net_ofi_result(c->failed);
  } else if ((req = net_ofi_req_get(c)) != NULL) {
    int rc = (int)fi_tsend(d->ep, data, size, mr ? mr->desc : NULL, c->peer, net_ofi_data_tag(d->nic, c->remoteId, tag),
                           &req->ops[0].fctx);
    if (rc == 0) {
      req->n = req->posted = req->pending = 1;
      req->sizes[0] = (int)size;
      net_ofi_op_posted(&req->ops[0]);
      c->stalled = 0;
      *request = req;
    } else {
      req->used = 0;
      if (rc == -FI_EAGAIN) {
        net_ofi_comm_stall(c);
        res = net_ofi_dev_progress(d);
      } else {
        OFI_WARN("%s: fi_tsend(%zu bytes) failed: %s", d->nic->name, size, fi_strerror(-rc));
        res = net_ofi_result(-rc);
      }
    }
  }
  pthread_mutex_unlock(&d->lock);
  return res;
}

/* Posts what is left of req; caller holds the lock. */
static ncclResult_t net_ofi_recv_post(net_ofi_comm_t* c, net_ofi_req_t* req) {
  net_ofi_dev_t* d = c->hdr.dev;
  while (req->posted < req->n) {
    int i = req->posted;
    int rc = (int)fi_trecv(d->ep, req->buf[i], req->len[i], req->desc[i], FI_ADDR_UNSPEC, req->tag[i], 0,
                           &req->ops[i].fctx);
    if (rc == -FI_EAGAIN) {
      net_ofi_comm_stall(c);
      break;
    }
    if (rc != 0) {
      OFI_WARN("%s: fi_trecv(%zu bytes) failed: %s", d->nic->name, req->len[i], fi_strerror(-rc));
      return net_ofi_result(-rc);
    }
    c->stalled = 0;
    net_ofi_op_posted(&req->ops[i]);
    req->posted++;
    req->pending++;
  }
  c->backlog = req->posted < req->n ? req : NULL;
  return ncclSuccess;
}

ncclResult_t net_ofi_irecv(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                           void** phandles, void** request) {
  (void)phandles;
  net_ofi_comm_t* c = recvComm;
  if (!net_ofi_comm_valid(c, OFI_OBJ_RECV) || !request || n < 1 || n > OFI_MAX_RECVS || !data || !sizes || !tags) {
    OFI_WARN("irecv: bad arguments (comm %p, n %d, request %p)", recvComm, n, (void*)request);
    return ncclInvalidArgument;
  }
  for (int i = 0; i < n; i++)
    if (sizes[i] > 0 && !data[i]) {
      OFI_WARN("irecv: receive %d has NULL data and size %zu", i, sizes[i]);
      return ncclInvalidArgument;
    }
  net_ofi_dev_t* d = c->hdr.dev;
  *request = NULL;
  pthread_mutex_lock(&d->lock);
  ncclResult_t res = ncclSuccess;
  if (c->failed) {
    OFI_WARN("%s: irecv on a comm whose peer failed: %s", d->nic->name, fi_strerror(c->failed));
    res = net_ofi_result(c->failed);
    goto out;
  }
  if (c->backlog && (res = net_ofi_recv_post(c, c->backlog)) != ncclSuccess) goto out;
  net_ofi_req_t* req = c->backlog ? NULL : net_ofi_req_get(c);
  if (!req) goto out;
  req->n = n;
  for (int i = 0; i < n; i++) {
    net_ofi_mr_t* mr = mhandles ? mhandles[i] : NULL;
    req->buf[i] = data[i];
    req->len[i] = sizes[i];
    req->desc[i] = mr ? mr->desc : NULL;
    req->tag[i] = net_ofi_data_tag(d->nic, c->id, tags[i]);
  }
  res = net_ofi_recv_post(c, req);
  if (res == ncclSuccess && req->posted == 0) { /* the provider took nothing: the caller retries */
    c->backlog = NULL;
    req->used = 0;
    res = net_ofi_dev_progress(d);
  } else if (res == ncclSuccess) {
    *request = req;
  } else if (req->posted == 0) {
    req->used = 0;
  }
out:
  pthread_mutex_unlock(&d->lock);
  return res;
}

/* Data a GPU received through the NIC is visible to the GPU once a read
 * through the same path completes: read the last buffer into a host word. */
ncclResult_t net_ofi_iflush(void* recvComm, int n, void** data, int* sizes, void** mhandles, void** request) {
  net_ofi_comm_t* c = recvComm;
  if (!net_ofi_comm_valid(c, OFI_OBJ_RECV) || !request || n < 0 || n > OFI_MAX_RECVS) {
    OFI_WARN("iflush: bad arguments (comm %p, n %d)", recvComm, n);
    return ncclInvalidArgument;
  }
  *request = NULL;
  net_ofi_dev_t* d = c->hdr.dev;
  int last = -1;
  for (int i = 0; i < n && mhandles && data && sizes; i++) {
    net_ofi_mr_t* mr = mhandles[i];
    if (mr && mr->cuda && mr->mr && sizes[i] > 0) last = i;
  }
  if (last < 0 || !d->nic->rma) return ncclSuccess; /* host memory: nothing to flush */
  net_ofi_mr_t* mr = mhandles[last];
  uint64_t addr = (d->mrMode & FI_MR_VIRT_ADDR) ? (uint64_t)(uintptr_t)data[last]
                                                : (uint64_t)((char*)data[last] - (char*)mr->base);
  pthread_mutex_lock(&d->lock);
  ncclResult_t res = ncclSuccess;
  net_ofi_req_t* req = net_ofi_req_get(c);
  if (req) {
    req->ops[0].kind = OFI_OP_FLUSH;
    int rc = (int)fi_read(d->ep, &c->flushWord, sizeof(c->flushWord), c->flushMr ? c->flushMr->desc : NULL, d->self,
                          addr, fi_mr_key(mr->mr), &req->ops[0].fctx);
    if (rc == 0) {
      req->n = req->posted = req->pending = 1;
      net_ofi_op_posted(&req->ops[0]);
      *request = req;
    } else {
      req->ops[0].kind = OFI_OP_DATA;
      req->used = 0;
      if (rc != -FI_EAGAIN) {
        OFI_WARN("%s: flush read failed: %s", d->nic->name, fi_strerror(-rc));
        res = ncclSystemError;
      }
    }
  }
  pthread_mutex_unlock(&d->lock);
  return res;
}

ncclResult_t net_ofi_test(void* request, int* done, int* sizes) {
  net_ofi_req_t* req = request;
  if (!req || !done || !req->used || !req->comm) {
    OFI_WARN("test: not a request in use (%p)", request);
    return ncclInvalidArgument;
  }
  net_ofi_comm_t* c = req->comm;
  net_ofi_dev_t* d = c->hdr.dev;
  *done = 0;
  pthread_mutex_lock(&d->lock);
  ncclResult_t res = ncclSuccess;
  if (c->backlog) res = net_ofi_recv_post(c, c->backlog);
  if (res == ncclSuccess && (req->pending > 0 || req->posted < req->n)) res = net_ofi_dev_progress(d);
  if (res != ncclSuccess) goto out;
  if (req->pending == 0 && req->posted == req->n) {
    if (req->err) {
      OFI_WARN("%s: %s failed: %s", d->nic->name, c->hdr.type == OFI_OBJ_SEND ? "send" : "receive",
               fi_strerror(req->err));
      res = net_ofi_result(req->err);
    } else if (sizes) {
      for (int i = 0; i < req->n; i++) sizes[i] = req->sizes[i];
    }
    req->ops[0].kind = OFI_OP_DATA;
    req->used = 0;
    if (res == ncclSuccess) *done = 1;
  } else if (c->failed) {
    OFI_WARN("%s: the peer of this comm failed: %s", d->nic->name, fi_strerror(c->failed));
    res = net_ofi_result(c->failed);
  } else {
    net_ofi_comm_probe(c);
  }
out:
  pthread_mutex_unlock(&d->lock);
  return res;
}
