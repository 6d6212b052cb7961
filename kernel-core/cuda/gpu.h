/* The driver entry points the GPU executor needs, resolved on first use by
 * a GPU communicator (cuGetProcAddress, driver 12.0 or newer). Separate from
 * the base table (driver.h) so host-only processes and the topology never
 * depend on them. Types are the driver API's, spelled here. */
#ifndef MKCCL_CUDA_GPU_H
#define MKCCL_CUDA_GPU_H

#include <stddef.h>

#include "cuda/driver.h"

typedef struct cu_module_st* cu_module_t;
typedef struct cu_function_st* cu_function_t;
typedef struct CUstream_st* cu_stream_t; /* the same handle as cudaStream_t */
typedef struct cu_event_st* cu_event_t;
typedef struct {
  char reserved[64];
} cu_ipc_handle_t;

#define CU_MEMHOSTALLOC_PORTABLE 0x01
#define CU_MEMHOSTALLOC_DEVICEMAP 0x02
#define CU_MEMHOSTREGISTER_PORTABLE 0x01
#define CU_MEMHOSTREGISTER_DEVICEMAP 0x02
#define CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS 0x1
#define CU_EVENT_DISABLE_TIMING 0x2
#define CU_STREAM_NON_BLOCKING 0x1
#define CUDA_DRV_ERROR_NOT_READY 600
#define CUDA_DRV_ERROR_PEER_ACCESS_ALREADY_ENABLED 704
#define CUDA_DRV_ERROR_HOST_MEMORY_ALREADY_REGISTERED 712
#define CU_STREAM_CAPTURE_STATUS_NONE 0
#define CU_STREAM_CAPTURE_MODE_RELAXED 2
#define CUDA_DRV_POINTER_ATTR_DEVICE_ORDINAL 9

typedef struct {
  cu_result_t (*primary_ctx_retain)(cu_context_t* ctx, cu_device_t dev);
  cu_result_t (*primary_ctx_release)(cu_device_t dev);
  cu_result_t (*ctx_set_current)(cu_context_t ctx);
  cu_result_t (*ctx_enable_peer_access)(cu_context_t peer, unsigned int flags);
  cu_result_t (*device_get_by_pci_bus_id)(cu_device_t* dev, const char* busId);
  cu_result_t (*module_load_data)(cu_module_t* mod, const void* image);
  cu_result_t (*module_unload)(cu_module_t mod);
  cu_result_t (*module_get_function)(cu_function_t* fn, cu_module_t mod, const char* name);
  cu_result_t (*launch_kernel)(cu_function_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, unsigned shmem, cu_stream_t stream, void** params, void** extra);
  cu_result_t (*mem_alloc)(cu_deviceptr_t* ptr, size_t bytes);
  cu_result_t (*mem_free)(cu_deviceptr_t ptr);
  cu_result_t (*mem_host_alloc)(void** ptr, size_t bytes, unsigned int flags);
  cu_result_t (*mem_free_host)(void* ptr);
  cu_result_t (*mem_host_register)(void* ptr, size_t bytes, unsigned int flags);
  cu_result_t (*mem_host_unregister)(void* ptr);
  cu_result_t (*mem_host_get_device_pointer)(cu_deviceptr_t* dptr, void* ptr, unsigned int flags);
  cu_result_t (*memcpy_htod)(cu_deviceptr_t dst, const void* src, size_t bytes);
  cu_result_t (*memcpy_dtoh)(void* dst, cu_deviceptr_t src, size_t bytes);
  cu_result_t (*memcpy_async)(cu_deviceptr_t dst, cu_deviceptr_t src, size_t bytes, cu_stream_t stream);
  cu_result_t (*memset_d8)(cu_deviceptr_t dst, unsigned char value, size_t n);
  cu_result_t (*mem_get_address_range)(cu_deviceptr_t* base, size_t* size, cu_deviceptr_t ptr);
  cu_result_t (*stream_create)(cu_stream_t* stream, unsigned int flags);
  cu_result_t (*stream_destroy)(cu_stream_t stream);
  cu_result_t (*stream_synchronize)(cu_stream_t stream);
  cu_result_t (*stream_wait_event)(cu_stream_t stream, cu_event_t event, unsigned int flags);
  cu_result_t (*stream_is_capturing)(cu_stream_t stream, int* status);
  cu_result_t (*thread_exchange_capture_mode)(int* mode);
  cu_result_t (*event_create)(cu_event_t* event, unsigned int flags);
  cu_result_t (*event_record)(cu_event_t event, cu_stream_t stream);
  cu_result_t (*event_query)(cu_event_t event);
  cu_result_t (*event_synchronize)(cu_event_t event);
  cu_result_t (*event_destroy)(cu_event_t event);
  cu_result_t (*ipc_get_mem_handle)(cu_ipc_handle_t* handle, cu_deviceptr_t ptr);
  cu_result_t (*ipc_open_mem_handle)(cu_deviceptr_t* ptr, cu_ipc_handle_t handle, unsigned int flags);
  cu_result_t (*ipc_close_mem_handle)(cu_deviceptr_t ptr);
  cu_result_t (*func_get_attribute)(int* value, int attrib, cu_function_t fn);
  cu_result_t (*ctx_get_limit)(size_t* value, int limit);
  cu_result_t (*ctx_set_limit)(int limit, size_t value);
  cu_result_t (*memset_d8_async)(cu_deviceptr_t dst, unsigned char value, size_t n, cu_stream_t stream);
  cu_result_t (*stream_query)(cu_stream_t stream);
  /* A host function in stream order (captured into a graph as a host node). */
  cu_result_t (*launch_host_func)(cu_stream_t stream, void (*fn)(void*), void* arg);
} cuda_gpu_t;

#define CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES 3
#define CU_FUNC_ATTRIBUTE_NUM_REGS 4
#define CU_LIMIT_STACK_SIZE 0x00

/* The GPU table (loads the driver and the table once); NULL with the
 * last-error text set when there is no driver or an entry point is missing. */
const cuda_gpu_t* cuda_gpu(void);

/* A failed driver call: the error naming the call and the driver's text. */
#define CU_FAIL(call, res) MK_FAIL(ncclUnhandledCudaError, "CUDA %s failed: %d %s", (call), (int)(res), cuda_result_str(res))
#define CU_CHECK(expr)                                                           \
  do {                                                                           \
    cu_result_t cu_res_ = (expr);                                                \
    if (cu_res_ != CUDA_DRV_SUCCESS) return CU_FAIL(#expr, cu_res_);             \
  } while (0)

#endif
