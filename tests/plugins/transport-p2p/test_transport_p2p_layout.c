/* transport-p2p's memory layout, with fake GPU services ("device" memory is
 * host memory, an IPC handle carries the pointer): for write and read mode,
 * with and without LL lines, and for a peer in this process and in another,
 * the sender and the receiver must agree on every address, the LL lines
 * must sit in the receiver's region (the sender stores across the link, the
 * receiver polls locally), and no buffer may overlap another or the control
 * words. Both sides get the FIFO by which sends go as addresses (P2P
 * direct: any buffer to a peer of this process, addresses of its own to
 * one of another), unless NCCL_P2P_DIRECT_DISABLE or services that
 * predate it say no. Then imports: a peer's region that overlaps one imported earlier
 * from the same process closes the earlier (stale) import first, once.
 * Usage: test_transport_p2p_layout PATH/libmkccl-transport-p2p.so */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "transport_plugin.h"
#include "transport/mkccl_transport_v1.h"

/* Regions handed out, to find which one an address falls in. */
static struct {
  char* p;
  size_t n;
} regions[16];
static int nRegions, nOpen;
static void* lastClosed;

static ncclResult_t fake_alloc(void* ctx, size_t bytes, void** ptr) {
  (void)ctx;
  CHECK(nRegions < 16);
  *ptr = calloc(1, bytes);
  regions[nRegions].p = *ptr;
  regions[nRegions++].n = bytes;
  return ncclSuccess;
}
static ncclResult_t fake_free(void* ctx, void* ptr) {
  (void)ctx;
  for (int i = 0; i < nRegions; i++)
    if (regions[i].p == ptr) regions[i].p = NULL;
  free(ptr);
  return ncclSuccess;
}
static ncclResult_t fake_ipc_handle(void* ctx, void* ptr, void* handle) {
  (void)ctx;
  memcpy(handle, &ptr, sizeof(ptr));
  return ncclSuccess;
}
static ncclResult_t fake_ipc_open(void* ctx, const void* handle, void** ptr) {
  (void)ctx;
  memcpy(ptr, handle, sizeof(*ptr));
  nOpen++;
  return ncclSuccess;
}
static ncclResult_t fake_ipc_close(void* ctx, void* ptr) {
  (void)ctx;
  lastClosed = ptr;
  nOpen--;
  return ncclSuccess;
}
static void fake_log(ncclDebugLogLevel l, unsigned long f, const char* file, int line, const char* fmt, ...) {
  (void)l, (void)f, (void)file, (void)line, (void)fmt;
}

/* Which region holds [p, p + n), and at what offset; -1 if none. */
static int region_of(const char* p, size_t n, size_t* off) {
  for (int i = 0; i < nRegions; i++)
    if (regions[i].p && p >= regions[i].p && p + n <= regions[i].p + regions[i].n) {
      *off = (size_t)(p - regions[i].p);
      return i;
    }
  return -1;
}

static int overlap(const char* a, size_t an, const char* b, size_t bn) { return a < b + bn && b < a + an; }

static const mkcclTransport_v1* T;

static void fake_services(mkcclTransportServices_v1* sv) {
  memset(sv, 0, sizeof(*sv));
  sv->size = sizeof(*sv);
  sv->log = fake_log;
  sv->deviceAlloc = fake_alloc;
  sv->deviceFree = fake_free;
  sv->ipcHandle = fake_ipc_handle;
  sv->ipcOpen = fake_ipc_open;
  sv->ipcClose = fake_ipc_close;
  sv->cudaDev = 0;
  sv->sm = 90;
  sv->p2pRead = 0;
}


/* direct: the services' p2pDirect (NCCL_P2P_DIRECT_DISABLE=0), 0 (=1), or
 * -1: services from before the field (size short of it). */
static void run_case(int readMode, int llBytes, int samePid, int direct) {
  mkcclTransportServices_v1 sv;
  fake_services(&sv);
  sv.p2pRead = readMode;
  sv.p2pDirect = direct > 0;
  if (direct < 0) sv.size = offsetof(mkcclTransportServices_v1, p2pDirect);
  void* tctx = NULL;
  CHECK(T->init(&sv, &tctx) == ncclSuccess);
  mkcclPeer_v1 a, b;
  memset(&a, 0, sizeof(a));
  memset(&b, 0, sizeof(b));
  a.rank = 0, b.rank = 1, a.cudaDev = 0, b.cudaDev = 1;
  a.pidHash = 7, b.pidHash = samePid ? 7 : 8;
  const int simpleBytes = 8 * 4096;
  mkcclConnSetup_v1 sa, ra;
  memset(&sa, 0, sizeof(sa));
  sa.self = &a, sa.peer = &b, sa.deviceMem = 1;
  sa.buffSizes[MKCCL_PROTO_SIMPLE] = simpleBytes;
  sa.buffSizes[MKCCL_PROTO_LL] = llBytes;
  ra = sa;
  ra.self = &b, ra.peer = &a;
  char sInfo[MKCCL_CONNECT_INFO_BYTES], rInfo[MKCCL_CONNECT_INFO_BYTES];
  void *sConn = NULL, *rConn = NULL;
  nRegions = 0;
  CHECK(T->send.setup(tctx, &sa, sInfo, &sConn) == ncclSuccess);
  CHECK(T->recv.setup(tctx, &ra, rInfo, &rConn) == ncclSuccess);
  CHECK(nRegions == 2); /* region 0: the sender's, 1: the receiver's */
  mkcclConnInfo_v1 si, ri;
  CHECK(T->send.connect(sConn, rInfo, &si) == ncclSuccess);
  CHECK(T->recv.connect(rConn, sInfo, &ri) == ncclSuccess);
  CHECK(nOpen == (samePid ? 0 : 2));

  /* Both sides see the same words and buffers. */
  CHECK(si.buffs[MKCCL_PROTO_SIMPLE] == ri.buffs[MKCCL_PROTO_SIMPLE]);
  CHECK(si.stepSize[MKCCL_PROTO_SIMPLE] == simpleBytes / MKCCL_STEPS);
  CHECK(si.stepSize[MKCCL_PROTO_SIMPLE] == ri.stepSize[MKCCL_PROTO_SIMPLE]);
  CHECK(si.buffs[MKCCL_PROTO_LL] == ri.buffs[MKCCL_PROTO_LL]);
  CHECK(si.stepSize[MKCCL_PROTO_LL] == ri.stepSize[MKCCL_PROTO_LL]);
  CHECK(si.tail == ri.tail && si.head == ri.head);

  /* Simple: with the receiver in write mode, with the sender in read mode. */
  size_t off;
  CHECK(region_of(si.buffs[MKCCL_PROTO_SIMPLE], simpleBytes, &off) == (readMode ? 0 : 1));
  /* LL: with the receiver, whole, 16-byte lines. */
  if (llBytes) {
    CHECK(si.stepSize[MKCCL_PROTO_LL] == llBytes / MKCCL_STEPS);
    CHECK(region_of(si.buffs[MKCCL_PROTO_LL], (size_t)llBytes, &off) == 1);
    CHECK(off % 16 == 0);
    CHECK(!overlap(si.buffs[MKCCL_PROTO_LL], (size_t)llBytes, si.buffs[MKCCL_PROTO_SIMPLE], simpleBytes));
    CHECK(!overlap(si.buffs[MKCCL_PROTO_LL], (size_t)llBytes, (const char*)si.tail, 8));
    CHECK(!overlap(si.buffs[MKCCL_PROTO_LL], (size_t)llBytes, (const char*)si.head, 8));
    /* Zeroed: a line's flag 0 is no step. */
    for (int i = 0; i < llBytes; i++) CHECK(si.buffs[MKCCL_PROTO_LL][i] == 0);
  } else {
    CHECK(si.buffs[MKCCL_PROTO_LL] == NULL);
  }
  CHECK(!overlap(si.buffs[MKCCL_PROTO_SIMPLE], simpleBytes, (const char*)si.tail, 8));
  CHECK(!overlap(si.buffs[MKCCL_PROTO_SIMPLE], simpleBytes, (const char*)si.head, 8));

  /* Direct: the receiver reads the sender's buffers in place, through a
   * FIFO both sides find among the receiver's control words; a peer of
   * this process any buffer (by the sender's address), one of another
   * process only addresses of its own. */
  const uint32_t allPtr = MKCCL_CONN_USE_FIFO | MKCCL_CONN_PTR_READ | MKCCL_CONN_PTR_ANY | MKCCL_CONN_PTR_PEER;
  const uint32_t ptrFlags =
      MKCCL_CONN_USE_FIFO | (samePid ? MKCCL_CONN_PTR_READ | MKCCL_CONN_PTR_ANY : MKCCL_CONN_PTR_PEER);
  if (direct > 0) {
    CHECK_MSG(si.connFifo && si.connFifo == ri.connFifo, "direct: the sides' FIFOs %p and %p", (void*)si.connFifo,
              (void*)ri.connFifo);
    CHECK_MSG((si.flags & allPtr) == ptrFlags && (ri.flags & allPtr) == ptrFlags,
              "direct, peer in %s process: flags %#x and %#x, expected %#x", samePid ? "this" : "another", si.flags,
              ri.flags, ptrFlags);
    size_t fifoBytes = sizeof(mkcclConnFifo_v1) * MKCCL_STEPS;
    CHECK(region_of((const char*)si.connFifo, fifoBytes, &off) == 1);
    CHECK(off + fifoBytes <= 4096); /* within the control words */
    CHECK(!overlap((const char*)si.connFifo, fifoBytes, (const char*)si.tail, 8));
    CHECK(!overlap((const char*)si.connFifo, fifoBytes, (const char*)si.head, 8));
    for (int k = 0; k < MKCCL_STEPS; k++) CHECK(si.connFifo[k].mode == MKCCL_MODE_NORMAL);
  } else {
    CHECK(si.connFifo == NULL && ri.connFifo == NULL);
    CHECK(!(si.flags & allPtr) && !(ri.flags & allPtr));
  }
  CHECK(T->send.free(sConn) == ncclSuccess);
  CHECK(T->recv.free(rConn) == ncclSuccess);
  CHECK(nOpen == 0);
  if (T->finalize) CHECK(T->finalize(tctx) == ncclSuccess);
  printf("ok: %s mode, LL %d bytes, peer in %s process, direct %d\n", readMode ? "read" : "write", llBytes,
         samePid ? "this" : "another", direct);
}

/* Receivers of two communicators import senders of the same process: the
 * second sender's region where the first's was (freed and made again)
 * makes the first import stale; another region leaves it alone. */
static void run_stale_imports(void) {
  mkcclTransportServices_v1 sv;
  fake_services(&sv);
  void* tctx = NULL;
  CHECK(T->init(&sv, &tctx) == ncclSuccess);
  mkcclPeer_v1 a, b;
  memset(&a, 0, sizeof(a));
  memset(&b, 0, sizeof(b));
  a.rank = 0, b.rank = 1, a.cudaDev = 0, b.cudaDev = 1, a.pidHash = 7, b.pidHash = 8;
  mkcclConnSetup_v1 sa, ra;
  memset(&sa, 0, sizeof(sa));
  sa.self = &a, sa.peer = &b, sa.deviceMem = 1;
  sa.buffSizes[MKCCL_PROTO_SIMPLE] = 8 * 4096;
  ra = sa;
  ra.self = &b, ra.peer = &a;
  char sInfo[2][MKCCL_CONNECT_INFO_BYTES], rInfo[3][MKCCL_CONNECT_INFO_BYTES];
  void *sConn[2], *rConn[3];
  mkcclConnInfo_v1 ri[3];
  nRegions = nOpen = 0;
  CHECK(T->send.setup(tctx, &sa, sInfo[0], &sConn[0]) == ncclSuccess);
  CHECK(T->send.setup(tctx, &sa, sInfo[1], &sConn[1]) == ncclSuccess);
  for (int i = 0; i < 3; i++) CHECK(T->recv.setup(tctx, &ra, rInfo[i], &rConn[i]) == ncclSuccess);
  CHECK(T->recv.connect(rConn[0], sInfo[0], &ri[0]) == ncclSuccess);
  CHECK(T->recv.connect(rConn[1], sInfo[1], &ri[1]) == ncclSuccess);
  CHECK(nOpen == 2); /* two regions apart: both imports live */
  lastClosed = NULL;
  CHECK(T->recv.connect(rConn[2], sInfo[0], &ri[2]) == ncclSuccess); /* where sender 0's region is */
  CHECK(nOpen == 2);
  CHECK(lastClosed == regions[0].p); /* receiver 0's import of it, closed */
  lastClosed = NULL;
  CHECK(T->recv.free(rConn[0]) == ncclSuccess);
  CHECK(nOpen == 2 && lastClosed == NULL); /* not closed twice */
  CHECK(T->recv.free(rConn[1]) == ncclSuccess);
  CHECK(T->recv.free(rConn[2]) == ncclSuccess);
  CHECK(nOpen == 0);
  CHECK(T->send.free(sConn[0]) == ncclSuccess);
  CHECK(T->send.free(sConn[1]) == ncclSuccess);
  if (T->finalize) CHECK(T->finalize(tctx) == ncclSuccess);
  printf("ok: a stale import closed once, before the new one\n");
}

int main(int argc, char** argv) {
  void* h;
  T = transport_plugin_open(argc, argv, &h);
  for (int readMode = 0; readMode <= 1; readMode++)
    for (int ll = 0; ll <= 1; ll++)
      for (int same = 0; same <= 1; same++)
        for (int direct = -1; direct <= 1; direct++) run_case(readMode, ll ? 8 * 16 * 64 : 0, same, direct);
  run_stale_imports();
  dlclose(h);
  return 0;
}
