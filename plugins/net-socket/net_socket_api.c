/* Init, contexts, memory registration and flush: the small entry points. */
#include "net_socket_api.h"

#include <stdlib.h>

#include "net_socket_log.h"

typedef struct {
  uint64_t commId;
  int trafficClass;
  int maxFlows; /* setNetAttr's maxFlowsPerPeer, NCCL_NET_ATTR_UNDEF without a hint */
} net_socket_ctx_t;

ncclResult_t net_socket_init(ncclDebugLogger_t logger) {
  net_socket_log_set(logger);
  return net_socket_devs_init();
}

ncclResult_t net_socket_devices(int* ndev) {
  if (!ndev) return NS_FAIL(ncclInvalidArgument, "devices: NULL output");
  *ndev = net_socket_devs_count();
  return ncclSuccess;
}

ncclResult_t net_socket_ctx_new(uint64_t commId, int trafficClass, void** ctx) {
  if (!ctx) return NS_FAIL(ncclInvalidArgument, "init: NULL context output");
  net_socket_ctx_t* c = calloc(1, sizeof(*c));
  if (!c) return NS_FAIL(ncclSystemError, "init: out of memory");
  c->commId = commId;
  c->trafficClass = trafficClass;
  c->maxFlows = NCCL_NET_ATTR_UNDEF;
  *ctx = c;
  return ncclSuccess;
}

int net_socket_ctx_traffic_class(const void* ctx) {
  return ctx ? ((const net_socket_ctx_t*)ctx)->trafficClass : NCCL_NET_TRAFFIC_CLASS_UNDEF;
}

/* The smaller of the two sides' caps: a connection's layout is its
 * listener's, and both of its ends use it. */
ncclResult_t net_socket_ctx_set_flows(void* ctx, int sendMaxFlows, int recvMaxFlows) {
  if (!ctx) return NS_FAIL(ncclInvalidArgument, "setNetAttr: NULL context");
  int flows = NCCL_NET_ATTR_UNDEF;
  if (sendMaxFlows > 0) flows = sendMaxFlows;
  if (recvMaxFlows > 0 && (flows <= 0 || recvMaxFlows < flows)) flows = recvMaxFlows;
  ((net_socket_ctx_t*)ctx)->maxFlows = flows;
  return ncclSuccess;
}

int net_socket_ctx_max_flows(const void* ctx) {
  return ctx ? ((const net_socket_ctx_t*)ctx)->maxFlows : NCCL_NET_ATTR_UNDEF;
}

ncclResult_t net_socket_ctx_free(void* ctx) {
  free(ctx);
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

ncclResult_t net_socket_isend_int(void* sendComm, void* data, int size, int tag, void** request) {
  if (size < 0) return NS_FAIL(ncclInvalidArgument, "isend: negative size %d", size);
  return net_socket_isend(sendComm, data, (size_t)size, tag, request);
}

ncclResult_t net_socket_irecv_int(void* recvComm, int n, void** data, const int* sizes, const int* tags,
                                  void** request) {
  size_t wide[NET_SOCKET_MAX_RECVS];
  if (n < 1 || n > NET_SOCKET_MAX_RECVS || !sizes)
    return NS_FAIL(ncclInvalidArgument, "irecv: %d buffers (1..%d, with sizes)", n, NET_SOCKET_MAX_RECVS);
  for (int i = 0; i < n; i++) {
    if (sizes[i] < 0) return NS_FAIL(ncclInvalidArgument, "irecv: negative size %d", sizes[i]);
    wide[i] = (size_t)sizes[i];
  }
  return net_socket_irecv(recvComm, n, data, wide, tags, request);
}
