/* Net ABI v11 (NCCL 2.28) presented as v12: same calls, per-communicator
 * context included; vNICs of 4 devices instead of 8, no rail/plane ids. */
#include <string.h>

#include "base/err.h"
#include "plugin/net_adapt_common.h"
#include "plugin/net_props_up.h"

static const ncclNet_v11_t* v11;
static ncclNet_v12_t v11_table;
static net_adapt_slot_t v11_slot = NET_ADAPT_SLOT_INIT;

static ncclResult_t v11_init(void** ctx, uint64_t commId, ncclNetCommConfig_v12_t* config, ncclDebugLogger_t log,
                             ncclProfilerCallback_t prof) {
  ncclNetCommConfig_v11_t c = {config ? config->trafficClass : NCCL_NET_TRAFFIC_CLASS_UNDEF};
  return v11->init(ctx, commId, &c, log, prof);
}

static ncclResult_t v11_getProperties(int dev, ncclNetProperties_v12_t* props) {
  ncclNetProperties_v11_t p;
  memset(&p, 0, sizeof(p));
  ncclResult_t res = v11->getProperties(dev, &p);
  if (res != ncclSuccess) return res;
  net_props_up_v11(&p, dev, props);
  return ncclSuccess;
}

static ncclResult_t v11_makeVDevice(int* d, ncclNetVDeviceProps_v12_t* props) {
  ncclNetVDeviceProps_v11_t p;
  memset(&p, 0, sizeof(p));
  MK_CHECK(net_adapt_vprops_down(v11->name, 11, props, NCCL_NET_MAX_DEVS_PER_NIC_V11, &p.ndevs, p.devs));
  return v11->makeVDevice(d, &p);
}

static ncclResult_t v11_setNetAttr(void* ctx, ncclNetAttr_v12_t* attr) {
  if (!attr) return v11->setNetAttr(ctx, NULL);
  ncclNetAttr_v11_t a;
  a.sendCommAttr.maxConcurrentPeers = attr->sendCommAttr.maxConcurrentPeers;
  a.sendCommAttr.minConcurrentPeers = attr->sendCommAttr.minConcurrentPeers;
  a.sendCommAttr.maxFlowsPerPeer = attr->sendCommAttr.maxFlowsPerPeer;
  a.sendCommAttr.minFlowsPerPeer = attr->sendCommAttr.minFlowsPerPeer;
  a.recvCommAttr.maxConcurrentPeers = attr->recvCommAttr.maxConcurrentPeers;
  a.recvCommAttr.minConcurrentPeers = attr->recvCommAttr.minConcurrentPeers;
  a.recvCommAttr.maxFlowsPerPeer = attr->recvCommAttr.maxFlowsPerPeer;
  a.recvCommAttr.minFlowsPerPeer = attr->recvCommAttr.minFlowsPerPeer;
  a.op = attr->op;
  a.algo = attr->algo;
  a.proto = attr->proto;
  return v11->setNetAttr(ctx, &a);
}

static ncclResult_t v11_wrap(const void* plugin, const void** presented) {
  MK_CHECK(net_adapt_slot_take(&v11_slot));
  v11 = plugin;
  v11_table = (ncclNet_v12_t){
      .name = v11->name,
      .init = v11_init,
      .devices = v11->devices,
      .getProperties = v11_getProperties,
      .listen = v11->listen,
      .connect = v11->connect,
      .accept = v11->accept,
      .regMr = v11->regMr,
      .regMrDmaBuf = v11->regMrDmaBuf,
      .deregMr = v11->deregMr,
      .isend = v11->isend,
      .irecv = v11->irecv,
      .iflush = v11->iflush,
      .test = v11->test,
      .closeSend = v11->closeSend,
      .closeRecv = v11->closeRecv,
      .closeListen = v11->closeListen,
      .getDeviceMr = v11->getDeviceMr,
      .irecvConsumed = v11->irecvConsumed,
      .makeVDevice = v11->makeVDevice ? v11_makeVDevice : NULL,
      .finalize = v11->finalize,
      .setNetAttr = v11->setNetAttr ? v11_setNetAttr : NULL,
  };
  *presented = &v11_table;
  return ncclSuccess;
}

static void v11_unwrap(void) {
  v11 = NULL;
  net_adapt_slot_release(&v11_slot);
}

const plugin_adapter_t net_adapt_v11 = {v11_wrap, v11_unwrap};
