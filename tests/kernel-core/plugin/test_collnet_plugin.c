/* A test collnet plugin, one source for every NCCL collnet ABI: built once
 * per version with -DTEST_COLLNET_VERSION=N, each build exporting only
 * ncclCollNetPlugin_vN with that version's exact signatures. A collective of
 * one rank in process: iallreduce copies float sums through, test() reports
 * done on its second call. It records what it was called with in
 * `testCollNetStats`, so tests can check what an adapter passed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collnet/nccl_collnet.h"

#ifndef TEST_COLLNET_VERSION
#error "build with -DTEST_COLLNET_VERSION=<6..12>"
#endif

#define TC_CAT3_(a, b, c) a##b##c
#define TC_CAT3(a, b, c) TC_CAT3_(a, b, c)
#define TC_V TEST_COLLNET_VERSION
#define TC_PROPS TC_CAT3(ncclNetProperties_v, TC_V, _t)
#define TC_TABLE TC_CAT3(ncclCollNet_v, TC_V, _t)
#define TC_SGE TC_CAT3(ncclNetSGE_v, TC_V, _t)
#define TC_VPROPS TC_CAT3(ncclNetVDeviceProps_v, TC_V, _t)
#define TC_SYMBOL TC_CAT3(ncclCollNetPlugin_v, TC_V, )
#define TC_EXPORT __attribute__((visibility("default")))

#if TC_V <= 8
typedef int tc_count_t;
#else
typedef size_t tc_count_t;
#endif
#if TC_V <= 7
typedef int tc_mr_size_t;
#else
typedef size_t tc_mr_size_t;
#endif

/* What the tests read back (dlsym "testCollNetStats"). */
typedef struct {
  int initCalls;
  int finalizeCalls;
  uint64_t commId;        /* last init's (v11+) */
  void* listenCtx;        /* ctx listen got (v11+) */
  int listenDev;
  int connectNranks, connectRank;
  int connectHandleOk;    /* handles[rank] is the one listen wrote */
  size_t lastRegMrSize;
  size_t lastCount;       /* iallreduce's count as the plugin saw it */
  int lastDataType, lastRedOp;
  void* lastSendMhandle;
  void* lastRecvMhandle;
  int iallreduceCalls;
  int lastParts;
  size_t lastPartSize[4]; /* SGE sizes as the plugin saw them */
  void* lastPartAddr[4];
  size_t lastBytesPerRank, lastWindowOffset, lastWindowBytes;
  int testCalls;
  int closeCollCalls, closeListenCalls;
  int lastVdevNdevs;
  int lastVdevDevs[8];
} test_collnet_stats_t;

TC_EXPORT test_collnet_stats_t testCollNetStats;

#define TC_MAGIC 0x636f6c6cu /* "coll": what listen writes in its handle */

typedef struct {
  int polls; /* test() calls so far */
  int size;
} tc_request_t;

static tc_request_t tc_requests[8];
static int tc_next_request;

static tc_request_t* tc_request(int size) {
  tc_request_t* r = &tc_requests[tc_next_request++ % 8];
  r->polls = 0;
  r->size = size;
  return r;
}

#if TC_V >= 11
static int tc_ctx_token;
static ncclResult_t tc_init(void** ctx, uint64_t commId, ncclDebugLogger_t log) {
  (void)log;
  testCollNetStats.initCalls++;
  testCollNetStats.commId = commId;
  *ctx = &tc_ctx_token;
  return ncclSuccess;
}
static ncclResult_t tc_finalize(void* ctx) {
  (void)ctx;
  testCollNetStats.finalizeCalls++;
  return ncclSuccess;
}
#else
static ncclResult_t tc_init(ncclDebugLogger_t log) {
  (void)log;
  testCollNetStats.initCalls++;
  return ncclSuccess;
}
#endif

static ncclResult_t tc_devices(int* ndev) {
  *ndev = 2;
  return ncclSuccess;
}

static char tc_names[2][8] = {"tc0", "tc1"};

static ncclResult_t tc_getProperties(int dev, TC_PROPS* props) {
  if (dev < 0 || dev >= 2) return ncclInvalidArgument;
  memset(props, 0, sizeof(*props));
  props->name = tc_names[dev];
  props->pciPath = NULL;
  props->guid = 0x4321 + (uint64_t)dev;
  props->ptrSupport = NCCL_PTR_HOST;
  props->speed = 2000 + dev;
  props->port = dev;
  props->latency = 2.5f;
  props->maxComms = 7;
  props->maxRecvs = 1;
#if TC_V >= 7
  props->netDeviceType = NCCL_NET_DEVICE_HOST;
  props->netDeviceVersion = NCCL_NET_DEVICE_INVALID_VERSION;
#endif
#if TC_V >= 8
  props->regIsGlobal = 1;
#endif
#if TC_V >= 9
  props->forceFlush = 1;
  props->vProps.ndevs = 1;
  props->vProps.devs[0] = dev;
  props->maxP2pBytes = 1111;
  props->maxCollBytes = 2222;
#endif
#if TC_V >= 11
  props->maxMultiRequestSize = 3;
#endif
#if TC_V >= 12
  props->railId = 4;
  props->planeId = 5;
#endif
  return ncclSuccess;
}

static int tc_listen_comm;
#if TC_V >= 11
static ncclResult_t tc_listen(void* ctx, int dev, void* handle, void** listenComm) {
  testCollNetStats.listenCtx = ctx;
#else
static ncclResult_t tc_listen(int dev, void* handle, void** listenComm) {
#endif
  testCollNetStats.listenDev = dev;
  uint32_t magic = TC_MAGIC + (uint32_t)dev;
  memcpy(handle, &magic, sizeof(magic));
  *listenComm = &tc_listen_comm;
  return ncclSuccess;
}

static int tc_coll_comm;
static ncclResult_t tc_connect(void* handles[], int nranks, int rank, void* listenComm, void** collComm) {
  if (listenComm != &tc_listen_comm || rank < 0 || rank >= nranks) return ncclInvalidArgument;
  uint32_t magic = 0;
  memcpy(&magic, handles[rank], sizeof(magic));
  testCollNetStats.connectNranks = nranks;
  testCollNetStats.connectRank = rank;
  testCollNetStats.connectHandleOk = magic == TC_MAGIC + (uint32_t)testCollNetStats.listenDev;
  *collComm = &tc_coll_comm;
  return ncclSuccess;
}

static ncclResult_t tc_reduceSupport(ncclDataType_t dataType, ncclRedOp_t redOp, int* supported) {
  *supported = dataType == ncclFloat32 && redOp == ncclSum;
  return ncclSuccess;
}

static ncclResult_t tc_regMr(void* collComm, void* data, tc_mr_size_t size, int type, void** mhandle) {
  (void)collComm, (void)data, (void)type;
  testCollNetStats.lastRegMrSize = (size_t)size;
  *mhandle = (void*)0x3a;
  return ncclSuccess;
}

static ncclResult_t tc_regMrDmaBuf(void* collComm, void* data, size_t size, int type, uint64_t offset, int fd,
                                   void** mhandle) {
  (void)collComm, (void)data, (void)size, (void)type, (void)offset, (void)fd, (void)mhandle;
  return ncclInternalError; /* no dma-buf here */
}

static ncclResult_t tc_deregMr(void* collComm, void* mhandle) {
  (void)collComm;
  return mhandle == (void*)0x3a ? ncclSuccess : ncclInvalidArgument;
}

/* One rank: the reduction of a single contribution is the contribution. */
static ncclResult_t tc_iallreduce(void* collComm, void* sendData, void* recvData, tc_count_t count,
                                  ncclDataType_t dataType, ncclRedOp_t redOp, void* sendMhandle, void* recvMhandle,
                                  void** request) {
  if (collComm != &tc_coll_comm) return ncclInvalidArgument;
  testCollNetStats.iallreduceCalls++;
  testCollNetStats.lastCount = (size_t)count;
  testCollNetStats.lastDataType = dataType;
  testCollNetStats.lastRedOp = redOp;
  testCollNetStats.lastSendMhandle = sendMhandle;
  testCollNetStats.lastRecvMhandle = recvMhandle;
  if (dataType != ncclFloat32 || redOp != ncclSum) return ncclInvalidArgument;
  if ((size_t)count <= 4096) memcpy(recvData, sendData, (size_t)count * sizeof(float));
  *request = tc_request((int)((size_t)count <= 4096 ? (size_t)count * sizeof(float) : 0));
  return ncclSuccess;
}

#if TC_V >= 8
static void tc_parts(int n, const TC_SGE* parts, size_t bytesPerRank, size_t windowOffset, size_t windowBytes) {
  testCollNetStats.lastParts = n;
  for (int i = 0; i < n && i < 4; i++) {
    testCollNetStats.lastPartSize[i] = parts[i].size;
    testCollNetStats.lastPartAddr[i] = parts[i].address;
  }
  testCollNetStats.lastBytesPerRank = bytesPerRank;
  testCollNetStats.lastWindowOffset = windowOffset;
  testCollNetStats.lastWindowBytes = windowBytes;
}

static ncclResult_t tc_iallgather(void* collComm, void* sendData, int nRecvParts, TC_SGE* recvParts,
                                  size_t bytesPerRank, size_t windowOffset, size_t windowBytes, void* sendMhandle,
                                  void** request) {
  (void)collComm, (void)sendData, (void)sendMhandle;
  tc_parts(nRecvParts, recvParts, bytesPerRank, windowOffset, windowBytes);
  *request = tc_request((int)windowBytes);
  return ncclSuccess;
}

static ncclResult_t tc_ireducescatter(void* collComm, int nSendParts, TC_SGE* sendParts, void* recvData,
                                      size_t bytesPerRank, size_t windowOffset, size_t windowBytes,
                                      ncclDataType_t dataType, ncclRedOp_t redOp, void* recvMhandle, void** request) {
  (void)collComm, (void)recvData, (void)recvMhandle;
  testCollNetStats.lastDataType = dataType;
  testCollNetStats.lastRedOp = redOp;
  tc_parts(nSendParts, sendParts, bytesPerRank, windowOffset, windowBytes);
  *request = tc_request((int)bytesPerRank);
  return ncclSuccess;
}
#endif

static ncclResult_t tc_iflush(void* collComm, void* data, int size, void* mhandle, void** request) {
  (void)collComm, (void)data, (void)mhandle;
  *request = tc_request(size);
  return ncclSuccess;
}

static ncclResult_t tc_test(void* request, int* done, int* size) {
  tc_request_t* r = request;
  testCollNetStats.testCalls++;
  *done = ++r->polls >= 2;
  if (*done && size) *size = r->size;
  return ncclSuccess;
}

static ncclResult_t tc_closeColl(void* collComm) {
  testCollNetStats.closeCollCalls++;
  return collComm == &tc_coll_comm ? ncclSuccess : ncclInvalidArgument;
}

static ncclResult_t tc_closeListen(void* listenComm) {
  testCollNetStats.closeListenCalls++;
  return listenComm == &tc_listen_comm ? ncclSuccess : ncclInvalidArgument;
}

#if TC_V >= 9
static ncclResult_t tc_makeVDevice(int* d, TC_VPROPS* props) {
  testCollNetStats.lastVdevNdevs = props->ndevs;
  for (int i = 0; i < props->ndevs && i < 8; i++) testCollNetStats.lastVdevDevs[i] = props->devs[i];
  *d = 2;
  return ncclSuccess;
}
#endif

#define TC_STR_(x) #x
#define TC_STR(x) TC_STR_(x)

TC_EXPORT const TC_TABLE TC_SYMBOL = {
    .name = "testcollnet-v" TC_STR(TC_V),
    .init = tc_init,
    .devices = tc_devices,
    .getProperties = tc_getProperties,
    .listen = tc_listen,
    .connect = tc_connect,
    .reduceSupport = tc_reduceSupport,
    .regMr = tc_regMr,
    .regMrDmaBuf = tc_regMrDmaBuf,
    .deregMr = tc_deregMr,
    .iallreduce = tc_iallreduce,
#if TC_V >= 8
    .iallgather = tc_iallgather,
    .ireducescatter = tc_ireducescatter,
#endif
    .iflush = tc_iflush,
    .test = tc_test,
    .closeColl = tc_closeColl,
    .closeListen = tc_closeListen,
#if TC_V >= 9
    .makeVDevice = tc_makeVDevice,
#endif
#if TC_V >= 11
    .finalize = tc_finalize,
#endif
};
