/* Host element conversions and the reduce kernel, for all 12 types and
 * every op, against values computed in double. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "device/common/work.h"
#include "device/host/host_reduce.h"
#include "base/dtype.h"

static double load(int type, const void* p, size_t i) {
  switch (type) {
    case ncclInt8: return ((const int8_t*)p)[i];
    case ncclUint8: return ((const uint8_t*)p)[i];
    case ncclInt32: return ((const int32_t*)p)[i];
    case ncclUint32: return ((const uint32_t*)p)[i];
    case ncclInt64: return (double)((const int64_t*)p)[i];
    case ncclUint64: return (double)((const uint64_t*)p)[i];
    case ncclFloat16: return host_half_to_float(((const uint16_t*)p)[i]);
    case ncclFloat32: return ((const float*)p)[i];
    case ncclFloat64: return ((const double*)p)[i];
    case ncclBfloat16: return host_bf16_to_float(((const uint16_t*)p)[i]);
    case ncclFloat8e4m3: return host_e4m3_to_float(((const uint8_t*)p)[i]);
    default: return host_e5m2_to_float(((const uint8_t*)p)[i]);
  }
}

static void store(int type, void* p, size_t i, double v) {
  switch (type) {
    case ncclInt8: ((int8_t*)p)[i] = (int8_t)v; break;
    case ncclUint8: ((uint8_t*)p)[i] = (uint8_t)v; break;
    case ncclInt32: ((int32_t*)p)[i] = (int32_t)v; break;
    case ncclUint32: ((uint32_t*)p)[i] = (uint32_t)v; break;
    case ncclInt64: ((int64_t*)p)[i] = (int64_t)v; break;
    case ncclUint64: ((uint64_t*)p)[i] = (uint64_t)v; break;
    case ncclFloat16: ((uint16_t*)p)[i] = host_float_to_half((float)v); break;
    case ncclFloat32: ((float*)p)[i] = (float)v; break;
    case ncclFloat64: ((double*)p)[i] = v; break;
    case ncclBfloat16: ((uint16_t*)p)[i] = host_float_to_bf16((float)v); break;
    case ncclFloat8e4m3: ((uint8_t*)p)[i] = host_float_to_e4m3((float)v); break;
    default: ((uint8_t*)p)[i] = host_float_to_e5m2((float)v); break;
  }
}

int main(void) {
  /* Conversions: exact values round-trip, rounding is to nearest even. */
  CHECK(host_half_to_float(host_float_to_half(1.5f)) == 1.5f);
  CHECK(host_half_to_float(host_float_to_half(65504.0f)) == 65504.0f);
  CHECK(isinf(host_half_to_float(host_float_to_half(70000.0f))));
  CHECK(host_half_to_float(host_float_to_half(ldexpf(1.0f, -24))) == ldexpf(1.0f, -24));
  CHECK(host_half_to_float(host_float_to_half(1.0f + ldexpf(1.0f, -11))) == 1.0f); /* tie to even */
  CHECK(host_bf16_to_float(host_float_to_bf16(3.0f)) == 3.0f);
  CHECK(host_bf16_to_float(host_float_to_bf16(1.0f + ldexpf(1.0f, -8))) == 1.0f);
  CHECK(host_e4m3_to_float(host_float_to_e4m3(448.0f)) == 448.0f);
  CHECK(host_e4m3_to_float(host_float_to_e4m3(1000.0f)) == 448.0f); /* saturates */
  CHECK(host_e4m3_to_float(host_float_to_e4m3(0.5f)) == 0.5f);
  CHECK(host_e4m3_to_float(host_float_to_e4m3(ldexpf(1.0f, -9))) == ldexpf(1.0f, -9)); /* smallest subnormal */
  CHECK(host_e4m3_to_float(host_float_to_e4m3(-13.0f)) == -13.0f);
  CHECK(host_e5m2_to_float(host_float_to_e5m2(57344.0f)) == 57344.0f);
  CHECK(host_e5m2_to_float(host_float_to_e5m2(-3.0f)) == -3.0f);
  for (int v = 0; v < 256; v++) { /* every finite fp8 value round-trips */
    float f = host_e4m3_to_float((uint8_t)v);
    if (!isnan(f)) CHECK_EQ_INT(host_float_to_e4m3(f), v == 0x80 ? 0x80 : v);
    f = host_e5m2_to_float((uint8_t)v);
    if (!isnan(f) && !isinf(f)) CHECK_EQ_INT(host_float_to_e5m2(f), v);
  }

  enum { N = 37 };
  for (int type = 0; type < ncclNumTypes; type++) {
    size_t ts = host_type_size((ncclDataType_t)type);
    CHECK(ts > 0);
    for (int op = 0; op < MK_OP_COUNT; op++) {
      unsigned char a[N * 8], b[N * 8], d1[N * 8], d2[N * 8];
      for (size_t i = 0; i < N; i++) {
        store(type, a, i, (double)(i % 5));
        store(type, b, i, (double)((i * 3) % 4));
      }
      host_redop_t r = {type, op, 0};
      double mul = 2.0;
      if (op == MK_OP_PREMULSUM) store(type, &r.scalar, 0, mul);
      if (op == MK_OP_SUMPOSTDIV) r.scalar = 2;
      host_reduce_copy(&r, d1, d2, a, b, N, 1);
      for (size_t i = 0; i < N; i++) {
        double x = load(type, a, i), y = load(type, b, i), e;
        switch (op) {
          case MK_OP_PROD: e = x * y; break;
          case MK_OP_MAX: e = x > y ? x : y; break;
          case MK_OP_MIN: e = x < y ? x : y; break;
          case MK_OP_PREMULSUM: e = x + y * mul; break;
          case MK_OP_SUMPOSTDIV: e = floor((x + y) / 2); break;
          default: e = x + y; break;
        }
        if (op == MK_OP_SUMPOSTDIV && type >= ncclFloat16 && type != ncclInt64 && type != ncclUint64) continue;
        unsigned char rounded[8];
        store(type, rounded, 0, e); /* the exact result, in the element type */
        e = load(type, rounded, 0);
        CHECK_MSG(load(type, d1, i) == e, "type %d op %d i %zu: %g != %g", type, op, i, load(type, d1, i), e);
        CHECK(memcmp(d1 + i * ts, d2 + i * ts, ts) == 0);
      }
      /* One input: a copy (with pre-multiplication of the local input). */
      host_reduce_copy(&r, d1, NULL, NULL, b, N, 0);
      for (size_t i = 0; i < N; i++)
        CHECK(load(type, d1, i) == load(type, b, i) * (op == MK_OP_PREMULSUM ? mul : 1));
    }
  }
  return 0;
}
