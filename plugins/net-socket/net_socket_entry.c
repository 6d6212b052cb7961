#include "net_socket_entry.h"

#include "net_socket_comm.h"
#include "net_socket_log.h"
#include "net_socket_prof.h"
#include "net_socket_unpack.h"

ncclResult_t net_socket_e_listen_ctx(void* ctx, int dev, void* handle, void** listenComm) {
  return net_socket_listen(dev, handle, listenComm, net_socket_ctx_traffic_class(ctx), net_socket_ctx_max_flows(ctx));
}

ncclResult_t net_socket_e_connect_ctx(void* ctx, int dev, void* handle, void** sendComm,
                                      ncclNetDeviceHandle_v7_t** sendDevComm) {
  (void)sendDevComm;
  return net_socket_connect(dev, handle, sendComm, net_socket_ctx_traffic_class(ctx));
}

ncclResult_t net_socket_e_listen(int dev, void* handle, void** listenComm) {
  return net_socket_listen(dev, handle, listenComm, NCCL_NET_TRAFFIC_CLASS_UNDEF, NCCL_NET_ATTR_UNDEF);
}

ncclResult_t net_socket_e_connect_dev(int dev, void* handle, void** sendComm, ncclNetDeviceHandle_v7_t** sendDevComm) {
  (void)sendDevComm;
  return net_socket_connect(dev, handle, sendComm, NCCL_NET_TRAFFIC_CLASS_UNDEF);
}

/* A device handle from the core (unpack mode, UNPACK accepted) gets the
 * comm's queue; otherwise receives are ordinary. */
ncclResult_t net_socket_e_accept_dev(void* listenComm, void** recvComm, ncclNetDeviceHandle_v7_t** recvDevComm) {
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

ncclResult_t net_socket_e_isend_v10(void* sendComm, void* data, size_t size, int tag, void* mhandle, void* phandle,
                                    void** request) {
  NS_CHECK(net_socket_e_isend_v9(sendComm, data, size, tag, mhandle, request));
  if (*request) net_socket_prof_start(*request, &phandle);
  return ncclSuccess;
}

ncclResult_t net_socket_e_irecv_v10(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                                    void** phandles, void** request) {
  NS_CHECK(net_socket_e_irecv_v9(recvComm, n, data, sizes, tags, mhandles, request));
  if (*request) net_socket_prof_start(*request, phandles);
  return ncclSuccess;
}

ncclResult_t net_socket_e_isend_v9(void* sendComm, void* data, size_t size, int tag, void* mhandle, void** request) {
  (void)mhandle;
  return net_socket_isend(sendComm, data, size, tag, request);
}

ncclResult_t net_socket_e_irecv_v9(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                                   void** request) {
  (void)mhandles;
  return net_socket_irecv(recvComm, n, data, sizes, tags, request);
}

ncclResult_t net_socket_e_isend_v6(void* sendComm, void* data, int size, int tag, void* mhandle, void** request) {
  (void)mhandle;
  return net_socket_isend_int(sendComm, data, size, tag, request);
}

ncclResult_t net_socket_e_irecv_v6(void* recvComm, int n, void** data, int* sizes, int* tags, void** mhandles,
                                   void** request) {
  (void)mhandles;
  return net_socket_irecv_int(recvComm, n, data, sizes, tags, request);
}

ncclResult_t net_socket_e_reg_mr_v6(void* comm, void* data, int size, int type, void** mhandle) {
  if (size < 0) return NS_FAIL(ncclInvalidArgument, "regMr: negative size %d", size);
  return net_socket_reg_mr(comm, data, (size_t)size, type, mhandle);
}
