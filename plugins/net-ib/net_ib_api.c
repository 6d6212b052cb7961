/* The exported tables: ncclNetPlugin_v12 (mkccl), v11 (NCCL 2.28) and v10,
 * over one implementation that works with v12 properties. */
#include <stdlib.h>
#include <string.h>

#include "net_ib.h"

static ncclResult_t net_ib_init_common(ncclDebugLogger_t logger) {
  if (logger) net_ib_logger = logger;
  return net_ib_devs_discover();
}

static ncclResult_t net_ib_init_v12(void** ctx, uint64_t commId, ncclNetCommConfig_v12_t* config,
                                    ncclDebugLogger_t logger, ncclProfilerCallback_t prof) {
  (void)commId, (void)prof;
  if (!ctx) return ncclInvalidArgument;
  net_ib_ctx_t* c = calloc(1, sizeof(*c));
  if (!c) return ncclSystemError;
  c->trafficClass = config ? config->trafficClass : NCCL_NET_TRAFFIC_CLASS_UNDEF;
  ncclResult_t res = net_ib_init_common(logger);
  if (res != ncclSuccess) {
    free(c);
    return res;
  }
  *ctx = c;
  return ncclSuccess;
}

static ncclResult_t net_ib_init_v11(void** ctx, uint64_t commId, ncclNetCommConfig_v11_t* config,
                                    ncclDebugLogger_t logger, ncclProfilerCallback_t prof) {
  ncclNetCommConfig_v12_t c12 = {config ? config->trafficClass : NCCL_NET_TRAFFIC_CLASS_UNDEF};
  return net_ib_init_v12(ctx, commId, &c12, logger, prof);
}

static ncclResult_t net_ib_init_v10(ncclDebugLogger_t logger, ncclProfilerCallback_t prof) {
  (void)prof;
  return net_ib_init_common(logger);
}

/* Devices stay open for the process: NCCL and mkccl init again per comm. */
static ncclResult_t net_ib_finalize(void* ctx) {
  free(ctx);
  return ncclSuccess;
}

static ncclResult_t net_ib_devices(int* ndev) {
  if (!ndev) return ncclInvalidArgument;
  *ndev = net_ib_dev_count();
  return ncclSuccess;
}

static ncclResult_t net_ib_get_properties_v12(int dev, ncclNetProperties_v12_t* props) {
  return net_ib_props(dev, props);
}

static ncclResult_t net_ib_get_properties_v11(int dev, ncclNetProperties_v11_t* props) {
  ncclNetProperties_v12_t p;
  ncclResult_t res = net_ib_props(dev, &p);
  if (res != ncclSuccess || !props) return res == ncclSuccess ? ncclInvalidArgument : res;
  memset(props, 0, sizeof(*props));
  props->name = p.name;
  props->pciPath = p.pciPath;
  props->guid = p.guid;
  props->ptrSupport = p.ptrSupport;
  props->regIsGlobal = p.regIsGlobal;
  props->forceFlush = p.forceFlush;
  props->speed = p.speed;
  props->port = p.port;
  props->latency = p.latency;
  props->maxComms = p.maxComms;
  props->maxRecvs = p.maxRecvs;
  props->netDeviceType = p.netDeviceType;
  props->netDeviceVersion = p.netDeviceVersion;
  props->vProps.ndevs = p.vProps.ndevs;
  for (int i = 0; i < p.vProps.ndevs && i < NCCL_NET_MAX_DEVS_PER_NIC_V11; i++) props->vProps.devs[i] = p.vProps.devs[i];
  props->maxP2pBytes = p.maxP2pBytes;
  props->maxCollBytes = p.maxCollBytes;
  props->maxMultiRequestSize = p.maxMultiRequestSize;
  return ncclSuccess;
}

static ncclResult_t net_ib_get_properties_v10(int dev, ncclNetProperties_v10_t* props) {
  ncclNetProperties_v11_t p;
  ncclResult_t res = net_ib_get_properties_v11(dev, &p);
  if (res != ncclSuccess || !props) return res == ncclSuccess ? ncclInvalidArgument : res;
  memcpy(props, &p, sizeof(*props)); /* v10 is v11 without maxMultiRequestSize at the end */
  return ncclSuccess;
}

static ncclResult_t net_ib_connect_v12(void* ctx, int dev, void* handle, void** sendComm,
                                       ncclNetDeviceHandle_v12_t** sendDevComm) {
  (void)sendDevComm;
  return net_ib_connect(ctx, dev, handle, sendComm);
}

static ncclResult_t net_ib_connect_v10(int dev, ncclNetCommConfig_v10_t* config, void* handle, void** sendComm,
                                       ncclNetDeviceHandle_v10_t** sendDevComm) {
  (void)sendDevComm;
  net_ib_ctx_t ctx = {config ? config->trafficClass : NCCL_NET_TRAFFIC_CLASS_UNDEF};
  return net_ib_connect(&ctx, dev, handle, sendComm);
}

static ncclResult_t net_ib_listen_v10(int dev, void* handle, void** listenComm) {
  return net_ib_listen(NULL, dev, handle, listenComm);
}

static ncclResult_t net_ib_accept_v12(void* listenComm, void** recvComm, ncclNetDeviceHandle_v12_t** recvDevComm) {
  (void)recvDevComm;
  return net_ib_accept(listenComm, recvComm);
}

static ncclResult_t net_ib_close_send(void* comm) { return net_ib_close_comm(comm, IB_COMM_SEND); }
static ncclResult_t net_ib_close_recv(void* comm) { return net_ib_close_comm(comm, IB_COMM_RECV); }

static ncclResult_t net_ib_set_net_attr(void* ctx, ncclNetAttr_v12_t* attr) {
  (void)ctx, (void)attr;
  return ncclSuccess;
}

#define NET_IB_COMMON_ENTRIES                                                                                   \
  .accept = net_ib_accept_v12, .regMr = net_ib_reg_mr, .regMrDmaBuf = net_ib_reg_mr_dmabuf,                      \
  .deregMr = net_ib_dereg_mr, .isend = net_ib_isend, .irecv = net_ib_irecv, .iflush = net_ib_iflush,            \
  .test = net_ib_test, .closeSend = net_ib_close_send, .closeRecv = net_ib_close_recv,                          \
  .closeListen = net_ib_close_listen, .getDeviceMr = NULL, .irecvConsumed = NULL, .makeVDevice = NULL

__attribute__((visibility("default"))) const ncclNet_v12_t ncclNetPlugin_v12 = {
    .name = "IB",
    .init = net_ib_init_v12,
    .devices = net_ib_devices,
    .getProperties = net_ib_get_properties_v12,
    .listen = net_ib_listen,
    .connect = net_ib_connect_v12,
    NET_IB_COMMON_ENTRIES,
    .finalize = net_ib_finalize,
    .setNetAttr = net_ib_set_net_attr,
};

__attribute__((visibility("default"))) const ncclNet_v11_t ncclNetPlugin_v11 = {
    .name = "IB",
    .init = net_ib_init_v11,
    .devices = net_ib_devices,
    .getProperties = net_ib_get_properties_v11,
    .listen = net_ib_listen,
    .connect = net_ib_connect_v12,
    NET_IB_COMMON_ENTRIES,
    .finalize = net_ib_finalize,
    .setNetAttr = (ncclResult_t(*)(void*, ncclNetAttr_v11_t*))net_ib_set_net_attr,
};

__attribute__((visibility("default"))) const ncclNet_v10_t ncclNetPlugin_v10 = {
    .name = "IB",
    .init = net_ib_init_v10,
    .devices = net_ib_devices,
    .getProperties = net_ib_get_properties_v10,
    .listen = net_ib_listen_v10,
    .connect = net_ib_connect_v10,
    NET_IB_COMMON_ENTRIES,
};
