/* AllToAll of 64-bit words in a kernel of our own over NCCL's LL
 * all-to-all (ncclLLA2ASession): each word travels in a 16-byte line with
 * the session's epoch beside it, so a receiver knows it arrived without a
 * barrier. Block b moves words [b * THREADS, (b + 1) * THREADS) of every
 * peer's chunk, one word per thread and peer per epoch. Written against
 * NVIDIA's nccl.h and nccl_device.h only.
 *
 *   alltoall_ll N     N ranks as processes (several may share a GPU) */
#include <stdint.h>

#include <nccl.h>
#include <nccl_device.h>

#include "devapi_ranks.h"

#define BLOCKS 4
#define THREADS 256
#define CHUNK (BLOCKS * THREADS * 8) /* words from each rank to each rank */

/* The word rank `from` sends to rank `to` at place j of the chunk. */
__host__ __device__ static uint64_t word_of(int from, int to, int j) {
  return ((uint64_t)(from + 1) << 48) | ((uint64_t)(to + 1) << 32) | (uint32_t)j;
}

__global__ void alltoall_ll(const uint64_t* send, uint64_t* recv, ncclDevComm devComm, ncclLLA2AHandle handle) {
  ncclTeam lsa = ncclTeamLsa(devComm);
  ncclLLA2ASession<ncclCoopCta> a2a{ncclCoopCta(), devComm, lsa, handle, blockIdx.x, /*maxElts=*/THREADS};
  int t = threadIdx.x;
  for (int j = blockIdx.x * THREADS + t; j < CHUNK; j += BLOCKS * THREADS) {
    /* Slot of (sender, thread) in every receiver's block: sender-major. */
    for (int p = 0; p < lsa.nRanks; p++) a2a.send(p, lsa.rank * THREADS + t, send[(size_t)p * CHUNK + j]);
    for (int p = 0; p < lsa.nRanks; p++) recv[(size_t)p * CHUNK + j] = a2a.recv<uint64_t>(p * THREADS + t);
    a2a.endEpoch(ncclCoopCta());
  }
}

static int rank_body(ncclComm_t comm, int rank, int n) {
  size_t words = (size_t)n * CHUNK, bytes = words * sizeof(uint64_t);
  uint64_t *send = NULL, *recv = NULL;
  DEVAPI_CUDA(cudaMalloc((void**)&send, bytes));
  DEVAPI_CUDA(cudaMalloc((void**)&recv, bytes));
  uint64_t* host = (uint64_t*)malloc(bytes);
  for (int p = 0; p < n; p++)
    for (int j = 0; j < CHUNK; j++) host[(size_t)p * CHUNK + j] = word_of(rank, p, j);
  DEVAPI_CUDA(cudaMemcpy(send, host, bytes, cudaMemcpyHostToDevice));
  DEVAPI_CUDA(cudaMemset(recv, 0, bytes));

  ncclLLA2AHandle handle;
  ncclDevResourceRequirements req;
  DEVAPI_NCCL(ncclLLA2ACreateRequirement(BLOCKS, ncclLLA2ACalcSlots(n * THREADS, sizeof(uint64_t)), &handle, &req));
  ncclDevCommRequirements reqs = {};
  reqs.resourceRequirementsList = &req;
  ncclDevComm devComm;
  DEVAPI_NCCL(ncclDevCommCreate(comm, &reqs, &devComm));
  if (devComm.lsaSize != n) {
    fprintf(stderr, "rank %d: the LSA team has %d ranks, not all %d: this sample needs one host\n", rank,
            devComm.lsaSize, n);
    return 1;
  }
  cudaStream_t stream;
  DEVAPI_CUDA(cudaStreamCreate(&stream));
  int wrong = 0;
  /* Twice: the second launch starts from the epochs the first left. */
  for (int iter = 0; iter < 2 && !wrong; iter++) {
    alltoall_ll<<<BLOCKS, THREADS, 0, stream>>>(send, recv, devComm, handle);
    DEVAPI_CUDA(cudaGetLastError());
    DEVAPI_CUDA(cudaStreamSynchronize(stream));
    DEVAPI_CUDA(cudaMemcpy(host, recv, bytes, cudaMemcpyDeviceToHost));
    for (int p = 0; p < n; p++)
      for (int j = 0; j < CHUNK; j++) {
        uint64_t got = host[(size_t)p * CHUNK + j], expect = word_of(p, rank, j);
        if (got != expect && wrong++ < 5)
          fprintf(stderr, "rank %d run %d: word %d from rank %d is %#llx, expected %#llx\n", rank, iter, j, p,
                  (unsigned long long)got, (unsigned long long)expect);
      }
    DEVAPI_CUDA(cudaMemset(recv, 0, bytes));
  }
  if (wrong) fprintf(stderr, "rank %d: %d words wrong\n", rank, wrong);
  DEVAPI_CUDA(cudaStreamDestroy(stream));
  DEVAPI_NCCL(ncclDevCommDestroy(comm, &devComm));
  DEVAPI_CUDA(cudaFree(recv));
  DEVAPI_CUDA(cudaFree(send));
  free(host);
  return wrong != 0;
}

int main(int argc, char** argv) { return devapi_run("alltoall_ll", argc, argv, rank_body, 90); }
