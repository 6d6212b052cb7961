/* ProxyOp, ProxyStep and NetPlugin events from the proxy sub-ops'
 * counters (rules in profile.h). A tracker hangs off each sub's
 * profilerHandle; only the proxy thread touches it after the op is posted,
 * except the net callback, which reads a step's event handle. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "profile/profile.h"
#include "profile/profile_internal.h"

typedef struct profile_step_ref {
  struct profile_sub* owner;
  void* _Atomic event; /* the ProxyStep event of the step in this slot, NULL when none */
} profile_step_ref_t;

typedef struct profile_sub {
  void* pHandles[MKCCL_STEPS]; /* first: what the transport hands isend/irecv, per slot */
  profile_step_ref_t refs[MKCCL_STEPS];
  profile_comm_t* pc;
  void* parent;  /* the Coll or P2p event */
  void* opEvent; /* the ProxyOp event */
  int isSend;
  int opStarted;
  uint64_t started; /* steps [seenDone, started) have events open */
  uint64_t seenPosted, seenReceived, seenTransmitted, seenDone;
} profile_sub_t;

#define PROFILE_PROXY_TYPES (ncclProfileProxyOp | ncclProfileProxyStep | ncclProfileNetPlugin)

ncclResult_t profile_proxy_sub_attach(profile_comm_t* pc, void* parent, int isSend, mkcclProxySubOp_v1* sub) {
  if (!profile_active(pc, PROFILE_PROXY_TYPES)) return ncclSuccess;
  profile_sub_t* t = calloc(1, sizeof(*t));
  if (!t) return MK_FAIL(ncclSystemError, "profile: out of memory tracking a proxy op");
  /* No NetPlugin events asked for when the op is posted: the net plugin gets
   * NULL parent handles for it and never calls back. */
  int net = profile_active(pc, ncclProfileNetPlugin);
  for (int i = 0; i < MKCCL_STEPS; i++) {
    t->refs[i].owner = t;
    t->pHandles[i] = net ? &t->refs[i] : NULL;
  }
  t->pc = pc;
  t->parent = parent;
  t->isSend = isSend;
  sub->profilerHandle = t;
  return ncclSuccess;
}

static uint64_t proxy_slice(const mkcclProxyOp_v1* op) { return op->sliceSteps > 0 ? (uint64_t)op->sliceSteps : 1; }

/* The bytes of step k of sub s (NCCL's transSize: that step's, not a running
 * total): as the transport reported them, else the slice's nominal size. */
static size_t proxy_step_bytes(const mkcclProxyOp_v1* op, int s, uint64_t k) {
  if (op->stepBytesKnown) return op->stepBytes[s][k % MKCCL_STEPS] > 0 ? (size_t)op->stepBytes[s][k % MKCCL_STEPS] : 0;
  size_t step = op->chunkSteps > 0 && op->chunkSize > 0 ? (size_t)op->chunkSize / (size_t)op->chunkSteps : 0;
  return step * (size_t)proxy_slice(op);
}

/* A step state at the pass's moment. */
static void proxy_step_state(profile_sub_t* t, void* ev, ncclProfilerEventState_t state, size_t transSize,
                             profile_clock_t* clk) {
  if (!ev) return;
  ncclProfilerEventStateArgs_v6_t a;
  a.proxyStep.transSize = transSize;
  profile_event_state_at_(t->pc, ev, state, &a, clk);
}

/* Start step events up to (excluding) `until`, slice by slice. Sends wait
 * for the GPU from their start: SendGPUWait at the same moment. */
static void proxy_steps_start(profile_sub_t* t, const mkcclProxyOp_v1* op, uint64_t until, profile_clock_t* clk) {
  uint64_t slice = proxy_slice(op);
  while (t->started < until) {
    void* ev = profile_active(t->pc, ncclProfileProxyStep)
                   ? profile_proxy_step_start_at_(t->pc, t->opEvent, (int)t->started, clk)
                   : NULL;
    atomic_store_explicit(&t->refs[t->started % MKCCL_STEPS].event, ev, memory_order_release);
    if (t->isSend) proxy_step_state(t, ev, ncclProfilerProxyStepSendGPUWait, 0, clk);
    t->started += slice;
  }
}

static void proxy_window_open(profile_sub_t* t, const mkcclProxyOp_v1* op, const mkcclProxySubOp_v1* sub,
                              profile_clock_t* clk) {
  if (!t->opStarted) {
    t->opStarted = 1;
    t->opEvent = profile_active(t->pc, ncclProfileProxyOp)
                     ? profile_proxy_op_start_at_(t->pc, t->parent, sub->channelId, sub->peer, (int)sub->nsteps,
                                                  op->chunkSize, t->isSend, clk)
                     : NULL;
  }
  uint64_t end = t->seenDone + MKCCL_STEPS;
  proxy_steps_start(t, op, end < sub->nsteps ? end : sub->nsteps, clk);
}

/* Each pass over an op (before, after a progress call) is one moment. */
void profile_proxy_prepare(mkcclProxyOp_v1* op) {
  profile_clock_t clk = {0};
  for (int s = 0; s < op->nsubs; s++) {
    profile_sub_t* t = op->subs[s].profilerHandle;
    if (t) proxy_window_open(t, op, &op->subs[s], &clk);
  }
}

/* The state every step in [*seen, now) reaches; *seen moves to now. */
static void proxy_steps_state(profile_sub_t* t, const mkcclProxyOp_v1* op, int s, uint64_t* seen, uint64_t now,
                              ncclProfilerEventState_t state, uint64_t onlyFrom, profile_clock_t* clk) {
  uint64_t slice = proxy_slice(op);
  if (now > t->started) proxy_steps_start(t, op, now, clk);
  for (uint64_t k = *seen; k < now; k += slice) {
    if (k < onlyFrom) continue;
    void* ev = atomic_load_explicit(&t->refs[k % MKCCL_STEPS].event, memory_order_relaxed);
    proxy_step_state(t, ev, state, proxy_step_bytes(op, s, k), clk);
  }
  if (now > *seen) *seen = now;
}

static void proxy_steps_stop(profile_sub_t* t, const mkcclProxyOp_v1* op, uint64_t now, profile_clock_t* clk) {
  uint64_t slice = proxy_slice(op);
  if (now > t->started) proxy_steps_start(t, op, now, clk);
  for (uint64_t k = t->seenDone; k < now; k += slice) {
    void* ev = atomic_exchange_explicit(&t->refs[k % MKCCL_STEPS].event, NULL, memory_order_relaxed);
    profile_event_stop_at_(t->pc, ev, clk);
  }
  if (now > t->seenDone) t->seenDone = now;
}

void profile_proxy_observe(mkcclProxyOp_v1* op) {
  if (op->state == MKCCL_PROXY_OP_READY) return; /* the transport has not started it */
  profile_clock_t clk = {0};
  for (int s = 0; s < op->nsubs; s++) {
    mkcclProxySubOp_v1* sub = &op->subs[s];
    profile_sub_t* t = sub->profilerHandle;
    if (!t) continue;
    proxy_window_open(t, op, sub, &clk);
    if (!t->isSend) {
      proxy_steps_state(t, op, s, &t->seenPosted, sub->posted, ncclProfilerProxyStepRecvWait, 0, &clk);
      /* Received but not yet handed on: waiting for a flush. */
      proxy_steps_state(t, op, s, &t->seenReceived, sub->received, ncclProfilerProxyStepRecvFlushWait,
                        sub->transmitted, &clk);
    }
    proxy_steps_state(t, op, s, &t->seenTransmitted, sub->transmitted,
                      t->isSend ? ncclProfilerProxyStepSendWait : ncclProfilerProxyStepRecvGPUWait, 0, &clk);
    proxy_steps_stop(t, op, sub->done, &clk);
    if (sub->done >= sub->nsteps && t->opEvent) {
      profile_event_stop_at_(t->pc, t->opEvent, &clk);
      t->opEvent = NULL;
    } else {
      proxy_window_open(t, op, sub, &clk);
    }
  }
}

void profile_proxy_finish(mkcclProxyOp_v1* op) {
  profile_clock_t clk = {0};
  for (int s = 0; s < op->nsubs; s++) {
    profile_sub_t* t = op->subs[s].profilerHandle;
    if (!t) continue;
    for (int i = 0; i < MKCCL_STEPS; i++)
      profile_event_stop_at_(t->pc, atomic_exchange_explicit(&t->refs[i].event, NULL, memory_order_relaxed), &clk);
    profile_event_stop_at_(t->pc, t->opEvent, &clk);
    op->subs[s].profilerHandle = NULL;
    free(t);
  }
}

int profile_net_callback(void** eHandle, int type, void* pHandle, int64_t pluginId, void* extData) {
  const ncclProfiler_v6_t* prof = atomic_load_explicit(&profile_process_prof, memory_order_acquire);
  if (!eHandle) return 0;
  if (type == NCCL_PROFILER_NET_EVENT_START) {
    *eHandle = NULL;
    profile_step_ref_t* ref = pHandle;
    if (!ref || !prof) return 0;
    profile_sub_t* t = ref->owner;
    if (!profile_active(t->pc, ncclProfileNetPlugin) || !t->pc->prof) return 0;
    void* step = atomic_load_explicit(&ref->event, memory_order_acquire);
    ncclProfilerEventDescr_v6_t d;
    memset(&d, 0, sizeof(d));
    d.type = ncclProfileNetPlugin;
    d.parentObj = step ? step : t->opEvent;
    d.rank = t->pc->rank;
    d.netPlugin.id = pluginId;
    d.netPlugin.data = extData;
    if (t->pc->prof->startEvent(t->pc->ctx, eHandle, &d) != ncclSuccess) *eHandle = NULL;
    return 0;
  }
  if (!*eHandle || !prof) return 0;
  if (type == NCCL_PROFILER_NET_EVENT_UPDATE || type == NCCL_PROFILER_NET_EVENT_UPDATE_AND_STOP) {
    ncclProfilerEventStateArgs_v6_t a;
    memset(&a, 0, sizeof(a));
    a.netPlugin.data = extData;
    prof->recordEventState(*eHandle, ncclProfilerNetPluginUpdate, &a);
  }
  if (type == NCCL_PROFILER_NET_EVENT_STOP || type == NCCL_PROFILER_NET_EVENT_UPDATE_AND_STOP) {
    prof->stopEvent(*eHandle);
    *eHandle = NULL;
  }
  return 0;
}
