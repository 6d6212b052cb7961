/* net-example: its parameter, its device, init, and the tables it exports.
 *
 * Exported symbols (everything else is hidden, -fvisibility=hidden):
 * - ncclNetPlugin_v12: the ABI mkccl uses internally;
 * - ncclNetPlugin_v11: the newest one NCCL 2.28 loads, so the same library
 *   works there (mkccl takes the newest a plugin exports);
 * - mkcclPluginInfo_v1: mkccl's plugin info, with the parameter table, so
 *   that `mkccl-info --params` lists NET_EXAMPLE_IFNAME and a manifest entry
 *   may set it. NCCL ignores this symbol. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ifaddrs.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mkccl_plugin_params.h"
#include "net_example.h"

#define NX_EXPORT __attribute__((visibility("default")))
#define NX_DEFAULT_SPEED 10000 /* Mbps, when the kernel does not know the link's */

ncclDebugLogger_t net_example_logger;
nx_device_t net_example_dev;
int net_example_ndev;

/* ---- parameters: declared once, read through mkccl_plugin_params.h ----
 * Under mkccl the core answers (environment, manifest options, ...); hosted
 * by NCCL the header falls back to the environment, then to the default. */
static const mkcclParamDecl_v1 nx_params[] = {
    {"NET_EXAMPLE_IFNAME", MKCCL_PARAM_STRING, "",
     "Network interface net-example uses (default: the first one up that is not loopback, else lo)"},
};
#define NX_NPARAMS (int)(sizeof(nx_params) / sizeof(nx_params[0]))
static plugin_params_t nx_pp = {NULL, nx_params, NX_NPARAMS};

/* The core calls bind before init: from then on parameters come from it. */
static void nx_bind(const mkcclServices_v1* services) { nx_pp.services = services; }

NX_EXPORT const mkcclPluginInfo_v1_t mkcclPluginInfo_v1 = {
    sizeof(mkcclPluginInfo_v1_t), MKCCL_PLUGIN_ABI_VERSION, "net-example", "1.0", nx_params, NX_NPARAMS, nx_bind};

/* ---- the device ---- */
socklen_t nx_addr_len(const nx_addr_t* a) {
  return a->sa.sa_family == AF_INET6 ? (socklen_t)sizeof(a->sin6) : (socklen_t)sizeof(a->sin);
}

/* An interface address worth using, and how good: the named interface (or
 * any that is not loopback) beats loopback, IPv4 beats IPv6. -1: unusable. */
static int nx_addr_score(const struct ifaddrs* ifa, const char* want) {
  if (!ifa->ifa_addr || !(ifa->ifa_flags & IFF_UP)) return -1;
  int family = ifa->ifa_addr->sa_family;
  if (family != AF_INET && family != AF_INET6) return -1;
  if (family == AF_INET6 && IN6_IS_ADDR_LINKLOCAL(&((const struct sockaddr_in6*)ifa->ifa_addr)->sin6_addr))
    return -1; /* link-local addresses need a scope id on the peer's side */
  if (*want) return strcmp(ifa->ifa_name, want) == 0 ? 2 + (family == AF_INET) : -1;
  return (ifa->ifa_flags & IFF_LOOPBACK ? 0 : 2) + (family == AF_INET);
}

static int nx_read_speed(const char* ifname) {
  char path[PATH_MAX];
  int speed = -1;
  snprintf(path, sizeof(path), "/sys/class/net/%s/speed", ifname);
  FILE* f = fopen(path, "r");
  if (f) {
    if (fscanf(f, "%d", &speed) != 1) speed = -1;
    fclose(f);
  }
  return speed > 0 ? speed : NX_DEFAULT_SPEED;
}

static char* nx_read_pci_path(const char* ifname) {
  char path[PATH_MAX], real[PATH_MAX];
  snprintf(path, sizeof(path), "/sys/class/net/%s/device", ifname);
  return realpath(path, real) ? strdup(real) : NULL; /* virtual interfaces have none */
}

static ncclResult_t nx_find_device(void) {
  const char* want = plugin_param_text(&nx_pp, "NET_EXAMPLE_IFNAME");
  struct ifaddrs* list = NULL;
  if (getifaddrs(&list) != 0) {
    NX_WARN("NET/example: getifaddrs failed");
    return ncclSystemError;
  }
  const struct ifaddrs* best = NULL;
  int bestScore = -1;
  for (const struct ifaddrs* ifa = list; ifa; ifa = ifa->ifa_next) {
    int score = nx_addr_score(ifa, want);
    if (score > bestScore) best = ifa, bestScore = score;
  }
  if (best) {
    nx_device_t* d = &net_example_dev;
    memset(d, 0, sizeof(*d));
    snprintf(d->ifname, sizeof(d->ifname), "%s", best->ifa_name);
    memcpy(&d->addr, best->ifa_addr, best->ifa_addr->sa_family == AF_INET6 ? sizeof(d->addr.sin6) : sizeof(d->addr.sin));
    d->speed = nx_read_speed(d->ifname);
    d->pciPath = nx_read_pci_path(d->ifname);
    net_example_ndev = 1;
    NX_INFO("NET/example: using interface %s (%s, %d Mbps)", d->ifname, best->ifa_addr->sa_family == AF_INET6 ? "IPv6" : "IPv4",
            d->speed);
  } else {
    /* No device: the loader moves on to the next candidate (not an error). */
    NX_INFO("NET/example: no usable interface%s%s", *want ? " named " : "", want);
  }
  freeifaddrs(list);
  return ncclSuccess;
}

/* ---- init / finalize ----
 * init runs once per communicator (v11+); the device is found by the first
 * and kept until the last finalize. This plugin keeps no state per
 * communicator, so every ctx is the same token. */
static pthread_mutex_t nx_lock = PTHREAD_MUTEX_INITIALIZER;
static int nx_refs;
static int nx_ctx_token;

static ncclResult_t nx_init(void** ctx, uint64_t commId, ncclNetCommConfig_v12_t* config, ncclDebugLogger_t log,
                            ncclProfilerCallback_t prof) {
  (void)commId, (void)config, (void)prof; /* no traffic classes, no profiler events of our own */
  ncclResult_t res = ncclSuccess;
  pthread_mutex_lock(&nx_lock);
  if (log) net_example_logger = log;
  if (nx_refs == 0) res = nx_find_device();
  if (res == ncclSuccess) {
    nx_refs++;
    *ctx = &nx_ctx_token;
  }
  pthread_mutex_unlock(&nx_lock);
  return res;
}

static ncclResult_t nx_finalize(void* ctx) {
  (void)ctx;
  pthread_mutex_lock(&nx_lock);
  if (nx_refs > 0 && --nx_refs == 0) {
    free(net_example_dev.pciPath);
    memset(&net_example_dev, 0, sizeof(net_example_dev));
    net_example_ndev = 0;
  }
  pthread_mutex_unlock(&nx_lock);
  return ncclSuccess;
}

static ncclResult_t nx_devices(int* ndev) {
  *ndev = net_example_ndev;
  return ncclSuccess;
}

static ncclResult_t nx_get_properties(int dev, ncclNetProperties_v12_t* props) {
  if (dev < 0 || dev >= net_example_ndev || !props) {
    NX_WARN("NET/example: getProperties of device %d, there are %d", dev, net_example_ndev);
    return ncclInvalidArgument;
  }
  const nx_device_t* d = &net_example_dev;
  memset(props, 0, sizeof(*props));
  props->name = (char*)d->ifname;
  props->pciPath = d->pciPath;
  props->guid = (uint64_t)dev;
  props->ptrSupport = NCCL_PTR_HOST; /* no GPU memory: the core stages through host buffers */
  props->regIsGlobal = 0;
  props->forceFlush = 0;
  props->speed = d->speed;
  props->port = 0;
  props->latency = 0;
  props->maxComms = 65536;
  props->maxRecvs = 1; /* one buffer per irecv */
  props->netDeviceType = NCCL_NET_DEVICE_HOST;
  props->netDeviceVersion = NCCL_NET_DEVICE_INVALID_VERSION;
  props->vProps.ndevs = 1; /* a physical device is a virtual device of itself */
  props->vProps.devs[0] = dev;
  props->maxP2pBytes = MAX_NET_SIZE;     /* 1 GiB: test() reports sizes as int */
  props->maxCollBytes = MAX_COLLNET_SIZE; /* no collnet: unused */
  props->maxMultiRequestSize = 1;
  props->railId = NCCL_NET_ID_UNDEF;
  props->planeId = NCCL_NET_ID_UNDEF;
  return ncclSuccess;
}

/* ---- v11 ----
 * v11 differs from v12 in its config, property and vdevice types; the
 * calls are the same. Two small wrappers cover it. */
static ncclResult_t nx_init_v11(void** ctx, uint64_t commId, ncclNetCommConfig_v11_t* config, ncclDebugLogger_t log,
                                ncclProfilerCallback_t prof) {
  (void)config; /* ignored, as v12's */
  return nx_init(ctx, commId, NULL, log, prof);
}

/* v11's properties: v12's without railId/planeId and with a smaller vProps. */
static ncclResult_t nx_get_properties_v11(int dev, ncclNetProperties_v11_t* props) {
  ncclNetProperties_v12_t p;
  ncclResult_t res = nx_get_properties(dev, &p);
  if (res != ncclSuccess) return res;
  memset(props, 0, sizeof(*props));
  props->name = p.name;
  props->pciPath = p.pciPath;
  props->guid = p.guid;
  props->ptrSupport = p.ptrSupport;
  props->regIsGlobal = p.regIsGlobal;
  props->forceFlush = p.forceFlush;
  props->speed = p.speed;
  props->port = p.port;
  props->latency = p.latency;
  props->maxComms = p.maxComms;
  props->maxRecvs = p.maxRecvs;
  props->netDeviceType = p.netDeviceType;
  props->netDeviceVersion = p.netDeviceVersion;
  props->vProps.ndevs = p.vProps.ndevs;
  props->vProps.devs[0] = p.vProps.devs[0];
  props->maxP2pBytes = p.maxP2pBytes;
  props->maxCollBytes = p.maxCollBytes;
  props->maxMultiRequestSize = p.maxMultiRequestSize;
  return ncclSuccess;
}

/* ---- the tables ----
 * NULL entries are optional calls this plugin does not need: getDeviceMr and
 * irecvConsumed (device offload), makeVDevice (NIC fusion), setNetAttr
 * (traffic hints). */
NX_EXPORT const ncclNet_v12_t ncclNetPlugin_v12 = {
    .name = "net-example",
    .init = nx_init,
    .devices = nx_devices,
    .getProperties = nx_get_properties,
    .listen = net_example_listen,
    .connect = net_example_connect,
    .accept = net_example_accept,
    .regMr = net_example_reg_mr,
    .regMrDmaBuf = net_example_reg_mr_dmabuf,
    .deregMr = net_example_dereg_mr,
    .isend = net_example_isend,
    .irecv = net_example_irecv,
    .iflush = net_example_iflush,
    .test = net_example_test,
    .closeSend = net_example_close_send,
    .closeRecv = net_example_close_recv,
    .closeListen = net_example_close_listen,
    .getDeviceMr = NULL,
    .irecvConsumed = NULL,
    .makeVDevice = NULL,
    .finalize = nx_finalize,
    .setNetAttr = NULL,
};

NX_EXPORT const ncclNet_v11_t ncclNetPlugin_v11 = {
    .name = "net-example",
    .init = nx_init_v11,
    .devices = nx_devices,
    .getProperties = nx_get_properties_v11,
    .listen = net_example_listen,
    .connect = net_example_connect,
    .accept = net_example_accept,
    .regMr = net_example_reg_mr,
    .regMrDmaBuf = net_example_reg_mr_dmabuf,
    .deregMr = net_example_dereg_mr,
    .isend = net_example_isend,
    .irecv = net_example_irecv,
    .iflush = net_example_iflush,
    .test = net_example_test,
    .closeSend = net_example_close_send,
    .closeRecv = net_example_close_recv,
    .closeListen = net_example_close_listen,
    .getDeviceMr = NULL,
    .irecvConsumed = NULL,
    .makeVDevice = NULL,
    .finalize = nx_finalize,
    .setNetAttr = NULL,
};
