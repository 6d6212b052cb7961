/* Which provider and which NICs: fi_getinfo for RDM endpoints with tagged
 * messages, the best provider by a fixed preference order (or the one the
 * user named), then one device per domain of that provider. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_errno.h>

#include "net_ofi.h"

/* Fast fabrics first, TCP emulations after, sockets last. A provider not
 * listed sits just before tcp;ofi_rxm. shm only reaches this host: never. */
static const char* const net_ofi_prov_order[] = {
    "verbs;ofi_rxm", "efa", "cxi", "psm3", "opx", "psm2", "ucx", "verbs;ofi_rxd", "tcp;ofi_rxm", "tcp",
    "udp;ofi_rxd", "sockets",
};
#define OFI_NPROV (int)(sizeof(net_ofi_prov_order) / sizeof(net_ofi_prov_order[0]))

static int net_ofi_prov_rank(const char* name) {
  if (!name || strcmp(name, "shm") == 0 || strncmp(name, "shm;", 4) == 0) return -1;
  for (int i = 0; i < OFI_NPROV; i++)
    if (strcmp(name, net_ofi_prov_order[i]) == 0) return 2 * i;
  return 2 * 8 - 1; /* unknown: just before tcp;ofi_rxm (index 8) */
}

static net_ofi_nic_t net_ofi_nics[OFI_MAX_DEVS];
static int net_ofi_nnics = -1;
/* fi_getinfo's lists, freed at release: host-only and HMEM, each asked
 * with and without FI_DELIVERY_COMPLETE (index OFI_LIST(hmem, dc)). */
#define OFI_LIST(hmem, dc) ((hmem) * 2 + (dc))
static struct fi_info* net_ofi_infos[4];

int net_ofi_nic_count(void) { return net_ofi_nnics < 0 ? 0 : net_ofi_nnics; }
const net_ofi_nic_t* net_ofi_nic_get(int dev) {
  return dev >= 0 && dev < net_ofi_nic_count() ? &net_ofi_nics[dev] : NULL;
}

/* Sends that complete only once the peer matched them (FI_DELIVERY_COMPLETE)
 * are asked for where the provider offers them: with a provider that
 * completes a send once it left (libfabric's `net`), a sender that closes
 * and exits right after its last send completed can take with it messages
 * the receiver had not matched yet (the kit's close-after-send). */
static struct fi_info* net_ofi_getinfo(int hmem, int dc) {
  struct fi_info* hints = fi_allocinfo();
  struct fi_info* list = NULL;
  if (!hints) return NULL;
  hints->caps = FI_TAGGED | (hmem ? (FI_HMEM | FI_RMA | FI_READ | FI_REMOTE_READ) : 0);
  hints->mode = FI_CONTEXT | FI_CONTEXT2;
  hints->ep_attr->type = FI_EP_RDM;
  hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_PROV_KEY | FI_MR_ENDPOINT | FI_MR_ALLOCATED |
                                (hmem ? FI_MR_HMEM : 0);
  hints->domain_attr->threading = FI_THREAD_DOMAIN; /* we serialise per device */
  hints->tx_attr->msg_order = FI_ORDER_SAS;
  hints->rx_attr->msg_order = FI_ORDER_SAS;
  if (dc) hints->tx_attr->op_flags = FI_DELIVERY_COMPLETE;
  const char* prov = net_ofi_param_MKCCL_OFI_PROVIDER();
  if (prov && *prov) hints->fabric_attr->prov_name = strdup(prov);
  int rc = fi_getinfo(FI_VERSION(1, 10), NULL, NULL, 0, hints, &list);
  fi_freeinfo(hints);
  if (rc != 0 && rc != -FI_ENODATA)
    OFI_INFO(NCCL_INIT | NCCL_NET, "fi_getinfo(%s%s) failed: %s", hmem ? "FI_HMEM" : "host",
             dc ? ", FI_DELIVERY_COMPLETE" : "", fi_strerror(-rc));
  return rc == 0 ? list : NULL;
}

static int net_ofi_is_loopback(const struct fi_info* fi) {
  const char* dom = fi->domain_attr->name ? fi->domain_attr->name : "";
  const char* fab = fi->fabric_attr->name ? fi->fabric_attr->name : "";
  return strcmp(dom, "lo") == 0 || strncmp(fab, "127.", 4) == 0 || strcmp(fab, "::1/128") == 0;
}

static char* net_ofi_pci_path(const struct fi_info* fi) {
  char path[PATH_MAX], real[PATH_MAX];
  struct fid_nic* nic = fi->nic;
  if (nic && nic->bus_attr && nic->bus_attr->bus_type == FI_BUS_PCI) {
    const struct fi_pci_attr* p = &nic->bus_attr->attr.pci;
    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%04x:%02x:%02x.%x", p->domain_id, p->bus_id, p->device_id,
             p->function_id);
    if (realpath(path, real)) return strdup(real);
  }
  const char* dom = fi->domain_attr->name;
  const char* dirs[] = {"/sys/class/net", "/sys/class/infiniband"};
  for (int i = 0; dom && i < 2; i++) {
    snprintf(path, sizeof(path), "%s/%s/device", dirs[i], dom);
    if (realpath(path, real)) return strdup(real);
  }
  return NULL;
}

static int net_ofi_speed(const struct fi_info* fi) {
  if (fi->nic && fi->nic->link_attr && fi->nic->link_attr->speed > 0)
    return (int)(fi->nic->link_attr->speed / 1000000);
  char path[PATH_MAX];
  int mbps = 0;
  snprintf(path, sizeof(path), "/sys/class/net/%s/speed", fi->domain_attr->name ? fi->domain_attr->name : "");
  FILE* f = fopen(path, "r");
  if (f) {
    if (fscanf(f, "%d", &mbps) != 1) mbps = 0;
    fclose(f);
  }
  return mbps > 0 ? mbps : 10000; /* unknown (virtual NICs): NCCL's default */
}

static const struct fi_info* net_ofi_find(const struct fi_info* list, const char* prov, const char* dom) {
  for (const struct fi_info* fi = list; fi; fi = fi->next)
    if (strcmp(fi->fabric_attr->prov_name, prov) == 0 && strcmp(fi->domain_attr->name, dom) == 0) return fi;
  return NULL;
}

/* The tag bits a provider matches: its mem_tag_format's highest set bit
 * (0x5555... is 63 bits); no format means the full 64. */
static int net_ofi_tag_bits(const struct fi_info* fi) {
  uint64_t format = fi->ep_attr ? fi->ep_attr->mem_tag_format : 0;
  int bits = 0;
  while (bits < 64 && (format >> bits)) bits++;
  return bits ? bits : 64;
}

/* The device's fi_info: with FI_HMEM where offered, with delivery complete
 * where offered, else the plain host one. */
static void net_ofi_nic_add(const char* prov, const char* dom) {
  net_ofi_nic_t* n = &net_ofi_nics[net_ofi_nnics];
  const struct fi_info* fi = NULL;
  int hmem = 0, dc = 0;
  for (int i = 3; i >= 0 && !fi; i--) {
    fi = net_ofi_find(net_ofi_infos[i], prov, dom);
    hmem = i / 2, dc = i % 2;
  }
  if (!fi || !(n->info = fi_dupinfo(fi))) return;
  snprintf(n->name, sizeof(n->name), "%s", fi->domain_attr->name);
  n->pciPath = net_ofi_pci_path(fi);
  n->speedMbps = net_ofi_speed(fi);
  n->hmem = hmem;
  n->rma = hmem;
  n->tagBits = net_ofi_tag_bits(fi);
  OFI_INFO(NCCL_INIT | NCCL_NET, "device %d: %s provider %s fabric %s, %d tag bits, sends complete %s%s", net_ofi_nnics,
           n->name, fi->fabric_attr->prov_name, fi->fabric_attr->name, n->tagBits,
           dc ? "when matched at the peer" : "when sent (the provider offers no FI_DELIVERY_COMPLETE)",
           n->hmem ? " (FI_HMEM: CUDA pointers)" : "");
  net_ofi_nnics++;
}

ncclResult_t net_ofi_nics_discover(void) {
  if (net_ofi_nnics >= 0) return ncclSuccess;
  for (int hmem = 0; hmem < 2; hmem++)
    for (int dc = 0; dc < 2 && (!hmem || net_ofi_param_MKCCL_OFI_HMEM()); dc++)
      net_ofi_infos[OFI_LIST(hmem, dc)] = net_ofi_getinfo(hmem, dc);
  struct fi_info* host = net_ofi_infos[OFI_LIST(0, 0)];
  const char* best = NULL;
  int bestRank = INT_MAX;
  for (struct fi_info* fi = host; fi; fi = fi->next) {
    int r = net_ofi_prov_rank(fi->fabric_attr->prov_name);
    if (r >= 0 && r < bestRank && net_ofi_tag_bits(fi) < OFI_TAG_BITS_MIN) {
      OFI_INFO(NCCL_INIT | NCCL_NET, "provider %s matches %d tag bits, fewer than the %d net-ofi needs: not used",
               fi->fabric_attr->prov_name, net_ofi_tag_bits(fi), OFI_TAG_BITS_MIN);
      continue;
    }
    if (r >= 0 && r < bestRank) bestRank = r, best = fi->fabric_attr->prov_name;
  }
  net_ofi_nnics = 0;
  int loopback = (int)net_ofi_param_MKCCL_OFI_LOOPBACK();
  for (int pass = 0; best && pass < 2 && net_ofi_nnics == 0; pass++) {
    /* Pass 0 skips loopback domains; pass 1 takes them when nothing else exists. */
    for (struct fi_info* fi = host; fi && net_ofi_nnics < OFI_MAX_DEVS; fi = fi->next) {
      if (strcmp(fi->fabric_attr->prov_name, best) != 0) continue;
      if (pass == 0 && !loopback && net_ofi_is_loopback(fi)) continue;
      int seen = 0;
      for (int i = 0; i < net_ofi_nnics; i++) seen |= strcmp(net_ofi_nics[i].name, fi->domain_attr->name) == 0;
      if (seen) continue;
      net_ofi_nic_add(best, fi->domain_attr->name);
    }
  }
  if (!best) OFI_INFO(NCCL_INIT | NCCL_NET, "no libfabric provider offers RDM tagged endpoints: 0 devices");
  return ncclSuccess;
}

void net_ofi_nics_release(void) {
  for (int i = 0; i < net_ofi_nic_count(); i++) {
    fi_freeinfo(net_ofi_nics[i].info);
    free(net_ofi_nics[i].pciPath);
  }
  memset(net_ofi_nics, 0, sizeof(net_ofi_nics));
  for (int i = 0; i < 4; i++) {
    if (net_ofi_infos[i]) fi_freeinfo(net_ofi_infos[i]);
    net_ofi_infos[i] = NULL;
  }
  net_ofi_nnics = -1;
}

/* FNV-1a of provider and domain: stable and distinct per NIC. */
static uint64_t net_ofi_guid(const net_ofi_nic_t* n) {
  uint64_t h = 1469598103934665603ULL;
  for (const char* s = n->info->fabric_attr->prov_name; *s; s++) h = (h ^ (uint8_t)*s) * 1099511628211ULL;
  for (const char* s = n->name; *s; s++) h = (h ^ (uint8_t)*s) * 1099511628211ULL;
  return h;
}

ncclResult_t net_ofi_props(int dev, ncclNetProperties_v12_t* props) {
  const net_ofi_nic_t* n = net_ofi_nic_get(dev);
  if (!n || !props) {
    OFI_WARN("getProperties: device %d out of range (%d devices)", dev, net_ofi_nic_count());
    return ncclInvalidArgument;
  }
  memset(props, 0, sizeof(*props));
  props->name = (char*)n->name;
  props->pciPath = n->pciPath;
  props->guid = net_ofi_guid(n);
  props->ptrSupport = NCCL_PTR_HOST | (n->hmem ? NCCL_PTR_CUDA : 0);
  props->regIsGlobal = 0;
  props->forceFlush = 0;
  props->speed = n->speedMbps;
  props->port = 0;
  props->latency = 0;
  props->maxComms = 65536;
  props->maxRecvs = OFI_MAX_RECVS;
  props->netDeviceType = NCCL_NET_DEVICE_HOST;
  props->netDeviceVersion = NCCL_NET_DEVICE_INVALID_VERSION;
  props->vProps.ndevs = 1;
  props->vProps.devs[0] = dev;
  size_t maxMsg = n->info->ep_attr->max_msg_size;
  props->maxP2pBytes = maxMsg < (size_t)MAX_NET_SIZE ? maxMsg : (size_t)MAX_NET_SIZE; /* test() sizes are int */
  props->maxCollBytes = MAX_COLLNET_SIZE;
  props->maxMultiRequestSize = 1;
  props->railId = NCCL_NET_ID_UNDEF;
  props->planeId = NCCL_NET_ID_UNDEF;
  return ncclSuccess;
}
