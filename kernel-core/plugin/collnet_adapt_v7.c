/* Collnet ABI v7 presented as v12: v6's table over v7's properties. */
#include <string.h>

#include "base/err.h"
#include "plugin/collnet_adapt_common.h"
#include "plugin/net_props_up.h"

static const ncclCollNet_v7_t* v7;
static ncclCollNet_v12_t v7_table;
static collnet_adapt_slot_t v7_slot = COLLNET_ADAPT_SLOT_INIT;

static ncclResult_t v7_plugin_init(ncclDebugLogger_t log) { return v7->init(log); }

static ncclResult_t v7_init(void** ctx, uint64_t commId, ncclDebugLogger_t log) {
  (void)commId;
  return collnet_adapt_once_init(&v7_slot, v7_plugin_init, log, ctx);
}

static ncclResult_t v7_finalize(void* ctx) { return collnet_adapt_once_finalize(&v7_slot, ctx); }

static ncclResult_t v7_listen(void* ctx, int dev, void* handle, void** listenComm) {
  (void)ctx;
  return v7->listen(dev, handle, listenComm);
}

static ncclResult_t v7_getProperties(int dev, ncclNetProperties_v12_t* props) {
  ncclNetProperties_v7_t p;
  memset(&p, 0, sizeof(p));
  ncclResult_t res = v7->getProperties(dev, &p);
  if (res != ncclSuccess) return res;
  net_props_up_v7(&p, dev, props);
  return ncclSuccess;
}

static ncclResult_t v7_regMr(void* collComm, void* data, size_t size, int type, void** mhandle) {
  int sizeInt;
  MK_CHECK(collnet_adapt_to_int(v7->name, 7, "regMr size", size, 0x7fffffffLL, &sizeInt));
  return v7->regMr(collComm, data, sizeInt, type, mhandle);
}

static ncclResult_t v7_iallreduce(void* collComm, void* sendData, void* recvData, size_t count,
                                   ncclDataType_t dataType, ncclRedOp_t redOp, void* sendMhandle, void* recvMhandle,
                                   void** request) {
  int countInt;
  MK_CHECK(collnet_adapt_to_int(v7->name, 7, "iallreduce count", count, MAX_NET_SIZE, &countInt));
  return v7->iallreduce(collComm, sendData, recvData, countInt, dataType, redOp, sendMhandle, recvMhandle, request);
}

static ncclResult_t v7_wrap(const void* plugin, const void** presented) {
  MK_CHECK(collnet_adapt_slot_take(&v7_slot));
  v7 = plugin;
  v7_table = (ncclCollNet_v12_t){
      .name = v7->name,
      .init = v7_init,
      .devices = v7->devices,
      .getProperties = v7_getProperties,
      .listen = v7_listen,
      .connect = v7->connect,
      .reduceSupport = v7->reduceSupport,
      .regMr = v7_regMr,
      .regMrDmaBuf = v7->regMrDmaBuf,
      .deregMr = v7->deregMr,
      .iallreduce = v7_iallreduce,
      .iflush = v7->iflush,
      .test = v7->test,
      .closeColl = v7->closeColl,
      .closeListen = v7->closeListen,
      .finalize = v7_finalize,
  };
  *presented = &v7_table;
  return ncclSuccess;
}

static void v7_unwrap(void) {
  v7 = NULL;
  collnet_adapt_slot_release(&v7_slot);
}

const plugin_adapter_t collnet_adapt_v7 = {v7_wrap, v7_unwrap};
