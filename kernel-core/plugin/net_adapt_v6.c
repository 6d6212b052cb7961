/* Net ABI v6 presented as v12: int sizes, no device offload, no context. */
#include <string.h>

#include "base/err.h"
#include "plugin/net_adapt_common.h"
#include "plugin/net_props_up.h"

static const ncclNet_v6_t* v6;
static ncclNet_v12_t v6_table;
static net_adapt_slot_t v6_slot = NET_ADAPT_SLOT_INIT;

static ncclResult_t v6_plugin_init(ncclDebugLogger_t log, ncclProfilerCallback_t prof) {
  (void)prof;
  return v6->init(log);
}

static ncclResult_t v6_init(void** ctx, uint64_t commId, ncclNetCommConfig_v12_t* config, ncclDebugLogger_t log,
                            ncclProfilerCallback_t prof) {
  (void)commId;
  return net_adapt_once_init(&v6_slot, v6_plugin_init, config, log, prof, ctx);
}

static ncclResult_t v6_finalize(void* ctx) { return net_adapt_once_finalize(&v6_slot, ctx); }

static ncclResult_t v6_getProperties(int dev, ncclNetProperties_v12_t* props) {
  ncclNetProperties_v6_t p;
  memset(&p, 0, sizeof(p));
  ncclResult_t res = v6->getProperties(dev, &p);
  if (res != ncclSuccess) return res;
  net_props_up_v6(&p, dev, props);
  return ncclSuccess;
}

static ncclResult_t v6_listen(void* ctx, int dev, void* handle, void** listenComm) {
  (void)ctx;
  return v6->listen(dev, handle, listenComm);
}

/* v6 has no device offload: the device handle is left as the caller set it. */
static ncclResult_t v6_connect(void* ctx, int dev, void* handle, void** sendComm,
                               ncclNetDeviceHandle_v12_t** sendDevComm) {
  (void)ctx, (void)sendDevComm;
  return v6->connect(dev, handle, sendComm);
}

static ncclResult_t v6_accept(void* listenComm, void** recvComm, ncclNetDeviceHandle_v12_t** recvDevComm) {
  (void)recvDevComm;
  return v6->accept(listenComm, recvComm);
}

static ncclResult_t v6_regMr(void* comm, void* data, size_t size, int type, void** mhandle) {
  int sizeInt;
  MK_CHECK(net_adapt_size_to_int(v6->name, 6, "regMr", size, 0x7fffffff, &sizeInt));
  return v6->regMr(comm, data, sizeInt, type, mhandle);
}

static ncclResult_t v6_isend(void* sendComm, void* data, size_t size, int tag, void* mhandle, void* phandle,
                             void** request) {
  (void)phandle;
  int sizeInt;
  MK_CHECK(net_adapt_size_to_int(v6->name, 6, "isend", size, MAX_NET_SIZE, &sizeInt));
  return v6->isend(sendComm, data, sizeInt, tag, mhandle, request);
}

static ncclResult_t v6_irecv(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                             void** phandles, void** request) {
  (void)phandles;
  int sizesInt[NET_ADAPT_MAX_RECVS];
  MK_CHECK(net_adapt_sizes_to_int(v6->name, 6, n, sizes, sizesInt));
  net_adapt_recv_hint_clear(request);
  return v6->irecv(recvComm, n, data, sizesInt, tags, mhandles, request);
}

static ncclResult_t v6_wrap(const void* plugin, const void** presented) {
  MK_CHECK(net_adapt_slot_take(&v6_slot));
  v6 = plugin;
  v6_table = (ncclNet_v12_t){
      .name = v6->name,
      .init = v6_init,
      .devices = v6->devices,
      .getProperties = v6_getProperties,
      .listen = v6_listen,
      .connect = v6_connect,
      .accept = v6_accept,
      .regMr = v6_regMr,
      .regMrDmaBuf = v6->regMrDmaBuf,
      .deregMr = v6->deregMr,
      .isend = v6_isend,
      .irecv = v6_irecv,
      .iflush = v6->iflush,
      .test = v6->test,
      .closeSend = v6->closeSend,
      .closeRecv = v6->closeRecv,
      .closeListen = v6->closeListen,
      .finalize = v6_finalize,
  };
  *presented = &v6_table;
  return ncclSuccess;
}

static void v6_unwrap(void) {
  v6 = NULL;
  net_adapt_slot_release(&v6_slot);
}

const plugin_adapter_t net_adapt_v6 = {v6_wrap, v6_unwrap};
