/* Net device types as the core uses them (abi/net-device): the net-device
 * plugins, loaded once per process and kept one per type; per communicator,
 * the type its net connections use; the services the net transport calls around
 * accept/connect; the host executor's unpack.
 *
 * A communicator uses UNPACK only when all of these hold, else HOST, with one
 * INFO line saying which and why:
 *  - its net plugin reports netDeviceType UNPACK with netDeviceVersion 0x7
 *    exactly (NCCL_NET_DEVICE_UNPACK_VERSION);
 *  - a net-device plugin of type UNPACK loaded (one reporting another
 *    version is refused at load, its candidate line says why);
 *  - GPU communicators: its device code links with the core's (netdev_link.h).
 * The core never names a plugin: types come from what the plugins report. */
#ifndef MKCCL_NETDEV_NETDEV_H
#define MKCCL_NETDEV_NETDEV_H

#include <stddef.h>
#include <stdint.h>

#include "nccl.h"
#include "net-device/mkccl_net_device_v1.h"

struct ncclComm;

/* Loads the net-device plugins (once per process); never fails for a
 * plugin that does not load, only for a bad manifest. */
ncclResult_t netdev_plugins_load(void);
/* The plugin taken for a type, NULL when none. */
const mkcclNetDevice_v1* netdev_plugin_for(ncclNetDeviceType type);

/* Why a plugin table is not acceptable ("" when it is): malformed, unknown
 * type, or a version other than the one this build takes. */
void netdev_plugin_check(const mkcclNetDevice_v1* d, char* why, size_t size);

/* Chooses the communicator's type (comm->dp.net.devType and .device). */
ncclResult_t netdev_comm_open(struct ncclComm* comm);
void netdev_comm_close(struct ncclComm* comm);

/* Services offered to transports (mkcclTransportServices_v1, ctx = comm). */
ncclResult_t netdev_service_handle_alloc(void* ctx, int isRecv, ncclNetDeviceHandle_v12_t** handle);
int netdev_service_needs_proxy_progress(void* ctx, const ncclNetDeviceHandle_v12_t* handle);
ncclResult_t netdev_service_handle_free(void* ctx, ncclNetDeviceHandle_v12_t* handle);

/* The host executor's receive on a connection with a device handle: the
 * plugin of the handle's type moves the data into dst (maxBytes of room). */
ncclResult_t netdev_host_unpack(void* handle, void* dst, size_t maxBytes);

/* Receives unpacked on the host and their bytes, process-wide (tests,
 * mkccl-info). */
void netdev_stats_get(uint64_t* receives, uint64_t* bytes);

#endif
