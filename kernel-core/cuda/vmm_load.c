/* Resolving the VMM entry points, once, and what a device supports. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base/err.h"
#include "cuda/vmm.h"

static pthread_once_t vmm_once = PTHREAD_ONCE_INIT;
static cuda_vmm_t vmm_table;
static int vmm_ready;
static char vmm_missing[64];

static void vmm_load_once(void) {
  if (!cuda_driver_available()) return;
  const cuda_symbol_need_t need[] = {
      {"cuMemCreate", (void**)&vmm_table.create},
      {"cuMemRelease", (void**)&vmm_table.release},
      {"cuMemAddressReserve", (void**)&vmm_table.address_reserve},
      {"cuMemAddressFree", (void**)&vmm_table.address_free},
      {"cuMemMap", (void**)&vmm_table.map},
      {"cuMemUnmap", (void**)&vmm_table.unmap},
      {"cuMemSetAccess", (void**)&vmm_table.set_access},
      {"cuMemExportToShareableHandle", (void**)&vmm_table.export_handle},
      {"cuMemImportFromShareableHandle", (void**)&vmm_table.import_handle},
      {"cuMemGetAllocationGranularity", (void**)&vmm_table.granularity},
      {"cuMemRetainAllocationHandle", (void**)&vmm_table.retain_handle},
      {"cuMemGetAddressRange", (void**)&vmm_table.address_range},
  };
  if (cuda_driver_symbols(need, sizeof(need) / sizeof(need[0]), vmm_missing, sizeof(vmm_missing)) == 0)
    __atomic_store_n(&vmm_ready, 1, __ATOMIC_RELEASE);
}

const cuda_vmm_t* cuda_vmm(void) {
  pthread_once(&vmm_once, vmm_load_once);
  if (__atomic_load_n(&vmm_ready, __ATOMIC_ACQUIRE)) return &vmm_table;
  if (!cuda_driver_available())
    (void)MK_FAIL(ncclInvalidUsage, "device memory needs the CUDA driver, which is unavailable (%s)",
                  cuda_driver_reason());
  else
    (void)MK_FAIL(ncclSystemError, "the CUDA driver lacks %s (virtual memory management, driver 12.0 or newer)",
                  vmm_missing);
  return NULL;
}

int cuda_vmm_fd_supported(int dev) {
  const cuda_driver_t* d = cuda_driver();
  if (!d) return 0;
  pthread_once(&vmm_once, vmm_load_once);
  if (!__atomic_load_n(&vmm_ready, __ATOMIC_ACQUIRE)) return 0;
  cu_device_t cd;
  int vmm = 0, fd = 0;
  if (d->device_get(&cd, dev) != CUDA_DRV_SUCCESS) return 0;
  if (d->device_get_attribute(&vmm, CUDA_DRV_ATTR_VMM_SUPPORTED, cd) != CUDA_DRV_SUCCESS) return 0;
  if (d->device_get_attribute(&fd, CUDA_DRV_ATTR_HANDLE_TYPE_POSIX_FD_SUPPORTED, cd) != CUDA_DRV_SUCCESS) return 0;
  return vmm && fd;
}

cu_mem_prop_t cuda_vmm_prop(int dev) {
  cu_mem_prop_t p;
  memset(&p, 0, sizeof(p));
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = dev;
  return p;
}
