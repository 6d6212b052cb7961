/* Entry points with the exact signatures several version tables share, so
 * each net_socket_vN.c only adds what is its own (init, properties). */
#ifndef NET_SOCKET_ENTRY_H
#define NET_SOCKET_ENTRY_H

#include "net/nccl_net.h"
#include "net_socket_api.h"

/* v11, v12: listen/connect take the per-communicator ctx. */
ncclResult_t net_socket_e_listen_ctx(void* ctx, int dev, void* handle, void** listenComm);
ncclResult_t net_socket_e_connect_ctx(void* ctx, int dev, void* handle, void** sendComm,
                                      ncclNetDeviceHandle_v7_t** sendDevComm);
/* v6..v10: no ctx. */
ncclResult_t net_socket_e_listen(int dev, void* handle, void** listenComm);
/* v7..v12: device handles (HOST type: never used). */
ncclResult_t net_socket_e_connect_dev(int dev, void* handle, void** sendComm, ncclNetDeviceHandle_v7_t** sendDevComm);
ncclResult_t net_socket_e_accept_dev(void* listenComm, void** recvComm, ncclNetDeviceHandle_v7_t** recvDevComm);
/* v10..v12: size_t sizes, profiler handles. */
ncclResult_t net_socket_e_isend_v10(void* sendComm, void* data, size_t size, int tag, void* mhandle, void* phandle,
                                    void** request);
ncclResult_t net_socket_e_irecv_v10(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                                    void** phandles, void** request);
/* v9: size_t sizes. */
ncclResult_t net_socket_e_isend_v9(void* sendComm, void* data, size_t size, int tag, void* mhandle, void** request);
ncclResult_t net_socket_e_irecv_v9(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                                   void** request);
/* v6..v8: int sizes. */
ncclResult_t net_socket_e_isend_v6(void* sendComm, void* data, int size, int tag, void* mhandle, void** request);
ncclResult_t net_socket_e_irecv_v6(void* recvComm, int n, void** data, int* sizes, int* tags, void** mhandles,
                                   void** request);
/* v6, v7: int size in regMr. */
ncclResult_t net_socket_e_reg_mr_v6(void* comm, void* data, int size, int type, void** mhandle);

#endif
