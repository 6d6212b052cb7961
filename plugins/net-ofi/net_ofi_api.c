/* The exported tables: ncclNetPlugin_v12 (mkccl), v11 (NCCL 2.28) and v10,
 * over one v12 implementation (abi/net/mkccl_net_exports.h adapts it). */
#include <stdlib.h>

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

static ncclResult_t net_ofi_init_noctx(ncclDebugLogger_t logger, ncclProfilerCallback_t prof) {
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

static ncclResult_t net_ofi_connect_v12(void* ctx, int dev, void* handle, void** sendComm,
                                        ncclNetDeviceHandle_v12_t** sendDevComm) {
  (void)sendDevComm;
  return net_ofi_connect(ctx, dev, handle, sendComm);
}

/* v10 and older: no context; the traffic class is not used. */
static ncclResult_t net_ofi_connect_noctx(int dev, int trafficClass, void* handle, void** sendComm,
                                          ncclNetDeviceHandle_v12_t** sendDevComm) {
  (void)trafficClass, (void)sendDevComm;
  return net_ofi_connect(NULL, dev, handle, sendComm);
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

#define MKCCL_NET_NAME "OFI"
#define MKCCL_NET_INIT net_ofi_init_v12
#define MKCCL_NET_INIT_NOCTX net_ofi_init_noctx
#define MKCCL_NET_DEVICES net_ofi_devices
#define MKCCL_NET_GET_PROPERTIES net_ofi_props
#define MKCCL_NET_LISTEN net_ofi_listen
#define MKCCL_NET_CONNECT net_ofi_connect_v12
#define MKCCL_NET_CONNECT_NOCTX net_ofi_connect_noctx
#define MKCCL_NET_ACCEPT net_ofi_accept_v12
#define MKCCL_NET_REG_MR net_ofi_reg_mr
#define MKCCL_NET_REG_MR_DMA_BUF net_ofi_reg_mr_dmabuf
#define MKCCL_NET_DEREG_MR net_ofi_dereg_mr
#define MKCCL_NET_ISEND net_ofi_isend
#define MKCCL_NET_IRECV net_ofi_irecv
#define MKCCL_NET_IFLUSH net_ofi_iflush
#define MKCCL_NET_TEST net_ofi_test
#define MKCCL_NET_CLOSE_SEND net_ofi_close_send
#define MKCCL_NET_CLOSE_RECV net_ofi_close_recv
#define MKCCL_NET_CLOSE_LISTEN net_ofi_close_listen
#define MKCCL_NET_GET_DEVICE_MR NULL
#define MKCCL_NET_IRECV_CONSUMED NULL
#define MKCCL_NET_FINALIZE net_ofi_finalize
#define MKCCL_NET_SET_NET_ATTR net_ofi_set_net_attr
#include "net/mkccl_net_exports.h"

MKCCL_NET_EXPORT_FROM_V10(net_ofi)
