/* The exported tables: ncclNetPlugin_v12 (mkccl), v11 (NCCL 2.28) and v10,
 * over one implementation that works with v12 properties. */
#include <stdlib.h>
#include <string.h>

#include "net_ofi.h"

static pthread_mutex_t net_ofi_init_lock = PTHREAD_MUTEX_INITIALIZER;
static int net_ofi_inits;

static ncclResult_t net_ofi_init_common(ncclDebugLogger_t logger) {
  pthread_mutex_lock(&net_ofi_init_lock);
  if (logger) __atomic_store_n(&net_ofi_logger, logger, __ATOMIC_RELAXED);
  net_ofi_params_load();
  ncclResult_t res = net_ofi_nics_discover();
  if (res == ncclSuccess) net_ofi_inits++;
  pthread_mutex_unlock(&net_ofi_init_lock);
  return res;
}

static ncclResult_t net_ofi_init_v12(void** ctx, uint64_t commId, ncclNetCommConfig_v12_t* config,
                                     ncclDebugLogger_t logger, ncclProfilerCallback_t prof) {
  (void)commId, (void)prof;
  if (!ctx) return ncclInvalidArgument;
  net_ofi_ctx_t* c = calloc(1, sizeof(*c));
  if (!c) return ncclSystemError;
  c->trafficClass = config ? config->trafficClass : NCCL_NET_TRAFFIC_CLASS_UNDEF;
  ncclResult_t res = net_ofi_init_common(logger);
  if (res != ncclSuccess) {
    free(c);
    return res;
  }
  *ctx = c;
  return ncclSuccess;
}

static ncclResult_t net_ofi_init_v11(void** ctx, uint64_t commId, ncclNetCommConfig_v11_t* config,
                                     ncclDebugLogger_t logger, ncclProfilerCallback_t prof) {
  ncclNetCommConfig_v12_t c12 = {config ? config->trafficClass : NCCL_NET_TRAFFIC_CLASS_UNDEF};
  return net_ofi_init_v12(ctx, commId, &c12, logger, prof);
}

static ncclResult_t net_ofi_init_v10(ncclDebugLogger_t logger, ncclProfilerCallback_t prof) {
  (void)prof;
  return net_ofi_init_common(logger);
}

/* The last context gone: endpoints nobody uses are closed, and when none is
 * left the provider list too (a later init discovers afresh). */
static ncclResult_t net_ofi_finalize(void* ctx) {
  free(ctx);
  pthread_mutex_lock(&net_ofi_init_lock);
  if (net_ofi_inits > 0 && --net_ofi_inits == 0 && net_ofi_devs_close() == 0) net_ofi_nics_release();
  pthread_mutex_unlock(&net_ofi_init_lock);
  return ncclSuccess;
}

static ncclResult_t net_ofi_devices(int* ndev) {
  if (!ndev) return ncclInvalidArgument;
  *ndev = net_ofi_nic_count();
  return ncclSuccess;
}

static ncclResult_t net_ofi_get_properties_v12(int dev, ncclNetProperties_v12_t* props) {
  return net_ofi_props(dev, props);
}

static ncclResult_t net_ofi_get_properties_v11(int dev, ncclNetProperties_v11_t* props) {
  ncclNetProperties_v12_t p;
  ncclResult_t res = net_ofi_props(dev, &p);
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

static ncclResult_t net_ofi_get_properties_v10(int dev, ncclNetProperties_v10_t* props) {
  ncclNetProperties_v11_t p;
  ncclResult_t res = net_ofi_get_properties_v11(dev, &p);
  if (res != ncclSuccess || !props) return res == ncclSuccess ? ncclInvalidArgument : res;
  memcpy(props, &p, sizeof(*props)); /* v10 is v11 without maxMultiRequestSize at the end */
  return ncclSuccess;
}

static ncclResult_t net_ofi_connect_v12(void* ctx, int dev, void* handle, void** sendComm,
                                        ncclNetDeviceHandle_v12_t** sendDevComm) {
  (void)sendDevComm;
  return net_ofi_connect(ctx, dev, handle, sendComm);
}

static ncclResult_t net_ofi_connect_v10(int dev, ncclNetCommConfig_v10_t* config, void* handle, void** sendComm,
                                        ncclNetDeviceHandle_v10_t** sendDevComm) {
  (void)config, (void)sendDevComm;
  return net_ofi_connect(NULL, dev, handle, sendComm);
}

static ncclResult_t net_ofi_listen_v10(int dev, void* handle, void** listenComm) {
  return net_ofi_listen(NULL, dev, handle, listenComm);
}

static ncclResult_t net_ofi_accept_v12(void* listenComm, void** recvComm, ncclNetDeviceHandle_v12_t** recvDevComm) {
  (void)recvDevComm;
  return net_ofi_accept(listenComm, recvComm);
}

static ncclResult_t net_ofi_close_send(void* comm) { return net_ofi_close_comm(comm, OFI_OBJ_SEND); }
static ncclResult_t net_ofi_close_recv(void* comm) { return net_ofi_close_comm(comm, OFI_OBJ_RECV); }

/* Hints are advisory: nothing here depends on them yet. */
static ncclResult_t net_ofi_set_net_attr(void* ctx, ncclNetAttr_v12_t* attr) {
  (void)ctx, (void)attr;
  return ncclSuccess;
}

__attribute__((visibility("default"))) const ncclNet_v12_t ncclNetPlugin_v12 = {
    .name = "OFI",
    .init = net_ofi_init_v12,
    .devices = net_ofi_devices,
    .getProperties = net_ofi_get_properties_v12,
    .listen = net_ofi_listen,
    .connect = net_ofi_connect_v12,
    .accept = net_ofi_accept_v12,
    .regMr = net_ofi_reg_mr,
    .regMrDmaBuf = net_ofi_reg_mr_dmabuf,
    .deregMr = net_ofi_dereg_mr,
    .isend = net_ofi_isend,
    .irecv = net_ofi_irecv,
    .iflush = net_ofi_iflush,
    .test = net_ofi_test,
    .closeSend = net_ofi_close_send,
    .closeRecv = net_ofi_close_recv,
    .closeListen = net_ofi_close_listen,
    .getDeviceMr = NULL,
    .irecvConsumed = NULL,
    .makeVDevice = NULL,
    .finalize = net_ofi_finalize,
    .setNetAttr = net_ofi_set_net_attr,
};

__attribute__((visibility("default"))) const ncclNet_v11_t ncclNetPlugin_v11 = {
    .name = "OFI",
    .init = net_ofi_init_v11,
    .devices = net_ofi_devices,
    .getProperties = net_ofi_get_properties_v11,
    .listen = net_ofi_listen,
    .connect = net_ofi_connect_v12,
    .accept = net_ofi_accept_v12,
    .regMr = net_ofi_reg_mr,
    .regMrDmaBuf = net_ofi_reg_mr_dmabuf,
    .deregMr = net_ofi_dereg_mr,
    .isend = net_ofi_isend,
    .irecv = net_ofi_irecv,
    .iflush = net_ofi_iflush,
    .test = net_ofi_test,
    .closeSend = net_ofi_close_send,
    .closeRecv = net_ofi_close_recv,
    .closeListen = net_ofi_close_listen,
    .getDeviceMr = NULL,
    .irecvConsumed = NULL,
    .makeVDevice = NULL,
    .finalize = net_ofi_finalize,
    .setNetAttr = (ncclResult_t(*)(void*, ncclNetAttr_v11_t*))net_ofi_set_net_attr,
};

__attribute__((visibility("default"))) const ncclNet_v10_t ncclNetPlugin_v10 = {
    .name = "OFI",
    .init = net_ofi_init_v10,
    .devices = net_ofi_devices,
    .getProperties = net_ofi_get_properties_v10,
    .listen = net_ofi_listen_v10,
    .connect = net_ofi_connect_v10,
    .accept = net_ofi_accept_v12,
    .regMr = net_ofi_reg_mr,
    .regMrDmaBuf = net_ofi_reg_mr_dmabuf,
    .deregMr = net_ofi_dereg_mr,
    .isend = net_ofi_isend,
    .irecv = net_ofi_irecv,
    .iflush = net_ofi_iflush,
    .test = net_ofi_test,
    .closeSend = net_ofi_close_send,
    .closeRecv = net_ofi_close_recv,
    .closeListen = net_ofi_close_listen,
    .getDeviceMr = NULL,
    .irecvConsumed = NULL,
    .makeVDevice = NULL,
};
