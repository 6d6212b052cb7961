/* The machine from hwloc: one CPU node per NUMA domain (cores, vendor,
 * model), and GPUs and NICs placed under the PCIe switches that lead to them. */
#include <errno.h>
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "topo/graph.h"

typedef struct {
  topo_system_t* sys;
  hwloc_topology_t topo;
} topo_hwloc_t;

static ncclResult_t topo_hwloc_load(const char* xmlPath, hwloc_topology_t* out) {
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return MK_SYSFAIL("hwloc_topology_init");
  /* Bridges and every PCI device: the switches are what the paths are made of. */
  hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_ALL);
  if (xmlPath && hwloc_topology_set_xml(topo, xmlPath) != 0) {
    hwloc_topology_destroy(topo);
    return MK_FAIL(ncclInvalidArgument, "topology: cannot read hwloc XML '%s': %s", xmlPath, strerror(errno));
  }
  if (hwloc_topology_load(topo) != 0) {
    int err = errno;
    hwloc_topology_destroy(topo);
    /* A bad file is the caller's; a failed probe is the system's. */
    return MK_FAIL(xmlPath ? ncclInvalidArgument : ncclSystemError, "topology: hwloc could not load %s: %s",
                   xmlPath ? xmlPath : "this machine", strerror(err));
  }
  *out = topo;
  return ncclSuccess;
}

/* hwloc's link speed is GB/s after line coding; NCCL's scale is 6 Gb/s per
 * Gen3 lane (12 GB/s for Gen3 x16, 24 for Gen4 x16). Unknown: Gen3 x16. */
static float topo_hwloc_pci_bw(float linkspeed) {
  if (linkspeed <= 0.0f) return TOPO_PCI_BW;
  float bw = linkspeed * 0.75f * 130.0f / 128.0f;
  return (float)(int)(bw * 100.0f + 0.5f) / 100.0f;
}

static void topo_hwloc_ids(const struct hwloc_pcidev_attr_s* a, topo_node_t* n) {
  n->pci = (topo_pci_ids_t){a->vendor_id, a->device_id, a->subvendor_id, a->subdevice_id, a->class_id, 1, a->linkspeed};
  n->upBw = topo_hwloc_pci_bw(a->linkspeed);
}

static int64_t topo_hwloc_busid(const struct hwloc_pcidev_attr_s* a) {
  return ((int64_t)a->domain << 20) | (a->bus << 12) | (a->dev << 4) | a->func;
}

static int topo_hwloc_is_pci_bridge(hwloc_obj_t o) {
  return o && o->type == HWLOC_OBJ_BRIDGE && o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI;
}

/* The NUMA domain an I/O object is local to: the first NUMA node of its
 * nearest non-I/O ancestor; CPU 0 when hwloc does not say. */
static topo_node_t* topo_hwloc_cpu_of(topo_hwloc_t* h, hwloc_obj_t obj) {
  hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(h->topo, obj);
  int numa = (anc && anc->nodeset) ? hwloc_bitmap_first(anc->nodeset) : -1;
  topo_node_t* cpu = numa >= 0 ? topo_node_find(h->sys, TOPO_CPU, numa) : NULL;
  return cpu ? cpu : h->sys->nodes[TOPO_CPU][0];
}

/* NCCL keeps one node per PCIe switch (its upstream port) and skips the
 * ports below it: a device hangs two bridges up, or off the CPU when the
 * host bridge comes first. Switch nodes are made on first use. */
static ncclResult_t topo_hwloc_parent(topo_hwloc_t* h, hwloc_obj_t obj, topo_node_t** parent) {
  hwloc_obj_t port = obj->parent;
  hwloc_obj_t sw = topo_hwloc_is_pci_bridge(port) ? port->parent : NULL;
  if (!topo_hwloc_is_pci_bridge(sw)) {
    *parent = topo_hwloc_cpu_of(h, obj);
    return ncclSuccess;
  }
  const struct hwloc_pcidev_attr_s* a = &sw->attr->bridge.upstream.pci;
  int64_t id = topo_hwloc_busid(a);
  topo_node_t* node = topo_node_find(h->sys, TOPO_PCI, id);
  if (!node) {
    topo_node_t* up;
    MK_CHECK(topo_hwloc_parent(h, sw, &up));
    MK_CHECK(topo_node_create(h->sys, TOPO_PCI, id, &node));
    topo_busid_format(id, node->busId, sizeof(node->busId));
    topo_hwloc_ids(a, node);
    node->up = up;
    MK_CHECK(topo_nodes_connect(node, up, TOPO_LINK_PCI, node->upBw, 1));
  }
  *parent = node;
  return ncclSuccess;
}

static void topo_hwloc_affinity(hwloc_const_cpuset_t set, cpu_set_t* out) {
  CPU_ZERO(out);
  int i;
  hwloc_bitmap_foreach_begin(i, set) {
    if (i < CPU_SETSIZE) CPU_SET(i, out);
  }
  hwloc_bitmap_foreach_end();
}

static int topo_hwloc_info_int(hwloc_obj_t o, const char* name) {
  const char* v = o ? hwloc_obj_get_info_by_name(o, name) : NULL;
  return v ? (int)strtol(v, NULL, 0) : 0;
}

/* The package holding a NUMA domain (or the first one) carries the CPU's
 * vendor, family and model. */
static hwloc_obj_t topo_hwloc_package_of(hwloc_topology_t topo, hwloc_obj_t numa) {
  hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, numa);
  if (pkg) return pkg;
  for (pkg = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PACKAGE, NULL); pkg;
       pkg = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PACKAGE, pkg))
    if (numa->cpuset && hwloc_bitmap_intersects(pkg->cpuset, numa->cpuset)) return pkg;
  return hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PACKAGE, NULL);
}

static ncclResult_t topo_hwloc_cpus(topo_hwloc_t* h) {
  hwloc_obj_t root = hwloc_get_root_obj(h->topo);
  const char* arch = hwloc_obj_get_info_by_name(root, "Architecture");
  int n = hwloc_get_nbobjs_by_type(h->topo, HWLOC_OBJ_NUMANODE);
  for (int i = 0; i < n; i++) {
    hwloc_obj_t numa = hwloc_get_obj_by_type(h->topo, HWLOC_OBJ_NUMANODE, i);
    int64_t id = numa->os_index == HWLOC_UNKNOWN_INDEX ? i : (int64_t)numa->os_index;
    topo_node_t* cpu;
    MK_CHECK(topo_node_create(h->sys, TOPO_CPU, id, &cpu));
    topo_hwloc_affinity(numa->cpuset ? numa->cpuset : root->cpuset, &cpu->cpu.affinity);
    hwloc_obj_t pkg = topo_hwloc_package_of(h->topo, numa);
    const char* vendor = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUVendor") : NULL;
    if (!vendor) vendor = hwloc_obj_get_info_by_name(root, "CPUVendor");
    topo_cpu_identify(cpu, arch, vendor, topo_hwloc_info_int(pkg, "CPUFamilyNumber"),
                      topo_hwloc_info_int(pkg, "CPUModelNumber"));
  }
  if (n == 0) { /* hwloc 2 always has one; stay usable if not */
    topo_node_t* cpu;
    MK_CHECK(topo_node_create(h->sys, TOPO_CPU, 0, &cpu));
    topo_hwloc_affinity(root->cpuset, &cpu->cpu.affinity);
    topo_cpu_identify(cpu, arch, hwloc_obj_get_info_by_name(root, "CPUVendor"), 0, 0);
  }
  /* Every pair of NUMA domains talks over the CPU interconnect. */
  for (int a = 0; a < h->sys->count[TOPO_CPU]; a++)
    for (int b = a + 1; b < h->sys->count[TOPO_CPU]; b++)
      MK_CHECK(topo_nodes_connect(h->sys->nodes[TOPO_CPU][a], h->sys->nodes[TOPO_CPU][b], TOPO_LINK_SYS,
                                  topo_cpu_inter_bw(h->sys->nodes[TOPO_CPU][a]), 1));
  return ncclSuccess;
}

/* Hang a GPU or NIC node under its switch or CPU. `bw` caps the link (a NIC
 * slower than its PCIe slot). Devices hwloc does not know go to CPU 0. */
static ncclResult_t topo_hwloc_place(topo_hwloc_t* h, topo_node_t* node, int64_t busId, float bw) {
  hwloc_obj_t obj = NULL;
  if (busId >= 0)
    obj = hwloc_get_pcidev_by_busid(h->topo, (unsigned)(busId >> 20), (unsigned)((busId >> 12) & 0xff),
                                    (unsigned)((busId >> 4) & 0xff), (unsigned)(busId & 0xf));
  topo_node_t* up;
  if (obj) {
    topo_hwloc_ids(&obj->attr->pcidev, node);
    MK_CHECK(topo_hwloc_parent(h, obj, &up));
  } else {
    up = h->sys->nodes[TOPO_CPU][0];
    node->upBw = node->type == TOPO_NIC ? TOPO_LOC_BW : TOPO_PCI_BW;
    if (node->type == TOPO_GPU)
      MK_INFO(NCCL_INIT | NCCL_GRAPH, "topology: GPU %s not in the PCI tree, placed under CPU %d", node->busId,
              (int)up->id);
    else
      MK_INFO(NCCL_INIT | NCCL_GRAPH, "topology: NIC %s (%s) not in the PCI tree, placed under CPU %d",
              node->nic.name, node->busId[0] ? node->busId : "no PCI path", (int)up->id);
  }
  node->up = up;
  float linkBw = bw > 0.0f && bw < node->upBw ? bw : node->upBw;
  MK_CHECK(topo_nodes_connect(node, up, TOPO_LINK_PCI, linkBw, 1));
  return ncclSuccess;
}

/* The net plugin's pciPath is a sysfs path; its last BDF is the device. */
static int64_t topo_nic_busid(const char* pciPath) {
  int64_t id = -1, v;
  for (const char* p = pciPath; p && *p; p += strspn(p, "/")) {
    size_t len = strcspn(p, "/");
    char comp[32];
    if (len < sizeof(comp)) {
      memcpy(comp, p, len);
      comp[len] = '\0';
      if (topo_busid_parse(comp, &v) == 0) id = v;
    }
    p += len;
  }
  return id;
}

static ncclResult_t topo_hwloc_gpus(topo_hwloc_t* h, const topo_gpu_input_t* gpus, int nGpus) {
  for (int g = 0; g < nGpus; g++) {
    int64_t id;
    if (topo_busid_parse(gpus[g].busId, &id) != 0)
      return MK_FAIL(ncclInvalidArgument, "topology: GPU %d has a bad PCI bus id '%s'", g,
                     gpus[g].busId ? gpus[g].busId : "(null)");
    if (topo_node_find(h->sys, TOPO_GPU, id))
      return MK_FAIL(ncclInvalidArgument, "topology: GPU bus id %s given twice", gpus[g].busId);
    topo_node_t* gpu;
    MK_CHECK(topo_node_create(h->sys, TOPO_GPU, id, &gpu));
    topo_busid_format(id, gpu->busId, sizeof(gpu->busId));
    gpu->gpu.dev = gpus[g].cudaDev;
    gpu->gpu.sm = gpus[g].sm;
    gpu->gpu.rank = gpus[g].rank;
    gpu->gpu.c2cBw = gpus[g].c2cBw;
    gpu->gpu.gdr = gpus[g].gdr;
    MK_CHECK(topo_hwloc_place(h, gpu, id, 0.0f));
  }
  return ncclSuccess;
}

static ncclResult_t topo_hwloc_nics(topo_hwloc_t* h, const topo_nic_input_t* nics, int nNics) {
  for (int n = 0; n < nNics; n++) {
    int64_t id = topo_nic_busid(nics[n].pciPath);
    topo_node_t* nic;
    MK_CHECK(topo_node_create(h->sys, TOPO_NIC, id, &nic));
    snprintf(nic->nic.name, sizeof(nic->nic.name), "%s", nics[n].name ? nics[n].name : "");
    nic->nic.speedMbps = nics[n].speedMbps > 0 ? nics[n].speedMbps : TOPO_NIC_DEFAULT_MBPS;
    nic->nic.gdr = nics[n].gdr;
    if (id >= 0) topo_busid_format(id, nic->busId, sizeof(nic->busId));
    MK_CHECK(topo_hwloc_place(h, nic, id, nic->nic.speedMbps / 8000.0f));
  }
  return ncclSuccess;
}

ncclResult_t topo_hwloc_import(topo_system_t* sys, const char* xmlPath, const topo_gpu_input_t* gpus, int nGpus,
                               const topo_nic_input_t* nics, int nNics) {
  topo_hwloc_t h = {sys, NULL};
  MK_CHECK(topo_hwloc_load(xmlPath, &h.topo));
  ncclResult_t res;
  MK_CHECK_GOTO(topo_hwloc_cpus(&h), res, out);
  MK_CHECK_GOTO(topo_hwloc_gpus(&h, gpus, nGpus), res, out);
  MK_CHECK_GOTO(topo_hwloc_nics(&h, nics, nNics), res, out);
  snprintf(sys->source, sizeof(sys->source), "%s%s", xmlPath ? "hwloc XML " : "hwloc, this machine",
           xmlPath ? xmlPath : "");
out:
  hwloc_topology_destroy(h.topo);
  return res;
}
