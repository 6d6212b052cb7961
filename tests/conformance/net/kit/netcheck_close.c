/* Closing in every state: a listen nobody connected to, a listen with a
 * connection it never accepted, comms with receives still in flight. Each
 * close must return and the processes must end: the referee catches hangs. */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "netcheck.h"

int netcheck_close_listen_a(netcheck_role_t* r) {
  const ncclNet_v12_t* net = r->plugin.net;
  char h1[NCCL_NET_HANDLE_MAXSIZE], h2[NCCL_NET_HANDLE_MAXSIZE];
  void *l1 = NULL, *l2 = NULL;
  ncclResult_t a = net->listen(r->plugin.ctx, r->dev, h1, &l1);
  ncclResult_t b = net->listen(r->plugin.ctx, r->dev, h2, &l2);
  if (!netcheck_check(r, a == ncclSuccess && b == ncclSuccess && l1 && l2 && l1 != l2, "two-listens",
                      "listen returned %d, %d (%p, %p)", a, b, l1, l2))
    return -1;
  ncclResult_t c = net->closeListen(l2);
  ncclResult_t d = net->closeListen(l1);
  return netcheck_check(r, c == ncclSuccess && d == ncclSuccess, "closeListen", "returned %d, %d", c, d) ? 0 : -1;
}

/* A listens and hands out its handle but never accepts; B connects for a
 * while (a plugin may finish connect without accept, or wait for it). */
int netcheck_close_unaccepted_a(netcheck_role_t* r) {
  const ncclNet_v12_t* net = r->plugin.net;
  char handle[NCCL_NET_HANDLE_MAXSIZE];
  void* lc = NULL;
  memset(handle, 0, sizeof(handle));
  ncclResult_t res = net->listen(r->plugin.ctx, r->dev, handle, &lc);
  if (!netcheck_check(r, res == ncclSuccess && lc, "listen", "returned %d", (int)res)) return -1;
  if (netcheck_relay_send(r, handle, sizeof(handle)) != 0 || netcheck_sync(r, 1) != 0)
    return !netcheck_check(r, 0, "sync", "peer did not try to connect");
  res = net->closeListen(lc);
  int ok = netcheck_check(r, res == ncclSuccess, "closeListen-pending", "closeListen with an unaccepted connection: %d",
                          (int)res);
  if (netcheck_sync(r, 2) != 0) ok = netcheck_check(r, 0, "sync", "peer did not finish");
  return ok ? 0 : -1;
}

int netcheck_close_unaccepted_b(netcheck_role_t* r) {
  const ncclNet_v12_t* net = r->plugin.net;
  char handle[NCCL_NET_HANDLE_MAXSIZE];
  if (netcheck_relay_recv(r, handle, sizeof(handle)) != 0) return !netcheck_check(r, 0, "connect", "no handle");
  void* sc = NULL;
  ncclNetDeviceHandle_v12_t* dh = NULL;
  ncclResult_t res = ncclSuccess;
  int64_t until = netcheck_now_ms() + 1000; /* long enough for any connect that needs no accept */
  while (!sc && netcheck_now_ms() < until) {
    res = net->connect(r->plugin.ctx, r->dev, handle, &sc, &dh);
    if (res != ncclSuccess) break;
    if (!sc) sched_yield();
  }
  int ok = netcheck_check(r, res == ncclSuccess, "connect-unaccepted", "connect returned %d", (int)res);
  if (netcheck_sync(r, 1) != 0) ok = netcheck_check(r, 0, "sync", "peer gone");
  if (sc) {
    res = net->closeSend(sc);
    ok &= netcheck_check(r, res == ncclSuccess, "closeSend-unaccepted", "returned %d", (int)res);
  } else {
    netcheck_skip(r, "closeSend-unaccepted", "connect waits for accept: no sendComm to close");
  }
  if (netcheck_sync(r, 2) != 0) ok = netcheck_check(r, 0, "sync", "peer gone");
  return ok ? 0 : -1;
}

/* Receives posted that nothing will match, then closeRecv; closeSend after. */
int netcheck_close_inflight_a(netcheck_role_t* r) {
  const ncclNet_v12_t* net = r->plugin.net;
  void* rc = NULL;
  if (netcheck_pair_accept(r, &rc) != 0) return -1;
  size_t slot = 4096;
  int n = 4;
  char* buf = aligned_alloc(4096, slot * (size_t)n);
  void* mh = NULL;
  ncclResult_t res = net->regMr(rc, buf, slot * (size_t)n, NCCL_PTR_HOST, &mh);
  int ok = netcheck_check(r, res == ncclSuccess, "regMr", "returned %d", (int)res);
  int posted = 0;
  for (int i = 0; ok && i < n; i++) {
    void* data = buf + slot * (size_t)i;
    size_t size = slot;
    int tag = 1;
    void* req = NULL;
    res = netcheck_irecv(r, rc, 1, &data, &size, &tag, &mh, &req);
    if (res != ncclSuccess) ok = netcheck_check(r, 0, "irecv", "returned %d", (int)res);
    else posted++;
    if (req) {
      int done = 0;
      net->test(req, &done, NULL); /* let it reach the network */
      if (done) ok = netcheck_check(r, 0, "irecv", "a receive completed with nothing sent");
    }
  }
  if (mh) net->deregMr(rc, mh);
  res = net->closeRecv(rc);
  ok &= netcheck_check(r, res == ncclSuccess, "closeRecv-inflight", "closeRecv with %d receives in flight: %d", posted,
                       (int)res);
  if (netcheck_sync(r, 1) != 0) ok = netcheck_check(r, 0, "sync", "peer gone");
  free(buf);
  return ok ? 0 : -1;
}

int netcheck_close_inflight_b(netcheck_role_t* r) {
  void* sc = NULL;
  if (netcheck_pair_connect(r, &sc) != 0) return -1;
  int ok = netcheck_sync(r, 1) == 0 || netcheck_check(r, 0, "sync", "peer gone");
  ncclResult_t res = r->plugin.net->closeSend(sc);
  ok &= netcheck_check(r, res == ncclSuccess, "closeSend-peer-closed", "closeSend after the receiver closed: %d", (int)res);
  return ok ? 0 : -1;
}
