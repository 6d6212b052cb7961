/* The hello every connection starts with: magic, type, version, sender's arg. */
#include <inttypes.h>

#include "sock/sock_internal.h"

int sock_hello_send(int fd, uint64_t magic, uint32_t type, uint32_t version, uint64_t arg, int64_t deadline,
                    volatile uint32_t* abortFlag) {
  sock_hello_t h = {magic, type, version, arg};
  return sock_send_all(fd, &h, sizeof(h), deadline, abortFlag);
}

int sock_hello_check(const sock_hello_t* hello, uint64_t magic, uint32_t type, uint32_t version) {
  if (hello->magic != magic)
    return sock_fail(SOCK_EPROTO, "wrong magic 0x%016" PRIx64 " (expected 0x%016" PRIx64 ")", hello->magic, magic);
  if (hello->type != type) return sock_fail(SOCK_EPROTO, "wrong connection type %u (expected %u)", hello->type, type);
  if (hello->version != version)
    return sock_fail(SOCK_EPROTO, "wrong protocol version %u (expected %u)", hello->version, version);
  return SOCK_OK;
}
