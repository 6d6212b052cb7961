/* CollNet's set-up and tear-down for one communicator (collnet.h). Every
 * step that can fail on one rank is followed by an agreement of all ranks,
 * so that either every rank offers CollNet or none does. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/log.h"
#include "base/param.h"
#include "collnet/collnet_internal.h"
#include "comm/comm.h"
#include "device/common/work.h"
#include "proxy/proxy.h"
#include "transport/mkccl_conn_fifo_v1.h"
#include "transport/transport.h"

/* The connectors' transport: proxy progress only; the core made them. */
static const mkcclTransport_v1 collnet_transport = {
    .size = sizeof(mkcclTransport_v1),
    .abiVersion = MKCCL_TRANSPORT_ABI_V1,
    .name = "collnet",
    .send = {.proxyProgress = collnet_progress},
};

/* Why this rank cannot take part, for the one INFO line. */
typedef struct {
  char text[256];
} collnet_why_t;

__attribute__((format(printf, 2, 3))) static void collnet_why(collnet_why_t* why, const char* fmt, ...) {
  if (why->text[0]) return; /* the first reason is the one */
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why->text, sizeof(why->text), fmt, ap);
  va_end(ap);
}

static void collnet_conn_free(collnet_comm_t* cc, collnet_conn_t* c) {
  const ncclCollNet_v12_t* cn = cc->cn;
  if (c->collComm && c->sendMh && cn->deregMr) cn->deregMr(c->collComm, c->sendMh);
  if (c->collComm && c->recvMh && cn->deregMr) cn->deregMr(c->collComm, c->recvMh);
  if (c->collComm && cn->closeColl) cn->closeColl(c->collComm);
  free(c->sendBuff);
  free(c->recvBuff);
  free(c->ctrl);
  memset(c, 0, sizeof(*c));
}

static void collnet_free(collnet_comm_t* cc) {
  if (!cc) return;
  for (int c = 0; c < cc->nChannels; c++) collnet_conn_free(cc, &cc->conns[c]);
  if (cc->ctx && cc->cn->finalize) cc->cn->finalize(cc->ctx);
  if (cc->plugin) plugin_collnet_release(cc->plugin);
  free(cc);
}

static void* collnet_page_alloc(size_t bytes) {
  void* p = NULL;
  if (posix_memalign(&p, 4096, bytes) != 0) return NULL;
  memset(p, 0, bytes);
  return p;
}

/* Step buffers and control words of one channel, registered with its
 * collective communicator. */
static int collnet_conn_buffers(collnet_comm_t* cc, collnet_conn_t* c, int stepSize, collnet_why_t* why) {
  size_t bytes = (size_t)stepSize * MKCCL_STEPS;
  size_t ctrl = 2 * sizeof(mkcclSendMem_v1) + 2 * sizeof(mkcclRecvMem_v1);
  c->stepSize = stepSize;
  c->sendBuff = collnet_page_alloc(bytes);
  c->recvBuff = collnet_page_alloc(bytes);
  c->ctrl = collnet_page_alloc(ctrl);
  if (!c->sendBuff || !c->recvBuff || !c->ctrl) {
    collnet_why(why, "out of memory for its step buffers");
    return -1;
  }
  char* p = c->ctrl;
  c->sendHead = (mkcclSendMem_v1*)p;
  c->recvHead = (mkcclSendMem_v1*)(p + sizeof(mkcclSendMem_v1));
  c->sendTail = (mkcclRecvMem_v1*)(p + 2 * sizeof(mkcclSendMem_v1));
  c->recvTail = (mkcclRecvMem_v1*)(p + 2 * sizeof(mkcclSendMem_v1) + sizeof(mkcclRecvMem_v1));
  conn_fifo_init(c->sendTail->connFifo);
  conn_fifo_init(c->recvTail->connFifo);
  ncclResult_t res = cc->cn->regMr(c->collComm, c->sendBuff, bytes, NCCL_PTR_HOST, &c->sendMh);
  if (res == ncclSuccess) res = cc->cn->regMr(c->collComm, c->recvBuff, bytes, NCCL_PTR_HOST, &c->recvMh);
  if (res != ncclSuccess) {
    collnet_why(why, "'%s' regMr of its host step buffers failed (%d)", cc->plugin->name, (int)res);
    return -1;
  }
  return 0;
}

/* The executor's view of a channel's pair: collnetSend publishes steps of
 * input, collnetRecv receives the results. */
static void collnet_connectors(struct ncclComm* comm, transport_entry_t* entry, channel_t* ch, collnet_conn_t* c) {
  connector_t* s = &ch->collnetSend;
  connector_t* r = &ch->collnetRecv;
  memset(s, 0, sizeof(*s));
  memset(r, 0, sizeof(*r));
  s->info.buffs[MKCCL_PROTO_SIMPLE] = c->sendBuff;
  s->info.stepSize[MKCCL_PROTO_SIMPLE] = c->stepSize;
  s->info.head = &c->sendHead->head;
  s->info.tail = &c->sendTail->tail;
  s->info.connFifo = c->sendTail->connFifo;
  r->info.buffs[MKCCL_PROTO_SIMPLE] = c->recvBuff;
  r->info.stepSize[MKCCL_PROTO_SIMPLE] = c->stepSize;
  r->info.head = &c->recvHead->head;
  r->info.tail = &c->recvTail->tail;
  r->info.connFifo = c->recvTail->connFifo;
  for (int i = 0; i < 2; i++) {
    connector_t* k = i ? r : s;
    k->info.flags = MKCCL_CONN_USE_FIFO | MKCCL_CONN_PROXY;
    k->transport = entry;
    k->conn = c;
    k->connected = 1;
    k->isSend = !i;
    k->peer = comm->rank;
    k->channelId = ch->id;
    k->connIndex = MK_CONN_COLL;
    k->proxyLane = proxy_lane_for(ch->id, 0); /* a waiting executor helps the proxy's lane 0 */
  }
  s->needsProxy = 1; /* one op per item moves both sides */
}

static void collnet_reduce_table(collnet_comm_t* cc) {
  static const ncclRedOp_t ops[4] = {ncclSum, ncclProd, ncclMax, ncclMin};
  for (int t = 0; t < ncclNumTypes; t++)
    for (int o = 0; o < 4; o++) {
      int ok = 0;
      if (cc->cn->reduceSupport && cc->cn->reduceSupport((ncclDataType_t)t, ops[o], &ok) != ncclSuccess) ok = 0;
      cc->reduces[t][o] = ok != 0;
    }
}

/* This rank's part before the handles go round: the plugin, its context,
 * a listen per channel into handles[c]. */
static int collnet_local_start(struct ncclComm* comm, collnet_comm_t* cc, char* handles, void** listens,
                               collnet_why_t* why) {
  if (plugin_collnet_acquire(&cc->plugin) != ncclSuccess) {
    collnet_why(why, "no collnet plugin loads (the COLLNET and Plugin lines above say why)");
    return -1;
  }
  cc->cn = cc->plugin->collnet;
  if (!cc->cn->listen || !cc->cn->connect || !cc->cn->regMr || !cc->cn->iallreduce || !cc->cn->test ||
      !cc->cn->closeColl || !cc->cn->closeListen) {
    collnet_why(why, "'%s' lacks listen, connect, regMr, iallreduce, test or close", cc->plugin->name);
    return -1;
  }
  ncclNetProperties_v12_t props;
  memset(&props, 0, sizeof(props));
  if (cc->cn->getProperties(0, &props) != ncclSuccess || !(props.ptrSupport & NCCL_PTR_HOST)) {
    collnet_why(why, "'%s' device 0 takes no host memory (ptrSupport 0x%x)", cc->plugin->name, (unsigned)props.ptrSupport);
    return -1;
  }
  ncclResult_t res = cc->cn->init(&cc->ctx, comm->commHash, log_write);
  if (res != ncclSuccess) {
    cc->ctx = NULL;
    collnet_why(why, "'%s' init failed (%d)", cc->plugin->name, (int)res);
    return -1;
  }
  for (int c = 0; c < cc->nChannels; c++) {
    res = cc->cn->listen(cc->ctx, 0, handles + (size_t)c * NCCL_NET_HANDLE_MAXSIZE, &listens[c]);
    if (res != ncclSuccess) {
      listens[c] = NULL;
      collnet_why(why, "'%s' listen failed (%d)", cc->plugin->name, (int)res);
      return -1;
    }
  }
  collnet_reduce_table(cc);
  return 0;
}

/* Connect every channel with all ranks' handles (every rank in the same
 * channel order: connect joins all of them), then the buffers. */
static int collnet_connect_all(struct ncclComm* comm, collnet_comm_t* cc, char* all, void** listens,
                               collnet_why_t* why) {
  size_t perRank = (size_t)cc->nChannels * NCCL_NET_HANDLE_MAXSIZE;
  void** handles = calloc((size_t)comm->nRanks, sizeof(void*));
  if (!handles) {
    collnet_why(why, "out of memory");
    return -1;
  }
  int bad = 0;
  for (int c = 0; c < cc->nChannels && !bad; c++) {
    for (int r = 0; r < comm->nRanks; r++) handles[r] = all + (size_t)r * perRank + (size_t)c * NCCL_NET_HANDLE_MAXSIZE;
    collnet_conn_t* k = &cc->conns[c];
    k->owner = cc;
    ncclResult_t res = cc->cn->connect(handles, comm->nRanks, comm->rank, listens[c], &k->collComm);
    if (res != ncclSuccess || !k->collComm) {
      k->collComm = NULL;
      collnet_why(why, "'%s' connect failed (%d)", cc->plugin->name, (int)res);
      bad = 1;
    } else if (collnet_conn_buffers(cc, k, comm->dp.ch.buffSize / MKCCL_STEPS, why) != 0) {
      bad = 1;
    }
  }
  free(handles);
  return bad ? -1 : 0;
}

static void collnet_listens_close(collnet_comm_t* cc, void** listens) {
  for (int c = 0; c < cc->nChannels; c++)
    if (listens[c]) cc->cn->closeListen(listens[c]);
}

static int collnet_channels_wanted(const struct ncclComm* comm) {
  int64_t n = param_MKCCL_COLLNET_NCHANNELS();
  if (n < 1) n = 1;
  return n < comm->dp.ch.nChannels ? (int)n : comm->dp.ch.nChannels;
}

ncclResult_t collnet_comm_open(struct ncclComm* comm) {
  comm->dp.collnet = NULL;
  if (param_NCCL_COLLNET_ENABLE() != 1 || comm->nRanks < 2) return ncclSuccess; /* off: nothing to say */
  if (comm->cudaDev >= 0) {
    MK_INFO(NCCL_INIT | NCCL_COLL, "COLLNET: rank %d: CollNet not offered: GPU communicators have no CollNet algorithm",
            comm->rank);
    return ncclSuccess;
  }
  collnet_why_t why = {{0}};
  ncclResult_t res = ncclSuccess;
  collnet_comm_t* cc = calloc(1, sizeof(*cc));
  int nCh = collnet_channels_wanted(comm);
  size_t perRank = (size_t)nCh * NCCL_NET_HANDLE_MAXSIZE;
  char* all = calloc((size_t)comm->nRanks, perRank);
  void* listens[MK_MAX_CHANNELS] = {0};
  int mine = cc && all, every = 0;
  if (mine) {
    cc->nChannels = nCh;
    cc->rank = comm->rank;
    mine = collnet_local_start(comm, cc, all + (size_t)comm->rank * perRank, listens, &why) == 0;
  } else {
    collnet_why(&why, "out of memory");
  }
  MK_CHECK_GOTO(comm_all_agree(comm, mine, &every, "whether every rank can listen on a collnet"), res, out);
  if (!every) {
    if (mine) collnet_why(&why, "another rank could not load or listen on a collnet plugin");
    goto out;
  }
  MK_CHECK_GOTO(bootstrap_allgather(comm->bootstrap, all, perRank), res, out);
  mine = collnet_connect_all(comm, cc, all, listens, &why) == 0;
  collnet_listens_close(cc, listens);
  memset(listens, 0, sizeof(listens));
  MK_CHECK_GOTO(comm_all_agree(comm, mine, &every, "whether every rank connected its collnet"), res, out);
  if (!every) {
    if (mine) collnet_why(&why, "another rank could not connect its collnet");
    goto out;
  }
  /* The connectors' transport entry lives with the communicator's state. */
  static transport_entry_t entry = {&collnet_transport, NULL, 0};
  for (int c = 0; c < cc->nChannels; c++) collnet_connectors(comm, &entry, &comm->dp.ch.channels[c], &cc->conns[c]);
  MK_INFO(NCCL_INIT | NCCL_COLL, "COLLNET: rank %d: CollNet offered through '%s' on %d channel(s), %d-byte steps",
          comm->rank, cc->plugin->name, cc->nChannels, cc->conns[0].stepSize);
  comm->dp.collnet = cc;
  cc = NULL;
out:
  if (cc) {
    collnet_listens_close(cc, listens);
    if (res == ncclSuccess)
      MK_INFO(NCCL_INIT | NCCL_COLL, "COLLNET: rank %d: CollNet not offered: %s", comm->rank, why.text);
    collnet_free(cc);
  }
  free(all);
  return res;
}

void collnet_comm_close(struct ncclComm* comm) {
  collnet_comm_t* cc = comm->dp.collnet;
  if (!cc) return;
  /* The proxy may still hold ops on these connections. */
  if (comm->dp.proxyAttached) (void)proxy_client_flush(&comm->dp.proxy, "CollNet's close");
  for (int c = 0; c < cc->nChannels; c++) {
    memset(&comm->dp.ch.channels[c].collnetSend, 0, sizeof(connector_t));
    memset(&comm->dp.ch.channels[c].collnetRecv, 0, sizeof(connector_t));
  }
  comm->dp.collnet = NULL;
  collnet_free(cc);
}

int collnet_plugin_op(int mkOp) {
  switch (mkOp) {
    case MK_OP_SUM:
    case MK_OP_PREMULSUM: return ncclSum; /* inputs pre-multiplied by the executor */
    case MK_OP_PROD: return ncclProd;
    case MK_OP_MAX: return ncclMax;
    case MK_OP_MIN: return ncclMin;
    default: return -1; /* SUMPOSTDIV: the division would need the result's own pass */
  }
}

int collnet_comm_reduces(const struct ncclComm* comm, int type, int op) {
  const collnet_comm_t* cc = comm->dp.collnet;
  if (!cc) return 0;
  if (type < 0) return 1;
  if (type >= ncclNumTypes) return 0;
  int o = op < 0 ? ncclSum : collnet_plugin_op(op);
  return o >= 0 && o < 4 && cc->reduces[type][o];
}

int collnet_comm_channels(const struct ncclComm* comm) { return comm->dp.collnet ? comm->dp.collnet->nChannels : 0; }

uint64_t collnet_comm_requests(const struct ncclComm* comm) {
  return comm->dp.collnet ? atomic_load(&comm->dp.collnet->requests) : 0;
}
