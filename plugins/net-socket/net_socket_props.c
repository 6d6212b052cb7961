/* getProperties: a device's properties in the newest layout (v12); the
 * older versions' tables copy theirs from it. */
#include <string.h>

#include "net_socket_api.h"
#include "net_socket_comm.h"
#include "net_socket_dev.h"
#include "net_socket_log.h"
#include "net_socket_unpack.h"

ncclResult_t net_socket_props_get(int dev, ncclNetProperties_v12_t* props) {
  if (!props) return NS_FAIL(ncclInvalidArgument, "getProperties: NULL properties");
  const net_socket_dev_t* d = net_socket_dev_get(dev);
  if (!d) return ncclInvalidArgument; /* logged by _get */
  memset(props, 0, sizeof(*props));
  props->name = (char*)d->name;
  props->pciPath = d->pciPath;
  props->guid = (uint64_t)dev; /* one NIC per interface */
  props->ptrSupport = NCCL_PTR_HOST;
  props->regIsGlobal = 1; /* regMr keeps nothing per comm */
  props->forceFlush = 0;
  props->speed = d->speed;
  props->port = 0;
  props->latency = 0;
  props->maxComms = 65536;
  props->maxRecvs = NET_SOCKET_MAX_RECVS;
  props->netDeviceType = NCCL_NET_DEVICE_HOST;
  props->netDeviceVersion = NCCL_NET_DEVICE_INVALID_VERSION;
  if (net_socket_unpack_mode()) { /* one buffer per receive: one queue entry */
    props->maxRecvs = 1;
    props->netDeviceType = NCCL_NET_DEVICE_UNPACK;
    props->netDeviceVersion = MKCCL_UNPACK_VERSION;
  }
  props->vProps.ndevs = 1;
  props->vProps.devs[0] = dev;
  props->maxP2pBytes = MAX_NET_SIZE; /* test() reports sizes as int */
  props->maxCollBytes = MAX_NET_SIZE;
  props->maxMultiRequestSize = 1;
  props->railId = NCCL_NET_ID_UNDEF;
  props->planeId = NCCL_NET_ID_UNDEF;
  return ncclSuccess;
}
