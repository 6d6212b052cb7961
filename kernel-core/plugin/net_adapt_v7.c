/* Net ABI v7 presented as v12: int sizes, no context; adds device offload to v6. */
#include <string.h>

#include "base/err.h"
#include "plugin/net_adapt_common.h"
#include "plugin/net_props_up.h"

static const ncclNet_v7_t* v7;
static ncclNet_v12_t v7_table;
static net_adapt_slot_t v7_slot = NET_ADAPT_SLOT_INIT;

static ncclResult_t v7_plugin_init(ncclDebugLogger_t log, ncclProfilerCallback_t prof) {
  (void)prof;
  return v7->init(log);
}

static ncclResult_t v7_init(void** ctx, uint64_t commId, ncclNetCommConfig_v12_t* config, ncclDebugLogger_t log,
                            ncclProfilerCallback_t prof) {
  (void)commId;
  return net_adapt_once_init(&v7_slot, v7_plugin_init, config, log, prof, ctx);
}

static ncclResult_t v7_finalize(void* ctx) { return net_adapt_once_finalize(&v7_slot, ctx); }

static ncclResult_t v7_getProperties(int dev, ncclNetProperties_v12_t* props) {
  ncclNetProperties_v7_t p;
  memset(&p, 0, sizeof(p));
  ncclResult_t res = v7->getProperties(dev, &p);
  if (res != ncclSuccess) return res;
  net_props_up_v7(&p, dev, props);
  return ncclSuccess;
}

static ncclResult_t v7_listen(void* ctx, int dev, void* handle, void** listenComm) {
  (void)ctx;
  return v7->listen(dev, handle, listenComm);
}

static ncclResult_t v7_connect(void* ctx, int dev, void* handle, void** sendComm,
                               ncclNetDeviceHandle_v12_t** sendDevComm) {
  (void)ctx;
  return v7->connect(dev, handle, sendComm, sendDevComm);
}

static ncclResult_t v7_regMr(void* comm, void* data, size_t size, int type, void** mhandle) {
  int sizeInt;
  MK_CHECK(net_adapt_size_to_int(v7->name, 7, "regMr", size, 0x7fffffff, &sizeInt));
  return v7->regMr(comm, data, sizeInt, type, mhandle);
}

static ncclResult_t v7_isend(void* sendComm, void* data, size_t size, int tag, void* mhandle, void* phandle,
                             void** request) {
  (void)phandle;
  int sizeInt;
  MK_CHECK(net_adapt_size_to_int(v7->name, 7, "isend", size, MAX_NET_SIZE, &sizeInt));
  return v7->isend(sendComm, data, sizeInt, tag, mhandle, request);
}

static ncclResult_t v7_irecv(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                             void** phandles, void** request) {
  (void)phandles;
  int sizesInt[NET_ADAPT_MAX_RECVS];
  MK_CHECK(net_adapt_sizes_to_int(v7->name, 7, n, sizes, sizesInt));
  net_adapt_recv_hint_clear(request);
  return v7->irecv(recvComm, n, data, sizesInt, tags, mhandles, request);
}

static ncclResult_t v7_wrap(const void* plugin, const void** presented) {
  MK_CHECK(net_adapt_slot_take(&v7_slot));
  v7 = plugin;
  v7_table = (ncclNet_v12_t){
      .name = v7->name,
      .init = v7_init,
      .devices = v7->devices,
      .getProperties = v7_getProperties,
      .listen = v7_listen,
      .connect = v7_connect,
      .accept = v7->accept,
      .regMr = v7_regMr,
      .regMrDmaBuf = v7->regMrDmaBuf,
      .deregMr = v7->deregMr,
      .isend = v7_isend,
      .irecv = v7_irecv,
      .iflush = v7->iflush,
      .test = v7->test,
      .closeSend = v7->closeSend,
      .closeRecv = v7->closeRecv,
      .closeListen = v7->closeListen,
      .getDeviceMr = v7->getDeviceMr,
      .irecvConsumed = v7->irecvConsumed,
      .finalize = v7_finalize,
  };
  *presented = &v7_table;
  return ncclSuccess;
}

static void v7_unwrap(void) {
  v7 = NULL;
  net_adapt_slot_release(&v7_slot);
}

const plugin_adapter_t net_adapt_v7 = {v7_wrap, v7_unwrap};
