/* The kernels on the communicator's context: the built-in module, or the
 * kernels linked with a net device plugin's unpack; the full kernel and the
 * LL-only one loaded at init, and the context's stack limit set for them. */
#include <pthread.h>
#include <time.h>

#include "base/clock.h"
#include "base/err.h"
#include "comm/comm.h"
#include "device/cuda/gpu_exec_internal.h"

#ifdef MKCCL_HAVE_KERNELS
extern const char mk_cuda_fatbin[];

/* The built-in kernels, loaded once per context and kept (as NCCL's own
 * kernels are): a module loaded and unloaded per communicator left GPU
 * memory behind (test_gpu_fault's leak check sees it), and cost its load time at every init. A cached
 * module that no longer answers (its context was destroyed, and another
 * came with the same handle) is loaded again. */
#define GPU_MODULES_MAX 64
static struct {
  cu_context_t ctx;
  cu_module_t module;
} gpu_modules[GPU_MODULES_MAX];
static int gpu_nmodules;
static pthread_mutex_t gpu_modules_lock = PTHREAD_MUTEX_INITIALIZER;

/* *owned: the module is the caller's to unload (more contexts than slots). */
static cu_result_t gpu_builtin_module(const cuda_gpu_t* g, cu_context_t ctx, const void* image, cu_module_t* out,
                                      int* owned) {
  pthread_mutex_lock(&gpu_modules_lock);
  int slot = -1;
  for (int i = 0; i < gpu_nmodules; i++)
    if (gpu_modules[i].ctx == ctx) slot = i;
  cu_function_t fn;
  cu_result_t r = CUDA_DRV_SUCCESS;
  if (slot < 0 || g->module_get_function(&fn, gpu_modules[slot].module, MK_KERNEL_NAME) != CUDA_DRV_SUCCESS) {
    cu_module_t m;
    r = g->module_load_data(&m, image);
    if (r == CUDA_DRV_SUCCESS) {
      if (slot < 0 && gpu_nmodules < GPU_MODULES_MAX) slot = gpu_nmodules++;
      if (slot >= 0) gpu_modules[slot].ctx = ctx, gpu_modules[slot].module = m;
      *out = m;
      *owned = slot < 0;
    }
  } else {
    *out = gpu_modules[slot].module;
    *owned = 0;
  }
  pthread_mutex_unlock(&gpu_modules_lock);
  return r;
}

/* The kernel's local memory (stack) as the context's stack limit, set now:
 * a launch that needs more than the context has grows it first, and that
 * waits for every kernel of the context to finish, among them another
 * rank's kernel on this GPU that waits for ours (NCCL can set the limit at
 * init for the same reason: NCCL_SET_STACK_SIZE). */
static void gpu_stack_limit(gpu_exec_t* ex, const cuda_gpu_t* g, cu_function_t fn, int rank) {
  int local = 0;
  size_t cur = 0;
  if (g->func_get_attribute(&local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, fn) != CUDA_DRV_SUCCESS ||
      g->ctx_get_limit(&cur, CU_LIMIT_STACK_SIZE) != CUDA_DRV_SUCCESS)
    return;
  if ((size_t)local > cur) {
    cu_result_t r = g->ctx_set_limit(CU_LIMIT_STACK_SIZE, (size_t)local);
    if (r != CUDA_DRV_SUCCESS) MK_WARN("Rank %d: cuCtxSetLimit(stack %d bytes) failed: %s", rank, local, cuda_result_str(r));
  }
  ex->localBytes = local;
  ex->stackLimit = cur;
  MK_INFO(NCCL_INIT, "Rank %d: kernel local memory %d bytes per thread, context stack limit was %zu", rank, local, cur);
}
#endif

ncclResult_t gpu_exec_module_load(gpu_exec_t* ex, struct ncclComm* comm) {
#ifndef MKCCL_HAVE_KERNELS
  (void)ex, (void)comm;
  return MK_FAIL(ncclInvalidUsage, "this mkccl was built without the CUDA kernels (nvcc was not found at build time)");
#else
  const cuda_gpu_t* g = ex->g;
  ncclResult_t res;
  struct timespec l0;
  clock_gettime(CLOCK_MONOTONIC, &l0);
  /* Net receives that need a plugin's unpack: the kernels linked with its
   * device code at init (netdev_comm_open); else the built-in ones. */
  ex->unpack = comm->dp.net.devCubin != NULL;
  ex->ownModule = ex->unpack;
  cu_result_t r = ex->unpack ? g->module_load_data(&ex->module, comm->dp.net.devCubin)
                             : gpu_builtin_module(g, ex->ctx, mk_cuda_fatbin, &ex->module, &ex->ownModule);
  if (r != CUDA_DRV_SUCCESS)
    return CU_FAIL(ex->unpack ? "cuModuleLoadData (mkccl kernels linked with the net device code)"
                              : "cuModuleLoadData (mkccl kernels)", r);
  if ((r = g->module_get_function(&ex->kernel, ex->module, MK_KERNEL_NAME)) != CUDA_DRV_SUCCESS) {
    res = CU_FAIL("cuModuleGetFunction", r);
    goto fail;
  }
  /* Load the kernel now: with lazy module loading, a first launch loads it
   * and waits for the context's running kernels, and those (other ranks'
   * kernels on this GPU) wait for this one. */
  int regs = 0;
  if ((r = g->func_get_attribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, ex->kernel)) != CUDA_DRV_SUCCESS) {
    res = CU_FAIL("cuFuncGetAttribute (loading the kernel)", r);
    goto fail;
  }
  /* The LL-only kernel, loaded now too (same reason); without it every
   * item runs on the full kernel. Not with the net device's unpack: LL
   * runs over P2P lines only, never over a net connection. */
  int regsLL = 0;
  if (!ex->unpack &&
      (g->module_get_function(&ex->kernelLL, ex->module, MK_KERNEL_LL_NAME) != CUDA_DRV_SUCCESS ||
       g->func_get_attribute(&regsLL, CU_FUNC_ATTRIBUTE_NUM_REGS, ex->kernelLL) != CUDA_DRV_SUCCESS))
    ex->kernelLL = NULL;
  ex->loadMs = mk_ms_since(&l0);
  MK_INFO(NCCL_INIT, "Rank %d: mkccl kernel%s loaded on device %d in %.1f ms (%d registers per thread; LL kernel %s)",
          comm->rank, ex->unpack ? " (net device unpack)" : "", comm->cudaDev, ex->loadMs, regs,
          ex->kernelLL ? "loaded" : "off");
  if (ex->kernelLL) gpu_stack_limit(ex, g, ex->kernelLL, comm->rank);
  gpu_stack_limit(ex, g, ex->kernel, comm->rank);
  return ncclSuccess;
fail:
  gpu_exec_module_unload(ex);
  return res;
#endif
}

void gpu_exec_module_unload(gpu_exec_t* ex) {
  if (ex->ownModule) ex->g->module_unload(ex->module);
}
