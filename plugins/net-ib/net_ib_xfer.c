/* The data path (see net_ib.h): irecv posts receive WRs for the immediates
 * and writes its buffers into the sender's FIFO; isend waits for its slot,
 * matches its tag there, and once every send of the slot is in, writes them
 * all; test polls the comm's CQ. A peer whose handshake socket closes, or a
 * failed completion, fails the comm: test returns ncclRemoteError. */
#include <endian.h>
#include <string.h>

#include "net_ib.h"

#define IB_ALIVE_CHECK_MS 100

static int64_t net_ib_now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static net_ib_req_t* net_ib_req_get(net_ib_comm_t* c, int type) {
  int i = net_ib_pool_get(&c->pool);
  if (i < 0) return NULL;
  net_ib_req_t* r = &c->reqs[i];
  memset(r, 0, sizeof(*r));
  r->index = i;
  r->comm = c;
  r->type = type;
  return r;
}

static void net_ib_req_put(net_ib_req_t* r) { net_ib_pool_put(&r->comm->pool, r->index); }

static void net_ib_fail(net_ib_comm_t* c, int why, const char* what) {
  if (c->failed) return;
  c->failed = why;
  IB_WARN("%s:%d: %s comm failed: %s", c->dev->name, c->dev->port, c->type == IB_COMM_SEND ? "send" : "recv", what);
}

/* Reads the CQ and credits each completion to its request. */
static void net_ib_poll(net_ib_comm_t* c) {
  struct ibv_wc wcs[16];
  int n = ibv_poll_cq(c->cq, 16, wcs);
  if (n < 0) net_ib_fail(c, -1, "ibv_poll_cq failed");
  for (int i = 0; i < n; i++) {
    struct ibv_wc* wc = &wcs[i];
    net_ib_req_t* r = (net_ib_req_t*)(uintptr_t)wc->wr_id;
    if (wc->status != IBV_WC_SUCCESS) {
      if (r && !r->err) r->err = wc->status;
      net_ib_fail(c, wc->status, ibv_wc_status_str(wc->status));
      continue;
    }
    if (!r) continue; /* a FIFO write */
    if (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
      if (r->n == 1) r->sizes[0] = (int)be32toh(wc->imm_data);
      r->events--;
    } else if (r->type == IB_REQ_SEND) {
      if (--r->groupEvents == 0)
        for (int g = 0; g < r->ngroup; g++) r->group[g]->events = 0;
    } else {
      r->events--; /* flush read */
    }
  }
}

/* Failed, or found the peer gone (checked every IB_ALIVE_CHECK_MS). */
static int net_ib_broken(net_ib_comm_t* c) {
  if (c->failed) return 1;
  int64_t now = net_ib_now_ms();
  if (now - c->lastAliveMs < IB_ALIVE_CHECK_MS) return 0;
  c->lastAliveMs = now;
  if (c->fd >= 0 && net_ib_sock_alive(c->fd) != 0) net_ib_fail(c, -1, "the peer closed its connection (process gone?)");
  return c->failed != 0;
}

/* All sends of a slot are in: write them, split over the QPs. */
static ncclResult_t net_ib_send_slot(net_ib_comm_t* c, int slot, int nreqs) {
  volatile net_ib_fifo_elem_t* elems = c->fifo + (size_t)slot * IB_MAX_RECVS;
  net_ib_req_t* first = c->slotReqs[0];
  for (int r = 0; r < nreqs; r++) c->sizesOut[slot * IB_MAX_RECVS + r] = (int32_t)c->slotReqs[r]->size;
  for (int q = 0; q < c->nqps; q++) {
    struct ibv_send_wr wrs[IB_MAX_RECVS + 2];
    struct ibv_sge sges[IB_MAX_RECVS + 1];
    int nwr = 0;
    memset(wrs, 0, sizeof(wrs));
    for (int r = 0; r < nreqs; r++) {
      net_ib_req_t* req = c->slotReqs[r];
      size_t off, len;
      net_ib_split(req->size, c->nqps, q, &off, &len);
      if (!len) continue;
      sges[nwr] = (struct ibv_sge){(uint64_t)(uintptr_t)req->data + off, (uint32_t)len, req->lkey};
      wrs[nwr].opcode = IBV_WR_RDMA_WRITE;
      wrs[nwr].sg_list = &sges[nwr], wrs[nwr].num_sge = 1;
      wrs[nwr].wr.rdma.remote_addr = elems[req->elem].addr + off;
      wrs[nwr].wr.rdma.rkey = elems[req->elem].rkey;
      nwr++;
    }
    if (nreqs > 1 && q == 0) { /* sizes before the immediate, on the same QP: they land first */
      sges[nwr] = (struct ibv_sge){(uint64_t)(uintptr_t)&c->sizesOut[slot * IB_MAX_RECVS],
                                   (uint32_t)(nreqs * sizeof(int32_t)), c->sizesOutMr->lkey};
      wrs[nwr].opcode = IBV_WR_RDMA_WRITE;
      wrs[nwr].sg_list = &sges[nwr], wrs[nwr].num_sge = 1;
      wrs[nwr].wr.rdma.remote_addr = c->remSizesAddr + net_ib_sizes_offset(c->fifoHead, 0);
      wrs[nwr].wr.rdma.rkey = c->remSizesRkey;
      nwr++;
    }
    wrs[nwr].opcode = IBV_WR_RDMA_WRITE_WITH_IMM; /* empty: completes one receive WR */
    wrs[nwr].imm_data = htobe32(nreqs == 1 ? (uint32_t)first->size : 0);
    wrs[nwr].wr.rdma.remote_addr = elems[0].addr;
    wrs[nwr].wr.rdma.rkey = elems[0].rkey;
    wrs[nwr].send_flags = IBV_SEND_SIGNALED;
    wrs[nwr].wr_id = (uint64_t)(uintptr_t)first;
    nwr++;
    for (int w = 0; w + 1 < nwr; w++) wrs[w].next = &wrs[w + 1];
    struct ibv_send_wr* bad = NULL;
    int rc = ibv_post_send(c->qps[q], wrs, &bad);
    if (rc != 0) {
      net_ib_fail(c, -1, "ibv_post_send failed");
      return ncclSystemError;
    }
  }
  first->ngroup = nreqs;
  first->groupEvents = c->nqps;
  for (int r = 0; r < nreqs; r++) first->group[r] = c->slotReqs[r], c->slotReqs[r] = NULL;
  c->fifoHead++;
  return ncclSuccess;
}

ncclResult_t net_ib_isend(void* sendComm, void* data, size_t size, int tag, void* mhandle, void* phandle,
                          void** request) {
  (void)phandle;
  net_ib_comm_t* c = sendComm;
  net_ib_mr_entry_t* mr = mhandle;
  if (!c || c->type != IB_COMM_SEND || !request || (size && (!data || !mr)) || size > (size_t)MAX_NET_SIZE) {
    IB_WARN("isend: bad arguments (comm %p, data %p, size %zu, mhandle %p)", sendComm, data, size, mhandle);
    return ncclInvalidArgument;
  }
  *request = NULL;
  if (net_ib_broken(c)) return ncclRemoteError;
  int slot = net_ib_fifo_slot(c->fifoHead);
  volatile net_ib_fifo_elem_t* elems = c->fifo + (size_t)slot * IB_MAX_RECVS;
  uint64_t idx = net_ib_fifo_idx(c->fifoHead);
  if (__atomic_load_n(&elems[0].idx, __ATOMIC_ACQUIRE) != idx) return ncclSuccess; /* receiver not there yet */
  int nreqs = (int)elems[0].nreqs;
  if (nreqs < 1 || nreqs > IB_MAX_RECVS) {
    net_ib_fail(c, -1, "corrupted FIFO entry");
    return ncclSystemError;
  }
  for (int r = 1; r < nreqs; r++)
    if (__atomic_load_n(&elems[r].idx, __ATOMIC_ACQUIRE) != idx) return ncclSuccess; /* still landing */
  int match = -1;
  for (int r = 0; r < nreqs && match < 0; r++) {
    int taken = 0;
    for (int k = 0; k < IB_MAX_RECVS; k++) taken |= c->slotReqs[k] && c->slotReqs[k]->elem == r;
    if (!taken && (int)elems[r].tag == tag) match = r;
  }
  if (match < 0) {
    IB_WARN("isend: tag %d is not among the %d receive(s) the peer posted", tag, nreqs);
    return ncclInvalidUsage;
  }
  if (size > elems[match].size) {
    IB_WARN("isend: %zu bytes into a %llu-byte receive (tag %d): truncated", size,
            (unsigned long long)elems[match].size, tag);
    return ncclInvalidUsage;
  }
  net_ib_req_t* req = net_ib_req_get(c, IB_REQ_SEND);
  if (!req) return ncclSuccess; /* the window is full: try again */
  req->data = data;
  req->size = size;
  req->lkey = mr ? mr->lkey : 0;
  req->elem = match;
  req->events = 1;
  req->n = 1;
  req->sizes[0] = (int)size;
  int have = 0; /* the slot's sends so far, packed from 0 */
  while (c->slotReqs[have]) have++;
  c->slotReqs[have++] = req;
  if (have == nreqs) {
    ncclResult_t res = net_ib_send_slot(c, slot, nreqs);
    if (res != ncclSuccess) return res;
  }
  *request = req;
  return ncclSuccess;
}

ncclResult_t net_ib_irecv(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                          void** phandles, void** request) {
  (void)phandles;
  net_ib_comm_t* c = recvComm;
  if (!c || c->type != IB_COMM_RECV || !request || n < 1 || n > IB_MAX_RECVS || !data || !sizes || !tags) {
    IB_WARN("irecv: bad arguments (comm %p, n %d)", recvComm, n);
    return ncclInvalidArgument;
  }
  *request = NULL;
  if (net_ib_broken(c)) return ncclRemoteError;
  int slot = net_ib_fifo_slot(c->fifoTail);
  if (c->slotReq[slot]) return ncclSuccess; /* its previous use is still out */
  net_ib_req_t* req = net_ib_req_get(c, IB_REQ_RECV);
  if (!req) return ncclSuccess;
  req->n = n;
  req->seq = c->fifoTail;
  req->events = c->nqps;
  for (int q = 0; q < c->nqps; q++) {
    struct ibv_recv_wr wr = {.wr_id = (uint64_t)(uintptr_t)req, .sg_list = NULL, .num_sge = 0};
    struct ibv_recv_wr* bad;
    if (ibv_post_recv(c->qps[q], &wr, &bad) != 0) {
      net_ib_fail(c, -1, "ibv_post_recv failed");
      return ncclSystemError; /* the comm is unusable now: the request stays out */
    }
  }
  net_ib_fifo_elem_t* elems = c->fifoOut + (size_t)slot * IB_MAX_RECVS;
  for (int i = 0; i < n; i++) {
    net_ib_mr_entry_t* mr = mhandles ? mhandles[i] : NULL;
    elems[i] = (net_ib_fifo_elem_t){.addr = (uint64_t)(uintptr_t)data[i], .size = sizes[i], .rkey = mr ? mr->rkey : 0,
                                    .nreqs = (uint32_t)n, .tag = (uint32_t)tags[i], .idx = net_ib_fifo_idx(c->fifoTail)};
  }
  struct ibv_sge sge = {(uint64_t)(uintptr_t)elems, (uint32_t)(n * sizeof(*elems)), c->fifoOutMr->lkey};
  struct ibv_send_wr wr;
  memset(&wr, 0, sizeof(wr));
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.sg_list = &sge, wr.num_sge = 1;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = c->remFifoAddr + net_ib_fifo_offset(c->fifoTail, 0);
  wr.wr.rdma.rkey = c->remFifoRkey;
  struct ibv_send_wr* bad;
  if (ibv_post_send(c->qps[0], &wr, &bad) != 0) {
    net_ib_fail(c, -1, "posting the FIFO write failed");
    return ncclSystemError;
  }
  c->slotReq[slot] = req;
  c->fifoTail++;
  *request = req;
  return ncclSuccess;
}

/* GPUDirect: data the NIC wrote is visible to the GPU once a read through
 * the same path completes. Host memory needs nothing: NULL request. */
ncclResult_t net_ib_iflush(void* recvComm, int n, void** data, int* sizes, void** mhandles, void** request) {
  net_ib_comm_t* c = recvComm;
  if (!c || c->type != IB_COMM_RECV || !request || n < 0 || n > IB_MAX_RECVS) {
    IB_WARN("iflush: bad arguments (comm %p, n %d)", recvComm, n);
    return ncclInvalidArgument;
  }
  *request = NULL;
  int last = -1;
  for (int i = 0; i < n && data && sizes && mhandles; i++) {
    net_ib_mr_entry_t* mr = mhandles[i];
    if (mr && mr->kind != NCCL_PTR_HOST && sizes[i] > 0) last = i;
  }
  if (last < 0 || !c->flushQp) return ncclSuccess;
  if (net_ib_broken(c)) return ncclRemoteError;
  net_ib_req_t* req = net_ib_req_get(c, IB_REQ_FLUSH);
  if (!req) return ncclSuccess;
  req->events = 1;
  net_ib_mr_entry_t* mr = mhandles[last];
  struct ibv_sge sge = {(uint64_t)(uintptr_t)c->flushBuf, 1, c->flushMr->lkey};
  struct ibv_send_wr wr;
  memset(&wr, 0, sizeof(wr));
  wr.opcode = IBV_WR_RDMA_READ;
  wr.sg_list = &sge, wr.num_sge = 1;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr_id = (uint64_t)(uintptr_t)req;
  wr.wr.rdma.remote_addr = (uint64_t)(uintptr_t)data[last];
  wr.wr.rdma.rkey = mr->rkey;
  struct ibv_send_wr* bad;
  if (ibv_post_send(c->flushQp, &wr, &bad) != 0) {
    net_ib_req_put(req);
    net_ib_fail(c, -1, "posting the flush read failed");
    return ncclSystemError;
  }
  *request = req;
  return ncclSuccess;
}

ncclResult_t net_ib_test(void* request, int* done, int* sizes) {
  net_ib_req_t* r = request;
  if (!r || !done || !r->comm || !(r->comm->pool.used & (1u << r->index))) {
    IB_WARN("test: not a request in use (%p)", request);
    return ncclInvalidArgument;
  }
  net_ib_comm_t* c = r->comm;
  *done = 0;
  if (r->events > 0) net_ib_poll(c);
  if (r->err) {
    IB_WARN("%s:%d: request failed: %s", c->dev->name, c->dev->port, ibv_wc_status_str((enum ibv_wc_status)r->err));
    return ncclRemoteError;
  }
  if (r->events > 0) return net_ib_broken(c) ? ncclRemoteError : ncclSuccess;
  if (r->type == IB_REQ_RECV) {
    int slot = net_ib_fifo_slot(r->seq);
    if (r->n > 1)
      for (int i = 0; i < r->n; i++)
        r->sizes[i] = __atomic_load_n(&c->sizes[slot * IB_MAX_RECVS + i], __ATOMIC_ACQUIRE);
    c->slotReq[slot] = NULL;
  }
  if (sizes)
    for (int i = 0; i < r->n; i++) sizes[i] = r->sizes[i];
  net_ib_req_put(r);
  *done = 1;
  return ncclSuccess;
}
