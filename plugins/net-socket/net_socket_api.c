/* The v12 entry points that are not a part's own (net_socket_api.h). */
#include "net_socket_api.h"

#include "net_socket_ctx.h"
#include "net_socket_dev.h"
#include "net_socket_log.h"
#include "net_socket_prof.h"
#include "net_socket_recv.h"
#include "net_socket_send.h"
#include "net_socket_setup.h"
#include "net_socket_test.h"
#include "net_socket_unpack.h"

ncclResult_t net_socket_init(ncclDebugLogger_t logger) {
  net_socket_log_set(logger);
  return net_socket_devs_init();
}

ncclResult_t net_socket_init_ctx(void** ctx, uint64_t commId, ncclNetCommConfig_v12_t* config,
                                 ncclDebugLogger_t logger, ncclProfilerCallback_t profiler) {
  net_socket_prof_set(profiler);
  NS_CHECK(net_socket_init(logger));
  return net_socket_ctx_new(commId, config ? config->trafficClass : NCCL_NET_TRAFFIC_CLASS_UNDEF, ctx);
}

ncclResult_t net_socket_init_noctx(ncclDebugLogger_t logger, ncclProfilerCallback_t profiler) {
  net_socket_prof_set(profiler);
  return net_socket_init(logger);
}

ncclResult_t net_socket_devices(int* ndev) {
  if (!ndev) return NS_FAIL(ncclInvalidArgument, "devices: NULL output");
  *ndev = net_socket_devs_count();
  return ncclSuccess;
}

ncclResult_t net_socket_listen_ctx(void* ctx, int dev, void* handle, void** listenComm) {
  return net_socket_listen(dev, handle, listenComm, net_socket_ctx_traffic_class(ctx), net_socket_ctx_max_flows(ctx));
}

ncclResult_t net_socket_connect_ctx(void* ctx, int dev, void* handle, void** sendComm,
                                    ncclNetDeviceHandle_v12_t** sendDevComm) {
  return net_socket_connect_noctx(dev, net_socket_ctx_traffic_class(ctx), handle, sendComm, sendDevComm);
}

ncclResult_t net_socket_connect_noctx(int dev, int trafficClass, void* handle, void** sendComm,
                                      ncclNetDeviceHandle_v12_t** sendDevComm) {
  (void)sendDevComm;
  return net_socket_connect(dev, handle, sendComm, trafficClass);
}

ncclResult_t net_socket_accept_dev(void* listenComm, void** recvComm, ncclNetDeviceHandle_v12_t** recvDevComm) {
  NS_CHECK(net_socket_accept(listenComm, recvComm));
  if (*recvComm && recvDevComm && *recvDevComm) {
    ncclResult_t res = net_socket_unpack_attach(*recvComm, *recvDevComm);
    if (res != ncclSuccess) {
      net_socket_close_comm(*recvComm);
      *recvComm = NULL;
      return res;
    }
  }
  return ncclSuccess;
}

/* Any non-NULL value: callers may treat NULL as "not registered". */
static char net_socket_mr_token;

ncclResult_t net_socket_reg_mr(void* comm, void* data, size_t size, int type, void** mhandle) {
  (void)data;
  (void)size;
  if (!comm || !mhandle) return NS_FAIL(ncclInvalidArgument, "regMr: NULL comm or handle output");
  if (type != NCCL_PTR_HOST) return NS_FAIL(ncclInvalidArgument, "regMr: only host memory (type %d)", type);
  *mhandle = &net_socket_mr_token;
  return ncclSuccess;
}

ncclResult_t net_socket_dereg_mr(void* comm, void* mhandle) {
  (void)comm;
  (void)mhandle;
  return ncclSuccess;
}

ncclResult_t net_socket_iflush(void* recvComm, int n, void** data, int* sizes, void** mhandles, void** request) {
  (void)recvComm;
  (void)n;
  (void)data;
  (void)sizes;
  (void)mhandles;
  if (!request) return NS_FAIL(ncclInvalidArgument, "iflush: NULL request output");
  *request = NULL;
  return ncclSuccess;
}

ncclResult_t net_socket_isend_prof(void* sendComm, void* data, size_t size, int tag, void* mhandle, void* phandle,
                                   void** request) {
  (void)mhandle;
  NS_CHECK(net_socket_isend(sendComm, data, size, tag, request));
  if (*request) net_socket_prof_start(*request, &phandle);
  return ncclSuccess;
}

ncclResult_t net_socket_irecv_prof(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                                   void** phandles, void** request) {
  (void)mhandles;
  NS_CHECK(net_socket_irecv(recvComm, n, data, sizes, tags, request));
  if (*request) net_socket_prof_start(*request, phandles);
  return ncclSuccess;
}
