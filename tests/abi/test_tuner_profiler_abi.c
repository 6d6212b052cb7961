/* The tuner and profiler ABI layouts, field by field, against the offsets
 * NCCL's headers give on LP64 (x86_64, aarch64): a plugin built against
 * NCCL's headers reads the same bytes. */
#include <stddef.h>

#include "check.h"
#include "profiler/nccl_profiler.h"
#include "tuner/nccl_tuner.h"

#define OFF(T, f, v) CHECK_EQ_INT(offsetof(T, f), v)
#define SIZE(T, v) CHECK_EQ_INT(sizeof(T), v)

static void test_tuner(void) {
  SIZE(ncclTuner_v2_t, 32);
  SIZE(ncclTuner_v5_t, 32);
  OFF(ncclTuner_v5_t, finalize, 24);
  SIZE(ncclTuner_v6_t, 40);
  OFF(ncclTuner_v6_t, getChunkSize, 32);
  SIZE(ncclNvlDomainInfo_v5_t, 12);
  OFF(ncclTunerConstants_v5_t, hwLatencies, 168);
  /* NCCL's index names for the constants' tables (tuner sources use them). */
  CHECK_EQ_INT(NCCL_HOPPER_COMPCAP_IDX, 2);
  CHECK_EQ_INT(NCCL_BLACKWELL_COMPCAP_IDX, 3);
  CHECK_EQ_INT(NCCL_TUNING_SCALE_4NODES, 2);
  CHECK_EQ_INT(NCCL_NUM_COMPCAPS * NCCL_NUM_TUNING_SCALES * NCCL_NUM_HW_LINKS, 36);
  OFF(ncclTunerConstants_v5_t, llMaxBws, 672);
  OFF(ncclTunerConstants_v5_t, perChMaxRingLL128Bws, 768);
  OFF(ncclTunerConstants_v5_t, perChMaxTreeLL128Bws, 864);
  OFF(ncclTunerConstants_v5_t, perChMaxTreeBws, 960);
  OFF(ncclTunerConstants_v5_t, perChMaxNVLSTreeBws, 1056);
  SIZE(ncclTunerConstants_v5_t, 1152);
}

static void test_profiler(void) {
  SIZE(ncclProfiler_v1_t, 48);
  SIZE(ncclProfiler_v6_t, 48);
  /* v1: numeric codes */
  OFF(ncclProfilerEventDescr_v1_t, coll.func, 24 + 24);
  OFF(ncclProfilerEventDescr_v1_t, coll.datatype, 24 + 60);
  OFF(ncclProfilerEventDescr_v1_t, coll.op, 24 + 64);
  OFF(ncclProfilerEventDescr_v1_t, coll.trafficBytes, 24 + 72);
  OFF(ncclProfilerEventDescr_v1_t, coll.isNvls, 24 + 88);
  SIZE(ncclProfilerEventDescr_v1_t, 120);
  OFF(ncclProfilerEventDescr_v2_t, coll.trafficBytes, 24 + 72);
  OFF(ncclProfilerEventDescr_v2_t, coll.proto, 24 + 96);
  OFF(ncclProfilerEventDescr_v3_t, coll.nMaxChannels, 24 + 72);
  OFF(ncclProfilerEventDescr_v3_t, netPlugin.data, 24 + 8);
  /* v4: 8-bit type, union at 24 */
  OFF(ncclProfilerEventDescr_v4_t, parentObj, 8);
  OFF(ncclProfilerEventDescr_v4_t, rank, 16);
  OFF(ncclProfilerEventDescr_v4_t, coll.nChannels, 24 + 56);
  OFF(ncclProfilerEventDescr_v4_t, coll.proto, 24 + 72);
  OFF(ncclProfilerEventDescr_v4_t, p2p.nChannels, 24 + 36);
  OFF(ncclProfilerEventDescr_v4_t, proxyOp.isSend, 24 + 20);
  OFF(ncclProfilerEventDescr_v4_t, kernelCh.pTimer, 24 + 8);
  SIZE(ncclProfilerEventDescr_v4_t, 104);
  /* v5: 64-bit type, API events, parentGroup */
  OFF(ncclProfilerEventDescr_v5_t, collApi.stream, 24 + 32);
  OFF(ncclProfilerEventDescr_v5_t, collApi.graphCaptured, 24 + 40);
  OFF(ncclProfilerEventDescr_v5_t, coll.parentGroup, 24 + 80);
  OFF(ncclProfilerEventDescr_v5_t, p2p.parentGroup, 24 + 40);
  SIZE(ncclProfilerEventDescr_v5_t, 112);
  /* v6: v5 at the same offsets, plus copy-engine members */
  OFF(ncclProfilerEventDescr_v6_t, coll.parentGroup, 24 + 80);
  OFF(ncclProfilerEventDescr_v6_t, netPlugin.data, 24 + 8);
  OFF(ncclProfilerEventDescr_v6_t, kernelStep.readyTs, 24 + 24);
  OFF(ncclProfilerEventDescr_v6_t, ceColl.stream, 24 + 80);
  SIZE(ncclProfilerEventDescr_v6_t, 112);
  SIZE(ncclProfilerEventStateArgs_v3_t, 16);
  SIZE(ncclProfilerEventStateArgs_v5_t, 8);
  SIZE(ncclProfilerNetIbDescr_v1_t, 40);
  SIZE(ncclProfilerNetSockDescr_v1_t, 24);
}

int main(void) {
#if defined(__LP64__)
  test_tuner();
  test_profiler();
  printf("test_tuner_profiler_abi: OK\n");
  return 0;
#else
  SKIP("not an LP64 target: the offsets checked are NCCL's LP64 layout");
#endif
}
