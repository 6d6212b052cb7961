/* ncclNetPlugin_v12: the layout mkccl works with. */
#include "net_socket_entry.h"
#include "net_socket_log.h"
#include "net_socket_prof.h"
#include "net_socket_unpack.h"

static ncclResult_t net_socket_v12_init(void** ctx, uint64_t commId, ncclNetCommConfig_v12_t* config,
                                        ncclDebugLogger_t logger, ncclProfilerCallback_t profiler) {
  net_socket_prof_set(profiler);
  NS_CHECK(net_socket_init(logger));
  return net_socket_ctx_new(commId, config ? config->trafficClass : NCCL_NET_TRAFFIC_CLASS_UNDEF, ctx);
}

/* Of the hints, flows per peer shape the layouts of later listens; NULL
 * clears them. */
static ncclResult_t net_socket_v12_set_attr(void* ctx, ncclNetAttr_v12_t* attr) {
  if (!attr) return net_socket_ctx_set_flows(ctx, NCCL_NET_ATTR_UNDEF, NCCL_NET_ATTR_UNDEF);
  return net_socket_ctx_set_flows(ctx, attr->sendCommAttr.maxFlowsPerPeer, attr->recvCommAttr.maxFlowsPerPeer);
}

__attribute__((visibility("default"))) const ncclNet_v12_t ncclNetPlugin_v12 = {
    .name = NET_SOCKET_NAME,
    .init = net_socket_v12_init,
    .devices = net_socket_devices,
    .getProperties = net_socket_props_get,
    .listen = net_socket_e_listen_ctx,
    .connect = net_socket_e_connect_ctx,
    .accept = net_socket_e_accept_dev,
    .regMr = net_socket_reg_mr,
    .regMrDmaBuf = NULL, /* no DMA-BUF: ptrSupport says host only */
    .deregMr = net_socket_dereg_mr,
    .isend = net_socket_e_isend_v10,
    .irecv = net_socket_e_irecv_v10,
    .iflush = net_socket_iflush,
    .test = net_socket_test,
    .closeSend = net_socket_close_comm,
    .closeRecv = net_socket_close_comm,
    .closeListen = net_socket_close_listen,
    .getDeviceMr = NULL,
    .irecvConsumed = net_socket_irecv_consumed,
    .makeVDevice = NULL,
    .finalize = net_socket_ctx_free,
    .setNetAttr = net_socket_v12_set_attr,
};
