/* transport-net's GPUDirect RDMA choices, with no GPU: a fake net plugin
 * that says which pointer types it takes (and may refuse GPU memory), and
 * services whose "device memory" is host memory the test tells apart. For
 * each case: where every step buffer (or pool) was allocated, how it was
 * registered (NCCL_PTR_CUDA or NCCL_PTR_HOST), the connection flags the
 * executor sees, that every isend/irecv/iflush pointer lies in the memory
 * the case expects, that data still arrives intact, whether receives were
 * flushed, and the INFO lines (a refused registration said once). Both with
 * per-connection buffers and with shared pools (OFFSET mode). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "net/nccl_net.h"
#include "transport/mkccl_conn_fifo_v1.h"
#include "transport/mkccl_transport_v1.h"

#define NCH 2
#define STEP 512
#define NSTEPS 12
#define MAXALLOC 64

/* ---- memory the fake services hand out, by kind ---- */
typedef struct {
  char* p;
  size_t n;
  int device;
} alloc_t;
static alloc_t allocs[MAXALLOC];
static int nallocs;

static ncclResult_t mem_new(size_t n, int device, void** out) {
  CHECK(nallocs < MAXALLOC);
  char* p = calloc(1, n);
  CHECK(p != NULL);
  allocs[nallocs++] = (alloc_t){p, n, device};
  *out = p;
  return ncclSuccess;
}
static void mem_del(void* p) {
  for (int i = 0; i < nallocs; i++)
    if (allocs[i].p == p) {
      free(p);
      allocs[i] = allocs[--nallocs];
      return;
    }
  CHECK_MSG(0, "freeing %p, never allocated", p);
}
/* 1 device, 0 host, -1 neither (for [p, p + n)). */
static int mem_kind(const void* p, size_t n) {
  for (int i = 0; i < nallocs; i++)
    if ((const char*)p >= allocs[i].p && (const char*)p + n <= allocs[i].p + allocs[i].n) return allocs[i].device;
  return -1;
}
static int mem_count(int device) {
  int k = 0;
  for (int i = 0; i < nallocs; i++) k += allocs[i].device == device;
  return k;
}

/* ---- the fake net: a wire per comm pair, each receive matched in order ---- */
static int ptrSupport, forceFlushProp, refuseCuda;
static int dmabufMode; /* 0 plugin does not claim it, 1 claims, service gives fds, 2 service refuses, 3 plugin refuses */
static int regDmaBuf, dmaFdLast = -1;
static int regCuda, regHost, regRefused, ioDevice, ioHost, irecvs, flushes, badPtr;
static int nextId;

typedef struct {
  int id;
  size_t sizes[64];
  char data[64][STEP];
  int head, tail;
} wire_t;
static wire_t wires[2 * NCH];
typedef struct {
  int id;
} comm_t;
typedef struct {
  int kind; /* 0 send, 1 recv, 2 flush */
  comm_t* comm;
  void* data;
  size_t size;
} req_t;
typedef struct {
  int type;
} mr_t;

static void io_seen(const void* p, size_t n, mr_t* mr) {
  int k = mem_kind(p, n);
  if (k < 0 || (k == 1) != (mr->type == NCCL_PTR_CUDA)) badPtr++;
  if (k == 1) ioDevice++;
  else ioHost++;
}

static ncclResult_t f_init(void** ctx, uint64_t id, ncclNetCommConfig_v12_t* c, ncclDebugLogger_t l, ncclProfilerCallback_t p) {
  (void)id, (void)c, (void)l, (void)p;
  *ctx = (void*)1;
  return ncclSuccess;
}
static ncclResult_t f_devices(int* n) { *n = 1; return ncclSuccess; }
static ncclResult_t f_props(int dev, ncclNetProperties_v12_t* p) {
  (void)dev;
  memset(p, 0, sizeof(*p));
  p->name = "fake";
  p->maxRecvs = 1;
  p->ptrSupport = ptrSupport | (dmabufMode ? NCCL_PTR_DMABUF : 0);
  p->forceFlush = forceFlushProp;
  return ncclSuccess;
}
static ncclResult_t f_listen(void* ctx, int dev, void* handle, void** listen) {
  (void)ctx, (void)dev;
  CHECK(nextId < 2 * NCH);
  int id = nextId++;
  memcpy(handle, &id, sizeof(id));
  comm_t* l = malloc(sizeof(*l));
  l->id = id;
  *listen = l;
  return ncclSuccess;
}
static ncclResult_t f_connect(void* ctx, int dev, void* handle, void** comm, ncclNetDeviceHandle_v12_t** dh) {
  (void)ctx, (void)dev, (void)dh;
  comm_t* c = malloc(sizeof(*c));
  memcpy(&c->id, handle, sizeof(c->id));
  *comm = c;
  return ncclSuccess;
}
static ncclResult_t f_accept(void* listen, void** comm, ncclNetDeviceHandle_v12_t** dh) {
  (void)dh;
  comm_t* c = malloc(sizeof(*c));
  c->id = ((comm_t*)listen)->id;
  *comm = c;
  return ncclSuccess;
}
static ncclResult_t f_regmr(void* c, void* d, size_t s, int t, void** mh) {
  (void)c;
  if (t == NCCL_PTR_CUDA && refuseCuda) {
    regRefused++;
    return ncclSystemError;
  }
  int k = mem_kind(d, s);
  CHECK_MSG(k == (t == NCCL_PTR_CUDA), "regMr type %d of %s memory", t, k == 1 ? "device" : k == 0 ? "host" : "unknown");
  if (t == NCCL_PTR_CUDA) regCuda++;
  else regHost++;
  mr_t* mr = malloc(sizeof(*mr));
  mr->type = t;
  *mh = mr;
  return ncclSuccess;
}
static ncclResult_t f_deregmr(void* c, void* mh) { (void)c; free(mh); return ncclSuccess; }
static req_t* req_new(int kind, comm_t* comm, void* data, size_t size) {
  req_t* r = calloc(1, sizeof(*r));
  r->kind = kind, r->comm = comm, r->data = data, r->size = size;
  return r;
}
static ncclResult_t f_isend(void* comm, void* data, size_t size, int tag, void* mh, void* ph, void** request) {
  (void)tag, (void)ph;
  comm_t* c = comm;
  wire_t* w = &wires[c->id];
  CHECK(size <= STEP && w->tail - w->head < 64);
  io_seen(data, size, mh);
  memcpy(w->data[w->tail % 64], data, size);
  w->sizes[w->tail++ % 64] = size;
  *request = req_new(0, c, data, size);
  return ncclSuccess;
}
static ncclResult_t f_irecv(void* comm, int n, void** data, size_t* sizes, int* tags, void** mh, void** ph, void** request) {
  (void)tags, (void)ph;
  CHECK_EQ_INT(n, 1);
  io_seen(data[0], sizes[0], mh[0]);
  irecvs++;
  *request = req_new(1, comm, data[0], sizes[0]);
  return ncclSuccess;
}
static ncclResult_t f_iflush(void* comm, int n, void** data, int* sizes, void** mh, void** request) {
  (void)comm;
  CHECK_EQ_INT(n, 1);
  io_seen(data[0], (size_t)sizes[0], mh[0]);
  flushes++;
  *request = req_new(2, comm, NULL, 0);
  return ncclSuccess;
}
/* Receives complete in post order, once their message is on the wire. */
static ncclResult_t f_test(void* request, int* done, int* sizes) {
  req_t* r = request;
  *done = 0;
  if (r->kind == 1) {
    wire_t* w = &wires[r->comm->id];
    if (w->head == w->tail) return ncclSuccess;
    size_t n = w->sizes[w->head % 64];
    CHECK(n <= r->size);
    memcpy(r->data, w->data[w->head++ % 64], n);
    if (sizes) sizes[0] = (int)n;
  }
  *done = 1;
  free(r);
  return ncclSuccess;
}
/* dma-buf: the fd must be one the services handed out and still open;
 * counted as a CUDA registration too. */
static ncclResult_t f_regmr_dmabuf(void* c, void* d, size_t s, int t, uint64_t offset, int fd, void** mh) {
  CHECK_MSG(fd == dmaFdLast && fcntl(fd, F_GETFD) >= 0, "regMrDmaBuf with fd %d, not the open one the core gave", fd);
  CHECK_MSG(t == NCCL_PTR_CUDA && offset == 0, "regMrDmaBuf type %d offset %llu", t, (unsigned long long)offset);
  if (dmabufMode == 3) return ncclSystemError;
  regDmaBuf++;
  return f_regmr(c, d, s, t, mh);
}
static ncclResult_t f_close(void* c) { free(c); return ncclSuccess; }
static ncclResult_t f_finalize(void* ctx) { (void)ctx; return ncclSuccess; }

static const ncclNet_v12_t fakeNet = {"fake", f_init, f_devices, f_props, f_listen, f_connect, f_accept, f_regmr,
                                      f_regmr_dmabuf, f_deregmr, f_isend, f_irecv, f_iflush, f_test, f_close, f_close,
                                      f_close, NULL, NULL, NULL, f_finalize, NULL};

/* ---- services ---- */
static int sharedBuffers;
#define MAXLINES 64
static char infoLines[MAXLINES][512];
static int ninfo;
static ncclResult_t s_halloc(void* ctx, size_t b, void** p) { (void)ctx; return mem_new(b, 0, p); }
static ncclResult_t s_dalloc(void* ctx, size_t b, void** p) { (void)ctx; return mem_new(b, 1, p); }
static ncclResult_t s_free(void* ctx, void* p) { (void)ctx; mem_del(p); return ncclSuccess; }
static const void* s_net(void* ctx, void** netCtx) { (void)ctx; *netCtx = (void*)1; return &fakeNet; }
static int s_param(const char* name, int64_t* v) {
  if (!strcmp(name, "NCCL_NET_SHARED_COMMS")) { *v = 0; return 0; }
  if (!strcmp(name, "NCCL_NET_SHARED_BUFFERS")) { *v = sharedBuffers; return 0; }
  return -1;
}
static void s_log(ncclDebugLogLevel l, unsigned long f, const char* file, int line, const char* fmt, ...) {
  (void)f, (void)file, (void)line;
  if (l != NCCL_LOG_INFO || ninfo == MAXLINES) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(infoLines[ninfo++], sizeof(infoLines[0]), fmt, ap);
  va_end(ap);
}
static int info_count(const char* text) {
  int k = 0;
  for (int i = 0; i < ninfo; i++) k += strstr(infoLines[i], text) != NULL;
  return k;
}

static const mkcclTransport_v1* T;

typedef struct {
  void* conn;
  mkcclConnInfo_v1 info;
  uint64_t step;
} side_t;

static void connect_all(void* tctx, int deviceMem, side_t* snd, side_t* rcv) {
  mkcclPeer_v1 r0 = {0}, r1 = {0};
  r0.rank = 0, r1.rank = 1;
  r0.cudaDev = r1.cudaDev = deviceMem ? 0 : -1;
  char infoS[NCH][MKCCL_CONNECT_INFO_BYTES], infoR[NCH][MKCCL_CONNECT_INFO_BYTES];
  for (int c = 0; c < NCH; c++) {
    mkcclConnSetup_v1 a = {&r0, &r1, c, 1, deviceMem, {0, 0, STEP * MKCCL_STEPS}, 1};
    CHECK_NCCL(T->send.setup(tctx, &a, infoS[c], &snd[c].conn));
    mkcclConnSetup_v1 b = {&r1, &r0, c, 1, deviceMem, {0, 0, STEP * MKCCL_STEPS}, 1};
    CHECK_NCCL(T->recv.setup(tctx, &b, infoR[c], &rcv[c].conn));
  }
  for (int c = 0; c < NCH; c++) {
    CHECK_NCCL(T->recv.connect(rcv[c].conn, infoS[c], &rcv[c].info));
    CHECK_NCCL(T->send.connect(snd[c].conn, infoR[c], &snd[c].info));
  }
}

static unsigned char pattern(int c, uint64_t step, int i) { return (unsigned char)(c * 29 + step * 5 + (uint64_t)i); }

/* One op of NSTEPS one-step slices on every channel, the executor played
 * as host_prims does (OFFSET slots where connFifo says). */
static void run_op(void* tctx, side_t* snd, side_t* rcv) {
  mkcclProxyOp_v1* so = calloc(1, sizeof(*so));
  mkcclProxyOp_v1* ro = calloc(1, sizeof(*ro));
  mkcclProxyOp_v1* ops[2] = {so, ro};
  for (int k = 0; k < 2; k++) {
    ops[k]->state = MKCCL_PROXY_OP_READY;
    ops[k]->chunkSteps = ops[k]->sliceSteps = 1;
    ops[k]->nsubs = NCH;
    for (int c = 0; c < NCH; c++) {
      ops[k]->subs[c].conn = k ? rcv[c].conn : snd[c].conn;
      ops[k]->subs[c].nsteps = NSTEPS;
      ops[k]->subs[c].channelId = c;
    }
  }
  uint64_t sent[NCH] = {0}, got[NCH] = {0};
  for (int round = 0; round < 10000 && (so->state != MKCCL_PROXY_OP_DONE || ro->state != MKCCL_PROXY_OP_DONE); round++) {
    for (int c = 0; c < NCH; c++) {
      side_t* s = &snd[c];
      int shared = (s->info.flags & MKCCL_CONN_SHARED) != 0;
      int room = shared ? conn_fifo_load(s->info.head) >= s->step + 1 : conn_fifo_can_produce(s->info.head, s->step);
      if (sent[c] < NSTEPS && room) {
        int slot = conn_fifo_slot(s->step);
        char* buf = s->info.buffs[MKCCL_PROTO_SIMPLE] + (shared ? (size_t)s->info.connFifo[slot].offset : (size_t)slot * STEP);
        for (int i = 0; i < 300; i++) buf[i] = (char)pattern(c, s->step, i);
        conn_fifo_publish(s->info.connFifo, s->info.tail, s->step, 1, 300);
        s->step++, sent[c]++;
      }
      side_t* r = &rcv[c];
      if (got[c] < NSTEPS && conn_fifo_can_consume(r->info.tail, r->step)) {
        int slot = conn_fifo_slot(r->step);
        const mkcclConnFifo_v1* f = &r->info.connFifo[slot];
        int offset = (r->info.flags & MKCCL_CONN_USE_FIFO) && f->mode == MKCCL_MODE_OFFSET;
        const char* buf = r->info.buffs[MKCCL_PROTO_SIMPLE] + (offset ? (size_t)f->offset : (size_t)slot * STEP);
        for (int i = 0; i < 300; i++) CHECK_EQ_INT((unsigned char)buf[i], pattern(c, r->step, i));
        conn_fifo_release(NULL, r->info.head, r->step, 1);
        r->step++, got[c]++;
      }
    }
    if (so->state != MKCCL_PROXY_OP_DONE) CHECK_NCCL(T->send.proxyProgress(tctx, so));
    if (ro->state != MKCCL_PROXY_OP_DONE) CHECK_NCCL(T->recv.proxyProgress(tctx, ro));
  }
  CHECK_EQ_INT(so->state, MKCCL_PROXY_OP_DONE);
  CHECK_EQ_INT(ro->state, MKCCL_PROXY_OP_DONE);
  free(so);
  free(ro);
}

typedef struct {
  const char* name;
  int deviceMem, ptr, gdrLevel, gdrRead, sm, forceFlush, refuse;
  int sendDev, recvDev; /* expected: the side's buffers in device memory */
  int flush;            /* expected: every receive flushed */
  const char* line;     /* an INFO line that must be there, or NULL */
  int path;             /* the GPU-NIC path type the core reports (0 LOC when left out); -1 unknown;
                           NO_PATH_SERVICE: a core without netGpuPath */
  int dmabuf;           /* dmabufMode */
} case_t;
#define NO_PATH_SERVICE (-2)

static int casePath;
/* The fake core's dma-buf export: a fresh fd (closed by the transport
 * once registered), offset 0 (the test's allocations start the range). */
static ncclResult_t s_dmabuf(void* ctx, const void* ptr, size_t bytes, int* fd, uint64_t* offset) {
  (void)ctx;
  CHECK_MSG(mem_kind(ptr, bytes) == 1, "dma-buf asked of %zu bytes that are not device memory", bytes);
  if (dmabufMode == 2) return ncclInvalidUsage;
  CHECK_MSG(dmaFdLast < 0 || fcntl(dmaFdLast, F_GETFD) < 0, "the last dma-buf fd %d was never closed", dmaFdLast);
  *fd = dmaFdLast = open("/dev/null", O_RDONLY | O_CLOEXEC);
  CHECK(*fd >= 0);
  *offset = 0;
  return ncclSuccess;
}
static int s_net_gpu_path(void* ctx, int dev) {
  (void)ctx;
  return dev == 0 ? casePath : -1;
}

static void run_case(const case_t* k, int shared) {
  memset(wires, 0, sizeof(wires));
  nextId = 0;
  ninfo = 0;
  ptrSupport = k->ptr, forceFlushProp = k->forceFlush, refuseCuda = k->refuse;
  regCuda = regHost = regRefused = ioDevice = ioHost = irecvs = flushes = badPtr = 0;
  sharedBuffers = shared;
  mkcclTransportServices_v1 sv;
  memset(&sv, 0, sizeof(sv));
  sv.size = sizeof(sv);
  sv.log = s_log;
  sv.hostAlloc = s_halloc;
  sv.deviceAlloc = s_dalloc;
  sv.hostFree = sv.deviceFree = s_free;
  sv.net = s_net;
  sv.paramInt64 = s_param;
  sv.nRanks = 2;
  sv.cudaDev = k->deviceMem ? 0 : -1;
  sv.sm = k->sm;
  sv.netGdrLevel = k->gdrLevel;
  sv.netGdrRead = k->gdrRead;
  casePath = k->path;
  sv.netGpuPath = s_net_gpu_path;
  dmabufMode = k->dmabuf;
  regDmaBuf = 0;
  dmaFdLast = -1;
  sv.dmaBufFd = s_dmabuf;
  if (k->path == NO_PATH_SERVICE) sv.size = offsetof(mkcclTransportServices_v1, netGpuPath);
  void* tctx;
  CHECK_NCCL(T->init(&sv, &tctx));
  side_t snd[NCH], rcv[NCH];
  memset(snd, 0, sizeof(snd));
  memset(rcv, 0, sizeof(rcv));
  connect_all(tctx, k->deviceMem, snd, rcv);
  for (int c = 0; c < NCH; c++) {
    const side_t* sides[2] = {&snd[c], &rcv[c]};
    for (int d = 0; d < 2; d++) {
      int want = d == 0 ? k->sendDev : k->recvDev;
      const mkcclConnInfo_v1* in = &sides[d]->info;
      CHECK_MSG(mem_kind(in->buffs[MKCCL_PROTO_SIMPLE], STEP) == want, "%s (shared %d): channel %d %s buffer in %s memory",
                k->name, shared, c, d ? "recv" : "send", want ? "host" : "device");
      CHECK_MSG(!!(in->flags & MKCCL_CONN_DEVICE_MEM) == want, "%s (shared %d): MKCCL_CONN_DEVICE_MEM %s", k->name, shared,
                want ? "missing" : "set");
      CHECK(mem_kind((const void*)in->tail, 8) == 0 && mem_kind((const void*)in->head, 8) == 0); /* control words: host */
      /* User buffers in place: a host rank always; a GPU rank's sends where
       * the plugin takes its GPU memory (step buffers or pool). */
      if (d == 0) {
        int ptr = !k->deviceMem || want;
        CHECK_MSG(!!(in->flags & MKCCL_CONN_PTR_READ) == ptr, "%s (shared %d): channel %d: MKCCL_CONN_PTR_READ %s",
                  k->name, shared, c, ptr ? "missing" : "set");
      }
    }
  }
  /* One registration per connection (shared comms off: a pool once per comm). */
  int wantCuda = NCH * (k->sendDev + k->recvDev);
  CHECK_MSG(regCuda == wantCuda && regHost == 2 * NCH - wantCuda, "%s (shared %d): regMr CUDA %d HOST %d, wanted %d %d",
            k->name, shared, regCuda, regHost, wantCuda, 2 * NCH - wantCuda);
  CHECK_MSG(regDmaBuf == (k->dmabuf == 1 ? wantCuda : 0), "%s (shared %d): %d registrations through dma-buf", k->name,
            shared, regDmaBuf);
  CHECK_MSG(dmaFdLast < 0 || fcntl(dmaFdLast, F_GETFD) < 0, "%s (shared %d): a dma-buf fd left open", k->name, shared);
  run_op(tctx, snd, rcv);
  CHECK_MSG(badPtr == 0, "%s (shared %d): %d net call(s) on pointers outside the memory their registration says",
            k->name, shared, badPtr);
  CHECK_EQ_INT(ioDevice > 0, k->sendDev || k->recvDev);
  CHECK_MSG(k->flush ? flushes == irecvs : flushes == 0, "%s (shared %d): %d iflush for %d irecv", k->name, shared,
            flushes, irecvs);
  if (k->line) CHECK_MSG(info_count(k->line) == 1, "%s (shared %d): INFO '%s' said %d times", k->name, shared, k->line,
                         info_count(k->line));
  CHECK_EQ_INT(info_count("refused GPU memory"), k->refuse && k->deviceMem && (k->ptr & NCCL_PTR_CUDA) ? 1 : 0);
  for (int c = 0; c < NCH; c++) {
    CHECK_NCCL(T->send.free(snd[c].conn));
    CHECK_NCCL(T->recv.free(rcv[c].conn));
  }
  CHECK_NCCL(T->finalize(tctx));
  CHECK_MSG(mem_count(1) == 0 && mem_count(0) == 0, "%s (shared %d): %d device and %d host allocation(s) left", k->name,
            shared, mem_count(1), mem_count(0));
}

static const case_t cases[] = {
    {"host executor", 0, NCCL_PTR_HOST | NCCL_PTR_CUDA, -1, -1, 0, 0, 0, 0, 0, 0, NULL, 0, 0},
    {"host-only plugin", 1, NCCL_PTR_HOST, -1, -1, 90, 0, 0, 0, 0, 0, "receives staged in host memory: the net plugin does not take CUDA pointers", 0, 0},
    {"gdr on Hopper", 1, NCCL_PTR_HOST | NCCL_PTR_CUDA, -1, -1, 90, 0, 0, 1, 1, 0, "GPUDirect RDMA for receives", 0, 0},
    {"gdr, plugin forces flush", 1, NCCL_PTR_HOST | NCCL_PTR_CUDA, -1, -1, 90, 1, 0, 1, 1, 1, "GPUDirect RDMA for sends", 0, 0},
    {"gdr on Ampere flushes", 1, NCCL_PTR_HOST | NCCL_PTR_CUDA, -1, -1, 80, 0, 0, 1, 1, 1, NULL, 0, 0},
    {"gdr on Volta: no GPU reads", 1, NCCL_PTR_HOST | NCCL_PTR_CUDA, -1, -1, 70, 0, 0, 0, 1, 1, "sends staged in host memory: sends read GPU memory only from sm_80", 0, 0},
    {"NCCL_NET_GDR_READ=1 on Volta", 1, NCCL_PTR_HOST | NCCL_PTR_CUDA, -1, 1, 70, 0, 0, 1, 1, 1, NULL, 0, 0},
    {"NCCL_NET_GDR_READ=0", 1, NCCL_PTR_HOST | NCCL_PTR_CUDA, -1, 0, 90, 0, 0, 0, 1, 0, "sends staged in host memory: NCCL_NET_GDR_READ=0", 0, 0},
    {"NCCL_NET_GDR_LEVEL=LOC", 1, NCCL_PTR_HOST | NCCL_PTR_CUDA, 0, -1, 90, 0, 0, 0, 0, 0, "receives staged in host memory: NCCL_NET_GDR_LEVEL=LOC", 0, 0},
    {"NCCL_NET_GDR_LEVEL=SYS", 1, NCCL_PTR_HOST | NCCL_PTR_CUDA, 9, -1, 90, 0, 0, 1, 1, 0, NULL, 0, 0},
    {"plugin refuses GPU memory", 1, NCCL_PTR_HOST | NCCL_PTR_CUDA, -1, -1, 90, 1, 1, 0, 0, 0, "net data goes through host memory", 0, 0},
    /* The GPU-NIC distance against NCCL_NET_GDR_LEVEL (unset: PXB; P2C near too). */
    {"NIC one switch away (PIX)", 1, NCCL_PTR_HOST | NCCL_PTR_CUDA, -1, -1, 90, 0, 0, 1, 1, 0, "GPUDirect RDMA for receives: step buffers in GPU memory (the NIC is PIX from the GPU)", 4, 0},
    {"NIC under switches (PXB)", 1, NCCL_PTR_HOST | NCCL_PTR_CUDA, -1, -1, 90, 0, 0, 1, 1, 0, "GPUDirect RDMA for sends: step buffers in GPU memory (the NIC is PXB from the GPU)", 5, 0},
    {"NIC on a C2C CPU (P2C)", 1, NCCL_PTR_HOST | NCCL_PTR_CUDA, -1, -1, 90, 0, 0, 1, 1, 0, "GPUDirect RDMA for receives: step buffers in GPU memory (the NIC is P2C from the GPU)", 6, 0},
    {"NIC behind the host bridge (PHB)", 1, NCCL_PTR_HOST | NCCL_PTR_CUDA, -1, -1, 90, 0, 0, 0, 0, 0, "receives staged in host memory: the NIC is PHB from the GPU, farther than NCCL_NET_GDR_LEVEL's default PXB", 8, 0},
    {"NIC across the CPUs (SYS)", 1, NCCL_PTR_HOST | NCCL_PTR_CUDA, -1, -1, 90, 0, 0, 0, 0, 0, "sends staged in host memory: the NIC is SYS from the GPU, farther than NCCL_NET_GDR_LEVEL's default PXB", 9, 0},
    {"NCCL_NET_GDR_LEVEL=PHB, NIC at PHB", 1, NCCL_PTR_HOST | NCCL_PTR_CUDA, 8, -1, 90, 0, 0, 1, 1, 0, NULL, 8, 0},
    {"NCCL_NET_GDR_LEVEL=PIX, NIC at PXB", 1, NCCL_PTR_HOST | NCCL_PTR_CUDA, 4, -1, 90, 0, 0, 0, 0, 0, "receives staged in host memory: the NIC is PXB from the GPU, farther than NCCL_NET_GDR_LEVEL PIX", 5, 0},
    {"distance unknown", 1, NCCL_PTR_HOST | NCCL_PTR_CUDA, -1, -1, 90, 0, 0, 1, 1, 0, "GPUDirect RDMA for sends: step buffers in GPU memory (GPU-NIC distance unknown)", -1, 0},
    {"dma-buf", 1, NCCL_PTR_HOST | NCCL_PTR_CUDA, -1, -1, 90, 0, 0, 1, 1, 0, "GPU memory registered through dma-buf", 0, 1},
    {"dma-buf not exported", 1, NCCL_PTR_HOST | NCCL_PTR_CUDA, -1, -1, 90, 0, 0, 1, 1, 0, NULL, 0, 2},
    {"dma-buf refused by the plugin", 1, NCCL_PTR_HOST | NCCL_PTR_CUDA, -1, -1, 90, 0, 0, 1, 1, 0, "regMrDmaBuf failed (2): regMr instead", 0, 3},
    {"core without the distance", 1, NCCL_PTR_HOST | NCCL_PTR_CUDA, -1, -1, 90, 0, 0, 1, 1, 0, "GPUDirect RDMA for receives: step buffers in GPU memory (GPU-NIC distance unknown)", NO_PATH_SERVICE, 0},
};

int main(int argc, char** argv) {
  CHECK(argc > 1);
  void* h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  CHECK_MSG(h != NULL, "%s", dlerror());
  T = dlsym(h, "mkcclTransportPlugin_v1");
  CHECK(T && T->abiVersion == MKCCL_TRANSPORT_ABI_V1 && !strcmp(T->name, "net"));
  for (int shared = 0; shared < 2; shared++)
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
      run_case(&cases[i], shared);
      printf("ok: %s%s\n", cases[i].name, shared ? " (shared pools)" : "");
    }
  return 0;
}
