/* mkccl-unpack-bench [PLUGIN.so] [-b blocks] [-r receives] [-s bytes] [-n iters]
 *
 * The UNPACK device code alone (docs/UNPACK.md; docs/perf/one-gpu.md):
 * the core's call-site kernel linked at run time with a net-device plugin's
 * device code (nvJitLink, as a communicator does), pages already in device
 * memory, against a device-to-device cuMemcpy of the same bytes. Each block
 * owns one receive queue (as one channel does) and unpacks `receives`
 * receives of `bytes` each, 4 KiB pages in reversed order, their source
 * offsets skewed so that the widest unit both offsets allow is 16, 8, 4, 2
 * or 1 bytes. Every class is checked byte for byte before it is timed. Also
 * prints the link time with an empty cache and from the cache. A benchmark:
 * nothing asserts on time. Needs a GPU. */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/err.h"
#include "net-device/mkccl_net_device_v1.h"
#include "net-device/mkccl_unpack_v7.h"
#include "netdev/netdev_link.h"

#define PAGE MKCCL_UNPACK_PAGE_SIZE
#define STRIDE (PAGE + 16) /* room for the skew */
#define DEPTH MKCCL_UNPACK_QUEUE_DEPTH

#define CU(call)                                                             \
  do {                                                                       \
    CUresult r_ = (call);                                                    \
    if (r_ != CUDA_SUCCESS) {                                                \
      const char* s_ = NULL;                                                 \
      cuGetErrorString(r_, &s_);                                             \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, s_);     \
      exit(1);                                                               \
    }                                                                        \
  } while (0)

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static unsigned char pattern(size_t off) { return (unsigned char)(off * 131 + (off >> 12) * 7 + 1); }

typedef struct {
  int blocks, receives, bytes, iters;
  size_t slotBytes, bounceBytes; /* per block */
  CUdeviceptr bounce, dst, meta, handles, handlePtrs;
  CUfunction kernel;
  mkcclUnpackMeta_v7* hostMeta;
} bench_t;

/* Page i of every slot: source at perm(i) * STRIDE + skew in the slot,
 * destination i * PAGE; the skew leaves `align` the widest common unit. */
static size_t src_off(const bench_t* b, int slot, int page, int align) {
  int pages = b->bytes / PAGE;
  return (size_t)slot * b->slotBytes + (size_t)(pages - 1 - page) * STRIDE + (size_t)(align % 16);
}

static void setup_class(bench_t* b, int align) {
  int pages = b->bytes / PAGE;
  memset(b->hostMeta, 0, sizeof(*b->hostMeta));
  unsigned char* img = calloc(1, b->bounceBytes);
  if (!img) exit(1);
  for (int s = 0; s < DEPTH; s++) {
    for (int i = 0; i < pages; i++) {
      mkcclUnpackLoadMeta_v7* m = &b->hostMeta->mem[s][i];
      m->src_off = (uint32_t)src_off(b, s, i, align);
      m->len = PAGE;
      m->dst_off = (uint64_t)i * PAGE;
      for (int j = 0; j < PAGE; j++) img[m->src_off + j] = pattern((size_t)i * PAGE + (size_t)j);
    }
    b->hostMeta->cnt[s] = (uint64_t)pages;
  }
  CU(cuMemcpyHtoD(b->meta, b->hostMeta, sizeof(*b->hostMeta)));
  for (int k = 0; k < b->blocks; k++) CU(cuMemcpyHtoD(b->bounce + (size_t)k * b->bounceBytes, img, b->bounceBytes));
  free(img);
  /* Heads back to 0: every queue starts at slot 0. */
  for (int k = 0; k < b->blocks; k++) {
    mkcclUnpackHandle_v7 h = {(mkcclUnpackMeta_v7*)(uintptr_t)b->meta,
                              (void*)(uintptr_t)(b->bounce + (size_t)k * b->bounceBytes), 0};
    CU(cuMemcpyHtoD(b->handles + (size_t)k * sizeof(h), &h, sizeof(h)));
  }
}

static void launch(bench_t* b, int blocks) {
  long long blockStride = (long long)b->receives * b->bytes, stride = b->bytes;
  void* args[] = {&b->handlePtrs, &b->dst, &blockStride, &stride, &b->bytes, &b->receives};
  CU(cuLaunchKernel(b->kernel, (unsigned)blocks, 1, 1, 512, 1, 1, 0, NULL, args, NULL));
}

/* Every receive of the first and last block, byte for byte. */
static int check(bench_t* b) {
  size_t n = (size_t)b->receives * (size_t)b->bytes;
  unsigned char* out = malloc(n);
  int bad = 0;
  for (int k = 0; k < b->blocks && !bad; k += (b->blocks > 1 ? b->blocks - 1 : 1)) {
    CU(cuMemcpyDtoH(out, b->dst + (size_t)k * n, n));
    for (size_t i = 0; i < n && !bad; i++)
      if (out[i] != pattern(i % (size_t)b->bytes)) bad = 1;
  }
  free(out);
  return bad;
}

static double time_ms(bench_t* b, int memcpy, int blocks) {
  CUevent e0, e1;
  CU(cuEventCreate(&e0, 0));
  CU(cuEventCreate(&e1, 0));
  size_t bytes = (size_t)blocks * b->receives * b->bytes;
  for (int i = -2; i < b->iters; i++) { /* two warm-up rounds */
    if (i == 0) CU(cuEventRecord(e0, NULL));
    if (memcpy) CU(cuMemcpyDtoDAsync(b->dst, b->bounce, bytes, NULL));
    else launch(b, blocks);
  }
  CU(cuEventRecord(e1, NULL));
  CU(cuEventSynchronize(e1));
  float ms = 0;
  CU(cuEventElapsedTime(&ms, e0, e1));
  cuEventDestroy(e0);
  cuEventDestroy(e1);
  return ms / b->iters;
}

static void* link_kernels(const mkcclNetDeviceCode_v1* code, const char* name) {
  size_t coreSize = 0;
  const void* core = netdev_core_ltoir(&coreSize);
  if (!core) {
    fprintf(stderr, "mkccl-unpack-bench: this build has no device call site (built without nvcc)\n");
    exit(1);
  }
  netdev_link_input_t in[2] = {{core, coreSize, "mkccl-core"}, {code->ltoir, code->ltoirSize, name}};
  char dir[] = "/tmp/mkccl-unpack-bench-XXXXXX";
  if (!mkdtemp(dir)) exit(1);
  setenv("MKCCL_NET_DEVICE_CACHE_DIR", dir, 1);
  void* cubin = NULL;
  size_t size = 0;
  netdev_link_source_t src;
  double times[2];
  for (int i = 0; i < 2; i++) {
    free(cubin);
    double t0 = now_ms();
    if (netdev_link(in, 2, code->arch, NETDEV_LINK_LTO, &cubin, &size, &src) != ncclSuccess) {
      fprintf(stderr, "mkccl-unpack-bench: link failed: %s\n", err_last_get());
      exit(1);
    }
    times[i] = now_ms() - t0;
  }
  printf("# link of the call site with '%s': %.1f ms with an empty cache, %.2f ms from the cache (%zu bytes)\n", name,
         times[0], times[1], size);
  char cmd[128];
  snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return cubin;
}

int main(int argc, char** argv) {
  const char* lib = "libmkccl-unpack-device.so";
  bench_t b = {.blocks = 0, .receives = 4, .bytes = 1 << 20, .iters = 20};
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-b") && i + 1 < argc) b.blocks = atoi(argv[++i]);
    else if (!strcmp(argv[i], "-r") && i + 1 < argc) b.receives = atoi(argv[++i]);
    else if (!strcmp(argv[i], "-s") && i + 1 < argc) b.bytes = atoi(argv[++i]);
    else if (!strcmp(argv[i], "-n") && i + 1 < argc) b.iters = atoi(argv[++i]);
    else if (argv[i][0] != '-') lib = argv[i];
    else {
      fprintf(stderr, "usage: mkccl-unpack-bench [PLUGIN.so] [-b blocks] [-r receives] [-s bytes] [-n iters]\n");
      return 2;
    }
  }
  if (b.bytes < PAGE || b.bytes % PAGE || b.bytes > MKCCL_UNPACK_MAX_SLICE_SIZE || b.receives < 1 ||
      b.receives > DEPTH || b.iters < 1) {
    fprintf(stderr, "mkccl-unpack-bench: bytes must be a multiple of %d up to %d, receives 1..%d\n", PAGE,
            MKCCL_UNPACK_MAX_SLICE_SIZE, DEPTH);
    return 2;
  }
  void* h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  const mkcclNetDevice_v1* d = h ? dlsym(h, MKCCL_NET_DEVICE_SYMBOL_V1) : NULL;
  const mkcclNetDeviceCode_v1* code = d && d->deviceCode ? d->deviceCode() : NULL;
  if (!code || !code->ltoir) {
    fprintf(stderr, "mkccl-unpack-bench: %s: no net-device plugin with device code (%s)\n", lib, h ? "" : dlerror());
    return 1;
  }
  CU(cuInit(0));
  CUdevice dev;
  CUcontext ctx;
  CU(cuDeviceGet(&dev, 0));
  CU(cuDevicePrimaryCtxRetain(&ctx, dev));
  CU(cuCtxSetCurrent(ctx));
  int sms = 0;
  CU(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
  if (b.blocks <= 0) b.blocks = sms;
  void* cubin = link_kernels(code, d->name);
  CUmodule mod;
  double t0 = now_ms();
  CU(cuModuleLoadData(&mod, cubin));
  CU(cuModuleGetFunction(&b.kernel, mod, "mkcclNetDevUnpackKernel"));
  printf("# module load %.1f ms; %d SMs\n", now_ms() - t0, sms);
  b.slotBytes = (size_t)(b.bytes / PAGE) * STRIDE + 16;
  b.bounceBytes = b.slotBytes * DEPTH;
  b.hostMeta = malloc(sizeof(*b.hostMeta));
  CU(cuMemAlloc(&b.bounce, b.bounceBytes * (size_t)b.blocks));
  CU(cuMemAlloc(&b.dst, (size_t)b.blocks * b.receives * b.bytes));
  CU(cuMemAlloc(&b.meta, sizeof(mkcclUnpackMeta_v7)));
  CU(cuMemAlloc(&b.handles, sizeof(mkcclUnpackHandle_v7) * (size_t)b.blocks));
  CU(cuMemAlloc(&b.handlePtrs, sizeof(void*) * (size_t)b.blocks));
  void** ptrs = malloc(sizeof(void*) * (size_t)b.blocks);
  for (int k = 0; k < b.blocks; k++) ptrs[k] = (void*)(uintptr_t)(b.handles + (size_t)k * sizeof(mkcclUnpackHandle_v7));
  CU(cuMemcpyHtoD(b.handlePtrs, ptrs, sizeof(void*) * (size_t)b.blocks));
  free(ptrs);
  printf("# %d blocks x %d receives x %d bytes (%d pages of %d, reversed), %d iterations, plugin '%s'\n", b.blocks,
         b.receives, b.bytes, b.bytes / PAGE, PAGE, b.iters, d->name);
  printf("# %-6s %8s %14s %14s %8s %6s\n", "align", "blocks", "unpack GB/s", "memcpy GB/s", "ratio", "check");
  int bad = 0;
  const int aligns[] = {16, 8, 4, 2, 1};
  for (int a = 0; a < 5; a++) {
    setup_class(&b, aligns[a]);
    CU(cuMemsetD8(b.dst, 0, (size_t)b.blocks * b.receives * b.bytes));
    launch(&b, b.blocks);
    CU(cuCtxSynchronize());
    int wrong = check(&b);
    bad |= wrong;
    const int counts[] = {b.blocks, 1};
    for (int c = 0; c < (aligns[a] == 16 ? 2 : 1); c++) {
      double gb = (double)counts[c] * b.receives * b.bytes / 1e6;
      double tu = time_ms(&b, 0, counts[c]), tm = time_ms(&b, 1, counts[c]);
      printf("  %-6d %8d %14.1f %14.1f %8.2f %6s\n", aligns[a], counts[c], gb / tu, gb / tm, tm / tu,
             wrong ? "WRONG" : "ok");
    }
  }
  cuModuleUnload(mod);
  free(cubin);
  free(b.hostMeta);
  return bad;
}
