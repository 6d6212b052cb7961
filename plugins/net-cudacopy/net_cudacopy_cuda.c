/* The CUDA driver, found at run time (dlopen of libcuda.so.1, as the core
 * finds it): a host without one still loads the plugin, and only
 * registrations of GPU memory fail. Copies run on a non-blocking stream of
 * the registration's context and are waited for: the proxy thread calls in
 * with no context of its own, and a copy on the legacy stream would wait
 * for the user's kernel, which waits for this very receive. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>

#include "net_cudacopy.h"

typedef int cu_res_t;
typedef unsigned long long cu_dptr_t;
#define CU_POINTER_ATTRIBUTE_CONTEXT 1
#define CU_STREAM_NON_BLOCKING 0x1

static struct {
  int loaded; /* 1 ok, -1 no driver */
  cu_res_t (*init)(unsigned flags);
  cu_res_t (*pointerGetAttribute)(void* data, int attribute, cu_dptr_t ptr);
  cu_res_t (*ctxPush)(void* ctx);
  cu_res_t (*ctxPop)(void** ctx);
  cu_res_t (*streamCreate)(void** stream, unsigned flags);
  cu_res_t (*streamDestroy)(void* stream);
  cu_res_t (*streamSynchronize)(void* stream);
  cu_res_t (*memcpyAsync)(cu_dptr_t dst, cu_dptr_t src, size_t bytes, void* stream);
} cu;
static pthread_once_t cu_once = PTHREAD_ONCE_INIT;

static void cudacopy_cuda_load(void) {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  cu.loaded = -1;
  if (!lib) return;
#define CU_SYM(field, name) *(void**)&cu.field = dlsym(lib, name)
  CU_SYM(init, "cuInit");
  CU_SYM(pointerGetAttribute, "cuPointerGetAttribute");
  CU_SYM(ctxPush, "cuCtxPushCurrent_v2");
  CU_SYM(ctxPop, "cuCtxPopCurrent_v2");
  CU_SYM(streamCreate, "cuStreamCreate");
  CU_SYM(streamDestroy, "cuStreamDestroy_v2");
  CU_SYM(streamSynchronize, "cuStreamSynchronize");
  CU_SYM(memcpyAsync, "cuMemcpyAsync");
#undef CU_SYM
  if (!cu.init || !cu.pointerGetAttribute || !cu.ctxPush || !cu.ctxPop || !cu.streamCreate || !cu.streamDestroy ||
      !cu.streamSynchronize || !cu.memcpyAsync || cu.init(0) != 0)
    return;
  cu.loaded = 1;
}

ncclResult_t cudacopy_cuda_attach(cudacopy_mr_t* mr) {
  pthread_once(&cu_once, cudacopy_cuda_load);
  if (cu.loaded != 1) {
    cudacopy_log(NCCL_LOG_WARN, "regMr(NCCL_PTR_CUDA): no usable CUDA driver (libcuda.so.1) in this process");
    return ncclSystemError;
  }
  void* ctx = NULL;
  cu_res_t r = cu.pointerGetAttribute(&ctx, CU_POINTER_ATTRIBUTE_CONTEXT, (cu_dptr_t)(uintptr_t)mr->base);
  if (r != 0 || !ctx) {
    cudacopy_log(NCCL_LOG_WARN, "regMr(NCCL_PTR_CUDA): %p is not CUDA memory (cuPointerGetAttribute error %d)",
                 (void*)mr->base, r);
    return ncclInvalidArgument;
  }
  if ((r = cu.ctxPush(ctx)) != 0) {
    cudacopy_log(NCCL_LOG_WARN, "regMr(NCCL_PTR_CUDA): cuCtxPushCurrent error %d", r);
    return ncclSystemError;
  }
  void* stream = NULL;
  r = cu.streamCreate(&stream, CU_STREAM_NON_BLOCKING);
  void* popped;
  cu.ctxPop(&popped);
  if (r != 0) {
    cudacopy_log(NCCL_LOG_WARN, "regMr(NCCL_PTR_CUDA): cuStreamCreate error %d", r);
    return ncclSystemError;
  }
  mr->cuCtx = ctx;
  mr->stream = stream;
  return ncclSuccess;
}

void cudacopy_cuda_detach(cudacopy_mr_t* mr) {
  if (!mr->stream) return;
  if (cu.ctxPush(mr->cuCtx) == 0) {
    void* popped;
    cu.streamDestroy(mr->stream);
    cu.ctxPop(&popped);
  }
  mr->stream = NULL;
}

static ncclResult_t cudacopy_cuda_copy(cudacopy_mr_t* mr, void* dst, const void* src, size_t size, const char* what) {
  if (size == 0) return ncclSuccess;
  cu_res_t r = cu.ctxPush(mr->cuCtx);
  if (r != 0) {
    cudacopy_log(NCCL_LOG_WARN, "%s: cuCtxPushCurrent error %d", what, r);
    return ncclSystemError;
  }
  r = cu.memcpyAsync((cu_dptr_t)(uintptr_t)dst, (cu_dptr_t)(uintptr_t)src, size, mr->stream);
  if (r == 0) r = cu.streamSynchronize(mr->stream);
  void* popped;
  cu.ctxPop(&popped);
  if (r != 0) {
    cudacopy_log(NCCL_LOG_WARN, "%s of %zu bytes: CUDA error %d", what, size, r);
    return ncclSystemError;
  }
  return ncclSuccess;
}

ncclResult_t cudacopy_cuda_dtoh(cudacopy_mr_t* mr, void* dst, const void* src, size_t size) {
  return cudacopy_cuda_copy(mr, dst, src, size, "isend: copy from GPU memory");
}

ncclResult_t cudacopy_cuda_htod(cudacopy_mr_t* mr, void* dst, const void* src, size_t size) {
  return cudacopy_cuda_copy(mr, dst, src, size, "test: copy into GPU memory");
}

ncclResult_t cudacopy_cuda_sync(cudacopy_mr_t* mr) {
  if (!mr->stream) return ncclSuccess;
  cu_res_t r = cu.ctxPush(mr->cuCtx);
  if (r == 0) {
    void* popped;
    r = cu.streamSynchronize(mr->stream);
    cu.ctxPop(&popped);
  }
  if (r != 0) {
    cudacopy_log(NCCL_LOG_WARN, "iflush: CUDA error %d", r);
    return ncclSystemError;
  }
  return ncclSuccess;
}
