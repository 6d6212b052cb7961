/* Nodes and links of the topology graph, and the small facts callers read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "topo/graph.h"

ncclResult_t topo_system_alloc(topo_system_t** out) {
  topo_system_t* sys = calloc(1, sizeof(*sys));
  if (!sys) return MK_FAIL(ncclSystemError, "topology: out of memory");
  sys->p2pLevel = TOPO_PATH_PXB;
  *out = sys;
  return ncclSuccess;
}

void topo_system_free(topo_system_t* sys) {
  if (!sys) return;
  for (int t = 0; t < TOPO_NODE_TYPES; t++) {
    for (int i = 0; i < sys->count[t]; i++) {
      topo_node_t* n = sys->nodes[t][i];
      for (int p = 0; p < TOPO_NODE_TYPES; p++) free(n->paths[p]);
      free(n->links);
      free(n);
    }
    free(sys->nodes[t]);
  }
  free(sys);
}

ncclResult_t topo_node_create(topo_system_t* sys, int type, int64_t id, topo_node_t** out) {
  if (sys->count[type] == sys->cap[type]) {
    int cap = sys->cap[type] ? 2 * sys->cap[type] : 8;
    topo_node_t** grown = realloc(sys->nodes[type], cap * sizeof(*grown));
    if (!grown) return MK_FAIL(ncclSystemError, "topology: out of memory");
    sys->nodes[type] = grown;
    sys->cap[type] = cap;
  }
  topo_node_t* n = calloc(1, sizeof(*n));
  if (!n) return MK_FAIL(ncclSystemError, "topology: out of memory");
  n->type = type;
  n->id = id;
  n->index = sys->count[type];
  n->gpu.dev = -1;
  n->gpu.rank = -1;
  sys->nodes[type][sys->count[type]++] = n;
  *out = n;
  return ncclSuccess;
}

topo_node_t* topo_node_find(const topo_system_t* sys, int type, int64_t id) {
  for (int i = 0; i < sys->count[type]; i++)
    if (sys->nodes[type][i]->id == id) return sys->nodes[type][i];
  return NULL;
}

topo_node_t* topo_node_get(const topo_system_t* sys, int type, int index) {
  if (!sys || type < 0 || type >= TOPO_NODE_TYPES || index < 0 || index >= sys->count[type]) return NULL;
  return sys->nodes[type][index];
}

static ncclResult_t topo_link_add(topo_node_t* a, topo_node_t* b, int type, float bw, int count) {
  for (int l = 0; l < a->nlinks; l++) {
    if (a->links[l].rem == b && a->links[l].type == type) {
      a->links[l].bw += bw; /* parallel NVLinks add up */
      a->links[l].count += count;
      return ncclSuccess;
    }
  }
  if (a->nlinks == a->maxLinks) {
    int cap = a->maxLinks ? 2 * a->maxLinks : 4;
    topo_link_t* grown = realloc(a->links, cap * sizeof(*grown));
    if (!grown) return MK_FAIL(ncclSystemError, "topology: out of memory");
    a->links = grown;
    a->maxLinks = cap;
  }
  a->links[a->nlinks++] = (topo_link_t){type, bw, count, b};
  return ncclSuccess;
}

ncclResult_t topo_nodes_connect(topo_node_t* a, topo_node_t* b, int type, float bw, int count) {
  MK_CHECK(topo_link_add(a, b, type, bw, count));
  MK_CHECK(topo_link_add(b, a, type, bw, count));
  return ncclSuccess;
}

int topo_busid_parse(const char* text, int64_t* id) {
  unsigned int domain, bus, dev, fn;
  char tail;
  if (!text || sscanf(text, "%x:%x:%x.%x%c", &domain, &bus, &dev, &fn, &tail) != 4) return -1;
  if (domain > 0xffff || bus > 0xff || dev > 0x1f || fn > 0x7) return -1;
  *id = ((int64_t)domain << 20) | (bus << 12) | (dev << 4) | fn;
  return 0;
}

void topo_busid_format(int64_t id, char* text, int len) {
  snprintf(text, len, "%04x:%02x:%02x.%x", (unsigned)((id >> 20) & 0xffff), (unsigned)((id >> 12) & 0xff),
           (unsigned)((id >> 4) & 0xff), (unsigned)(id & 0xf));
}

int topo_count(const topo_system_t* sys, int type) {
  if (!sys || type < 0 || type >= TOPO_NODE_TYPES) return 0;
  return sys->count[type];
}

const char* topo_gpu_bus_id(const topo_system_t* sys, int gpu) {
  topo_node_t* n = topo_node_get(sys, TOPO_GPU, gpu);
  return n ? n->busId : NULL;
}

int topo_gpu_cuda_dev(const topo_system_t* sys, int gpu) {
  topo_node_t* n = topo_node_get(sys, TOPO_GPU, gpu);
  return n ? n->gpu.dev : -1;
}

int topo_gpu_find_id(const topo_system_t* sys, int64_t busId) {
  topo_node_t* n = sys && busId >= 0 ? topo_node_find(sys, TOPO_GPU, busId) : NULL;
  return n ? n->index : -1;
}

int topo_gpu_find(const topo_system_t* sys, const char* busId) {
  int64_t id;
  if (!sys || topo_busid_parse(busId, &id) != 0) return -1;
  return topo_gpu_find_id(sys, id);
}

const char* topo_nic_name(const topo_system_t* sys, int nic) {
  topo_node_t* n = topo_node_get(sys, TOPO_NIC, nic);
  return n ? n->nic.name : NULL;
}

int topo_cpu_numa_id(const topo_system_t* sys, int cpu) {
  topo_node_t* n = topo_node_get(sys, TOPO_CPU, cpu);
  return n ? (int)n->id : -1;
}
