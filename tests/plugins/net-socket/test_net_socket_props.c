/* Properties through every exported table, the mkccl plugin info, and the
 * trivial entry points (regMr, iflush). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "mkccl_plugin_v1.h"
#include "ns_harness.h"

static void check_props(int version, const ncclNetProperties_v12_t* p, int dev) {
  CHECK(p->name != NULL && p->name[0] != '\0');
  CHECK(p->pciPath == NULL || strncmp(p->pciPath, "/sys/", 5) == 0);
  CHECK_EQ_INT(p->ptrSupport, NCCL_PTR_HOST);
  CHECK(p->speed > 0);
  CHECK(p->maxComms > 0);
  CHECK(p->maxRecvs > 1);
  CHECK(p->latency >= 0);
  if (version >= 7) {
    CHECK_EQ_INT(p->netDeviceType, NCCL_NET_DEVICE_HOST);
    CHECK_EQ_INT(p->netDeviceVersion, NCCL_NET_DEVICE_INVALID_VERSION);
  }
  if (version >= 8) CHECK_EQ_INT(p->regIsGlobal, 1);
  if (version >= 9) {
    CHECK(p->maxP2pBytes > 0 && p->maxP2pBytes <= (size_t)NCCL_MAX_NET_SIZE_BYTES);
    CHECK(p->maxCollBytes > 0 && p->maxCollBytes <= (size_t)NCCL_MAX_NET_SIZE_BYTES);
    CHECK_EQ_INT(p->vProps.ndevs, 1);
    CHECK_EQ_INT(p->vProps.devs[0], dev);
  }
  if (version >= 11) CHECK(p->maxMultiRequestSize >= 1);
  if (version == 12) {
    CHECK_EQ_INT(p->railId, NCCL_NET_ID_UNDEF);
    CHECK_EQ_INT(p->planeId, NCCL_NET_ID_UNDEF);
  }
}

static void test_version(int version) {
  net_any_t n;
  ns_load(&n, version);
  CHECK_STR_CONTAINS(net_any_name(&n), "Socket");
  int ndev = 0;
  CHECK_EQ_INT(net_any_devices(&n, &ndev), ncclSuccess);
  CHECK(ndev >= 1);
  for (int d = 0; d < ndev; d++) {
    ncclNetProperties_v12_t p;
    CHECK_EQ_INT(net_any_props(&n, d, &p), ncclSuccess);
    check_props(version, &p, d);
    if (strcmp(p.name, "lo") == 0) CHECK(p.pciPath == NULL); /* virtual: no PCI device */
  }
  ncclNetProperties_v12_t p;
  CHECK(net_any_props(&n, ndev, &p) != ncclSuccess); /* no such device */

  /* Host memory registers; CUDA memory is refused; nothing to flush. */
  void *sc, *rc;
  ns_pair(&n, 0, &sc, &rc);
  char buf[64];
  void* mh = NULL;
  CHECK_EQ_INT(net_any_reg_mr(&n, sc, buf, sizeof(buf), NCCL_PTR_HOST, &mh), ncclSuccess);
  CHECK(mh != NULL);
  CHECK_EQ_INT(net_any_dereg_mr(&n, sc, mh), ncclSuccess);
  void* cudaMh = NULL;
  CHECK(net_any_reg_mr(&n, rc, buf, sizeof(buf), NCCL_PTR_CUDA, &cudaMh) != ncclSuccess);
  CHECK(cudaMh == NULL);
  void* data = buf;
  int size = (int)sizeof(buf);
  void* req = (void*)&n;
  CHECK_EQ_INT(net_any_iflush(&n, rc, 1, &data, &size, &mh, &req), ncclSuccess);
  CHECK(req == NULL);
  CHECK_EQ_INT(net_any_close_send(&n, sc), ncclSuccess);
  CHECK_EQ_INT(net_any_close_recv(&n, rc), ncclSuccess);
  net_any_close(&n);
}

/* mkcclPluginInfo_v1: name and the parameters mkccl lists. */
static void test_info(void) {
  void* dl = dlopen(NS_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
  CHECK(dl != NULL);
  const mkcclPluginInfo_v1_t* info = dlsym(dl, MKCCL_PLUGIN_INFO_SYMBOL);
  CHECK(info != NULL);
  CHECK_EQ_INT(info->size, sizeof(mkcclPluginInfo_v1_t));
  CHECK_EQ_INT(info->abiVersion, MKCCL_PLUGIN_ABI_VERSION);
  CHECK(strcmp(info->name, "net-socket") == 0);
  CHECK(info->bind != NULL);
  const char* want[] = {"NCCL_SOCKET_IFNAME",       "NCCL_SOCKET_FAMILY", "NCCL_NSOCKS_PERTHREAD",
                        "NCCL_SOCKET_NTHREADS",     "NCCL_SOCKET_MIN_TASKSIZE", "NCCL_SOCKET_INLINE",
                        "MKCCL_SOCKET_USER_TIMEOUT_MS"};
  for (unsigned w = 0; w < sizeof(want) / sizeof(want[0]); w++) {
    int found = 0;
    for (int i = 0; i < info->nParams; i++)
      if (strcmp(info->params[i].name, want[w]) == 0) {
        found = 1;
        CHECK(info->params[i].defaultValue != NULL && info->params[i].help != NULL);
      }
    CHECK_MSG(found, "parameter %s not declared", want[w]);
  }
  /* Only the ABI symbols leave the library: neither our internals nor the
   * socket library linked into it. */
  CHECK(dlsym(dl, "net_socket_isend") == NULL);
  CHECK(dlsym(dl, "net_socket_param_int") == NULL);
  CHECK(dlsym(dl, "sock_listen") == NULL);
  CHECK(dlsym(dl, "ncclNetPlugin_v11") != NULL);
  CHECK(dlsym(dl, "ncclNetPlugin_v12") != NULL);
  dlclose(dl);
}

/* Under mkccl the core answers parameters: the environment is not read. */
static int ns_param_int(const char* name, int64_t* value) {
  if (strcmp(name, "NCCL_SOCKET_NTHREADS") == 0) {
    *value = 3;
    return 0;
  }
  return -1;
}
static int ns_param_str(const char* name, const char** value) {
  if (strcmp(name, "NCCL_SOCKET_IFNAME") == 0) {
    *value = "lo";
    return 0;
  }
  return -1;
}

static int ns_infos;
static void ns_count_logger(ncclDebugLogLevel level, unsigned long flags, const char* file, int line,
                            const char* fmt, ...) {
  (void)flags;
  (void)file;
  (void)line;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  if (level == NCCL_LOG_INFO && strstr(msg, "3 helper threads, 3 data sockets")) ns_infos++;
}

static void test_bound(void) {
  setenv("NCCL_SOCKET_IFNAME", "no-such-interface", 1); /* must be ignored once bound */
  void* dl = dlopen(NS_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
  CHECK(dl != NULL);
  const mkcclPluginInfo_v1_t* info = dlsym(dl, MKCCL_PLUGIN_INFO_SYMBOL);
  mkcclServices_v1 services = {sizeof(services), ns_count_logger, ns_param_int, ns_param_str};
  info->bind(&services);
  const ncclNet_v12_t* net = dlsym(dl, "ncclNetPlugin_v12");
  void* ctx = NULL;
  ncclNetCommConfig_v12_t config = {NCCL_NET_TRAFFIC_CLASS_UNDEF};
  CHECK_EQ_INT(net->init(&ctx, 1, &config, ns_count_logger, NULL), ncclSuccess);
  ncclNetProperties_v12_t p;
  CHECK_EQ_INT(net->getProperties(0, &p), ncclSuccess);
  CHECK(strcmp(p.name, "lo") == 0);
  char handle[NCCL_NET_HANDLE_MAXSIZE];
  void* lc = NULL;
  CHECK_EQ_INT(net->listen(ctx, 0, handle, &lc), ncclSuccess);
  CHECK_EQ_INT(ns_infos, 1); /* the core's values, through the bound logger */
  CHECK_EQ_INT(net->closeListen(lc), ncclSuccess);
  CHECK_EQ_INT(net->finalize(ctx), ncclSuccess);
  dlclose(dl);
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "bound") == 0) {
    test_bound();
  } else {
    setenv("NCCL_SOCKET_IFNAME", "lo", 1);
    for (int v = 6; v <= 12; v++) test_version(v);
    test_info();
  }
  printf("net-socket properties: ok\n");
  return 0;
}
