/* A test net plugin, one source for every NCCL net ABI: built once per
 * version with -DTEST_NET_VERSION=N, each build exporting only
 * ncclNetPlugin_vN with that version's exact signatures. It is an in-process
 * loopback (listen/connect/accept share a queue) that records what it was
 * called with in `testNetStats`, so tests can check what an adapter passed.
 *
 * -DTEST_NET_WITH_INFO adds mkcclPluginInfo_v1 (name "test-net-info") with
 * two parameters read through the core's services: TEST_NET_NDEV (devices,
 * default 2) and TEST_NET_INIT_FAIL (init fails when 1). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/nccl_net.h"

#ifndef TEST_NET_VERSION
#error "build with -DTEST_NET_VERSION=<6..12>"
#endif

#define TN_CAT3_(a, b, c) a##b##c
#define TN_CAT3(a, b, c) TN_CAT3_(a, b, c)
#define TN_STR_(x) #x
#define TN_STR(x) TN_STR_(x)
#define TN_V TEST_NET_VERSION
#define TN_PROPS TN_CAT3(ncclNetProperties_v, TN_V, _t)
#define TN_NET TN_CAT3(ncclNet_v, TN_V, _t)
#define TN_SYMBOL TN_CAT3(ncclNetPlugin_v, TN_V, )
#define TN_EXPORT __attribute__((visibility("default")))

#if TN_V <= 8
typedef int tn_size_t; /* isend/irecv sizes */
#else
typedef size_t tn_size_t;
#endif
#if TN_V <= 7
typedef int tn_mr_size_t;
#else
typedef size_t tn_mr_size_t;
#endif

/* What the tests read back (dlsym "testNetStats"). */
typedef struct {
  int initCalls;
  int finalizeCalls;
  int trafficClass;      /* from init (v11+) or connect (v10) */
  uint64_t commId;       /* last init's */
  void* lastRecvHint;    /* *request on entry to the last irecv */
  int lastRecvN;
  size_t lastRecvSizes[8];
  int isendCalls;
  size_t lastIsendSize;
  size_t lastRegMrSize;
  int lastVdevNdevs;
  int lastVdevDevs[8];
  uint32_t lastAttrProto;
} test_net_stats_t;

TN_EXPORT test_net_stats_t testNetStats = {0, 0, -2, 0, (void*)0x99, 0, {0}, 0, 0, 0, 0, {0}, 0};

#define TN_NDEV_DEFAULT 2
#define TN_MAX_QUEUE 32
#define TN_MAGIC 0x7e57ee7

typedef struct tn_req {
  int isRecv;
  int done;
  int n;
  void* data[8];
  size_t size[8];
  int tag[8];
  size_t got[8];
  struct tn_chan* chan; /* a recv: the channel it receives from */
} tn_req_t;

typedef struct tn_chan {
  tn_req_t* sends[TN_MAX_QUEUE]; /* pending sends, oldest first */
  int nSends;
} tn_chan_t;

typedef struct {
  uint32_t magic;
  tn_chan_t* chan;
} tn_handle_t;

#ifdef TEST_NET_WITH_INFO
#include "mkccl_plugin_params.h"
static const mkcclParamDecl_v1 tn_params[] = {
#define PLUGIN_PARAM PLUGIN_PARAM_DECL
#include "test_net_plugin_params.def"
#undef PLUGIN_PARAM
};
#define TN_NPARAMS ((int)(sizeof(tn_params) / sizeof(tn_params[0])))
static plugin_params_t tn_p = {NULL, tn_params, TN_NPARAMS};
#define PLUGIN_PARAM(name, type, def, help) static inline PLUGIN_PARAM_DEFINE(tn_param_, &tn_p, name, type)
#include "test_net_plugin_params.def"
#undef PLUGIN_PARAM
static void tn_bind(const mkcclServices_v1* services) { tn_p.services = services; }
/* The symbol has the type's name: an asm label gives the variable that name. */
TN_EXPORT const mkcclPluginInfo_v1_t tn_info __asm__(MKCCL_PLUGIN_INFO_SYMBOL) = {
    sizeof(mkcclPluginInfo_v1_t), MKCCL_PLUGIN_ABI_VERSION, "test-net-info", "0.1", tn_params, TN_NPARAMS, tn_bind};
static int tn_ndev(void) { return (int)tn_param_TEST_NET_NDEV(); }
static int tn_init_fails(void) { return tn_param_TEST_NET_INIT_FAIL() == 1; }
#define TN_NAME "test-net-info"
#else
static int tn_ndev(void) { return TN_NDEV_DEFAULT; }
static int tn_init_fails(void) { return 0; }
#define TN_NAME "testnet-v" TN_STR(TN_V)
#endif

static ncclResult_t tn_init_common(void) {
  testNetStats.initCalls++;
  return tn_init_fails() ? ncclSystemError : ncclSuccess;
}

#if TN_V >= 11
static ncclResult_t tn_init(void** ctx, uint64_t commId, TN_CAT3(ncclNetCommConfig_v, TN_V, _t) * config,
                            ncclDebugLogger_t log, ncclProfilerCallback_t prof) {
  (void)log, (void)prof;
  testNetStats.commId = commId;
  testNetStats.trafficClass = config ? config->trafficClass : -3;
  ncclResult_t res = tn_init_common();
  if (res == ncclSuccess) *ctx = malloc(1);
  return res;
}
static ncclResult_t tn_finalize(void* ctx) {
  testNetStats.finalizeCalls++;
  free(ctx);
  return ncclSuccess;
}
#elif TN_V == 10
static ncclResult_t tn_init(ncclDebugLogger_t log, ncclProfilerCallback_t prof) {
  (void)log, (void)prof;
  return tn_init_common();
}
#else
static ncclResult_t tn_init(ncclDebugLogger_t log) {
  (void)log;
  return tn_init_common();
}
#endif

static ncclResult_t tn_devices(int* ndev) {
  *ndev = tn_ndev();
  return ncclSuccess;
}

static ncclResult_t tn_getProperties(int dev, TN_PROPS* props) {
  static char* names[2] = {"tn0", "tn1"};
  if (dev < 0 || dev >= tn_ndev()) return ncclInvalidArgument;
  memset(props, 0, sizeof(*props));
  props->name = names[dev & 1];
  props->guid = 0x1234 + (uint64_t)dev;
  props->ptrSupport = NCCL_PTR_HOST;
  props->speed = 12345 + dev;
  props->port = 1;
  props->latency = 1.5f;
  props->maxComms = 99;
  props->maxRecvs = 4;
#if TN_V >= 7
  props->netDeviceType = NCCL_NET_DEVICE_HOST;
  props->netDeviceVersion = NCCL_NET_DEVICE_INVALID_VERSION;
#endif
#if TN_V >= 8
  props->regIsGlobal = 1;
#endif
#if TN_V >= 9
  props->forceFlush = 1;
  props->vProps.ndevs = 1;
  props->vProps.devs[0] = dev;
  props->maxP2pBytes = 123456789;
  props->maxCollBytes = 987654321;
#endif
#if TN_V >= 11
  props->maxMultiRequestSize = 3;
#endif
#if TN_V >= 12
  props->railId = 5;
  props->planeId = 6;
#endif
  return ncclSuccess;
}

static ncclResult_t tn_listen_common(void* handle, void** listenComm) {
  tn_chan_t* chan = calloc(1, sizeof(*chan));
  if (!chan) return ncclSystemError;
  tn_handle_t h = {TN_MAGIC, chan};
  memcpy(handle, &h, sizeof(h));
  *listenComm = chan;
  return ncclSuccess;
}

static ncclResult_t tn_connect_common(void* handle, void** sendComm) {
  tn_handle_t h;
  memcpy(&h, handle, sizeof(h));
  if (h.magic != TN_MAGIC) return ncclInvalidArgument;
  *sendComm = h.chan;
  return ncclSuccess;
}

#if TN_V >= 11
static ncclResult_t tn_listen(void* ctx, int dev, void* handle, void** listenComm) {
  (void)ctx, (void)dev;
  return tn_listen_common(handle, listenComm);
}
static ncclResult_t tn_connect(void* ctx, int dev, void* handle, void** sendComm, ncclNetDeviceHandle_v7_t** dc) {
  (void)ctx, (void)dev, (void)dc;
  return tn_connect_common(handle, sendComm);
}
#else
static ncclResult_t tn_listen(int dev, void* handle, void** listenComm) {
  (void)dev;
  return tn_listen_common(handle, listenComm);
}
#if TN_V == 10
static ncclResult_t tn_connect(int dev, ncclNetCommConfig_v10_t* config, void* handle, void** sendComm,
                               ncclNetDeviceHandle_v10_t** dc) {
  (void)dev, (void)dc;
  testNetStats.trafficClass = config ? config->trafficClass : -3;
  return tn_connect_common(handle, sendComm);
}
#elif TN_V >= 7
static ncclResult_t tn_connect(int dev, void* handle, void** sendComm, ncclNetDeviceHandle_v7_t** dc) {
  (void)dev, (void)dc;
  return tn_connect_common(handle, sendComm);
}
#else
static ncclResult_t tn_connect(int dev, void* handle, void** sendComm) {
  (void)dev;
  return tn_connect_common(handle, sendComm);
}
#endif
#endif

#if TN_V >= 7
static ncclResult_t tn_accept(void* listenComm, void** recvComm, ncclNetDeviceHandle_v7_t** dc) {
  (void)dc;
  *recvComm = listenComm;
  return ncclSuccess;
}
#else
static ncclResult_t tn_accept(void* listenComm, void** recvComm) {
  *recvComm = listenComm;
  return ncclSuccess;
}
#endif

static ncclResult_t tn_regMr(void* comm, void* data, tn_mr_size_t size, int type, void** mhandle) {
  (void)comm, (void)data, (void)type;
  testNetStats.lastRegMrSize = (size_t)size;
  *mhandle = (void*)0x1;
  return ncclSuccess;
}

static ncclResult_t tn_regMrDmaBuf(void* comm, void* data, size_t size, int type, uint64_t offset, int fd,
                                   void** mhandle) {
  (void)comm, (void)data, (void)size, (void)type, (void)offset, (void)fd, (void)mhandle;
  return ncclInvalidUsage;
}

static ncclResult_t tn_deregMr(void* comm, void* mhandle) {
  (void)comm, (void)mhandle;
  return ncclSuccess;
}

static ncclResult_t tn_isend_common(void* sendComm, void* data, size_t size, int tag, void** request) {
  tn_chan_t* chan = sendComm;
  testNetStats.isendCalls++;
  testNetStats.lastIsendSize = size;
  if (chan->nSends == TN_MAX_QUEUE) {
    *request = NULL; /* would block */
    return ncclSuccess;
  }
  tn_req_t* r = calloc(1, sizeof(*r));
  if (!r) return ncclSystemError;
  r->n = 1;
  r->data[0] = data;
  r->size[0] = size;
  r->tag[0] = tag;
  chan->sends[chan->nSends++] = r;
  *request = r;
  return ncclSuccess;
}

static ncclResult_t tn_irecv_common(void* recvComm, int n, void** data, const size_t* sizes, int* tags,
                                    void** request) {
  testNetStats.lastRecvHint = *request;
  testNetStats.lastRecvN = n;
  if (n < 1 || n > 4) return ncclInvalidArgument;
  tn_req_t* r = calloc(1, sizeof(*r));
  if (!r) return ncclSystemError;
  r->isRecv = 1;
  r->chan = recvComm;
  r->n = n;
  for (int i = 0; i < n; i++) {
    testNetStats.lastRecvSizes[i] = sizes[i];
    r->data[i] = data[i];
    r->size[i] = sizes[i];
    r->tag[i] = tags[i];
  }
  *request = r;
  return ncclSuccess;
}

#if TN_V >= 10
static ncclResult_t tn_isend(void* sendComm, void* data, tn_size_t size, int tag, void* mhandle, void* phandle,
                             void** request) {
  (void)mhandle, (void)phandle;
  return tn_isend_common(sendComm, data, (size_t)size, tag, request);
}
#else
static ncclResult_t tn_isend(void* sendComm, void* data, tn_size_t size, int tag, void* mhandle, void** request) {
  (void)mhandle;
  return tn_isend_common(sendComm, data, (size_t)size, tag, request);
}
#endif

static ncclResult_t tn_irecv_sizes(void* recvComm, int n, void** data, tn_size_t* sizes, int* tags,
                                   void** request) {
  size_t s[8];
  for (int i = 0; i < n && i < 8; i++) s[i] = (size_t)sizes[i];
  return tn_irecv_common(recvComm, n, data, s, tags, request);
}

#if TN_V >= 10
static ncclResult_t tn_irecv(void* recvComm, int n, void** data, tn_size_t* sizes, int* tags, void** mhandles,
                             void** phandles, void** request) {
  (void)mhandles, (void)phandles;
  return tn_irecv_sizes(recvComm, n, data, sizes, tags, request);
}
#else
static ncclResult_t tn_irecv(void* recvComm, int n, void** data, tn_size_t* sizes, int* tags, void** mhandles,
                             void** request) {
  (void)mhandles;
  return tn_irecv_sizes(recvComm, n, data, sizes, tags, request);
}
#endif

static ncclResult_t tn_iflush(void* recvComm, int n, void** data, int* sizes, void** mhandles, void** request) {
  (void)recvComm, (void)n, (void)data, (void)sizes, (void)mhandles;
  *request = NULL; /* host memory: nothing to flush */
  return ncclSuccess;
}

/* A recv completes when every buffer matched a pending send of its tag. */
static ncclResult_t tn_recv_progress(tn_chan_t* chan, tn_req_t* r) {
  for (int i = 0; i < r->n; i++) {
    int k = 0;
    while (k < chan->nSends && chan->sends[k]->tag[0] != r->tag[i]) k++;
    if (k == chan->nSends) return ncclSuccess;
  }
  for (int i = 0; i < r->n; i++) {
    int k = 0;
    while (chan->sends[k]->tag[0] != r->tag[i]) k++;
    tn_req_t* s = chan->sends[k];
    if (s->size[0] > r->size[i]) return ncclInternalError; /* truncation */
    memcpy(r->data[i], s->data[0], s->size[0]);
    r->got[i] = s->size[0];
    s->done = 1;
    memmove(&chan->sends[k], &chan->sends[k + 1], sizeof(chan->sends[0]) * (size_t)(chan->nSends - k - 1));
    chan->nSends--;
  }
  r->done = 1;
  return ncclSuccess;
}

static ncclResult_t tn_test(void* request, int* done, int* sizes) {
  tn_req_t* r = request;
  if (r->isRecv && !r->done) {
    ncclResult_t res = tn_recv_progress(r->chan, r);
    if (res != ncclSuccess) return res;
  }
  *done = r->done;
  if (r->done) {
    for (int i = 0; sizes && i < r->n; i++) sizes[i] = (int)(r->isRecv ? r->got[i] : r->size[0]);
    free(r);
  }
  return ncclSuccess;
}

static ncclResult_t tn_closeSend(void* sendComm) {
  (void)sendComm;
  return ncclSuccess;
}

static ncclResult_t tn_closeRecv(void* recvComm) {
  tn_chan_t* chan = recvComm;
  for (int i = 0; i < chan->nSends; i++) free(chan->sends[i]);
  free(chan);
  return ncclSuccess;
}

/* The listen comm's channel lives on as the recv comm, freed by closeRecv. */
static ncclResult_t tn_closeListen(void* listenComm) {
  (void)listenComm;
  return ncclSuccess;
}

#if TN_V >= 7
static ncclResult_t tn_getDeviceMr(void* comm, void* mhandle, void** dptr) {
  (void)comm, (void)mhandle;
  *dptr = (void*)0xd1;
  return ncclSuccess;
}
static ncclResult_t tn_irecvConsumed(void* recvComm, int n, void* request) {
  (void)recvComm, (void)n, (void)request;
  return ncclSuccess;
}
#endif

#if TN_V >= 9
static ncclResult_t tn_makeVDevice(int* d, TN_CAT3(ncclNetVDeviceProps_v, TN_V, _t) * props) {
  testNetStats.lastVdevNdevs = props->ndevs;
  for (int i = 0; i < props->ndevs && i < 8; i++) testNetStats.lastVdevDevs[i] = props->devs[i];
  *d = tn_ndev();
  return ncclSuccess;
}
#endif

#if TN_V >= 11
static ncclResult_t tn_setNetAttr(void* ctx, TN_CAT3(ncclNetAttr_v, TN_V, _t) * attr) {
  (void)ctx;
  testNetStats.lastAttrProto = attr->proto;
  return ncclSuccess;
}
#endif

TN_EXPORT const TN_NET TN_SYMBOL = {
    .name = TN_NAME,
    .init = tn_init,
    .devices = tn_devices,
    .getProperties = tn_getProperties,
    .listen = tn_listen,
    .connect = tn_connect,
    .accept = tn_accept,
    .regMr = tn_regMr,
    .regMrDmaBuf = tn_regMrDmaBuf,
    .deregMr = tn_deregMr,
    .isend = tn_isend,
    .irecv = tn_irecv,
    .iflush = tn_iflush,
    .test = tn_test,
    .closeSend = tn_closeSend,
    .closeRecv = tn_closeRecv,
    .closeListen = tn_closeListen,
#if TN_V >= 7
    .getDeviceMr = tn_getDeviceMr,
    .irecvConsumed = tn_irecvConsumed,
#endif
#if TN_V >= 9
    .makeVDevice = tn_makeVDevice,
#endif
#if TN_V >= 11
    .finalize = tn_finalize,
    .setNetAttr = tn_setNetAttr,
#endif
};
