/* A stand-in for libcuda.so.1 so the driver shim (and topology's GPU
 * discovery) can be tested on machines without a GPU: two devices, a
 * buffer that counts as device memory, and switches through the
 * environment (FAKE_CUDA_NO_PROC: cuGetProcAddress finds nothing;
 * FAKE_CUDA_INIT_FAIL: cuInit says no device). Built twice: once whole, once
 * (FAKE_CUDA_BROKEN) without cuDeviceCanAccessPeer. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT char fake_cuda_device_memory[4096];
EXPORT char fake_cuda_pinned_memory[4096];
EXPORT int fake_cuda_requested_version;

static const char* fake_bus_ids[] = {"0000:1B:00.0", "0000:3D:00.0"};

EXPORT int cuInit(unsigned int flags) {
  (void)flags;
  return getenv("FAKE_CUDA_INIT_FAIL") ? 100 : 0;
}
EXPORT int cuDriverGetVersion(int* v) {
  *v = 12040;
  return 0;
}
EXPORT int cuDeviceGetCount(int* n) {
  *n = 2;
  return 0;
}
EXPORT int cuDeviceGet(int* dev, int ordinal) {
  if (ordinal < 0 || ordinal > 1) return 101;
  *dev = ordinal;
  return 0;
}
EXPORT int cuDeviceGetPCIBusId(char* busId, int len, int dev) {
  if (dev < 0 || dev > 1) return 101;
  snprintf(busId, len, "%s", fake_bus_ids[dev]);
  return 0;
}
EXPORT int cuDeviceGetAttribute(int* value, int attrib, int dev) {
  (void)dev;
  if (attrib == 75) *value = 9;
  else if (attrib == 76) *value = 0;
  else return 1;
  return 0;
}
EXPORT int cuDeviceGetName(char* name, int len, int dev) {
  snprintf(name, len, "Fake GPU %d", dev);
  return 0;
}
EXPORT int cuCtxGetCurrent(void** ctx) {
  *ctx = NULL;
  return 0;
}
EXPORT int cuCtxGetDevice(int* dev) {
  *dev = 1;
  return 0;
}
EXPORT int cuPointerGetAttribute(void* data, int attribute, unsigned long long ptr) {
  uintptr_t p = (uintptr_t)ptr;
  if (attribute != 2) return 1;
  if (p >= (uintptr_t)fake_cuda_device_memory && p < (uintptr_t)fake_cuda_device_memory + sizeof(fake_cuda_device_memory)) {
    *(unsigned int*)data = 2;
    return 0;
  }
  if (p >= (uintptr_t)fake_cuda_pinned_memory && p < (uintptr_t)fake_cuda_pinned_memory + sizeof(fake_cuda_pinned_memory)) {
    *(unsigned int*)data = 1;
    return 0;
  }
  return 1; /* CUDA_ERROR_INVALID_VALUE: not memory the driver knows */
}
#ifndef FAKE_CUDA_BROKEN
EXPORT int cuDeviceCanAccessPeer(int* can, int dev, int peer) {
  *can = dev != peer;
  return 0;
}
#endif
EXPORT int cuGetErrorString(int res, const char** text) {
  *text = res == 100 ? "no CUDA-capable device is detected" : "fake error";
  return 0;
}

static const struct {
  const char* name;
  void* fn;
} fake_table[] = {
    {"cuInit", (void*)cuInit},
    {"cuDriverGetVersion", (void*)cuDriverGetVersion},
    {"cuDeviceGetCount", (void*)cuDeviceGetCount},
    {"cuDeviceGet", (void*)cuDeviceGet},
    {"cuDeviceGetPCIBusId", (void*)cuDeviceGetPCIBusId},
    {"cuDeviceGetAttribute", (void*)cuDeviceGetAttribute},
    {"cuDeviceGetName", (void*)cuDeviceGetName},
    {"cuCtxGetCurrent", (void*)cuCtxGetCurrent},
    {"cuCtxGetDevice", (void*)cuCtxGetDevice},
    {"cuPointerGetAttribute", (void*)cuPointerGetAttribute},
#ifndef FAKE_CUDA_BROKEN
    {"cuDeviceCanAccessPeer", (void*)cuDeviceCanAccessPeer},
#endif
    {"cuGetErrorString", (void*)cuGetErrorString},
};

EXPORT int cuGetProcAddress_v2(const char* symbol, void** pfn, int cudaVersion, unsigned long long flags, int* status) {
  (void)flags;
  fake_cuda_requested_version = cudaVersion;
  *pfn = NULL;
  if (!getenv("FAKE_CUDA_NO_PROC")) {
    for (size_t i = 0; i < sizeof(fake_table) / sizeof(fake_table[0]); i++)
      if (strcmp(symbol, fake_table[i].name) == 0) *pfn = fake_table[i].fn;
  }
  if (status) *status = *pfn ? 0 : 1;
  return *pfn ? 0 : 500;
}
