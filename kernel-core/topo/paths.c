/* Paths between every GPU, NIC, CPU and NVSwitch (DESIGN.md, "Topology"):
 * breadth-first from each of them, keeping for every node the path with the
 * fewest hops and, among those, the highest bottleneck bandwidth. The path
 * type is the worst link type on the way, with NCCL's refinements: PCI switch
 * to PCI switch is PXB, a PCI hop into or out of a CPU is PHB, and NVLink
 * through an intermediate GPU is NVB. Then two GPU-to-NIC rewrites: P2C
 * (C2C to the CPU, PCIe to the NIC) and PXN (through an NVLink peer GPU). */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/param.h"
#include "topo/graph.h"

/* Types that are path destinations. */
static int topo_is_target(int type) {
  return type == TOPO_GPU || type == TOPO_CPU || type == TOPO_NIC || type == TOPO_NVS;
}

static ncclResult_t topo_paths_alloc(topo_system_t* sys) {
  for (int t = 0; t < TOPO_NODE_TYPES; t++) {
    for (int i = 0; i < sys->count[t]; i++) {
      topo_node_t* n = sys->nodes[t][i];
      for (int d = 0; d < TOPO_NODE_TYPES; d++) {
        free(n->paths[d]);
        n->paths[d] = NULL;
        if (!topo_is_target(d) || sys->count[d] == 0) continue;
        n->paths[d] = malloc(sys->count[d] * sizeof(topo_path_t));
        if (!n->paths[d]) return MK_FAIL(ncclSystemError, "topology: out of memory for paths");
        for (int j = 0; j < sys->count[d]; j++) n->paths[d][j] = (topo_path_t){TOPO_PATH_DIS, 0.0f, 0, -1};
      }
    }
  }
  return ncclSuccess;
}

/* The type one more link adds, seen from `node` going to `rem`. */
static int topo_hop_type(const topo_node_t* node, const topo_link_t* link, const topo_path_t* path, int remHops) {
  int type = link->type;
  if (node->type == TOPO_PCI && link->rem->type == TOPO_PCI) type = TOPO_PATH_PXB;
  if (link->type == TOPO_LINK_PCI && (node->type == TOPO_CPU || link->rem->type == TOPO_CPU)) type = TOPO_PATH_PHB;
  if (node->type == TOPO_GPU && path->type == TOPO_PATH_NVL && type == TOPO_PATH_NVL && remHops > 1)
    type = TOPO_PATH_NVB;
  return type > path->type ? type : path->type;
}

/* Paths from every node to `base`, stored in node->paths[base type][base index]. */
static ncclResult_t topo_paths_to(topo_node_t* base, int nvbDisable, topo_node_t** list,
                                  topo_node_t** next) {
  int bt = base->type, bi = base->index;
  base->paths[bt][bi] = (topo_path_t){TOPO_PATH_LOC, TOPO_LOC_BW, 0, -1};
  int n = 1, nn;
  list[0] = base;
  while (n > 0) {
    nn = 0;
    for (int i = 0; i < n; i++) {
      topo_node_t* node = list[i];
      topo_path_t* path = &node->paths[bt][bi];
      for (int l = 0; l < node->nlinks; l++) {
        topo_link_t* link = &node->links[l];
        topo_node_t* rem = link->rem;
        /* A GPU is a waypoint only for one NVLink hop to another GPU (NVB). */
        if (node != base && node->type == TOPO_GPU &&
            (nvbDisable || link->type != TOPO_LINK_NVL || rem->type != TOPO_GPU || path->hops > 1))
          continue;
        topo_path_t* remPath = &rem->paths[bt][bi];
        float bw = path->bw < link->bw ? path->bw : link->bw;
        if (!((remPath->bw == 0.0f || remPath->hops > path->hops) && remPath->bw < bw)) continue;
        remPath->hops = path->hops + 1;
        remPath->bw = bw;
        remPath->type = topo_hop_type(node, link, path, remPath->hops);
        int seen = 0;
        for (int k = 0; k < nn && !seen; k++) seen = next[k] == rem;
        if (!seen) next[nn++] = rem;
      }
    }
    topo_node_t** swap = list;
    list = next;
    next = swap;
    n = nn;
  }
  return ncclSuccess;
}

/* The CPU a GPU reaches in the fewest hops. */
static topo_node_t* topo_gpu_cpu(const topo_system_t* sys, const topo_node_t* gpu) {
  topo_node_t* best = NULL;
  int hops = 0;
  for (int c = 0; c < sys->count[TOPO_CPU]; c++) {
    int h = gpu->paths[TOPO_CPU][c].hops;
    if (h > 0 && (!best || h < hops)) {
      best = sys->nodes[TOPO_CPU][c];
      hops = h;
    }
  }
  return best;
}

/* GPU -(C2C)- CPU -(PCI)- NIC is P2C when that NIC is among the GPU's best. */
static void topo_paths_p2c(topo_system_t* sys) {
  for (int g = 0; g < sys->count[TOPO_GPU]; g++) {
    topo_node_t* gpu = sys->nodes[TOPO_GPU][g];
    topo_node_t* cpu = topo_gpu_cpu(sys, gpu);
    if (!cpu || gpu->paths[TOPO_CPU][cpu->index].type != TOPO_PATH_C2C) continue;
    int best[64], nBest = 0;
    if (topo_gpu_best_nics(sys, g, best, 64, &nBest) != ncclSuccess) continue;
    for (int k = 0; k < nBest; k++) {
      topo_node_t* nic = sys->nodes[TOPO_NIC][best[k]];
      if (nic->paths[TOPO_CPU][cpu->index].type != TOPO_PATH_PHB) continue;
      topo_path_t* gn = &gpu->paths[TOPO_NIC][best[k]];
      topo_path_t* ng = &nic->paths[TOPO_GPU][g];
      if (gn->type > TOPO_PATH_P2C) gn->type = TOPO_PATH_P2C;
      if (ng->type > TOPO_PATH_P2C) ng->type = TOPO_PATH_P2C;
    }
  }
}

/* GPU -> NIC through the NIC's local GPU when that GPU is an NVLink peer,
 * is close to the NIC and can reach it directly (GDR), and the detour is
 * faster or avoids the CPU. GPU->NIC direction only, as NCCL (send remote,
 * receive local). */
static void topo_paths_pxn(topo_system_t* sys) {
  int pxnType = param_NCCL_PXN_C2C() ? TOPO_PATH_P2C : TOPO_PATH_PXB;
  for (int n = 0; n < sys->count[TOPO_NIC]; n++) {
    topo_node_t* nic = sys->nodes[TOPO_NIC][n];
    int p = topo_nic_local_gpu(sys, n);
    if (p < 0 || !nic->nic.gdr) continue;
    topo_node_t* peer = sys->nodes[TOPO_GPU][p];
    if (!peer->gpu.gdr) continue;
    for (int g = 0; g < sys->count[TOPO_GPU]; g++) {
      if (g == p) continue;
      topo_node_t* gpu = sys->nodes[TOPO_GPU][g];
      topo_path_t* direct = &gpu->paths[TOPO_NIC][n];
      const topo_path_t* toPeer = &gpu->paths[TOPO_GPU][p];
      const topo_path_t* peerNic = &peer->paths[TOPO_NIC][n];
      if (peerNic->type > pxnType || toPeer->type > TOPO_PATH_NVL) continue;
      if (!(peerNic->bw > direct->bw || direct->type > TOPO_PATH_PXN)) continue;
      direct->type = TOPO_PATH_PXN;
      direct->bw = toPeer->bw < peerNic->bw ? toPeer->bw : peerNic->bw;
      direct->hops = toPeer->hops + peerNic->hops;
      direct->via = p;
    }
  }
}

ncclResult_t topo_paths_compute(topo_system_t* sys) {
  MK_CHECK(topo_paths_alloc(sys));
  int total = 0;
  for (int t = 0; t < TOPO_NODE_TYPES; t++) total += sys->count[t];
  topo_node_t** list = malloc(2 * (size_t)(total ? total : 1) * sizeof(*list));
  if (!list) return MK_FAIL(ncclSystemError, "topology: out of memory for paths");
  int nvbDisable = (int)param_NCCL_NVB_DISABLE();
  ncclResult_t res = ncclSuccess;
  static const int order[] = {TOPO_CPU, TOPO_GPU, TOPO_NIC, TOPO_NVS};
  for (size_t o = 0; o < sizeof(order) / sizeof(order[0]); o++)
    for (int i = 0; i < sys->count[order[o]]; i++)
      MK_CHECK_GOTO(topo_paths_to(sys->nodes[order[o]][i], nvbDisable, list, list + total), res, out);
  topo_paths_p2c(sys);
  if (!param_NCCL_PXN_DISABLE()) topo_paths_pxn(sys);
out:
  free(list);
  return res;
}

ncclResult_t topo_path(const topo_system_t* sys, int fromType, int from, int toType, int to, topo_path_t* path) {
  topo_node_t* a = topo_node_get(sys, fromType, from);
  topo_node_t* b = topo_node_get(sys, toType, to);
  if (!a || !b || !topo_is_target(fromType) || !topo_is_target(toType) || !a->paths[toType])
    return MK_FAIL(ncclInvalidArgument, "topology: no node %d of type %d or %d of type %d", from, fromType, to,
                   toType);
  *path = a->paths[toType][to];
  return ncclSuccess;
}

int topo_gpu_gpu_path_type(const topo_system_t* sys, int gpuA, int gpuB) {
  topo_node_t* a = topo_node_get(sys, TOPO_GPU, gpuA);
  if (!a || !topo_node_get(sys, TOPO_GPU, gpuB)) return TOPO_PATH_DIS;
  return a->paths[TOPO_GPU][gpuB].type;
}

int topo_gpu_nic_path_type(const topo_system_t* sys, int gpu, int nic) {
  topo_node_t* a = topo_node_get(sys, TOPO_GPU, gpu);
  if (!a || !topo_node_get(sys, TOPO_NIC, nic)) return TOPO_PATH_DIS;
  return a->paths[TOPO_NIC][nic].type;
}

const char* topo_path_name(int type) {
  static const char* names[] = {"LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS", "NET", "DIS"};
  return type >= 0 && type <= TOPO_PATH_DIS ? names[type] : "?";
}
