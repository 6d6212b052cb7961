/* collnet-soft's ncclCollNetPlugin_v12: one device, host memory, reductions
 * done by the aggregator process (collnet_soft_agg.h). */
#include <stdlib.h>
#include <string.h>

#include "collnet/nccl_collnet.h"
#include "collnet_soft_comm.h"
#include "collnet_soft_log.h"
#include "collnet_soft_reduce.h"

static ncclResult_t collnet_soft_init(void** ctx, uint64_t commId, ncclDebugLogger_t log) {
  (void)commId;
  if (!ctx) return CS_FAIL(ncclInvalidArgument, "init: ctx is NULL");
  if (log) collnet_soft_log_set(log);
  int* c = calloc(1, sizeof(*c)); /* nothing per communicator yet: a token finalize frees */
  if (!c) return CS_FAIL(ncclSystemError, "init: out of memory");
  *ctx = c;
  return ncclSuccess;
}

static ncclResult_t collnet_soft_finalize(void* ctx) {
  free(ctx);
  return ncclSuccess;
}

static ncclResult_t collnet_soft_devices(int* ndev) {
  if (!ndev) return CS_FAIL(ncclInvalidArgument, "devices: ndev is NULL");
  *ndev = 1;
  return ncclSuccess;
}

static char collnet_soft_dev_name[] = "collnet-soft";

static ncclResult_t collnet_soft_get_properties(int dev, ncclNetProperties_v12_t* props) {
  if (dev != 0 || !props) return CS_FAIL(ncclInvalidArgument, "getProperties: device %d (device 0 only)", dev);
  memset(props, 0, sizeof(*props));
  props->name = collnet_soft_dev_name;
  props->pciPath = NULL;
  props->ptrSupport = NCCL_PTR_HOST;
  props->speed = 10000; /* a guess: TCP through the aggregator */
  props->latency = 0;
  props->maxComms = 65536;
  props->maxRecvs = 1;
  props->netDeviceType = NCCL_NET_DEVICE_HOST;
  props->netDeviceVersion = NCCL_NET_DEVICE_INVALID_VERSION;
  props->vProps.ndevs = 1;
  props->vProps.devs[0] = 0;
  props->maxP2pBytes = MAX_NET_SIZE;
  props->maxCollBytes = MAX_COLLNET_SIZE;
  props->maxMultiRequestSize = 1;
  props->railId = NCCL_NET_ID_UNDEF;
  props->planeId = NCCL_NET_ID_UNDEF;
  return ncclSuccess;
}

static ncclResult_t collnet_soft_listen_ctx(void* ctx, int dev, void* handle, void** listenComm) {
  (void)ctx;
  return collnet_soft_listen(dev, handle, listenComm);
}

static ncclResult_t collnet_soft_reduce_support(ncclDataType_t dataType, ncclRedOp_t redOp, int* supported) {
  if (!supported) return CS_FAIL(ncclInvalidArgument, "reduceSupport: supported is NULL");
  *supported = collnet_soft_supported(dataType, redOp);
  return ncclSuccess;
}

/* Host memory is read and written in place: a handle only marks it registered. */
static int collnet_soft_mr;

static ncclResult_t collnet_soft_reg_mr(void* collComm, void* data, size_t size, int type, void** mhandle) {
  (void)collComm, (void)data, (void)size;
  if (!mhandle) return CS_FAIL(ncclInvalidArgument, "regMr: mhandle is NULL");
  if (type != NCCL_PTR_HOST)
    return CS_FAIL(ncclInvalidUsage, "regMr: memory type %d: collnet-soft reduces host memory only", type);
  *mhandle = &collnet_soft_mr;
  return ncclSuccess;
}

static ncclResult_t collnet_soft_dereg_mr(void* collComm, void* mhandle) {
  (void)collComm;
  return mhandle == &collnet_soft_mr ? ncclSuccess : CS_FAIL(ncclInvalidArgument, "deregMr: not a handle of ours");
}

/* regMrDmaBuf and makeVDevice are the ABI's optional members: NULL, no
 * dma-buf (ptrSupport says host only) and no virtual devices. */
__attribute__((visibility("default"))) const ncclCollNet_v12_t ncclCollNetPlugin_v12 = {
    .name = "collnet-soft",
    .init = collnet_soft_init,
    .devices = collnet_soft_devices,
    .getProperties = collnet_soft_get_properties,
    .listen = collnet_soft_listen_ctx,
    .connect = collnet_soft_connect,
    .reduceSupport = collnet_soft_reduce_support,
    .regMr = collnet_soft_reg_mr,
    .regMrDmaBuf = NULL,
    .deregMr = collnet_soft_dereg_mr,
    .iallreduce = collnet_soft_iallreduce,
    .iallgather = collnet_soft_iallgather,
    .ireducescatter = collnet_soft_ireducescatter,
    .iflush = collnet_soft_iflush,
    .test = collnet_soft_test,
    .closeColl = collnet_soft_close_coll,
    .closeListen = collnet_soft_close_listen,
    .makeVDevice = NULL,
    .finalize = collnet_soft_finalize,
};
