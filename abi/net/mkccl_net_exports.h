/* Exporting ncclNetPlugin_v6 .. v12 from one implementation of the newest
 * net ABI (v12), for the net plugins of this tree. Not an ABI of its own:
 * it only uses the frozen nccl_net_vN.h.
 *
 * A plugin names its v12 entry points, includes this header and expands
 * MKCCL_NET_EXPORT_FROM_V<oldest>(prefix): the tables of every version from
 * that one to v12, exported as ncclNetPlugin_vN, with what an older version
 * needs as static adapters <prefix>_v<N>_<entry>. For example:
 *
 *   #define MKCCL_NET_NAME "Mine"
 *   #define MKCCL_NET_INIT mine_init
 *   ...                                (every entry below; NULL where none)
 *   #include "net/mkccl_net_exports.h"
 *   MKCCL_NET_EXPORT_FROM_V10(mine)
 *
 * Entries, with v12 signatures: INIT, DEVICES, GET_PROPERTIES, LISTEN,
 * CONNECT, ACCEPT, REG_MR, REG_MR_DMA_BUF, DEREG_MR, ISEND, IRECV, IFLUSH,
 * TEST, CLOSE_SEND, CLOSE_RECV, CLOSE_LISTEN, GET_DEVICE_MR, IRECV_CONSUMED,
 * FINALIZE, SET_NET_ATTR (all as MKCCL_NET_<ENTRY>). v10 and older have no
 * per-communicator context, so from v10 down two more:
 *   MKCCL_NET_INIT_NOCTX(logger, profiler)    init (v6..v9 pass profiler NULL)
 *   MKCCL_NET_CONNECT_NOCTX(dev, trafficClass, handle, sendComm, sendDevComm)
 *                                             connect (v10's config gives the
 *                                             class, older ones leave it UNDEF)
 * and LISTEN is called with ctx NULL. Optional, defined before the include:
 *   MKCCL_NET_FAIL(res, fmt, ...)  how an adapter reports a bad argument
 *                                  (a negative int size of v6..v8); else it
 *                                  just returns res
 *   MKCCL_NET_MAX_RECVS            buffers a v6..v8 irecv may carry (8)
 *
 * An entry whose signature did not change goes into every table as it is
 * (NULL stays NULL). makeVDevice is NULL everywhere: no plugin of ours
 * merges NICs. GET_PROPERTIES must refuse a NULL props itself, and
 * SET_NET_ATTR take a NULL attr: the adapters pass both on. */
#ifndef MKCCL_ABI_NET_MKCCL_NET_EXPORTS_H
#define MKCCL_ABI_NET_MKCCL_NET_EXPORTS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "net/nccl_net.h"

#ifndef MKCCL_NET_FAIL
#define MKCCL_NET_FAIL(res, ...) (res)
#endif
#ifndef MKCCL_NET_MAX_RECVS
#define MKCCL_NET_MAX_RECVS 8
#endif

/* ---- v12 properties into an older layout: each keeps the fields of the one
 * before and adds its own; what a layout lacks is dropped. ---- */

#define MKCCL_NET_PROPS_V6_FIELDS_(d, s) \
  (d)->name = (s)->name;                 \
  (d)->pciPath = (s)->pciPath;           \
  (d)->guid = (s)->guid;                 \
  (d)->ptrSupport = (s)->ptrSupport;     \
  (d)->speed = (s)->speed;               \
  (d)->port = (s)->port;                 \
  (d)->latency = (s)->latency;           \
  (d)->maxComms = (s)->maxComms;         \
  (d)->maxRecvs = (s)->maxRecvs

#define MKCCL_NET_PROPS_V7_FIELDS_(d, s)           \
  MKCCL_NET_PROPS_V6_FIELDS_(d, s);                \
  (d)->netDeviceType = (s)->netDeviceType;         \
  (d)->netDeviceVersion = (s)->netDeviceVersion

#define MKCCL_NET_PROPS_V8_FIELDS_(d, s) \
  MKCCL_NET_PROPS_V7_FIELDS_(d, s);      \
  (d)->regIsGlobal = (s)->regIsGlobal

/* maxDevs: the capacity of vProps.devs in d's version. */
#define MKCCL_NET_PROPS_V9_FIELDS_(d, s, maxDevs)                                              \
  MKCCL_NET_PROPS_V8_FIELDS_(d, s);                                                            \
  (d)->forceFlush = (s)->forceFlush;                                                           \
  (d)->vProps.ndevs = (s)->vProps.ndevs < (maxDevs) ? (s)->vProps.ndevs : (maxDevs);           \
  for (int i_ = 0; i_ < (d)->vProps.ndevs; i_++) (d)->vProps.devs[i_] = (s)->vProps.devs[i_]; \
  (d)->maxP2pBytes = (s)->maxP2pBytes;                                                         \
  (d)->maxCollBytes = (s)->maxCollBytes

static inline void mkccl_net_props_to_v6(ncclNetProperties_v6_t* d, const ncclNetProperties_v12_t* s) {
  memset(d, 0, sizeof(*d));
  MKCCL_NET_PROPS_V6_FIELDS_(d, s);
}

static inline void mkccl_net_props_to_v7(ncclNetProperties_v7_t* d, const ncclNetProperties_v12_t* s) {
  memset(d, 0, sizeof(*d));
  MKCCL_NET_PROPS_V7_FIELDS_(d, s);
}

static inline void mkccl_net_props_to_v8(ncclNetProperties_v8_t* d, const ncclNetProperties_v12_t* s) {
  memset(d, 0, sizeof(*d));
  MKCCL_NET_PROPS_V8_FIELDS_(d, s);
}

static inline void mkccl_net_props_to_v9(ncclNetProperties_v9_t* d, const ncclNetProperties_v12_t* s) {
  memset(d, 0, sizeof(*d));
  MKCCL_NET_PROPS_V9_FIELDS_(d, s, NCCL_NET_MAX_DEVS_PER_NIC_V9);
}

static inline void mkccl_net_props_to_v10(ncclNetProperties_v10_t* d, const ncclNetProperties_v12_t* s) {
  memset(d, 0, sizeof(*d));
  MKCCL_NET_PROPS_V9_FIELDS_(d, s, NCCL_NET_MAX_DEVS_PER_NIC_V10);
}

static inline void mkccl_net_props_to_v11(ncclNetProperties_v11_t* d, const ncclNetProperties_v12_t* s) {
  memset(d, 0, sizeof(*d));
  MKCCL_NET_PROPS_V9_FIELDS_(d, s, NCCL_NET_MAX_DEVS_PER_NIC_V11);
  d->maxMultiRequestSize = s->maxMultiRequestSize;
}

/* ---- v11's init config and ctx hints, in v12's layout (the same fields) ---- */

static inline ncclNetCommConfig_v12_t mkccl_net_config_from_v11(const ncclNetCommConfig_v11_t* c) {
  ncclNetCommConfig_v12_t r = {c ? c->trafficClass : NCCL_NET_TRAFFIC_CLASS_UNDEF};
  return r;
}

static inline ncclNetCommAttr_v12_t mkccl_net_comm_attr_from_v11(const ncclNetCommAttr_v11_t* a) {
  ncclNetCommAttr_v12_t r = {a->maxConcurrentPeers, a->minConcurrentPeers, a->maxFlowsPerPeer, a->minFlowsPerPeer};
  return r;
}

/* NULL: every field NCCL_NET_ATTR_UNDEF (the caller passes NULL on). */
static inline ncclNetAttr_v12_t mkccl_net_attr_from_v11(const ncclNetAttr_v11_t* a) {
  ncclNetAttr_v12_t r = NCCL_NET_ATTR_INIT_V12;
  if (!a) return r;
  r.sendCommAttr = mkccl_net_comm_attr_from_v11(&a->sendCommAttr);
  r.recvCommAttr = mkccl_net_comm_attr_from_v11(&a->recvCommAttr);
  r.op = a->op;
  r.algo = a->algo;
  r.proto = a->proto;
  return r;
}

/* ---- adapters ---- */

#define MKCCL_NET_PROPS_ADAPTER_(prefix, v)                                                        \
  static ncclResult_t prefix##_v##v##_get_properties(int dev, ncclNetProperties_v##v##_t* props) { \
    ncclNetProperties_v12_t p;                                                                     \
    ncclResult_t res = MKCCL_NET_GET_PROPERTIES(dev, props ? &p : NULL);                           \
    if (res == ncclSuccess && props) mkccl_net_props_to_v##v(props, &p);                           \
    return res;                                                                                    \
  }

/* What every version has, with the same signature. */
#define MKCCL_NET_ENTRIES_ALL_                                                                 \
  .name = MKCCL_NET_NAME, .devices = MKCCL_NET_DEVICES, .regMrDmaBuf = MKCCL_NET_REG_MR_DMA_BUF, \
  .deregMr = MKCCL_NET_DEREG_MR, .iflush = MKCCL_NET_IFLUSH, .test = MKCCL_NET_TEST,             \
  .closeSend = MKCCL_NET_CLOSE_SEND, .closeRecv = MKCCL_NET_CLOSE_RECV, .closeListen = MKCCL_NET_CLOSE_LISTEN

/* What v7 added (device offload), unchanged since. */
#define MKCCL_NET_ENTRIES_V7_ \
  .accept = MKCCL_NET_ACCEPT, .getDeviceMr = MKCCL_NET_GET_DEVICE_MR, .irecvConsumed = MKCCL_NET_IRECV_CONSUMED

#define MKCCL_NET_EXPORT_V12_(prefix)                                                                        \
  __attribute__((visibility("default"))) const ncclNet_v12_t ncclNetPlugin_v12 = {                           \
      MKCCL_NET_ENTRIES_ALL_,   MKCCL_NET_ENTRIES_V7_,     .init = MKCCL_NET_INIT,                           \
      .getProperties = MKCCL_NET_GET_PROPERTIES, .listen = MKCCL_NET_LISTEN, .connect = MKCCL_NET_CONNECT,   \
      .regMr = MKCCL_NET_REG_MR, .isend = MKCCL_NET_ISEND, .irecv = MKCCL_NET_IRECV, .makeVDevice = NULL,    \
      .finalize = MKCCL_NET_FINALIZE, .setNetAttr = MKCCL_NET_SET_NET_ATTR,                                  \
  };

/* v11: v12's entries, with v11's config, properties and hints. */
#define MKCCL_NET_EXPORT_V11_(prefix)                                                                        \
  static ncclResult_t prefix##_v11_init(void** ctx, uint64_t commId, ncclNetCommConfig_v11_t* config,        \
                                        ncclDebugLogger_t logger, ncclProfilerCallback_t profiler) {         \
    ncclNetCommConfig_v12_t c = mkccl_net_config_from_v11(config);                                           \
    return MKCCL_NET_INIT(ctx, commId, &c, logger, profiler);                                                \
  }                                                                                                          \
  MKCCL_NET_PROPS_ADAPTER_(prefix, 11)                                                                       \
  static ncclResult_t prefix##_v11_set_net_attr(void* ctx, ncclNetAttr_v11_t* attr) {                        \
    ncclNetAttr_v12_t a = mkccl_net_attr_from_v11(attr);                                                     \
    return MKCCL_NET_SET_NET_ATTR(ctx, attr ? &a : NULL);                                                    \
  }                                                                                                          \
  __attribute__((visibility("default"))) const ncclNet_v11_t ncclNetPlugin_v11 = {                           \
      MKCCL_NET_ENTRIES_ALL_,   MKCCL_NET_ENTRIES_V7_,     .init = prefix##_v11_init,                        \
      .getProperties = prefix##_v11_get_properties, .listen = MKCCL_NET_LISTEN, .connect = MKCCL_NET_CONNECT, \
      .regMr = MKCCL_NET_REG_MR, .isend = MKCCL_NET_ISEND, .irecv = MKCCL_NET_IRECV, .makeVDevice = NULL,    \
      .finalize = MKCCL_NET_FINALIZE, .setNetAttr = prefix##_v11_set_net_attr,                               \
  };

/* v10: no context (init and listen without, the traffic class with connect). */
#define MKCCL_NET_EXPORT_V10_(prefix)                                                                        \
  MKCCL_NET_PROPS_ADAPTER_(prefix, 10)                                                                       \
  static ncclResult_t prefix##_v10_listen(int dev, void* handle, void** listenComm) {                        \
    return MKCCL_NET_LISTEN(NULL, dev, handle, listenComm);                                                  \
  }                                                                                                          \
  static ncclResult_t prefix##_v10_connect(int dev, ncclNetCommConfig_v10_t* config, void* handle,           \
                                           void** sendComm, ncclNetDeviceHandle_v10_t** sendDevComm) {       \
    return MKCCL_NET_CONNECT_NOCTX(dev, config ? config->trafficClass : NCCL_NET_TRAFFIC_CLASS_UNDEF, handle, \
                                   sendComm, sendDevComm);                                                   \
  }                                                                                                          \
  __attribute__((visibility("default"))) const ncclNet_v10_t ncclNetPlugin_v10 = {                           \
      MKCCL_NET_ENTRIES_ALL_,   MKCCL_NET_ENTRIES_V7_,     .init = MKCCL_NET_INIT_NOCTX,                     \
      .getProperties = prefix##_v10_get_properties, .listen = prefix##_v10_listen,                           \
      .connect = prefix##_v10_connect, .regMr = MKCCL_NET_REG_MR, .isend = MKCCL_NET_ISEND,                  \
      .irecv = MKCCL_NET_IRECV, .makeVDevice = NULL,                                                         \
  };

/* v9: no profiler (init without its callback, isend/irecv without handles). */
#define MKCCL_NET_EXPORT_V9_(prefix)                                                                         \
  static ncclResult_t prefix##_v9_init(ncclDebugLogger_t logger) { return MKCCL_NET_INIT_NOCTX(logger, NULL); } \
  MKCCL_NET_PROPS_ADAPTER_(prefix, 9)                                                                        \
  static ncclResult_t prefix##_v9_connect(int dev, void* handle, void** sendComm,                            \
                                          ncclNetDeviceHandle_v9_t** sendDevComm) {                          \
    return MKCCL_NET_CONNECT_NOCTX(dev, NCCL_NET_TRAFFIC_CLASS_UNDEF, handle, sendComm, sendDevComm);        \
  }                                                                                                          \
  static ncclResult_t prefix##_v9_isend(void* sendComm, void* data, size_t size, int tag, void* mhandle,     \
                                        void** request) {                                                    \
    return MKCCL_NET_ISEND(sendComm, data, size, tag, mhandle, NULL, request);                               \
  }                                                                                                          \
  static ncclResult_t prefix##_v9_irecv(void* recvComm, int n, void** data, size_t* sizes, int* tags,        \
                                        void** mhandles, void** request) {                                   \
    return MKCCL_NET_IRECV(recvComm, n, data, sizes, tags, mhandles, NULL, request);                         \
  }                                                                                                          \
  __attribute__((visibility("default"))) const ncclNet_v9_t ncclNetPlugin_v9 = {                             \
      MKCCL_NET_ENTRIES_ALL_,   MKCCL_NET_ENTRIES_V7_,     .init = prefix##_v9_init,                         \
      .getProperties = prefix##_v9_get_properties, .listen = prefix##_v10_listen,                            \
      .connect = prefix##_v9_connect, .regMr = MKCCL_NET_REG_MR, .isend = prefix##_v9_isend,                 \
      .irecv = prefix##_v9_irecv, .makeVDevice = NULL,                                                       \
  };

/* v8: int sizes in isend/irecv. */
#define MKCCL_NET_EXPORT_V8_(prefix)                                                                         \
  MKCCL_NET_PROPS_ADAPTER_(prefix, 8)                                                                        \
  static ncclResult_t prefix##_v8_isend(void* sendComm, void* data, int size, int tag, void* mhandle,        \
                                        void** request) {                                                    \
    if (size < 0) return MKCCL_NET_FAIL(ncclInvalidArgument, "isend: negative size %d", size);               \
    return MKCCL_NET_ISEND(sendComm, data, (size_t)size, tag, mhandle, NULL, request);                       \
  }                                                                                                          \
  static ncclResult_t prefix##_v8_irecv(void* recvComm, int n, void** data, int* sizes, int* tags,           \
                                        void** mhandles, void** request) {                                   \
    size_t wide[MKCCL_NET_MAX_RECVS];                                                                        \
    if (n < 1 || n > MKCCL_NET_MAX_RECVS || !sizes)                                                          \
      return MKCCL_NET_FAIL(ncclInvalidArgument, "irecv: %d buffers (1..%d, with sizes)", n,                 \
                            MKCCL_NET_MAX_RECVS);                                                            \
    for (int i = 0; i < n; i++) {                                                                            \
      if (sizes[i] < 0) return MKCCL_NET_FAIL(ncclInvalidArgument, "irecv: negative size %d", sizes[i]);     \
      wide[i] = (size_t)sizes[i];                                                                            \
    }                                                                                                        \
    return MKCCL_NET_IRECV(recvComm, n, data, wide, tags, mhandles, NULL, request);                          \
  }                                                                                                          \
  __attribute__((visibility("default"))) const ncclNet_v8_t ncclNetPlugin_v8 = {                             \
      MKCCL_NET_ENTRIES_ALL_,   MKCCL_NET_ENTRIES_V7_,     .init = prefix##_v9_init,                         \
      .getProperties = prefix##_v8_get_properties, .listen = prefix##_v10_listen,                            \
      .connect = prefix##_v9_connect, .regMr = MKCCL_NET_REG_MR, .isend = prefix##_v8_isend,                 \
      .irecv = prefix##_v8_irecv,                                                                            \
  };

/* v7: int size in regMr too. */
#define MKCCL_NET_EXPORT_V7_(prefix)                                                                         \
  MKCCL_NET_PROPS_ADAPTER_(prefix, 7)                                                                        \
  static ncclResult_t prefix##_v7_reg_mr(void* comm, void* data, int size, int type, void** mhandle) {       \
    if (size < 0) return MKCCL_NET_FAIL(ncclInvalidArgument, "regMr: negative size %d", size);               \
    return MKCCL_NET_REG_MR(comm, data, (size_t)size, type, mhandle);                                        \
  }                                                                                                          \
  __attribute__((visibility("default"))) const ncclNet_v7_t ncclNetPlugin_v7 = {                             \
      MKCCL_NET_ENTRIES_ALL_,   MKCCL_NET_ENTRIES_V7_,     .init = prefix##_v9_init,                         \
      .getProperties = prefix##_v7_get_properties, .listen = prefix##_v10_listen,                            \
      .connect = prefix##_v9_connect, .regMr = prefix##_v7_reg_mr, .isend = prefix##_v8_isend,               \
      .irecv = prefix##_v8_irecv,                                                                            \
  };

/* v6: no device offload (connect and accept without device handles). */
#define MKCCL_NET_EXPORT_V6_(prefix)                                                                         \
  MKCCL_NET_PROPS_ADAPTER_(prefix, 6)                                                                        \
  static ncclResult_t prefix##_v6_connect(int dev, void* handle, void** sendComm) {                          \
    return MKCCL_NET_CONNECT_NOCTX(dev, NCCL_NET_TRAFFIC_CLASS_UNDEF, handle, sendComm, NULL);               \
  }                                                                                                          \
  static ncclResult_t prefix##_v6_accept(void* listenComm, void** recvComm) {                                \
    return MKCCL_NET_ACCEPT(listenComm, recvComm, NULL);                                                     \
  }                                                                                                          \
  __attribute__((visibility("default"))) const ncclNet_v6_t ncclNetPlugin_v6 = {                             \
      MKCCL_NET_ENTRIES_ALL_,  .init = prefix##_v9_init, .getProperties = prefix##_v6_get_properties,        \
      .listen = prefix##_v10_listen, .connect = prefix##_v6_connect, .accept = prefix##_v6_accept,           \
      .regMr = prefix##_v7_reg_mr, .isend = prefix##_v8_isend, .irecv = prefix##_v8_irecv,                   \
  };

/* Every version from the oldest named to v12; each older one reuses the
 * adapters of the versions after it. */
#define MKCCL_NET_EXPORT_FROM_V12(prefix) MKCCL_NET_EXPORT_V12_(prefix)
#define MKCCL_NET_EXPORT_FROM_V11(prefix) MKCCL_NET_EXPORT_FROM_V12(prefix) MKCCL_NET_EXPORT_V11_(prefix)
#define MKCCL_NET_EXPORT_FROM_V10(prefix) MKCCL_NET_EXPORT_FROM_V11(prefix) MKCCL_NET_EXPORT_V10_(prefix)
#define MKCCL_NET_EXPORT_FROM_V9(prefix) MKCCL_NET_EXPORT_FROM_V10(prefix) MKCCL_NET_EXPORT_V9_(prefix)
#define MKCCL_NET_EXPORT_FROM_V8(prefix) MKCCL_NET_EXPORT_FROM_V9(prefix) MKCCL_NET_EXPORT_V8_(prefix)
#define MKCCL_NET_EXPORT_FROM_V7(prefix) MKCCL_NET_EXPORT_FROM_V8(prefix) MKCCL_NET_EXPORT_V7_(prefix)
#define MKCCL_NET_EXPORT_FROM_V6(prefix) MKCCL_NET_EXPORT_FROM_V7(prefix) MKCCL_NET_EXPORT_V6_(prefix)

#endif
