// The core's side of a net-device plugin's device code (docs/UNPACK.md):
// the call site of the plugin's unpack, compiled to LTO-IR only and linked
// with the plugin's LTO-IR at communicator init (nvJitLink), so the core
// calls code it was not built with. The symbols below are resolved by that
// link; the names and signatures are the ABI of
// abi/net-device/mkccl_net_device_v1.h.
//
// mkcclNetDevUnpackKernel: block b takes handles[b] (one receive queue,
// as one channel of a collective does) and unpacks its receives
// [head, head + nreceives), receive r into dst + b * blockStride + r * stride;
// the handle's head is saved back at the end, as the collective kernels do.
// The unpack benchmark (bench/unpack_bench.c) and test_netdev_link use it.
#include <stdint.h>

extern "C" {
#include "net-device/mkccl_net_device_v1.h"
}

extern "C" __device__ uint64_t mkcclNetDevUnpackHead_v1(const void* handle);
extern "C" __device__ void mkcclNetDevUnpack_v1(const void* handle, uint64_t head, char* dst, int nbytes,
                                                void* warpScratch, int tid, int nthreads);
extern "C" __device__ void mkcclNetDevUnpackSaveHead_v1(void* handle, uint64_t head);

#define NETDEV_MAX_WARPS 32

extern "C" __global__ void mkcclNetDevUnpackKernel(void** handles, char* dst, long long blockStride, long long stride,
                                                   int nbytes, int nreceives) {
  __shared__ __align__(16) char scratch[NETDEV_MAX_WARPS * MKCCL_NET_DEVICE_WARP_SCRATCH];
  __shared__ uint64_t head;
  void* handle = handles[blockIdx.x];
  dst += blockIdx.x * blockStride;
  if (threadIdx.x == 0) head = mkcclNetDevUnpackHead_v1(handle);
  __syncthreads();
  const int nthreads = blockDim.x / 32 * 32;
  for (int r = 0; r < nreceives; r++) {
    if ((int)threadIdx.x < nthreads)
      mkcclNetDevUnpack_v1(handle, head + r, dst + r * stride, nbytes, scratch, threadIdx.x, nthreads);
    __syncthreads();
  }
  if (threadIdx.x == 0) mkcclNetDevUnpackSaveHead_v1(handle, head + nreceives);
}
