/* Profiler events from real collectives: ranks as processes (2, 3 and 4),
 * host buffers over the net transport (proxy ops and steps exist), the
 * recording test profiler with every event. Each rank runs every
 * collective and a Send/Recv ring in a group, then destroys its
 * communicator; its report must be balanced: every start has one stop,
 * every parent started before its children and has NCCL's type (Group ->
 * Coll/P2p -> ProxyOp -> ProxyStep -> NetPlugin; Coll/P2p -> KernelCh;
 * GroupApi -> CollApi/P2pApi (-> Coll/P2p, v5+), KernelLaunch),
 * proxy steps went through the states of their side in order, and the net
 * plugin reported each step's transfer; ProxyCtrl events record Append then
 * AppendEnd; with the mask cleared while the communicator runs a collective
 * reports nothing, set again it reports again. v6 keeps the Group in
 * parentGroup; v4 (through its adapter) gets it as the parent. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "coll_each.h"
#include "comm/comm.h"
#include "nccl.h"
#include "plan_observe.h"
#include "profiler/nccl_profiler.h"
#include "ranks_id.h"

#define COUNT 40000 /* floats per rank: several steps per connection */

typedef struct {
  int version;
  const char* path;
} scenario_t;

static uint64_t type_of(const test_report_t* r, int i) { return i >= 0 ? r->recs[i].type : 0; }

/* A step's states: its side's, in NCCL's order (each at most once). */
static void check_step_states(const test_rec_t* e, int isSend, int index) {
  static const int sendOrder[] = {ncclProfilerProxyStepSendGPUWait, ncclProfilerProxyStepSendWait};
  static const int recvOrder[] = {ncclProfilerProxyStepRecvWait, ncclProfilerProxyStepRecvFlushWait,
                                  ncclProfilerProxyStepRecvGPUWait};
  const int* order = isSend ? sendOrder : recvOrder;
  int nOrder = isSend ? 2 : 3, at = 0;
  CHECK_MSG(e->nStates >= 1, "step %d: no state", index);
  CHECK_EQ_INT(e->states[0], order[0]);
  for (int s = 0; s < e->nStates; s++) {
    while (at < nOrder && order[at] != e->states[s]) at++;
    CHECK_MSG(at < nOrder, "step %d: state %d out of order or not of its side", index, e->states[s]);
    at++;
  }
}

/* Records of the types the calling thread and the executor report (the
 * proxy's may still trail a collective that has returned). */
static int count_sync(const test_report_t* r) {
  const uint64_t sync = ncclProfileGroup | ncclProfileColl | ncclProfileP2p | ncclProfileKernelCh |
                        ncclProfileGroupApi | ncclProfileCollApi | ncclProfileP2pApi | ncclProfileKernelLaunch;
  int n = 0;
  plan_observe_lock(1); /* the proxy thread may still be recording */
  for (int i = 0; i < r->n; i++) n += (r->recs[i].type & sync) != 0;
  plan_observe_lock(0);
  return n;
}

/* The mask is read at every event: cleared, a collective reports nothing;
 * set again, it reports again. */
static void check_mask_toggle(ncclComm_t comm, const test_report_t* r) {
  float x = 1.0f;
  int before = count_sync(r);
  /* The proxy's events trail a returned collective; one that straddles a
   * toggle would be half reported (a ProxyStep without its NetPlugin, seen
   * under TSan): let the proxy finish the earlier ops first. */
  CHECK_NCCL(proxy_client_flush(&comm->dp.proxy, "test"));
  plan_observe_set_mask(0);
  CHECK_NCCL(ncclAllReduce(&x, &x, 1, ncclFloat32, ncclSum, comm, NULL));
  CHECK_EQ_INT(count_sync(r), before);
  CHECK_NCCL(proxy_client_flush(&comm->dp.proxy, "test"));
  plan_observe_set_mask(0x7fff);
  CHECK_NCCL(ncclAllReduce(&x, &x, 1, ncclFloat32, ncclSum, comm, NULL));
  CHECK(count_sync(r) > before);
}

static void check_balanced(const test_report_t* r, int v) {
  CHECK_EQ_INT(r->version, v);
  CHECK_EQ_INT(r->inits, 1);
  CHECK_EQ_INT(r->finalizes, 1);
  CHECK_EQ_INT(r->badStops, 0);
  CHECK(r->n < TEST_REC_MAX);
  int counts[16] = {0};
  for (int i = 0; i < r->n; i++) {
    const test_rec_t* e = &r->recs[i];
    CHECK_MSG(e->stopped == 1, "v%d: event %d (type 0x%llx) stopped %d times", v, i, (unsigned long long)e->type,
              e->stopped);
    CHECK_MSG(e->parent >= -1 && e->parent < i, "v%d: event %d has parent %d", v, i, e->parent);
    uint64_t pt = type_of(r, e->parent);
    for (int b = 0; b < 16; b++) counts[b] += e->type == (1ull << b);
    switch (e->type) {
      case ncclProfileGroup: CHECK_EQ_INT(pt, 0); break;
      case ncclProfileColl:
      case ncclProfileP2p:
        if (v >= 5) {
          CHECK_EQ_INT(pt, e->type == ncclProfileColl ? ncclProfileCollApi : ncclProfileP2pApi);
          CHECK(e->parentGroup >= 0 && e->parentGroup < i);
          CHECK_EQ_INT(type_of(r, e->parentGroup), ncclProfileGroup);
        } else {
          CHECK_EQ_INT(pt, ncclProfileGroup);
        }
        break;
      case ncclProfileKernelCh:
      case ncclProfileProxyOp: CHECK(pt == ncclProfileColl || pt == ncclProfileP2p); break;
      case ncclProfileProxyStep:
        CHECK_EQ_INT(pt, ncclProfileProxyOp);
        check_step_states(e, r->recs[e->parent].isSend, i);
        break;
      case ncclProfileNetPlugin: CHECK_EQ_INT(pt, ncclProfileProxyStep); break;
      case ncclProfileGroupApi:
        CHECK_EQ_INT(pt, 0);
        CHECK_EQ_INT(e->nStates, 2);
        CHECK_EQ_INT(e->states[0], ncclProfilerGroupStartApiStop);
        CHECK_EQ_INT(e->states[1], ncclProfilerGroupEndApiStart);
        break;
      case ncclProfileCollApi:
      case ncclProfileP2pApi:
      case ncclProfileKernelLaunch: CHECK_EQ_INT(pt, ncclProfileGroupApi); break;
      case ncclProfileProxyCtrl:
        CHECK_EQ_INT(pt, 0);
        CHECK_EQ_INT(e->nStates, 2);
        CHECK_EQ_INT(e->states[0], ncclProfilerProxyCtrlAppend);
        CHECK_EQ_INT(e->states[1], ncclProfilerProxyCtrlAppendEnd);
        break;
      default: CHECK_MSG(0, "v%d: unexpected event type 0x%llx", v, (unsigned long long)e->type);
    }
  }
  /* 5 collectives and the mask toggle's reported AllReduce in groups of
   * one, the Send/Recv group; one channel. */
  CHECK_EQ_INT(counts[0], 7);                          /* Group */
  CHECK_EQ_INT(counts[1], 6);                          /* Coll */
  CHECK_EQ_INT(counts[2], 2);                          /* P2p: the Send and the Recv */
  CHECK_EQ_INT(counts[6], 6 + 1); /* KernelCh: the Send and the Recv share round 1 (plan_p2p.c) */
  CHECK(counts[3] >= 5 + 2 && counts[4] >= counts[3]); /* ProxyOp, ProxyStep */
  CHECK_EQ_INT(counts[7], counts[4]);                  /* NetPlugin: net-socket's isend/irecv per step */
  CHECK(counts[5] >= 1 && counts[5] <= counts[3]);     /* ProxyCtrl: a run of appended ops each */
  int api = v >= 5;                                    /* older versions have no API events */
  CHECK_EQ_INT(counts[8], api * 7);                    /* GroupApi: a group each */
  CHECK_EQ_INT(counts[9], api * 6);                    /* CollApi */
  CHECK_EQ_INT(counts[10], api * 2);                   /* P2pApi */
  CHECK_EQ_INT(counts[11], api * 7);                   /* KernelLaunch: a launch per group */
}

static int rank_main(int rank, int n, void* arg) {
  scenario_t* sc = arg;
  ncclComm_t comm = ranks_comm_init(rank, n);
  test_report_t* r = plan_observe_report(sc->path); /* holds the library past finalize */
  coll_each_run(comm, rank, n, COUNT);
  check_mask_toggle(comm, r);
  CHECK_NCCL(ncclCommDestroy(comm));
  check_balanced(r, sc->version);
  plan_observe_release();
  return 0;
}

int main(void) {
  setenv("NCCL_SHM_DISABLE", "1", 1);
  unsetenv("MKCCL_TEST_PROFILER_MASK"); /* every event */
  const struct {
    int version, ranks;
    const char* path;
  } runs[] = {{6, 2, TEST_PROFILER_V6}, {6, 4, TEST_PROFILER_V6}, {4, 3, TEST_PROFILER_V4}};
  for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
    scenario_t sc = {.version = runs[i].version, .path = runs[i].path};
    setenv("NCCL_PROFILER_PLUGIN", runs[i].path, 1);
    CHECK_MSG(ranks_run(runs[i].ranks, rank_main, &sc, 120) == 0, "v%d, %d ranks", runs[i].version, runs[i].ranks);
  }
  printf("test_plan_profile: OK\n");
  return 0;
}
