/* Collnet ABI v6 presented as v12: int counts and regMr sizes, no context, allreduce only. */
#include <string.h>

#include "base/err.h"
#include "plugin/collnet_adapt_common.h"
#include "plugin/net_props_up.h"

static const ncclCollNet_v6_t* v6;
static ncclCollNet_v12_t v6_table;
static collnet_adapt_slot_t v6_slot = COLLNET_ADAPT_SLOT_INIT;

static ncclResult_t v6_plugin_init(ncclDebugLogger_t log) { return v6->init(log); }

static ncclResult_t v6_init(void** ctx, uint64_t commId, ncclDebugLogger_t log) {
  (void)commId;
  return collnet_adapt_once_init(&v6_slot, v6_plugin_init, log, ctx);
}

static ncclResult_t v6_finalize(void* ctx) { return collnet_adapt_once_finalize(&v6_slot, ctx); }

static ncclResult_t v6_listen(void* ctx, int dev, void* handle, void** listenComm) {
  (void)ctx;
  return v6->listen(dev, handle, listenComm);
}

static ncclResult_t v6_getProperties(int dev, ncclNetProperties_v12_t* props) {
  ncclNetProperties_v6_t p;
  memset(&p, 0, sizeof(p));
  ncclResult_t res = v6->getProperties(dev, &p);
  if (res != ncclSuccess) return res;
  net_props_up_v6(&p, dev, props);
  return ncclSuccess;
}

static ncclResult_t v6_regMr(void* collComm, void* data, size_t size, int type, void** mhandle) {
  int sizeInt;
  MK_CHECK(collnet_adapt_to_int(v6->name, 6, "regMr size", size, 0x7fffffffLL, &sizeInt));
  return v6->regMr(collComm, data, sizeInt, type, mhandle);
}

static ncclResult_t v6_iallreduce(void* collComm, void* sendData, void* recvData, size_t count,
                                   ncclDataType_t dataType, ncclRedOp_t redOp, void* sendMhandle, void* recvMhandle,
                                   void** request) {
  int countInt;
  MK_CHECK(collnet_adapt_to_int(v6->name, 6, "iallreduce count", count, MAX_NET_SIZE, &countInt));
  return v6->iallreduce(collComm, sendData, recvData, countInt, dataType, redOp, sendMhandle, recvMhandle, request);
}

static ncclResult_t v6_wrap(const void* plugin, const void** presented) {
  MK_CHECK(collnet_adapt_slot_take(&v6_slot));
  v6 = plugin;
  v6_table = (ncclCollNet_v12_t){
      .name = v6->name,
      .init = v6_init,
      .devices = v6->devices,
      .getProperties = v6_getProperties,
      .listen = v6_listen,
      .connect = v6->connect,
      .reduceSupport = v6->reduceSupport,
      .regMr = v6_regMr,
      .regMrDmaBuf = v6->regMrDmaBuf,
      .deregMr = v6->deregMr,
      .iallreduce = v6_iallreduce,
      .iflush = v6->iflush,
      .test = v6->test,
      .closeColl = v6->closeColl,
      .closeListen = v6->closeListen,
      .finalize = v6_finalize,
  };
  *presented = &v6_table;
  return ncclSuccess;
}

static void v6_unwrap(void) {
  v6 = NULL;
  collnet_adapt_slot_release(&v6_slot);
}

const plugin_adapter_t collnet_adapt_v6 = {v6_wrap, v6_unwrap};
