/* Resolving the GPU executor's driver entry points, once. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base/err.h"
#include "cuda/gpu.h"

static pthread_once_t gpu_once = PTHREAD_ONCE_INIT;
static cuda_gpu_t gpu_table;
static int gpu_ready;
static char gpu_missing[64];

static void gpu_load_once(void) {
  if (!cuda_driver_available()) return;
  const cuda_symbol_need_t need[] = {
      {"cuDevicePrimaryCtxRetain", (void**)&gpu_table.primary_ctx_retain},
      {"cuDevicePrimaryCtxRelease", (void**)&gpu_table.primary_ctx_release},
      {"cuCtxSetCurrent", (void**)&gpu_table.ctx_set_current},
      {"cuCtxEnablePeerAccess", (void**)&gpu_table.ctx_enable_peer_access},
      {"cuDeviceGetByPCIBusId", (void**)&gpu_table.device_get_by_pci_bus_id},
      {"cuModuleLoadData", (void**)&gpu_table.module_load_data},
      {"cuModuleUnload", (void**)&gpu_table.module_unload},
      {"cuModuleGetFunction", (void**)&gpu_table.module_get_function},
      {"cuLaunchKernel", (void**)&gpu_table.launch_kernel},
      {"cuMemAlloc", (void**)&gpu_table.mem_alloc},
      {"cuMemFree", (void**)&gpu_table.mem_free},
      {"cuMemHostAlloc", (void**)&gpu_table.mem_host_alloc},
      {"cuMemFreeHost", (void**)&gpu_table.mem_free_host},
      {"cuMemHostRegister", (void**)&gpu_table.mem_host_register},
      {"cuMemHostUnregister", (void**)&gpu_table.mem_host_unregister},
      {"cuMemHostGetDevicePointer", (void**)&gpu_table.mem_host_get_device_pointer},
      {"cuMemcpyHtoD", (void**)&gpu_table.memcpy_htod},
      {"cuMemcpyDtoH", (void**)&gpu_table.memcpy_dtoh},
      {"cuMemcpyAsync", (void**)&gpu_table.memcpy_async},
      {"cuMemsetD8", (void**)&gpu_table.memset_d8},
      {"cuMemGetAddressRange", (void**)&gpu_table.mem_get_address_range},
      {"cuStreamCreate", (void**)&gpu_table.stream_create},
      {"cuStreamDestroy", (void**)&gpu_table.stream_destroy},
      {"cuStreamSynchronize", (void**)&gpu_table.stream_synchronize},
      {"cuStreamWaitEvent", (void**)&gpu_table.stream_wait_event},
      {"cuStreamIsCapturing", (void**)&gpu_table.stream_is_capturing},
      {"cuThreadExchangeStreamCaptureMode", (void**)&gpu_table.thread_exchange_capture_mode},
      {"cuEventCreate", (void**)&gpu_table.event_create},
      {"cuEventRecord", (void**)&gpu_table.event_record},
      {"cuEventQuery", (void**)&gpu_table.event_query},
      {"cuEventSynchronize", (void**)&gpu_table.event_synchronize},
      {"cuEventDestroy", (void**)&gpu_table.event_destroy},
      {"cuIpcGetMemHandle", (void**)&gpu_table.ipc_get_mem_handle},
      {"cuIpcOpenMemHandle", (void**)&gpu_table.ipc_open_mem_handle},
      {"cuIpcCloseMemHandle", (void**)&gpu_table.ipc_close_mem_handle},
      {"cuFuncGetAttribute", (void**)&gpu_table.func_get_attribute},
      {"cuCtxGetLimit", (void**)&gpu_table.ctx_get_limit},
      {"cuCtxSetLimit", (void**)&gpu_table.ctx_set_limit},
      {"cuMemsetD8Async", (void**)&gpu_table.memset_d8_async},
      {"cuStreamQuery", (void**)&gpu_table.stream_query},
      {"cuLaunchHostFunc", (void**)&gpu_table.launch_host_func},
  };
  if (cuda_driver_symbols(need, sizeof(need) / sizeof(need[0]), gpu_missing, sizeof(gpu_missing)) == 0)
    __atomic_store_n(&gpu_ready, 1, __ATOMIC_RELEASE);
}

const cuda_gpu_t* cuda_gpu(void) {
  pthread_once(&gpu_once, gpu_load_once);
  if (__atomic_load_n(&gpu_ready, __ATOMIC_ACQUIRE)) return &gpu_table;
  if (!cuda_driver_available())
    (void)MK_FAIL(ncclInvalidUsage, "GPU buffers need the CUDA driver, which is unavailable (%s)", cuda_driver_reason());
  else
    (void)MK_FAIL(ncclSystemError, "the CUDA driver lacks %s, which the GPU executor needs (driver 12.0 or newer)",
            gpu_missing);
  return NULL;
}
