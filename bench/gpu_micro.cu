/* mkccl-gpu-micro: microbenchmarks of the GPU executor's building blocks on
 * two peer GPUs (0 and 1): what one CTA's data loops move across NVLink,
 * what a system fence per slice and one hop (a flag handshake between the
 * GPUs) cost. The loops alone, next to a kernel's figures, tell a slow loop
 * from slow bookkeeping around it, such as register spills
 * (docs/perf/multi-gpu.md).
 *
 *   copy      mk_copy, nb CTAs x 512 threads: write, read and local placements
 *   reduce    mk_reduce_copy<float, SUM>: local inputs, d0 on the peer
 *   slice     1 CTA copying to the peer in slices, a flag post per slice,
 *             with fence.acq_rel.sys, __threadfence() or no fence
 *   pingpong  one-way hop latency: flag only, flag + fence, Simple-like
 *             8 KB hop, LL-like 16-byte lines
 *   vmm       writes to the peer as in copy, into cudaMalloc memory (what
 *             transport-p2p maps, by CUDA IPC) and into memory made with
 *             cuMemCreate and mapped with cuMemMap/cuMemSetAccess (what
 *             NCCL's P2P/CUMEM maps), 16 to 64 CTAs
 *
 * Usage: mkccl-gpu-micro [copy|reduce|slice|pingpong|vmm]...   (default: all)
 * Exit: 0 ok, 1 CUDA error or bad usage, 2 fewer than 2 GPUs / no peer
 * access, 3 a spin timed out or data was wrong, 4 host watchdog.
 *
 * The data loops are the library's own (device/cuda/reduce.cuh), so the
 * numbers are those of the kernel's inner loops without its bookkeeping. */
#include <cuda.h>
#include <cuda_runtime.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <initializer_list>

#include "device/cuda/reduce.cuh"
#include "device/cuda/sync.cuh"

#define THREADS 512                    /* the executor's blockDim */
#define BIG ((int64_t)256 << 20)       /* bytes per buffer of the bandwidth tests */
#define SPIN_TIMEOUT_NS 5000000000ull  /* no spin may outlive this (a bug must not hang the machine) */
#define PP_ITERS 10000                 /* round trips per ping-pong run */

#define CK(x)                                                                                    \
  do {                                                                                           \
    cudaError_t e_ = (x);                                                                        \
    if (e_ != cudaSuccess) {                                                                     \
      fprintf(stderr, "mkccl-gpu-micro: %s:%d: %s: %s\n", __FILE__, __LINE__, #x,                \
              cudaGetErrorString(e_));                                                           \
      exit(1);                                                                                   \
    }                                                                                            \
  } while (0)
/* A launch's own errors (bad configuration, too many resources) show here, not at sync. */
#define CKLAUNCH() CK(cudaGetLastError())

/* ---- device helpers: the executor's own (device/cuda/sync.cuh) ---- */

/* Error reports from kernels: host-mapped memory, readable after any failure. */
enum { ERR_TIMEOUT = 1, ERR_DATA = 2 };
static __device__ __forceinline__ void report(int* err, int code) { *(volatile int*)err = code; }

/* ---- 1. copy, 2. reduce: each CTA its own contiguous part ---- */

/* Part of CTA blockIdx.x when n units (16-byte aligned) are split over gridDim.x CTAs. */
static __device__ __forceinline__ void my_part(int64_t n, int64_t align, int64_t* off, int64_t* len) {
  int64_t part = n / gridDim.x / align * align;
  *off = part * blockIdx.x;
  *len = blockIdx.x == gridDim.x - 1 ? n - *off : part;
}

__global__ void __launch_bounds__(THREADS) k_copy(const char* src, char* dst, char* dst1, int64_t bytes) {
  int64_t off, len;
  my_part(bytes, 16, &off, &len);
  mk_copy(threadIdx.x, blockDim.x, src + off, dst + off, dst1 ? dst1 + off : nullptr, len);
}

__global__ void __launch_bounds__(THREADS) k_reduce(const float* a, const float* b, float* d0, float* d1, int64_t n) {
  int64_t off, len;
  my_part(n, 4, &off, &len);
  mk_reduce_copy<float, MK_OP_SUM>(threadIdx.x, blockDim.x, (const char*)(a + off), (const char*)(b + off),
                                   (char*)(d0 + off), d1 ? (char*)(d1 + off) : nullptr, len, 0, 0);
}

/* ---- 3. slices: the executor's per-slice post (Simple send), without the waits ---- */

enum { FENCE_ACQREL_SYS = 0, FENCE_THREADFENCE = 1, FENCE_NONE = 2 };

template <int F>
__global__ void __launch_bounds__(THREADS) k_slice(const char* src, char* dst, int64_t bytes, int64_t slice,
                                                   uint64_t* peerFlag) {
  uint64_t n = 0;
  for (int64_t off = 0; off < bytes; off += slice) {
    int64_t len = bytes - off < slice ? bytes - off : slice;
    mk_copy(threadIdx.x, blockDim.x, src + off, dst + off, nullptr, len);
    __syncthreads();
    if (threadIdx.x == 0) {
      if (F == FENCE_ACQREL_SYS) mk_fence_sys();
      if (F == FENCE_THREADFENCE) __threadfence();
      mk_st_relaxed(peerFlag, ++n);
    }
    __syncthreads();
  }
}

/* ---- 4. ping-pong: flags and payload in the receiver's memory ---- */

enum { PP_FLAG = 0, PP_FENCE = 1, PP_SIMPLE = 2, PP_LL = 3 };

struct pp_args {
  uint64_t* myFlag;   /* polled here (local) */
  uint64_t* peerFlag; /* written (remote) */
  uint4* myPay;       /* THREADS lines, local */
  uint4* peerPay;     /* THREADS lines, remote */
  int* err;
};

/* Spins until *f >= v; false after the deadline. The timer is read only now
 * and then: it is slower than the poll itself. */
static __device__ bool poll_ge(const uint64_t* f, uint64_t v, uint64_t deadline) {
  unsigned spins = 0;
  while (mk_ld_acquire(f) < v)
    if ((++spins & 1023) == 0 && mk_globaltimer() > deadline) return false;
  return true;
}

/* LL line of round i for thread t: {data1, flag1, data2, flag2}. */
static __device__ __forceinline__ uint4 ll_line(uint32_t i, uint32_t t) { return make_uint4(i * 7919u + t, i, ~(i + t), i); }

template <int V>
static __device__ __forceinline__ void pp_send(const pp_args& a, uint32_t i) {
  int t = threadIdx.x;
  if (V == PP_FLAG || V == PP_FENCE) {
    if (V == PP_FENCE) mk_fence_sys();
    mk_st_relaxed(a.peerFlag, i);
  } else if (V == PP_SIMPLE) {
    a.peerPay[t] = make_uint4(i, t, i, t); /* plain stores, as mk_copy's */
    __syncthreads();
    if (t == 0) {
      mk_fence_sys(); /* every thread's payload before the flag (the barrier made them this thread's) */
      mk_st_relaxed(a.peerFlag, i);
    }
  } else {
    mk_st_volatile_v4(a.peerPay + t, ll_line(i, t));
  }
}

/* False when the round timed out or its data was wrong (the whole CTA agrees for SIMPLE). */
template <int V>
static __device__ __forceinline__ bool pp_recv(const pp_args& a, uint32_t i, uint64_t deadline, int* abortShared) {
  int t = threadIdx.x;
  if (V == PP_FLAG || V == PP_FENCE) {
    if (poll_ge(a.myFlag, i, deadline)) return true;
    report(a.err, ERR_TIMEOUT);
    return false;
  } else if (V == PP_SIMPLE) {
    if (t == 0 && !poll_ge(a.myFlag, i, deadline)) {
      report(a.err, ERR_TIMEOUT);
      *abortShared = 1;
    }
    __syncthreads();
    if (*abortShared) return false;
    /* The receiver reads what it got (as a Simple receive would), and checks it. */
    uint4 v = mk_ld_volatile_v4(a.myPay + t);
    if (v.x != i || v.y != (uint32_t)t) report(a.err, ERR_DATA);
    return true;
  } else {
    /* LL: no fence, no barrier; the flags in the line say the data is there. */
    uint4 want = ll_line(i, t), v;
    unsigned spins = 0;
    while ((v = mk_ld_volatile_v4(a.myPay + t)).y != i || v.w != i) {
      if ((++spins & 1023) == 0 && mk_globaltimer() > deadline) {
        report(a.err, ERR_TIMEOUT);
        return false;
      }
    }
    if (v.x != want.x || v.z != want.z) report(a.err, ERR_DATA);
    return true;
  }
}

template <int V>
__global__ void __launch_bounds__(THREADS) k_pingpong(pp_args a, int iters, int initiator) {
  __shared__ int abortShared;
  uint64_t deadline = mk_globaltimer() + SPIN_TIMEOUT_NS;
  if (threadIdx.x == 0) abortShared = 0;
  __syncthreads();
  for (uint32_t i = 1; i <= (uint32_t)iters; i++) {
    if (initiator) {
      pp_send<V>(a, i);
      if (!pp_recv<V>(a, i, deadline, &abortShared)) return;
    } else {
      if (!pp_recv<V>(a, i, deadline, &abortShared)) return;
      pp_send<V>(a, i);
    }
  }
}

/* ---- host ---- */

struct gpus {
  cudaStream_t s[2];
  cudaEvent_t t0, t1; /* on GPU0 */
  char *src0, *dst0, *aux0, *buf1; /* BIG bytes each: three on GPU0, one on GPU1 */
  uint64_t* flag[2];  /* a flag word on each GPU */
  uint4* pay[2];      /* THREADS 16-byte lines on each GPU */
  int* err;           /* host-mapped */
};

static void header(const char* test, const char* what) {
  printf("\n# %s: %s\n#  %-34s %12s %12s %9s\n", test, what, "config", "bytes", "time(us)", "GB/s");
}
static void row(const char* config, int64_t bytes, double us) {
  printf("   %-34s %12lld %12.2f %9.2f\n", config, (long long)bytes, us, us > 0 ? bytes / us / 1e3 : 0.0);
  fflush(stdout);
}

static void check_err(gpus& g, const char* what) {
  if (*(volatile int*)g.err) {
    fprintf(stderr, "mkccl-gpu-micro: %s: %s\n", what,
            *g.err == ERR_TIMEOUT ? "a spin timed out (peer never answered)" : "received data was wrong");
    exit(3);
  }
}

/* Average us per launch of `launch` on GPU0's stream: warm-up, then reps back to back. */
template <typename L>
static double time_gpu0(gpus& g, int warm, int reps, L launch) {
  CK(cudaSetDevice(0));
  for (int r = 0; r < warm; r++) launch();
  CKLAUNCH();
  CK(cudaEventRecord(g.t0, g.s[0]));
  for (int r = 0; r < reps; r++) launch();
  CKLAUNCH();
  CK(cudaEventRecord(g.t1, g.s[0]));
  CK(cudaEventSynchronize(g.t1));
  float ms;
  CK(cudaEventElapsedTime(&ms, g.t0, g.t1));
  return ms * 1e3 / reps;
}

static void test_copy(gpus& g) {
  header("copy", "mk_copy on GPU0, nb CTAs x 512 threads, each its own contiguous part; 5 reps after 1 warm-up");
  struct { const char* name; const char* src; char* dst; char* dst1; } place[4] = {
      {"write local->peer", g.src0, g.buf1, nullptr},
      {"write local->peer+local", g.src0, g.buf1, g.dst0},
      {"read peer->local", g.buf1, g.dst0, nullptr},
      {"local->local", g.src0, g.dst0, nullptr}};
  for (auto& p : place)
    for (int nb : {1, 8, 16, 32}) {
      double us = time_gpu0(g, 1, 5, [&] { k_copy<<<nb, THREADS, 0, g.s[0]>>>(p.src, p.dst, p.dst1, BIG); });
      char cfg[64];
      snprintf(cfg, sizeof cfg, "%s nb=%d", p.name, nb);
      row(cfg, BIG, us);
    }
}

static void test_reduce(gpus& g) {
  header("reduce", "mk_reduce_copy<float,SUM> on GPU0, a and b local, d0 on the peer; bytes = one buffer; 5 reps");
  int64_t n = BIG / 4;
  for (int nb : {1, 32})
    for (int withD1 : {1, 0}) {
      float* d1 = withD1 ? (float*)g.dst0 : nullptr;
      double us = time_gpu0(g, 1, 5, [&] {
        k_reduce<<<nb, THREADS, 0, g.s[0]>>>((const float*)g.src0, (const float*)g.aux0, (float*)g.buf1, d1, n);
      });
      char cfg[64];
      snprintf(cfg, sizeof cfg, "d0=peer d1=%s nb=%d", withD1 ? "local" : "null", nb);
      row(cfg, BIG, us);
    }
}

static void test_slice(gpus& g) {
  header("slice", "1 CTA copies local->peer in slices; per slice: barrier, [fence], relaxed flag store to the peer, "
                  "barrier; 3 reps");
  uint64_t* pf = g.flag[1];
  double us = time_gpu0(g, 1, 3, [&] { k_copy<<<1, THREADS, 0, g.s[0]>>>(g.src0, g.buf1, nullptr, BIG); });
  row("no slices (plain mk_copy)", BIG, us);
  for (int64_t S : {(int64_t)64 << 10, (int64_t)256 << 10, (int64_t)1 << 20}) {
    struct { const char* name; void (*k)(const char*, char*, int64_t, int64_t, uint64_t*); } v[3] = {
        {"fence.acq_rel.sys", k_slice<FENCE_ACQREL_SYS>},
        {"__threadfence", k_slice<FENCE_THREADFENCE>},
        {"no fence", k_slice<FENCE_NONE>}};
    for (auto& f : v) {
      us = time_gpu0(g, 1, 3, [&] { f.k<<<1, THREADS, 0, g.s[0]>>>(g.src0, g.buf1, BIG, S, pf); });
      char cfg[64];
      snprintf(cfg, sizeof cfg, "S=%lldK %s", (long long)(S >> 10), f.name);
      row(cfg, BIG, us);
    }
  }
}

/* One ping-pong run: the responder (GPU1) is launched first so that it is
 * polling when GPU0's timed kernel starts. Returns us per one-way hop. */
static double pp_run(gpus& g, void (*k)(pp_args, int, int), int threads, int iters) {
  for (int d = 0; d < 2; d++) {
    CK(cudaSetDevice(d));
    CK(cudaMemsetAsync(g.flag[d], 0, sizeof(uint64_t), g.s[d]));
    CK(cudaMemsetAsync(g.pay[d], 0, THREADS * sizeof(uint4), g.s[d]));
    CK(cudaStreamSynchronize(g.s[d]));
  }
  pp_args a1 = {g.flag[1], g.flag[0], g.pay[1], g.pay[0], g.err};
  pp_args a0 = {g.flag[0], g.flag[1], g.pay[0], g.pay[1], g.err};
  CK(cudaSetDevice(1));
  k<<<1, threads, 0, g.s[1]>>>(a1, iters, 0);
  CKLAUNCH();
  CK(cudaSetDevice(0));
  CK(cudaEventRecord(g.t0, g.s[0]));
  k<<<1, threads, 0, g.s[0]>>>(a0, iters, 1);
  CKLAUNCH();
  CK(cudaEventRecord(g.t1, g.s[0]));
  CK(cudaEventSynchronize(g.t1));
  CK(cudaSetDevice(1));
  CK(cudaStreamSynchronize(g.s[1]));
  check_err(g, "pingpong");
  float ms;
  CK(cudaEventElapsedTime(&ms, g.t0, g.t1));
  return ms * 1e3 / (2.0 * iters);
}

static void test_pingpong(gpus& g) {
  header("pingpong", "one-way hop GPU0<->GPU1, flags/payload in the receiver's memory, 10000 round trips, "
                     "mean of 3 runs; time = kernel time / 20000");
  struct { const char* name; void (*k)(pp_args, int, int); int threads; int64_t bytes; } v[4] = {
      {"(a) st.relaxed / ld.acquire, 1 thr", k_pingpong<PP_FLAG>, 1, 8},
      {"(b) fence.acq_rel.sys + (a)", k_pingpong<PP_FENCE>, 1, 8},
      {"(c) Simple 512 thr x 16 B + flag", k_pingpong<PP_SIMPLE>, THREADS, THREADS * 16},
      {"(d) LL 512 x 16 B lines (half data)", k_pingpong<PP_LL>, THREADS, THREADS * 16}};
  for (auto& x : v) {
    pp_run(g, x.k, x.threads, PP_ITERS / 10); /* warm-up */
    double us = 0;
    for (int r = 0; r < 3; r++) us += pp_run(g, x.k, x.threads, PP_ITERS) / 3;
    row(x.name, x.bytes, us);
  }
}

#define CU(x)                                                                                    \
  do {                                                                                           \
    CUresult r_ = (x);                                                                           \
    if (r_ != CUDA_SUCCESS) {                                                                    \
      const char* s_ = "?";                                                                      \
      cuGetErrorString(r_, &s_);                                                                 \
      fprintf(stderr, "mkccl-gpu-micro: %s:%d: %s: %s\n", __FILE__, __LINE__, #x, s_);          \
      exit(1);                                                                                   \
    }                                                                                            \
  } while (0)

/* BIG bytes on GPU1 from cuMemCreate, mapped for both GPUs to read and write. */
static char* vmm_alloc_on_gpu1(void) {
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 1;
  size_t gran = 0;
  CU(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
  size_t size = (BIG + gran - 1) / gran * gran;
  CUmemGenericAllocationHandle h;
  CU(cuMemCreate(&h, size, &prop, 0));
  CUdeviceptr p;
  CU(cuMemAddressReserve(&p, size, gran, 0, 0));
  CU(cuMemMap(p, size, 0, h, 0));
  CUmemAccessDesc acc[2] = {};
  for (int d = 0; d < 2; d++) {
    acc[d].location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    acc[d].location.id = d;
    acc[d].flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  }
  CU(cuMemSetAccess(p, size, acc, 2));
  printf("# vmm: %zu bytes on GPU1, granularity %zu\n", size, gran);
  return (char*)p;
}

static void test_vmm(gpus& g) {
  char* vbuf = vmm_alloc_on_gpu1();
  CK(cudaSetDevice(1));
  CK(cudaMemset(vbuf, 0, BIG));
  CK(cudaDeviceSynchronize());
  header("vmm", "mk_copy on GPU0 writing to GPU1: cudaMalloc vs cuMemCreate memory; 5 reps after 1 warm-up");
  struct { const char* name; char* dst; char* dst1; } place[4] = {
      {"peer cudaMalloc", g.buf1, nullptr},
      {"peer cuMem", vbuf, nullptr},
      {"peer cudaMalloc+local", g.buf1, g.dst0},
      {"peer cuMem+local", vbuf, g.dst0}};
  for (auto& p : place)
    for (int nb : {16, 24, 32, 48, 64}) {
      double us = time_gpu0(g, 1, 5, [&] { k_copy<<<nb, THREADS, 0, g.s[0]>>>(g.src0, p.dst, p.dst1, BIG); });
      char cfg[64];
      snprintf(cfg, sizeof cfg, "%s nb=%d", p.name, nb);
      row(cfg, BIG, us);
    }
}

static void on_alarm(int) {
  static const char m[] = "mkccl-gpu-micro: host watchdog: still running after 240 s, giving up\n";
  ssize_t r = write(2, m, sizeof m - 1);
  (void)r;
  _exit(4);
}

int main(int argc, char** argv) {
  static const char* names[] = {"copy", "reduce", "slice", "pingpong", "vmm"};
  bool want[5] = {argc == 1, argc == 1, argc == 1, argc == 1, argc == 1};
  for (int i = 1; i < argc; i++) {
    int k = 0;
    while (k < 5 && strcmp(argv[i], names[k])) k++;
    if (k == 5) {
      fprintf(stderr, "usage: %s [copy|reduce|slice|pingpong|vmm]...  (default: all)\n", argv[0]);
      return 1;
    }
    want[k] = true;
  }
  signal(SIGALRM, on_alarm);
  alarm(240); /* the device spins are bounded; this bounds everything else */

  int n = 0;
  cudaError_t ce = cudaGetDeviceCount(&n);
  if (ce != cudaSuccess || n < 2) {
    fprintf(stderr, "mkccl-gpu-micro: needs 2 GPUs, found %d (%s)\n", ce == cudaSuccess ? n : 0,
            cudaGetErrorString(ce));
    return 2;
  }
  int p01 = 0, p10 = 0;
  CK(cudaDeviceCanAccessPeer(&p01, 0, 1));
  CK(cudaDeviceCanAccessPeer(&p10, 1, 0));
  if (!p01 || !p10) {
    fprintf(stderr, "mkccl-gpu-micro: GPUs 0 and 1 have no peer access (0->1: %d, 1->0: %d)\n", p01, p10);
    return 2;
  }
  gpus g;
  for (int d = 0; d < 2; d++) {
    CK(cudaSetDevice(d));
    cudaError_t e = cudaDeviceEnablePeerAccess(1 - d, 0);
    if (e == cudaErrorPeerAccessAlreadyEnabled) {
      cudaGetLastError();
    } else if (e != cudaSuccess) {
      fprintf(stderr, "mkccl-gpu-micro: enabling peer access %d->%d: %s\n", d, 1 - d, cudaGetErrorString(e));
      return 2;
    }
    CK(cudaStreamCreateWithFlags(&g.s[d], cudaStreamNonBlocking));
    CK(cudaMalloc(&g.flag[d], 256));
    CK(cudaMalloc(&g.pay[d], THREADS * sizeof(uint4)));
    cudaDeviceProp pr;
    CK(cudaGetDeviceProperties(&pr, d));
    printf("# GPU%d: %s, %d SMs, bus %02x:%02x\n", d, pr.name, pr.multiProcessorCount, pr.pciBusID, pr.pciDeviceID);
  }
  int rank = 0, atom = 0;
  CK(cudaDeviceGetP2PAttribute(&rank, cudaDevP2PAttrPerformanceRank, 0, 1));
  CK(cudaDeviceGetP2PAttribute(&atom, cudaDevP2PAttrNativeAtomicSupported, 0, 1));
  printf("# P2P 0->1: performance rank %d, native atomics %d\n", rank, atom);

  /* Buffers zeroed: defined values (no NaNs in the float sums), pages touched. */
  CK(cudaSetDevice(1));
  CK(cudaMalloc(&g.buf1, BIG));
  CK(cudaMemset(g.buf1, 0, BIG));
  CK(cudaSetDevice(0));
  CK(cudaMalloc(&g.src0, BIG));
  CK(cudaMalloc(&g.dst0, BIG));
  CK(cudaMalloc(&g.aux0, BIG));
  CK(cudaMemset(g.src0, 0, BIG));
  CK(cudaMemset(g.dst0, 0, BIG));
  CK(cudaMemset(g.aux0, 0, BIG));
  CK(cudaEventCreate(&g.t0));
  CK(cudaEventCreate(&g.t1));
  CK(cudaHostAlloc(&g.err, sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable));
  *g.err = 0;
  CK(cudaDeviceSynchronize());

  if (want[0]) test_copy(g);
  if (want[1]) test_reduce(g);
  if (want[2]) test_slice(g);
  if (want[3]) test_pingpong(g);
  if (want[4]) test_vmm(g);
  for (int d = 0; d < 2; d++) {
    CK(cudaSetDevice(d));
    CK(cudaDeviceSynchronize());
  }
  check_err(g, "end");
  printf("\n# done\n");
  return 0;
}
