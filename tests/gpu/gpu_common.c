#include "gpu_common.h"

#include <execinfo.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ranks.h"

int gpu_count_in_child(void) {
  int* shared = ranks_shared_alloc(sizeof(int));
  CHECK(shared != NULL);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    int c = 0;
    if (cudaGetDeviceCount(&c) != cudaSuccess) c = 0;
    *shared = c;
    _exit(0);
  }
  int st;
  CHECK(waitpid(pid, &st, 0) == pid);
  return *shared;
}

static const char* crashProg = "test";

static void gpu_on_crash(int sig) {
  void* frames[48];
  int n = backtrace(frames, 48);
  fprintf(stderr, "%s: signal %d, stack:\n", crashProg, sig);
  backtrace_symbols_fd(frames, n, 2);
  signal(sig, SIG_DFL);
  raise(sig);
}

void gpu_crash_handlers(const char* prog) {
  crashProg = prog;
  signal(SIGSEGV, gpu_on_crash);
  signal(SIGBUS, gpu_on_crash);
  signal(SIGABRT, gpu_on_crash);
}

int gpu_count_for_ranks(const char* prog, int n) {
  int ndev = gpu_count_in_child();
  if (ndev < 1) SKIP("%s: no CUDA device", prog);
  if (ndev < n && !getenv("MKCCL_ALLOW_SAME_GPU"))
    SKIP("%s: %d GPUs for %d ranks (MKCCL_ALLOW_SAME_GPU=1 shares them)", prog, ndev, n);
  return ndev;
}

void gpu_rank_join(int rank, int n, int ndev, const ncclUniqueId* id, cudaStream_t* stream, ncclComm_t* comm) {
  CUDA_CHECK(cudaSetDevice(rank % ndev));
  CUDA_CHECK(cudaStreamCreateWithFlags(stream, cudaStreamNonBlocking));
  CHECK_NCCL(ncclCommInitRank(comm, n, *id, rank));
}

int gpu_timeout_param(const char* mode, int max) {
  const char* t = getenv("MKCCL_TIMEOUT");
  int sec = t ? atoi(t) : 600;
  CHECK_MSG(sec > 0 && sec <= max, "%s mode needs MKCCL_TIMEOUT=1..%d (got %d)", mode, max, sec);
  return sec;
}

double gpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

ncclResult_t gpu_wait_async_error(ncclComm_t comm, double boundSec, double* waited) {
  double start = gpu_now();
  ncclResult_t async = ncclSuccess;
  for (;;) {
    CHECK_NCCL(ncclCommGetAsyncError(comm, &async));
    *waited = gpu_now() - start;
    if (async != ncclSuccess || *waited > boundSec) return async;
    usleep(1000);
  }
}

cudaError_t gpu_stream_wait(cudaStream_t stream, double boundSec, double* waited) {
  double start = gpu_now();
  for (;;) {
    cudaError_t e = cudaStreamQuery(stream);
    *waited = gpu_now() - start;
    if (e != cudaErrorNotReady || *waited > boundSec) return e;
    usleep(1000);
  }
}
