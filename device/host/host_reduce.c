#include "host_reduce.h"

#include <string.h>

#include "device/common/work.h"
#include "base/dtype.h"

/* Integer arithmetic goes through the unsigned type so overflow wraps as on
 * the GPU instead of being undefined. One loop per op (the switch stays out
 * of the loop, so loops vectorize). */
#define RED_INT_LOOP(T, UT, EXPR)                                                                 \
  for (size_t i = 0; i < n; i++) {                                                                \
    T x = a[i], y = b[i];                                                                         \
    T v = (EXPR);                                                                                 \
    d1[i] = v;                                                                                    \
    if (d2) d2[i] = v;                                                                            \
  }
#define RED_INT(T, UT)                                                                            \
  static void red_##T(const host_redop_t* r, T* d1, T* d2, const T* a, const T* b, size_t n, int post) { \
    T div = (T)r->scalar;                                                                         \
    if (a && b) {                                                                                 \
      switch (r->op) {                                                                            \
        case MK_OP_PROD: RED_INT_LOOP(T, UT, (T)((UT)x * (UT)y)) break;                           \
        case MK_OP_MAX: RED_INT_LOOP(T, UT, x > y ? x : y) break;                                 \
        case MK_OP_MIN: RED_INT_LOOP(T, UT, x < y ? x : y) break;                                 \
        case MK_OP_PREMULSUM: RED_INT_LOOP(T, UT, (T)((UT)x + (UT)y * (UT)div)) break;            \
        default: RED_INT_LOOP(T, UT, (T)((UT)x + (UT)y)) break;                                   \
      }                                                                                           \
    } else {                                                                                      \
      for (size_t i = 0; i < n; i++) {                                                            \
        T v = b ? (r->op == MK_OP_PREMULSUM ? (T)((UT)b[i] * (UT)div) : b[i]) : a[i];             \
        d1[i] = v;                                                                                \
        if (d2) d2[i] = v;                                                                        \
      }                                                                                           \
    }                                                                                             \
    if (post && r->op == MK_OP_SUMPOSTDIV) {                                                      \
      for (size_t i = 0; i < n; i++) d1[i] = (T)(d1[i] / div);                                    \
      if (d2) memcpy(d2, d1, n * sizeof(T));                                                      \
    }                                                                                             \
  }

RED_INT(int8_t, uint8_t)
RED_INT(uint8_t, uint8_t)
RED_INT(int32_t, uint32_t)
RED_INT(uint32_t, uint32_t)
RED_INT(int64_t, uint64_t)
RED_INT(uint64_t, uint64_t)

/* Floating types: stored as S, computed as C (float for the narrow ones). */
#define RED_FLOAT(NAME, S, C, LOAD, STORE, SCALAR)                                                 \
  static void red_##NAME(const host_redop_t* r, S* d1, S* d2, const S* a, const S* b, size_t n, int post) { \
    C mul = SCALAR;                                                                               \
    (void)post;                                                                                   \
    if (a && b && r->op == MK_OP_SUM) { /* the hot path, kept simple so it vectorizes */          \
      if (d2) {                                                                                   \
        for (size_t i = 0; i < n; i++) d1[i] = d2[i] = STORE((C)(LOAD(a[i]) + LOAD(b[i])));       \
      } else {                                                                                    \
        for (size_t i = 0; i < n; i++) d1[i] = STORE((C)(LOAD(a[i]) + LOAD(b[i])));               \
      }                                                                                           \
      return;                                                                                     \
    }                                                                                             \
    for (size_t i = 0; i < n; i++) {                                                              \
      C v;                                                                                        \
      if (a && b) {                                                                               \
        C x = LOAD(a[i]), y = LOAD(b[i]);                                                         \
        switch (r->op) {                                                                          \
          case MK_OP_PROD: v = x * y; break;                                                      \
          case MK_OP_MAX: v = x > y ? x : y; break;                                               \
          case MK_OP_MIN: v = x < y ? x : y; break;                                               \
          case MK_OP_PREMULSUM: v = x + y * mul; break;                                           \
          default: v = x + y; break;                                                              \
        }                                                                                         \
      } else if (b) {                                                                             \
        v = r->op == MK_OP_PREMULSUM ? LOAD(b[i]) * mul : LOAD(b[i]);                             \
      } else {                                                                                    \
        v = LOAD(a[i]);                                                                           \
      }                                                                                           \
      S s = STORE(v);                                                                             \
      d1[i] = s;                                                                                  \
      if (d2) d2[i] = s;                                                                          \
    }                                                                                             \
  }

static float scalar_f32(uint64_t bits) {
  float f;
  uint32_t u = (uint32_t)bits;
  memcpy(&f, &u, 4);
  return f;
}
static double scalar_f64(uint64_t bits) {
  double d;
  memcpy(&d, &bits, 8);
  return d;
}
#define ID(x) (x)
RED_FLOAT(f32, float, float, ID, ID, scalar_f32(r->scalar))
RED_FLOAT(f64, double, double, ID, ID, scalar_f64(r->scalar))
RED_FLOAT(f16, uint16_t, float, host_half_to_float, host_float_to_half, host_half_to_float((uint16_t)r->scalar))
RED_FLOAT(bf16, uint16_t, float, host_bf16_to_float, host_float_to_bf16, host_bf16_to_float((uint16_t)r->scalar))
RED_FLOAT(e4m3, uint8_t, float, host_e4m3_to_float, host_float_to_e4m3, host_e4m3_to_float((uint8_t)r->scalar))
RED_FLOAT(e5m2, uint8_t, float, host_e5m2_to_float, host_float_to_e5m2, host_e5m2_to_float((uint8_t)r->scalar))

void host_reduce_copy(const host_redop_t* r, void* d1, void* d2, const void* a, const void* b, size_t n,
                      int post) {
  /* A plain copy needs no arithmetic. */
  int arith = (a && b) || (b && r->op == MK_OP_PREMULSUM) || (post && r->op == MK_OP_SUMPOSTDIV);
  if (!arith) {
    const void* src = a ? a : b;
    size_t bytes = n * host_type_size((ncclDataType_t)r->type);
    if (d1 != src) memcpy(d1, src, bytes);
    if (d2 && d2 != src) memcpy(d2, src, bytes);
    return;
  }
  switch (r->type) {
    case ncclInt8: red_int8_t(r, d1, d2, a, b, n, post); break;
    case ncclUint8: red_uint8_t(r, d1, d2, a, b, n, post); break;
    case ncclInt32: red_int32_t(r, d1, d2, a, b, n, post); break;
    case ncclUint32: red_uint32_t(r, d1, d2, a, b, n, post); break;
    case ncclInt64: red_int64_t(r, d1, d2, a, b, n, post); break;
    case ncclUint64: red_uint64_t(r, d1, d2, a, b, n, post); break;
    case ncclFloat16: red_f16(r, d1, d2, a, b, n, post); break;
    case ncclFloat32: red_f32(r, d1, d2, a, b, n, post); break;
    case ncclFloat64: red_f64(r, d1, d2, a, b, n, post); break;
    case ncclBfloat16: red_bf16(r, d1, d2, a, b, n, post); break;
    case ncclFloat8e4m3: red_e4m3(r, d1, d2, a, b, n, post); break;
    case ncclFloat8e5m2: red_e5m2(r, d1, d2, a, b, n, post); break;
    default: break;
  }
}
