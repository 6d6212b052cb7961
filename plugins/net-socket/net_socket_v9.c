/* ncclNetPlugin_v9: size_t sizes, no profiler handles. */
#include "net_socket_entry.h"
#include "net_socket_log.h"
#include "net_socket_unpack.h"
#include "net_socket_vprops.h"

static ncclResult_t net_socket_v9_props(int dev, ncclNetProperties_v9_t* props) {
  ncclNetProperties_v12_t p;
  if (!props) return NS_FAIL(ncclInvalidArgument, "getProperties: NULL properties");
  NS_CHECK(net_socket_props_get(dev, &p));
  NET_SOCKET_PROPS_V9(props, &p, NCCL_NET_MAX_DEVS_PER_NIC_V9);
  return ncclSuccess;
}

__attribute__((visibility("default"))) const ncclNet_v9_t ncclNetPlugin_v9 = {
    .name = NET_SOCKET_NAME,
    .init = net_socket_init,
    .devices = net_socket_devices,
    .getProperties = net_socket_v9_props,
    .listen = net_socket_e_listen,
    .connect = net_socket_e_connect_dev,
    .accept = net_socket_e_accept_dev,
    .regMr = net_socket_reg_mr,
    .regMrDmaBuf = NULL,
    .deregMr = net_socket_dereg_mr,
    .isend = net_socket_e_isend_v9,
    .irecv = net_socket_e_irecv_v9,
    .iflush = net_socket_iflush,
    .test = net_socket_test,
    .closeSend = net_socket_close_comm,
    .closeRecv = net_socket_close_comm,
    .closeListen = net_socket_close_listen,
    .getDeviceMr = NULL,
    .irecvConsumed = net_socket_irecv_consumed,
    .makeVDevice = NULL,
};
