/* AllReduce (sum of floats) in a kernel of our own through NCCL's device
 * API: every rank registers its input and output as windows, each block
 * reduces its share of the elements by loading every LSA peer's input
 * (ncclGetLsaPointer) and stores the sum into every peer's output, with an
 * LSA barrier before (peers' inputs are there) and after (peers' stores
 * are done). Written against NVIDIA's nccl.h and nccl_device.h only.
 *
 *   allreduce_lsa N     N ranks as processes (several may share a GPU) */
#include <nccl.h>
#include <nccl_device.h>

#include "devapi_ranks.h"

#define BLOCKS 16
#define THREADS 512
#define COUNT (1 << 20)

/* Rank r's element i: ranks differ by a multiple of 4096, elements below
 * it, so a sum with a rank missing, doubled or read at the wrong place is
 * wrong; every partial sum stays an exact float. */
__host__ __device__ static float input_of(int rank, size_t i) { return (float)((rank + 1) * 4096 + (int)(i % 4093)); }

__global__ void allreduce_lsa(ncclWindow_t sendWin, ncclWindow_t recvWin, size_t count, ncclDevComm devComm) {
  ncclLsaBarrierSession<ncclCoopCta> bar{ncclCoopCta(), devComm, ncclTeamLsa(devComm), devComm.lsaBarrier,
                                         blockIdx.x};
  bar.sync(ncclCoopCta(), cuda::memory_order_acquire);
  int nPeers = devComm.lsaSize;
  /* This rank's share of the elements, spread over its blocks. */
  size_t share = (count + nPeers - 1) / nPeers;
  size_t begin = share * devComm.lsaRank;
  size_t end = begin + share < count ? begin + share : count;
  for (size_t i = begin + blockIdx.x * blockDim.x + threadIdx.x; i < end; i += (size_t)gridDim.x * blockDim.x) {
    float sum = 0;
    for (int p = 0; p < nPeers; p++) sum += ((const float*)ncclGetLsaPointer(sendWin, 0, p))[i];
    for (int p = 0; p < nPeers; p++) ((float*)ncclGetLsaPointer(recvWin, 0, p))[i] = sum;
  }
  bar.sync(ncclCoopCta(), cuda::memory_order_release);
}

static int rank_body(ncclComm_t comm, int rank, int n) {
  size_t bytes = COUNT * sizeof(float);
  float *send = NULL, *recv = NULL;
  DEVAPI_NCCL(ncclMemAlloc((void**)&send, bytes));
  DEVAPI_NCCL(ncclMemAlloc((void**)&recv, bytes));
  float* host = (float*)malloc(bytes);
  for (size_t i = 0; i < COUNT; i++) host[i] = input_of(rank, i);
  DEVAPI_CUDA(cudaMemcpy(send, host, bytes, cudaMemcpyHostToDevice));
  DEVAPI_CUDA(cudaMemset(recv, 0xff, bytes)); /* NaN where nobody stored */
  ncclWindow_t sendWin, recvWin;
  DEVAPI_NCCL(ncclCommWindowRegister(comm, send, bytes, &sendWin, NCCL_WIN_COLL_SYMMETRIC));
  DEVAPI_NCCL(ncclCommWindowRegister(comm, recv, bytes, &recvWin, NCCL_WIN_COLL_SYMMETRIC));

  ncclDevCommRequirements reqs = {};
  reqs.lsaBarrierCount = BLOCKS; /* one barrier per block of the launch */
  ncclDevComm devComm;
  DEVAPI_NCCL(ncclDevCommCreate(comm, &reqs, &devComm));
  cudaStream_t stream;
  DEVAPI_CUDA(cudaStreamCreate(&stream));
  /* Twice: the second run starts from the barriers' epochs the first left. */
  int wrong = 0;
  for (int iter = 0; iter < 2 && !wrong; iter++) {
    allreduce_lsa<<<BLOCKS, THREADS, 0, stream>>>(sendWin, recvWin, COUNT, devComm);
    DEVAPI_CUDA(cudaGetLastError());
    DEVAPI_CUDA(cudaStreamSynchronize(stream));
    DEVAPI_CUDA(cudaMemcpy(host, recv, bytes, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < COUNT; i++) {
      float expect = 0;
      for (int r = 0; r < n; r++) expect += input_of(r, i);
      if (host[i] != expect && wrong++ < 5)
        fprintf(stderr, "rank %d run %d: element %zu is %g, expected %g\n", rank, iter, i, host[i], expect);
    }
    /* Safe to clear: no peer stores into it before this rank reaches the
     * next run's first barrier. */
    DEVAPI_CUDA(cudaMemset(recv, 0xff, bytes));
  }
  if (wrong) fprintf(stderr, "rank %d: %d elements wrong\n", rank, wrong);
  DEVAPI_CUDA(cudaStreamDestroy(stream));
  DEVAPI_NCCL(ncclDevCommDestroy(comm, &devComm));
  DEVAPI_NCCL(ncclCommWindowDeregister(comm, recvWin));
  DEVAPI_NCCL(ncclCommWindowDeregister(comm, sendWin));
  DEVAPI_NCCL(ncclMemFree(recv));
  DEVAPI_NCCL(ncclMemFree(send));
  free(host);
  return wrong != 0;
}

int main(int argc, char** argv) { return devapi_run("allreduce_lsa", argc, argv, rank_body, 90); }
