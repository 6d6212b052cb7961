/* The CPU copy of one page, cut the way the device code cuts it: a bulk of
 * whole 16-byte groups moved in units of the widest common alignment, then
 * the tail bytes. Fixed-size memcpy compiles to single moves. */
#include <stdint.h>
#include <string.h>

#include "unpack_device.h"

int unpack_align_class(const void* src, const void* dst) {
  unsigned off = (unsigned)(((uintptr_t)src | (uintptr_t)dst) % 16);
  off &= -off; /* the lowest set bit: the widest unit both are aligned to */
  return off == 0 ? 16 : (int)off;
}

#define UNPACK_BULK(N)                                                          \
  static void unpack_bulk_##N(char* dst, const char* src, size_t bytes) {       \
    for (size_t off = 0; off + (N) <= bytes; off += (N)) memcpy(dst + off, src + off, (N)); \
  }
UNPACK_BULK(16)
UNPACK_BULK(8)
UNPACK_BULK(4)
UNPACK_BULK(2)
UNPACK_BULK(1)

void unpack_copy_page(char* dst, const char* src, uint32_t len) {
  size_t bulk = (size_t)len / 16 * 16;
  if (bulk) {
    switch (unpack_align_class(src, dst)) {
      case 16: unpack_bulk_16(dst, src, bulk); break;
      case 8: unpack_bulk_8(dst, src, bulk); break;
      case 4: unpack_bulk_4(dst, src, bulk); break;
      case 2: unpack_bulk_2(dst, src, bulk); break;
      default: unpack_bulk_1(dst, src, bulk); break;
    }
  }
  for (size_t t = bulk; t < len; t++) dst[t] = src[t];
}
