/* gpu-memory: a plugin that claims NCCL_PTR_CUDA must move GPU memory.
 * Role B registers a cuMemAlloc'd buffer with NCCL_PTR_CUDA and isends from
 * it; role A registers one and irecvs into it, then iflushes it (the request,
 * if any, must complete) and copies it back to check every byte. Skipped when
 * the plugin does not claim CUDA pointers, or this machine has no CUDA driver
 * or GPU (the kit finds libcuda.so.1 at run time, as the core does). */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netcheck.h"

#define NC_GPU_BYTES (1 << 20)
#define NC_GPU_TAG 11
#define NC_GPU_SEED 0x6d6b

typedef int nc_cu_res_t;
typedef unsigned long long nc_cu_dptr_t;

typedef struct {
  nc_cu_res_t (*init)(unsigned flags);
  nc_cu_res_t (*deviceGetCount)(int* n);
  nc_cu_res_t (*deviceGet)(int* dev, int ordinal);
  nc_cu_res_t (*primaryCtxRetain)(void** ctx, int dev);
  nc_cu_res_t (*ctxSetCurrent)(void* ctx);
  nc_cu_res_t (*memAlloc)(nc_cu_dptr_t* p, size_t bytes);
  nc_cu_res_t (*memFree)(nc_cu_dptr_t p);
  nc_cu_res_t (*memcpyHtoD)(nc_cu_dptr_t dst, const void* src, size_t bytes);
  nc_cu_res_t (*memcpyDtoH)(void* dst, nc_cu_dptr_t src, size_t bytes);
  nc_cu_res_t (*memsetD8)(nc_cu_dptr_t dst, unsigned char v, size_t n);
} nc_cuda_t;

/* The driver and a context on GPU 0; NULL and *why when there is none. */
static const nc_cuda_t* nc_cuda_open(const char** why) {
  static nc_cuda_t cu;
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    *why = "no CUDA driver (libcuda.so.1) on this machine";
    return NULL;
  }
#define NC_SYM(field, name) *(void**)&cu.field = dlsym(lib, name)
  NC_SYM(init, "cuInit");
  NC_SYM(deviceGetCount, "cuDeviceGetCount");
  NC_SYM(deviceGet, "cuDeviceGet");
  NC_SYM(primaryCtxRetain, "cuDevicePrimaryCtxRetain");
  NC_SYM(ctxSetCurrent, "cuCtxSetCurrent");
  NC_SYM(memAlloc, "cuMemAlloc_v2");
  NC_SYM(memFree, "cuMemFree_v2");
  NC_SYM(memcpyHtoD, "cuMemcpyHtoD_v2");
  NC_SYM(memcpyDtoH, "cuMemcpyDtoH_v2");
  NC_SYM(memsetD8, "cuMemsetD8_v2");
#undef NC_SYM
  int n = 0, dev = 0;
  void* ctx = NULL;
  if (!cu.init || !cu.deviceGetCount || !cu.deviceGet || !cu.primaryCtxRetain || !cu.ctxSetCurrent || !cu.memAlloc ||
      !cu.memFree || !cu.memcpyHtoD || !cu.memcpyDtoH || !cu.memsetD8) {
    *why = "the CUDA driver lacks an entry point the check needs";
    return NULL;
  }
  if (cu.init(0) != 0 || cu.deviceGetCount(&n) != 0 || n < 1) {
    *why = "the CUDA driver sees no GPU";
    return NULL;
  }
  if (cu.deviceGet(&dev, 0) != 0 || cu.primaryCtxRetain(&ctx, dev) != 0 || cu.ctxSetCurrent(ctx) != 0) {
    *why = "no CUDA context on GPU 0";
    return NULL;
  }
  return &cu;
}

/* Whether this role checks GPU memory; a skip line otherwise (both roles
 * decide alike: the same plugin, the same machine). */
static const nc_cuda_t* nc_gpu_begin(netcheck_role_t* r) {
  if (!(r->props.ptrSupport & NCCL_PTR_CUDA)) {
    netcheck_skip(r, "gpu", "the plugin does not claim NCCL_PTR_CUDA");
    return NULL;
  }
  const char* why = "";
  const nc_cuda_t* cu = nc_cuda_open(&why);
  if (!cu) netcheck_skip(r, "gpu", why);
  return cu;
}

static int nc_gpu_reg(netcheck_role_t* r, void* comm, nc_cu_dptr_t d, void** mh) {
  ncclResult_t res = r->plugin.net->regMr(comm, (void*)(uintptr_t)d, NC_GPU_BYTES, NCCL_PTR_CUDA, mh);
  return netcheck_check(r, res == ncclSuccess, "regMr-cuda", "regMr(%d bytes of cuMemAlloc'd memory, NCCL_PTR_CUDA) returned %d",
                        NC_GPU_BYTES, (int)res);
}

int netcheck_gpu_a(netcheck_role_t* r) {
  const nc_cuda_t* cu = nc_gpu_begin(r);
  if (!cu) return 0;
  const ncclNet_v12_t* net = r->plugin.net;
  nc_cu_dptr_t d = 0;
  if (cu->memAlloc(&d, NC_GPU_BYTES) != 0 || cu->memsetD8(d, 0, NC_GPU_BYTES) != 0)
    return !netcheck_check(r, 0, "gpu-alloc", "cuMemAlloc of %d bytes failed", NC_GPU_BYTES);
  void* rc = NULL;
  int ok = netcheck_pair_accept(r, &rc) == 0;
  void* mh = NULL;
  ok = ok && nc_gpu_reg(r, rc, d, &mh);
  if (ok) {
    void* data = (void*)(uintptr_t)d;
    size_t want = NC_GPU_BYTES;
    int tag = NC_GPU_TAG, got = -1;
    void* req = NULL;
    ncclResult_t res = netcheck_irecv(r, rc, 1, &data, &want, &tag, &mh, &req);
    int w = res == ncclSuccess ? netcheck_wait(r, req, &got, &res) : 1;
    ok = netcheck_check(r, w == 0 && got == NC_GPU_BYTES, "irecv-cuda", "%s (%d of %d bytes)",
                        w == 0 ? "receive into GPU memory completed" : w < 0 ? "not done before the deadline" : "failed",
                        got, NC_GPU_BYTES);
    if (ok && net->iflush) {
      void* freq = NULL;
      int size = got;
      res = net->iflush(rc, 1, &data, &size, &mh, &freq);
      int fw = res == ncclSuccess && freq ? netcheck_wait(r, freq, NULL, &res) : res == ncclSuccess ? 0 : 1;
      ok = netcheck_check(r, fw == 0, "iflush-cuda", "%s", fw == 0 ? (freq ? "flush request completed" : "nothing to flush (NULL request)")
                                                         : fw < 0 ? "flush not done before the deadline" : "iflush failed");
    }
    uint8_t* host = malloc(NC_GPU_BYTES);
    if (ok && host && cu->memcpyDtoH(host, d, NC_GPU_BYTES) == 0) {
      long bad = netcheck_verify(host, NC_GPU_BYTES, NC_GPU_SEED);
      ok = netcheck_check(r, bad < 0, "data-cuda", bad < 0 ? "GPU memory holds every byte sent" : "GPU memory differs from byte %ld on", bad);
    } else if (ok) {
      ok = netcheck_check(r, 0, "data-cuda", "could not read the GPU buffer back");
    }
    free(host);
  }
  if (netcheck_sync(r, 1) != 0) ok = netcheck_check(r, 0, "sync", "peer did not reach the end");
  if (mh) net->deregMr(rc, mh);
  if (rc) net->closeRecv(rc);
  cu->memFree(d);
  return ok ? 0 : -1;
}

int netcheck_gpu_b(netcheck_role_t* r) {
  const nc_cuda_t* cu = nc_gpu_begin(r);
  if (!cu) return 0;
  const ncclNet_v12_t* net = r->plugin.net;
  nc_cu_dptr_t d = 0;
  uint8_t* host = malloc(NC_GPU_BYTES);
  if (!host || cu->memAlloc(&d, NC_GPU_BYTES) != 0) {
    free(host);
    return !netcheck_check(r, 0, "gpu-alloc", "cuMemAlloc of %d bytes failed", NC_GPU_BYTES);
  }
  netcheck_fill(host, NC_GPU_BYTES, NC_GPU_SEED);
  int ok = cu->memcpyHtoD(d, host, NC_GPU_BYTES) == 0;
  free(host);
  void* sc = NULL;
  ok = ok && netcheck_pair_connect(r, &sc) == 0;
  void* mh = NULL;
  ok = ok && nc_gpu_reg(r, sc, d, &mh);
  if (ok) {
    void* req = NULL;
    ncclResult_t res = netcheck_isend(r, sc, (void*)(uintptr_t)d, NC_GPU_BYTES, NC_GPU_TAG, mh, &req);
    int w = res == ncclSuccess ? netcheck_wait(r, req, NULL, &res) : 1;
    ok = netcheck_check(r, w == 0, "isend-cuda", "%s", w == 0 ? "send from GPU memory completed" : w < 0 ? "not done before the deadline" : "failed");
  }
  if (netcheck_sync(r, 1) != 0) ok = netcheck_check(r, 0, "sync", "peer did not reach the end");
  if (mh) net->deregMr(sc, mh);
  if (sc) net->closeSend(sc);
  cu->memFree(d);
  return ok ? 0 : -1;
}
