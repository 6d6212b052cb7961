/* The synthetic profiler run (profile_drive.h). */
#include "profile_drive.h"

#include <string.h>

#include "check.h"
#include "tuner/nccl_tuner.h"

/* One proxy op of `nsubs` subs run to completion the way the proxy loop
 * does, with a net plugin reporting one event per step. */
static void drive_proxy(profile_comm_t* pc, void* parent, int nsubs, const int* isSend) {
  mkcclProxyOp_v1 op;
  memset(&op, 0, sizeof(op));
  op.nsubs = nsubs;
  op.sliceSteps = SLICE;
  op.chunkSteps = 4;
  op.chunkSize = 1 << 16;
  op.state = MKCCL_PROXY_OP_READY;
  void* net[MKCCL_PROXY_MAX_SUBS][MKCCL_STEPS] = {{0}};
  for (int s = 0; s < nsubs; s++) {
    op.subs[s].nsteps = NSTEPS;
    op.subs[s].channelId = s;
    op.subs[s].peer = 1;
    CHECK_NCCL(profile_proxy_sub_attach(pc, parent, isSend[s], &op.subs[s]));
  }
  int tracked = profile_proxy_tracked(&op);
  for (int round = 0; round < 1000 && op.done < nsubs; round++) {
    if (tracked) profile_proxy_prepare(&op);
    op.state = MKCCL_PROXY_OP_PROGRESS;
    for (int s = 0; s < nsubs; s++) {
      mkcclProxySubOp_v1* sub = &op.subs[s];
      if (sub->done == sub->nsteps) continue;
      uint64_t* issue = isSend[s] ? &sub->transmitted : &sub->posted;
      if (*issue < sub->nsteps && *issue < sub->done + MKCCL_STEPS) {
        void* ph = sub->profilerHandle ? ((void**)sub->profilerHandle)[*issue % MKCCL_STEPS] : NULL;
        ncclProfilerNetSockDescr_v1_t d = {ncclProfileSocket, {{3, isSend[s], 8192}}};
        profile_net_callback(&net[s][*issue % MKCCL_STEPS], NCCL_PROFILER_NET_EVENT_START, ph,
                             NCCL_PROFILER_NET_TYPE_SOCK | 1, &d);
        /* Step sizes as transport-net reports them: a send's when posted, a
         * receive's 0 until it completed (PROFILE_DRIVE_*_BYTES). */
        op.stepBytesKnown = 1;
        op.stepBytes[s][*issue % MKCCL_STEPS] = isSend[s] ? PROFILE_DRIVE_SEND_BYTES(*issue) : 0;
        *issue += SLICE;
      }
      if (!isSend[s]) {
        uint64_t was = sub->received;
        sub->received = sub->transmitted = sub->posted > SLICE && sub->posted < NSTEPS ? sub->posted - SLICE : sub->posted;
        for (uint64_t k = was; k < sub->received; k += SLICE) op.stepBytes[s][k % MKCCL_STEPS] = PROFILE_DRIVE_RECV_BYTES(k);
      }
      if (sub->transmitted > sub->done && (sub->transmitted - sub->done > 4 || sub->transmitted == sub->nsteps)) {
        profile_net_callback(&net[s][sub->done % MKCCL_STEPS], NCCL_PROFILER_NET_EVENT_STOP, NULL, 0, NULL);
        sub->done += SLICE;
        if (sub->done == sub->nsteps) op.done++;
      }
    }
    if (op.done == nsubs) op.state = MKCCL_PROXY_OP_DONE;
    if (tracked) profile_proxy_observe(&op);
  }
  CHECK_EQ_INT(op.done, nsubs);
  if (tracked) profile_proxy_finish(&op);
  for (int s = 0; s < nsubs; s++) CHECK(op.subs[s].profilerHandle == NULL);
}

const int profile_drive_funcs[5] = {ncclFuncAllReduce, ncclFuncAllGather, ncclFuncReduceScatter, ncclFuncBroadcast,
                             ncclFuncReduce};

void profile_drive_sequence(profile_comm_t* pc) {
  void* gapi = profile_group_api_start(pc, 1, 0);
  profile_group_api_state(pc, gapi, ncclProfilerGroupStartApiStop);
  void* collApi[5];
  for (int i = 0; i < 5; i++) {
    collApi[i] = profile_coll_api_start(pc, gapi, profile_drive_funcs[i], 1024, ncclFloat32, 0, NULL, 0);
    profile_event_stop(pc, collApi[i]);
  }
  void* sendApi = profile_p2p_api_start(pc, gapi, ncclFuncSend, 256, ncclInt8, NULL, 0);
  profile_event_stop(pc, sendApi);
  void* recvApi = profile_p2p_api_start(pc, gapi, ncclFuncRecv, 256, ncclInt8, NULL, 0);
  profile_event_stop(pc, recvApi);
  profile_group_api_state(pc, gapi, ncclProfilerGroupEndApiStart);
  void* launch = profile_kernel_launch_start(pc, gapi, NULL);
  profile_event_stop(pc, launch);

  void* group = profile_group_start(pc);
  const int sendRecv[2] = {1, 0};
  for (int i = 0; i < 5; i++) {
    profile_coll_t info = {profile_drive_funcs[i], NULL, NULL, 1024, 0, ncclFloat32, 2, 8, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE};
    void* coll = profile_coll_start(pc, group, collApi[i], &info);
    profile_event_stop(pc, coll); /* enqueued: NCCL's meaning of a collective's stop */
    void* kch = profile_kernel_ch_start(pc, coll, 0, 1);
    drive_proxy(pc, coll, 2, sendRecv);
    profile_kernel_ch_stop(pc, kch, 2);
  }
  void* send = profile_p2p_start(pc, group, sendApi, ncclFuncSend, NULL, ncclInt8, 256, 1, 1);
  profile_event_stop(pc, send);
  drive_proxy(pc, send, 1, &sendRecv[0]);
  void* recv = profile_p2p_start(pc, group, recvApi, ncclFuncRecv, NULL, ncclInt8, 256, 1, 1);
  profile_event_stop(pc, recv);
  drive_proxy(pc, recv, 1, &sendRecv[1]);
  profile_event_stop(pc, group);
  profile_group_api_stop(pc, gapi);
}

