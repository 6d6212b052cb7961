/* Collnet ABI v9 presented as v12: no context; vNICs of up to 4 devices. */
#include <string.h>

#include "base/err.h"
#include "plugin/collnet_adapt_common.h"
#include "plugin/net_adapt_common.h"
#include "plugin/net_props_up.h"

static const ncclCollNet_v9_t* v9;
static ncclCollNet_v12_t v9_table;
static collnet_adapt_slot_t v9_slot = COLLNET_ADAPT_SLOT_INIT;

static ncclResult_t v9_plugin_init(ncclDebugLogger_t log) { return v9->init(log); }

static ncclResult_t v9_init(void** ctx, uint64_t commId, ncclDebugLogger_t log) {
  (void)commId;
  return collnet_adapt_once_init(&v9_slot, v9_plugin_init, log, ctx);
}

static ncclResult_t v9_finalize(void* ctx) { return collnet_adapt_once_finalize(&v9_slot, ctx); }

static ncclResult_t v9_listen(void* ctx, int dev, void* handle, void** listenComm) {
  (void)ctx;
  return v9->listen(dev, handle, listenComm);
}

static ncclResult_t v9_getProperties(int dev, ncclNetProperties_v12_t* props) {
  ncclNetProperties_v9_t p;
  memset(&p, 0, sizeof(p));
  ncclResult_t res = v9->getProperties(dev, &p);
  if (res != ncclSuccess) return res;
  net_props_up_v9(&p, dev, props);
  return ncclSuccess;
}

/* v9's SGE is v12's byte for byte (test_abi_collnet): the array passes as it is. */
static ncclResult_t v9_iallgather(void* collComm, void* sendData, int nRecvParts, ncclNetSGE_v12_t* recvParts,
                                   size_t bytesPerRank, size_t windowOffset, size_t windowBytes, void* sendMhandle,
                                   void** request) {
  return v9->iallgather(collComm, sendData, nRecvParts, (ncclNetSGE_v9_t*)(void*)recvParts, bytesPerRank,
                         windowOffset, windowBytes, sendMhandle, request);
}

static ncclResult_t v9_ireducescatter(void* collComm, int nSendParts, ncclNetSGE_v12_t* sendParts, void* recvData,
                                       size_t bytesPerRank, size_t windowOffset, size_t windowBytes,
                                       ncclDataType_t dataType, ncclRedOp_t redOp, void* recvMhandle, void** request) {
  return v9->ireducescatter(collComm, nSendParts, (ncclNetSGE_v9_t*)(void*)sendParts, recvData, bytesPerRank,
                             windowOffset, windowBytes, dataType, redOp, recvMhandle, request);
}

static ncclResult_t v9_makeVDevice(int* d, ncclNetVDeviceProps_v12_t* props) {
  ncclNetVDeviceProps_v9_t p;
  memset(&p, 0, sizeof(p));
  MK_CHECK(net_adapt_vprops_down(v9->name, 9, props, NCCL_NET_MAX_DEVS_PER_NIC_V9, &p.ndevs, p.devs));
  return v9->makeVDevice(d, &p);
}

static ncclResult_t v9_wrap(const void* plugin, const void** presented) {
  MK_CHECK(collnet_adapt_slot_take(&v9_slot));
  v9 = plugin;
  v9_table = (ncclCollNet_v12_t){
      .name = v9->name,
      .init = v9_init,
      .devices = v9->devices,
      .getProperties = v9_getProperties,
      .listen = v9_listen,
      .connect = v9->connect,
      .reduceSupport = v9->reduceSupport,
      .regMr = v9->regMr,
      .regMrDmaBuf = v9->regMrDmaBuf,
      .deregMr = v9->deregMr,
      .iallreduce = v9->iallreduce,
      .iallgather = v9->iallgather ? v9_iallgather : NULL,
      .ireducescatter = v9->ireducescatter ? v9_ireducescatter : NULL,
      .iflush = v9->iflush,
      .test = v9->test,
      .closeColl = v9->closeColl,
      .closeListen = v9->closeListen,
      .makeVDevice = v9->makeVDevice ? v9_makeVDevice : NULL,
      .finalize = v9_finalize,
  };
  *presented = &v9_table;
  return ncclSuccess;
}

static void v9_unwrap(void) {
  v9 = NULL;
  collnet_adapt_slot_release(&v9_slot);
}

const plugin_adapter_t collnet_adapt_v9 = {v9_wrap, v9_unwrap};
