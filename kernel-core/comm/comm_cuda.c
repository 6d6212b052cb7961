/* Where the communicator asks about CUDA devices: the driver shim. A thread
 * with no current CUDA context (or a process without a driver) is a host
 * rank. */
#include <stdlib.h>

#include "comm/comm.h"
#include "cuda/driver.h"

int comm_cuda_device_count(void) { return cuda_device_count(); }

int comm_cuda_device_current(void) {
  if (!cuda_driver_available()) return -1;
  const cuda_driver_t* d = cuda_driver();
  cu_context_t ctx = NULL;
  if (d->ctx_get_current(&ctx) != CUDA_DRV_SUCCESS || !ctx) return -1;
  int dev = -1;
  return cuda_current_device(&dev) == ncclSuccess ? dev : -1;
}

/* "0000:3b:00.0" as one number (domain, bus, device, function digits), as
 * NCCL keeps it. */
int64_t comm_cuda_bus_id(int dev) {
  char busId[32];
  if (cuda_device_bus_id(dev, busId, sizeof(busId)) != ncclSuccess) return -1;
  int64_t v = 0;
  for (const char* p = busId; *p; p++) {
    char c = *p;
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d >= 0) v = v * 16 + d;
  }
  return v;
}
