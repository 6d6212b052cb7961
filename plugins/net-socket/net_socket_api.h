/* The implementation of the newest net ABI (v12) that every exported table
 * is built from (net_socket_exports.c): the entry points that are not a
 * part's own (setup, send, receive, test, context, unpack). */
#ifndef NET_SOCKET_API_H
#define NET_SOCKET_API_H

#include <stddef.h>
#include <stdint.h>

#include "nccl.h"
#include "nccl_common.h"
#include "net/nccl_net.h"

/* Global init (logger, interfaces); idempotent. */
ncclResult_t net_socket_init(ncclDebugLogger_t logger);
/* v11+: init with a context per host communicator (net_socket_ctx.h). */
ncclResult_t net_socket_init_ctx(void** ctx, uint64_t commId, ncclNetCommConfig_v12_t* config,
                                 ncclDebugLogger_t logger, ncclProfilerCallback_t profiler);
/* v6..v10: init without one. */
ncclResult_t net_socket_init_noctx(ncclDebugLogger_t logger, ncclProfilerCallback_t profiler);
ncclResult_t net_socket_devices(int* ndev);
/* Properties of dev in the newest layout (net_socket_props.c). */
ncclResult_t net_socket_props_get(int dev, ncclNetProperties_v12_t* props);

/* Setup through a context (NULL for v6..v10), or, for v6..v10's connect,
 * with the traffic class given. Device handles: HOST needs none; a handle
 * of UNPACK gives the receive comm its queue (net_socket_unpack.h). */
ncclResult_t net_socket_listen_ctx(void* ctx, int dev, void* handle, void** listenComm);
ncclResult_t net_socket_connect_ctx(void* ctx, int dev, void* handle, void** sendComm,
                                    ncclNetDeviceHandle_v12_t** sendDevComm);
ncclResult_t net_socket_connect_noctx(int dev, int trafficClass, void* handle, void** sendComm,
                                      ncclNetDeviceHandle_v12_t** sendDevComm);
ncclResult_t net_socket_accept_dev(void* listenComm, void** recvComm, ncclNetDeviceHandle_v12_t** recvDevComm);

/* Host memory only: nothing to register. CUDA pointers are refused. */
ncclResult_t net_socket_reg_mr(void* comm, void* data, size_t size, int type, void** mhandle);
ncclResult_t net_socket_dereg_mr(void* comm, void* mhandle);
/* Nothing to flush for host memory: completes at once (*request = NULL). */
ncclResult_t net_socket_iflush(void* recvComm, int n, void** data, int* sizes, void** mhandles, void** request);

/* isend/irecv with the caller's profiler handles (net_socket_prof.h). */
ncclResult_t net_socket_isend_prof(void* sendComm, void* data, size_t size, int tag, void* mhandle, void* phandle,
                                   void** request);
ncclResult_t net_socket_irecv_prof(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                                   void** phandles, void** request);

#endif
