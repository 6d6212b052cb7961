/* The system in NCCL's topology XML (what NCCL_TOPO_DUMP_FILE writes and
 * NCCL_TOPO_FILE reads): system > cpu > pci (switches) > pci > gpu | nic > net.
 * NCCL computes a PCI link's bandwidth from link_width and link_speed; hwloc
 * only keeps their product, so we write the widest width whose per-lane rate
 * matches a PCIe generation (Gen3 x8 and Gen4 x4 look alike: same bandwidth). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/err.h"
#include "topo/graph.h"

static void topo_xml_escape(FILE* f, const char* s) {
  for (; *s; s++) {
    switch (*s) {
      case '&': fputs("&amp;", f); break;
      case '<': fputs("&lt;", f); break;
      case '>': fputs("&gt;", f); break;
      case '"': fputs("&quot;", f); break;
      default: fputc(*s, f);
    }
  }
}

/* hwloc gives lanes x per-lane rate (after line coding); find the widest
 * link whose per-lane rate is a PCIe generation's. */
static void topo_xml_link(FILE* f, float linkspeed) {
  static const struct {
    const char* text;
    float laneGBs;
  } gens[] = {{"2.5 GT/s PCIe", 2.5f * 8 / 10 / 8},      {"5.0 GT/s PCIe", 5.0f * 8 / 10 / 8},
              {"8.0 GT/s PCIe", 8.0f * 128 / 130 / 8},    {"16.0 GT/s PCIe", 16.0f * 128 / 130 / 8},
              {"32.0 GT/s PCIe", 32.0f * 128 / 130 / 8},  {"64.0 GT/s PCIe", 64.0f * 128 / 130 / 8}};
  static const int widths[] = {16, 8, 4, 2, 1, 32};
  for (size_t w = 0; linkspeed > 0.0f && w < sizeof(widths) / sizeof(widths[0]); w++)
    for (size_t g = 0; g < sizeof(gens) / sizeof(gens[0]); g++)
      if (fabsf(linkspeed / widths[w] - gens[g].laneGBs) < 0.01f * gens[g].laneGBs) {
        fprintf(f, " link_speed=\"%s\" link_width=\"%d\"", gens[g].text, widths[w]);
        return;
      }
  fprintf(f, " link_speed=\"Unknown\" link_width=\"0\""); /* NCCL reads this as Gen3 x16 */
}

static void topo_xml_pci_open(FILE* f, const topo_node_t* n, int depth, const char* defaultClass) {
  fprintf(f, "%*s<pci busid=\"%s\"", 2 * depth, "", n->busId);
  if (n->pci.known) {
    fprintf(f, " class=\"0x%04x00\" vendor=\"0x%04x\" device=\"0x%04x\" subsystem_vendor=\"0x%04x\" subsystem_device=\"0x%04x\"",
            n->pci.classId, n->pci.vendor, n->pci.device, n->pci.subVendor, n->pci.subDevice);
  } else {
    fprintf(f, " class=\"%s\"", defaultClass);
  }
  topo_xml_link(f, n->pci.linkspeed);
  fprintf(f, ">\n");
}

static void topo_xml_gpu(FILE* f, const topo_node_t* n, int depth) {
  topo_xml_pci_open(f, n, depth, "0x030200");
  /* NCCL requires a rank: the GPU's index stands in when none was given. */
  fprintf(f, "%*s<gpu dev=\"%d\" sm=\"%d\" rank=\"%d\" gdr=\"%d\">\n", 2 * depth + 2, "", n->gpu.dev, n->gpu.sm,
          n->gpu.rank >= 0 ? n->gpu.rank : n->index, n->gpu.gdr);
  for (int l = 0; l < n->nlinks; l++) {
    const topo_link_t* k = &n->links[l];
    if (k->type == TOPO_LINK_NVL && k->rem->type == TOPO_GPU)
      fprintf(f, "%*s<nvlink target=\"%s\" count=\"%d\" tclass=\"0x030200\"/>\n", 2 * depth + 4, "", k->rem->busId,
              k->count);
    else if (k->type == TOPO_LINK_NVL)
      fprintf(f, "%*s<nvlink count=\"%d\" tclass=\"%s\"/>\n", 2 * depth + 4, "", k->count,
              k->rem->type == TOPO_NVS ? "0x068000" : "0x068001");
    else if (k->type == TOPO_LINK_C2C) /* NCCL: bw (MB/s per link) x count / 1000 = GB/s */
      fprintf(f, "%*s<c2c count=\"1\" bw=\"%d\"/>\n", 2 * depth + 4, "", (int)(k->bw * 1000.0f + 0.5f));
  }
  fprintf(f, "%*s</gpu>\n%*s</pci>\n", 2 * depth + 2, "", 2 * depth, "");
}

/* All ports of one NIC (same PCI device) under one <nic>. */
static void topo_xml_nic(FILE* f, const topo_system_t* sys, const topo_node_t* n, int depth) {
  int inPci = n->busId[0] != '\0';
  if (inPci) topo_xml_pci_open(f, n, depth, "0x020000");
  int d = inPci ? depth + 1 : depth;
  fprintf(f, "%*s<nic>\n", 2 * d, "");
  for (int i = n->index; i < sys->count[TOPO_NIC]; i++) {
    const topo_node_t* m = sys->nodes[TOPO_NIC][i];
    if (m != n && (!inPci || m->up != n->up || strcmp(m->busId, n->busId) != 0)) continue;
    fprintf(f, "%*s<net name=\"", 2 * d + 2, "");
    topo_xml_escape(f, m->nic.name);
    fprintf(f, "\" dev=\"%d\" speed=\"%d\" gdr=\"%d\"/>\n", m->index, m->nic.speedMbps, m->nic.gdr);
  }
  fprintf(f, "%*s</nic>\n", 2 * d, "");
  if (inPci) fprintf(f, "%*s</pci>\n", 2 * depth, "");
}

static int topo_xml_nic_seen(const topo_system_t* sys, const topo_node_t* n) {
  if (!n->busId[0]) return 0;
  for (int i = 0; i < n->index; i++) {
    const topo_node_t* m = sys->nodes[TOPO_NIC][i];
    if (m->up == n->up && strcmp(m->busId, n->busId) == 0) return 1;
  }
  return 0;
}

static void topo_xml_children(FILE* f, const topo_system_t* sys, const topo_node_t* parent, int depth) {
  for (int i = 0; i < sys->count[TOPO_PCI]; i++) {
    const topo_node_t* n = sys->nodes[TOPO_PCI][i];
    if (n->up != parent) continue;
    topo_xml_pci_open(f, n, depth, "0x060400");
    topo_xml_children(f, sys, n, depth + 1);
    fprintf(f, "%*s</pci>\n", 2 * depth, "");
  }
  for (int i = 0; i < sys->count[TOPO_GPU]; i++)
    if (sys->nodes[TOPO_GPU][i]->up == parent) topo_xml_gpu(f, sys->nodes[TOPO_GPU][i], depth);
  for (int i = 0; i < sys->count[TOPO_NIC]; i++) {
    const topo_node_t* n = sys->nodes[TOPO_NIC][i];
    if (n->up == parent && !topo_xml_nic_seen(sys, n)) topo_xml_nic(f, sys, n, depth);
  }
}

/* sysfs cpumap style, as NCCL writes it: 32-bit hex groups, highest first. */
static void topo_xml_affinity(FILE* f, const cpu_set_t* set) {
  int last = 0;
  for (int c = 0; c < CPU_SETSIZE; c++)
    if (CPU_ISSET(c, set)) last = c;
  for (int g = last / 32; g >= 0; g--) {
    unsigned int word = 0;
    for (int b = 0; b < 32; b++)
      if (CPU_ISSET(g * 32 + b, set)) word |= 1u << b;
    fprintf(f, "%08x%s", word, g ? "," : "");
  }
}

static const char* topo_xml_arch(const topo_node_t* cpu) {
  switch (cpu->cpu.arch) {
    case TOPO_CPU_ARCH_X86: return "x86_64";
    case TOPO_CPU_ARCH_ARM: return "arm64";
    case TOPO_CPU_ARCH_POWER: return "ppc64";
    default: return cpu->cpu.archName;
  }
}

ncclResult_t topo_dump_xml(const topo_system_t* sys, const char* path) {
  if (!sys || !path) return MK_FAIL(ncclInvalidArgument, "topo_dump_xml: NULL %s", sys ? "path" : "system");
  FILE* f = fopen(path, "w");
  if (!f) return MK_FAIL(ncclSystemError, "topology dump: cannot open %s: %s", path, strerror(errno));
  fprintf(f, "<system version=\"1\">\n");
  for (int c = 0; c < sys->count[TOPO_CPU]; c++) {
    const topo_node_t* cpu = sys->nodes[TOPO_CPU][c];
    fprintf(f, "  <cpu numaid=\"%d\" affinity=\"", (int)cpu->id);
    topo_xml_affinity(f, &cpu->cpu.affinity);
    fprintf(f, "\" arch=\"%s\"", topo_xml_arch(cpu));
    if (cpu->cpu.arch == TOPO_CPU_ARCH_X86) {
      fprintf(f, " vendor=\"");
      topo_xml_escape(f, cpu->cpu.vendorName);
      fprintf(f, "\" familyid=\"%d\" modelid=\"%d\"", cpu->cpu.familyId, cpu->cpu.modelId);
    }
    fprintf(f, ">\n");
    topo_xml_children(f, sys, cpu, 2);
    fprintf(f, "  </cpu>\n");
  }
  fprintf(f, "</system>\n");
  int bad = ferror(f);
  if (fclose(f) != 0 || bad) return MK_FAIL(ncclSystemError, "topology dump: writing %s failed: %s", path, strerror(errno));
  return ncclSuccess;
}
