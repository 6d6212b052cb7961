/* What both device API samples share, written against NVIDIA's headers
 * and the CUDA runtime only: ranks as processes forked here (rank 0 makes
 * the unique id after the fork and hands it over through shared memory:
 * a process that made an id keeps its root thread, a forked child would
 * not have it), checks that name the failing call, and the library that
 * served ncclCommInitRank (dladdr), so a run shows whose libnccl it used.
 *
 *   SAMPLE N     N ranks, each on GPU rank % (GPUs seen)
 * With DEVAPI_HOSTID_PER_RANK=1 each rank sets its own NCCL_HOSTID first,
 * so every rank is a host of its own (its own LSA team; peers over GIN).
 * Exit 0 and a last line "PASS ..." when every rank's result was right. */
#ifndef DEVAPI_RANKS_H
#define DEVAPI_RANKS_H

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nccl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define DEVAPI_CUDA(call)                                                                             \
  do {                                                                                                \
    cudaError_t e_ = (call);                                                                          \
    if (e_ != cudaSuccess) {                                                                          \
      fprintf(stderr, "rank %d: %s failed: %s (%s:%d)\n", devapi_rank, #call, cudaGetErrorString(e_), \
              __FILE__, __LINE__);                                                                    \
      exit(1);                                                                                        \
    }                                                                                                 \
  } while (0)

#define DEVAPI_NCCL(call)                                                                                     \
  do {                                                                                                        \
    ncclResult_t r_ = (call);                                                                                 \
    if (r_ != ncclSuccess) {                                                                                  \
      fprintf(stderr, "rank %d: %s failed: %s: %s (%s:%d)\n", devapi_rank, #call, ncclGetErrorString(r_),      \
              ncclGetLastError(NULL), __FILE__, __LINE__);                                                    \
      exit(1);                                                                                                \
    }                                                                                                         \
  } while (0)

static int devapi_rank = -1;

struct devapi_shared {
  volatile int ready;
  ncclUniqueId id;
};

/* A rank's communicator, on its GPU. */
static ncclComm_t devapi_comm_init(devapi_shared* sh, int rank, int n) {
  devapi_rank = rank;
  int nDev = 0;
  DEVAPI_CUDA(cudaGetDeviceCount(&nDev));
  DEVAPI_CUDA(cudaSetDevice(rank % nDev));
  if (rank == 0) {
    DEVAPI_NCCL(ncclGetUniqueId(&sh->id));
    __atomic_store_n(&sh->ready, 1, __ATOMIC_RELEASE);
  }
  while (!__atomic_load_n(&sh->ready, __ATOMIC_ACQUIRE)) usleep(1000);
  ncclComm_t comm;
  DEVAPI_NCCL(ncclCommInitRank(&comm, n, sh->id, rank));
  if (rank == 0) {
    Dl_info info;
    int version = 0;
    ncclGetVersion(&version);
    printf("library: %s (version code %d)\n",
           dladdr((void*)ncclCommInitRank, &info) && info.dli_fname ? info.dli_fname : "?", version);
    fflush(stdout);
  }
  return comm;
}

/* body(comm, rank, n) in n forked ranks, within limitSec; 0 when all passed. */
static int devapi_run(const char* name, int argc, char** argv, int (*body)(ncclComm_t, int, int), int limitSec) {
  int n = argc > 1 ? atoi(argv[1]) : 2;
  if (n < 1 || n > 64) {
    fprintf(stderr, "usage: %s N (ranks, 1..64)\n", argv[0]);
    return 2;
  }
  devapi_shared* sh = (devapi_shared*)mmap(NULL, sizeof(devapi_shared), PROT_READ | PROT_WRITE,
                                           MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (sh == MAP_FAILED) return 2;
  sh->ready = 0;
  pid_t* pids = (pid_t*)calloc((size_t)n, sizeof(pid_t));
  for (int r = 0; r < n; r++) {
    pids[r] = fork();
    if (pids[r] == 0) {
      alarm((unsigned)limitSec); /* a rank that hangs dies, and the run fails */
      const char* perRank = getenv("DEVAPI_HOSTID_PER_RANK");
      if (perRank && atoi(perRank)) {
        char host[64];
        snprintf(host, sizeof(host), "devapi-host-%d", r);
        setenv("NCCL_HOSTID", host, 1);
      }
      ncclComm_t comm = devapi_comm_init(sh, r, n);
      int bad = body(comm, r, n);
      DEVAPI_NCCL(ncclCommDestroy(comm));
      fflush(stdout); /* _exit does not flush: a rank's report would be lost in a file */
      _exit(bad ? 1 : 0);
    }
  }
  int failed = 0;
  for (int r = 0; r < n; r++) {
    int st = 0;
    waitpid(pids[r], &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
      fprintf(stderr, "rank %d failed (%s %d)\n", r, WIFEXITED(st) ? "exit" : "signal",
              WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
      failed++;
    }
  }
  printf("%s %s ranks=%d\n", failed ? "FAIL" : "PASS", name, n);
  return failed ? 1 : 0;
}

#endif
