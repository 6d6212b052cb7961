/* The memory accesses the GPU side of the connection protocol is made of
 * (DESIGN.md, "Connection FIFO"): step words read with acquire and written
 * relaxed or with release at system scope (the peer may be another GPU or
 * the host), the system fence, 16-byte volatile vector accesses (LL lines,
 * the host-pinned work FIFO) and the global timer. Shared by the kernels and
 * bench/gpu_micro.cu. */
#ifndef MKCCL_CUDA_SYNC_CUH
#define MKCCL_CUDA_SYNC_CUH

#include <stdint.h>

static __device__ __forceinline__ uint64_t mk_ld_acquire(const volatile uint64_t* p) {
  uint64_t v;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
static __device__ __forceinline__ void mk_st_release(volatile uint64_t* p, uint64_t v) {
  asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
static __device__ __forceinline__ void mk_st_relaxed(volatile uint64_t* p, uint64_t v) {
  asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
static __device__ __forceinline__ void mk_fence_sys(void) { asm volatile("fence.acq_rel.sys;" ::: "memory"); }

/* One 16-byte access, never cached across calls (memory another agent writes). */
static __device__ __forceinline__ uint4 mk_ld_volatile_v4(const void* p) {
  uint4 v;
  asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p)
               : "memory");
  return v;
}
static __device__ __forceinline__ void mk_st_volatile_v4(void* p, uint4 v) {
  asm volatile("st.volatile.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}

static __device__ __forceinline__ uint64_t mk_globaltimer(void) {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

#endif
