/* Collnet ABI v8 presented as v12: int counts, 32-bit SGE sizes, no context. */
#include <string.h>

#include "base/err.h"
#include "plugin/collnet_adapt_common.h"
#include "plugin/net_props_up.h"

static const ncclCollNet_v8_t* v8;
static ncclCollNet_v12_t v8_table;
static collnet_adapt_slot_t v8_slot = COLLNET_ADAPT_SLOT_INIT;

static ncclResult_t v8_plugin_init(ncclDebugLogger_t log) { return v8->init(log); }

static ncclResult_t v8_init(void** ctx, uint64_t commId, ncclDebugLogger_t log) {
  (void)commId;
  return collnet_adapt_once_init(&v8_slot, v8_plugin_init, log, ctx);
}

static ncclResult_t v8_finalize(void* ctx) { return collnet_adapt_once_finalize(&v8_slot, ctx); }

static ncclResult_t v8_listen(void* ctx, int dev, void* handle, void** listenComm) {
  (void)ctx;
  return v8->listen(dev, handle, listenComm);
}

static ncclResult_t v8_getProperties(int dev, ncclNetProperties_v12_t* props) {
  ncclNetProperties_v8_t p;
  memset(&p, 0, sizeof(p));
  ncclResult_t res = v8->getProperties(dev, &p);
  if (res != ncclSuccess) return res;
  net_props_up_v8(&p, dev, props);
  return ncclSuccess;
}

static ncclResult_t v8_iallreduce(void* collComm, void* sendData, void* recvData, size_t count,
                                   ncclDataType_t dataType, ncclRedOp_t redOp, void* sendMhandle, void* recvMhandle,
                                   void** request) {
  int countInt;
  MK_CHECK(collnet_adapt_to_int(v8->name, 8, "iallreduce count", count, MAX_NET_SIZE, &countInt));
  return v8->iallreduce(collComm, sendData, recvData, countInt, dataType, redOp, sendMhandle, recvMhandle, request);
}

static ncclResult_t v8_iallgather(void* collComm, void* sendData, int nRecvParts, ncclNetSGE_v12_t* recvParts,
                                   size_t bytesPerRank, size_t windowOffset, size_t windowBytes, void* sendMhandle,
                                   void** request) {
  ncclNetSGE_v8_t parts[COLLNET_ADAPT_MAX_PARTS];
  MK_CHECK(collnet_adapt_sge_to_v8(v8->name, "iallgather", nRecvParts, recvParts, parts));
  return v8->iallgather(collComm, sendData, nRecvParts, parts, bytesPerRank, windowOffset, windowBytes, sendMhandle,
                        request);
}

static ncclResult_t v8_ireducescatter(void* collComm, int nSendParts, ncclNetSGE_v12_t* sendParts, void* recvData,
                                       size_t bytesPerRank, size_t windowOffset, size_t windowBytes,
                                       ncclDataType_t dataType, ncclRedOp_t redOp, void* recvMhandle, void** request) {
  ncclNetSGE_v8_t parts[COLLNET_ADAPT_MAX_PARTS];
  MK_CHECK(collnet_adapt_sge_to_v8(v8->name, "ireducescatter", nSendParts, sendParts, parts));
  return v8->ireducescatter(collComm, nSendParts, parts, recvData, bytesPerRank, windowOffset, windowBytes, dataType,
                            redOp, recvMhandle, request);
}

static ncclResult_t v8_wrap(const void* plugin, const void** presented) {
  MK_CHECK(collnet_adapt_slot_take(&v8_slot));
  v8 = plugin;
  v8_table = (ncclCollNet_v12_t){
      .name = v8->name,
      .init = v8_init,
      .devices = v8->devices,
      .getProperties = v8_getProperties,
      .listen = v8_listen,
      .connect = v8->connect,
      .reduceSupport = v8->reduceSupport,
      .regMr = v8->regMr,
      .regMrDmaBuf = v8->regMrDmaBuf,
      .deregMr = v8->deregMr,
      .iallreduce = v8_iallreduce,
      .iallgather = v8->iallgather ? v8_iallgather : NULL,
      .ireducescatter = v8->ireducescatter ? v8_ireducescatter : NULL,
      .iflush = v8->iflush,
      .test = v8->test,
      .closeColl = v8->closeColl,
      .closeListen = v8->closeListen,
      .finalize = v8_finalize,
  };
  *presented = &v8_table;
  return ncclSuccess;
}

static void v8_unwrap(void) {
  v8 = NULL;
  collnet_adapt_slot_release(&v8_slot);
}

const plugin_adapter_t collnet_adapt_v8 = {v8_wrap, v8_unwrap};
