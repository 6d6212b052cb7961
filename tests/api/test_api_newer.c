/* The functions newer NCCL releases export beyond NCCL 2.28's nccl.h, called
 * from outside with NCCL's own types, 3 ranks as processes: the device API's
 * teams (returned by value: the struct's three ints are the ABI), its slot
 * count, ncclCommQueryProperties (versions and sizes a caller may pass),
 * ncclWinGetUserPtr, ncclCommMemStats (no GPU memory on a host
 * communicator); every function not implemented yet returns
 * ncclInvalidUsage with a last-error text that names it, and the
 * communicator stays usable after all of them. The device communicator's
 * own checks: tests/kernel-core/api/test_devcomm.c. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "nccl.h"
#include "ranks_id.h"

/* As nccl_device.h (NCCL 2.28 and 2.30) declares them. */
typedef struct {
  int nRanks, rank, stride;
} team_t;
typedef struct {
  size_t size;
  unsigned int magic, version;
  int rank, nRanks, cudaDev, nvmlDev;
  bool deviceApiSupport, multimemSupport;
  int ginType, nLsaTeams;
  bool hostRmaSupport;
  int railedGinType;
} props_t;
team_t ncclTeamWorld(ncclComm_t);
team_t ncclTeamLsa(ncclComm_t);
team_t ncclTeamRail(ncclComm_t);
int ncclTeamRankToWorld(ncclComm_t, team_t, int);
int ncclTeamRankToLsa(ncclComm_t, team_t, int);
int ncclLLA2ACalcSlots(int maxElts, int maxEltSize);
ncclResult_t ncclCommQueryProperties(ncclComm_t, props_t*);
ncclResult_t ncclGinOutboxCreateRequirement(int, int, void*, void*);
ncclResult_t ncclGinInboxA2ACreateRequirement(team_t, int, int, void*, void*);
void ncclResetDebugInitInternal(void);

#define COUNT 1024

static void check_team(team_t t, int nRanks, int rank, int stride) {
  CHECK_MSG(t.nRanks == nRanks && t.rank == rank && t.stride == stride, "team {%d, %d, %d}, expected {%d, %d, %d}",
            t.nRanks, t.rank, t.stride, nRanks, rank, stride);
}

static void check_teams(ncclComm_t comm, int rank, int n) {
  team_t world = ncclTeamWorld(comm), lsa = ncclTeamLsa(comm), rail = ncclTeamRail(comm);
  check_team(world, n, rank, 1);
  check_team(lsa, 1, 0, 1); /* host ranks map no peer's memory */
  check_team(rail, n, rank, 1);
  for (int k = 0; k < n; k++) {
    CHECK_EQ_INT(ncclTeamRankToWorld(comm, world, k), k);
    CHECK_EQ_INT(ncclTeamRankToWorld(comm, rail, k), k);
  }
  CHECK_EQ_INT(ncclTeamRankToWorld(comm, lsa, 0), rank);
  CHECK_EQ_INT(ncclTeamRankToLsa(comm, lsa, 0), 0);
  /* A strided team as NCCL's rails are: member k of {n/2, rank/2, 2}. */
  team_t strided = {n / 2, rank / 2, 2};
  CHECK_EQ_INT(ncclTeamRankToWorld(comm, strided, 0), rank % 2);
  check_team(ncclTeamWorld(NULL), 0, 0, 0);
  CHECK_EQ_INT(ncclTeamRankToWorld(NULL, world, 0), -1);
}

static void check_slots(void) {
  CHECK_EQ_INT(ncclLLA2ACalcSlots(10, 8), 10);
  CHECK_EQ_INT(ncclLLA2ACalcSlots(10, 9), 20);
  CHECK_EQ_INT(ncclLLA2ACalcSlots(3, 16), 6);
  CHECK_EQ_INT(ncclLLA2ACalcSlots(7, 1), 7);
}

static void check_properties(ncclComm_t comm, int rank, int n) {
  props_t p;
  memset(&p, 0x5a, sizeof(p));
  p.size = sizeof(p), p.magic = 0xcafebeef, p.version = NCCL_VERSION(2, 30, 7);
  CHECK_NCCL(ncclCommQueryProperties(comm, &p));
  CHECK_EQ_INT(p.rank, rank);
  CHECK_EQ_INT(p.nRanks, n);
  CHECK_EQ_INT(p.cudaDev, -1);
  CHECK(!p.deviceApiSupport && !p.multimemSupport && !p.hostRmaSupport);
  CHECK_EQ_INT(p.ginType, 0);
  CHECK_EQ_INT(p.railedGinType, 0);
  CHECK_EQ_INT(p.nLsaTeams, n);
  /* 2.29.2's callers: the later fields are not theirs to have written. */
  memset(&p, 0x5a, sizeof(p));
  p.size = sizeof(p), p.magic = 0xcafebeef, p.version = NCCL_VERSION(2, 29, 2);
  CHECK_NCCL(ncclCommQueryProperties(comm, &p));
  CHECK_EQ_INT(p.nRanks, n);
  CHECK_EQ_INT(p.nLsaTeams, 0x5a5a5a5a);
  /* Not made by NCCL_COMM_PROPERTIES_INITIALIZER, or of no known version. */
  p.magic = 0;
  CHECK_EQ_INT(ncclCommQueryProperties(comm, &p), ncclInvalidUsage);
  CHECK_STR_CONTAINS(ncclGetLastError(comm), "NCCL_COMM_PROPERTIES_INITIALIZER");
  p.magic = 0xcafebeef, p.version = NCCL_VERSION(2, 28, 9);
  CHECK_EQ_INT(ncclCommQueryProperties(comm, &p), ncclInvalidArgument);
  CHECK_EQ_INT(ncclCommQueryProperties(comm, NULL), ncclInvalidArgument);
}

static void check_user_ptr(ncclComm_t comm, float* buf) {
  ncclWindow_t win = NULL;
  void* user = NULL;
  CHECK_NCCL(ncclCommWindowRegister(comm, buf, COUNT * sizeof(float), &win, NCCL_WIN_DEFAULT));
  CHECK_NCCL(ncclWinGetUserPtr(comm, win, &user));
  CHECK(user == buf);
  CHECK_EQ_INT(ncclWinGetUserPtr(comm, win, NULL), ncclInvalidArgument);
  CHECK_NCCL(ncclCommWindowDeregister(comm, win));
  user = NULL;
  CHECK_EQ_INT(ncclWinGetUserPtr(comm, (ncclWindow_t)buf, &user), ncclInvalidArgument);
  CHECK(user == NULL);
}

#define NOT_YET(call, name)                                         \
  do {                                                              \
    CHECK_EQ_INT((call), ncclInvalidUsage);                         \
    CHECK_STR_CONTAINS(ncclGetLastError(NULL), name " is not implemented yet"); \
  } while (0)

/* A host communicator holds no GPU memory: every statistic 0; bad
 * arguments refused, the output untouched. */
static void check_memstats(ncclComm_t comm) {
  for (int s = ncclStatGpuMemSuspend; s <= ncclStatGpuMemTotal; s++) {
    uint64_t v = 7;
    CHECK_NCCL(ncclCommMemStats(comm, (ncclCommMemStat_t)s, &v));
    CHECK_MSG(v == 0, "host communicator: statistic %d is %llu", s, (unsigned long long)v);
  }
  uint64_t v = 7;
  CHECK_EQ_INT(ncclCommMemStats(comm, (ncclCommMemStat_t)4, &v), ncclInvalidArgument);
  CHECK_EQ_INT(ncclCommMemStats(NULL, ncclStatGpuMemTotal, &v), ncclInvalidArgument);
  CHECK(v == 7);
  CHECK_EQ_INT(ncclCommMemStats(comm, ncclStatGpuMemTotal, NULL), ncclInvalidArgument);
}

static void check_not_implemented(ncclComm_t comm, float* buf) {
  char out[256];
  void* ptr = NULL;
  team_t world = ncclTeamWorld(comm);
  ncclUniqueId id;
  ncclComm_t grown = NULL;
  ncclWaitSignalDesc_t desc = {1, 0, 0, 0};
  NOT_YET(ncclGinOutboxCreateRequirement(1, 12, out, out), "ncclGinOutboxCreateRequirement");
  NOT_YET(ncclGinInboxA2ACreateRequirement(world, 1, 12, out, out), "ncclGinInboxA2ACreateRequirement");
  NOT_YET(ncclCommGetUniqueId(comm, &id), "ncclCommGetUniqueId");
  NOT_YET(ncclCommGrow(comm, 4, NULL, -1, &grown, NULL), "ncclCommGrow");
  NOT_YET(ncclCommSuspend(comm, NCCL_SUSPEND_MEM), "ncclCommSuspend");
  NOT_YET(ncclCommResume(comm), "ncclCommResume");
  NOT_YET(ncclPutSignal(buf, 1, ncclFloat32, 0, NULL, 0, 0, 0, 0, comm, NULL), "ncclPutSignal");
  NOT_YET(ncclSignal(0, 0, 0, 0, comm, NULL), "ncclSignal");
  NOT_YET(ncclWaitSignal(1, &desc, comm, NULL), "ncclWaitSignal");
  /* Outputs are set only on success. */
  CHECK(ptr == NULL && grown == NULL);
  ncclResetDebugInitInternal();
}

static int rank_main(int rank, int n, void* arg) {
  (void)arg;
  ncclComm_t comm = ranks_comm_init(rank, n);
  float* buf = malloc(COUNT * sizeof(float));
  CHECK(buf);
  check_teams(comm, rank, n);
  check_slots();
  check_properties(comm, rank, n);
  check_user_ptr(comm, buf);
  check_memstats(comm);
  check_not_implemented(comm, buf);
  /* Still a communicator: every rank's own value, summed. */
  for (int i = 0; i < COUNT; i++) buf[i] = (float)(rank * COUNT + i);
  CHECK_NCCL(ncclAllReduce(buf, buf, COUNT, ncclFloat32, ncclSum, comm, NULL));
  for (int i = 0; i < COUNT; i++) CHECK(buf[i] == (float)(n * i + COUNT * n * (n - 1) / 2));
  free(buf);
  CHECK_NCCL(ncclCommDestroy(comm));
  return 0;
}

int main(void) {
  CHECK_EQ_INT(ranks_run(3, rank_main, NULL, 120), 0);
  return 0;
}
