/* The net-device plugins, loaded once per process: every candidate of the
 * manifests is checked (size, ABI, type, and the exact version of its type)
 * before any of its code runs; the first acceptable one of each type is
 * kept, later ones of a taken type are not. Each candidate gets its
 * NETDEV/Plugin line from the loader. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base/err.h"
#include "netdev/netdev.h"
#include "plugin/loader.h"

#define NETDEV_TYPES 2 /* HOST, UNPACK */

static pthread_mutex_t netdev_lock = PTHREAD_MUTEX_INITIALIZER;
static int netdev_loaded;
static plugin_lib_t** netdev_libs;
static int netdev_nlibs;
static const mkcclNetDevice_v1* netdev_by_type[NETDEV_TYPES];

static const char* netdev_type_name(int type) {
  return type == NCCL_NET_DEVICE_HOST ? "HOST" : type == NCCL_NET_DEVICE_UNPACK ? "UNPACK" : "unknown";
}

void netdev_plugin_check(const mkcclNetDevice_v1* d, char* why, size_t size) {
  why[0] = '\0';
  if (d->size < sizeof(mkcclNetDevice_v1) || d->abiVersion != MKCCL_NET_DEVICE_ABI_V1 || !d->name ||
      !d->handleAlloc || !d->handleFree || !d->needsProxyProgress)
    snprintf(why, size, "malformed mkcclNetDevicePlugin_v1 (size %zu, abi %d)", d->size, d->abiVersion);
  else if (d->type != NCCL_NET_DEVICE_HOST && d->type != NCCL_NET_DEVICE_UNPACK)
    snprintf(why, size, "unknown net device type %d", (int)d->type);
  else if (d->type == NCCL_NET_DEVICE_UNPACK && d->version != NCCL_NET_DEVICE_UNPACK_VERSION)
    snprintf(why, size, "reports UNPACK version 0x%x, this build takes exactly 0x%x: refused, HOST is used instead",
             d->version, NCCL_NET_DEVICE_UNPACK_VERSION);
  else if (d->type == NCCL_NET_DEVICE_UNPACK && !d->hostUnpack)
    snprintf(why, size, "UNPACK without a hostUnpack");
}

/* Before the plugin runs any code: its table is data. */
static int netdev_filter(const plugin_lib_t* lib, void* arg, plugin_candidate_t* c) {
  (void)arg;
  const mkcclNetDevice_v1* d = lib->symbol;
  char why[PLUGIN_TEXT_MAX];
  netdev_plugin_check(d, why, sizeof(why));
  if (why[0]) {
    c->outcome = PLUGIN_REFUSED;
    snprintf(c->reason, sizeof(c->reason), "%s", why);
    return -1;
  }
  if (netdev_by_type[d->type]) {
    c->outcome = PLUGIN_NOT_TRIED;
    snprintf(c->reason, sizeof(c->reason), "type %s is already provided by '%s'", netdev_type_name(d->type),
             netdev_by_type[d->type]->name);
    return -1;
  }
  return 0;
}

static int netdev_start(plugin_lib_t* lib, void* arg, plugin_candidate_t* c) {
  (void)arg;
  const mkcclNetDevice_v1* d = lib->symbol;
  netdev_by_type[d->type] = d;
  const mkcclNetDeviceCode_v1* code = d->deviceCode ? d->deviceCode() : NULL;
  snprintf(c->reason, sizeof(c->reason), "type %s version 0x%x, %s", netdev_type_name(d->type), d->version,
           code && code->ltoir ? "device code present" : "no device code");
  return 0;
}

ncclResult_t netdev_plugins_load(void) {
  ncclResult_t res = ncclSuccess;
  pthread_mutex_lock(&netdev_lock);
  if (!netdev_loaded) {
    plugin_select_t how = {netdev_filter, netdev_start, NULL, 1};
    res = plugin_select(PLUGIN_KIND_NET_DEVICE, &how, &netdev_libs, &netdev_nlibs);
    if (res == ncclSuccess) netdev_loaded = 1;
  }
  pthread_mutex_unlock(&netdev_lock);
  return res;
}

const mkcclNetDevice_v1* netdev_plugin_for(ncclNetDeviceType type) {
  if ((int)type < 0 || (int)type >= NETDEV_TYPES) return NULL;
  pthread_mutex_lock(&netdev_lock);
  const mkcclNetDevice_v1* d = netdev_by_type[type];
  pthread_mutex_unlock(&netdev_lock);
  return d;
}
