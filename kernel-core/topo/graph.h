/* The topology graph inside the module: nodes, links, per-node paths. Other
 * modules use topo/topo.h only. */
#ifndef MKCCL_TOPO_GRAPH_H
#define MKCCL_TOPO_GRAPH_H

#include <sched.h>
#include <stdint.h>

#include "topo/topo.h"

/* Link types share values with path types, as in NCCL. */
#define TOPO_LINK_LOC 0
#define TOPO_LINK_NVL 1
#define TOPO_LINK_C2C 3
#define TOPO_LINK_PCI 4
#define TOPO_LINK_SYS 9

/* Bandwidths in GB/s: NCCL's defaults where nothing better is known. */
#define TOPO_LOC_BW 5000.0f
#define TOPO_PCI_BW 12.0f /* PCIe Gen3 x16 */
#define TOPO_NIC_DEFAULT_MBPS 10000

/* CPU identity, for the inter-socket bandwidth and NCCL's default P2P level. */
#define TOPO_CPU_ARCH_UNKNOWN 0
#define TOPO_CPU_ARCH_X86 1
#define TOPO_CPU_ARCH_POWER 2
#define TOPO_CPU_ARCH_ARM 3
#define TOPO_CPU_VENDOR_UNKNOWN 0
#define TOPO_CPU_VENDOR_INTEL 1
#define TOPO_CPU_VENDOR_AMD 2
#define TOPO_CPU_VENDOR_ZHAOXIN 3

typedef struct topo_node topo_node_t;

typedef struct {
  int type;   /* TOPO_LINK_* */
  float bw;   /* GB/s, summed over aggregated links */
  int count;  /* physical links aggregated (NVLink) */
  topo_node_t* rem;
} topo_link_t;

typedef struct {
  uint16_t vendor, device, subVendor, subDevice, classId;
  int known;       /* 1 when hwloc described the device */
  float linkspeed; /* hwloc's GB/s (lanes x GT/s x line coding / 8); 0: unknown */
} topo_pci_ids_t;

struct topo_node {
  int type;
  int index;       /* place in sys->nodes[type] */
  int64_t id;      /* PCI bus id as an integer (PCI/GPU/NIC), NUMA id (CPU) */
  topo_node_t* up; /* parent in the PCI tree: a PCI switch or a CPU; NULL for CPU/NVS */
  float upBw;      /* bandwidth of the link to `up` */
  char busId[16];  /* "0000:3b:00.0"; empty for CPU/NVS and NICs without PCI device */
  topo_pci_ids_t pci;
  int nlinks, maxLinks;
  topo_link_t* links;
  topo_path_t* paths[TOPO_NODE_TYPES]; /* paths[t][i]: from this node to node i of type t */
  struct {
    int dev, sm, rank, gdr;
    float c2cBw;
  } gpu;
  struct {
    int arch, vendor, familyId, modelId;
    char archName[16], vendorName[16];
    cpu_set_t affinity;
  } cpu;
  struct {
    char name[64];
    int speedMbps, gdr;
  } nic;
};

struct topo_system {
  topo_node_t** nodes[TOPO_NODE_TYPES];
  int count[TOPO_NODE_TYPES];
  int cap[TOPO_NODE_TYPES];
  int p2pLevel;
  char source[256]; /* where the machine description came from */
};

ncclResult_t topo_system_alloc(topo_system_t** out);
ncclResult_t topo_node_create(topo_system_t* sys, int type, int64_t id, topo_node_t** out);
topo_node_t* topo_node_find(const topo_system_t* sys, int type, int64_t id);
topo_node_t* topo_node_get(const topo_system_t* sys, int type, int index); /* NULL when out of range */
/* Link a and b both ways; an existing link of the same type adds up. */
ncclResult_t topo_nodes_connect(topo_node_t* a, topo_node_t* b, int type, float bw, int count);

/* "0000:3b:00.0" <-> integer (domain << 20 | bus << 12 | dev << 4 | fn, NCCL's). */
int topo_busid_parse(const char* text, int64_t* id);
void topo_busid_format(int64_t id, char* text, int len);

/* CPU identity and links. */
void topo_cpu_identify(topo_node_t* cpu, const char* arch, const char* vendor, int familyId, int modelId);
float topo_cpu_inter_bw(const topo_node_t* cpu);
const char* topo_cpu_model_name(const topo_node_t* cpu);
float topo_nvlink_bw(int sm); /* GB/s per NVLink for a compute capability */

/* The machine from hwloc: CPUs with affinity, and GPUs/NICs placed in the
 * PCI tree (switches created on demand). */
ncclResult_t topo_hwloc_import(topo_system_t* sys, const char* xmlPath, const topo_gpu_input_t* gpus, int nGpus,
                               const topo_nic_input_t* nics, int nNics);

ncclResult_t topo_paths_compute(topo_system_t* sys);
void topo_p2p_level_resolve(topo_system_t* sys);

#endif
