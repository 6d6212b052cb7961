/* Net ABI v9 presented as v12: no context, no profiler handles, 4-device
 * virtual NICs. */
#include <string.h>

#include "base/err.h"
#include "plugin/net_adapt_common.h"
#include "plugin/net_props_up.h"

static const ncclNet_v9_t* v9;
static ncclNet_v12_t v9_table;
static net_adapt_slot_t v9_slot = NET_ADAPT_SLOT_INIT;

static ncclResult_t v9_plugin_init(ncclDebugLogger_t log, ncclProfilerCallback_t prof) {
  (void)prof;
  return v9->init(log);
}

static ncclResult_t v9_init(void** ctx, uint64_t commId, ncclNetCommConfig_v12_t* config, ncclDebugLogger_t log,
                            ncclProfilerCallback_t prof) {
  (void)commId;
  return net_adapt_once_init(&v9_slot, v9_plugin_init, config, log, prof, ctx);
}

static ncclResult_t v9_finalize(void* ctx) { return net_adapt_once_finalize(&v9_slot, ctx); }

static ncclResult_t v9_getProperties(int dev, ncclNetProperties_v12_t* props) {
  ncclNetProperties_v9_t p;
  memset(&p, 0, sizeof(p));
  ncclResult_t res = v9->getProperties(dev, &p);
  if (res != ncclSuccess) return res;
  net_props_up_v9(&p, dev, props);
  return ncclSuccess;
}

static ncclResult_t v9_listen(void* ctx, int dev, void* handle, void** listenComm) {
  (void)ctx;
  return v9->listen(dev, handle, listenComm);
}

static ncclResult_t v9_connect(void* ctx, int dev, void* handle, void** sendComm,
                               ncclNetDeviceHandle_v12_t** sendDevComm) {
  (void)ctx;
  return v9->connect(dev, handle, sendComm, sendDevComm);
}

static ncclResult_t v9_isend(void* sendComm, void* data, size_t size, int tag, void* mhandle, void* phandle,
                             void** request) {
  (void)phandle;
  return v9->isend(sendComm, data, size, tag, mhandle, request);
}

static ncclResult_t v9_irecv(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                             void** phandles, void** request) {
  (void)phandles;
  return v9->irecv(recvComm, n, data, sizes, tags, mhandles, request);
}

static ncclResult_t v9_makeVDevice(int* d, ncclNetVDeviceProps_v12_t* props) {
  ncclNetVDeviceProps_v9_t p;
  memset(&p, 0, sizeof(p));
  MK_CHECK(net_adapt_vprops_down(v9->name, 9, props, NCCL_NET_MAX_DEVS_PER_NIC_V9, &p.ndevs, p.devs));
  return v9->makeVDevice(d, &p);
}

static ncclResult_t v9_wrap(const void* plugin, const void** presented) {
  MK_CHECK(net_adapt_slot_take(&v9_slot));
  v9 = plugin;
  v9_table = (ncclNet_v12_t){
      .name = v9->name,
      .init = v9_init,
      .devices = v9->devices,
      .getProperties = v9_getProperties,
      .listen = v9_listen,
      .connect = v9_connect,
      .accept = v9->accept,
      .regMr = v9->regMr,
      .regMrDmaBuf = v9->regMrDmaBuf,
      .deregMr = v9->deregMr,
      .isend = v9_isend,
      .irecv = v9_irecv,
      .iflush = v9->iflush,
      .test = v9->test,
      .closeSend = v9->closeSend,
      .closeRecv = v9->closeRecv,
      .closeListen = v9->closeListen,
      .getDeviceMr = v9->getDeviceMr,
      .irecvConsumed = v9->irecvConsumed,
      .makeVDevice = v9->makeVDevice ? v9_makeVDevice : NULL,
      .finalize = v9_finalize,
  };
  *presented = &v9_table;
  return ncclSuccess;
}

static void v9_unwrap(void) {
  v9 = NULL;
  net_adapt_slot_release(&v9_slot);
}

const plugin_adapter_t net_adapt_v9 = {v9_wrap, v9_unwrap};
