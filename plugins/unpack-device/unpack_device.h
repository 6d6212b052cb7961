/* unpack-device: the UNPACK net device type (docs/UNPACK.md), version 0x7.
 *
 * Host side (C): the handle hooks of mkcclNetDevice_v1 and the CPU unpack
 * the host executor runs; device side (unpack_device.cu): the same unpack
 * for the GPU, shipped as LTO-IR inside this library and linked with the
 * core's kernels at run time (docs/UNPACK.md). */
#ifndef UNPACK_DEVICE_H
#define UNPACK_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "net-device/mkccl_net_device_v1.h"
#include "net-device/mkccl_unpack_v7.h"

/* The version this build reports; a test build overrides it to check that
 * the core refuses anything but 0x7. */
#ifndef UNPACK_DEVICE_REPORTED_VERSION
#define UNPACK_DEVICE_REPORTED_VERSION MKCCL_UNPACK_VERSION
#endif

/* The widest unit (16, 8, 4, 2 or 1 bytes) both addresses are aligned to. */
int unpack_align_class(const void* src, const void* dst);

/* One page: len/16*16 bytes in units of the widest alignment, then the
 * len%16 tail bytes one by one (the device code's split). */
void unpack_copy_page(char* dst, const char* src, uint32_t len);

/* The receive at the handle's head into dst (maxBytes of room): every page
 * of cnt[head % depth]; head advances. ncclInternalError when a page falls
 * outside dst or cnt is out of range (nothing advanced then). */
ncclResult_t unpack_host_unpack(mkcclUnpackHandle_v7* h, char* dst, size_t maxBytes, size_t* bytes);

/* The LTO-IR of the device side (unpack_device_code.c); ltoir NULL without nvcc. */
const mkcclNetDeviceCode_v1* unpack_device_code(void);

/* Logging through the core's services once bound (unpack_device_plugin.c). */
void unpack_device_warn(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
