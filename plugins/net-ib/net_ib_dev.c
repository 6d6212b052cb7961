/* HCA discovery: every active port NCCL_IB_HCA takes becomes a device,
 * with its address (LID, or the GID net_ib_gid.c picks on RoCE), speed,
 * PCI path, and what it can register (GPUDirect peer memory, dma-buf).
 * No HCA (or no RDMA support in the kernel): zero devices, not an error. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net_ib.h"
#include "net_ib_gid.h"
#include "net_ib_hca.h"

static net_ib_dev_t net_ib_devs[NET_IB_MAX_DEVS];
static int net_ib_ndevs = -1;
static pthread_mutex_t net_ib_devs_lock = PTHREAD_MUTEX_INITIALIZER;

int net_ib_dev_count(void) { return net_ib_ndevs < 0 ? 0 : net_ib_ndevs; }
net_ib_dev_t* net_ib_dev_get(int dev) { return dev >= 0 && dev < net_ib_dev_count() ? &net_ib_devs[dev] : NULL; }

/* Per-lane Gbps of ibv_port_attr.active_speed, and lanes of active_width. */
static int net_ib_speed_mbps(uint8_t speed, uint8_t width) {
  int lane = speed == 1 ? 2500 : speed == 2 ? 5000 : speed == 4 ? 10000 : speed == 8 ? 10000 : speed == 16 ? 14000
           : speed == 32 ? 25000 : speed == 64 ? 50000 : speed == 128 ? 100000 : 10000;
  int lanes = width == 1 ? 1 : width == 2 ? 4 : width == 4 ? 8 : width == 8 ? 12 : width == 16 ? 2 : 1;
  return lane * lanes;
}

static int net_ib_gdr_present(void) {
  return access("/sys/kernel/mm/memory_peers/nv_mem/version", F_OK) == 0 ||
         access("/sys/module/nvidia_peermem/version", F_OK) == 0 || access("/sys/module/nv_peer_mem/version", F_OK) == 0;
}

/* As NCCL probes it: a dma-buf registration of fd -1 fails with EBADF where
 * the kernel and provider know dma-bufs, with EOPNOTSUPP where not. */
static int net_ib_dmabuf_supported(struct ibv_pd* pd) {
  errno = 0;
  struct ibv_mr* mr = ibv_reg_dmabuf_mr(pd, 0, 0, 0, -1, 0);
  if (mr) ibv_dereg_mr(mr);
  return !(errno == EOPNOTSUPP || errno == EPROTONOSUPPORT || errno == ENOSYS);
}

static char* net_ib_pci_path(const char* name) {
  char path[PATH_MAX], real[PATH_MAX];
  snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device", name);
  return realpath(path, real) ? strdup(real) : NULL;
}

/* One port as a device; 0 when added. */
static int net_ib_port_add(struct ibv_context* ctx, struct ibv_pd* pd, net_ib_mrcache_t* mrs,
                           const struct ibv_device_attr* attr, int port, const struct ibv_port_attr* pa) {
  net_ib_dev_t* d = &net_ib_devs[net_ib_ndevs];
  memset(d, 0, sizeof(*d));
  snprintf(d->name, sizeof(d->name), "%s", ibv_get_device_name(ctx->device));
  d->port = port;
  d->ctx = ctx;
  d->pd = pd;
  d->linkLayer = pa->link_layer == IBV_LINK_LAYER_ETHERNET ? IB_LINK_ETH : IB_LINK_IB;
  d->lid = pa->lid;
  d->mtu = pa->active_mtu;
  d->speedMbps = net_ib_speed_mbps(pa->active_speed, pa->active_width);
  d->guid = attr->node_guid;
  d->maxQpWr = attr->max_qp_wr;
  d->maxQp = attr->max_qp;
  net_ib_gid_entry_t table[IB_GID_MAX];
  int n = net_ib_gid_read_sysfs("/sys", d->name, port, d->linkLayer == IB_LINK_ETH, table, IB_GID_MAX);
  d->gidIndex = net_ib_gid_select(table, n, d->linkLayer == IB_LINK_ETH, (int)net_ib_param_NCCL_IB_GID_INDEX(),
                                  (int)net_ib_param_NCCL_IB_ROCE_VERSION_NUM());
  if (d->gidIndex < 0 && d->linkLayer == IB_LINK_IB) d->gidIndex = 0; /* no sysfs table: IB needs the LID only */
  if (d->gidIndex < 0) {
    IB_WARN("%s:%d: no usable GID (NCCL_IB_GID_INDEX %lld): port skipped", d->name, port,
            (long long)net_ib_param_NCCL_IB_GID_INDEX());
    return -1;
  }
  union ibv_gid gid;
  if (ibv_query_gid(ctx, (uint8_t)port, d->gidIndex, &gid) != 0) {
    IB_WARN("%s:%d: ibv_query_gid(%d) failed: port skipped", d->name, port, d->gidIndex);
    return -1;
  }
  memcpy(d->gid, gid.raw, 16);
  d->pciPath = net_ib_pci_path(d->name);
  d->gdr = net_ib_gdr_present();
  d->dmabuf = net_ib_dmabuf_supported(pd);
  d->mrs = mrs;
  IB_INFO(NCCL_INIT | NCCL_NET, "device %d: %s:%d %s, %d Mbps, GID index %d%s%s", net_ib_ndevs, d->name, port,
          d->linkLayer == IB_LINK_ETH ? "RoCE" : "IB", d->speedMbps, d->gidIndex, d->gdr ? ", GPUDirect" : "",
          d->dmabuf ? ", dma-buf" : "");
  net_ib_ndevs++;
  return 0;
}

/* An HCA: its context, protection domain and MR cache, shared by its ports. */
static void net_ib_hca_add(struct ibv_device* dev, const net_ib_hca_list_t* list) {
  const char* name = ibv_get_device_name(dev);
  struct ibv_context* ctx = ibv_open_device(dev);
  if (!ctx) {
    IB_INFO(NCCL_INIT | NCCL_NET, "%s: ibv_open_device failed: %s", name, strerror(errno));
    return;
  }
  struct ibv_device_attr attr;
  struct ibv_pd* pd = NULL;
  net_ib_mrcache_t* mrs = NULL;
  int before = net_ib_ndevs;
  if (ibv_query_device(ctx, &attr) != 0) goto done;
  for (int port = 1; port <= attr.phys_port_cnt && net_ib_ndevs < NET_IB_MAX_DEVS; port++) {
    struct ibv_port_attr pa;
    if (ibv_query_port(ctx, (uint8_t)port, &pa) != 0 || pa.state != IBV_PORT_ACTIVE) continue;
    if (pa.link_layer != IBV_LINK_LAYER_INFINIBAND && pa.link_layer != IBV_LINK_LAYER_ETHERNET) continue;
    if (!net_ib_hca_match(list, name, port)) continue;
    if (!pd && !(pd = ibv_alloc_pd(ctx))) break;
    if (!mrs) {
      if (!(mrs = malloc(sizeof(*mrs)))) break;
      net_ib_mrcache_init(mrs, (size_t)sysconf(_SC_PAGESIZE), net_ib_mr_reg, net_ib_mr_dereg, pd);
    }
    net_ib_port_add(ctx, pd, mrs, &attr, port, &pa);
  }
done:
  if (net_ib_ndevs > before) return; /* in use */
  if (mrs) net_ib_mrcache_fini(mrs), free(mrs);
  if (pd) ibv_dealloc_pd(pd);
  ibv_close_device(ctx);
}

ncclResult_t net_ib_devs_discover(void) {
  pthread_mutex_lock(&net_ib_devs_lock);
  if (net_ib_ndevs >= 0) goto out;
  net_ib_ndevs = 0;
  if (net_ib_param_NCCL_IB_DISABLE()) {
    IB_INFO(NCCL_INIT | NCCL_NET, "NCCL_IB_DISABLE set: 0 devices");
    goto out;
  }
  net_ib_hca_list_t list;
  const char* hca = net_ib_param_NCCL_IB_HCA();
  if (net_ib_hca_parse(hca, &list) != 0) {
    IB_WARN("NCCL_IB_HCA \"%s\" is malformed: 0 devices", hca);
    goto out;
  }
  int n = 0;
  struct ibv_device** devs = ibv_get_device_list(&n);
  if (!devs || n == 0) {
    IB_INFO(NCCL_INIT | NCCL_NET, "no RDMA devices (ibv_get_device_list: %d): 0 devices", n);
    if (devs) ibv_free_device_list(devs);
    goto out;
  }
  for (int i = 0; i < n; i++) net_ib_hca_add(devs[i], &list);
  ibv_free_device_list(devs); /* opened contexts stay valid */
  if (net_ib_ndevs == 0) IB_INFO(NCCL_INIT | NCCL_NET, "%d HCA(s), none active and taken by NCCL_IB_HCA: 0 devices", n);
out:
  pthread_mutex_unlock(&net_ib_devs_lock);
  return ncclSuccess;
}

ncclResult_t net_ib_props(int dev, ncclNetProperties_v12_t* props) {
  net_ib_dev_t* d = net_ib_dev_get(dev);
  if (!d || !props) {
    IB_WARN("getProperties: device %d out of range (%d devices)", dev, net_ib_dev_count());
    return ncclInvalidArgument;
  }
  memset(props, 0, sizeof(*props));
  props->name = d->name;
  props->pciPath = d->pciPath;
  props->guid = d->guid;
  props->ptrSupport = NCCL_PTR_HOST | (d->gdr || d->dmabuf ? NCCL_PTR_CUDA : 0) | (d->dmabuf ? NCCL_PTR_DMABUF : 0);
  props->regIsGlobal = 1; /* registrations are cached per protection domain */
  props->forceFlush = 0;
  props->speed = d->speedMbps;
  props->port = d->port;
  props->latency = 0;
  int qps = (int)net_ib_param_NCCL_IB_QPS_PER_CONNECTION();
  props->maxComms = d->maxQp / (qps > 0 ? qps : 1);
  props->maxRecvs = IB_MAX_RECVS;
  props->netDeviceType = NCCL_NET_DEVICE_HOST;
  props->netDeviceVersion = NCCL_NET_DEVICE_INVALID_VERSION;
  props->vProps.ndevs = 1;
  props->vProps.devs[0] = dev;
  props->maxP2pBytes = MAX_NET_SIZE; /* the immediate carries the size: 32 bits */
  props->maxCollBytes = MAX_COLLNET_SIZE;
  props->maxMultiRequestSize = 1;
  props->railId = NCCL_NET_ID_UNDEF;
  props->planeId = NCCL_NET_ID_UNDEF;
  return ncclSuccess;
}
