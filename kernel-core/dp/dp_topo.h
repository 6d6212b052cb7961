/* The machine's topology as a communicator sees it (kernel-core/topo):
 * where its GPU sits against the NICs of its net plugin, for GPUDirect
 * RDMA by distance (NCCL_NET_GDR_LEVEL), and NCCL_TOPO_DUMP_FILE. */
#ifndef MKCCL_DP_DP_TOPO_H
#define MKCCL_DP_DP_TOPO_H

#include "nccl.h"

struct ncclComm;

/* After dp_net_open. Builds (once per process and net plugin; hwloc, the
 * CUDA driver's GPUs, the plugin's devices) what the communicator needs:
 * on GPU ranks whose net plugin has a device taking CUDA pointers, and on
 * the rank that dumps NCCL_TOPO_DUMP_FILE; nothing for the others. A
 * topology that cannot be built is said at INFO and left out (distances
 * then unknown); only a dump that fails is an error. */
ncclResult_t dp_topo_open(struct ncclComm* comm);

/* The machine's topology with the devices of net plugin `net` (an
 * ncclNet_v12_t, NULL: no NICs) as its NICs, built on the first call. */
struct topo_system;
ncclResult_t dp_topo_for_net(const void* net, const struct topo_system** out);

/* The path type (TOPO_PATH_*) from the communicator's GPU to net device
 * `dev`; -1 when unknown (no topology, a host rank, no such device). */
int dp_topo_gpu_nic_path(const struct ncclComm* comm, int dev);

#endif
