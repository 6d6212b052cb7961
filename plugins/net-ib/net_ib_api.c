/* The exported tables: ncclNetPlugin_v12 (mkccl), v11 (NCCL 2.28) and v10,
 * over one v12 implementation (abi/net/mkccl_net_exports.h adapts it). */
#include <stdlib.h>

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

static ncclResult_t net_ib_init_noctx(ncclDebugLogger_t logger, ncclProfilerCallback_t prof) {
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

static ncclResult_t net_ib_connect_v12(void* ctx, int dev, void* handle, void** sendComm,
                                       ncclNetDeviceHandle_v12_t** sendDevComm) {
  (void)sendDevComm;
  return net_ib_connect(ctx, dev, handle, sendComm);
}

/* v10 and older: no context, the traffic class comes with the connect. */
static ncclResult_t net_ib_connect_noctx(int dev, int trafficClass, void* handle, void** sendComm,
                                         ncclNetDeviceHandle_v12_t** sendDevComm) {
  (void)sendDevComm;
  net_ib_ctx_t ctx = {trafficClass};
  return net_ib_connect(&ctx, dev, handle, sendComm);
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

#define MKCCL_NET_NAME "IB"
#define MKCCL_NET_INIT net_ib_init_v12
#define MKCCL_NET_INIT_NOCTX net_ib_init_noctx
#define MKCCL_NET_DEVICES net_ib_devices
#define MKCCL_NET_GET_PROPERTIES net_ib_props
#define MKCCL_NET_LISTEN net_ib_listen
#define MKCCL_NET_CONNECT net_ib_connect_v12
#define MKCCL_NET_CONNECT_NOCTX net_ib_connect_noctx
#define MKCCL_NET_ACCEPT net_ib_accept_v12
#define MKCCL_NET_REG_MR net_ib_reg_mr
#define MKCCL_NET_REG_MR_DMA_BUF net_ib_reg_mr_dmabuf
#define MKCCL_NET_DEREG_MR net_ib_dereg_mr
#define MKCCL_NET_ISEND net_ib_isend
#define MKCCL_NET_IRECV net_ib_irecv
#define MKCCL_NET_IFLUSH net_ib_iflush
#define MKCCL_NET_TEST net_ib_test
#define MKCCL_NET_CLOSE_SEND net_ib_close_send
#define MKCCL_NET_CLOSE_RECV net_ib_close_recv
#define MKCCL_NET_CLOSE_LISTEN net_ib_close_listen
#define MKCCL_NET_GET_DEVICE_MR NULL
#define MKCCL_NET_IRECV_CONSUMED NULL
#define MKCCL_NET_FINALIZE net_ib_finalize
#define MKCCL_NET_SET_NET_ATTR net_ib_set_net_attr
#include "net/mkccl_net_exports.h"

MKCCL_NET_EXPORT_FROM_V10(net_ib)
