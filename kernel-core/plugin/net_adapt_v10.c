/* Net ABI v10 presented as v12: no context (the comm's config, given to v12
 * at init, goes to v10's connect through our ctx), 4-device virtual NICs. */
#include <string.h>

#include "base/err.h"
#include "plugin/net_adapt_common.h"
#include "plugin/net_props_up.h"

static const ncclNet_v10_t* v10;
static ncclNet_v12_t v10_table;
static net_adapt_slot_t v10_slot = NET_ADAPT_SLOT_INIT;

static ncclResult_t v10_plugin_init(ncclDebugLogger_t log, ncclProfilerCallback_t prof) {
  return v10->init(log, prof);
}

static ncclResult_t v10_init(void** ctx, uint64_t commId, ncclNetCommConfig_v12_t* config, ncclDebugLogger_t log,
                            ncclProfilerCallback_t prof) {
  (void)commId;
  return net_adapt_once_init(&v10_slot, v10_plugin_init, config, log, prof, ctx);
}

static ncclResult_t v10_finalize(void* ctx) { return net_adapt_once_finalize(&v10_slot, ctx); }

static ncclResult_t v10_getProperties(int dev, ncclNetProperties_v12_t* props) {
  ncclNetProperties_v10_t p;
  memset(&p, 0, sizeof(p));
  ncclResult_t res = v10->getProperties(dev, &p);
  if (res != ncclSuccess) return res;
  net_props_up_v10(&p, dev, props);
  return ncclSuccess;
}

static ncclResult_t v10_listen(void* ctx, int dev, void* handle, void** listenComm) {
  (void)ctx;
  return v10->listen(dev, handle, listenComm);
}

static ncclResult_t v10_connect(void* ctx, int dev, void* handle, void** sendComm,
                               ncclNetDeviceHandle_v12_t** sendDevComm) {
  static ncclNetCommConfig_v10_t undef = {NCCL_NET_TRAFFIC_CLASS_UNDEF};
  ncclNetCommConfig_v10_t* config = ctx ? &((net_adapt_ctx_t*)ctx)->configV10 : &undef;
  return v10->connect(dev, config, handle, sendComm, sendDevComm);
}

static ncclResult_t v10_makeVDevice(int* d, ncclNetVDeviceProps_v12_t* props) {
  ncclNetVDeviceProps_v10_t p;
  memset(&p, 0, sizeof(p));
  MK_CHECK(net_adapt_vprops_down(v10->name, 10, props, NCCL_NET_MAX_DEVS_PER_NIC_V10, &p.ndevs, p.devs));
  return v10->makeVDevice(d, &p);
}

static ncclResult_t v10_wrap(const void* plugin, const void** presented) {
  MK_CHECK(net_adapt_slot_take(&v10_slot));
  v10 = plugin;
  v10_table = (ncclNet_v12_t){
      .name = v10->name,
      .init = v10_init,
      .devices = v10->devices,
      .getProperties = v10_getProperties,
      .listen = v10_listen,
      .connect = v10_connect,
      .accept = v10->accept,
      .regMr = v10->regMr,
      .regMrDmaBuf = v10->regMrDmaBuf,
      .deregMr = v10->deregMr,
      .isend = v10->isend,
      .irecv = v10->irecv,
      .iflush = v10->iflush,
      .test = v10->test,
      .closeSend = v10->closeSend,
      .closeRecv = v10->closeRecv,
      .closeListen = v10->closeListen,
      .getDeviceMr = v10->getDeviceMr,
      .irecvConsumed = v10->irecvConsumed,
      .makeVDevice = v10->makeVDevice ? v10_makeVDevice : NULL,
      .finalize = v10_finalize,
  };
  *presented = &v10_table;
  return ncclSuccess;
}

static void v10_unwrap(void) {
  v10 = NULL;
  net_adapt_slot_release(&v10_slot);
}

const plugin_adapter_t net_adapt_v10 = {v10_wrap, v10_unwrap};
