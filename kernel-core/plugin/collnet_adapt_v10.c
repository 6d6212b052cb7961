/* Collnet ABI v10 presented as v12: no context; vNICs of up to 4 devices. */
#include <string.h>

#include "base/err.h"
#include "plugin/collnet_adapt_common.h"
#include "plugin/net_adapt_common.h"
#include "plugin/net_props_up.h"

static const ncclCollNet_v10_t* v10;
static ncclCollNet_v12_t v10_table;
static collnet_adapt_slot_t v10_slot = COLLNET_ADAPT_SLOT_INIT;

static ncclResult_t v10_plugin_init(ncclDebugLogger_t log) { return v10->init(log); }

static ncclResult_t v10_init(void** ctx, uint64_t commId, ncclDebugLogger_t log) {
  (void)commId;
  return collnet_adapt_once_init(&v10_slot, v10_plugin_init, log, ctx);
}

static ncclResult_t v10_finalize(void* ctx) { return collnet_adapt_once_finalize(&v10_slot, ctx); }

static ncclResult_t v10_listen(void* ctx, int dev, void* handle, void** listenComm) {
  (void)ctx;
  return v10->listen(dev, handle, listenComm);
}

static ncclResult_t v10_getProperties(int dev, ncclNetProperties_v12_t* props) {
  ncclNetProperties_v10_t p;
  memset(&p, 0, sizeof(p));
  ncclResult_t res = v10->getProperties(dev, &p);
  if (res != ncclSuccess) return res;
  net_props_up_v10(&p, dev, props);
  return ncclSuccess;
}

/* v10's SGE is v12's byte for byte (test_abi_collnet): the array passes as it is. */
static ncclResult_t v10_iallgather(void* collComm, void* sendData, int nRecvParts, ncclNetSGE_v12_t* recvParts,
                                   size_t bytesPerRank, size_t windowOffset, size_t windowBytes, void* sendMhandle,
                                   void** request) {
  return v10->iallgather(collComm, sendData, nRecvParts, (ncclNetSGE_v10_t*)(void*)recvParts, bytesPerRank,
                         windowOffset, windowBytes, sendMhandle, request);
}

static ncclResult_t v10_ireducescatter(void* collComm, int nSendParts, ncclNetSGE_v12_t* sendParts, void* recvData,
                                       size_t bytesPerRank, size_t windowOffset, size_t windowBytes,
                                       ncclDataType_t dataType, ncclRedOp_t redOp, void* recvMhandle, void** request) {
  return v10->ireducescatter(collComm, nSendParts, (ncclNetSGE_v10_t*)(void*)sendParts, recvData, bytesPerRank,
                             windowOffset, windowBytes, dataType, redOp, recvMhandle, request);
}

static ncclResult_t v10_makeVDevice(int* d, ncclNetVDeviceProps_v12_t* props) {
  ncclNetVDeviceProps_v10_t p;
  memset(&p, 0, sizeof(p));
  MK_CHECK(net_adapt_vprops_down(v10->name, 10, props, NCCL_NET_MAX_DEVS_PER_NIC_V10, &p.ndevs, p.devs));
  return v10->makeVDevice(d, &p);
}

static ncclResult_t v10_wrap(const void* plugin, const void** presented) {
  MK_CHECK(collnet_adapt_slot_take(&v10_slot));
  v10 = plugin;
  v10_table = (ncclCollNet_v12_t){
      .name = v10->name,
      .init = v10_init,
      .devices = v10->devices,
      .getProperties = v10_getProperties,
      .listen = v10_listen,
      .connect = v10->connect,
      .reduceSupport = v10->reduceSupport,
      .regMr = v10->regMr,
      .regMrDmaBuf = v10->regMrDmaBuf,
      .deregMr = v10->deregMr,
      .iallreduce = v10->iallreduce,
      .iallgather = v10->iallgather ? v10_iallgather : NULL,
      .ireducescatter = v10->ireducescatter ? v10_ireducescatter : NULL,
      .iflush = v10->iflush,
      .test = v10->test,
      .closeColl = v10->closeColl,
      .closeListen = v10->closeListen,
      .makeVDevice = v10->makeVDevice ? v10_makeVDevice : NULL,
      .finalize = v10_finalize,
  };
  *presented = &v10_table;
  return ncclSuccess;
}

static void v10_unwrap(void) {
  v10 = NULL;
  collnet_adapt_slot_release(&v10_slot);
}

const plugin_adapter_t collnet_adapt_v10 = {v10_wrap, v10_unwrap};
