/* The CUDA device of a pointer, for FI_HMEM registrations. libcuda is
 * opened on first use so the plugin loads on hosts without CUDA. */
#include <dlfcn.h>
#include <pthread.h>

#include "net_ofi.h"

#define OFI_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL 9

typedef int (*net_ofi_cu_attr_fn)(void* data, int attribute, unsigned long long ptr);
static net_ofi_cu_attr_fn net_ofi_cu_attr;
static pthread_once_t net_ofi_cu_once = PTHREAD_ONCE_INIT;

static void net_ofi_cuda_open(void) {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib) net_ofi_cu_attr = (net_ofi_cu_attr_fn)dlsym(lib, "cuPointerGetAttribute");
}

int net_ofi_cuda_device(const void* ptr, int* device) {
  pthread_once(&net_ofi_cu_once, net_ofi_cuda_open);
  if (!net_ofi_cu_attr) return -1;
  int ordinal = -1;
  if (net_ofi_cu_attr(&ordinal, OFI_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, (unsigned long long)(uintptr_t)ptr) != 0)
    return -1;
  *device = ordinal;
  return 0;
}
