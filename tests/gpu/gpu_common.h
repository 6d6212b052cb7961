/* Helpers shared by the GPU tests (test_gpu_coll, test_gpu_fault): CUDA
 * checks, the GPU count, a rank joining its communicator, bounded waits. */
#ifndef MKCCL_TESTS_GPU_COMMON_H
#define MKCCL_TESTS_GPU_COMMON_H

#include <cuda_runtime.h>

#include "check.h"
#include "nccl.h"

#define CUDA_CHECK(call)                                                                      \
  do {                                                                                        \
    cudaError_t e_ = (call);                                                                  \
    CHECK_MSG(e_ == cudaSuccess, "%s: %s", #call, cudaGetErrorString(e_));                    \
  } while (0)

/* GPUs visible, counted in a forked child so the caller forks its ranks
 * with CUDA untouched (a CUDA context does not survive a fork). */
int gpu_count_in_child(void);

/* A crash prints its stack (library+offset: addr2line resolves it against
 * the same build), since the GPU machine has no debugger. */
void gpu_crash_handlers(const char* prog);

/* The GPUs visible for n rank processes, or a skip (exit 77) with its
 * reason: none at all, or fewer than n without MKCCL_ALLOW_SAME_GPU. */
int gpu_count_for_ranks(const char* prog, int n);

/* A rank process joins: its GPU (rank % ndev), a non-blocking stream, the comm. */
void gpu_rank_join(int rank, int n, int ndev, const ncclUniqueId* id, cudaStream_t* stream, ncclComm_t* comm);

/* MKCCL_TIMEOUT in seconds, which a mode that waits for it needs in 1..max
 * (the default, 600 s, would make a hang of a failure). */
int gpu_timeout_param(const char* mode, int max);

/* CLOCK_MONOTONIC in seconds: one clock for every process of the machine. */
double gpu_now(void);

/* Polls ncclCommGetAsyncError until it reports an error or boundSec pass;
 * returns the last answer and the seconds waited in *waited. */
ncclResult_t gpu_wait_async_error(ncclComm_t comm, double boundSec, double* waited);

/* Waits up to boundSec for the stream's work to end (polled, so a kernel
 * that never ends is a failure with a message, not a hang): the stream's
 * result, or cudaErrorNotReady if it is still running. */
cudaError_t gpu_stream_wait(cudaStream_t stream, double boundSec, double* waited);

#endif
