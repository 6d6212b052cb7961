/* The device side as shipped: LTO-IR for sm_90 embedded in this library by
 * the build (unpack_device_ltoir.S) when nvcc was found; none otherwise,
 * and GPU executors then refuse UNPACK. */
#include "unpack_device.h"

#ifdef UNPACK_DEVICE_HAVE_LTOIR
extern const char unpack_device_ltoir[];
extern const char unpack_device_ltoir_end[];

const mkcclNetDeviceCode_v1* unpack_device_code(void) {
  static mkcclNetDeviceCode_v1 code;
  code.ltoir = unpack_device_ltoir;
  code.ltoirSize = (size_t)(unpack_device_ltoir_end - unpack_device_ltoir);
  code.arch = "sm_90";
  return &code;
}
#else
const mkcclNetDeviceCode_v1* unpack_device_code(void) { return NULL; }
#endif
