/* The per-communicator context (net_socket_ctx.h). */
#include "net_socket_ctx.h"

#include <stdlib.h>

#include "net_socket_log.h"

typedef struct {
  uint64_t commId;
  int trafficClass;
  int maxFlows; /* setNetAttr's maxFlowsPerPeer, NCCL_NET_ATTR_UNDEF without a hint */
} net_socket_ctx_t;

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

ncclResult_t net_socket_ctx_free(void* ctx) {
  free(ctx);
  return ncclSuccess;
}

int net_socket_ctx_traffic_class(const void* ctx) {
  return ctx ? ((const net_socket_ctx_t*)ctx)->trafficClass : NCCL_NET_TRAFFIC_CLASS_UNDEF;
}

int net_socket_ctx_max_flows(const void* ctx) {
  return ctx ? ((const net_socket_ctx_t*)ctx)->maxFlows : NCCL_NET_ATTR_UNDEF;
}

/* The smaller of the two sides' caps: a connection's layout is its
 * listener's, and both of its ends use it. */
static ncclResult_t net_socket_ctx_set_flows(void* ctx, int sendMaxFlows, int recvMaxFlows) {
  if (!ctx) return NS_FAIL(ncclInvalidArgument, "setNetAttr: NULL context");
  int flows = NCCL_NET_ATTR_UNDEF;
  if (sendMaxFlows > 0) flows = sendMaxFlows;
  if (recvMaxFlows > 0 && (flows <= 0 || recvMaxFlows < flows)) flows = recvMaxFlows;
  ((net_socket_ctx_t*)ctx)->maxFlows = flows;
  return ncclSuccess;
}

ncclResult_t net_socket_ctx_set_attr(void* ctx, ncclNetAttr_v12_t* attr) {
  if (!attr) return net_socket_ctx_set_flows(ctx, NCCL_NET_ATTR_UNDEF, NCCL_NET_ATTR_UNDEF);
  return net_socket_ctx_set_flows(ctx, attr->sendCommAttr.maxFlowsPerPeer, attr->recvCommAttr.maxFlowsPerPeer);
}
