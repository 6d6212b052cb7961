/* The CUDA driver's virtual memory management entry points (cuMem*):
 * physical allocations that can be exported as a file descriptor, imported
 * by another process and mapped at an address the caller reserved. The
 * device API needs them (every LSA peer's window at a fixed stride from one
 * base); they are resolved apart from the GPU executor's table (gpu.h) so
 * a driver without them still runs collectives. Types and values are the
 * driver API's (cuda.h of CUDA 13), spelled here. */
#ifndef MKCCL_CUDA_VMM_H
#define MKCCL_CUDA_VMM_H

#include <stddef.h>

#include "cuda/driver.h"

typedef unsigned long long cu_mem_handle_t; /* CUmemGenericAllocationHandle */

#define CU_MEM_ALLOCATION_TYPE_PINNED 0x1
#define CU_MEM_LOCATION_TYPE_DEVICE 0x1
#define CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR 0x1
#define CU_MEM_ACCESS_FLAGS_PROT_READWRITE 0x3
#define CU_MEM_ALLOC_GRANULARITY_RECOMMENDED 0x1
#define CUDA_DRV_ATTR_VMM_SUPPORTED 102
#define CUDA_DRV_ATTR_HANDLE_TYPE_POSIX_FD_SUPPORTED 103

typedef struct {
  int type; /* CU_MEM_LOCATION_TYPE_* */
  int id;   /* the device ordinal */
} cu_mem_location_t;

typedef struct { /* CUmemAllocationProp */
  int type;
  int requestedHandleTypes;
  cu_mem_location_t location;
  void* win32HandleMetaData;
  unsigned char compressionType;
  unsigned char gpuDirectRDMACapable;
  unsigned short usage;
  unsigned char reserved[4];
} cu_mem_prop_t;

typedef struct { /* CUmemAccessDesc */
  cu_mem_location_t location;
  unsigned long long flags;
} cu_mem_access_t;

typedef struct {
  cu_result_t (*create)(cu_mem_handle_t* handle, size_t size, const cu_mem_prop_t* prop, unsigned long long flags);
  cu_result_t (*release)(cu_mem_handle_t handle);
  cu_result_t (*address_reserve)(cu_deviceptr_t* ptr, size_t size, size_t align, cu_deviceptr_t addr,
                                 unsigned long long flags);
  cu_result_t (*address_free)(cu_deviceptr_t ptr, size_t size);
  cu_result_t (*map)(cu_deviceptr_t ptr, size_t size, size_t offset, cu_mem_handle_t handle, unsigned long long flags);
  cu_result_t (*unmap)(cu_deviceptr_t ptr, size_t size);
  cu_result_t (*set_access)(cu_deviceptr_t ptr, size_t size, const cu_mem_access_t* desc, size_t count);
  cu_result_t (*export_handle)(void* shareable, cu_mem_handle_t handle, int type, unsigned long long flags);
  cu_result_t (*import_handle)(cu_mem_handle_t* handle, void* osHandle, int type);
  cu_result_t (*granularity)(size_t* granularity, const cu_mem_prop_t* prop, int option);
  cu_result_t (*retain_handle)(cu_mem_handle_t* handle, void* addr);
  cu_result_t (*address_range)(cu_deviceptr_t* base, size_t* size, cu_deviceptr_t ptr);
} cuda_vmm_t;

/* The table (loads the driver once); NULL with the last-error text set when
 * there is no driver or it lacks an entry point. */
const cuda_vmm_t* cuda_vmm(void);

/* 1 when device `dev` makes VMM allocations it can export as a POSIX file
 * descriptor (what windows need); 0 otherwise or without a driver. */
int cuda_vmm_fd_supported(int dev);

/* The properties of an exportable allocation on device `dev`. */
cu_mem_prop_t cuda_vmm_prop(int dev);

#endif
