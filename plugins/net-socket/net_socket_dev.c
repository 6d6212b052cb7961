/* Interface discovery (through mkccl_sock). */
#include "net_socket_dev.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mkccl_cpus.h"
#include "net_socket_log.h"
#include "net_socket_params.h"

#define NET_SOCKET_DEFAULT_SPEED 10000

static pthread_mutex_t net_socket_devs_lock = PTHREAD_MUTEX_INITIALIZER;
static net_socket_dev_t net_socket_devs[NET_SOCKET_MAX_DEVS];
static int net_socket_ndevs = -1;

/* PCI vendor id of the interface's device (layout autodetection); 0 if none.
 * Not in mkccl_sock: only this plugin's NCCL-compatible defaults need it. */
static unsigned net_socket_dev_vendor(const char* ifname) {
  char path[PATH_MAX];
  snprintf(path, sizeof(path), "/sys/class/net/%s/device/vendor", ifname);
  FILE* f = fopen(path, "r");
  if (!f) return 0;
  unsigned vendor = 0;
  if (fscanf(f, "%x", &vendor) != 1) vendor = 0;
  fclose(f);
  return vendor;
}

static void net_socket_dev_describe(net_socket_dev_t* d) {
  char path[PATH_MAX];
  d->pciPath = sock_iface_pci_path(d->name, path, sizeof(path)) == SOCK_OK ? strdup(path) : NULL;
  if (sock_iface_speed_mbps(d->name, &d->speed) != SOCK_OK) {
    NS_INFO(NCCL_NET, "%s: link speed unknown, assuming %d Mbps", d->name, NET_SOCKET_DEFAULT_SPEED);
    d->speed = NET_SOCKET_DEFAULT_SPEED;
  }
  d->vendor = net_socket_dev_vendor(d->name);
}

static ncclResult_t net_socket_devs_find(void) {
  const char* list = net_socket_param_NCCL_SOCKET_IFNAME();
  const char* familyText = net_socket_param_NCCL_SOCKET_FAMILY();
  int family;
  if (sock_family_parse(familyText, &family) != SOCK_OK)
    return NS_FAIL(ncclInvalidArgument, "%s=%s: %s", "NCCL_SOCKET_FAMILY", familyText, sock_error());
  sock_iface_t ifs[NET_SOCKET_MAX_DEVS];
  int n = 0;
  if (sock_ifaces_find(list, family, ifs, NET_SOCKET_MAX_DEVS, &n) != SOCK_OK || n == 0)
    return NS_FAIL(ncclSystemError, "no interface found (%s=\"%s\"): %s", "NCCL_SOCKET_IFNAME", list,
                   sock_error());
  char line[1024] = "";
  int cpus = mkccl_cpus_usable(); /* reads /proc and cgroup files: once, not per listen */
  for (int i = 0; i < n; i++) {
    net_socket_dev_t* d = &net_socket_devs[i];
    memset(d, 0, sizeof(*d));
    memcpy(d->name, ifs[i].name, sizeof(d->name)); /* same capacity, NUL-terminated */
    d->addr = ifs[i].addr;
    net_socket_dev_describe(d);
    d->cpus = cpus;
    char addr[SOCK_ADDR_STRLEN];
    size_t used = strlen(line);
    snprintf(line + used, sizeof(line) - used, " [%d]%s:%s", i, d->name,
             sock_addr_to_string(&d->addr, addr, sizeof(addr), 0));
  }
  NS_INFO(NCCL_INIT | NCCL_NET, "Using%s", line);
  net_socket_ndevs = n;
  return ncclSuccess;
}

ncclResult_t net_socket_devs_init(void) {
  ncclResult_t res = ncclSuccess;
  pthread_mutex_lock(&net_socket_devs_lock);
  if (net_socket_ndevs < 0) res = net_socket_devs_find();
  pthread_mutex_unlock(&net_socket_devs_lock);
  return res;
}

/* The table lives as long as the library: the core unloads a plugin it
 * does not keep (dlclose), so what the table holds is freed then. */
__attribute__((destructor)) static void net_socket_devs_free(void) {
  for (int i = 0; i < net_socket_ndevs; i++) {
    free(net_socket_devs[i].pciPath);
    net_socket_devs[i].pciPath = NULL;
  }
  net_socket_ndevs = -1;
}

int net_socket_devs_count(void) { return net_socket_ndevs < 0 ? 0 : net_socket_ndevs; }

const net_socket_dev_t* net_socket_dev_get(int dev) {
  if (dev < 0 || dev >= net_socket_devs_count()) {
    NS_WARN("device %d does not exist (%d devices)", dev, net_socket_devs_count());
    return NULL;
  }
  return &net_socket_devs[dev];
}
