/* ncclNetPlugin_v10: no ctx; the traffic class comes with each connect. */
#include "net_socket_entry.h"
#include "net_socket_log.h"
#include "net_socket_prof.h"
#include "net_socket_unpack.h"
#include "net_socket_vprops.h"

static ncclResult_t net_socket_v10_init(ncclDebugLogger_t logger, ncclProfilerCallback_t profiler) {
  net_socket_prof_set(profiler);
  return net_socket_init(logger);
}

static ncclResult_t net_socket_v10_props(int dev, ncclNetProperties_v10_t* props) {
  ncclNetProperties_v12_t p;
  if (!props) return NS_FAIL(ncclInvalidArgument, "getProperties: NULL properties");
  NS_CHECK(net_socket_props_get(dev, &p));
  NET_SOCKET_PROPS_V9(props, &p, NCCL_NET_MAX_DEVS_PER_NIC_V10);
  return ncclSuccess;
}

static ncclResult_t net_socket_v10_connect(int dev, ncclNetCommConfig_v10_t* config, void* handle, void** sendComm,
                                           ncclNetDeviceHandle_v10_t** sendDevComm) {
  (void)sendDevComm;
  return net_socket_connect(dev, handle, sendComm, config ? config->trafficClass : NCCL_NET_TRAFFIC_CLASS_UNDEF);
}

__attribute__((visibility("default"))) const ncclNet_v10_t ncclNetPlugin_v10 = {
    .name = NET_SOCKET_NAME,
    .init = net_socket_v10_init,
    .devices = net_socket_devices,
    .getProperties = net_socket_v10_props,
    .listen = net_socket_e_listen,
    .connect = net_socket_v10_connect,
    .accept = net_socket_e_accept_dev,
    .regMr = net_socket_reg_mr,
    .regMrDmaBuf = NULL,
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
};
