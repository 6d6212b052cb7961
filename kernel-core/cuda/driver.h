/* The CUDA driver, found at run time and never required.
 *
 * libcuda.so.1 is opened with dlopen on first use; entry points come through
 * cuGetProcAddress (falling back to dlsym), into a table of pointers typed
 * here, so the core builds without cuda.h. No driver means "host only": not
 * an error, logged once at INFO. The values below are the CUDA driver API's
 * (checked against cuda.h of CUDA 13). */
#ifndef MKCCL_CUDA_DRIVER_H
#define MKCCL_CUDA_DRIVER_H

#include <stddef.h>
#include <stdint.h>

#include "nccl.h"

typedef int cu_result_t;                  /* CUresult */
typedef int cu_device_t;                  /* CUdevice */
typedef struct cu_ctx_st* cu_context_t;   /* CUcontext */
typedef unsigned long long cu_deviceptr_t; /* CUdeviceptr */

#define CUDA_DRV_SUCCESS 0
#define CUDA_DRV_ERROR_NO_DEVICE 100
#define CUDA_DRV_ATTR_PCI_BUS_ID 33
#define CUDA_DRV_ATTR_PCI_DEVICE_ID 34
#define CUDA_DRV_ATTR_PCI_DOMAIN_ID 50
#define CUDA_DRV_ATTR_CC_MAJOR 75
#define CUDA_DRV_ATTR_CC_MINOR 76
#define CUDA_DRV_POINTER_ATTR_MEMORY_TYPE 2
#define CUDA_DRV_MEMORYTYPE_HOST 1
#define CUDA_DRV_MEMORYTYPE_DEVICE 2
#define CUDA_DRV_MEMORYTYPE_ARRAY 3
#define CUDA_DRV_MEMORYTYPE_UNIFIED 4

/* The ABI our pointer types describe: requested from cuGetProcAddress. */
#define CUDA_DRV_ABI_VERSION 12000

typedef struct {
  int driverVersion;  /* cuDriverGetVersion, e.g. 12040 */
  int viaProcAddress; /* 1: entry points came from cuGetProcAddress; 0: dlsym */
  cu_result_t (*init)(unsigned int flags);
  cu_result_t (*driver_get_version)(int* version);
  cu_result_t (*device_get_count)(int* count);
  cu_result_t (*device_get)(cu_device_t* dev, int ordinal);
  cu_result_t (*device_get_pci_bus_id)(char* busId, int len, cu_device_t dev);
  cu_result_t (*device_get_attribute)(int* value, int attrib, cu_device_t dev);
  cu_result_t (*device_get_name)(char* name, int len, cu_device_t dev);
  cu_result_t (*ctx_get_current)(cu_context_t* ctx);
  cu_result_t (*ctx_get_device)(cu_device_t* dev);
  cu_result_t (*pointer_get_attribute)(void* data, int attribute, cu_deviceptr_t ptr);
  cu_result_t (*device_can_access_peer)(int* canAccess, cu_device_t dev, cu_device_t peer);
  cu_result_t (*get_error_string)(cu_result_t res, const char** text); /* optional: may be NULL */
} cuda_driver_t;

/* Open the driver once (thread-safe); later calls return the cached result.
 * ncclSuccess when the question is settled, driver or not; ncclSystemError
 * only when a driver library was found but is unusable (entry point missing). */
ncclResult_t cuda_driver_load(void);
/* 1 when the driver is loaded and initialised (loads it on first call). */
int cuda_driver_available(void);
/* The entry points, or NULL when no driver. */
const cuda_driver_t* cuda_driver(void);
/* Why there is no driver ("" when there is one). */
const char* cuda_driver_reason(void);

/* The driver's text for a result code ("CUDA error N" without one). */
const char* cuda_result_str(cu_result_t res);

/* 1 when ptr is device (or managed) memory; 0 for host memory or no driver. */
int cuda_pointer_is_device(const void* ptr);
/* Number of CUDA devices; 0 when no driver. */
int cuda_device_count(void);
/* "0000:3b:00.0" (lower case, NCCL's form) of CUDA device dev. */
ncclResult_t cuda_device_bus_id(int dev, char* busId, int len);
/* Compute capability as major*10+minor (90 for sm_90). */
ncclResult_t cuda_device_sm(int dev, int* sm);
/* Any other entry point by name (cuGetProcAddress, then dlsym); NULL when
 * absent or without a driver. */
void* cuda_driver_symbol(const char* name);
/* An entry point's name and the table slot it fills. */
typedef struct {
  const char* name;
  void** slot;
} cuda_symbol_need_t;
/* Fills every slot with cuda_driver_symbol: 0 when all are found, else -1
 * with the first missing name in missing. */
int cuda_driver_symbols(const cuda_symbol_need_t* need, size_t n, char* missing, size_t missingLen);

/* The device of the calling thread's current context. */
ncclResult_t cuda_current_device(int* dev);

#endif
