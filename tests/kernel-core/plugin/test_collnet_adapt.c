/* The collnet adapters: the test collnet plugin built for each NCCL collnet
 * ABI v6..v12, loaded through the loader (NCCL_NET_PLUGIN=<path>,
 * NCCL_COLLNET_ENABLE=1) in its own process and used only through
 * ncclCollNet_v12_t: properties with each version's defaults, init once for
 * versions without a context, listen/connect, regMr, an iallreduce polled to
 * completion, iallgather/ireducescatter parts, the int limits, vNICs and the
 * members a version lacks. Then, with NCCL_COLLNET_ENABLE unset, nothing is
 * loaded and the candidate says why. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/log.h"
#include "check.h"
#include "plugin/collnet.h"
#include "ranks.h"

typedef struct {
  int initCalls;
  int finalizeCalls;
  uint64_t commId;
  void* listenCtx;
  int listenDev;
  int connectNranks, connectRank;
  int connectHandleOk;
  size_t lastRegMrSize;
  size_t lastCount;
  int lastDataType, lastRedOp;
  void* lastSendMhandle;
  void* lastRecvMhandle;
  int iallreduceCalls;
  int lastParts;
  size_t lastPartSize[4];
  void* lastPartAddr[4];
  size_t lastBytesPerRank, lastWindowOffset, lastWindowBytes;
  int testCalls;
  int closeCollCalls, closeListenCalls;
  int lastVdevNdevs;
  int lastVdevDevs[8];
} test_collnet_stats_t; /* as test_collnet_plugin.c exports it */

static test_collnet_stats_t* stats_of(const char* path) {
  void* h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  CHECK_MSG(h != NULL, "%s is not loaded", path);
  test_collnet_stats_t* s = dlsym(h, "testCollNetStats");
  CHECK(s != NULL);
  dlclose(h);
  return s;
}

static void check_props(int v, const ncclCollNet_v12_t* cn) {
  ncclNetProperties_v12_t p;
  memset(&p, 0xab, sizeof(p));
  CHECK_NCCL(cn->getProperties(1, &p));
  CHECK(strcmp(p.name, "tc1") == 0);
  CHECK_EQ_INT(p.guid, 0x4322);
  CHECK_EQ_INT(p.ptrSupport, NCCL_PTR_HOST);
  CHECK_EQ_INT(p.speed, 2001);
  CHECK_EQ_INT(p.port, 1);
  CHECK(p.latency == 2.5f);
  CHECK_EQ_INT(p.maxComms, 7);
  CHECK_EQ_INT(p.maxRecvs, 1);
  CHECK_EQ_INT(p.netDeviceType, NCCL_NET_DEVICE_HOST);
  CHECK_EQ_INT(p.netDeviceVersion, NCCL_NET_DEVICE_INVALID_VERSION);
  CHECK_EQ_INT(p.regIsGlobal, v >= 8 ? 1 : 0);
  CHECK_EQ_INT(p.forceFlush, v >= 9 ? 1 : 0);
  CHECK_EQ_INT(p.vProps.ndevs, 1);
  CHECK_EQ_INT(p.vProps.devs[0], 1);
  CHECK_EQ_INT(p.maxP2pBytes, v >= 9 ? 1111 : MAX_NET_SIZE);
  CHECK_EQ_INT(p.maxCollBytes, v >= 9 ? 2222 : MAX_COLLNET_SIZE);
  CHECK_EQ_INT(p.maxMultiRequestSize, v >= 11 ? 3 : 1);
  CHECK_EQ_INT(p.railId, v >= 12 ? 4 : NCCL_NET_ID_UNDEF);
  CHECK_EQ_INT(p.planeId, v >= 12 ? 5 : NCCL_NET_ID_UNDEF);
  CHECK(cn->getProperties(2, &p) == ncclInvalidArgument); /* the plugin's own error passes through */
}

static void check_members(int v, const ncclCollNet_v12_t* cn) {
  CHECK(cn->init && cn->devices && cn->getProperties && cn->listen && cn->connect && cn->reduceSupport);
  CHECK(cn->regMr && cn->regMrDmaBuf && cn->deregMr && cn->iallreduce && cn->iflush && cn->test);
  CHECK(cn->closeColl && cn->closeListen && cn->finalize);
  CHECK((cn->iallgather != NULL) == (v >= 8));
  CHECK((cn->ireducescatter != NULL) == (v >= 8));
  CHECK((cn->makeVDevice != NULL) == (v >= 9));
  int supported = -1;
  CHECK_NCCL(cn->reduceSupport(ncclFloat32, ncclSum, &supported));
  CHECK_EQ_INT(supported, 1);
  CHECK_NCCL(cn->reduceSupport(ncclInt8, ncclMax, &supported));
  CHECK_EQ_INT(supported, 0);
}

/* Users open their own ctx: the plugin's init runs once below v11. */
static void check_init(int v, const ncclCollNet_v12_t* cn, test_collnet_stats_t* st, void** ctx) {
  CHECK_EQ_INT(st->initCalls, 1); /* the loader's own */
  void* other = NULL;
  CHECK_NCCL(cn->init(ctx, 77, log_write));
  CHECK_NCCL(cn->init(&other, 78, log_write));
  CHECK(*ctx != NULL && other != NULL);
  if (v < 11) CHECK(*ctx != other); /* the adapter's own ctx per init */
  CHECK_EQ_INT(st->initCalls, v >= 11 ? 3 : 1);
  if (v >= 11) CHECK_EQ_INT(st->commId, 78);
  CHECK_NCCL(cn->finalize(other));
  CHECK_EQ_INT(st->finalizeCalls, v >= 11 ? 1 : 0);
}

static void wait_done(const ncclCollNet_v12_t* cn, void* req, int* size) {
  int done = 0, polls = 0;
  while (!done && polls++ < 100) CHECK_NCCL(cn->test(req, &done, size));
  CHECK(done);
  CHECK_EQ_INT(polls, 2); /* the plugin's request completes on its second test */
}

static void check_allreduce(const ncclCollNet_v12_t* cn, test_collnet_stats_t* st, void* cc) {
  float send[5] = {1.5f, -2.0f, 3.25f, 4.0f, 100.0f}, recv[5] = {0};
  void *smh = NULL, *rmh = NULL;
  CHECK_NCCL(cn->regMr(cc, send, sizeof(send), NCCL_PTR_HOST, &smh));
  CHECK_EQ_INT(st->lastRegMrSize, sizeof(send));
  CHECK_NCCL(cn->regMr(cc, recv, sizeof(recv), NCCL_PTR_HOST, &rmh));
  CHECK(smh == (void*)0x3a && rmh == (void*)0x3a);
  void* req = NULL;
  CHECK_NCCL(cn->iallreduce(cc, send, recv, 5, ncclFloat32, ncclSum, smh, rmh, &req));
  CHECK(req != NULL);
  CHECK_EQ_INT(st->lastCount, 5);
  CHECK_EQ_INT(st->lastDataType, ncclFloat32);
  CHECK_EQ_INT(st->lastRedOp, ncclSum);
  CHECK(st->lastSendMhandle == smh && st->lastRecvMhandle == rmh);
  int size = -1;
  wait_done(cn, req, &size);
  CHECK_EQ_INT(size, sizeof(send));
  for (int i = 0; i < 5; i++) CHECK(recv[i] == send[i]);
  void* freq = NULL;
  CHECK_NCCL(cn->iflush(cc, recv, sizeof(recv), rmh, &freq));
  wait_done(cn, freq, &size);
  CHECK_EQ_INT(size, sizeof(recv));
  CHECK_NCCL(cn->deregMr(cc, smh));
  CHECK_NCCL(cn->deregMr(cc, rmh));
}

/* What an int-sized ABI cannot take fails before reaching the plugin. */
static void check_limits(int v, const ncclCollNet_v12_t* cn, test_collnet_stats_t* st, void* cc) {
  float buf[1];
  void* req = NULL;
  int calls = st->iallreduceCalls;
  size_t big = (size_t)MAX_NET_SIZE + 1;
  ncclResult_t res = cn->iallreduce(cc, buf, buf, big, ncclFloat32, ncclSum, NULL, NULL, &req);
  if (v <= 8) {
    CHECK_EQ_INT(res, ncclInternalError);
    CHECK_EQ_INT(st->iallreduceCalls, calls);
    char want[160];
    snprintf(want, sizeof(want), "(ABI v%d): iallreduce count of 1073741825 is over its limit of 1073741824", v);
    CHECK_STR_CONTAINS(err_last_get(), want);
  } else {
    CHECK_NCCL(res); /* size_t all the way: the plugin sees it whole */
    CHECK_EQ_INT(st->lastCount, big);
  }
  void* mh = NULL;
  size_t huge = (size_t)0x80000000u;
  res = cn->regMr(cc, buf, huge, NCCL_PTR_HOST, &mh);
  if (v <= 7) {
    CHECK_EQ_INT(res, ncclInternalError);
    CHECK_STR_CONTAINS(err_last_get(), "regMr size of 2147483648 is over its limit of 2147483647");
  } else {
    CHECK_NCCL(res);
    CHECK_EQ_INT(st->lastRegMrSize, huge);
  }
}

static void check_parts(int v, const ncclCollNet_v12_t* cn, test_collnet_stats_t* st, void* cc) {
  if (v < 8) return;
  char a[64], b[64];
  ncclNetSGE_v12_t parts[2] = {{(void*)0x3a, a, 48}, {(void*)0x3a, b, 16}};
  void* req = NULL;
  CHECK_NCCL(cn->iallgather(cc, a, 2, parts, 32, 8, 56, (void*)0x3a, &req));
  CHECK_EQ_INT(st->lastParts, 2);
  CHECK_EQ_INT(st->lastPartSize[0], 48);
  CHECK_EQ_INT(st->lastPartSize[1], 16);
  CHECK(st->lastPartAddr[0] == a && st->lastPartAddr[1] == b);
  CHECK_EQ_INT(st->lastBytesPerRank, 32);
  CHECK_EQ_INT(st->lastWindowOffset, 8);
  CHECK_EQ_INT(st->lastWindowBytes, 56);
  int size = 0;
  wait_done(cn, req, &size);
  CHECK_EQ_INT(size, 56);
  CHECK_NCCL(cn->ireducescatter(cc, 1, parts, b, 24, 0, 24, ncclFloat32, ncclMax, (void*)0x3a, &req));
  CHECK_EQ_INT(st->lastParts, 1);
  CHECK_EQ_INT(st->lastRedOp, ncclMax);
  CHECK_EQ_INT(st->lastBytesPerRank, 24);
  wait_done(cn, req, &size);
  /* v8's parts have 32-bit sizes: a larger one is refused there. */
  ncclNetSGE_v12_t large = {(void*)0x3a, a, (size_t)MAX_COLLNET_SIZE + 1};
  ncclResult_t res = cn->iallgather(cc, a, 1, &large, 32, 0, 32, (void*)0x3a, &req);
  if (v == 8) {
    CHECK_EQ_INT(res, ncclInternalError);
    CHECK_STR_CONTAINS(err_last_get(), "(ABI v8): iallgather part of 536870913 bytes is over its limit of 536870912");
    CHECK_EQ_INT(st->lastParts, 1); /* the plugin saw nothing new */
  } else {
    CHECK_NCCL(res);
    CHECK_EQ_INT(st->lastPartSize[0], (size_t)MAX_COLLNET_SIZE + 1);
  }
}

static void check_vnic(int v, const ncclCollNet_v12_t* cn, test_collnet_stats_t* st) {
  if (v < 9) return;
  ncclNetVDeviceProps_v12_t props = {2, {1, 0}};
  int d = -1;
  CHECK_NCCL(cn->makeVDevice(&d, &props));
  CHECK_EQ_INT(d, 2);
  CHECK_EQ_INT(st->lastVdevNdevs, 2);
  CHECK_EQ_INT(st->lastVdevDevs[0], 1);
  ncclNetVDeviceProps_v12_t five = {5, {0, 1, 0, 1, 0}};
  ncclResult_t res = cn->makeVDevice(&d, &five);
  if (v <= 11) {
    CHECK_EQ_INT(res, ncclInvalidArgument); /* 4 devices per vNIC before v12 */
  } else {
    CHECK_NCCL(res);
    CHECK_EQ_INT(st->lastVdevNdevs, 5);
  }
}

static void plugin_path(int v, char* path, size_t size) {
  snprintf(path, size, "%s/libnccl-net-testcollnetv%d.so", TEST_PLUGIN_DIR, v);
}

static int version_child(int rank, int n, void* arg) {
  (void)rank, (void)n;
  int v = *(int*)arg;
  char path[512];
  plugin_path(v, path, sizeof(path));
  setenv("NCCL_NET_PLUGIN", path, 1);
  setenv("NCCL_COLLNET_ENABLE", "1", 1);
  unsetenv("MKCCL_MANIFEST");
  plugin_collnet_t* pc = NULL;
  CHECK_NCCL(plugin_collnet_acquire(&pc));
  CHECK_EQ_INT(pc->abi, v);
  CHECK_EQ_INT(pc->ndev, 2);
  char name[32];
  snprintf(name, sizeof(name), "testcollnet-v%d", v);
  CHECK(strcmp(pc->name, name) == 0);
  CHECK(strcmp(pc->collnet->name, name) == 0);
  CHECK(strcmp(pc->path, path) == 0);
  plugin_collnet_t* again = NULL;
  CHECK_NCCL(plugin_collnet_acquire(&again));
  CHECK(again == pc);
  CHECK_NCCL(plugin_collnet_release(again));
  const ncclCollNet_v12_t* cn = pc->collnet;
  test_collnet_stats_t* st = stats_of(path);
  check_props(v, cn);
  check_members(v, cn);
  void* ctx = NULL;
  check_init(v, cn, st, &ctx);

  char handle[NCCL_NET_HANDLE_MAXSIZE];
  void *lc = NULL, *cc = NULL;
  CHECK_NCCL(cn->listen(ctx, 1, handle, &lc));
  CHECK_EQ_INT(st->listenDev, 1);
  if (v >= 11) CHECK(st->listenCtx == ctx); /* older versions never see a ctx */
  void* handles[1] = {handle};
  CHECK_NCCL(cn->connect(handles, 1, 0, lc, &cc));
  CHECK(cc != NULL);
  CHECK_EQ_INT(st->connectNranks, 1);
  CHECK_EQ_INT(st->connectRank, 0);
  CHECK_EQ_INT(st->connectHandleOk, 1);
  check_allreduce(cn, st, cc);
  check_limits(v, cn, st, cc);
  check_parts(v, cn, st, cc);
  check_vnic(v, cn, st);
  CHECK_NCCL(cn->closeColl(cc));
  CHECK_NCCL(cn->closeListen(lc));
  CHECK_EQ_INT(st->closeCollCalls, 1);
  CHECK_EQ_INT(st->closeListenCalls, 1);
  CHECK_NCCL(cn->finalize(ctx));
  CHECK_EQ_INT(st->finalizeCalls, v >= 11 ? 2 : 0);
  CHECK_NCCL(plugin_collnet_release(pc));
  /* The last release finalizes the loader's ctx and unloads it. */
  CHECK(dlopen(path, RTLD_NOW | RTLD_NOLOAD) == NULL);
  CHECK_EQ_INT(plugin_collnet_release(pc), ncclInvalidUsage);
  return 0;
}

/* Off (the default), the candidate is opened and refused: nothing loaded. */
static int off_child(int rank, int n, void* arg) {
  (void)rank, (void)n, (void)arg;
  char path[512];
  plugin_path(8, path, sizeof(path));
  setenv("NCCL_NET_PLUGIN", path, 1);
  unsetenv("NCCL_COLLNET_ENABLE");
  unsetenv("MKCCL_MANIFEST");
  plugin_collnet_t* pc = NULL;
  CHECK_EQ_INT(plugin_collnet_acquire(&pc), ncclInvalidUsage);
  CHECK(pc == NULL);
  CHECK_STR_CONTAINS(err_last_get(), "collnet is off (NCCL_COLLNET_ENABLE=0)");
  plugin_candidate_t* cands = NULL;
  int nc = 0;
  CHECK_NCCL(plugin_candidates_get(PLUGIN_KIND_COLLNET, &cands, &nc, NULL, 0));
  CHECK(nc >= 1);
  CHECK_EQ_INT(cands[0].outcome, PLUGIN_REFUSED);
  CHECK_EQ_INT(cands[0].abi, 8);
  CHECK_STR_CONTAINS(cands[0].reason, "collnet is off");
  free(cands);
  CHECK(dlopen(path, RTLD_NOW | RTLD_NOLOAD) == NULL);
  return 0;
}

int main(void) {
  for (int v = 6; v <= 12; v++) CHECK_MSG(ranks_run(1, version_child, &v, 60) == 0, "ABI v%d", v);
  CHECK_MSG(ranks_run(1, off_child, NULL, 60) == 0, "collnet off");
  return 0;
}
