/* Questions the host path and topology ask the CUDA driver. Each works, and
 * answers "no GPU", when there is no driver. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/err.h"
#include "cuda/driver.h"

const char* cuda_result_str(cu_result_t res) {
  static __thread char text[64];
  const cuda_driver_t* d = cuda_driver();
  const char* s = NULL;
  if (d && d->get_error_string && d->get_error_string(res, &s) == CUDA_DRV_SUCCESS && s) return s;
  snprintf(text, sizeof(text), "CUDA error %d", res);
  return text;
}

int cuda_pointer_is_device(const void* ptr) {
  const cuda_driver_t* d = cuda_driver();
  if (!d || !ptr) return 0;
  unsigned int memType = 0;
  /* Memory the driver does not know (plain malloc) answers an error: host. */
  if (d->pointer_get_attribute(&memType, CUDA_DRV_POINTER_ATTR_MEMORY_TYPE, (cu_deviceptr_t)(uintptr_t)ptr) !=
      CUDA_DRV_SUCCESS)
    return 0;
  return memType == CUDA_DRV_MEMORYTYPE_DEVICE || memType == CUDA_DRV_MEMORYTYPE_UNIFIED;
}

int cuda_device_count(void) {
  const cuda_driver_t* d = cuda_driver();
  int n = 0;
  if (!d || d->device_get_count(&n) != CUDA_DRV_SUCCESS || n < 0) return 0;
  return n;
}

static ncclResult_t cuda_device_lookup(int dev, cu_device_t* out) {
  const cuda_driver_t* d = cuda_driver();
  if (!d) return MK_FAIL(ncclInvalidUsage, "CUDA device %d asked for, but there is no CUDA driver (%s)", dev,
                         cuda_driver_reason());
  int n = cuda_device_count();
  if (dev < 0 || dev >= n) return MK_FAIL(ncclInvalidArgument, "CUDA device %d out of range (%d devices)", dev, n);
  cu_result_t r = d->device_get(out, dev);
  if (r != CUDA_DRV_SUCCESS) return MK_FAIL(ncclUnhandledCudaError, "cuDeviceGet(%d) failed: %s", dev, cuda_result_str(r));
  return ncclSuccess;
}

ncclResult_t cuda_device_bus_id(int dev, char* busId, int len) {
  if (!busId || len < 13) return MK_FAIL(ncclInvalidArgument, "cuda_device_bus_id: buffer too small (%d)", len);
  cu_device_t cu;
  MK_CHECK(cuda_device_lookup(dev, &cu));
  char text[64];
  cu_result_t r = cuda_driver()->device_get_pci_bus_id(text, sizeof(text), cu);
  if (r != CUDA_DRV_SUCCESS)
    return MK_FAIL(ncclUnhandledCudaError, "cuDeviceGetPCIBusId(%d) failed: %s", dev, cuda_result_str(r));
  text[sizeof(text) - 1] = '\0';
  if ((int)strlen(text) >= len) return MK_FAIL(ncclInvalidArgument, "bus id %s does not fit in %d bytes", text, len);
  for (char* c = text; *c; c++) *c = (char)tolower((unsigned char)*c);
  strcpy(busId, text);
  return ncclSuccess;
}

ncclResult_t cuda_device_sm(int dev, int* sm) {
  cu_device_t cu;
  MK_CHECK(cuda_device_lookup(dev, &cu));
  int major = 0, minor = 0;
  const cuda_driver_t* d = cuda_driver();
  cu_result_t r = d->device_get_attribute(&major, CUDA_DRV_ATTR_CC_MAJOR, cu);
  if (r == CUDA_DRV_SUCCESS) r = d->device_get_attribute(&minor, CUDA_DRV_ATTR_CC_MINOR, cu);
  if (r != CUDA_DRV_SUCCESS)
    return MK_FAIL(ncclUnhandledCudaError, "cuDeviceGetAttribute(compute capability, %d) failed: %s", dev,
                   cuda_result_str(r));
  *sm = major * 10 + minor;
  return ncclSuccess;
}

ncclResult_t cuda_current_device(int* dev) {
  const cuda_driver_t* d = cuda_driver();
  if (!d) return MK_FAIL(ncclInvalidUsage, "no CUDA driver (%s): no current device", cuda_driver_reason());
  cu_device_t cu;
  cu_result_t r = d->ctx_get_device(&cu);
  if (r != CUDA_DRV_SUCCESS)
    return MK_FAIL(ncclUnhandledCudaError, "cuCtxGetDevice failed: %s", cuda_result_str(r));
  *dev = (int)cu;
  return ncclSuccess;
}
