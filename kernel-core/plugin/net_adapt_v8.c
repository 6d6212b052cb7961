/* Net ABI v8 presented as v12: int isend/irecv sizes, no context. */
#include <string.h>

#include "base/err.h"
#include "plugin/net_adapt_common.h"
#include "plugin/net_props_up.h"

static const ncclNet_v8_t* v8;
static ncclNet_v12_t v8_table;
static net_adapt_slot_t v8_slot = NET_ADAPT_SLOT_INIT;

static ncclResult_t v8_plugin_init(ncclDebugLogger_t log, ncclProfilerCallback_t prof) {
  (void)prof;
  return v8->init(log);
}

static ncclResult_t v8_init(void** ctx, uint64_t commId, ncclNetCommConfig_v12_t* config, ncclDebugLogger_t log,
                            ncclProfilerCallback_t prof) {
  (void)commId;
  return net_adapt_once_init(&v8_slot, v8_plugin_init, config, log, prof, ctx);
}

static ncclResult_t v8_finalize(void* ctx) { return net_adapt_once_finalize(&v8_slot, ctx); }

static ncclResult_t v8_getProperties(int dev, ncclNetProperties_v12_t* props) {
  ncclNetProperties_v8_t p;
  memset(&p, 0, sizeof(p));
  ncclResult_t res = v8->getProperties(dev, &p);
  if (res != ncclSuccess) return res;
  net_props_up_v8(&p, dev, props);
  return ncclSuccess;
}

static ncclResult_t v8_listen(void* ctx, int dev, void* handle, void** listenComm) {
  (void)ctx;
  return v8->listen(dev, handle, listenComm);
}

static ncclResult_t v8_connect(void* ctx, int dev, void* handle, void** sendComm,
                               ncclNetDeviceHandle_v12_t** sendDevComm) {
  (void)ctx;
  return v8->connect(dev, handle, sendComm, sendDevComm);
}

static ncclResult_t v8_isend(void* sendComm, void* data, size_t size, int tag, void* mhandle, void* phandle,
                             void** request) {
  (void)phandle;
  int sizeInt;
  MK_CHECK(net_adapt_size_to_int(v8->name, 8, "isend", size, MAX_NET_SIZE, &sizeInt));
  return v8->isend(sendComm, data, sizeInt, tag, mhandle, request);
}

static ncclResult_t v8_irecv(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                             void** phandles, void** request) {
  (void)phandles;
  int sizesInt[NET_ADAPT_MAX_RECVS];
  MK_CHECK(net_adapt_sizes_to_int(v8->name, 8, n, sizes, sizesInt));
  net_adapt_recv_hint_clear(request);
  return v8->irecv(recvComm, n, data, sizesInt, tags, mhandles, request);
}

static ncclResult_t v8_wrap(const void* plugin, const void** presented) {
  MK_CHECK(net_adapt_slot_take(&v8_slot));
  v8 = plugin;
  v8_table = (ncclNet_v12_t){
      .name = v8->name,
      .init = v8_init,
      .devices = v8->devices,
      .getProperties = v8_getProperties,
      .listen = v8_listen,
      .connect = v8_connect,
      .accept = v8->accept,
      .regMr = v8->regMr,
      .regMrDmaBuf = v8->regMrDmaBuf,
      .deregMr = v8->deregMr,
      .isend = v8_isend,
      .irecv = v8_irecv,
      .iflush = v8->iflush,
      .test = v8->test,
      .closeSend = v8->closeSend,
      .closeRecv = v8->closeRecv,
      .closeListen = v8->closeListen,
      .getDeviceMr = v8->getDeviceMr,
      .irecvConsumed = v8->irecvConsumed,
      .finalize = v8_finalize,
  };
  *presented = &v8_table;
  return ncclSuccess;
}

static void v8_unwrap(void) {
  v8 = NULL;
  net_adapt_slot_release(&v8_slot);
}

const plugin_adapter_t net_adapt_v8 = {v8_wrap, v8_unwrap};
