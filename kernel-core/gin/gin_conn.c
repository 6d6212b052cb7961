/* Connections between engines: one send comm and one receive comm per
 * peer, through the net plugin's ABI alone. Every rank listens once per
 * peer, so an accepted comm is known to come from that peer; the handles
 * go around in one allgather; then connects and accepts are driven side
 * by side (both are non-blocking) until all are up, MKCCL_CONNECT_TIMEOUT
 * or the abort flag. Staging is memory both the thread and the net plugin
 * reach, registered with each comm. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/err.h"
#include "base/param.h"
#include "gin/gin_internal.h"

static double conn_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static ncclResult_t conn_listen_all(gin_engine_t* e, char* handles) {
  const gin_config_t* c = &e->cfg;
  for (int p = 0; p < c->nRanks; p++) {
    if (p == c->rank) continue;
    char* h = handles + ((size_t)c->rank * c->nRanks + p) * NCCL_NET_HANDLE_MAXSIZE;
    ncclResult_t r = c->net->listen(c->netCtx, c->netDev, h, &e->peers[p].listenComm);
    if (r != ncclSuccess)
      return MK_FAIL(r, "GIN: rank %d: listening on net device %d for rank %d failed", c->rank, c->netDev, p);
  }
  return ncclSuccess;
}

static ncclResult_t conn_join_all(gin_engine_t* e, char* handles) {
  const gin_config_t* c = &e->cfg;
  int64_t timeout = param_MKCCL_CONNECT_TIMEOUT();
  double start = conn_now();
  for (;;) {
    int missing = 0;
    for (int p = 0; p < c->nRanks; p++) {
      gin_peer_t* peer = &e->peers[p];
      if (p == c->rank) continue;
      ncclNetDeviceHandle_v12_t* dev = NULL;
      if (!peer->sendComm) {
        char* h = handles + ((size_t)p * c->nRanks + c->rank) * NCCL_NET_HANDLE_MAXSIZE;
        ncclResult_t r = c->net->connect(c->netCtx, c->netDev, h, &peer->sendComm, &dev);
        if (r != ncclSuccess) return MK_FAIL(r, "GIN: rank %d: connecting to rank %d failed", c->rank, p);
      }
      if (!peer->recvComm) {
        ncclResult_t r = c->net->accept(peer->listenComm, &peer->recvComm, &dev);
        if (r != ncclSuccess) return MK_FAIL(r, "GIN: rank %d: accepting rank %d failed", c->rank, p);
      }
      missing += !peer->sendComm + !peer->recvComm;
    }
    if (!missing) return ncclSuccess;
    if (c->abortFlag && __atomic_load_n(c->abortFlag, __ATOMIC_ACQUIRE))
      return MK_FAIL(ncclInvalidUsage, "GIN: rank %d aborted while connecting", c->rank);
    if (timeout > 0 && conn_now() - start > (double)timeout)
      return MK_FAIL(ncclRemoteError, "GIN: rank %d: %d connections still down after %llds (MKCCL_CONNECT_TIMEOUT)",
                     c->rank, missing, (long long)timeout);
    struct timespec ts = {0, 200000};
    nanosleep(&ts, NULL);
  }
}

static ncclResult_t conn_staging(gin_engine_t* e, gin_peer_t* peer, int p) {
  const gin_config_t* c = &e->cfg;
  void* dev;
  ncclResult_t r = c->mem.shared_alloc(c->mem.ctx, GIN_SENDS * e->slotBytes, (void**)&peer->sendBuf, &dev);
  if (r == ncclSuccess) r = c->mem.shared_alloc(c->mem.ctx, GIN_RECVS * e->slotBytes, (void**)&peer->recvBuf, &dev);
  if (r != ncclSuccess) return r;
  r = c->net->regMr(peer->sendComm, peer->sendBuf, GIN_SENDS * e->slotBytes, NCCL_PTR_HOST, &peer->sendMh);
  if (r != ncclSuccess) return MK_FAIL(r, "GIN: rank %d: registering staging for rank %d failed", c->rank, p);
  r = c->net->regMr(peer->recvComm, peer->recvBuf, GIN_RECVS * e->slotBytes, NCCL_PTR_HOST, &peer->recvMh);
  if (r != ncclSuccess) return MK_FAIL(r, "GIN: rank %d: registering staging from rank %d failed", c->rank, p);
  return ncclSuccess;
}

ncclResult_t gin_conn_setup(gin_engine_t* e) {
  const gin_config_t* c = &e->cfg;
  if (!(e->peers = calloc((size_t)c->nRanks, sizeof(gin_peer_t)))) return MK_FAIL(ncclSystemError, "GIN: out of memory");
  if (c->nRanks == 1) return ncclSuccess;
  if (!c->net)
    return MK_FAIL(ncclInvalidUsage, "GIN: rank %d has no net plugin to reach its %d peers", c->rank, c->nRanks - 1);
  char* handles = calloc((size_t)c->nRanks * c->nRanks, NCCL_NET_HANDLE_MAXSIZE);
  if (!handles) return MK_FAIL(ncclSystemError, "GIN: out of memory");
  /* A rank whose listen failed still joins the allgather, so no rank waits on it. */
  ncclResult_t res = conn_listen_all(e, handles);
  ncclResult_t r = bootstrap_allgather(c->bootstrap, handles, (size_t)c->nRanks * NCCL_NET_HANDLE_MAXSIZE);
  if (r != ncclSuccess && res == ncclSuccess) res = MK_FAIL(r, "GIN: rank %d: exchanging net handles failed", c->rank);
  if (res == ncclSuccess) res = conn_join_all(e, handles);
  free(handles);
  for (int p = 0; p < c->nRanks && res == ncclSuccess; p++)
    if (p != c->rank) res = conn_staging(e, &e->peers[p], p);
  return res;
}

void gin_conn_close(gin_engine_t* e) {
  const gin_config_t* c = &e->cfg;
  if (!e->peers) return;
  for (int p = c->nRanks - 1; p >= 0; p--) {
    gin_peer_t* peer = &e->peers[p];
    if (peer->recvMh) c->net->deregMr(peer->recvComm, peer->recvMh);
    if (peer->sendMh) c->net->deregMr(peer->sendComm, peer->sendMh);
    if (peer->recvBuf) c->mem.shared_free(c->mem.ctx, peer->recvBuf);
    if (peer->sendBuf) c->mem.shared_free(c->mem.ctx, peer->sendBuf);
    if (peer->recvComm) c->net->closeRecv(peer->recvComm);
    if (peer->sendComm) c->net->closeSend(peer->sendComm);
    if (peer->listenComm) c->net->closeListen(peer->listenComm);
  }
  free(e->peers);
  e->peers = NULL;
}
