/* GPU communicators under faults (needs a GPU; skipped without, exit 77).
 *
 *   test_gpu_fault kill N    the last rank SIGKILLs itself with its
 *                            AllReduce in flight; every survivor's
 *                            ncclCommGetAsyncError must turn to
 *                            ncclRemoteError or ncclSystemError within
 *                            MKCCL_TIMEOUT (1..5) + slack, its stream end,
 *                            ncclCommAbort return
 *   test_gpu_fault dead N    the same with default settings (MKCCL_TIMEOUT
 *                            unset): ncclRemoteError within 2 s, the last
 *                            error naming the victim's rank, host and pid
 *                            (the peer watch)
 *   test_gpu_fault abort N   the last rank never calls the AllReduce; a
 *                            second thread of every other rank calls
 *                            ncclCommAbort while it is in flight: the abort
 *                            returns and the stream ends, within a bound
 *   test_gpu_fault stress N ROUNDS   in the same processes, ROUNDS rounds
 *                            that cycle through: an AllReduce the last
 *                            rank never joins, aborted from another thread;
 *                            the last rank's ncclCommDestroy while the
 *                            others are in an AllReduce (they fail); a
 *                            non-blocking init aborted while in progress.
 *                            Every abort and destroy returns within a
 *                            bound; after every round fds, threads and shm
 *                            as before, GPU memory within a page per rank
 *   test_gpu_fault deadrounds 2 ROUNDS   one survivor, a fresh victim
 *                            process each round killed mid-AllReduce, as
 *                            dead; after every round the survivor's fds,
 *                            threads, shm and GPU memory as after the first
 *   test_gpu_fault leak N    init, AllReduce, ncclCommAbort or
 *                            ncclCommDestroy, LEAK_CYCLES times: fds,
 *                            threads, GPU memory and shm segments back to
 *                            what they were
 *
 * Ranks are processes, rank r on GPU r % ndev (two on one GPU with
 * MKCCL_ALLOW_SAME_GPU=1); transports follow the environment
 * (NCCL_P2P_DISABLE=1: SHM; plus NCCL_SHM_DISABLE=1: NET). The stuck peer
 * case is test_gpu_coll stuck. */
#include <cuda_runtime.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "gpu_common.h"
#include "nccl.h"
#include "proc_count.h"
#include "ranks.h"
#include "ranks_id.h"

#define SLACK_S 4.0         /* as the host fault tests: a loaded machine, not the library */
#define END_BOUND_S 5.0     /* an abort returns, a stream ends, once the error is known */
#define KILL_COUNT (4 << 20) /* 16 MiB of floats: long enough to be caught mid-flight */
#define LEAK_CYCLES 12       /* after one to warm up: 6 aborted, 6 destroyed */
#define LEAK_GPU_SLACK (2u << 20)

static int ndev;

/* Ones, copied to the device: every AllReduce(sum) of them gives n. */
static float* ones_alloc(size_t count) {
  float* host = malloc(count * sizeof(float));
  CHECK(host != NULL);
  for (size_t i = 0; i < count; i++) host[i] = 1.0f;
  float* dev = NULL;
  CUDA_CHECK(cudaMalloc((void**)&dev, count * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(dev, host, count * sizeof(float), cudaMemcpyHostToDevice));
  free(host);
  return dev;
}

/* Elements of recv (already complete) that are not n. */
static size_t wrong_sums(const float* recv, size_t count, int n) {
  float* host = malloc(count * sizeof(float));
  CHECK(host != NULL);
  CUDA_CHECK(cudaMemcpy(host, recv, count * sizeof(float), cudaMemcpyDeviceToHost));
  size_t wrong = 0;
  for (size_t i = 0; i < count; i++) wrong += host[i] != (float)n;
  free(host);
  return wrong;
}

/* A rank joins a fresh communicator (its id made by rank 0 after the fork). */
static void fault_join(int rank, int n, cudaStream_t* stream, ncclComm_t* comm) {
  ncclUniqueId id;
  ranks_unique_id(rank, &id);
  gpu_rank_join(rank, n, ndev, &id, stream, comm);
}

/* ---- kill ------------------------------------------------------------------------------------ */

typedef struct {
  double killedAt; /* gpu_now() of the victim just before it died; 0 before */
  int dead;        /* default settings, the 2 s bound and the text checked */
  int victimPid;
} kill_shared_t;

/* The victim: AllReduces in step with the others for inStepS seconds,
 * then one more launched and, with its kernel in flight, SIGKILL. */
static void kill_victim(ncclComm_t comm, cudaStream_t stream, const float* send, float* recv, kill_shared_t* sh,
                        double inStepS) {
  double start = gpu_now();
  while (gpu_now() - start < inStepS) {
    CHECK_NCCL(ncclAllReduce(send, recv, KILL_COUNT, ncclFloat, ncclSum, comm, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  CHECK_NCCL(ncclAllReduce(send, recv, KILL_COUNT, ncclFloat, ncclSum, comm, stream));
  sh->victimPid = (int)getpid();
  __atomic_store(&sh->killedAt, &(double){gpu_now()}, __ATOMIC_RELEASE);
  raise(SIGKILL);
}

/* One AllReduce of a survivor: ncclSuccess when its stream ended with the
 * communicator well (the sums are then checked: no silently wrong data),
 * else the error that ncclCommGetAsyncError reports. */
static ncclResult_t kill_survivor_step(ncclComm_t comm, cudaStream_t stream, const float* send, float* recv, int n,
                                       double deadline) {
  CUDA_CHECK(cudaMemsetAsync(recv, 0, KILL_COUNT * sizeof(float), stream));
  ncclResult_t launched = ncclAllReduce(send, recv, KILL_COUNT, ncclFloat, ncclSum, comm, stream);
  ncclResult_t async = ncclSuccess;
  for (;;) {
    CHECK_NCCL(ncclCommGetAsyncError(comm, &async));
    if (async != ncclSuccess) return async;
    CHECK_MSG(launched == ncclSuccess, "ncclAllReduce returned %s but the async error is ncclSuccess",
              ncclGetErrorString(launched));
    cudaError_t e = cudaStreamQuery(stream);
    CHECK_MSG(e == cudaSuccess || e == cudaErrorNotReady, "the stream failed: %s", cudaGetErrorString(e));
    if (e == cudaSuccess) break;
    CHECK_MSG(gpu_now() < deadline, "no error and the AllReduce still running %.1f s past the bound",
              gpu_now() - deadline);
    usleep(1000);
  }
  /* Ended: was it ended by an abort the async error does not show yet? */
  CHECK_NCCL(ncclCommGetAsyncError(comm, &async));
  if (async != ncclSuccess) return async;
  size_t wrong = wrong_sums(recv, KILL_COUNT, n);
  CHECK_MSG(wrong == 0, "an AllReduce completed with ncclSuccess (async error too) but %zu of %d sums are wrong",
            wrong, KILL_COUNT);
  return ncclSuccess;
}

/* A survivor from the victim's kill on: its error in time (with dead: the
 * victim named), its stream ended, ncclCommAbort returned, all bounded.
 * Returns how long the abort took. */
static double kill_survive(int rank, int n, ncclComm_t comm, cudaStream_t stream, const float* send, float* recv,
                           const kill_shared_t* sh, int timeoutSec) {
  /* The victim's second in step, then the wait on it (under ranks_run's
   * 15 s of grace after a rank's death, with MKCCL_TIMEOUT <= 5). */
  double deadline = gpu_now() + 2.0 + timeoutSec + SLACK_S;
  ncclResult_t async;
  int steps = 0;
  while ((async = kill_survivor_step(comm, stream, send, recv, n, deadline)) == ncclSuccess) steps++;
  double errorAt = gpu_now(), killedAt;
  __atomic_load(&sh->killedAt, &killedAt, __ATOMIC_ACQUIRE);
  CHECK_MSG(killedAt > 0, "rank %d: %s after %d AllReduces, before the peer died", rank, ncclGetErrorString(async),
            steps);
  CHECK_MSG(async == ncclRemoteError || async == ncclSystemError, "rank %d: async error %s, expected ncclRemoteError "
            "or ncclSystemError", rank, ncclGetErrorString(async));
  double bound = sh->dead ? 2.0 : timeoutSec + SLACK_S;
  CHECK_MSG(errorAt - killedAt < bound, "rank %d: the error came %.2f s after the kill (bound %.0f s)", rank,
            errorAt - killedAt, bound);
  if (sh->dead) {
    char host[64] = "", want[160];
    gethostname(host, sizeof(host) - 1);
    snprintf(want, sizeof(want), "rank %d (host %s, pid %d)", n - 1, host, sh->victimPid);
    CHECK_MSG(async == ncclRemoteError, "rank %d: %s, not ncclRemoteError", rank, ncclGetErrorString(async));
    CHECK_MSG(strstr(ncclGetLastError(comm), want), "rank %d: the last error does not name '%s': %s", rank, want,
              ncclGetLastError(comm));
  }
  double streamWait, abortAt;
  cudaError_t e = gpu_stream_wait(stream, END_BOUND_S, &streamWait);
  CHECK_MSG(e == cudaSuccess, "rank %d: stream after the error: %s after %.2f s", rank, cudaGetErrorString(e),
            streamWait);
  abortAt = gpu_now();
  CHECK_NCCL(ncclCommAbort(comm));
  double abortTook = gpu_now() - abortAt;
  CHECK_MSG(abortTook < END_BOUND_S, "rank %d: ncclCommAbort took %.2f s", rank, abortTook);
  fprintf(stderr, "rank %d: %s %.2f s after the kill (MKCCL_TIMEOUT %d, %d AllReduces before), stream ended %.2f s "
          "later, ncclCommAbort took %.2f s%s%s\n", rank, ncclGetErrorString(async), errorAt - killedAt, timeoutSec,
          steps, streamWait, abortTook, sh->dead ? ": " : "", sh->dead ? ncclGetLastError(comm) : "");
  return abortTook;
}

static int kill_main(int rank, int n, void* arg) {
  kill_shared_t* sh = arg;
  int timeoutSec = sh->dead ? 0 : gpu_timeout_param("kill", 5);
  cudaStream_t stream;
  ncclComm_t comm;
  fault_join(rank, n, &stream, &comm);
  float* send = ones_alloc(KILL_COUNT);
  float* recv = ones_alloc(KILL_COUNT);
  if (rank == n - 1) kill_victim(comm, stream, send, recv, sh, 1.0); /* does not return */
  kill_survive(rank, n, comm, stream, send, recv, sh, timeoutSec);
  CUDA_CHECK(cudaFree(send));
  CUDA_CHECK(cudaFree(recv));
  CUDA_CHECK(cudaStreamDestroy(stream));
  return 0;
}

static int kill_run(int n, int dead) {
  kill_shared_t* sh = ranks_shared_alloc(sizeof(*sh));
  CHECK(sh != NULL && n >= 2 && n <= 256);
  sh->dead = dead;
  CHECK_MSG(!dead || !getenv("MKCCL_TIMEOUT"), "dead mode checks the default settings: unset MKCCL_TIMEOUT");
  int status[256];
  CHECK_EQ_INT(ranks_run_status(n, kill_main, sh, 25, status), 0);
  CHECK_MSG(status[n - 1] == -SIGKILL, "the victim ended with %d, not by SIGKILL", status[n - 1]);
  for (int r = 0; r < n - 1; r++) CHECK_MSG(status[r] == 0, "survivor %d failed (status %d)", r, status[r]);
  printf("test_gpu_fault kill %d: every survivor got its error in time\n", n);
  return 0;
}

/* ---- abort ----------------------------------------------------------------------------------- */

#define ABORT_AFTER_S 0.5

typedef struct {
  volatile int abortedRanks; /* the last rank aborts its idle comm once all others did */
} abort_shared_t;

typedef struct {
  ncclComm_t comm;
  cudaStream_t stream;
  int dev;
  cudaError_t before; /* the stream as the abort came */
  ncclResult_t res;
  double at, took;
} aborter_t;

static void* aborter_main(void* arg) {
  aborter_t* a = arg;
  CUDA_CHECK(cudaSetDevice(a->dev));
  usleep((useconds_t)(ABORT_AFTER_S * 1e6));
  a->before = cudaStreamQuery(a->stream);
  a->at = gpu_now();
  a->res = ncclCommAbort(a->comm);
  a->took = gpu_now() - a->at;
  return NULL;
}

/* The last rank joins and never calls the collective: the others' cannot
 * complete. It waits for them to abort, then aborts its own. */
static void abort_idle(ncclComm_t comm, int n, abort_shared_t* sh) {
  for (int ms = 0; __atomic_load_n(&sh->abortedRanks, __ATOMIC_ACQUIRE) < n - 1; ms++) {
    CHECK_MSG(ms < 20000, "the other ranks did not abort in 20 s");
    usleep(1000);
  }
  double at = gpu_now();
  CHECK_NCCL(ncclCommAbort(comm));
  CHECK_MSG(gpu_now() - at < END_BOUND_S, "idle rank: ncclCommAbort took %.2f s", gpu_now() - at);
}

/* The kernels' own MKCCL_TIMEOUT must not end the AllReduce before the
 * abort does: 0 (wait for ever) proves it was the abort. */
static void abort_check_timeout(void) {
  const char* t = getenv("MKCCL_TIMEOUT");
  CHECK_MSG(!t || atoi(t) == 0 || atoi(t) >= 3, "abort mode needs MKCCL_TIMEOUT unset, 0 or >= 3 (got %s)", t);
}

static int abort_main(int rank, int n, void* arg) {
  abort_shared_t* sh = arg;
  abort_check_timeout();
  cudaStream_t stream;
  ncclComm_t comm;
  fault_join(rank, n, &stream, &comm);
  float* buf = ones_alloc(1 << 20);
  if (rank == n - 1) {
    abort_idle(comm, n, sh);
  } else {
    CHECK_NCCL(ncclAllReduce(buf, buf, 1 << 20, ncclFloat, ncclSum, comm, stream));
    aborter_t a = {comm, stream, rank % ndev, cudaSuccess, ncclInternalError, 0, 0};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, aborter_main, &a) == 0);
    double waited;
    cudaError_t e = gpu_stream_wait(stream, ABORT_AFTER_S + END_BOUND_S, &waited);
    double streamEndAt = gpu_now();
    CHECK_MSG(e == cudaSuccess, "rank %d: the stream, %.2f s after the AllReduce: %s", rank, waited,
              cudaGetErrorString(e));
    /* Bounded: an abort that never returns is a failure with a message. */
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)END_BOUND_S;
    CHECK_MSG(pthread_timedjoin_np(t, NULL, &until) == 0, "rank %d: ncclCommAbort still running %.1f s after the "
              "stream ended", rank, END_BOUND_S);
    __atomic_fetch_add(&sh->abortedRanks, 1, __ATOMIC_RELEASE);
    CHECK_MSG(a.before == cudaErrorNotReady, "rank %d: the AllReduce was not in flight when the abort came (%s)", rank,
              cudaGetErrorString(a.before));
    CHECK_MSG(a.res == ncclSuccess, "rank %d: ncclCommAbort returned %s", rank, ncclGetErrorString(a.res));
    CHECK_MSG(a.took < END_BOUND_S, "rank %d: ncclCommAbort took %.2f s", rank, a.took);
    fprintf(stderr, "rank %d: ncclCommAbort took %.3f s; the stream ended %.3f s after the abort began\n", rank,
            a.took, streamEndAt - a.at);
  }
  CUDA_CHECK(cudaFree(buf));
  CUDA_CHECK(cudaStreamDestroy(stream));
  return 0;
}

/* ---- leak ------------------------------------------------------------------------------------ */

/* Where pinned host buffers may show (which one does depends on the
 * driver): the process's address space, its pinned pages, the driver's
 * device-file mappings. */
#define LEAK_MEASURES 3
static const char* const leak_measure_names[LEAK_MEASURES] = {"VmSize", "VmPin", "/dev/nvidia* mappings"};
static long leak_measure(int m) {
  return m == 0 ? proc_status_kib("VmSize") : m == 1 ? proc_status_kib("VmPin") : proc_mapped_kib("/dev/nvidia");
}

typedef struct {
  int fds, threads, shmNames, shmMaps;
  size_t gpuFree;
  long mem[LEAK_MEASURES]; /* host memory measures in KiB (leak_measures) */
} holdings_t;

typedef struct {
  volatile int arrived[2 * LEAK_CYCLES + 4]; /* barrier counters, one per phase */
} leak_shared_t;

/* Every rank of n arrives at arrived[phase] (a counter in shared memory);
 * waiting longer than limitMs is a failure. */
static void phase_barrier(volatile int* arrived, int phase, int n, int limitMs) {
  __atomic_fetch_add(&arrived[phase], 1, __ATOMIC_ACQ_REL);
  for (int ms = 0; __atomic_load_n(&arrived[phase], __ATOMIC_ACQUIRE) < n; ms++) {
    CHECK_MSG(ms < limitMs, "barrier %d: %d of %d ranks in %d s", phase, arrived[phase], n, limitMs / 1000);
    usleep(1000);
  }
}

static void leak_barrier(leak_shared_t* sh, int phase, int n) { phase_barrier(sh->arrived, phase, n, 60000); }

static holdings_t holdings_now(void) {
  holdings_t h = {proc_count_fds(), proc_count_threads(), proc_count_shm_segments((int)getpid()),
                  proc_count_shm_mappings(), 0, {0}};
  for (int m = 0; m < LEAK_MEASURES; m++) h.mem[m] = leak_measure(m);
  size_t total;
  CUDA_CHECK(cudaMemGetInfo(&h.gpuFree, &total));
  return h;
}

/* One communicator's life, as an application has it; alive[]: the memory
 * measures while it is alive (to see which measures see its buffers). */
static void leak_cycle(int rank, int n, int destroy, long* alive) {
  cudaStream_t stream;
  ncclComm_t comm;
  fault_join(rank, n, &stream, &comm);
  float* buf = ones_alloc(1 << 20);
  CHECK_NCCL(ncclAllReduce(buf, buf, 1 << 20, ncclFloat, ncclSum, comm, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  CHECK_EQ_INT(wrong_sums(buf, 1 << 20, n), 0);
  for (int m = 0; m < LEAK_MEASURES; m++) alive[m] = leak_measure(m);
  CHECK_NCCL(destroy ? ncclCommDestroy(comm) : ncclCommAbort(comm));
  CUDA_CHECK(cudaFree(buf));
  CUDA_CHECK(cudaStreamDestroy(stream));
}

/* GPU memory is counted for the whole device, which the ranks may share:
 * every rank counts between barriers, with no communicator alive in any,
 * after every cycle. The driver hands memory out in 2 MiB pages and grows
 * its per-context pools now and then: on an H100, device free memory fell
 * once by 4 MiB (two ranks) at cycle 5 and stayed flat after. A leak grows
 * with the cycles instead, so: at most one page lost from the middle cycle
 * to the last (a leak of 0.4 MiB or more per communicator exceeds it over
 * those 6), and at most one page per rank of this GPU in all. Pinned host
 * buffers: see leak_measure (on the H100 machine the driver's mappings did
 * not move with a communicator alive). fds, threads and shm
 * segments must be exactly back after every cycle. */
static int leak_main(int rank, int n, void* arg) {
  leak_shared_t* sh = arg;
  int phase = 0;
  long alive[LEAK_MEASURES];
  leak_cycle(rank, n, 0, alive); /* warm up: CUDA context, module, plugins, log */
  leak_barrier(sh, phase++, n);
  holdings_t h0 = holdings_now(), h[LEAK_CYCLES];
  leak_barrier(sh, phase++, n);
  for (int i = 0; i < LEAK_CYCLES; i++) {
    leak_cycle(rank, n, i % 2, alive);
    leak_barrier(sh, phase++, n);
    h[i] = holdings_now();
    leak_barrier(sh, phase++, n);
    CHECK_EQ_INT(h[i].fds, h0.fds);
    CHECK_EQ_INT(h[i].threads, h0.threads);
    CHECK_EQ_INT(h[i].shmNames, 0);
    CHECK_EQ_INT(h[i].shmMaps, 0);
  }
  char trace[LEAK_CYCLES * 12 + 1] = "", *t = trace;
  for (int i = 0; i < LEAK_CYCLES; i++)
    t += sprintf(t, " %+.1f", ((double)h[i].gpuFree - (double)h0.gpuFree) / (1 << 20));
  fprintf(stderr, "rank %d: %d cycles: %d fds, %d threads, no shm segment; GPU free after each cycle (MiB):%s\n", rank,
          LEAK_CYCLES, h0.fds, h0.threads, trace);
  const holdings_t *mid = &h[LEAK_CYCLES / 2 - 1], *z = &h[LEAK_CYCLES - 1];
  /* Host memory (pinned buffers among it): a measure that grew while a
   * communicator was alive sees its buffers, and must not grow from the
   * middle cycle to the last (a page of slack); the others are reported. */
  for (int m = 0; m < LEAK_MEASURES; m++) {
    t = trace;
    for (int i = 0; i < LEAK_CYCLES; i++) t += sprintf(t, " %+ld", h[i].mem[m] - h0.mem[m]);
    int sees = alive[m] > h0.mem[m];
    fprintf(stderr, "rank %d: %s: %ld KiB at the start, %+ld with a communicator alive (%s), after each cycle:%s\n",
            rank, leak_measure_names[m], h0.mem[m], alive[m] - h0.mem[m], sees ? "checked" : "blind: not checked", trace);
    if (sees)
      CHECK_MSG(z->mem[m] <= mid->mem[m] + (long)(LEAK_GPU_SLACK >> 10), "rank %d: %s grew from %ld KiB (cycle %d) to %ld",
                rank, leak_measure_names[m], mid->mem[m], LEAK_CYCLES / 2, z->mem[m]);
  }
  CHECK_MSG(z->gpuFree + LEAK_GPU_SLACK >= mid->gpuFree, "rank %d: %.1f MiB of GPU memory gone from cycle %d to %d", rank,
            ((double)mid->gpuFree - (double)z->gpuFree) / (1 << 20), LEAK_CYCLES / 2, LEAK_CYCLES);
  int perGpu = (n + ndev - 1) / ndev;
  CHECK_MSG(z->gpuFree + (size_t)perGpu * LEAK_GPU_SLACK >= h0.gpuFree,
            "rank %d: %.1f MiB of GPU memory gone after %d cycles (more than a page per rank of the GPU)", rank,
            ((double)h0.gpuFree - (double)z->gpuFree) / (1 << 20), LEAK_CYCLES);
  return 0;
}

/* ---- stress ---------------------------------------------------------------------------------- */

enum { STRESS_COLL, STRESS_DESTROY, STRESS_INIT, STRESS_KINDS };
static const char* const stress_names[STRESS_KINDS] = {"coll", "destroy", "init"};
#define STRESS_MAX_ROUNDS 1000

typedef struct {
  int rounds;
  volatile int idRound; /* the round whose id `id` holds */
  ncclUniqueId id;
  volatile int arrived[2 * STRESS_MAX_ROUNDS + 4];
  volatile int done[STRESS_MAX_ROUNDS]; /* ranks other than the last through this round's fault */
  double worst[STRESS_KINDS];           /* rank 0: the longest abort or destroy, seconds */
} stress_shared_t;

static void stress_barrier(stress_shared_t* sh, int phase, int n) { phase_barrier(sh->arrived, phase, n, 30000); }

/* A fresh id every round: rank 0 makes it, the others wait for it. */
static void stress_id(stress_shared_t* sh, int rank, int round, ncclUniqueId* id) {
  if (rank == 0) {
    CHECK_NCCL(ncclGetUniqueId(&sh->id));
    __atomic_store_n(&sh->idRound, round + 1, __ATOMIC_RELEASE);
  }
  for (int ms = 0; __atomic_load_n(&sh->idRound, __ATOMIC_ACQUIRE) < round + 1; ms++) {
    CHECK_MSG(ms < 20000, "round %d: no id in 20 s", round);
    usleep(1000);
  }
  *id = sh->id;
}

static double stress_timed(ncclResult_t (*fn)(ncclComm_t), ncclComm_t comm, const char* what, int rank, int round) {
  double at = gpu_now();
  ncclResult_t res = fn(comm);
  double took = gpu_now() - at;
  CHECK_MSG(res == ncclSuccess, "rank %d round %d: %s returned %s", rank, round, what, ncclGetErrorString(res));
  CHECK_MSG(took < END_BOUND_S, "rank %d round %d: %s took %.2f s", rank, round, what, took);
  return took;
}

/* The last rank's side of a round, once the others are through theirs. */
static void stress_wait_done(stress_shared_t* sh, int round, int n) {
  for (int ms = 0; __atomic_load_n(&sh->done[round], __ATOMIC_ACQUIRE) < n - 1; ms++) {
    CHECK_MSG(ms < 20000, "round %d: the other ranks not through in 20 s", round);
    usleep(1000);
  }
}

static void stress_round(stress_shared_t* sh, int rank, int n, int round, float* buf) {
  int kind = round % STRESS_KINDS, last = rank == n - 1;
  ncclUniqueId id;
  stress_id(sh, rank, round, &id);
  cudaStream_t stream;
  CUDA_CHECK(cudaSetDevice(rank % ndev));
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  ncclComm_t comm;
  double took = 0;
  if (kind == STRESS_INIT) {
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    ncclResult_t res = ncclCommInitRankConfig(&comm, n, id, rank, &config);
    CHECK_MSG(res == ncclSuccess || res == ncclInProgress, "rank %d round %d: init returned %s", rank, round,
              ncclGetErrorString(res));
    if (last) stress_wait_done(sh, round, n);
    took = stress_timed(ncclCommAbort, comm, "ncclCommAbort during init", rank, round);
    if (!last) __atomic_fetch_add(&sh->done[round], 1, __ATOMIC_ACQ_REL);
  } else {
    CHECK_NCCL(ncclCommInitRank(&comm, n, id, rank));
    if (last && kind == STRESS_DESTROY) {
      took = stress_timed(ncclCommDestroy, comm, "ncclCommDestroy before the AllReduce", rank, round);
    } else if (last) {
      stress_wait_done(sh, round, n);
      took = stress_timed(ncclCommAbort, comm, "ncclCommAbort of the idle rank", rank, round);
    } else {
      ncclResult_t launched = ncclAllReduce(buf, buf, 1 << 20, ncclFloat, ncclSum, comm, stream);
      /* The peer's goodbye may come before the call: then the call itself fails. */
      CHECK_MSG(launched == ncclSuccess || (kind == STRESS_DESTROY && launched == ncclRemoteError),
                "rank %d round %d: ncclAllReduce returned %s: %s", rank, round, ncclGetErrorString(launched),
                ncclGetLastError(comm));
      if (kind == STRESS_COLL) {
        aborter_t a = {comm, stream, rank % ndev, cudaSuccess, ncclInternalError, 0, 0};
        pthread_t t;
        CHECK(pthread_create(&t, NULL, aborter_main, &a) == 0);
        double waited;
        cudaError_t e = gpu_stream_wait(stream, ABORT_AFTER_S + END_BOUND_S, &waited);
        CHECK_MSG(e == cudaSuccess, "rank %d round %d: the stream: %s", rank, round, cudaGetErrorString(e));
        CHECK(pthread_join(t, NULL) == 0);
        CHECK_MSG(a.before == cudaErrorNotReady, "rank %d round %d: the AllReduce was not in flight at the abort", rank,
                  round);
        CHECK_MSG(a.res == ncclSuccess && a.took < END_BOUND_S, "rank %d round %d: ncclCommAbort %s after %.2f s", rank,
                  round, ncclGetErrorString(a.res), a.took);
        took = a.took;
      } else { /* the last rank destroys its comm instead of joining: this AllReduce fails */
        double waited = 0;
        ncclResult_t async = launched != ncclSuccess ? launched : gpu_wait_async_error(comm, 2.0, &waited);
        CHECK_MSG(async == ncclRemoteError, "rank %d round %d: async error %s %.2f s after the AllReduce (want "
                  "ncclRemoteError within 2 s: the peer left)", rank, round, ncclGetErrorString(async), waited);
        CHECK_MSG(strstr(ncclGetLastError(comm), "left the communicator"), "rank %d round %d: %s", rank, round,
                  ncclGetLastError(comm));
        double streamWait;
        CHECK_MSG(gpu_stream_wait(stream, END_BOUND_S, &streamWait) == cudaSuccess, "rank %d round %d: stream", rank,
                  round);
        took = stress_timed(ncclCommAbort, comm, "ncclCommAbort after the peer left", rank, round);
      }
      __atomic_fetch_add(&sh->done[round], 1, __ATOMIC_ACQ_REL);
    }
  }
  if (rank == 0 && took > sh->worst[kind]) sh->worst[kind] = took;
  CUDA_CHECK(cudaStreamDestroy(stream));
}

static int stress_main(int rank, int n, void* arg) {
  stress_shared_t* sh = arg;
  abort_check_timeout();
  float* buf = NULL;
  CUDA_CHECK(cudaSetDevice(rank % ndev));
  buf = ones_alloc(1 << 20);
  int phase = 0;
  long alive[LEAK_MEASURES];
  leak_cycle(rank, n, 1, alive); /* warm up: CUDA context, module, plugins */
  stress_barrier(sh, phase++, n);
  holdings_t h0 = holdings_now();
  stress_barrier(sh, phase++, n);
  int perGpu = (n + ndev - 1) / ndev;
  for (int k = 0; k < sh->rounds; k++) {
    stress_round(sh, rank, n, k, buf);
    stress_barrier(sh, phase++, n);
    holdings_t h = holdings_now();
    stress_barrier(sh, phase++, n);
    /* A thread on its way out (an init thread let go) may still count. */
    for (int ms = 0; ms < 2000 && proc_count_threads() != h0.threads; ms++) usleep(1000);
    CHECK_MSG(proc_count_threads() == h0.threads, "rank %d round %d (%s): %d threads, %d before", rank, k,
              stress_names[k % STRESS_KINDS], proc_count_threads(), h0.threads);
    CHECK_MSG(h.fds == h0.fds, "rank %d round %d (%s): %d fds, %d before", rank, k, stress_names[k % STRESS_KINDS],
              h.fds, h0.fds);
    CHECK_EQ_INT(h.shmNames, 0);
    CHECK_EQ_INT(h.shmMaps, 0);
    CHECK_MSG(h.gpuFree + (size_t)perGpu * LEAK_GPU_SLACK >= h0.gpuFree, "rank %d round %d: %.1f MiB of GPU memory "
              "gone", rank, k, ((double)h0.gpuFree - (double)h.gpuFree) / (1 << 20));
  }
  CUDA_CHECK(cudaFree(buf));
  if (rank == 0)
    fprintf(stderr, "%d rounds: longest ncclCommAbort/Destroy %.3f s (coll), %.3f s (destroy), %.3f s (init); fds, "
            "threads, shm as before every round, GPU memory within %d MiB\n", sh->rounds, sh->worst[0], sh->worst[1],
            sh->worst[2], (int)(perGpu * LEAK_GPU_SLACK >> 20));
  return 0;
}

/* ---- dead rounds ----------------------------------------------------------------------------- */

/* One survivor (rank 0) lives through every round; each round a fresh
 * process joins a new communicator as rank 1 and is SIGKILLed mid-AllReduce
 * (the peer watch, default settings): the survivor's error within 2 s
 * naming it, its abort bounded, and after every round its fds, threads,
 * shm and GPU memory as before the first. The parent never touches CUDA:
 * it forks the survivor once and a victim per round. */
#define DEAD_MAX_ROUNDS 1000
#define DEAD_VICTIM_IN_STEP_S 0.2

typedef struct {
  int rounds;
  volatile int idRound;   /* the round whose id `id` holds */
  volatile int reaped;    /* rounds whose victim the parent has reaped */
  volatile int survived;  /* rounds the survivor is through (checks done) */
  ncclUniqueId id;
  kill_shared_t kill[DEAD_MAX_ROUNDS];
  double worstAbort;
} dead_shared_t;

static void dead_wait(volatile int* what, int atLeast, const char* who, int round) {
  for (int ms = 0; __atomic_load_n(what, __ATOMIC_ACQUIRE) < atLeast; ms++) {
    CHECK_MSG(ms < 30000, "round %d: %s not in 30 s", round, who);
    usleep(1000);
  }
}

static int dead_victim(dead_shared_t* sh, int round) {
  dead_wait(&sh->idRound, round + 1, "the survivor's id", round);
  ncclUniqueId id = sh->id;
  cudaStream_t stream;
  ncclComm_t comm;
  gpu_rank_join(1, 2, ndev, &id, &stream, &comm);
  float* send = ones_alloc(KILL_COUNT);
  float* recv = ones_alloc(KILL_COUNT);
  kill_victim(comm, stream, send, recv, &sh->kill[round], DEAD_VICTIM_IN_STEP_S); /* does not return */
  return 1;
}

/* Waits up to 2 s for GPU memory to come back: the driver frees a dead
 * victim's context after its process is reaped, not always before. */
static holdings_t dead_holdings(const holdings_t* h0, size_t slack) {
  holdings_t h = holdings_now();
  for (int ms = 0; ms < 2000 && (h.gpuFree + slack < h0->gpuFree || h.threads != h0->threads); ms += 10) {
    usleep(10000);
    h = holdings_now();
  }
  return h;
}

static int dead_survivor(dead_shared_t* sh) {
  CUDA_CHECK(cudaSetDevice(0));
  float* send = ones_alloc(KILL_COUNT);
  float* recv = ones_alloc(KILL_COUNT);
  holdings_t h0 = {0};
  for (int k = 0; k < sh->rounds; k++) {
    CHECK_NCCL(ncclGetUniqueId(&sh->id));
    __atomic_store_n(&sh->idRound, k + 1, __ATOMIC_RELEASE);
    cudaStream_t stream;
    ncclComm_t comm;
    ncclUniqueId id = sh->id;
    gpu_rank_join(0, 2, ndev, &id, &stream, &comm);
    double took = kill_survive(0, 2, comm, stream, send, recv, &sh->kill[k], 0);
    if (took > sh->worstAbort) sh->worstAbort = took;
    CUDA_CHECK(cudaStreamDestroy(stream));
    dead_wait(&sh->reaped, k + 1, "the victim's reaping", k);
    /* Round 0 warms up (CUDA context, module, plugins): the baseline. */
    if (k == 0) h0 = holdings_now();
    holdings_t h = dead_holdings(&h0, LEAK_GPU_SLACK);
    CHECK_MSG(h.threads == h0.threads, "round %d: %d threads, %d after round 0", k, h.threads, h0.threads);
    CHECK_MSG(h.fds == h0.fds, "round %d: %d fds, %d after round 0", k, h.fds, h0.fds);
    CHECK_EQ_INT(h.shmNames, 0);
    CHECK_EQ_INT(h.shmMaps, 0);
    CHECK_MSG(h.gpuFree + LEAK_GPU_SLACK >= h0.gpuFree, "round %d: %.1f MiB of GPU memory gone since round 0", k,
              ((double)h0.gpuFree - (double)h.gpuFree) / (1 << 20));
    __atomic_store_n(&sh->survived, k + 1, __ATOMIC_RELEASE);
  }
  CUDA_CHECK(cudaFree(send));
  CUDA_CHECK(cudaFree(recv));
  fprintf(stderr, "dead rounds: %d victims killed, the survivor's error named each within 2 s, longest "
          "ncclCommAbort %.3f s; fds, threads, shm and GPU memory after every round as after the first\n", sh->rounds,
          sh->worstAbort);
  return 0;
}

static pid_t dead_fork(dead_shared_t* sh, int round) {
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) _exit(round < 0 ? dead_survivor(sh) : dead_victim(sh, round));
  return pid;
}

/* 0: pid is still running; else it ended, with *status as ranks_run_status reports it. */
static int dead_reap(pid_t pid, int block, int* status) {
  int ws;
  pid_t got = waitpid(pid, &ws, block ? 0 : WNOHANG);
  if (got == 0) return 0;
  CHECK(got == pid);
  *status = WIFSIGNALED(ws) ? -WTERMSIG(ws) : WEXITSTATUS(ws);
  return 1;
}

/* The parent's side: a victim a round, each reaped (it must die by
 * SIGKILL) before the survivor checks its holdings; the survivor watched
 * throughout (its failure ends the run at once). */
static int dead_rounds(int rounds) {
  CHECK_MSG(!getenv("MKCCL_TIMEOUT"), "dead rounds check the default settings: unset MKCCL_TIMEOUT");
  CHECK_MSG(rounds >= 1 && rounds <= DEAD_MAX_ROUNDS, "rounds %d out of [1, %d]", rounds, DEAD_MAX_ROUNDS);
  dead_shared_t* sh = ranks_shared_alloc(sizeof(*sh));
  CHECK(sh != NULL);
  sh->rounds = rounds;
  for (int k = 0; k < rounds; k++) sh->kill[k].dead = 1;
  pid_t survivor = dead_fork(sh, -1);
  int status = 0, ended = 0, k = 0;
  for (; k < rounds && !ended; k++) {
    pid_t victim = dead_fork(sh, k);
    double start = gpu_now();
    int vstatus = 0, vended = 0;
    while (!(vended = dead_reap(victim, 0, &vstatus)) && !(ended = dead_reap(survivor, 0, &status)) &&
           gpu_now() - start < 30)
      usleep(1000);
    if (!vended) {
      kill(victim, SIGKILL);
      dead_reap(victim, 1, &vstatus);
      break;
    }
    CHECK_MSG(vstatus == -SIGKILL, "round %d: the victim ended with %d, not by SIGKILL", k, vstatus);
    __atomic_store_n(&sh->reaped, k + 1, __ATOMIC_RELEASE);
    while (!ended && __atomic_load_n(&sh->survived, __ATOMIC_ACQUIRE) < k + 1 && gpu_now() - start < 40) {
      ended = dead_reap(survivor, 0, &status);
      usleep(1000);
    }
    if (!ended && __atomic_load_n(&sh->survived, __ATOMIC_ACQUIRE) < k + 1) break;
  }
  if (!ended && k < rounds) kill(survivor, SIGKILL);
  if (!ended) dead_reap(survivor, 1, &status);
  int survived = __atomic_load_n(&sh->survived, __ATOMIC_ACQUIRE);
  CHECK_MSG(status == 0 && survived == rounds, "the survivor ended with %d after %d of %d rounds", status, survived,
            rounds);
  printf("test_gpu_fault deadrounds %d: ok\n", rounds);
  return 0;
}

/* ranks_run's bounds (25, 25, 40 s) stay under one_gpu.sh's limits (30,
 * 30, 45 s): a hang is then reported by the test, not only killed. */
int main(int argc, char** argv) {
  gpu_crash_handlers("test_gpu_fault");
  if (argc < 3) {
    fprintf(stderr, "usage: test_gpu_fault kill|dead|abort|leak N | stress N ROUNDS | deadrounds 2 ROUNDS\n");
    return 2;
  }
  int n = atoi(argv[2]);
  ndev = gpu_count_in_child();
  if (ndev < 1) SKIP("test_gpu_fault: no CUDA device");
  CHECK_MSG(n >= 1 && n <= 256, "bad rank count %d", n);
  if (!strcmp(argv[1], "kill") || !strcmp(argv[1], "dead")) return kill_run(n, !strcmp(argv[1], "dead"));
  if (!strcmp(argv[1], "deadrounds")) {
    CHECK_MSG(n == 2, "deadrounds runs 2 ranks (a survivor, a victim a round), not %d", n);
    return dead_rounds(argc > 3 ? atoi(argv[3]) : 30);
  }
  if (!strcmp(argv[1], "abort")) {
    CHECK(n >= 2);
    abort_shared_t* sh = ranks_shared_alloc(sizeof(*sh));
    CHECK(sh != NULL);
    CHECK_EQ_INT(ranks_run(n, abort_main, sh, 25), 0);
  } else if (!strcmp(argv[1], "stress")) {
    stress_shared_t* sh = ranks_shared_alloc(sizeof(*sh));
    CHECK(sh != NULL && n >= 2);
    sh->rounds = argc > 3 ? atoi(argv[3]) : 30;
    CHECK_MSG(sh->rounds >= 1 && sh->rounds <= STRESS_MAX_ROUNDS, "rounds %d out of [1, %d]", sh->rounds,
              STRESS_MAX_ROUNDS);
    CHECK_EQ_INT(ranks_run(n, stress_main, sh, 30 + 3 * sh->rounds), 0);
  } else if (!strcmp(argv[1], "leak")) {
    leak_shared_t* sh = ranks_shared_alloc(sizeof(*sh));
    CHECK(sh != NULL);
    CHECK_EQ_INT(ranks_run(n, leak_main, sh, 40), 0);
  } else {
    fprintf(stderr, "unknown mode %s\n", argv[1]);
    return 2;
  }
  printf("test_gpu_fault %s %d: ok\n", argv[1], n);
  return 0;
}
