/* transport-shm's LL lines: a host rank that asks for them (the core asks
 * MK_HOST_LL_BYTES on collective connections) gets them in the receiver's
 * segment, seen at the same bytes by both sides, zeroed (no step's flag),
 * clear of the Simple buffers; a host rank that does not ask, or asks more
 * than the segment's spare room, or a GPU rank, gets none.
 * Usage: test_transport_shm_ll PATH/libmkccl-transport-shm.so */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "transport_plugin.h"
#include "transport/mkccl_transport_v1.h"

static const mkcclTransport_v1* T;

/* The plugin alone (no libnccl): its results checked by value. */
#define OK(call) CHECK((call) == ncclSuccess)

static void fake_log(ncclDebugLogLevel l, unsigned long f, const char* file, int line, const char* fmt, ...) {
  (void)l, (void)f, (void)file, (void)line, (void)fmt;
}
/* GPU ranks reach the segments through registration: here, the same address. */
static ncclResult_t fake_register(void* ctx, void* ptr, size_t bytes, void** dev) {
  (void)ctx, (void)bytes;
  *dev = ptr;
  return ncclSuccess;
}
static ncclResult_t fake_unregister(void* ctx, void* ptr) {
  (void)ctx, (void)ptr;
  return ncclSuccess;
}

/* One connection, both sides in this process; the receiver's and the
 * sender's view of it in *recvInfo / *sendInfo. */
static void run_case(int gpu, int llAsked, mkcclConnInfo_v1* sendInfo, mkcclConnInfo_v1* recvInfo) {
  uint32_t abortFlag = 0;
  mkcclTransportServices_v1 sv;
  memset(&sv, 0, sizeof(sv));
  sv.size = sizeof(sv);
  sv.log = fake_log;
  sv.abortFlag = &abortFlag;
  sv.nRanks = 2;
  sv.cudaDev = gpu ? 0 : -1;
  if (gpu) sv.hostRegister = fake_register, sv.hostUnregister = fake_unregister;
  void* tctx = NULL;
  OK(T->init(&sv, &tctx));
  mkcclPeer_v1 r0 = {0, 42, 1, 100, gpu ? 0 : -1, gpu ? 1 : -1, 0, 0};
  mkcclPeer_v1 r1 = {1, 42, 2, 101, gpu ? 1 : -1, gpu ? 2 : -1, 0, 0};
  mkcclConnSetup_v1 sa, ra;
  memset(&sa, 0, sizeof(sa));
  sa.self = &r0, sa.peer = &r1, sa.deviceMem = gpu;
  sa.buffSizes[MKCCL_PROTO_SIMPLE] = 8 * 4096;
  sa.buffSizes[MKCCL_PROTO_LL] = llAsked;
  ra = sa;
  ra.self = &r1, ra.peer = &r0;
  char sci[MKCCL_CONNECT_INFO_BYTES], rci[MKCCL_CONNECT_INFO_BYTES];
  void *sc = NULL, *rc = NULL;
  OK(T->send.setup(tctx, &sa, sci, &sc));
  OK(T->recv.setup(tctx, &ra, rci, &rc));
  /* Each side maps the other's segment; the second round finds it mapped. */
  ncclResult_t s1 = T->send.connect(sc, rci, sendInfo), r1res = T->recv.connect(rc, sci, recvInfo);
  if (s1 == ncclInProgress) s1 = T->send.connect(sc, rci, sendInfo);
  if (r1res == ncclInProgress) r1res = T->recv.connect(rc, sci, recvInfo);
  OK(s1);
  OK(r1res);
  if (recvInfo->buffs[MKCCL_PROTO_LL]) {
    char* rl = recvInfo->buffs[MKCCL_PROTO_LL];
    char* sl = sendInfo->buffs[MKCCL_PROTO_LL];
    int step = recvInfo->stepSize[MKCCL_PROTO_LL];
    CHECK_EQ_INT(step, llAsked / MKCCL_STEPS);
    CHECK_EQ_INT(sendInfo->stepSize[MKCCL_PROTO_LL], step);
    for (int i = 0; i < llAsked; i++) CHECK_MSG(rl[i] == 0, "LL byte %d is %d, not 0", i, rl[i]);
    /* The sender's stores are the receiver's lines (two mappings of one segment). */
    for (int i = 0; i < llAsked; i++) sl[i] = (char)(i * 7 + 1);
    for (int i = 0; i < llAsked; i++) CHECK_EQ_INT(rl[i], (char)(i * 7 + 1));
    /* Clear of the Simple buffers and of the tail. */
    CHECK(rl + llAsked <= recvInfo->buffs[MKCCL_PROTO_SIMPLE] ||
          rl >= recvInfo->buffs[MKCCL_PROTO_SIMPLE] + 8 * 4096);
    CHECK((char*)recvInfo->tail + 8 <= rl || (char*)recvInfo->tail >= rl + llAsked);
    CHECK(recvInfo->buffs[MKCCL_PROTO_SIMPLE] != NULL);
  } else {
    CHECK(sendInfo->buffs[MKCCL_PROTO_LL] == NULL);
  }
  OK(T->send.free(sc));
  OK(T->recv.free(rc));
  OK(T->finalize(tctx));
}

int main(int argc, char** argv) {
  void* h;
  T = transport_plugin_open(argc, argv, &h);
  mkcclConnInfo_v1 s, r;
  run_case(0, MKCCL_STEPS * 64, &s, &r); /* a host rank asks one line a step */
  CHECK(r.buffs[MKCCL_PROTO_LL] && s.buffs[MKCCL_PROTO_LL]);
  run_case(0, 0, &s, &r); /* not asked */
  CHECK(!r.buffs[MKCCL_PROTO_LL]);
  run_case(0, 1 << 20, &s, &r); /* more than the spare room */
  CHECK(!r.buffs[MKCCL_PROTO_LL]);
  run_case(1, 524288, &s, &r); /* a GPU rank: its LL over SHM has not run on GPUs */
  CHECK(!r.buffs[MKCCL_PROTO_LL]);
  dlclose(h);
  printf("test_transport_shm_ll: ok\n");
  return 0;
}
