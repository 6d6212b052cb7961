#include "net_any.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#define V(ver) ((const ncclNet_v##ver##_t*)n->table)
/* Fields every table has at the same place are reached through v6's view
 * only where their signatures match; everything else switches on version. */
#define SWITCH_ALL(expr_v6, expr_v7, expr_v8, expr_v9, expr_v10, expr_v11, expr_v12) \
  switch (n->version) {                                                             \
    case 6: return expr_v6;                                                         \
    case 7: return expr_v7;                                                         \
    case 8: return expr_v8;                                                         \
    case 9: return expr_v9;                                                         \
    case 10: return expr_v10;                                                       \
    case 11: return expr_v11;                                                       \
    case 12: return expr_v12;                                                       \
    default: return ncclInvalidUsage;                                               \
  }
/* Same expression for every version. */
#define SWITCH_SAME(call) \
  SWITCH_ALL(V(6)->call, V(7)->call, V(8)->call, V(9)->call, V(10)->call, V(11)->call, V(12)->call)

int net_any_open(net_any_t* n, const char* path, int version, char* err, size_t errLen) {
  memset(n, 0, sizeof(*n));
  if (version < 6 || version > 12) {
    snprintf(err, errLen, "net ABI version %d not supported (6..12)", version);
    return -1;
  }
  void* dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!dl) {
    snprintf(err, errLen, "dlopen %s: %s", path, dlerror());
    return -1;
  }
  char sym[32];
  snprintf(sym, sizeof(sym), "ncclNetPlugin_v%d", version);
  const void* table = dlsym(dl, sym);
  if (!table) {
    snprintf(err, errLen, "%s: no symbol %s", path, sym);
    dlclose(dl);
    return -1;
  }
  n->version = version;
  n->table = table;
  n->dl = dl;
  return 0;
}

void net_any_close(net_any_t* n) {
  if (n->ctx && n->version == 11) V(11)->finalize(n->ctx);
  if (n->ctx && n->version == 12) V(12)->finalize(n->ctx);
  if (n->dl) dlclose(n->dl);
  memset(n, 0, sizeof(*n));
}

const char* net_any_name(const net_any_t* n) { return *(const char* const*)n->table; }

ncclResult_t net_any_init(net_any_t* n, ncclDebugLogger_t logger) {
  ncclNetCommConfig_v12_t c12 = {NCCL_NET_TRAFFIC_CLASS_UNDEF};
  ncclNetCommConfig_v11_t c11 = {NCCL_NET_TRAFFIC_CLASS_UNDEF};
  SWITCH_ALL(V(6)->init(logger), V(7)->init(logger), V(8)->init(logger), V(9)->init(logger),
             V(10)->init(logger, NULL), V(11)->init(&n->ctx, 1, &c11, logger, NULL),
             V(12)->init(&n->ctx, 1, &c12, logger, NULL));
}

ncclResult_t net_any_devices(net_any_t* n, int* ndev) { SWITCH_SAME(devices(ndev)); }

#define WIDEN_V6(p, q)             \
  do {                             \
    (p)->name = (q).name;          \
    (p)->pciPath = (q).pciPath;    \
    (p)->guid = (q).guid;          \
    (p)->ptrSupport = (q).ptrSupport; \
    (p)->speed = (q).speed;        \
    (p)->port = (q).port;          \
    (p)->latency = (q).latency;    \
    (p)->maxComms = (q).maxComms;  \
    (p)->maxRecvs = (q).maxRecvs;  \
  } while (0)

ncclResult_t net_any_props(net_any_t* n, int dev, ncclNetProperties_v12_t* p) {
  ncclResult_t res;
  memset(p, 0, sizeof(*p));
  if (n->version == 12) return V(12)->getProperties(dev, p);
  if (n->version == 11 || n->version == 10 || n->version == 9) {
    ncclNetProperties_v11_t q; /* v9/v10 are v11's prefix */
    memset(&q, 0, sizeof(q));
    res = n->version == 11   ? V(11)->getProperties(dev, &q)
          : n->version == 10 ? V(10)->getProperties(dev, (ncclNetProperties_v10_t*)&q)
                             : V(9)->getProperties(dev, (ncclNetProperties_v9_t*)&q);
    if (res != ncclSuccess) return res;
    WIDEN_V6(p, q);
    p->regIsGlobal = q.regIsGlobal;
    p->forceFlush = q.forceFlush;
    p->netDeviceType = q.netDeviceType;
    p->netDeviceVersion = q.netDeviceVersion;
    p->vProps.ndevs = q.vProps.ndevs;
    for (int i = 0; i < q.vProps.ndevs && i < NCCL_NET_MAX_DEVS_PER_NIC_V11; i++) p->vProps.devs[i] = q.vProps.devs[i];
    p->maxP2pBytes = q.maxP2pBytes;
    p->maxCollBytes = q.maxCollBytes;
    p->maxMultiRequestSize = q.maxMultiRequestSize;
    return ncclSuccess;
  }
  if (n->version == 8 || n->version == 7) {
    ncclNetProperties_v8_t q;
    memset(&q, 0, sizeof(q));
    if (n->version == 8) {
      res = V(8)->getProperties(dev, &q);
    } else {
      ncclNetProperties_v7_t q7;
      memset(&q7, 0, sizeof(q7));
      res = V(7)->getProperties(dev, &q7);
      WIDEN_V6(&q, q7);
      q.netDeviceType = q7.netDeviceType;
      q.netDeviceVersion = q7.netDeviceVersion;
    }
    if (res != ncclSuccess) return res;
    WIDEN_V6(p, q);
    p->regIsGlobal = q.regIsGlobal;
    p->netDeviceType = q.netDeviceType;
    p->netDeviceVersion = q.netDeviceVersion;
    return ncclSuccess;
  }
  ncclNetProperties_v6_t q;
  memset(&q, 0, sizeof(q));
  res = V(6)->getProperties(dev, &q);
  if (res == ncclSuccess) WIDEN_V6(p, q);
  return res;
}

ncclResult_t net_any_listen(net_any_t* n, int dev, void* handle, void** lc) {
  SWITCH_ALL(V(6)->listen(dev, handle, lc), V(7)->listen(dev, handle, lc), V(8)->listen(dev, handle, lc),
             V(9)->listen(dev, handle, lc), V(10)->listen(dev, handle, lc), V(11)->listen(n->ctx, dev, handle, lc),
             V(12)->listen(n->ctx, dev, handle, lc));
}

ncclResult_t net_any_connect(net_any_t* n, int dev, void* handle, void** sc) {
  ncclNetDeviceHandle_v7_t* devComm = NULL;
  ncclNetCommConfig_v10_t c10 = {NCCL_NET_TRAFFIC_CLASS_UNDEF};
  SWITCH_ALL(V(6)->connect(dev, handle, sc), V(7)->connect(dev, handle, sc, &devComm),
             V(8)->connect(dev, handle, sc, &devComm), V(9)->connect(dev, handle, sc, &devComm),
             V(10)->connect(dev, &c10, handle, sc, &devComm), V(11)->connect(n->ctx, dev, handle, sc, &devComm),
             V(12)->connect(n->ctx, dev, handle, sc, &devComm));
}

ncclResult_t net_any_accept(net_any_t* n, void* lc, void** rc) {
  ncclNetDeviceHandle_v7_t* devComm = NULL;
  SWITCH_ALL(V(6)->accept(lc, rc), V(7)->accept(lc, rc, &devComm), V(8)->accept(lc, rc, &devComm),
             V(9)->accept(lc, rc, &devComm), V(10)->accept(lc, rc, &devComm), V(11)->accept(lc, rc, &devComm),
             V(12)->accept(lc, rc, &devComm));
}

ncclResult_t net_any_reg_mr(net_any_t* n, void* comm, void* data, size_t size, int type, void** mh) {
  if (n->version <= 7 && size > INT_MAX) return ncclInvalidArgument;
  SWITCH_ALL(V(6)->regMr(comm, data, (int)size, type, mh), V(7)->regMr(comm, data, (int)size, type, mh),
             V(8)->regMr(comm, data, size, type, mh), V(9)->regMr(comm, data, size, type, mh),
             V(10)->regMr(comm, data, size, type, mh), V(11)->regMr(comm, data, size, type, mh),
             V(12)->regMr(comm, data, size, type, mh));
}

ncclResult_t net_any_dereg_mr(net_any_t* n, void* comm, void* mh) { SWITCH_SAME(deregMr(comm, mh)); }

ncclResult_t net_any_isend(net_any_t* n, void* sc, void* data, size_t size, int tag, void* mh, void** req) {
  if (n->version <= 8 && size > INT_MAX) return ncclInvalidArgument;
  SWITCH_ALL(V(6)->isend(sc, data, (int)size, tag, mh, req), V(7)->isend(sc, data, (int)size, tag, mh, req),
             V(8)->isend(sc, data, (int)size, tag, mh, req), V(9)->isend(sc, data, size, tag, mh, req),
             V(10)->isend(sc, data, size, tag, mh, NULL, req), V(11)->isend(sc, data, size, tag, mh, NULL, req),
             V(12)->isend(sc, data, size, tag, mh, NULL, req));
}

ncclResult_t net_any_irecv(net_any_t* n, void* rc, int nr, void** data, const size_t* sizes, const int* tags,
                           void** mhs, void** req) {
  int isizes[NCCL_NET_MAX_REQUESTS];
  size_t wsizes[NCCL_NET_MAX_REQUESTS];
  int wtags[NCCL_NET_MAX_REQUESTS];
  if (nr < 0 || nr > NCCL_NET_MAX_REQUESTS) return ncclInvalidArgument;
  for (int i = 0; i < nr; i++) {
    if (n->version <= 8 && sizes[i] > INT_MAX) return ncclInvalidArgument;
    isizes[i] = (int)sizes[i];
    wsizes[i] = sizes[i];
    wtags[i] = tags[i];
  }
  SWITCH_ALL(V(6)->irecv(rc, nr, data, isizes, wtags, mhs, req), V(7)->irecv(rc, nr, data, isizes, wtags, mhs, req),
             V(8)->irecv(rc, nr, data, isizes, wtags, mhs, req), V(9)->irecv(rc, nr, data, wsizes, wtags, mhs, req),
             V(10)->irecv(rc, nr, data, wsizes, wtags, mhs, NULL, req),
             V(11)->irecv(rc, nr, data, wsizes, wtags, mhs, NULL, req),
             V(12)->irecv(rc, nr, data, wsizes, wtags, mhs, NULL, req));
}

ncclResult_t net_any_iflush(net_any_t* n, void* rc, int nr, void** data, int* sizes, void** mhs, void** req) {
  SWITCH_SAME(iflush(rc, nr, data, sizes, mhs, req));
}

ncclResult_t net_any_test(net_any_t* n, void* req, int* done, int* sizes) { SWITCH_SAME(test(req, done, sizes)); }
ncclResult_t net_any_close_send(net_any_t* n, void* c) { SWITCH_SAME(closeSend(c)); }
ncclResult_t net_any_close_recv(net_any_t* n, void* c) { SWITCH_SAME(closeRecv(c)); }
ncclResult_t net_any_close_listen(net_any_t* n, void* c) { SWITCH_SAME(closeListen(c)); }
