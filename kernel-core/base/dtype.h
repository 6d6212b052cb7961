/* Element types, for the core and the host executor: sizes and the software conversions of half,
 * bfloat16 and both fp8 formats (round to nearest even; fp8 saturates to the
 * largest finite value as CUDA's default conversion does). */
#ifndef MKCCL_BASE_DTYPE_H
#define MKCCL_BASE_DTYPE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "device/common/work.h"
#include "nccl.h"

/* Inline: every call checks and plans with it (four times per small AllReduce). */
static inline size_t host_type_size(ncclDataType_t type) { return (size_t)mk_type_size((int)type); }

/* An element's bits, read where a device-resident PreMulSum scalar lives
 * (on a host communicator, host memory). */
static inline uint64_t host_scalar_load(const void* p, int type) {
  uint64_t bits = 0;
  memcpy(&bits, p, host_type_size((ncclDataType_t)type));
  return bits;
}

float host_half_to_float(uint16_t h);
uint16_t host_float_to_half(float f);
float host_bf16_to_float(uint16_t b);
uint16_t host_float_to_bf16(float f);
float host_e4m3_to_float(uint8_t v);
uint8_t host_float_to_e4m3(float f);
float host_e5m2_to_float(uint8_t v);
uint8_t host_float_to_e5m2(float f);

#endif
