/* The version-neutral implementation every ncclNetPlugin_vN table calls
 * (net_socket_vN.c adapt signatures and property layouts, nothing else). */
#ifndef NET_SOCKET_API_H
#define NET_SOCKET_API_H

#include <stddef.h>
#include <stdint.h>

#include "nccl.h"
#include "nccl_common.h"
#include "net_socket_dev.h"
#include "net_socket_recv.h"
#include "net_socket_send.h"
#include "net_socket_setup.h"
#include "net_socket_test.h"

#define NET_SOCKET_NAME "Socket"

/* Global init (logger, interfaces); idempotent. */
ncclResult_t net_socket_init(ncclDebugLogger_t logger);
ncclResult_t net_socket_devices(int* ndev);
/* Properties of dev in the newest layout (net_socket_props.c). */
ncclResult_t net_socket_props_get(int dev, ncclNetProperties_v12_t* props);

/* v11+: a context per host communicator; it carries the traffic class and
 * setNetAttr's cap on flows per peer: the TCP connections one connection
 * may open (the control socket is one; maxFlowsPerPeer 1 leaves no data
 * socket and no helper thread, the caller of test moving the data), applied
 * to the layouts of later listens where NCCL_SOCKET_NTHREADS and
 * NCCL_NSOCKS_PERTHREAD are left to detection. Values <= 0: no cap. */
ncclResult_t net_socket_ctx_new(uint64_t commId, int trafficClass, void** ctx);
int net_socket_ctx_traffic_class(const void* ctx);
ncclResult_t net_socket_ctx_set_flows(void* ctx, int sendMaxFlows, int recvMaxFlows);
int net_socket_ctx_max_flows(const void* ctx);
ncclResult_t net_socket_ctx_free(void* ctx);

/* Host memory only: nothing to register. CUDA pointers are refused. */
ncclResult_t net_socket_reg_mr(void* comm, void* data, size_t size, int type, void** mhandle);
ncclResult_t net_socket_dereg_mr(void* comm, void* mhandle);
/* Nothing to flush for host memory: completes at once (*request = NULL). */
ncclResult_t net_socket_iflush(void* recvComm, int n, void** data, int* sizes, void** mhandles, void** request);

/* v6..v8 pass sizes as int. */
ncclResult_t net_socket_isend_int(void* sendComm, void* data, int size, int tag, void** request);
ncclResult_t net_socket_irecv_int(void* recvComm, int n, void** data, const int* sizes, const int* tags,
                                  void** request);

#endif
