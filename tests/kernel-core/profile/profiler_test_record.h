/* What the test profiler records (shared by the plugin and the tests). */
#ifndef PROFILER_TEST_RECORD_H
#define PROFILER_TEST_RECORD_H

#include <stdint.h>

#define TEST_REC_MAX 8192
#define TEST_REC_STATES 8

typedef struct {
  uint64_t type;
  int parent;      /* index of the parent's record; -1 NULL; -2 a handle this profiler never gave */
  int stopped;     /* stop calls (1 expected) */
  int stoppedAt;   /* order of the stop among all calls */
  int startedAt;
  int nStates;
  int states[TEST_REC_STATES];
  const char* func; /* v2+: the function string */
  int funcCode;     /* v1: the number */
  int step;         /* ProxyStep */
  int isSend;       /* ProxyOp */
  int64_t netId;    /* NetPlugin */
  int nChannels;    /* Coll, P2p */
  int chunkSize;    /* ProxyOp */
  const char* algo; /* Coll, v2+ */
  int parentGroup;  /* Coll, P2p, v5+: index of coll.parentGroup / p2p.parentGroup (as parent) */
  int64_t stateBytes[TEST_REC_STATES]; /* ProxyStep, v4+: the state's proxyStep.transSize */
  uint64_t startNs, stopNs, stateNs[TEST_REC_STATES]; /* v6: the core's time through mkcclProfilerTimed_v1, else 0 */
} test_rec_t;

typedef struct {
  int version;
  int inits, finalizes;
  int n;
  int badStops; /* stops of unknown handles or twice */
  test_rec_t recs[TEST_REC_MAX];
  int timed; /* v6: calls through mkcclProfilerTimed_v1 */
} test_report_t;

typedef test_report_t* (*test_report_fn)(void);
typedef void (*test_set_mask_fn)(int mask);
typedef void (*test_lock_fn)(int on);

#endif
