/* Element-wise reductions of the aggregator (collnet_soft_reduce.h). */
#include "collnet_soft_reduce.h"

#include <stdint.h>

size_t collnet_soft_type_size(ncclDataType_t type) {
  switch (type) {
    case ncclInt8:
    case ncclUint8: return 1;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32: return 4;
    case ncclInt64:
    case ncclUint64:
    case ncclFloat64: return 8;
    default: return 0;
  }
}

int collnet_soft_supported(ncclDataType_t type, ncclRedOp_t op) {
  return collnet_soft_type_size(type) != 0 && (op == ncclSum || op == ncclProd || op == ncclMax || op == ncclMin);
}

#define CS_REDUCE_LOOP(T, EXPR)                         \
  do {                                                  \
    T* a = acc;                                         \
    const T* b = in;                                    \
    for (size_t i = 0; i < count; i++) a[i] = (EXPR);   \
  } while (0)

/* Integers wrap as NCCL's do: signed ones are added and multiplied as
 * their unsigned type U (signed overflow would be undefined). */
#define CS_REDUCE_TYPE(T, U)                                            \
  do {                                                                  \
    switch (op) {                                                       \
      case ncclSum: CS_REDUCE_LOOP(T, (T)((U)a[i] + (U)b[i])); return 0; \
      case ncclProd: CS_REDUCE_LOOP(T, (T)((U)a[i] * (U)b[i])); return 0; \
      case ncclMax: CS_REDUCE_LOOP(T, a[i] > b[i] ? a[i] : b[i]); return 0; \
      case ncclMin: CS_REDUCE_LOOP(T, a[i] < b[i] ? a[i] : b[i]); return 0; \
      default: return -1;                                               \
    }                                                                   \
  } while (0)

int collnet_soft_reduce(void* acc, const void* in, size_t count, ncclDataType_t type, ncclRedOp_t op) {
  switch (type) {
    case ncclInt8: CS_REDUCE_TYPE(int8_t, uint8_t);
    case ncclUint8: CS_REDUCE_TYPE(uint8_t, uint8_t);
    case ncclInt32: CS_REDUCE_TYPE(int32_t, uint32_t);
    case ncclUint32: CS_REDUCE_TYPE(uint32_t, uint32_t);
    case ncclInt64: CS_REDUCE_TYPE(int64_t, uint64_t);
    case ncclUint64: CS_REDUCE_TYPE(uint64_t, uint64_t);
    case ncclFloat32: CS_REDUCE_TYPE(float, float);
    case ncclFloat64: CS_REDUCE_TYPE(double, double);
    default: return -1;
  }
}
