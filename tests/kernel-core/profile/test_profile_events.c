/* Profiler events through the core API, for every profiler ABI version
 * (a recording test profiler per version, loaded through the loader and
 * its adapter): a synthetic sequence of every collective and Send/Recv
 * with proxy ops, steps, net plugin events and kernel channels; every start
 * has a stop, parents start before children and are of the right type,
 * old versions see only their events and v1..v4 get the Group as a
 * collective's parent; steps record their states in order (v6, which has
 * mkcclProfilerTimed_v1: with the proxy's times, SendGPUWait at the step's
 * start); mask 0 (or a
 * mask cleared later) means no events. */
#include <dlfcn.h>
#include <stdlib.h>

#include "check.h"
#include "profile/profile.h"
#include "profile_drive.h"
#include "profiler_test_record.h"
#include "tuner/nccl_tuner.h"

static const char* const plugin_paths[7] = {NULL, TEST_PROFILER_V1, TEST_PROFILER_V2, TEST_PROFILER_V3,
                                             TEST_PROFILER_V4, TEST_PROFILER_V5, TEST_PROFILER_V6};

static int count_type(const test_report_t* r, uint64_t type) {
  int n = 0;
  for (int i = 0; i < r->n; i++) n += r->recs[i].type == type;
  return n;
}

static void check_report(const test_report_t* r, int v) {
  CHECK_EQ_INT(r->version, v);
  CHECK_EQ_INT(r->inits, 1);
  CHECK_EQ_INT(r->finalizes, 1);
  CHECK_EQ_INT(r->badStops, 0);
  CHECK(v == 6 ? r->timed > 0 : r->timed == 0); /* mkcclProfilerTimed_v1: v6 only */
  int api = v >= 5, kch = v >= 3;
  CHECK_EQ_INT(count_type(r, ncclProfileGroupApi), api);
  CHECK_EQ_INT(count_type(r, ncclProfileCollApi), api * 5);
  CHECK_EQ_INT(count_type(r, ncclProfileP2pApi), api * 2);
  CHECK_EQ_INT(count_type(r, ncclProfileKernelLaunch), api);
  CHECK_EQ_INT(count_type(r, ncclProfileGroup), 1);
  CHECK_EQ_INT(count_type(r, ncclProfileColl), 5);
  CHECK_EQ_INT(count_type(r, ncclProfileP2p), 2);
  CHECK_EQ_INT(count_type(r, ncclProfileKernelCh), kch * 5);
  CHECK_EQ_INT(count_type(r, ncclProfileProxyOp), 12);                 /* 5 x (send + recv) + send + recv */
  CHECK_EQ_INT(count_type(r, ncclProfileProxyStep), 12 * NSTEPS / SLICE);
  CHECK_EQ_INT(count_type(r, ncclProfileNetPlugin), kch * 12 * NSTEPS / SLICE);
  static const char* const names[5] = {"AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce"};
  int colls = 0;
  for (int i = 0; i < r->n; i++) {
    const test_rec_t* e = &r->recs[i];
    CHECK_MSG(e->stopped == 1, "v%d: event %d (type 0x%llx) stopped %d times", v, i, (unsigned long long)e->type,
              e->stopped);
    CHECK_MSG(e->parent >= -1 && e->parent < i, "v%d: event %d has parent %d", v, i, e->parent);
    uint64_t pt = e->parent >= 0 ? r->recs[e->parent].type : 0;
    switch (e->type) {
      case ncclProfileColl:
        CHECK_EQ_INT(pt, v >= 5 ? ncclProfileCollApi : ncclProfileGroup);
        if (v == 1) CHECK_EQ_INT(e->funcCode, profile_drive_funcs[colls]);
        else CHECK_STR_CONTAINS(e->func, names[colls]);
        colls++;
        break;
      case ncclProfileP2p: CHECK_EQ_INT(pt, v >= 5 ? ncclProfileP2pApi : ncclProfileGroup); break;
      case ncclProfileCollApi:
      case ncclProfileP2pApi:
      case ncclProfileKernelLaunch: CHECK_EQ_INT(pt, ncclProfileGroupApi); break;
      case ncclProfileProxyOp:
        CHECK(pt == ncclProfileColl || pt == ncclProfileP2p);
        if (v == 6) CHECK(e->startNs != 0 && e->stopNs >= e->startNs);
        break;
      case ncclProfileKernelCh: CHECK_EQ_INT(pt, ncclProfileColl); break;
      case ncclProfileNetPlugin:
        CHECK_EQ_INT(pt, ncclProfileProxyStep);
        CHECK_EQ_INT(e->netId, NCCL_PROFILER_NET_TYPE_SOCK | 1);
        CHECK(!r->recs[e->parent].stopped || r->recs[e->parent].stoppedAt > e->stoppedAt); /* inside its step */
        break;
      case ncclProfileProxyStep: {
        CHECK_EQ_INT(pt, ncclProfileProxyOp);
        int send = r->recs[e->parent].isSend;
        CHECK_EQ_INT(e->nStates, 2);
        CHECK_EQ_INT(e->states[0], send ? ncclProfilerProxyStepSendGPUWait : ncclProfilerProxyStepRecvWait);
        CHECK_EQ_INT(e->states[1], send ? ncclProfilerProxyStepSendWait : ncclProfilerProxyStepRecvGPUWait);
        CHECK(e->step % SLICE == 0 && e->step < NSTEPS);
        if (v >= 4) { /* transSize: that step's bytes as the transport reported them (NCCL's meaning) */
          /* SendGPUWait: nothing sent yet; RecvWait: 0 until received, which may be in the same pass */
          CHECK(e->stateBytes[0] == 0 || (!send && e->stateBytes[0] == PROFILE_DRIVE_RECV_BYTES(e->step)));
          CHECK_EQ_INT(e->stateBytes[1], send ? PROFILE_DRIVE_SEND_BYTES(e->step) : PROFILE_DRIVE_RECV_BYTES(e->step));
        }
        if (v == 6) { /* the proxy's calls come with its time; a send waits for the GPU from its start */
          CHECK(e->startNs != 0 && e->stateNs[0] >= e->startNs && e->stateNs[1] >= e->stateNs[0]);
          CHECK(e->stopNs >= e->stateNs[1]);
          if (send) CHECK(e->stateNs[0] == e->startNs);
        }
        break;
      }
      case ncclProfileGroupApi:
        CHECK_EQ_INT(e->nStates, 2);
        CHECK_EQ_INT(e->states[0], ncclProfilerGroupStartApiStop);
        break;
      default: CHECK_EQ_INT(pt, 0); break;
    }
  }
}

static test_report_t* report_of(int v) {
  void* lib = dlopen(plugin_paths[v], RTLD_NOW | RTLD_NOLOAD);
  CHECK_MSG(lib, "v%d: the profiler is not loaded", v);
  test_report_fn fn = (test_report_fn)(uintptr_t)dlsym(lib, "test_profiler_report");
  CHECK(fn);
  test_report_t* r = fn();
  dlclose(lib); /* drops only the reference taken here */
  return r;
}

static void test_version(int v) {
  setenv("NCCL_PROFILER_PLUGIN", plugin_paths[v], 1);
  unsetenv("MKCCL_TEST_PROFILER_MASK");
  profile_comm_t pc;
  CHECK_NCCL(profile_comm_init(&pc, 0x1234, "test", 1, 2, 0));
  CHECK_MSG(pc.prof != NULL, "v%d did not load", v);
  const ncclProfiler_v6_t* prof = NULL;
  int abi = 0;
  CHECK_NCCL(profile_plugin_acquire(&prof, &abi));
  CHECK_EQ_INT(abi, v);
  profile_plugin_release();
  test_report_t* r = report_of(v);
  profile_drive_sequence(&pc);
  /* Keep the library loaded across fini to read the report. */
  void* keep = dlopen(plugin_paths[v], RTLD_NOW | RTLD_NOLOAD);
  profile_comm_fini(&pc);
  check_report(r, v);

  /* Mask 0: no event reaches the plugin, no proxy trackers. */
  int before = r->n;
  setenv("MKCCL_TEST_PROFILER_MASK", "0", 1);
  CHECK_NCCL(profile_comm_init(&pc, 0x1234, "test", 1, 2, 0));
  profile_drive_sequence(&pc);
  profile_comm_fini(&pc);
  CHECK_EQ_INT(r->n, before);
  /* The mask is read at every event: cleared after init, events stop. */
  setenv("MKCCL_TEST_PROFILER_MASK", "0xffff", 1);
  CHECK_NCCL(profile_comm_init(&pc, 0x1234, "test", 1, 2, 0));
  CHECK(profile_group_start(&pc) != NULL);
  r->recs[r->n - 1].stopped = 1;
  __atomic_store_n(&pc.mask, 0, __ATOMIC_RELAXED);
  CHECK(profile_group_start(&pc) == NULL);
  profile_comm_fini(&pc);
  CHECK_EQ_INT(r->n, before + 1);
  dlclose(keep);
}

int main(void) {
  for (int v = 1; v <= 6; v++) test_version(v);
  /* No profiler at all: every call is a no-op. */
  setenv("NCCL_PROFILER_PLUGIN", "none", 1);
  profile_comm_t pc;
  CHECK_NCCL(profile_comm_init(&pc, 1, "x", 1, 1, 0));
  CHECK(pc.prof == NULL && pc.mask == 0);
  profile_drive_sequence(&pc);
  profile_comm_fini(&pc);
  printf("test_profile_events: OK\n");
  return 0;
}
