/* A connection's verbs objects: one CQ, nqps RC QPs, the FIFO the peer
 * writes into and what we write from, and on the receive side a QP
 * connected to itself for GPUDirect flush reads. Created before the
 * handshake (its QPNs and rkeys go into our frame), connected after. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "net_ib.h"

#define IB_FIFO_BYTES ((size_t)IB_MAX_REQUESTS * IB_MAX_RECVS * sizeof(net_ib_fifo_elem_t))
#define IB_SIZES_BYTES ((size_t)IB_MAX_REQUESTS * IB_MAX_RECVS * sizeof(int32_t))

static void* net_ib_zalloc(size_t size) {
  void* p = NULL;
  if (posix_memalign(&p, 4096, size) != 0) return NULL;
  memset(p, 0, size);
  return p;
}

static struct ibv_mr* net_ib_comm_reg(net_ib_dev_t* d, void* buf, size_t size, int access) {
  struct ibv_mr* mr = buf ? ibv_reg_mr(d->pd, buf, size, access) : NULL;
  if (!mr) IB_WARN("%s:%d: registering %zu bytes of connection state failed: %s", d->name, d->port, size, strerror(errno));
  return mr;
}

void net_ib_comm_destroy(net_ib_comm_t* c) {
  if (!c) return;
  if (c->flushQp) ibv_destroy_qp(c->flushQp);
  for (int q = 0; q < c->nqps; q++)
    if (c->qps[q]) ibv_destroy_qp(c->qps[q]);
  if (c->cq) ibv_destroy_cq(c->cq);
  struct ibv_mr* mrs[] = {c->fifoMr, c->sizesOutMr, c->sizesMr, c->fifoOutMr, c->flushMr};
  for (size_t i = 0; i < sizeof(mrs) / sizeof(mrs[0]); i++)
    if (mrs[i]) ibv_dereg_mr(mrs[i]);
  free(c->fifo);
  free(c->sizesOut);
  free(c->sizes);
  free(c->fifoOut);
  free(c->flushBuf);
  if (c->fd >= 0) close(c->fd);
  free(c);
}

ncclResult_t net_ib_comm_create(net_ib_dev_t* d, int type, int nqps, net_ib_comm_t** out) {
  net_ib_comm_t* c = calloc(1, sizeof(*c));
  if (!c) {
    IB_WARN("out of memory for a comm");
    return ncclSystemError;
  }
  c->type = type;
  c->dev = d;
  c->fd = -1;
  c->nqps = nqps;
  for (int r = 0; r < IB_MAX_REQUESTS; r++) c->reqs[r].index = r, c->reqs[r].comm = c;
  uint32_t psn = 0;
  if (getrandom(&psn, sizeof(psn), 0) != (ssize_t)sizeof(psn)) psn = (uint32_t)getpid();
  c->psn = psn & 0xffffff;
  int cqe = 2 * IB_MAX_REQUESTS * (nqps + 2);
  c->cq = ibv_create_cq(d->ctx, cqe, NULL, NULL, 0);
  if (!c->cq) {
    IB_WARN("%s:%d: ibv_create_cq(%d) failed: %s", d->name, d->port, cqe, strerror(errno));
    goto fail;
  }
  int flush = type == IB_COMM_RECV && (d->gdr || d->dmabuf) && !net_ib_param_NCCL_IB_GDR_FLUSH_DISABLE();
  for (int q = 0; q < nqps; q++)
    if (net_ib_qp_create(d, c->cq, type == IB_COMM_RECV ? IB_MAX_REQUESTS : 1, &c->qps[q]) != ncclSuccess) goto fail;
  if (type == IB_COMM_SEND) {
    c->fifo = net_ib_zalloc(IB_FIFO_BYTES);
    c->sizesOut = net_ib_zalloc(IB_SIZES_BYTES);
    if (!(c->fifoMr = net_ib_comm_reg(d, c->fifo, IB_FIFO_BYTES, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)))
      goto fail;
    if (!(c->sizesOutMr = net_ib_comm_reg(d, c->sizesOut, IB_SIZES_BYTES, IBV_ACCESS_LOCAL_WRITE))) goto fail;
  } else {
    c->sizes = net_ib_zalloc(IB_SIZES_BYTES);
    c->fifoOut = net_ib_zalloc(IB_FIFO_BYTES);
    if (!(c->sizesMr = net_ib_comm_reg(d, c->sizes, IB_SIZES_BYTES, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)))
      goto fail;
    if (!(c->fifoOutMr = net_ib_comm_reg(d, c->fifoOut, IB_FIFO_BYTES, IBV_ACCESS_LOCAL_WRITE))) goto fail;
    if (flush) {
      c->flushBuf = net_ib_zalloc(64);
      if (!(c->flushMr = net_ib_comm_reg(d, c->flushBuf, 64, IBV_ACCESS_LOCAL_WRITE))) goto fail;
      if (net_ib_qp_create(d, c->cq, 1, &c->flushQp) != ncclSuccess) goto fail;
    }
  }
  *out = c;
  return ncclSuccess;
fail:
  net_ib_comm_destroy(c);
  return ncclSystemError;
}

void net_ib_comm_meta(net_ib_comm_t* c, net_ib_meta_t* m) {
  net_ib_meta_local(c->dev, m);
  m->type = c->type == IB_COMM_SEND ? IB_META_SENDER : IB_META_RECEIVER;
  m->nqps = (uint16_t)c->nqps;
  m->psn = c->psn;
  for (int q = 0; q < c->nqps; q++) m->qpn[q] = c->qps[q]->qp_num;
  m->addr = (uint64_t)(uintptr_t)(c->type == IB_COMM_SEND ? (void*)c->fifo : (void*)c->sizes);
  m->rkey = c->type == IB_COMM_SEND ? c->fifoMr->rkey : c->sizesMr->rkey;
}

ncclResult_t net_ib_comm_connect_qps(net_ib_comm_t* c, const net_ib_meta_t* remote, int trafficClass) {
  net_ib_dev_t* d = c->dev;
  if (remote->linkLayer != d->linkLayer || remote->nqps != c->nqps) {
    IB_WARN("%s:%d: peer has %s and %u QPs, we have %s and %d", d->name, d->port,
            remote->linkLayer == IB_LINK_ETH ? "RoCE" : "IB", remote->nqps, d->linkLayer == IB_LINK_ETH ? "RoCE" : "IB",
            c->nqps);
    return ncclSystemError;
  }
  for (int q = 0; q < c->nqps; q++) {
    ncclResult_t res = net_ib_qp_connect(d, c->qps[q], c->psn, remote, remote->qpn[q], trafficClass);
    if (res != ncclSuccess) return res;
  }
  if (c->type == IB_COMM_SEND) {
    c->remSizesAddr = remote->addr;
    c->remSizesRkey = remote->rkey;
  } else {
    c->remFifoAddr = remote->addr;
    c->remFifoRkey = remote->rkey;
  }
  if (c->flushQp) { /* reads of our own memory: a QP talking to itself */
    net_ib_meta_t self;
    net_ib_meta_local(d, &self);
    self.psn = c->psn;
    return net_ib_qp_connect(d, c->flushQp, c->psn, &self, c->flushQp->qp_num, trafficClass);
  }
  return ncclSuccess;
}
