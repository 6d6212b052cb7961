/* Collnet ABI v11 presented as v12: v11's properties (vNICs of up to 4
 * devices); the rest is v12's. */
#include <string.h>

#include "base/err.h"
#include "plugin/collnet_adapt_common.h"
#include "plugin/net_adapt_common.h"
#include "plugin/net_props_up.h"

static const ncclCollNet_v11_t* v11;
static ncclCollNet_v12_t v11_table;
static collnet_adapt_slot_t v11_slot = COLLNET_ADAPT_SLOT_INIT;

static ncclResult_t v11_getProperties(int dev, ncclNetProperties_v12_t* props) {
  ncclNetProperties_v11_t p;
  memset(&p, 0, sizeof(p));
  ncclResult_t res = v11->getProperties(dev, &p);
  if (res != ncclSuccess) return res;
  net_props_up_v11(&p, dev, props);
  return ncclSuccess;
}

/* v11's SGE is v12's byte for byte (test_abi_collnet): the array passes as it is. */
static ncclResult_t v11_iallgather(void* collComm, void* sendData, int nRecvParts, ncclNetSGE_v12_t* recvParts,
                                   size_t bytesPerRank, size_t windowOffset, size_t windowBytes, void* sendMhandle,
                                   void** request) {
  return v11->iallgather(collComm, sendData, nRecvParts, (ncclNetSGE_v11_t*)(void*)recvParts, bytesPerRank,
                         windowOffset, windowBytes, sendMhandle, request);
}

static ncclResult_t v11_ireducescatter(void* collComm, int nSendParts, ncclNetSGE_v12_t* sendParts, void* recvData,
                                       size_t bytesPerRank, size_t windowOffset, size_t windowBytes,
                                       ncclDataType_t dataType, ncclRedOp_t redOp, void* recvMhandle, void** request) {
  return v11->ireducescatter(collComm, nSendParts, (ncclNetSGE_v11_t*)(void*)sendParts, recvData, bytesPerRank,
                             windowOffset, windowBytes, dataType, redOp, recvMhandle, request);
}

static ncclResult_t v11_makeVDevice(int* d, ncclNetVDeviceProps_v12_t* props) {
  ncclNetVDeviceProps_v11_t p;
  memset(&p, 0, sizeof(p));
  MK_CHECK(net_adapt_vprops_down(v11->name, 11, props, NCCL_NET_MAX_DEVS_PER_NIC_V11, &p.ndevs, p.devs));
  return v11->makeVDevice(d, &p);
}

static ncclResult_t v11_wrap(const void* plugin, const void** presented) {
  MK_CHECK(collnet_adapt_slot_take(&v11_slot));
  v11 = plugin;
  v11_table = (ncclCollNet_v12_t){
      .name = v11->name,
      .init = v11->init,
      .devices = v11->devices,
      .getProperties = v11_getProperties,
      .listen = v11->listen,
      .connect = v11->connect,
      .reduceSupport = v11->reduceSupport,
      .regMr = v11->regMr,
      .regMrDmaBuf = v11->regMrDmaBuf,
      .deregMr = v11->deregMr,
      .iallreduce = v11->iallreduce,
      .iallgather = v11->iallgather ? v11_iallgather : NULL,
      .ireducescatter = v11->ireducescatter ? v11_ireducescatter : NULL,
      .iflush = v11->iflush,
      .test = v11->test,
      .closeColl = v11->closeColl,
      .closeListen = v11->closeListen,
      .makeVDevice = v11->makeVDevice ? v11_makeVDevice : NULL,
      .finalize = v11->finalize,
  };
  *presented = &v11_table;
  return ncclSuccess;
}

static void v11_unwrap(void) {
  v11 = NULL;
  collnet_adapt_slot_release(&v11_slot);
}

const plugin_adapter_t collnet_adapt_v11 = {v11_wrap, v11_unwrap};
