/* The net adapters: the test plugin built for each NCCL net ABI v6..v12,
 * loaded through the loader (NCCL_NET_PLUGIN=<path>) in its own process,
 * used only through ncclNet_v12_t: properties with each version's defaults,
 * init once for versions without a context, a loopback send/recv, the int
 * size limits, the recv hint, vNICs, and the members a version lacks. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/log.h"
#include "check.h"
#include "plugin/net.h"
#include "ranks.h"

typedef struct {
  int initCalls;
  int finalizeCalls;
  int trafficClass;
  uint64_t commId;
  void* lastRecvHint;
  int lastRecvN;
  size_t lastRecvSizes[8];
  int isendCalls;
  size_t lastIsendSize;
  size_t lastRegMrSize;
  int lastVdevNdevs;
  int lastVdevDevs[8];
  uint32_t lastAttrProto;
} test_net_stats_t; /* as test_net_plugin.c exports it */

static test_net_stats_t* stats_of(const char* path) {
  void* h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  CHECK_MSG(h != NULL, "%s is not loaded", path);
  test_net_stats_t* s = dlsym(h, "testNetStats");
  CHECK(s != NULL);
  dlclose(h);
  return s;
}

static void check_props(int v, const ncclNet_v12_t* net) {
  ncclNetProperties_v12_t p;
  memset(&p, 0xab, sizeof(p));
  CHECK_NCCL(net->getProperties(1, &p));
  CHECK(strcmp(p.name, "tn1") == 0);
  CHECK_EQ_INT(p.guid, 0x1235);
  CHECK_EQ_INT(p.ptrSupport, NCCL_PTR_HOST);
  CHECK_EQ_INT(p.speed, 12346);
  CHECK_EQ_INT(p.port, 1);
  CHECK(p.latency == 1.5f);
  CHECK_EQ_INT(p.maxComms, 99);
  CHECK_EQ_INT(p.maxRecvs, 4);
  CHECK_EQ_INT(p.netDeviceType, NCCL_NET_DEVICE_HOST);
  CHECK_EQ_INT(p.netDeviceVersion, NCCL_NET_DEVICE_INVALID_VERSION);
  CHECK_EQ_INT(p.regIsGlobal, v >= 8 ? 1 : 0);
  CHECK_EQ_INT(p.forceFlush, v >= 9 ? 1 : 0);
  CHECK_EQ_INT(p.vProps.ndevs, 1);
  CHECK_EQ_INT(p.vProps.devs[0], 1);
  CHECK_EQ_INT(p.maxP2pBytes, v >= 9 ? 123456789 : MAX_NET_SIZE);
  CHECK_EQ_INT(p.maxCollBytes, v >= 9 ? 987654321 : MAX_COLLNET_SIZE);
  CHECK_EQ_INT(p.maxMultiRequestSize, v >= 11 ? 3 : 1);
  CHECK_EQ_INT(p.railId, v >= 12 ? 5 : NCCL_NET_ID_UNDEF);
  CHECK_EQ_INT(p.planeId, v >= 12 ? 6 : NCCL_NET_ID_UNDEF);
  CHECK(net->getProperties(7, &p) == ncclInvalidArgument); /* the plugin's own error passes through */
}

static void check_members(int v, const ncclNet_v12_t* net) {
  CHECK(net->regMrDmaBuf != NULL);
  CHECK((net->getDeviceMr != NULL) == (v >= 7));
  CHECK((net->irecvConsumed != NULL) == (v >= 7));
  CHECK((net->makeVDevice != NULL) == (v >= 9));
  CHECK((net->setNetAttr != NULL) == (v >= 11));
  CHECK(net->finalize != NULL);
  if (v >= 7) {
    void* dptr = NULL;
    CHECK_NCCL(net->getDeviceMr(NULL, NULL, &dptr));
    CHECK(dptr == (void*)0xd1);
  }
}

/* Comms open their own ctx: the plugin's init runs once below v11. */
static void check_init(int v, const ncclNet_v12_t* net, test_net_stats_t* st, void** ctx) {
  CHECK_EQ_INT(st->initCalls, 1); /* the loader's own */
  ncclNetCommConfig_v12_t config = {5};
  void* other = NULL;
  CHECK_NCCL(net->init(ctx, 77, &config, log_write, NULL));
  CHECK_NCCL(net->init(&other, 78, &config, log_write, NULL));
  CHECK(*ctx != NULL && other != NULL && *ctx != other);
  CHECK_EQ_INT(st->initCalls, v >= 11 ? 3 : 1);
  if (v >= 11) {
    CHECK_EQ_INT(st->commId, 78);
    CHECK_EQ_INT(st->trafficClass, 5);
  }
  CHECK_NCCL(net->finalize(other));
  CHECK_EQ_INT(st->finalizeCalls, v >= 11 ? 1 : 0);
}

static void wait_done(const ncclNet_v12_t* net, void* req, int* size) {
  int done = 0;
  for (int i = 0; i < 1000 && !done; i++) CHECK_NCCL(net->test(req, &done, size));
  CHECK(done);
}

static void check_loopback(int v, const ncclNet_v12_t* net, test_net_stats_t* st, void* ctx) {
  char handle[NCCL_NET_HANDLE_MAXSIZE];
  void *lc = NULL, *sc = NULL, *rc = NULL, *mh = NULL;
  ncclNetDeviceHandle_v12_t* dev = NULL;
  CHECK_NCCL(net->listen(ctx, 0, handle, &lc));
  CHECK_NCCL(net->connect(ctx, 0, handle, &sc, &dev));
  CHECK_NCCL(net->accept(lc, &rc, &dev));
  CHECK(sc && rc);
  if (v == 10) CHECK_EQ_INT(st->trafficClass, 5); /* the ctx's config, at connect */
  char out[16] = "hello, net", in[2][32];
  CHECK_NCCL(net->regMr(sc, out, sizeof(out), NCCL_PTR_HOST, &mh));
  void* sreq = NULL;
  CHECK_NCCL(net->isend(sc, out, 11, 3, mh, NULL, &sreq));
  CHECK(sreq != NULL);
  CHECK_EQ_INT(st->lastIsendSize, 11);
  void* rbufs[2] = {in[0], in[1]};
  size_t rsizes[2] = {32, 20};
  int tags[2] = {3, 4};
  void* mhs[2] = {mh, mh};
  void* rreq = (void*)NCCL_NET_OPTIONAL_RECV_COMPLETION;
  CHECK_NCCL(net->irecv(rc, 2, rbufs, rsizes, tags, mhs, NULL, &rreq));
  /* Old versions never see the hint they do not know. */
  CHECK(st->lastRecvHint == (v <= 8 ? NULL : (void*)NCCL_NET_OPTIONAL_RECV_COMPLETION));
  CHECK_EQ_INT(st->lastRecvN, 2);
  CHECK_EQ_INT(st->lastRecvSizes[0], 32);
  CHECK_EQ_INT(st->lastRecvSizes[1], 20);
  void* sreq2 = NULL;
  CHECK_NCCL(net->isend(sc, "abc", 4, 4, mh, NULL, &sreq2));
  int got[2] = {-1, -1};
  wait_done(net, rreq, got);
  CHECK_EQ_INT(got[0], 11);
  CHECK_EQ_INT(got[1], 4);
  CHECK(strcmp(in[0], "hello, net") == 0 && strcmp(in[1], "abc") == 0);
  int sent = 0;
  wait_done(net, sreq, &sent);
  CHECK_EQ_INT(sent, 11);
  wait_done(net, sreq2, &sent);

  /* Sizes an int-sized ABI cannot take fail before reaching the plugin. */
  int calls = st->isendCalls;
  size_t big = (size_t)MAX_NET_SIZE + 1;
  void* breq = NULL;
  ncclResult_t res = net->isend(sc, out, big, 5, mh, NULL, &breq);
  if (v <= 8) {
    CHECK_EQ_INT(res, ncclInternalError);
    CHECK_EQ_INT(st->isendCalls, calls);
    char want[128];
    snprintf(want, sizeof(want), "(ABI v%d): isend of 1073741825 bytes is over its limit of 1073741824", v);
    CHECK_STR_CONTAINS(err_last_get(), want);
    size_t bigs[1] = {big};
    void* r = NULL;
    CHECK_EQ_INT(net->irecv(rc, 1, rbufs, bigs, tags, mhs, NULL, &r), ncclInternalError);
  } else {
    CHECK_NCCL(res); /* size_t all the way: the plugin sees it whole */
    CHECK_EQ_INT(st->lastIsendSize, big);
  }
  size_t huge = (size_t)0x80000000u;
  res = net->regMr(sc, out, huge, NCCL_PTR_HOST, &mh);
  if (v <= 7) {
    CHECK_EQ_INT(res, ncclInternalError);
  } else {
    CHECK_NCCL(res);
    CHECK_EQ_INT(st->lastRegMrSize, huge);
  }
  CHECK_NCCL(net->deregMr(sc, mh));
  CHECK_NCCL(net->closeSend(sc));
  CHECK_NCCL(net->closeRecv(rc));
  CHECK_NCCL(net->closeListen(lc));
}

static void check_vnic_attr(int v, const ncclNet_v12_t* net, test_net_stats_t* st, void* ctx) {
  if (v >= 9) {
    ncclNetVDeviceProps_v12_t props = {2, {1, 0}};
    int d = -1;
    CHECK_NCCL(net->makeVDevice(&d, &props));
    CHECK_EQ_INT(d, 2);
    CHECK_EQ_INT(st->lastVdevNdevs, 2);
    CHECK_EQ_INT(st->lastVdevDevs[0], 1);
    ncclNetVDeviceProps_v12_t five = {5, {0, 1, 0, 1, 0}};
    ncclResult_t res = net->makeVDevice(&d, &five);
    if (v <= 11) {
      CHECK_EQ_INT(res, ncclInvalidArgument); /* 4 devices per vNIC before v12 */
      char want[128];
      snprintf(want, sizeof(want), "(ABI v%d): a virtual NIC merges at most 4 devices, not 5", v);
      CHECK_STR_CONTAINS(err_last_get(), want);
    } else {
      CHECK_NCCL(res);
      CHECK_EQ_INT(st->lastVdevNdevs, 5);
    }
  }
  if (v >= 11) {
    ncclNetAttr_v12_t attr = NCCL_NET_ATTR_INIT;
    attr.proto = 2;
    CHECK_NCCL(net->setNetAttr(ctx, &attr));
    CHECK_EQ_INT(st->lastAttrProto, 2);
  }
}

static int version_child(int rank, int n, void* arg) {
  (void)rank, (void)n;
  int v = *(int*)arg;
  char path[512];
  snprintf(path, sizeof(path), "%s/libnccl-net-testv%d.so", TEST_PLUGIN_DIR, v);
  setenv("NCCL_NET_PLUGIN", path, 1);
  unsetenv("NCCL_NET");
  unsetenv("MKCCL_MANIFEST");
  plugin_net_t* pn = NULL;
  CHECK_NCCL(plugin_net_acquire(NULL, &pn));
  CHECK_EQ_INT(pn->abi, v);
  CHECK_EQ_INT(pn->ndev, 2);
  CHECK_EQ_INT(pn->maxRequests, v == 6 ? NCCL_NET_MAX_REQUESTS_V6 : NCCL_NET_MAX_REQUESTS);
  char name[32];
  snprintf(name, sizeof(name), "testnet-v%d", v);
  CHECK(strcmp(pn->name, name) == 0);
  CHECK(strcmp(pn->net->name, name) == 0);
  CHECK(strcmp(pn->path, path) == 0);
  const ncclNet_v12_t* net = pn->net;
  test_net_stats_t* st = stats_of(path);
  int ndev = 0;
  CHECK_NCCL(net->devices(&ndev));
  CHECK_EQ_INT(ndev, 2);
  check_props(v, net);
  check_members(v, net);
  void* ctx = NULL;
  check_init(v, net, st, &ctx);
  check_loopback(v, net, st, ctx);
  check_vnic_attr(v, net, st, ctx);
  CHECK_NCCL(net->finalize(ctx));
  CHECK_EQ_INT(st->finalizeCalls, v >= 11 ? 2 : 0);
  CHECK_NCCL(plugin_net_release(pn));
  /* The last release unloads it. */
  CHECK(dlopen(path, RTLD_NOW | RTLD_NOLOAD) == NULL);
  return 0;
}

int main(void) {
  for (int v = 6; v <= 12; v++) CHECK_MSG(ranks_run(1, version_child, &v, 60) == 0, "ABI v%d", v);
  return 0;
}
