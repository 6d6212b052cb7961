/* Building the system: hwloc for CPUs and the PCI tree, GPUs from the caller
 * or the CUDA driver, NICs and NVLinks from the caller, then the paths. */
#include <stdio.h>
#include <stdlib.h>

#include "base/err.h"
#include "base/param.h"
#include "cuda/driver.h"
#include "topo/graph.h"

/* Every GPU the CUDA driver sees, in CUDA order; none without a driver. */
static ncclResult_t topo_cuda_gpus(topo_gpu_input_t** gpus, char (**busIds)[16], int* n) {
  int count = cuda_device_count();
  *gpus = NULL;
  *busIds = NULL;
  *n = 0;
  if (count == 0) return ncclSuccess;
  topo_gpu_input_t* g = calloc(count, sizeof(*g));
  char(*ids)[16] = calloc(count, sizeof(*ids));
  ncclResult_t res = ncclSuccess;
  if (!g || !ids) {
    res = MK_FAIL(ncclSystemError, "topology: out of memory");
    goto fail;
  }
  for (int d = 0; d < count; d++) {
    MK_CHECK_GOTO(cuda_device_bus_id(d, ids[d], sizeof(ids[d])), res, fail);
    MK_CHECK_GOTO(cuda_device_sm(d, &g[d].sm), res, fail);
    g[d].busId = ids[d];
    g[d].cudaDev = d;
    g[d].rank = -1;
  }
  *gpus = g;
  *busIds = ids;
  *n = count;
  return ncclSuccess;
fail:
  free(ids);
  free(g);
  return res;
}

static topo_node_t* topo_tree_cpu(topo_node_t* n) {
  while (n && n->type != TOPO_CPU) n = n->up;
  return n;
}

static ncclResult_t topo_nvlinks_add(topo_system_t* sys, const topo_nvlink_input_t* links, int n) {
  topo_node_t* nvs = NULL;
  for (int i = 0; i < n; i++) {
    const topo_nvlink_input_t* l = &links[i];
    topo_node_t* a = topo_node_get(sys, TOPO_GPU, l->gpuA);
    topo_node_t* b = l->gpuB >= 0 ? topo_node_get(sys, TOPO_GPU, l->gpuB) : NULL;
    if (l->gpuB == TOPO_NVLINK_CPU) b = a ? topo_tree_cpu(a) : NULL;
    if (l->gpuB == TOPO_NVLINK_NVSWITCH) {
      if (!nvs) MK_CHECK(topo_node_create(sys, TOPO_NVS, 0, &nvs));
      b = nvs;
    }
    if (!a || !b || a == b || (l->count <= 0 && l->bw <= 0.0f))
      return MK_FAIL(ncclInvalidArgument, "topology: bad NVLink %d: GPU %d to %d, count %d, bw %g (%d GPUs)", i,
                     l->gpuA, l->gpuB, l->count, (double)l->bw, sys->count[TOPO_GPU]);
    float perLink = topo_nvlink_bw(a->gpu.sm);
    float bw = l->bw > 0.0f ? l->bw : l->count * perLink;
    int count = l->count > 0 ? l->count : (int)(bw / perLink + 0.5f);
    MK_CHECK(topo_nodes_connect(a, b, TOPO_LINK_NVL, bw, count > 0 ? count : 1));
  }
  return ncclSuccess;
}

static ncclResult_t topo_c2c_add(topo_system_t* sys) {
  for (int g = 0; g < sys->count[TOPO_GPU]; g++) {
    topo_node_t* gpu = sys->nodes[TOPO_GPU][g];
    topo_node_t* cpu = topo_tree_cpu(gpu);
    if (gpu->gpu.c2cBw > 0.0f && cpu) MK_CHECK(topo_nodes_connect(gpu, cpu, TOPO_LINK_C2C, gpu->gpu.c2cBw, 1));
  }
  return ncclSuccess;
}

static ncclResult_t topo_inputs_check(const topo_inputs_t* in) {
  if (in->nGpus < 0 || in->nNics < 0 || in->nNvlinks < 0 || (in->nGpus && !in->gpus) || (in->nNics && !in->nics) ||
      (in->nNvlinks && !in->nvlinks))
    return MK_FAIL(ncclInvalidArgument, "topology: bad inputs (%d GPUs at %p, %d NICs at %p, %d NVLinks at %p)",
                   in->nGpus, (const void*)in->gpus, in->nNics, (const void*)in->nics, in->nNvlinks,
                   (const void*)in->nvlinks);
  return ncclSuccess;
}

static ncclResult_t topo_dump_if_asked(const topo_system_t* sys, int rank) {
  const char* file = param_NCCL_TOPO_DUMP_FILE();
  if (!file || !*file || rank != param_NCCL_TOPO_DUMP_FILE_RANK()) return ncclSuccess;
  MK_CHECK(topo_dump_xml(sys, file));
  MK_INFO(NCCL_GRAPH | NCCL_ENV, "NCCL_TOPO_DUMP_FILE: topology written to %s", file);
  return ncclSuccess;
}

ncclResult_t topo_system_build(const topo_inputs_t* in, topo_system_t** out) {
  static const topo_inputs_t none = {0};
  if (!in) in = &none;
  if (!out) return MK_FAIL(ncclInvalidArgument, "topo_system_build: NULL output");
  MK_CHECK(topo_inputs_check(in));
  const char* xml = in->hwlocXml;
  if (!xml) xml = param_MKCCL_TOPO_HWLOC_XML();
  if (xml && !*xml) xml = NULL;

  const topo_gpu_input_t* gpus = in->gpus;
  int nGpus = in->nGpus;
  topo_gpu_input_t* found = NULL;
  char(*foundIds)[16] = NULL;
  topo_system_t* sys = NULL;
  ncclResult_t res;
  if (nGpus == 0 && !in->noCudaGpus) {
    MK_CHECK(topo_cuda_gpus(&found, &foundIds, &nGpus));
    gpus = found;
  }
  MK_CHECK_GOTO(topo_system_alloc(&sys), res, fail);
  MK_CHECK_GOTO(topo_hwloc_import(sys, xml, gpus, nGpus, in->nics, in->nNics), res, fail);
  MK_CHECK_GOTO(topo_nvlinks_add(sys, in->nvlinks, in->nNvlinks), res, fail);
  MK_CHECK_GOTO(topo_c2c_add(sys), res, fail);
  MK_CHECK_GOTO(topo_paths_compute(sys), res, fail);
  topo_p2p_level_resolve(sys);
  MK_CHECK_GOTO(topo_dump_if_asked(sys, in->rank), res, fail);
  MK_INFO(NCCL_INIT | NCCL_GRAPH, "topology from %s: %d CPUs, %d GPUs, %d NICs, %d PCI switches, %d NVSwitches; P2P level %s",
          sys->source, sys->count[TOPO_CPU], sys->count[TOPO_GPU], sys->count[TOPO_NIC], sys->count[TOPO_PCI],
          sys->count[TOPO_NVS], topo_path_name(sys->p2pLevel));
  free(foundIds);
  free(found);
  *out = sys;
  return ncclSuccess;
fail:
  topo_system_free(sys);
  free(foundIds);
  free(found);
  return res;
}
