/* How far GPU P2P may reach (NCCL_P2P_LEVEL, NCCL_P2P_DISABLE), and whether
 * the network beats P2P between two GPUs. NCCL's semantics: by default P2P
 * stops before the CPU host bridge (PXB); AMD x86 with at most two GPUs
 * allows SYS; the user's setting wins. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/param.h"
#include "topo/graph.h"

int topo_p2p_level_parse(const char* text, int* level) {
  if (!text || !*text) return -1;
  const char* name = strncmp(text, "PATH_", 5) == 0 ? text + 5 : text;
  for (int i = TOPO_PATH_LOC; i <= TOPO_PATH_SYS; i++) {
    if (strcmp(name, topo_path_name(i)) == 0) {
      *level = i;
      return 0;
    }
  }
  /* Old numbering: 0 LOC, 1 PIX, 2 PXB, 3 PHB, 4 and above SYS. */
  static const int oldToNew[] = {TOPO_PATH_LOC, TOPO_PATH_PIX, TOPO_PATH_PXB, TOPO_PATH_PHB, TOPO_PATH_SYS,
                                 TOPO_PATH_SYS};
  if (isdigit((unsigned char)text[0])) {
    long old = strtol(text, NULL, 0);
    if (old > 5) old = 5;
    *level = oldToNew[old];
    return 0;
  }
  return -1;
}

void topo_p2p_level_resolve(topo_system_t* sys) {
  int level = TOPO_PATH_PXB;
  topo_node_t* cpu = topo_node_get(sys, TOPO_CPU, 0);
  if (cpu && cpu->cpu.arch == TOPO_CPU_ARCH_X86 && cpu->cpu.vendor == TOPO_CPU_VENDOR_AMD &&
      sys->count[TOPO_GPU] <= 2)
    level = TOPO_PATH_SYS;
  const char* text = param_NCCL_P2P_LEVEL();
  if (param_NCCL_P2P_DISABLE() == 1) {
    level = TOPO_PATH_LOC;
    MK_INFO(NCCL_INIT | NCCL_ENV, "NCCL_P2P_DISABLE set by environment to 1");
  } else if (text && *text) {
    int user;
    if (topo_p2p_level_parse(text, &user) == 0) {
      level = user;
      MK_INFO(NCCL_INIT | NCCL_ENV, "NCCL_P2P_LEVEL set by environment to %s", topo_path_name(level));
    } else {
      MK_WARN("Invalid NCCL_P2P_LEVEL '%s' (LOC, NVL, NVB, C2C, PIX, PXB, P2C, PXN, PHB, SYS or 0-5), using %s",
              text, topo_path_name(level));
    }
  }
  sys->p2pLevel = level;
}

int topo_p2p_level(const topo_system_t* sys) { return sys ? sys->p2pLevel : TOPO_PATH_LOC; }

int topo_p2p_allowed(const topo_system_t* sys, int gpuA, int gpuB, int* pathType) {
  int type = topo_gpu_gpu_path_type(sys, gpuA, gpuB);
  if (pathType) *pathType = type;
  return type < TOPO_PATH_NET && type <= sys->p2pLevel;
}

int topo_net_faster(const topo_system_t* sys, int gpuA, int gpuB) {
  topo_node_t* a = topo_node_get(sys, TOPO_GPU, gpuA);
  topo_node_t* b = topo_node_get(sys, TOPO_GPU, gpuB);
  if (!a || !b) return 0;
  float p2p = a->paths[TOPO_GPU][gpuB].bw, netA = 0.0f, netB = 0.0f;
  for (int n = 0; n < sys->count[TOPO_NIC]; n++) {
    const topo_path_t* pa = &a->paths[TOPO_NIC][n];
    const topo_path_t* pb = &b->paths[TOPO_NIC][n];
    if (pa->type <= TOPO_PATH_PXB && pa->bw > netA) netA = pa->bw;
    if (pb->type <= TOPO_PATH_PXB && pb->bw > netB) netB = pb->bw;
  }
  return netA > p2p && netB > p2p;
}
