/* The machine as a graph (DESIGN.md, "Topology"): NUMA domains (CPU
 * nodes), the PCI switches between them and the devices, GPUs, NICs and
 * NVSwitches, with links carrying a type and a bandwidth in GB/s. For every
 * pair of GPU/NIC/CPU nodes the module computes a path: its type (NCCL's
 * PATH_LOC..PATH_DIS, lower is closer) and its bottleneck bandwidth.
 *
 * The module knows no plugin: GPUs come from the CUDA driver shim or the
 * caller, NICs (with the net plugin's pciPath) and NVLinks from the caller. */
#ifndef MKCCL_TOPO_TOPO_H
#define MKCCL_TOPO_TOPO_H

#include <sched.h>
#include <stdint.h>
#include <stdio.h>

#include "nccl.h"

/* Node types (NCCL's numbering for the ones we share). */
#define TOPO_GPU 0
#define TOPO_PCI 1
#define TOPO_NVS 2
#define TOPO_CPU 3
#define TOPO_NIC 4
#define TOPO_NODE_TYPES 5

/* Path types: NCCL's values, lower is better. */
#define TOPO_PATH_LOC 0  /* the same device */
#define TOPO_PATH_NVL 1  /* NVLink, direct or through NVSwitches */
#define TOPO_PATH_NVB 2  /* NVLink through an intermediate GPU */
#define TOPO_PATH_C2C 3  /* chip-to-chip link to the CPU */
#define TOPO_PATH_PIX 4  /* at most one PCIe switch */
#define TOPO_PATH_PXB 5  /* several PCIe switches, not the host bridge */
#define TOPO_PATH_P2C 6  /* GPU to NIC: C2C to the CPU, then PCIe */
#define TOPO_PATH_PXN 7  /* GPU to NIC through an NVLink-connected GPU */
#define TOPO_PATH_PHB 8  /* through a PCIe host bridge (the CPU) */
#define TOPO_PATH_SYS 9  /* across the CPU interconnect (QPI/UPI/xGMI) */
#define TOPO_PATH_NET 10 /* through the network */
#define TOPO_PATH_DIS 11 /* disconnected */

/* A GPU given by the caller (or found through the CUDA driver). */
typedef struct {
  const char* busId; /* "0000:3b:00.0" (any case; 8-digit domains accepted) */
  int cudaDev;       /* CUDA ordinal, -1 if unknown */
  int sm;            /* compute capability x10 (90); 0: unknown */
  int rank;          /* communicator rank on this GPU, -1 if none */
  float c2cBw;       /* GB/s of a C2C link to the local CPU (Grace); 0: none */
  int gdr;           /* 1: NICs may read/write this GPU's memory (GPUDirect RDMA) */
} topo_gpu_input_t;

/* A network device, as the net plugin describes it. */
typedef struct {
  const char* name;    /* "mlx5_0" */
  const char* pciPath; /* sysfs path of the PCI device; NULL: unknown, attached to the first CPU */
  int speedMbps;       /* link speed; <= 0: 10000 as NCCL assumes */
  int gdr;             /* 1: the plugin can reach GPU memory (NCCL_PTR_CUDA) */
} topo_nic_input_t;

#define TOPO_NVLINK_NVSWITCH (-1) /* gpuB: the link goes to the NVSwitch fabric */
#define TOPO_NVLINK_CPU (-2)      /* gpuB: the link goes to the GPU's local CPU */

/* NVLinks (not visible to hwloc): given by the caller from NVML/driver. */
typedef struct {
  int gpuA, gpuB; /* indices in the GPU list; gpuB may be TOPO_NVLINK_NVSWITCH or TOPO_NVLINK_CPU */
  int count;      /* number of links */
  float bw;       /* GB/s of all of them together; <= 0: count x NCCL's per-link value for the GPU's sm */
} topo_nvlink_input_t;

typedef struct {
  const char* hwlocXml;  /* hwloc XML to read instead of the machine; NULL: MKCCL_TOPO_HWLOC_XML, then probe */
  const topo_gpu_input_t* gpus; /* NULL with nGpus 0: every GPU the CUDA driver sees (none without driver) */
  int nGpus;
  int noCudaGpus;        /* 1: do not ask the CUDA driver when gpus is empty */
  const topo_nic_input_t* nics;
  int nNics;
  const topo_nvlink_input_t* nvlinks;
  int nNvlinks;
  int rank;              /* for NCCL_TOPO_DUMP_FILE_RANK (0 when unknown) */
} topo_inputs_t;

typedef struct topo_system topo_system_t;

typedef struct {
  int type;  /* TOPO_PATH_* */
  float bw;  /* bottleneck bandwidth, GB/s; 0 when disconnected */
  int hops;  /* links on the path */
  int via;   /* PXN: the relay GPU's index; -1 otherwise */
} topo_path_t;

ncclResult_t topo_system_build(const topo_inputs_t* in, topo_system_t** out);
void topo_system_free(topo_system_t* sys);

int topo_count(const topo_system_t* sys, int type);
/* The path from node (fromType, from) to node (toType, to); types GPU, CPU,
 * NIC or NVS. */
ncclResult_t topo_path(const topo_system_t* sys, int fromType, int from, int toType, int to, topo_path_t* path);
/* Shorthands: path type, or TOPO_PATH_DIS for bad indices. */
int topo_gpu_gpu_path_type(const topo_system_t* sys, int gpuA, int gpuB);
int topo_gpu_nic_path_type(const topo_system_t* sys, int gpu, int nic);
const char* topo_path_name(int type); /* "PIX"; "?" when out of range */

/* GPU P2P: allowed when the GPU-GPU path is no farther than the P2P level
 * (NCCL_P2P_LEVEL / NCCL_P2P_DISABLE, resolved when the system is built;
 * default PXB, SYS on AMD CPUs with at most two GPUs). */
int topo_p2p_allowed(const topo_system_t* sys, int gpuA, int gpuB, int* pathType);
int topo_p2p_level(const topo_system_t* sys);
/* NCCL_P2P_LEVEL syntax: a path name (LOC..SYS, "PATH_" prefix allowed) or an
 * old-style number 0-5 (larger clamps to 5). 0 and *level, -1 when invalid. */
int topo_p2p_level_parse(const char* text, int* level);
/* 1 when both GPUs reach a NIC (PXB or closer) faster than each other:
 * the network beats P2P/SHM between them (NCCL's ncclTopoCheckNet). */
int topo_net_faster(const topo_system_t* sys, int gpuA, int gpuB);

/* GPU-NIC affinity: the NICs tied for best (lowest path type, then highest
 * bandwidth), in NIC order. *count may be 0 (no NIC). */
ncclResult_t topo_gpu_best_nics(const topo_system_t* sys, int gpu, int* nics, int maxNics, int* count);
/* The NIC for a channel: best NICs taken round-robin by channel. -1: none. */
int topo_gpu_nic_for_channel(const topo_system_t* sys, int gpu, int channel);
/* The closest GPU to a NIC (lowest type, then bandwidth); -1: no GPU. */
int topo_nic_local_gpu(const topo_system_t* sys, int nic);
/* The CPU (NUMA domain) closest to a GPU / NIC and its cores. */
ncclResult_t topo_gpu_local_cpu(const topo_system_t* sys, int gpu, int* cpu);
ncclResult_t topo_nic_local_cpu(const topo_system_t* sys, int nic, int* cpu);
ncclResult_t topo_cpu_affinity(const topo_system_t* sys, int cpu, cpu_set_t* set);

/* Node facts. */
const char* topo_gpu_bus_id(const topo_system_t* sys, int gpu);
int topo_gpu_cuda_dev(const topo_system_t* sys, int gpu);
int topo_gpu_find(const topo_system_t* sys, const char* busId); /* index or -1 */
/* The same by the bus id as one number (domain, bus, device, function
 * digits, as communicators keep it). */
int topo_gpu_find_id(const topo_system_t* sys, int64_t busId);
const char* topo_nic_name(const topo_system_t* sys, int nic);
int topo_cpu_numa_id(const topo_system_t* sys, int cpu);

/* A readable tree and path matrix (mkccl-info). */
void topo_print(const topo_system_t* sys, FILE* f);
/* NCCL's topology XML (NCCL_TOPO_FILE format). */
ncclResult_t topo_dump_xml(const topo_system_t* sys, const char* path);

#endif
