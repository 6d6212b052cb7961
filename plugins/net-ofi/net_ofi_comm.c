/* Comms and the other objects that own operations: creation, completion of
 * their operations, liveness probes, and closing in any state (cancel what
 * can be cancelled, wait a bounded time, else leave a zombie the device
 * frees once the provider has let go). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include "net_ofi.h"

static int64_t net_ofi_elapsed_ms(const struct timespec* since) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (int64_t)(now.tv_sec - since->tv_sec) * 1000 + (now.tv_nsec - since->tv_nsec) / 1000000;
}

ncclResult_t net_ofi_result(int fiErr) {
  switch (fiErr) {
    case 0:
      return ncclSuccess;
    case FI_ENOTCONN:
    case FI_ECONNRESET:
    case FI_ECONNREFUSED:
    case FI_ECONNABORTED:
    case FI_EHOSTUNREACH:
    case FI_ENETUNREACH:
    case FI_ENETDOWN:
    case FI_ETIMEDOUT:
    case FI_ESHUTDOWN:
    case FI_EADDRNOTAVAIL:
      return ncclRemoteError;
    case FI_ETRUNC:
      return ncclInvalidUsage; /* the peer sent more than the receive posted */
    default:
      return ncclSystemError;
  }
}

static void net_ofi_comm_fail(net_ofi_comm_t* c, int err, const char* why) {
  if (c->failed) return;
  c->failed = err;
  OFI_INFO(NCCL_NET, "%s: comm %u: peer considered dead: %s", c->hdr.dev->nic->name, c->id, why);
}

/* The provider refused new work (EAGAIN). A peer that stays unreachable
 * that long is dead: rxm, for one, retries a refused connection forever. */
void net_ofi_comm_stall(net_ofi_comm_t* c) {
  if (!c->stalled) {
    c->stalled = 1;
    clock_gettime(CLOCK_MONOTONIC, &c->stallSince);
  } else if (net_ofi_elapsed_ms(&c->stallSince) >
             __atomic_load_n(&net_ofi_peer_timeout_ms, __ATOMIC_RELAXED)) {
    net_ofi_comm_fail(c, FI_ETIMEDOUT, "the provider took no operation for MKCCL_OFI_PEER_TIMEOUT_MS");
  }
}

ncclResult_t net_ofi_comm_create(net_ofi_dev_t* d, int type, fi_addr_t peer, net_ofi_comm_t** out) {
  net_ofi_comm_t* c = calloc(1, sizeof(*c));
  if (!c) {
    OFI_WARN("out of memory for a comm");
    return ncclSystemError;
  }
  c->hdr.type = type;
  c->hdr.dev = d;
  c->peer = peer;
  c->id = net_ofi_dev_new_id(d);
  clock_gettime(CLOCK_MONOTONIC, &c->lastDone);
  for (int r = 0; r < OFI_MAX_REQUESTS; r++) {
    c->reqs[r].comm = c;
    for (int i = 0; i < OFI_MAX_RECVS; i++) {
      c->reqs[r].ops[i].kind = OFI_OP_DATA;
      c->reqs[r].ops[i].obj = &c->hdr;
      c->reqs[r].ops[i].owner = &c->reqs[r];
      c->reqs[r].ops[i].index = i;
    }
  }
  c->ctrl.kind = OFI_OP_CTRL;
  c->ctrl.obj = &c->hdr;
  c->probe.kind = OFI_OP_PROBE_SEND;
  c->probe.obj = &c->hdr;
  if (d->nic->rma && type == OFI_OBJ_RECV) {
    ncclResult_t res = net_ofi_mr_register(d, &c->flushWord, sizeof(c->flushWord), NCCL_PTR_HOST, &c->flushMr);
    if (res != ncclSuccess) {
      free(c);
      return res;
    }
  }
  *out = c;
  return ncclSuccess;
}

void net_ofi_op_done(net_ofi_op_t* op, int err, size_t len) {
  op->inFlight = 0;
  op->err = err;
  op->len = len;
  net_ofi_obj_t* o = op->obj;
  if (o) o->inFlight--;
  if (o && (o->type == OFI_OBJ_SEND || o->type == OFI_OBJ_RECV)) {
    net_ofi_comm_t* c = (net_ofi_comm_t*)o;
    clock_gettime(CLOCK_MONOTONIC, &c->lastDone);
    if (err && err != FI_ECANCELED && err != FI_ETRUNC) net_ofi_comm_fail(c, err, fi_strerror(err));
  }
  if (op->kind == OFI_OP_DATA || op->kind == OFI_OP_FLUSH) {
    net_ofi_req_t* req = op->owner;
    req->pending--;
    if (err && !req->err) req->err = err;
    if (o && o->type == OFI_OBJ_RECV && op->kind == OFI_OP_DATA) req->sizes[op->index] = (int)len;
  }
}

/* A request that waited probe_ms for its peer sends the peer an empty
 * message: a dead peer makes it fail (ENOTCONN), or never lets it be
 * posted or completed (the stall rule above). */
void net_ofi_comm_probe(net_ofi_comm_t* c) {
  if (c->failed) return;
  if (c->probe.inFlight) {
    if (net_ofi_elapsed_ms(&c->probeSince) > __atomic_load_n(&net_ofi_peer_timeout_ms, __ATOMIC_RELAXED))
      net_ofi_comm_fail(c, FI_ETIMEDOUT, "a probe did not complete within MKCCL_OFI_PEER_TIMEOUT_MS");
    return;
  }
  int64_t ms = __atomic_load_n(&net_ofi_probe_ms, __ATOMIC_RELAXED);
  if (ms <= 0 || net_ofi_elapsed_ms(&c->lastDone) < ms) return;
  net_ofi_dev_t* d = c->hdr.dev;
  int rc = (int)fi_tsend(d->ep, NULL, 0, NULL, c->peer, net_ofi_ctrl_tag(d->nic, OFI_CTRL_PROBE, 0), &c->probe.fctx);
  clock_gettime(CLOCK_MONOTONIC, &c->lastDone);
  if (rc == 0) {
    net_ofi_op_posted(&c->probe);
    c->probeSince = c->lastDone;
    c->stalled = 0;
  } else if (rc == -FI_EAGAIN) {
    net_ofi_comm_stall(c);
  } else {
    net_ofi_comm_fail(c, -rc, fi_strerror(-rc));
  }
}

void net_ofi_obj_free(net_ofi_obj_t* o) {
  if (o->type == OFI_OBJ_SEND || o->type == OFI_OBJ_RECV) {
    net_ofi_comm_t* c = (net_ofi_comm_t*)o;
    net_ofi_mr_deregister(o->dev, c->msgMr);
    net_ofi_mr_deregister(o->dev, c->flushMr);
  }
  net_ofi_obj_extra_free(o);
  free(o);
}

/* Cancels ops (receives cancel; sends run to completion), waits up to
 * 200 ms for the provider to let go, else parks the object as a zombie.
 * Caller holds the lock; the object is gone on return either way. */
void net_ofi_obj_close(net_ofi_obj_t* o, net_ofi_op_t* const* ops, int nops) {
  net_ofi_dev_t* d = o->dev;
  for (int i = 0; i < nops; i++)
    if (ops[i]->inFlight) fi_cancel(&d->ep->fid, &ops[i]->fctx);
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  while (o->inFlight > 0 && net_ofi_elapsed_ms(&start) < 200) {
    if (net_ofi_dev_progress(d) != ncclSuccess) break;
    if (o->inFlight > 0) usleep(100);
  }
  if (o->inFlight > 0) {
    OFI_INFO(NCCL_NET, "%s: closed with %d operation(s) still held by the provider: freed later", d->nic->name,
             o->inFlight);
    o->nextZombie = d->zombies;
    d->zombies = o;
  } else {
    net_ofi_obj_free(o);
  }
}

ncclResult_t net_ofi_close_comm(void* comm, int type) {
  net_ofi_comm_t* c = comm;
  if (!c) return ncclSuccess;
  if (c->hdr.type != type) {
    OFI_WARN("close%s: not a %s comm", type == OFI_OBJ_SEND ? "Send" : "Recv", type == OFI_OBJ_SEND ? "send" : "recv");
    return ncclInvalidArgument;
  }
  net_ofi_dev_t* d = c->hdr.dev;
  net_ofi_op_t* ops[OFI_MAX_REQUESTS * OFI_MAX_RECVS + 2];
  int nops = 0;
  ops[nops++] = &c->ctrl;
  ops[nops++] = &c->probe;
  for (int r = 0; r < OFI_MAX_REQUESTS; r++)
    for (int i = 0; i < OFI_MAX_RECVS; i++) ops[nops++] = &c->reqs[r].ops[i];
  pthread_mutex_lock(&d->lock);
  net_ofi_obj_close(&c->hdr, ops, nops);
  pthread_mutex_unlock(&d->lock);
  net_ofi_dev_release(d);
  return ncclSuccess;
}
