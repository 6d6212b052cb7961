#include "base/dtype.h"

#include <math.h>
#include <string.h>

#include "device/common/work.h"

static uint32_t float_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static float bits_float(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

float host_half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  if (exp == 0x1f) return bits_float(sign | 0x7f800000u | (man << 13));
  if (exp == 0) {
    if (man == 0) return bits_float(sign);
    float v = ldexpf((float)man, -24);
    return sign ? -v : v;
  }
  return bits_float(sign | ((exp + 112) << 23) | (man << 13));
}

uint16_t host_float_to_half(float f) {
  uint32_t u = float_bits(f), sign = (u >> 16) & 0x8000;
  if (isnan(f)) return (uint16_t)(sign | 0x7e00);
  float a = fabsf(f);
  if (a >= 65520.0f) return (uint16_t)(sign | 0x7c00); /* rounds to infinity */
  if (a < ldexpf(1.0f, -14)) { /* subnormal: multiples of 2^-24, nearest even */
    float q = nearbyintf(a * ldexpf(1.0f, 24));
    return (uint16_t)(sign | (uint32_t)q);
  }
  uint32_t abits = u & 0x7fffffffu;
  uint32_t rounded = abits + 0xfff + ((abits >> 13) & 1);
  return (uint16_t)(sign | (((rounded >> 23) - 112) << 10) | ((rounded >> 13) & 0x3ff));
}

float host_bf16_to_float(uint16_t b) { return bits_float((uint32_t)b << 16); }

uint16_t host_float_to_bf16(float f) {
  uint32_t u = float_bits(f);
  if (isnan(f)) return (uint16_t)((u >> 16) | 0x40);
  u += 0x7fff + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}

/* fp8: decode by fields; encode by picking the nearest representable value
 * (ties to even mantissa), saturating at the largest finite one. */
static float fp8_decode(uint8_t v, int expBits, int bias, int ieeeSpecials) {
  int manBits = 7 - expBits;
  int sign = v >> 7, exp = (v >> manBits) & ((1 << expBits) - 1), man = v & ((1 << manBits) - 1);
  float r;
  if (ieeeSpecials && exp == (1 << expBits) - 1) r = man ? NAN : INFINITY;
  else if (!ieeeSpecials && exp == (1 << expBits) - 1 && man == (1 << manBits) - 1) r = NAN;
  else if (exp == 0) r = ldexpf((float)man, 1 - bias - manBits);
  else r = ldexpf((float)((1 << manBits) | man), exp - bias - manBits);
  return sign ? -r : r;
}

static uint8_t fp8_encode(float f, int expBits, int bias, float maxFinite, uint8_t nanCode) {
  int manBits = 7 - expBits;
  uint8_t sign = signbit(f) ? 0x80 : 0;
  if (isnan(f)) return (uint8_t)(sign | nanCode);
  float a = fabsf(f);
  if (a >= maxFinite) a = maxFinite;
  int e;
  frexpf(a, &e); /* a = m * 2^e, m in [0.5,1) */
  int exp = e - 1 + bias;
  if (a == 0.0f) return sign;
  int code;
  if (exp <= 0) { /* subnormal: multiples of 2^(1-bias-manBits) */
    code = (int)nearbyintf(ldexpf(a, bias - 1 + manBits));
  } else {
    float scaled = ldexpf(a, manBits - (e - 1)); /* in [2^manBits, 2^(manBits+1)) */
    int q = (int)nearbyintf(scaled);
    if (q == 1 << (manBits + 1)) { q >>= 1; exp++; }
    code = (exp << manBits) | (q & ((1 << manBits) - 1));
  }
  return (uint8_t)(sign | code);
}

float host_e4m3_to_float(uint8_t v) { return fp8_decode(v, 4, 7, 0); }
uint8_t host_float_to_e4m3(float f) { return fp8_encode(f, 4, 7, 448.0f, 0x7f); }
float host_e5m2_to_float(uint8_t v) { return fp8_decode(v, 5, 15, 1); }
uint8_t host_float_to_e5m2(float f) { return fp8_encode(f, 5, 15, 57344.0f, 0x7e); }
