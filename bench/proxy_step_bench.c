/* mkccl-proxy-bench TRANSPORT.so: the proxy's own cost per step.
 *
 * The net transport plugin (libmkccl-transport-net.so) is driven in one
 * thread against a null net plugin whose requests complete on the first
 * test and move no bytes, so what is timed is the proxy state machine:
 * posting, testing and retiring steps on the send and the receive side,
 * plus the connection-FIFO traffic of a simulated executor that publishes
 * and releases every step at once. Prints ns per step (send + receive).
 * A benchmark: it prints numbers and asserts nothing but progress. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "net/nccl_net.h"
#include "transport/mkccl_conn_fifo_v1.h"
#include "transport/mkccl_transport_v1.h"

/* ---- the null net: every request is done when first tested ---- */
static char nullRequest;
static ncclResult_t n_init(void** ctx, uint64_t id, ncclNetCommConfig_v12_t* c, ncclDebugLogger_t l, ncclProfilerCallback_t p) {
  (void)id, (void)c, (void)l, (void)p;
  *ctx = &nullRequest;
  return ncclSuccess;
}
static ncclResult_t n_devices(int* n) { *n = 1; return ncclSuccess; }
static ncclResult_t n_props(int dev, ncclNetProperties_v12_t* p) {
  (void)dev;
  memset(p, 0, sizeof(*p));
  p->name = "null";
  p->maxRecvs = 8;
  p->ptrSupport = NCCL_PTR_HOST;
  return ncclSuccess;
}
static ncclResult_t n_listen(void* ctx, int dev, void* handle, void** listen) {
  (void)ctx, (void)dev;
  memset(handle, 0, 8);
  *listen = &nullRequest;
  return ncclSuccess;
}
static ncclResult_t n_connect(void* ctx, int dev, void* handle, void** comm, ncclNetDeviceHandle_v12_t** dh) {
  (void)ctx, (void)dev, (void)handle, (void)dh;
  *comm = &nullRequest;
  return ncclSuccess;
}
static ncclResult_t n_accept(void* listen, void** comm, ncclNetDeviceHandle_v12_t** dh) {
  (void)listen, (void)dh;
  *comm = &nullRequest;
  return ncclSuccess;
}
static ncclResult_t n_regmr(void* c, void* d, size_t s, int t, void** mh) { (void)c, (void)d, (void)s, (void)t; *mh = &nullRequest; return ncclSuccess; }
static ncclResult_t n_deregmr(void* c, void* mh) { (void)c, (void)mh; return ncclSuccess; }
static ncclResult_t n_isend(void* comm, void* data, size_t size, int tag, void* mh, void* ph, void** request) {
  (void)comm, (void)data, (void)size, (void)tag, (void)mh, (void)ph;
  *request = &nullRequest;
  return ncclSuccess;
}
static ncclResult_t n_irecv(void* comm, int n, void** data, size_t* sizes, int* tags, void** mh, void** ph, void** request) {
  (void)comm, (void)n, (void)data, (void)sizes, (void)tags, (void)mh, (void)ph;
  *request = &nullRequest;
  return ncclSuccess;
}
static ncclResult_t n_iflush(void* comm, int n, void** data, int* sizes, void** mh, void** request) {
  (void)comm, (void)n, (void)data, (void)sizes, (void)mh;
  *request = &nullRequest;
  return ncclSuccess;
}
static ncclResult_t n_test(void* request, int* done, int* sizes) {
  (void)request;
  *done = 1;
  if (sizes) sizes[0] = 0;
  return ncclSuccess;
}
static ncclResult_t n_close(void* c) { (void)c; return ncclSuccess; }
static ncclResult_t n_finalize(void* ctx) { (void)ctx; return ncclSuccess; }
static const ncclNet_v12_t nullNet = {"null", n_init, n_devices, n_props, n_listen, n_connect, n_accept, n_regmr,
                                      NULL, n_deregmr, n_isend, n_irecv, n_iflush, n_test, n_close, n_close,
                                      n_close, NULL, NULL, NULL, n_finalize, NULL};

/* ---- services the transport asks the core for ---- */
static ncclResult_t s_alloc(void* ctx, size_t b, void** p) { (void)ctx; *p = calloc(1, b); return *p ? ncclSuccess : ncclSystemError; }
static ncclResult_t s_free(void* ctx, void* p) { (void)ctx; free(p); return ncclSuccess; }
static const void* s_net(void* ctx, void** netCtx) { (void)ctx; *netCtx = &nullRequest; return &nullNet; }
static int s_param(const char* name, int64_t* v) { (void)name, (void)v; return -1; }
static void s_log(ncclDebugLogLevel l, unsigned long f, const char* file, int line, const char* fmt, ...) {
  (void)l, (void)f, (void)file, (void)line, (void)fmt;
}

#define STEP_BYTES 4096
static const mkcclTransport_v1* T;

typedef struct {
  void* conn;
  mkcclConnInfo_v1 info;
  uint64_t step;
} side_t;

static int die(const char* what) {
  fprintf(stderr, "mkccl-proxy-bench: %s\n", what);
  exit(1);
}

static void connect_pair(void* tctx, side_t* snd, side_t* rcv) {
  mkcclPeer_v1 r0 = {0}, r1 = {0};
  r1.rank = 1;
  char infoS[MKCCL_CONNECT_INFO_BYTES], infoR[MKCCL_CONNECT_INFO_BYTES];
  mkcclConnSetup_v1 a = {.self = &r0, .peer = &r1};
  a.buffSizes[MKCCL_PROTO_SIMPLE] = STEP_BYTES * MKCCL_STEPS;
  mkcclConnSetup_v1 b = a;
  b.self = &r1, b.peer = &r0;
  if (T->send.setup(tctx, &a, infoS, &snd->conn) != ncclSuccess) die("send setup failed");
  if (T->recv.setup(tctx, &b, infoR, &rcv->conn) != ncclSuccess) die("recv setup failed");
  int doneS = 0, doneR = 0;
  for (int round = 0; round < 100 && !(doneS && doneR); round++) {
    ncclResult_t res;
    if (!doneS && (res = T->send.connect(snd->conn, infoR, &snd->info)) != ncclInProgress) {
      if (res != ncclSuccess) die("send connect failed");
      doneS = 1;
    }
    if (!doneR && (res = T->recv.connect(rcv->conn, infoS, &rcv->info)) != ncclInProgress) {
      if (res != ncclSuccess) die("recv connect failed");
      doneR = 1;
    }
  }
  if (!(doneS && doneR)) die("connect did not finish");
}

static mkcclProxyOp_v1* make_op(side_t* side, uint64_t nsteps) {
  mkcclProxyOp_v1* op = calloc(1, sizeof(*op));
  op->state = MKCCL_PROXY_OP_READY;
  op->chunkSteps = op->sliceSteps = 1;
  op->nsubs = 1;
  op->subs[0].conn = side->conn;
  op->subs[0].nsteps = nsteps;
  return op;
}

/* One op of nsteps on each side; returns seconds. */
static double run(void* tctx, side_t* snd, side_t* rcv, uint64_t nsteps) {
  mkcclProxyOp_v1* so = make_op(snd, nsteps);
  mkcclProxyOp_v1* ro = make_op(rcv, nsteps);
  uint64_t sent = 0, rcvd = 0;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  while (so->state != MKCCL_PROXY_OP_DONE || ro->state != MKCCL_PROXY_OP_DONE) {
    if (sent < nsteps && conn_fifo_can_produce(snd->info.head, snd->step)) {
      conn_fifo_publish(snd->info.connFifo, snd->info.tail, snd->step, 1, 64);
      snd->step++, sent++;
    }
    if (rcvd < nsteps && conn_fifo_can_consume(rcv->info.tail, rcv->step)) {
      conn_fifo_release(NULL, rcv->info.head, rcv->step, 1);
      rcv->step++, rcvd++;
    }
    if (so->state != MKCCL_PROXY_OP_DONE && T->send.proxyProgress(tctx, so) != ncclSuccess) die("send progress failed");
    if (ro->state != MKCCL_PROXY_OP_DONE && T->recv.proxyProgress(tctx, ro) != ncclSuccess) die("recv progress failed");
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  free(so);
  free(ro);
  return (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: mkccl-proxy-bench path/to/libmkccl-transport-net.so [steps]\n");
    return 2;
  }
  uint64_t nsteps = argc > 2 ? strtoull(argv[2], NULL, 0) : 2000000;
  void* h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!h) die(dlerror());
  T = dlsym(h, "mkcclTransportPlugin_v1");
  if (!T || T->abiVersion != MKCCL_TRANSPORT_ABI_V1) die("no mkcclTransportPlugin_v1 in that library");
  mkcclTransportServices_v1 sv;
  memset(&sv, 0, sizeof(sv));
  sv.size = sizeof(sv);
  sv.log = s_log;
  sv.hostAlloc = sv.deviceAlloc = s_alloc;
  sv.hostFree = sv.deviceFree = s_free;
  sv.net = s_net;
  sv.paramInt64 = s_param;
  sv.nRanks = 2;
  sv.cudaDev = -1;
  void* tctx;
  if (T->init(&sv, &tctx) != ncclSuccess) die("transport init failed");
  side_t snd, rcv;
  memset(&snd, 0, sizeof(snd));
  memset(&rcv, 0, sizeof(rcv));
  connect_pair(tctx, &snd, &rcv);
  run(tctx, &snd, &rcv, nsteps / 10); /* warm up */
  printf("# mkccl-proxy-bench: transport %s, null net, 1 channel, 1 step per slice\n", T->name);
  printf("#      steps   seconds   ns/step (send+recv)\n");
  for (int rep = 0; rep < 3; rep++) {
    double s = run(tctx, &snd, &rcv, nsteps);
    printf("%12llu %9.3f %9.1f\n", (unsigned long long)nsteps, s, 1e9 * s / (double)nsteps);
  }
  if (T->send.free(snd.conn) != ncclSuccess || T->recv.free(rcv.conn) != ncclSuccess) die("free failed");
  if (T->finalize(tctx) != ncclSuccess) die("finalize failed");
  return 0;
}
