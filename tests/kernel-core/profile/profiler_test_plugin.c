/* A recording profiler for tests, one source for every ABI version:
 * compiled with TEST_PROFILER_VERSION=1..6 it exports ncclProfiler_v<N> (v6:
 * and mkcclProfilerTimed_v1, whose timestamps it keeps),
 * test_profiler_report() and test_profiler_set_mask() (changes the mask
 * the host reads at each event). The mask comes from
 * MKCCL_TEST_PROFILER_MASK (default all events). Test code: one communicator at a time, reads the
 * environment directly. Thread-safe (the planner, the executor's channel
 * threads and the proxy thread report concurrently). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/mkccl_profiler_timed_v1.h"
#include "profiler/nccl_profiler.h"
#include "profiler_test_record.h"

#define EXPORT __attribute__((visibility("default")))
#define V TEST_PROFILER_VERSION

static test_report_t report = {V, 0, 0, 0, 0, {{0}}, 0};
static int calls;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

EXPORT test_report_t* test_profiler_report(void) { return &report; }

/* The proxy thread records events while a test reads the report (a
 * collective's ProxyOp/NetPlugin events may trail its return): readers of
 * a live report hold this lock too. */
EXPORT void test_profiler_lock(int on) {
  if (on) pthread_mutex_lock(&lock);
  else pthread_mutex_unlock(&lock);
}

static int rec_index(void* h) {
  if (!h) return -1;
  test_rec_t* r = h;
  if (r < report.recs || r >= report.recs + report.n) return -2;
  return (int)(r - report.recs);
}

/* The host's activation mask, which a profiler may change at any time. */
static int* hostMask;
EXPORT void test_profiler_set_mask(int mask) {
  if (hostMask) __atomic_store_n(hostMask, mask, __ATOMIC_RELAXED);
}

static ncclResult_t rec_init(void** ctx, int* mask) {
  const char* m = getenv("MKCCL_TEST_PROFILER_MASK");
  *mask = m ? (int)strtol(m, NULL, 0) : 0x7fff;
  hostMask = mask;
  *ctx = &report;
  report.inits++;
  return ncclSuccess;
}

static ncclResult_t rec_stop(void* h) {
  pthread_mutex_lock(&lock);
  int i = rec_index(h);
  if (i < 0 || report.recs[i].stopped) report.badStops++;
  else report.recs[i].stopped++, report.recs[i].stoppedAt = calls++;
  pthread_mutex_unlock(&lock);
  return ncclSuccess;
}

static ncclResult_t rec_finalize(void* ctx) {
  (void)ctx;
  hostMask = NULL;
  report.finalizes++;
  return ncclSuccess;
}

/* Version-independent part of startEvent: the descriptor's common head
 * (called with the lock held). */
static test_rec_t* rec_new(uint64_t type, void* parent) {
  if (report.n == TEST_REC_MAX) return NULL;
  test_rec_t* r = &report.recs[report.n++];
  memset(r, 0, sizeof(*r));
  r->type = type;
  r->parent = rec_index(parent);
  r->parentGroup = -1;
  r->startedAt = calls++;
  return r;
}

/* v4+ state args carry proxyStep.transSize. */
#if V >= 4
#define REC_BYTES(r, a) ((r).stateBytes[(r).nStates] = (a) && (r).type == ncclProfileProxyStep ? (int64_t)(a)->proxyStep.transSize : -1)
#else
#define REC_BYTES(r, a) ((void)(a), (r).stateBytes[(r).nStates] = -1)
#endif
#define REC_STATE(ArgsT)                                                          \
  static ncclResult_t rec_state(void* h, ncclProfilerEventState_t s, ArgsT* a) { \
    pthread_mutex_lock(&lock);                                                    \
    int i = rec_index(h);                                                         \
    if (i < 0) report.badStops++;                                                 \
    else if (report.recs[i].nStates < TEST_REC_STATES) {                          \
      REC_BYTES(report.recs[i], a);                                               \
      report.recs[i].states[report.recs[i].nStates++] = (int)s;                   \
    }                                                                             \
    pthread_mutex_unlock(&lock);                                                  \
    return ncclSuccess;                                                           \
  }

#if V == 1
REC_STATE(ncclProfilerEventStateArgs_v1_t)
static ncclResult_t rec_start(void* ctx, void** h, ncclProfilerEventDescr_v1_t* d) {
  (void)ctx;
  pthread_mutex_lock(&lock);
  test_rec_t* r = rec_new(d->type, d->parentObj);
  if (r && d->type == ncclProfileColl) r->funcCode = d->coll.func, r->nChannels = d->coll.nMaxChannels;
  if (r && d->type == ncclProfileP2p) r->funcCode = d->p2p.func;
  if (r && d->type == ncclProfileProxyStep) r->step = d->proxyStep.step;
  if (r && d->type == ncclProfileProxyOp) r->isSend = d->proxyOp.isSend, r->chunkSize = d->proxyOp.chunkSize;
  *h = r;
  pthread_mutex_unlock(&lock);
  return ncclSuccess;
}
EXPORT const ncclProfiler_v1_t ncclProfiler_v1 = {"test-v1", rec_init, rec_start, rec_stop, rec_state, rec_finalize};
#else
#if V == 2
#define DESCR ncclProfilerEventDescr_v2_t
REC_STATE(ncclProfilerEventStateArgs_v2_t)
#elif V == 3
#define DESCR ncclProfilerEventDescr_v3_t
REC_STATE(ncclProfilerEventStateArgs_v3_t)
#elif V == 4
#define DESCR ncclProfilerEventDescr_v4_t
REC_STATE(ncclProfilerEventStateArgs_v4_t)
#elif V == 5
#define DESCR ncclProfilerEventDescr_v5_t
REC_STATE(ncclProfilerEventStateArgs_v5_t)
#else
#define DESCR ncclProfilerEventDescr_v6_t
REC_STATE(ncclProfilerEventStateArgs_v6_t)
#endif
static ncclResult_t rec_start(void* ctx, void** h, DESCR* d) {
  (void)ctx;
  pthread_mutex_lock(&lock);
  test_rec_t* r = rec_new(d->type, d->parentObj);
  if (r && d->type == ncclProfileColl) r->func = d->coll.func, r->algo = d->coll.algo;
  if (r && d->type == ncclProfileP2p) r->func = d->p2p.func;
#if V >= 4
  if (r && d->type == ncclProfileColl) r->nChannels = d->coll.nChannels;
  if (r && d->type == ncclProfileP2p) r->nChannels = d->p2p.nChannels;
#else
  if (r && d->type == ncclProfileColl) r->nChannels = d->coll.nMaxChannels;
#endif
  if (r && d->type == ncclProfileProxyStep) r->step = d->proxyStep.step;
  if (r && d->type == ncclProfileProxyOp) r->isSend = d->proxyOp.isSend, r->chunkSize = d->proxyOp.chunkSize;
#if V >= 3
  if (r && d->type == ncclProfileNetPlugin) r->netId = d->netPlugin.id;
#endif
#if V >= 5
  if (r && d->type == ncclProfileColl) r->parentGroup = rec_index(d->coll.parentGroup);
  if (r && d->type == ncclProfileP2p) r->parentGroup = rec_index(d->p2p.parentGroup);
#endif
  *h = r;
  pthread_mutex_unlock(&lock);
  return ncclSuccess;
}
#if V == 2
EXPORT const ncclProfiler_v2_t ncclProfiler_v2 = {"test-v2", rec_init, rec_start, rec_stop, rec_state, rec_finalize};
#elif V == 3
EXPORT const ncclProfiler_v3_t ncclProfiler_v3 = {"test-v3", rec_init, rec_start, rec_stop, rec_state, rec_finalize};
#elif V == 4
static ncclResult_t rec_init_v4(void** ctx, int* mask, const char* name, uint64_t hash, int nNodes, int nRanks,
                                int rank, ncclDebugLogger_t log) {
  (void)name, (void)hash, (void)nNodes, (void)nRanks, (void)rank, (void)log;
  return rec_init(ctx, mask);
}
EXPORT const ncclProfiler_v4_t ncclProfiler_v4 = {"test-v4", rec_init_v4, rec_start, rec_stop, rec_state,
                                                  rec_finalize};
#else
static ncclResult_t rec_init_v5(void** ctx, uint64_t id, int* mask, const char* name, int nNodes, int nRanks, int rank,
                                ncclDebugLogger_t log) {
  (void)id, (void)name, (void)nNodes, (void)nRanks, (void)rank, (void)log;
  return rec_init(ctx, mask);
}
#if V == 5
EXPORT const ncclProfiler_v5_t ncclProfiler_v5 = {"test-v5", rec_init_v5, rec_start, rec_stop, rec_state,
                                                  rec_finalize};
#else
EXPORT const ncclProfiler_v6_t ncclProfiler_v6 = {"test-v6", rec_init_v5, rec_start, rec_stop, rec_state,
                                                  rec_finalize};
/* v6 also takes the core's timestamps (mkcclProfilerTimed_v1) and keeps them. */
static ncclResult_t rec_start_at(void* ctx, void** h, ncclProfilerEventDescr_v6_t* d, uint64_t ns) {
  ncclResult_t res = rec_start(ctx, h, d);
  pthread_mutex_lock(&lock);
  if (rec_index(*h) >= 0) ((test_rec_t*)*h)->startNs = ns;
  report.timed++;
  pthread_mutex_unlock(&lock);
  return res;
}
static ncclResult_t rec_stop_at(void* h, uint64_t ns) {
  pthread_mutex_lock(&lock);
  if (rec_index(h) >= 0) ((test_rec_t*)h)->stopNs = ns;
  report.timed++;
  pthread_mutex_unlock(&lock);
  return rec_stop(h);
}
static ncclResult_t rec_state_at(void* h, ncclProfilerEventState_t s, ncclProfilerEventStateArgs_v6_t* a,
                                 uint64_t ns) {
  pthread_mutex_lock(&lock);
  int i = rec_index(h);
  if (i >= 0 && report.recs[i].nStates < TEST_REC_STATES) report.recs[i].stateNs[report.recs[i].nStates] = ns;
  report.timed++;
  pthread_mutex_unlock(&lock);
  return rec_state(h, s, a);
}
EXPORT const mkcclProfilerTimed_v1_t mkcclProfilerTimed_v1 = {rec_start_at, rec_stop_at, rec_state_at};
#endif
#endif
#endif
