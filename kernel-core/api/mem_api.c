/* GPU memory helpers of the API: ncclMemAlloc/ncclMemFree (device memory
 * through the driver) and buffer registration. Registration is lazy:
 * mkccl's transports copy through their own buffers, so a handle records
 * the range and later versions may use it for zero-copy. */
#include <stdlib.h>

#include "api/api.h"
#include "base/err.h"
#include "comm/comm.h"
#include "cuda/gpu.h"

typedef struct {
  uint64_t magic;
  struct ncclComm* comm;
  void* buff;
  size_t size;
} mem_reg_t;
#define MEM_REG_MAGIC 0x6d6b726567ull /* "mkreg" */

MK_API(ncclResult_t, MemAlloc, void** ptr, size_t size) {
  if (!ptr) return MK_FAIL(ncclInvalidArgument, "ncclMemAlloc: ptr is NULL");
  if (size == 0) return MK_FAIL(ncclInvalidArgument, "ncclMemAlloc: size is 0");
  const cuda_gpu_t* g = cuda_gpu();
  if (!g) return ncclInvalidUsage;
  cu_deviceptr_t d = 0;
  CU_CHECK(g->mem_alloc(&d, size));
  *ptr = (void*)(uintptr_t)d;
  return ncclSuccess;
}

MK_API(ncclResult_t, MemFree, void* ptr) {
  if (!ptr) return ncclSuccess;
  const cuda_gpu_t* g = cuda_gpu();
  if (!g) return ncclInvalidUsage;
  CU_CHECK(g->mem_free((cu_deviceptr_t)(uintptr_t)ptr));
  return ncclSuccess;
}

MK_API(ncclResult_t, CommRegister, const ncclComm_t comm, void* buff, size_t size, void** handle) {
  const char* fn = "ncclCommRegister";
  MK_CHECK(comm_check_usable(comm, fn));
  if (!buff) return MK_FAIL(ncclInvalidArgument, "%s: buff is NULL", fn);
  if (!handle) return MK_FAIL(ncclInvalidArgument, "%s: handle is NULL", fn);
  if (size == 0) return MK_FAIL(ncclInvalidArgument, "%s: size is 0", fn);
  mem_reg_t* r = malloc(sizeof(*r));
  if (!r) return MK_FAIL(ncclSystemError, "%s: out of memory", fn);
  *r = (mem_reg_t){MEM_REG_MAGIC, comm, buff, size};
  *handle = r;
  return ncclSuccess;
}

MK_API(ncclResult_t, CommDeregister, const ncclComm_t comm, void* handle) {
  const char* fn = "ncclCommDeregister";
  MK_CHECK(comm_check(comm, fn));
  mem_reg_t* r = handle;
  if (!r || r->magic != MEM_REG_MAGIC || r->comm != comm)
    return MK_FAIL(ncclInvalidArgument, "%s: handle %p was not registered with this communicator", fn, handle);
  r->magic = 0;
  free(r);
  return ncclSuccess;
}
