/* What kind of CPU a NUMA domain is, and the bandwidths that follow from it
 * (NCCL's table: the inter-socket link depends on the CPU generation). */
#include <stdio.h>
#include <string.h>

#include "topo/graph.h"

/* GB/s between sockets, and per NVLink (NCCL's documented values). */
#define TOPO_BDW_QPI_BW 6.0f
#define TOPO_SKL_QPI_BW 10.0f
#define TOPO_SRP_QPI_BW 22.0f
#define TOPO_ERP_QPI_BW 40.0f
#define TOPO_AMD_ZEN12_BW 16.0f
#define TOPO_AMD_ZEN34_BW 24.0f
#define TOPO_AMD_ZEN5_BW 32.0f
#define TOPO_ZPI_BW 6.0f
#define TOPO_YONGFENG_ZPI_BW 9.0f
#define TOPO_P9_BW 32.0f
#define TOPO_ARM_BW 6.0f

void topo_cpu_identify(topo_node_t* cpu, const char* arch, const char* vendor, int familyId, int modelId) {
  snprintf(cpu->cpu.archName, sizeof(cpu->cpu.archName), "%s", arch ? arch : "");
  snprintf(cpu->cpu.vendorName, sizeof(cpu->cpu.vendorName), "%s", vendor ? vendor : "");
  cpu->cpu.familyId = familyId;
  cpu->cpu.modelId = modelId;
  cpu->cpu.arch = TOPO_CPU_ARCH_UNKNOWN;
  if (arch && (strcmp(arch, "x86_64") == 0 || strcmp(arch, "i686") == 0)) cpu->cpu.arch = TOPO_CPU_ARCH_X86;
  else if (arch && (strcmp(arch, "aarch64") == 0 || strcmp(arch, "arm64") == 0)) cpu->cpu.arch = TOPO_CPU_ARCH_ARM;
  else if (arch && strncmp(arch, "ppc64", 5) == 0) cpu->cpu.arch = TOPO_CPU_ARCH_POWER;
  cpu->cpu.vendor = TOPO_CPU_VENDOR_UNKNOWN;
  if (vendor && strcmp(vendor, "GenuineIntel") == 0) cpu->cpu.vendor = TOPO_CPU_VENDOR_INTEL;
  else if (vendor && strcmp(vendor, "AuthenticAMD") == 0) cpu->cpu.vendor = TOPO_CPU_VENDOR_AMD;
  else if (vendor && (strcmp(vendor, "CentaurHauls") == 0 || strstr(vendor, "Shanghai")))
    cpu->cpu.vendor = TOPO_CPU_VENDOR_ZHAOXIN;
}

/* Intel generations by family 6 model number, newest first (Granite Rapids
 * and Sierra Forest carry lower model numbers than Emerald Rapids). */
static const char* topo_cpu_intel_gen(int family, int model) {
  if (family != 6) return "BDW";
  if (model >= 0xCF || model == 0xAD || model == 0xAE || model == 0xAF) return "ERP";
  if (model >= 0x8F) return "SRP";
  if (model >= 0x55) return "SKL";
  return "BDW";
}

/* AMD: CPUID family 23 is Zen 1/2, 25 Zen 3/4, 26 Zen 5. */
static const char* topo_cpu_amd_gen(int family) {
  if (family >= 26) return "ZEN5";
  if (family == 25) return "ZEN34";
  return "ZEN12";
}

const char* topo_cpu_model_name(const topo_node_t* cpu) {
  if (cpu->cpu.arch == TOPO_CPU_ARCH_POWER) return "POWER";
  if (cpu->cpu.arch == TOPO_CPU_ARCH_ARM) return "ARM";
  if (cpu->cpu.arch != TOPO_CPU_ARCH_X86) return "unknown";
  switch (cpu->cpu.vendor) {
    case TOPO_CPU_VENDOR_INTEL: return topo_cpu_intel_gen(cpu->cpu.familyId, cpu->cpu.modelId);
    case TOPO_CPU_VENDOR_AMD: return topo_cpu_amd_gen(cpu->cpu.familyId);
    case TOPO_CPU_VENDOR_ZHAOXIN:
      return (cpu->cpu.familyId == 7 && cpu->cpu.modelId == 0x5B) ? "YONGFENG" : "ZHAOXIN";
    default: return "x86";
  }
}

float topo_cpu_inter_bw(const topo_node_t* cpu) {
  if (cpu->cpu.arch == TOPO_CPU_ARCH_POWER) return TOPO_P9_BW;
  if (cpu->cpu.arch == TOPO_CPU_ARCH_ARM) return TOPO_ARM_BW;
  if (cpu->cpu.arch != TOPO_CPU_ARCH_X86) return TOPO_LOC_BW; /* unknown: do not make it the bottleneck */
  const char* gen = topo_cpu_model_name(cpu);
  switch (cpu->cpu.vendor) {
    case TOPO_CPU_VENDOR_INTEL:
      return strcmp(gen, "ERP") == 0   ? TOPO_ERP_QPI_BW
             : strcmp(gen, "SRP") == 0 ? TOPO_SRP_QPI_BW
             : strcmp(gen, "SKL") == 0 ? TOPO_SKL_QPI_BW
                                       : TOPO_BDW_QPI_BW;
    case TOPO_CPU_VENDOR_AMD:
      return strcmp(gen, "ZEN5") == 0 ? TOPO_AMD_ZEN5_BW : strcmp(gen, "ZEN34") == 0 ? TOPO_AMD_ZEN34_BW : TOPO_AMD_ZEN12_BW;
    case TOPO_CPU_VENDOR_ZHAOXIN: return strcmp(gen, "YONGFENG") == 0 ? TOPO_YONGFENG_ZPI_BW : TOPO_ZPI_BW;
    default: return TOPO_LOC_BW;
  }
}

/* NCCL's per-link NVLink bandwidth by compute capability. */
float topo_nvlink_bw(int sm) {
  if (sm >= 100) return 40.1f;
  if (sm >= 90) return 20.6f;
  if (sm == 86) return 12.0f;
  if (sm >= 80) return 20.0f;
  if (sm >= 70) return 20.0f;
  if (sm >= 60) return 18.0f;
  return 20.0f;
}
