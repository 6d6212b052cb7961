/* net-broken: a net plugin with a deliberate bug, to prove the conformance
 * kit fails a plugin that is wrong. It forwards everything to a working
 * plugin (MKCCL_NET_BROKEN_INNER, a path exporting ncclNetPlugin_v12) and
 * breaks it as MKCCL_NET_BROKEN_BUG says:
 *   corrupt:   flips one byte in the middle of every non-empty message;
 *   size:      reports one byte more than arrived for messages over 4 KB;
 *   inorder:   no bug: test on a receive while an earlier receive of the
 *              same connection is unfinished returns ncclInternalError, as
 *              NCCL's own socket plugin cannot take one (its test of a fresh
 *              request reads the next size header) and NCCL's core never
 *              makes one. The kit must pass it;
 *   nodev:     devices() reports 0: the kit has nothing to test (exit 77);
 *   speed0:    every device's speed is 0 (unknown), which NCCL tolerates:
 *              the kit warns and passes it, data checks included;
 *   maxcomms0: every device's maxComms is 0, a property the kit fails; the
 *              data checks must run all the same. */
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#include "mkccl_plugin_params.h"
#include "net/nccl_net.h"

static const mkcclParamDecl_v1 net_broken_decls[] = {
#define PLUGIN_PARAM PLUGIN_PARAM_DECL
#include "net_broken_params.def"
#undef PLUGIN_PARAM
};
#define NET_BROKEN_NPARAMS ((int)(sizeof(net_broken_decls) / sizeof(net_broken_decls[0])))
static plugin_params_t net_broken_params = {NULL, net_broken_decls, NET_BROKEN_NPARAMS};
#define PLUGIN_PARAM(name, type, def, help) \
  static inline PLUGIN_PARAM_DEFINE(net_broken_param_, &net_broken_params, name, type)
#include "net_broken_params.def"
#undef PLUGIN_PARAM

static void net_broken_bind(const mkcclServices_v1* s) { net_broken_params.services = s; }

__attribute__((visibility("default"))) const mkcclPluginInfo_v1_t mkcclPluginInfo_v1 = {
    sizeof(mkcclPluginInfo_v1_t), MKCCL_PLUGIN_ABI_VERSION, "net-broken", "0.1.0", net_broken_decls, NET_BROKEN_NPARAMS,
    net_broken_bind};

static const ncclNet_v12_t* inner;
static int net_broken_corrupt, net_broken_sizeBug, net_broken_inorder, net_broken_nodev, net_broken_speed0,
    net_broken_maxcomms0;

/* Receives in flight: which buffers a completed request filled, on which
 * connection, in which order they were posted. */
typedef struct {
  void* req;
  void* comm;
  unsigned long seq;
  int n;
  void* data[8];
} net_broken_recv_t;
static unsigned long net_broken_seq;
static net_broken_recv_t net_broken_recvs[256];
static pthread_mutex_t net_broken_lock = PTHREAD_MUTEX_INITIALIZER;

static ncclResult_t net_broken_init(void** ctx, uint64_t commId, ncclNetCommConfig_v12_t* config,
                                    ncclDebugLogger_t log, ncclProfilerCallback_t prof) {
  if (!inner) {
    const char* path = net_broken_param_MKCCL_NET_BROKEN_INNER();
    void* lib = *path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
    inner = lib ? dlsym(lib, "ncclNetPlugin_v12") : NULL;
    if (!inner) return ncclInvalidUsage;
    const char* bug = net_broken_param_MKCCL_NET_BROKEN_BUG();
    net_broken_corrupt = strcmp(bug, "corrupt") == 0;
    net_broken_sizeBug = strcmp(bug, "size") == 0;
    net_broken_inorder = strcmp(bug, "inorder") == 0;
    net_broken_nodev = strcmp(bug, "nodev") == 0;
    net_broken_speed0 = strcmp(bug, "speed0") == 0;
    net_broken_maxcomms0 = strcmp(bug, "maxcomms0") == 0;
  }
  return inner->init(ctx, commId, config, log, prof);
}

static ncclResult_t net_broken_devices(int* n) {
  ncclResult_t res = inner->devices(n);
  if (res == ncclSuccess && net_broken_nodev) *n = 0;
  return res;
}

static ncclResult_t net_broken_props(int d, ncclNetProperties_v12_t* p) {
  ncclResult_t res = inner->getProperties(d, p);
  if (res != ncclSuccess) return res;
  if (net_broken_speed0) p->speed = 0;
  if (net_broken_maxcomms0) p->maxComms = 0;
  return res;
}
static ncclResult_t net_broken_listen(void* ctx, int d, void* h, void** l) { return inner->listen(ctx, d, h, l); }
static ncclResult_t net_broken_connect(void* ctx, int d, void* h, void** s, ncclNetDeviceHandle_v12_t** dh) {
  return inner->connect(ctx, d, h, s, dh);
}
static ncclResult_t net_broken_accept(void* l, void** r, ncclNetDeviceHandle_v12_t** dh) { return inner->accept(l, r, dh); }
static ncclResult_t net_broken_reg(void* c, void* d, size_t s, int t, void** m) { return inner->regMr(c, d, s, t, m); }
static ncclResult_t net_broken_dereg(void* c, void* m) { return inner->deregMr(c, m); }
static ncclResult_t net_broken_isend(void* c, void* d, size_t s, int t, void* m, void* p, void** r) {
  return inner->isend(c, d, s, t, m, p, r);
}

static ncclResult_t net_broken_irecv(void* c, int n, void** data, size_t* sizes, int* tags, void** mh, void** ph,
                                     void** req) {
  ncclResult_t res = inner->irecv(c, n, data, sizes, tags, mh, ph, req);
  if (res != ncclSuccess || !*req || n > 8) return res;
  pthread_mutex_lock(&net_broken_lock);
  for (int i = 0; i < 256; i++)
    if (!net_broken_recvs[i].req) {
      net_broken_recvs[i].req = *req;
      net_broken_recvs[i].comm = c;
      net_broken_recvs[i].seq = net_broken_seq++;
      net_broken_recvs[i].n = n;
      memcpy(net_broken_recvs[i].data, data, sizeof(void*) * (size_t)n);
      break;
    }
  pthread_mutex_unlock(&net_broken_lock);
  return res;
}

/* inorder: is an earlier receive of req's connection unfinished? */
static int net_broken_out_of_order(void* req) {
  int early = 0;
  pthread_mutex_lock(&net_broken_lock);
  for (int i = 0; i < 256 && !early; i++) {
    const net_broken_recv_t* r = &net_broken_recvs[i];
    if (r->req != req) continue;
    for (int j = 0; j < 256; j++) {
      const net_broken_recv_t* o = &net_broken_recvs[j];
      if (o->req && o->comm == r->comm && o->seq < r->seq) early = 1;
    }
  }
  pthread_mutex_unlock(&net_broken_lock);
  return early;
}

static ncclResult_t net_broken_test(void* req, int* done, int* sizes) {
  int got[8] = {0};
  if (net_broken_inorder && net_broken_out_of_order(req)) return ncclInternalError;
  ncclResult_t res = inner->test(req, done, sizes ? sizes : got);
  if (res != ncclSuccess || !*done) return res;
  pthread_mutex_lock(&net_broken_lock);
  for (int i = 0; i < 256; i++) {
    net_broken_recv_t* r = &net_broken_recvs[i];
    if (r->req != req) continue;
    for (int k = 0; k < r->n; k++) {
      int size = sizes ? sizes[k] : got[k];
      if (net_broken_sizeBug && size > 4096 && sizes) sizes[k] = size + 1; /* the bug */
      if (net_broken_corrupt && size > 0) ((unsigned char*)r->data[k])[size / 2] ^= 0x5a; /* the bug */
    }
    r->req = NULL;
    break;
  }
  pthread_mutex_unlock(&net_broken_lock);
  return res;
}

static ncclResult_t net_broken_iflush(void* c, int n, void** d, int* s, void** m, void** r) {
  return inner->iflush(c, n, d, s, m, r);
}
static ncclResult_t net_broken_close_send(void* c) { return inner->closeSend(c); }
static ncclResult_t net_broken_close_recv(void* c) { return inner->closeRecv(c); }
static ncclResult_t net_broken_close_listen(void* c) { return inner->closeListen(c); }
static ncclResult_t net_broken_finalize(void* ctx) { return inner->finalize ? inner->finalize(ctx) : ncclSuccess; }

__attribute__((visibility("default"))) const ncclNet_v12_t ncclNetPlugin_v12 = {
    .name = "BROKEN",
    .init = net_broken_init,
    .devices = net_broken_devices,
    .getProperties = net_broken_props,
    .listen = net_broken_listen,
    .connect = net_broken_connect,
    .accept = net_broken_accept,
    .regMr = net_broken_reg,
    .regMrDmaBuf = NULL,
    .deregMr = net_broken_dereg,
    .isend = net_broken_isend,
    .irecv = net_broken_irecv,
    .iflush = net_broken_iflush,
    .test = net_broken_test,
    .closeSend = net_broken_close_send,
    .closeRecv = net_broken_close_recv,
    .closeListen = net_broken_close_listen,
    .finalize = net_broken_finalize,
};
