/* The per-communicator context of net ABI v11+ (init makes one, finalize
 * frees it): the traffic class of its connections and setNetAttr's cap on
 * flows per peer, the TCP connections one connection may open (the control
 * socket is one; maxFlowsPerPeer 1 leaves no data socket and no helper
 * thread, the caller of test moving the data), applied to the layouts of
 * later listens where NCCL_SOCKET_NTHREADS and NCCL_NSOCKS_PERTHREAD are
 * left to detection. Values <= 0: no cap. A NULL ctx (v6..v10) has neither. */
#ifndef NET_SOCKET_CTX_H
#define NET_SOCKET_CTX_H

#include <stdint.h>

#include "nccl.h"
#include "net/nccl_net.h"

ncclResult_t net_socket_ctx_new(uint64_t commId, int trafficClass, void** ctx);
ncclResult_t net_socket_ctx_free(void* ctx);
int net_socket_ctx_traffic_class(const void* ctx);
int net_socket_ctx_max_flows(const void* ctx);
/* setNetAttr: of the hints, flows per peer; NULL clears them. */
ncclResult_t net_socket_ctx_set_attr(void* ctx, ncclNetAttr_v12_t* attr);

#endif
