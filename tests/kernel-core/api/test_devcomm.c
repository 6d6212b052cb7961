/* The host side of the device API with no GPU: the requirement functions
 * (sizes as NCCL's device code reads them), the resource window's layout,
 * GIN's requirements and ids, what ncclDevCommCreate refuses and how, on
 * host communicators of 2 ranks as processes (which keep working
 * afterwards). Case "gdaki" (NCCL_GIN_TYPE=3): device-direct GIN refused. */
#include <string.h>

#include "api/devcomm.h"
#include "api/device_api.h"
#include "api/window.h"
#include "check.h"
#include "ranks_id.h"

ncclResult_t ncclLsaBarrierCreateRequirement(ncclTeam_t, int, ncclLsaBarrierHandle_t*, ncclDevResourceRequirements_t*);
ncclResult_t ncclGinBarrierCreateRequirement(ncclComm_t, ncclTeam_t, int, ncclGinBarrierHandle_t*,
                                             ncclDevResourceRequirements_t*);
ncclResult_t ncclLLA2ACreateRequirement(int, int, ncclLLA2AHandle_t*, ncclDevResourceRequirements_t*);
int ncclLLA2ACalcSlots(int maxElts, int maxEltSize);
ncclResult_t ncclDevCommCreate(ncclComm_t, const ncclDevCommRequirements_t*, ncclDevComm_t*);
ncclResult_t ncclDevCommDestroy(ncclComm_t, const ncclDevComm_t*);
ncclResult_t ncclGetLsaDevicePointer(ncclWindow_t, size_t, int, void**);
ncclResult_t ncclGetPeerDevicePointer(ncclWindow_t, size_t, int, void**);
ncclResult_t ncclGetLsaMultimemDevicePointer(ncclWindow_t, size_t, void**);

/* Per barrier: 3 words (two epochs, the multicast inbox) and one inbox per team rank. */
static void check_lsa_barrier(void) {
  ncclLsaBarrierHandle_t h;
  ncclDevResourceRequirements_t r;
  memset(&r, 0x5a, sizeof(r));
  CHECK_NCCL(ncclLsaBarrierCreateRequirement((ncclTeam_t){4, 1, 1}, 3, &h, &r));
  CHECK(r.bufferSize == (3 * 3 + 3 * 4) * sizeof(uint32_t));
  CHECK(r.bufferAlign == sizeof(uint32_t));
  CHECK(r.outBufferHandle == &h.bufHandle);
  CHECK(r.next == NULL && r.ginSignalCount == 0 && r.ginCounterCount == 0);
  CHECK(r.outGinSignalStart == NULL && r.outGinCounterStart == NULL);
  CHECK_EQ_INT(h.nBarriers, 3);
  CHECK_EQ_INT(ncclLsaBarrierCreateRequirement((ncclTeam_t){4, 1, 1}, 1, NULL, &r), ncclInvalidArgument);
  CHECK_EQ_INT(ncclLsaBarrierCreateRequirement((ncclTeam_t){4, 1, 1}, -1, &h, &r), ncclInvalidArgument);
}

/* Per block: an epoch line and two sets of slots, 16 bytes each. */
static void check_ll_a2a(void) {
  ncclLLA2AHandle_t h;
  ncclDevResourceRequirements_t r;
  memset(&r, 0x5a, sizeof(r));
  CHECK_NCCL(ncclLLA2ACreateRequirement(2, 5, &h, &r));
  CHECK(r.bufferSize == 2 * (1 + 2 * 5) * 16);
  CHECK(r.bufferAlign == 16);
  CHECK(r.outBufferHandle == &h.bufHandle && r.next == NULL);
  CHECK_EQ_INT((int)h.nSlots, 5);
  CHECK_EQ_INT(ncclLLA2ACreateRequirement(1, 1, &h, NULL), ncclInvalidArgument);
  /* NCCL's formula: maxElts * divUp(maxEltSize, 8). */
  CHECK_EQ_INT(ncclLLA2ACalcSlots(10, 8), 10);
  CHECK_EQ_INT(ncclLLA2ACalcSlots(10, 9), 20);
  CHECK_EQ_INT(ncclLLA2ACalcSlots(3, 16), 6);
  CHECK_EQ_INT(ncclLLA2ACalcSlots(7, 1), 7);
  CHECK_EQ_INT(ncclLLA2ACalcSlots(0, 8), 0);
}

/* Handles in 128-byte units, in list order, each on its alignment. */
static void check_layout(void) {
  ncclDevResourceHandle_t a = 99, b = 99, c = 99;
  ncclDevResourceRequirements_t rc = {NULL, 8, 1024, &c, 0, 0, NULL, NULL};
  ncclDevResourceRequirements_t rb = {&rc, 300, 4, &b, 0, 0, NULL, NULL};
  ncclDevResourceRequirements_t ra = {&rb, 84, 4, &a, 0, 0, NULL, NULL};
  size_t total = 0;
  CHECK_NCCL(api_devcomm_layout(&ra, &total, "test"));
  CHECK_EQ_INT((int)a, 0);
  CHECK_EQ_INT((int)b, 1);   /* 84 bytes rounded up to 128 */
  CHECK_EQ_INT((int)c, 8);   /* 128 + 300 = 428, aligned to 1024 */
  CHECK(total == 1024 + 128); /* 1032 rounded up to 128 */
  /* A bad alignment anywhere: no handle written. */
  a = b = c = 99;
  rc.bufferAlign = 384;
  CHECK_EQ_INT(api_devcomm_layout(&ra, &total, "test"), ncclInvalidArgument);
  CHECK_STR_CONTAINS(ncclGetLastError(NULL), "bufferAlign 384");
  CHECK(a == 99 && b == 99 && c == 99);
}

/* PyTorch asks every device communicator for rail GIN barriers: with one
 * LSA team the rail team is a rank alone and NCCL builds them without GIN,
 * so mkccl does too (no engine); across LSA teams they take GIN. */
static void check_rail_barriers(void) {
  ncclDevCommRequirements_t reqs;
  memset(&reqs, 0, sizeof(reqs));
  reqs.lsaBarrierCount = 32;
  reqs.railGinBarrierCount = 32;
  CHECK(api_devcomm_refusal(&reqs) == NULL);
  CHECK_EQ_INT(api_devcomm_gin_wanted(&reqs, 1), 0);
  CHECK_EQ_INT(api_devcomm_gin_wanted(&reqs, 0), 1);
  reqs.railGinBarrierCount = 0;
  reqs.barrierCount = 2;
  CHECK_EQ_INT(api_devcomm_gin_wanted(&reqs, 1), 0);
  CHECK_EQ_INT(api_devcomm_gin_wanted(&reqs, 0), 1);
  reqs.barrierCount = 0;
  reqs.railGinBarrierCount = 1;
  reqs.ginSignalCount = 1;
  CHECK_EQ_INT(api_devcomm_gin_wanted(&reqs, 1), 1);
  /* NCCL's layout: an epoch per barrier and GIN context, signals from signal0. */
  ncclGinBarrierHandle_t h;
  ncclDevResourceRequirements_t r;
  memset(&h, 0x5a, sizeof(h));
  memset(&r, 0x5a, sizeof(r));
  api_devcomm_rail_barrier(32, 3, &h, &r);
  CHECK(r.bufferSize == 32 * 4 * sizeof(uint32_t));
  CHECK(r.bufferAlign == sizeof(uint32_t));
  CHECK(r.outBufferHandle == &h.bufHandle && r.next == NULL);
  CHECK(r.ginSignalCount == 0 && r.ginCounterCount == 0 && r.outGinSignalStart == NULL);
  CHECK_EQ_INT((int)h.signal0, 3);
  /* Laid out after the LSA barrier: its own handle, past the LSA barrier's buffer. */
  ncclLsaBarrierHandle_t lh;
  ncclDevResourceRequirements_t lr;
  CHECK_NCCL(ncclLsaBarrierCreateRequirement((ncclTeam_t){4, 1, 1}, 32, &lh, &lr));
  lr.next = &r;
  size_t total = 0;
  CHECK_NCCL(api_devcomm_layout(&lr, &total, "test"));
  CHECK_EQ_INT((int)lh.bufHandle, 0);
  CHECK_EQ_INT((int)h.bufHandle, (int)(((3 * 32 + 32 * 4) * 4 + 127) / 128));
  CHECK(total == (size_t)h.bufHandle * 128 + 512);
}

/* Per barrier one signal and an epoch per context, as 2.28's
 * gin_barrier__funcs.h reads them. */
static void check_gin_barrier(ncclComm_t comm) {
  ncclGinBarrierHandle_t h;
  ncclDevResourceRequirements_t r;
  memset(&r, 0x5a, sizeof(r));
  CHECK_NCCL(ncclGinBarrierCreateRequirement(comm, (ncclTeam_t){2, 0, 1}, 3, &h, &r));
  CHECK(r.bufferSize == 3 * 4 * sizeof(uint32_t));
  CHECK(r.bufferAlign == sizeof(uint32_t));
  CHECK(r.outBufferHandle == &h.bufHandle && r.next == NULL);
  CHECK_EQ_INT(r.ginSignalCount, 3);
  CHECK_EQ_INT(r.ginCounterCount, 0);
  CHECK(r.outGinSignalStart == &h.signal0 && r.outGinCounterStart == NULL);
  CHECK_EQ_INT(ncclGinBarrierCreateRequirement(comm, (ncclTeam_t){2, 0, 1}, -1, &h, &r), ncclInvalidArgument);
  CHECK_EQ_INT(ncclGinBarrierCreateRequirement(comm, (ncclTeam_t){2, 0, 1}, 1, NULL, &r), ncclInvalidArgument);
}

/* GIN ids: the caller's own first from 0, then each requirement's in list
 * order; nothing written when a count is refused. */
static void check_gin_ids(void) {
  ncclGinSignal_t sa = 99, sb = 99;
  ncclGinCounter_t ca = 99, cb = 99;
  ncclDevResourceRequirements_t rb = {NULL, 0, 0, NULL, 5, 0, &sb, &cb};
  ncclDevResourceRequirements_t ra = {&rb, 0, 0, NULL, 2, 3, &sa, &ca};
  int ns = 0, nc = 0;
  CHECK_NCCL(api_devcomm_gin_ids(&ra, 4, 1, &ns, &nc, "test"));
  CHECK_EQ_INT((int)sa, 4);
  CHECK_EQ_INT((int)sb, 6);
  CHECK_EQ_INT((int)ca, 1);
  CHECK_EQ_INT((int)cb, 4);
  CHECK_EQ_INT(ns, 11);
  CHECK_EQ_INT(nc, 4);
  sa = sb = 99;
  rb.ginSignalCount = 70000;
  CHECK_EQ_INT(api_devcomm_gin_ids(&ra, 4, 1, &ns, &nc, "test"), ncclInvalidArgument);
  CHECK_STR_CONTAINS(ncclGetLastError(NULL), "65535");
  CHECK(sa == 99 && sb == 99);
  rb.ginSignalCount = -1;
  CHECK_EQ_INT(api_devcomm_gin_ids(&ra, 4, 1, &ns, &nc, "test"), ncclInvalidArgument);
}

/* devComm must stay as the caller left it when the call fails. */
static void check_create_fails(ncclComm_t comm, const ncclDevCommRequirements_t* reqs, ncclResult_t want,
                               const char* text) {
  ncclDevComm_t d, before;
  memset(&d, 0x5a, sizeof(d));
  before = d;
  CHECK_EQ_INT(ncclDevCommCreate(comm, reqs, &d), want);
  CHECK_STR_CONTAINS(ncclGetLastError(comm), text);
  CHECK(memcmp(&d, &before, sizeof(d)) == 0);
}

static void check_create(ncclComm_t comm) {
  ncclDevCommRequirements_t reqs;
  memset(&reqs, 0, sizeof(reqs));
  ncclDevComm_t d;
  CHECK_EQ_INT(ncclDevCommCreate(comm, NULL, &d), ncclInvalidArgument);
  CHECK_STR_CONTAINS(ncclGetLastError(comm), "reqs is NULL");
  CHECK_EQ_INT(ncclDevCommCreate(comm, &reqs, NULL), ncclInvalidArgument);
  CHECK_EQ_INT(ncclDevCommCreate(NULL, &reqs, &d), ncclInvalidArgument);
  reqs.lsaBarrierCount = 1;
  check_create_fails(comm, &reqs, ncclInvalidUsage, "host communicator");
  reqs.lsaBarrierCount = -1;
  check_create_fails(comm, &reqs, ncclInvalidArgument, "negative barrier count");
  reqs.lsaBarrierCount = 0;
  reqs.lsaMultimem = true;
  check_create_fails(comm, &reqs, ncclInvalidUsage, "never creates NVLink multicast");
  reqs.lsaMultimem = false;
  ncclTeamRequirements_t team = {NULL, {2, 0, 1}, true, NULL};
  reqs.teamRequirementsList = &team;
  check_create_fails(comm, &reqs, ncclInvalidUsage, "multimem");
  reqs.teamRequirementsList = NULL;
  /* GIN is built, but device communicators need a GPU. */
  reqs.ginSignalCount = 4;
  check_create_fails(comm, &reqs, ncclInvalidUsage, "host communicator");
  reqs.ginSignalCount = 0;
  reqs.ginForceEnable = true;
  check_create_fails(comm, &reqs, ncclInvalidUsage, "host communicator");
  reqs.ginForceEnable = false;
  reqs.barrierCount = 1;
  check_create_fails(comm, &reqs, ncclInvalidUsage, "host communicator");
  reqs.barrierCount = 0;
  reqs.railGinBarrierCount = 4;
  check_create_fails(comm, &reqs, ncclInvalidUsage, "host communicator");
  reqs.railGinBarrierCount = -1;
  check_create_fails(comm, &reqs, ncclInvalidArgument, "negative barrier count");
  reqs.railGinBarrierCount = 0;
  /* Destroy: nothing made needs nothing undone; a stranger is refused. */
  ncclDevComm_t none;
  memset(&none, 0, sizeof(none));
  CHECK_NCCL(ncclDevCommDestroy(comm, &none));
  none.resourceWindow = (ncclWindow_t)&none;
  CHECK_EQ_INT(ncclDevCommDestroy(comm, &none), ncclInvalidArgument);
  CHECK_EQ_INT(ncclDevCommDestroy(comm, NULL), ncclInvalidArgument);
}

/* A host communicator's window has no device pointers; multimem never. */
static void check_pointers(ncclComm_t comm) {
  float buf[64];
  ncclWindow_t win = NULL;
  void* p = NULL;
  CHECK_NCCL(ncclCommWindowRegister(comm, buf, sizeof(buf), &win, NCCL_WIN_DEFAULT));
  CHECK_EQ_INT(ncclGetLsaDevicePointer(win, 0, 0, &p), ncclInvalidArgument);
  CHECK_STR_CONTAINS(ncclGetLastError(NULL), "not a window of a GPU communicator");
  CHECK_EQ_INT(ncclGetPeerDevicePointer(win, 0, 0, &p), ncclInvalidArgument);
  CHECK_EQ_INT(ncclGetLsaDevicePointer(NULL, 0, 0, &p), ncclInvalidArgument);
  CHECK_EQ_INT(ncclGetLsaMultimemDevicePointer(win, 0, &p), ncclInvalidUsage);
  CHECK_STR_CONTAINS(ncclGetLastError(NULL), "multimem");
  CHECK(p == NULL);
  CHECK_NCCL(ncclCommWindowDeregister(comm, win));
}

static int rank_main(int rank, int n, void* arg) {
  (void)arg;
  ncclComm_t comm = ranks_comm_init(rank, n);
  check_lsa_barrier();
  check_ll_a2a();
  check_layout();
  check_rail_barriers();
  check_gin_barrier(comm);
  check_gin_ids();
  check_create(comm);
  check_pointers(comm);
  float x[4] = {(float)rank, 1, 2, 3};
  CHECK_NCCL(ncclAllReduce(x, x, 4, ncclFloat32, ncclSum, comm, NULL));
  CHECK(x[0] == (float)(n * (n - 1) / 2) && x[3] == (float)(3 * n));
  /* Windows left registered go with their communicator; others stay. */
  ncclComm_t other;
  CHECK_NCCL(ncclCommSplit(comm, 0, rank, &other, NULL));
  float y[8];
  ncclWindow_t left[2], kept;
  CHECK_NCCL(ncclCommWindowRegister(comm, x, sizeof(x), &left[0], NCCL_WIN_DEFAULT));
  CHECK_NCCL(ncclCommWindowRegister(other, y, sizeof(y), &kept, NCCL_WIN_DEFAULT));
  CHECK_NCCL(ncclCommWindowRegister(comm, y, sizeof(y), &left[1], NCCL_WIN_COLL_SYMMETRIC));
  CHECK(api_window_find(comm, left[0]) && api_window_find(comm, left[1]));
  CHECK_NCCL(ncclCommDestroy(comm));
  CHECK(api_window_find(NULL, left[0]) == NULL && api_window_find(NULL, left[1]) == NULL);
  CHECK(api_window_find(other, kept) != NULL);
  CHECK_NCCL(ncclCommWindowDeregister(other, kept));
  CHECK_NCCL(ncclCommDestroy(other));
  return 0;
}

static int rank_gdaki(int rank, int n, void* arg) {
  (void)arg;
  ncclComm_t comm = ranks_comm_init(rank, n);
  ncclDevCommRequirements_t reqs;
  memset(&reqs, 0, sizeof(reqs));
  reqs.ginSignalCount = 1;
  check_create_fails(comm, &reqs, ncclInvalidUsage, "GDAKI");
  CHECK_NCCL(ncclCommDestroy(comm));
  return 0;
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "gdaki") == 0) {
    CHECK_EQ_INT(ranks_run(2, rank_gdaki, NULL, 120), 0);
    return 0;
  }
  CHECK_EQ_INT(ranks_run(2, rank_main, NULL, 120), 0);
  return 0;
}
