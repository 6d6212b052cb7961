/* A ring of GIN puts through NCCL's device API: in each of ITERS rounds
 * every rank writes a block that tells rank, element and round apart,
 * puts it with a signal into the next rank's window (a slot per round),
 * waits for its own signal and checks what the previous rank put; then
 * every rank puts a value into every other rank and meets them in a GIN
 * barrier, after which every value must be there (a barrier's signal
 * follows the puts before it to the same peer). Written against NVIDIA's
 * nccl.h and nccl_device.h only.
 *
 *   ring_gin N     N ranks as processes (several may share a GPU) */
#include <nccl.h>
#include <nccl_device.h>

#include "devapi_ranks.h"

#define THREADS 256
#define ITERS 8
#define WORDS (64 * 1024 + 3) /* a block of 256 KiB and a little more: not a multiple of anything */
#define RING_SIGNAL 0

__host__ __device__ static uint32_t pattern(int rank, size_t i, int iter) {
  return (uint32_t)rank << 26 ^ (uint32_t)iter << 20 ^ (uint32_t)(i * 2654435761u);
}

/* Window layout: ITERS received blocks, then one value slot per rank. */
__host__ __device__ static size_t slot_of(int iter) { return (size_t)iter * WORDS * sizeof(uint32_t); }
__host__ __device__ static size_t value_of(int rank) { return slot_of(ITERS) + 8 * (size_t)rank; }

__global__ void ring_gin(ncclWindow_t srcWin, uint32_t* src, ncclWindow_t dstWin, const char* dst,
                         ncclDevComm devComm, ncclGinBarrierHandle barrier, unsigned* wrong) {
  ncclGin gin(devComm, 0);
  ncclTeam world = ncclTeamWorld(devComm);
  int rank = devComm.rank, n = devComm.nRanks;
  int next = (rank + 1) % n, prev = (rank + n - 1) % n;
  for (int it = 0; it < ITERS; it++) {
    for (size_t i = threadIdx.x; i < WORDS; i += blockDim.x) src[i] = pattern(rank, i, it);
    gin.put(world, next, dstWin, slot_of(it), srcWin, 0, WORDS * sizeof(uint32_t), ncclGin_SignalInc{RING_SIGNAL},
            ncclGin_None{}, ncclCoopCta());
    gin.waitSignal(ncclCoopCta(), RING_SIGNAL, (uint64_t)it + 1);
    const uint32_t* got = (const uint32_t*)(dst + slot_of(it));
    for (size_t i = threadIdx.x; i < WORDS; i += blockDim.x)
      if (got[i] != pattern(prev, i, it)) atomicAdd(wrong, 1u);
    /* The source is rewritten next round: its put must have consumed it. */
    gin.flush(ncclCoopCta());
  }
  for (int p = threadIdx.x; p < n; p += blockDim.x)
    if (p != rank) gin.putValue(world, p, dstWin, value_of(rank), (uint64_t)(rank + 1) << 32 | 0x5eed, ncclGin_None{},
                                ncclCoopThread());
  __syncthreads();
  ncclGinBarrierSession<ncclCoopCta> bar(ncclCoopCta(), gin, world, barrier, 0);
  bar.sync(ncclCoopCta(), cuda::memory_order_acq_rel, ncclGinFenceLevel::Relaxed);
  for (int p = threadIdx.x; p < n; p += blockDim.x) {
    uint64_t v = *(const volatile uint64_t*)(dst + value_of(p));
    if (p != rank && v != ((uint64_t)(p + 1) << 32 | 0x5eed)) atomicAdd(wrong, 1u);
  }
}

static int rank_body(ncclComm_t comm, int rank, int n) {
  size_t srcBytes = WORDS * sizeof(uint32_t), dstBytes = value_of(n);
  uint32_t* src = NULL;
  char* dst = NULL;
  unsigned* wrong = NULL;
  DEVAPI_NCCL(ncclMemAlloc((void**)&src, srcBytes));
  DEVAPI_NCCL(ncclMemAlloc((void**)&dst, dstBytes));
  DEVAPI_CUDA(cudaMalloc((void**)&wrong, sizeof(unsigned)));
  DEVAPI_CUDA(cudaMemset(wrong, 0, sizeof(unsigned)));
  DEVAPI_CUDA(cudaMemset(dst, 0, dstBytes));
  ncclWindow_t srcWin, dstWin;
  DEVAPI_NCCL(ncclCommWindowRegister(comm, src, srcBytes, &srcWin, NCCL_WIN_COLL_SYMMETRIC));
  DEVAPI_NCCL(ncclCommWindowRegister(comm, dst, dstBytes, &dstWin, NCCL_WIN_COLL_SYMMETRIC));

  ncclGinBarrierHandle barrier;
  ncclDevResourceRequirements barrierReq;
  DEVAPI_NCCL(ncclGinBarrierCreateRequirement(comm, ncclTeamWorld(comm), 1, &barrier, &barrierReq));
  ncclDevCommRequirements reqs = {};
  reqs.resourceRequirementsList = &barrierReq;
  reqs.ginForceEnable = true;
  reqs.ginContextCount = 1;
  reqs.ginSignalCount = 1; /* RING_SIGNAL */
  ncclDevComm devComm;
  DEVAPI_NCCL(ncclDevCommCreate(comm, &reqs, &devComm));
  if (rank == 0)
    printf("devComm: %d ranks, LSA team of %d, %d GIN context(s) of type %d, %d signals\n", devComm.nRanks,
           devComm.lsaSize, devComm.ginContextCount, devComm.ginTypes[0], devComm.ginSignalCount);
  cudaStream_t stream;
  DEVAPI_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  ring_gin<<<1, THREADS, 0, stream>>>(srcWin, src, dstWin, dst, devComm, barrier, wrong);
  DEVAPI_CUDA(cudaGetLastError());
  DEVAPI_CUDA(cudaStreamSynchronize(stream));
  unsigned bad = 0;
  DEVAPI_CUDA(cudaMemcpy(&bad, wrong, sizeof(bad), cudaMemcpyDeviceToHost));
  /* The host's own reading of the last round, element by element. */
  uint32_t* host = (uint32_t*)malloc(srcBytes);
  DEVAPI_CUDA(cudaMemcpy(host, dst + slot_of(ITERS - 1), srcBytes, cudaMemcpyDeviceToHost));
  int prev = (rank + n - 1) % n, shown = 0;
  for (size_t i = 0; i < WORDS; i++)
    if (host[i] != pattern(prev, i, ITERS - 1)) {
      bad++;
      if (shown++ < 5)
        fprintf(stderr, "rank %d: round %d element %zu is 0x%08x, rank %d put 0x%08x\n", rank, ITERS - 1, i, host[i],
                prev, pattern(prev, i, ITERS - 1));
    }
  if (bad) fprintf(stderr, "rank %d: %u words wrong\n", rank, bad);
  free(host);
  DEVAPI_CUDA(cudaStreamDestroy(stream));
  DEVAPI_NCCL(ncclDevCommDestroy(comm, &devComm));
  DEVAPI_NCCL(ncclCommWindowDeregister(comm, dstWin));
  DEVAPI_NCCL(ncclCommWindowDeregister(comm, srcWin));
  DEVAPI_CUDA(cudaFree(wrong));
  DEVAPI_NCCL(ncclMemFree(dst));
  DEVAPI_NCCL(ncclMemFree(src));
  return bad != 0;
}

int main(int argc, char** argv) { return devapi_run("ring_gin", argc, argv, rank_body, 80); }
