/* GPU memory helpers of the API: ncclMemAlloc/ncclMemFree (device memory
 * through the driver) and buffer registration. Registration records the
 * range on the communicator (api/mem_reg.c); on host communicators the
 * planner lets a transport read a registered send buffer in place (PTR
 * mode), elsewhere transports copy through their own buffers. A transport
 * that registered a range with others (a net plugin) hears of its
 * deregistration.
 *
 * ncclMemAlloc makes VMM memory (cuMemCreate, exportable as a file
 * descriptor) where the device allows it, as NCCL does: windows of the
 * device API map such memory into their LSA peers (device/cuda/gpu_win.h).
 * Elsewhere it falls back to cuMemAlloc. A process with no GPU to use (no
 * CUDA driver, or no device), whose ranks are all host ranks, gets
 * shareable host memory (api/mem_host.c), which transport-shm peers read
 * in place. Where there is a GPU, ncclMemAlloc gives device memory whatever
 * the calling thread, as NCCL's does. */
#include <stdlib.h>

#include "api/api.h"
#include "api/mem_host.h"
#include "api/mem_reg.h"
#include "base/err.h"
#include "comm/comm.h"
#include "cuda/gpu.h"
#include "cuda/vmm.h"
#include "transport/transport.h"

/* `size` bytes of VMM memory on device `dev`, mapped readable and writable
 * there, at a range reserved for it. */
static ncclResult_t mem_vmm_alloc(const cuda_vmm_t* v, int dev, size_t size, void** ptr) {
  cu_mem_prop_t prop = cuda_vmm_prop(dev);
  size_t gran = 0;
  cu_result_t r = v->granularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
  if (r != CUDA_DRV_SUCCESS) return CU_FAIL("cuMemGetAllocationGranularity", r);
  size_t bytes = (size + gran - 1) / gran * gran;
  cu_mem_handle_t h;
  if ((r = v->create(&h, bytes, &prop, 0)) != CUDA_DRV_SUCCESS) return CU_FAIL("cuMemCreate", r);
  cu_deviceptr_t d = 0;
  ncclResult_t res = ncclSuccess;
  if ((r = v->address_reserve(&d, bytes, gran, 0, 0)) != CUDA_DRV_SUCCESS) {
    res = CU_FAIL("cuMemAddressReserve", r);
    goto release;
  }
  if ((r = v->map(d, bytes, 0, h, 0)) != CUDA_DRV_SUCCESS) {
    res = CU_FAIL("cuMemMap", r);
    goto unreserve;
  }
  cu_mem_access_t acc = {{CU_MEM_LOCATION_TYPE_DEVICE, dev}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
  if ((r = v->set_access(d, bytes, &acc, 1)) != CUDA_DRV_SUCCESS) {
    res = CU_FAIL("cuMemSetAccess", r);
    goto unmap;
  }
  v->release(h); /* the mapping holds the memory until ncclMemFree unmaps it */
  *ptr = (void*)(uintptr_t)d;
  return ncclSuccess;
unmap:
  v->unmap(d, bytes);
unreserve:
  v->address_free(d, bytes);
release:
  v->release(h);
  return res;
}

MK_API(ncclResult_t, MemAlloc, void** ptr, size_t size) {
  if (!ptr) return MK_FAIL(ncclInvalidArgument, "ncclMemAlloc: ptr is NULL");
  if (size == 0) return MK_FAIL(ncclInvalidArgument, "ncclMemAlloc: size is 0");
  if (comm_cuda_device_count() <= 0) return mem_host_alloc(size, ptr);
  const cuda_gpu_t* g = cuda_gpu();
  if (!g) return ncclInvalidUsage;
  int dev = -1;
  if (cuda_current_device(&dev) == ncclSuccess && cuda_vmm_fd_supported(dev)) {
    const cuda_vmm_t* v = cuda_vmm();
    if (v) return mem_vmm_alloc(v, dev, size, ptr);
  }
  cu_deviceptr_t d = 0;
  CU_CHECK(g->mem_alloc(&d, size));
  *ptr = (void*)(uintptr_t)d;
  return ncclSuccess;
}

MK_API(ncclResult_t, MemFree, void* ptr) {
  if (!ptr) return ncclSuccess;
  ncclResult_t hostRes;
  if (mem_host_free(ptr, &hostRes)) return hostRes;
  const cuda_gpu_t* g = cuda_gpu();
  if (!g) return ncclInvalidUsage;
  /* VMM memory (ncclMemAlloc's): its handle is found from the address. */
  const cuda_vmm_t* v = cuda_vmm();
  cu_mem_handle_t h;
  if (v && v->retain_handle(&h, ptr) == CUDA_DRV_SUCCESS) {
    cu_deviceptr_t base = 0;
    size_t bytes = 0;
    cu_result_t r = v->address_range(&base, &bytes, (cu_deviceptr_t)(uintptr_t)ptr);
    v->release(h); /* the reference retain_handle took */
    if (r != CUDA_DRV_SUCCESS) return CU_FAIL("cuMemGetAddressRange", r);
    CU_CHECK(v->unmap(base, bytes));
    CU_CHECK(v->address_free(base, bytes));
    return ncclSuccess;
  }
  CU_CHECK(g->mem_free((cu_deviceptr_t)(uintptr_t)ptr));
  return ncclSuccess;
}

MK_API(ncclResult_t, CommRegister, const ncclComm_t comm, void* buff, size_t size, void** handle) {
  const char* fn = "ncclCommRegister";
  MK_CHECK(comm_check_usable(comm, fn));
  if (!buff) return MK_FAIL(ncclInvalidArgument, "%s: buff is NULL", fn);
  if (!handle) return MK_FAIL(ncclInvalidArgument, "%s: handle is NULL", fn);
  if (size == 0) return MK_FAIL(ncclInvalidArgument, "%s: size is 0", fn);
  mem_reg_t* r = NULL;
  MK_CHECK(mem_reg_add(comm, buff, size, &r));
  *handle = r;
  return ncclSuccess;
}

MK_API(ncclResult_t, CommDeregister, const ncclComm_t comm, void* handle) {
  const char* fn = "ncclCommDeregister";
  MK_CHECK(comm_check(comm, fn));
  void* base = NULL;
  size_t size = 0;
  MK_CHECK(mem_reg_remove(comm, handle, &base, &size));
  /* What transports registered of it with others (a net plugin) goes too. */
  if (comm->dp.tr.ready) transport_set_mem_deregister(&comm->dp.tr.set, base, size);
  return ncclSuccess;
}
