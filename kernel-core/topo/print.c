/* A readable picture of the system: the tree from each CPU, the NVLinks, and
 * the path matrix between GPUs, NICs and CPUs (for mkccl-info and logs). */
#include <stdio.h>
#include <string.h>

#include "topo/graph.h"

/* "0-7,16-23" */
static void topo_cpulist(const cpu_set_t* set, char* out, int len) {
  int pos = 0;
  out[0] = '\0';
  for (int c = 0; c < CPU_SETSIZE && pos < len; c++) {
    if (!CPU_ISSET(c, set)) continue;
    int e = c;
    while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, set)) e++;
    pos += e > c ? snprintf(out + pos, len - pos, "%s%d-%d", pos ? "," : "", c, e)
                 : snprintf(out + pos, len - pos, "%s%d", pos ? "," : "", c);
    c = e;
  }
}

static void topo_print_node(const topo_node_t* n, FILE* f, int depth) {
  fprintf(f, "%*s", 2 * depth, "");
  switch (n->type) {
    case TOPO_PCI:
      fprintf(f, "PCI switch %s [%04x:%04x] (%.1f GB/s up)\n", n->busId, n->pci.vendor, n->pci.device, (double)n->upBw);
      break;
    case TOPO_GPU:
      fprintf(f, "GPU %d %s cudaDev %d sm %d rank %d (%.1f GB/s up)\n", n->index, n->busId, n->gpu.dev, n->gpu.sm,
              n->gpu.rank, (double)n->upBw);
      break;
    case TOPO_NIC:
      fprintf(f, "NIC %d %s %s %d Mb/s gdr %d (%.1f GB/s up)\n", n->index, n->nic.name, n->busId[0] ? n->busId : "-",
              n->nic.speedMbps, n->nic.gdr, (double)n->upBw);
      break;
    default: break;
  }
}

static void topo_print_tree(const topo_system_t* sys, const topo_node_t* parent, FILE* f, int depth) {
  static const int kinds[] = {TOPO_PCI, TOPO_GPU, TOPO_NIC};
  for (int k = 0; k < 3; k++) {
    for (int i = 0; i < sys->count[kinds[k]]; i++) {
      const topo_node_t* n = sys->nodes[kinds[k]][i];
      if (n->up != parent) continue;
      topo_print_node(n, f, depth);
      if (n->type == TOPO_PCI) topo_print_tree(sys, n, f, depth + 1);
    }
  }
}

static void topo_print_links(const topo_system_t* sys, FILE* f) {
  for (int t = 0; t < TOPO_NODE_TYPES; t++) {
    for (int i = 0; i < sys->count[t]; i++) {
      const topo_node_t* n = sys->nodes[t][i];
      for (int l = 0; l < n->nlinks; l++) {
        const topo_link_t* k = &n->links[l];
        int wanted = k->type == TOPO_LINK_NVL || k->type == TOPO_LINK_C2C || k->type == TOPO_LINK_SYS;
        /* Each link once: from the lower (type, index). */
        if (!wanted || k->rem->type < t || (k->rem->type == t && k->rem->index < i)) continue;
        static const char* names[] = {"GPU", "PCI", "NVS", "CPU", "NIC"};
        fprintf(f, "  %s %d - %s %d: %s x%d %.1f GB/s\n", names[t], i, names[k->rem->type], k->rem->index,
                topo_path_name(k->type), k->count, (double)k->bw);
      }
    }
  }
}

static void topo_print_matrix(const topo_system_t* sys, FILE* f) {
  static const int kinds[] = {TOPO_GPU, TOPO_NIC, TOPO_CPU};
  static const char* names[] = {"GPU", "NIC", "CPU"};
  fprintf(f, "Paths (type/GB/s):\n%8s", "");
  for (int b = 0; b < 3; b++)
    for (int j = 0; j < sys->count[kinds[b]]; j++) fprintf(f, " %11s%d", names[b], j);
  fputc('\n', f);
  for (int a = 0; a < 3; a++) {
    for (int i = 0; i < sys->count[kinds[a]]; i++) {
      fprintf(f, "%6s%-2d", names[a], i);
      const topo_node_t* n = sys->nodes[kinds[a]][i];
      for (int b = 0; b < 3; b++) {
        for (int j = 0; j < sys->count[kinds[b]]; j++) {
          const topo_path_t* p = &n->paths[kinds[b]][j];
          char cell[32];
          snprintf(cell, sizeof(cell), "%s/%.4g", topo_path_name(p->type), (double)p->bw);
          fprintf(f, " %12s", cell);
        }
      }
      fputc('\n', f);
    }
  }
}

void topo_print(const topo_system_t* sys, FILE* f) {
  if (!sys || !f) return;
  fprintf(f, "Topology from %s: %d CPUs, %d GPUs, %d NICs, %d PCI switches, %d NVSwitches; P2P level %s\n",
          sys->source, sys->count[TOPO_CPU], sys->count[TOPO_GPU], sys->count[TOPO_NIC], sys->count[TOPO_PCI],
          sys->count[TOPO_NVS], topo_path_name(sys->p2pLevel));
  for (int c = 0; c < sys->count[TOPO_CPU]; c++) {
    const topo_node_t* cpu = sys->nodes[TOPO_CPU][c];
    char cpus[256];
    topo_cpulist(&cpu->cpu.affinity, cpus, sizeof(cpus));
    fprintf(f, "CPU %d: NUMA %d, %s %s %s, cores %s\n", c, (int)cpu->id, cpu->cpu.archName[0] ? cpu->cpu.archName : "?",
            cpu->cpu.vendorName[0] ? cpu->cpu.vendorName : "?", topo_cpu_model_name(cpu), cpus[0] ? cpus : "-");
    topo_print_tree(sys, cpu, f, 1);
  }
  fprintf(f, "Links between CPUs, NVLink and C2C:\n");
  topo_print_links(sys, f);
  topo_print_matrix(sys, f);
}
