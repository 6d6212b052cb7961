/* Who is close to whom: the best NICs of a GPU (lowest path type, then
 * highest bandwidth), the local GPU of a NIC, the local CPU of a device. */
#include <string.h>

#include "base/err.h"
#include "topo/graph.h"

/* -1 when a is the better path, 1 when b is, 0 when they tie. */
static int topo_path_cmp(const topo_path_t* a, const topo_path_t* b) {
  if (a->type != b->type) return a->type < b->type ? -1 : 1;
  if (a->bw != b->bw) return a->bw > b->bw ? -1 : 1;
  return 0;
}

ncclResult_t topo_gpu_best_nics(const topo_system_t* sys, int gpu, int* nics, int maxNics, int* count) {
  topo_node_t* g = topo_node_get(sys, TOPO_GPU, gpu);
  if (!g) return MK_FAIL(ncclInvalidArgument, "topology: no GPU %d", gpu);
  if (!nics && maxNics > 0) return MK_FAIL(ncclInvalidArgument, "topology: NULL NIC list");
  int n = 0;
  const topo_path_t* best = NULL;
  for (int i = 0; i < sys->count[TOPO_NIC]; i++) {
    const topo_path_t* p = &g->paths[TOPO_NIC][i];
    if (p->type >= TOPO_PATH_NET) continue;
    int c = best ? topo_path_cmp(p, best) : -1;
    if (c < 0) {
      best = p;
      n = 0;
    }
    if (c <= 0) {
      if (n < maxNics) nics[n] = i;
      n++;
    }
  }
  *count = n < maxNics ? n : maxNics;
  return ncclSuccess;
}

int topo_gpu_nic_for_channel(const topo_system_t* sys, int gpu, int channel) {
  int nics[64], n = 0;
  if (!topo_node_get(sys, TOPO_GPU, gpu) || topo_gpu_best_nics(sys, gpu, nics, 64, &n) != ncclSuccess || n == 0)
    return -1;
  return nics[(channel < 0 ? -channel : channel) % n];
}

int topo_nic_local_gpu(const topo_system_t* sys, int nic) {
  topo_node_t* n = topo_node_get(sys, TOPO_NIC, nic);
  if (!n) return -1;
  int best = -1;
  for (int g = 0; g < sys->count[TOPO_GPU]; g++) {
    const topo_path_t* p = &n->paths[TOPO_GPU][g];
    if (p->type >= TOPO_PATH_NET) continue;
    if (best < 0 || topo_path_cmp(p, &n->paths[TOPO_GPU][best]) < 0) best = g;
  }
  return best;
}

/* The CPU reached in the fewest hops (NCCL's local CPU). */
static ncclResult_t topo_local_cpu(const topo_system_t* sys, int type, int index, int* cpu) {
  topo_node_t* n = topo_node_get(sys, type, index);
  if (!n) return MK_FAIL(ncclInvalidArgument, "topology: no %s %d", type == TOPO_GPU ? "GPU" : "NIC", index);
  int best = -1;
  for (int c = 0; c < sys->count[TOPO_CPU]; c++) {
    int hops = n->paths[TOPO_CPU][c].hops;
    if (hops > 0 && (best < 0 || hops < n->paths[TOPO_CPU][best].hops)) best = c;
  }
  if (best < 0) return MK_FAIL(ncclInternalError, "topology: no CPU reachable from %s %d",
                               type == TOPO_GPU ? "GPU" : "NIC", index);
  *cpu = best;
  return ncclSuccess;
}

ncclResult_t topo_gpu_local_cpu(const topo_system_t* sys, int gpu, int* cpu) {
  return topo_local_cpu(sys, TOPO_GPU, gpu, cpu);
}

ncclResult_t topo_nic_local_cpu(const topo_system_t* sys, int nic, int* cpu) {
  return topo_local_cpu(sys, TOPO_NIC, nic, cpu);
}

ncclResult_t topo_cpu_affinity(const topo_system_t* sys, int cpu, cpu_set_t* set) {
  topo_node_t* n = topo_node_get(sys, TOPO_CPU, cpu);
  if (!n || !set) return MK_FAIL(ncclInvalidArgument, "topology: no CPU %d", cpu);
  memcpy(set, &n->cpu.affinity, sizeof(*set));
  return ncclSuccess;
}
