/* Error paths: a peer killed mid-connection must make test() fail within
 * the scenario's bound instead of hanging; bad arguments must be refused. */
#include <stdlib.h>
#include <string.h>

#include "netcheck.h"

static int netcheck_kill_peer(netcheck_role_t* r) {
  uint32_t type = 0;
  char none[4];
  if (netcheck_ctl_send(r->ctl, NC_KILL_PEER, NULL, 0) != 0) return -1;
  return netcheck_ctl_recv(r->ctl, &type, none, sizeof(none), r->deadlineMs) == 0 && type == NC_KILLED ? 0 : -1;
}

/* A waits for a message from B; B is killed. */
int netcheck_killed_recv_a(netcheck_role_t* r) {
  const ncclNet_v12_t* net = r->plugin.net;
  void* rc = NULL;
  if (netcheck_pair_accept(r, &rc) != 0) return -1;
  char* buf = aligned_alloc(4096, 65536);
  void* mh = NULL;
  ncclResult_t res = net->regMr(rc, buf, 65536, NCCL_PTR_HOST, &mh);
  void* data = buf;
  size_t size = 65536;
  int tag = 1;
  void* req = NULL;
  if (res == ncclSuccess) res = netcheck_irecv(r, rc, 1, &data, &size, &tag, &mh, &req);
  if (!netcheck_check(r, res == ncclSuccess, "irecv", "returned %d", (int)res)) return -1;
  if (netcheck_sync(r, 1) != 0 || netcheck_kill_peer(r) != 0) return !netcheck_check(r, 0, "kill", "could not kill the peer");
  int64_t t0 = netcheck_now_ms();
  int got = -1;
  int w = netcheck_wait(r, req, &got, &res);
  int ok;
  if (w == 0) ok = netcheck_check(r, 0, "test-fails", "test reported a %d-byte receive nobody sent", got);
  else if (w < 0) ok = netcheck_check(r, 0, "test-fails", "test still returned done=0, ncclSuccess when the bound ran out");
  else ok = netcheck_check(r, 1, "test-fails", "test returned %d %lld ms after the peer died", (int)res, (long long)(netcheck_now_ms() - t0));
  if (mh) net->deregMr(rc, mh);
  res = net->closeRecv(rc);
  ok &= netcheck_check(r, res == ncclSuccess, "closeRecv", "closeRecv after the failure: %d", (int)res);
  free(buf);
  return ok ? 0 : -1;
}

int netcheck_killed_recv_b(netcheck_role_t* r) {
  void* sc = NULL;
  if (netcheck_pair_connect(r, &sc) != 0) return -1;
  netcheck_sync(r, 1);
  uint32_t type;
  char none[4];
  netcheck_ctl_recv(r->ctl, &type, none, sizeof(none), r->deadlineMs); /* killed while waiting here */
  return 0;
}

/* A sends to B; B is killed; A's sends must start failing. */
int netcheck_killed_send_a(netcheck_role_t* r) {
  const ncclNet_v12_t* net = r->plugin.net;
  void* sc = NULL;
  if (netcheck_pair_connect(r, &sc) != 0) return -1;
  size_t size = 65536;
  char* buf = aligned_alloc(4096, size);
  memset(buf, 1, size);
  void* mh = NULL;
  ncclResult_t res = net->regMr(sc, buf, size, NCCL_PTR_HOST, &mh);
  if (!netcheck_check(r, res == ncclSuccess, "regMr", "returned %d", (int)res)) return -1;
  if (netcheck_sync(r, 1) != 0 || netcheck_kill_peer(r) != 0) return !netcheck_check(r, 0, "kill", "could not kill the peer");
  int64_t t0 = netcheck_now_ms();
  int sent = 0, ok = 0, failed = 0;
  while (!failed && netcheck_now_ms() < r->deadlineMs) {
    void* req = NULL;
    res = netcheck_isend(r, sc, buf, size, 1, mh, &req);
    if (res == ncclInProgress) break; /* never took the send: the bound ran out */
    if (res != ncclSuccess) {
      failed = 1;
      break;
    }
    int w = netcheck_wait(r, req, NULL, &res);
    if (w > 0) failed = 1;
    else if (w < 0) break;
    else sent++;
  }
  if (failed)
    ok = netcheck_check(r, 1, "send-fails", "error %d after %d more sends, %lld ms after the peer died", (int)res, sent,
                        (long long)(netcheck_now_ms() - t0));
  else
    ok = netcheck_check(r, 0, "send-fails", "no error within the bound (%d sends completed to a dead peer)", sent);
  net->deregMr(sc, mh);
  res = net->closeSend(sc);
  ok &= netcheck_check(r, res == ncclSuccess, "closeSend", "closeSend after the failure: %d", (int)res);
  free(buf);
  return ok ? 0 : -1;
}

int netcheck_killed_send_b(netcheck_role_t* r) {
  void* rc = NULL;
  if (netcheck_pair_accept(r, &rc) != 0) return -1;
  netcheck_sync(r, 1);
  uint32_t type;
  char none[4];
  netcheck_ctl_recv(r->ctl, &type, none, sizeof(none), r->deadlineMs);
  return 0;
}

/* Out-of-range devices, too many grouped receives, a pointer type the
 * device does not support: each refused with an error, not a crash. */
int netcheck_badargs_a(netcheck_role_t* r) {
  const ncclNet_v12_t* net = r->plugin.net;
  int ndev = 0;
  net->devices(&ndev);
  ncclNetProperties_v12_t props;
  ncclResult_t a = net->getProperties(ndev, &props);
  ncclResult_t b = net->getProperties(-1, &props);
  int ok = netcheck_check(r, a != ncclSuccess && b != ncclSuccess, "getProperties-range",
                          "getProperties(%d) %d, getProperties(-1) %d", ndev, (int)a, (int)b);
  char handle[NCCL_NET_HANDLE_MAXSIZE];
  void* lc = NULL;
  a = net->listen(r->plugin.ctx, ndev, handle, &lc);
  ok &= netcheck_check(r, a != ncclSuccess, "listen-range", "listen(dev %d) returned %d", ndev, (int)a);
  if (a == ncclSuccess && lc) net->closeListen(lc);
  void* rc = NULL;
  if (netcheck_pair_accept(r, &rc) != 0) return -1;
  int n = r->props.maxRecvs + 1;
  char* buf = aligned_alloc(4096, 4096);
  void* mh = NULL;
  if (net->regMr(rc, buf, 4096, NCCL_PTR_HOST, &mh) == ncclSuccess) {
    void* data[65];
    size_t sizes[65];
    int tags[65];
    void* mhs[65];
    for (int i = 0; i < n && i < 65; i++) data[i] = buf, sizes[i] = 0, tags[i] = i, mhs[i] = mh;
    void* req = NULL;
    a = n <= 65 ? net->irecv(rc, n, data, sizes, tags, mhs, NULL, &req) : ncclInvalidArgument;
    ok &= netcheck_check(r, a != ncclSuccess && !req, "irecv-too-many", "irecv(n = maxRecvs + 1 = %d) returned %d", n, (int)a);
    net->deregMr(rc, mh);
  }
  if (!(r->props.ptrSupport & NCCL_PTR_CUDA)) {
    void* cmh = NULL;
    a = net->regMr(rc, buf, 4096, NCCL_PTR_CUDA, &cmh);
    ok &= netcheck_check(r, a != ncclSuccess, "regMr-unsupported-type",
                         "regMr(NCCL_PTR_CUDA) on a host-only device returned %d", (int)a);
    if (a == ncclSuccess) net->deregMr(rc, cmh);
  }
  if (netcheck_sync(r, 1) != 0) ok = netcheck_check(r, 0, "sync", "peer gone");
  net->closeRecv(rc);
  free(buf);
  return ok ? 0 : -1;
}

int netcheck_badargs_b(netcheck_role_t* r) {
  void* sc = NULL;
  if (netcheck_pair_connect(r, &sc) != 0) return -1;
  int ok = netcheck_sync(r, 1) == 0;
  r->plugin.net->closeSend(sc);
  return ok ? 0 : -1;
}
