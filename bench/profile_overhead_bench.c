/* Benchmark (not a test: it asserts nothing on time): the profiler's cost.
 *   off      no profiler: every call is a load and a branch
 *   mask 0   the trace profiler loaded, its mask cleared
 *   all      the trace profiler with every event (the synthetic run:
 *            5 collectives + Send/Recv, each with proxy ops of 16 steps
 *            per sub, a net event per step; about 32 events per collective)
 * Prints ns per event call and per operation; results go to
 * docs/perf/tuneprof.md. Usage: bench_profile_overhead [iterations]
 * (MKCCL_BENCH_PROFILER=path: that profiler library instead of this build's) */
#include <stdlib.h>
#include <time.h>

#include "check.h"
#include "profile/profile.h"
#include "profile_drive.h"
#include "tuner/nccl_tuner.h"

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static double bench_calls(profile_comm_t* pc, long n) {
  profile_coll_t info = {ncclFuncAllReduce, NULL, NULL, 262144, 0, ncclFloat32, 2, 8, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE};
  void* volatile sink;
  double t0 = now_ns();
  for (long i = 0; i < n; i++) sink = profile_coll_start(pc, NULL, NULL, &info);
  (void)sink;
  return (now_ns() - t0) / (double)n;
}

static double bench_runs(profile_comm_t* pc, int n) {
  double t0 = now_ns();
  for (int i = 0; i < n; i++) profile_drive_sequence(pc);
  return (now_ns() - t0) / (double)n;
}

int main(int argc, char** argv) {
  int iters = argc > 1 ? atoi(argv[1]) : 2000;
  long calls = 100000000;
  setenv("MKCCL_PROFILER_DIR", "/tmp", 1);
  setenv("MKCCL_PROFILER_SUMMARY", "0", 1);
  setenv("MKCCL_PROFILER_MAX_EVENTS", "16777216", 1);

  profile_comm_t off;
  setenv("NCCL_PROFILER_PLUGIN", "none", 1);
  CHECK_NCCL(profile_comm_init(&off, 1, "bench", 1, 2, 0));
  double offCall = bench_calls(&off, calls);
  double offRun = bench_runs(&off, iters);
  profile_comm_fini(&off);

  /* MKCCL_BENCH_PROFILER: another build of the plugin, for before/after comparisons. */
  const char* plugin = getenv("MKCCL_BENCH_PROFILER");
  setenv("NCCL_PROFILER_PLUGIN", plugin && *plugin ? plugin : PROFILER_PLUGIN, 1);
  profile_comm_t pc;
  CHECK_NCCL(profile_comm_init(&pc, 2, "bench", 1, 2, 0));
  CHECK(pc.prof);
  int mask = pc.mask;
  __atomic_store_n(&pc.mask, 0, __ATOMIC_RELAXED);
  double zeroCall = bench_calls(&pc, calls);
  double zeroRun = bench_runs(&pc, iters);
  __atomic_store_n(&pc.mask, mask, __ATOMIC_RELAXED);
  double allRun = bench_runs(&pc, iters);
  double t0 = now_ns();
  profile_comm_fini(&pc); /* writes the trace */
  double finiNs = now_ns() - t0;
  const double ops = 7.0, events = 226.0;
  printf("profile_coll_start, no profiler:        %6.2f ns/call\n", offCall);
  printf("profile_coll_start, loaded, mask 0:     %6.2f ns/call\n", zeroCall);
  printf("synthetic run, no profiler:             %8.0f ns/run (%.0f ns/op)\n", offRun, offRun / ops);
  printf("synthetic run, loaded, mask 0:          %8.0f ns/run (%.0f ns/op)\n", zeroRun, zeroRun / ops);
  printf("synthetic run, all events:              %8.0f ns/run (%.0f ns/op, %.1f ns/event)\n", allRun, allRun / ops,
         (allRun - offRun) / events);
  printf("trace written at finalize:              %8.1f ms for %d runs (%.0f ns/event)\n", finiNs / 1e6, iters,
         finiNs / (events * iters));
  return 0;
}
