/* Connecting connectors. Both ends of every link run this with matching
 * requests: each side sets up its connector, the two exchange connect info
 * through the bootstrap (one message per peer, links in an order both ends
 * derive the same way), then connect until every link is up. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/err.h"
#include "base/param.h"
#include "bootstrap/bootstrap.h"
#include "comm/comm.h"
#include "transport/transport.h"

#define TRANSPORT_TAG_CONNECT 100

typedef struct {
  transport_conn_req_t* req;
  const transport_entry_t* transport;
  char info[MKCCL_CONNECT_INFO_BYTES];
  char peerInfo[MKCCL_CONNECT_INFO_BYTES];
  int connected;
} conn_pending_t;

/* A link is (channel, connIndex, source rank): the same key at both ends. */
static int conn_link_src(const transport_conn_req_t* r, int me) { return r->isSend ? me : r->peer; }

static int conn_pending_cmp(const void* a, const void* b, void* arg) {
  int me = *(const int*)arg;
  const transport_conn_req_t* x = ((const conn_pending_t*)a)->req;
  const transport_conn_req_t* y = ((const conn_pending_t*)b)->req;
  if (x->peer != y->peer) return x->peer - y->peer;
  if (x->channelId != y->channelId) return x->channelId - y->channelId;
  if (x->connIndex != y->connIndex) return x->connIndex - y->connIndex;
  return conn_link_src(x, me) - conn_link_src(y, me);
}

ncclResult_t transport_pick(const transport_set_t* set, const mkcclPeer_v1* self, const mkcclPeer_v1* peer,
                            const transport_entry_t** out) {
  for (int i = 0; i < set->n; i++) {
    const transport_entry_t* e = &set->entries[i];
    if (e->disabled) continue;
    int ok = 0;
    MK_CHECK(e->t->canConnect(e->tctx, self, peer, &ok));
    if (ok) {
      *out = e;
      return ncclSuccess;
    }
  }
  *out = NULL;
  return ncclSuccess;
}

int transport_entry_uses_proxy(const transport_entry_t* e) {
  return e->t->send.proxyProgress != NULL || e->t->recv.proxyProgress != NULL;
}

static ncclResult_t conn_pick(struct ncclComm* comm, const transport_conn_req_t* r, const transport_entry_t** out) {
  dp_state_t* dp = &comm->dp;
  MK_CHECK(transport_pick(&dp->tr.set, &dp->tr.peers[comm->rank], &dp->tr.peers[r->peer], out));
  if (*out) return ncclSuccess;
  return MK_FAIL(ncclSystemError, "No transport can connect rank %d to rank %d (channel %d): all disabled or unable",
                 comm->rank, r->peer, r->channelId);
}

static const mkcclTransportSide_v1* conn_side(const transport_entry_t* e, int isSend) {
  return isSend ? &e->t->send : &e->t->recv;
}

static ncclResult_t conn_setup(struct ncclComm* comm, conn_pending_t* p) {
  transport_conn_req_t* r = p->req;
  MK_CHECK(conn_pick(comm, r, &p->transport));
  mkcclConnSetup_v1 args;
  memset(&args, 0, sizeof(args));
  args.self = &comm->dp.tr.peers[comm->rank];
  args.peer = &comm->dp.tr.peers[r->peer];
  args.channelId = r->channelId;
  args.connIndex = r->connIndex;
  args.deviceMem = comm->cudaDev >= 0;
  args.buffSizes[MKCCL_PROTO_SIMPLE] = comm->dp.ch.buffSize;
  /* LL lines only where the executors use them: GPU ring connections, and a
   * host rank's collective connections (one line a step, for small FLAT
   * AllReduces), asked of every transport; those that offer them give them. */
  if (r->connIndex == MK_CONN_COLL)
    args.buffSizes[MKCCL_PROTO_LL] = comm->cudaDev >= 0 ? (int)comm->dp.ch.llBuffSize : MK_HOST_LL_BYTES;
  void* conn = NULL;
  ncclResult_t res = conn_side(p->transport, r->isSend)->setup(p->transport->tctx, &args, p->info, &conn);
  if (res != ncclSuccess)
    return MK_FAIL(res, "Transport %s: %s setup to rank %d (channel %d) failed", p->transport->t->name,
                   r->isSend ? "send" : "recv", r->peer, r->channelId);
  connector_t* c = r->conn;
  c->conn = conn;
  c->transport = p->transport;
  c->isSend = r->isSend;
  c->peer = r->peer;
  c->channelId = r->channelId;
  c->connIndex = r->connIndex;
  return ncclSuccess;
}

/* One message per peer with the info of every link to it, in link order. */
static ncclResult_t conn_exchange(struct ncclComm* comm, conn_pending_t* ps, int n) {
  char* buf = malloc((size_t)n * MKCCL_CONNECT_INFO_BYTES);
  if (!buf) return MK_FAIL(ncclSystemError, "connect: out of memory");
  ncclResult_t res = ncclSuccess;
  for (int pass = 0; pass < 2; pass++) {
    for (int i = 0; i < n;) {
      int j = i;
      while (j < n && ps[j].req->peer == ps[i].req->peer) j++;
      size_t bytes = (size_t)(j - i) * MKCCL_CONNECT_INFO_BYTES;
      if (pass == 0) {
        for (int k = i; k < j; k++) memcpy(buf + (size_t)(k - i) * MKCCL_CONNECT_INFO_BYTES, ps[k].info, MKCCL_CONNECT_INFO_BYTES);
        MK_CHECK_GOTO(bootstrap_send(comm->bootstrap, ps[i].req->peer, TRANSPORT_TAG_CONNECT, buf, bytes), res, out);
      } else {
        MK_CHECK_GOTO(bootstrap_recv(comm->bootstrap, ps[i].req->peer, TRANSPORT_TAG_CONNECT, buf, bytes), res, out);
        for (int k = i; k < j; k++)
          memcpy(ps[k].peerInfo, buf + (size_t)(k - i) * MKCCL_CONNECT_INFO_BYTES, MKCCL_CONNECT_INFO_BYTES);
      }
      i = j;
    }
  }
out:
  free(buf);
  return res;
}

static double conn_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Connect every link, retrying those in progress; bounded by the timeout. */
static ncclResult_t conn_connect_all(struct ncclComm* comm, conn_pending_t* ps, int n) {
  double deadline = conn_now() + (double)param_MKCCL_CONNECT_TIMEOUT();
  int left = n;
  while (left > 0) {
    for (int i = 0; i < n; i++) {
      conn_pending_t* p = &ps[i];
      if (p->connected) continue;
      connector_t* c = p->req->conn;
      const mkcclTransportSide_v1* side = conn_side(p->transport, c->isSend);
      memset(&c->info, 0, sizeof(c->info)); /* fields a transport's ABI predates stay zero */
      ncclResult_t res = side->connect(c->conn, p->peerInfo, &c->info);
      if (res == ncclInProgress) continue;
      if (res != ncclSuccess)
        return MK_FAIL(res, "Transport %s: %s connect with rank %d (channel %d) failed", p->transport->t->name,
                       c->isSend ? "send" : "recv", c->peer, c->channelId);
      p->connected = 1;
      left--;
    }
    if (left == 0) break;
    if (__atomic_load_n(comm->abortFlag, __ATOMIC_ACQUIRE))
      return MK_FAIL(ncclRemoteError, "connect: aborted with %d link(s) pending", left);
    if (conn_now() > deadline)
      return MK_FAIL(ncclRemoteError, "connect: %d link(s) not established after MKCCL_CONNECT_TIMEOUT=%lld s", left,
                     (long long)param_MKCCL_CONNECT_TIMEOUT());
    sched_yield();
  }
  return ncclSuccess;
}

static ncclResult_t conn_proxy_start(struct ncclComm* comm, conn_pending_t* ps, int n) {
  for (int i = 0; i < n; i++) {
    connector_t* c = ps[i].req->conn;
    const mkcclTransportSide_v1* side = conn_side(ps[i].transport, c->isSend);
    if (side->proxySetup) MK_CHECK(side->proxySetup(c->conn));
    if (side->proxyConnect) MK_CHECK(side->proxyConnect(c->conn));
    c->needsProxy = (c->info.flags & MKCCL_CONN_PROXY) != 0;
    c->proxyLane = proxy_lane_for(c->channelId, (c->info.flags & MKCCL_CONN_PROXY_LANE) != 0);
    c->connected = 1;
    MK_INFO(NCCL_INIT | NCCL_P2P, "Channel %02d/%d : %d %s %d via %s", c->channelId, c->connIndex, comm->rank,
            c->isSend ? "->" : "<-", c->peer, ps[i].transport->t->name);
  }
  return ncclSuccess;
}

ncclResult_t transport_connect(struct ncclComm* comm, transport_conn_req_t* reqs, int n) {
  if (n == 0) return ncclSuccess;
  ncclResult_t res = ncclSuccess;
  conn_pending_t* ps = calloc((size_t)n, sizeof(*ps));
  if (!ps) return MK_FAIL(ncclSystemError, "connect: out of memory");
  for (int i = 0; i < n; i++) ps[i].req = &reqs[i];
  qsort_r(ps, (size_t)n, sizeof(*ps), conn_pending_cmp, &comm->rank);
  int setUp = 0;
  for (; setUp < n; setUp++) MK_CHECK_GOTO(conn_setup(comm, &ps[setUp]), res, fail);
  MK_CHECK_GOTO(conn_exchange(comm, ps, n), res, fail);
  MK_CHECK_GOTO(conn_connect_all(comm, ps, n), res, fail);
  MK_CHECK_GOTO(conn_proxy_start(comm, ps, n), res, fail);
  comm->dp.ch.connGen++;
  transport_set_report(&comm->dp.tr.set);
  free(ps);
  return ncclSuccess;
fail:
  for (int i = setUp - 1; i >= 0; i--) transport_conn_free(ps[i].req->conn);
  free(ps);
  return res;
}

void transport_conn_free(connector_t* c) {
  if (!c->transport) return;
  const mkcclTransportSide_v1* side = conn_side(c->transport, c->isSend);
  if (side->proxyFree) side->proxyFree(c->conn);
  if (side->free) side->free(c->conn);
  c->transport = NULL;
  c->conn = NULL;
  c->connected = 0;
}

const char* transport_conn_name(const connector_t* c) { return c->transport ? c->transport->t->name : "-"; }
