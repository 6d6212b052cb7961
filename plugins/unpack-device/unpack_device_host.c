/* The host executor's unpack: the receive at the queue head, page by page.
 * cnt is read with acquire: the producer published the pages (release)
 * before its receive tested done, and the proxy published the step after. */
#include "unpack_device.h"

ncclResult_t unpack_host_unpack(mkcclUnpackHandle_v7* h, char* dst, size_t maxBytes, size_t* bytes) {
  if (!h || !h->meta || !h->bounce_buf) {
    unpack_device_warn("unpack-device: receive on a handle with no metadata or bounce buffer");
    return ncclInternalError;
  }
  uint64_t slot = h->head % MKCCL_UNPACK_QUEUE_DEPTH;
  uint64_t cnt = __atomic_load_n(&h->meta->cnt[slot], __ATOMIC_ACQUIRE);
  if (cnt > MKCCL_UNPACK_MAX_SLICE_PAGES) {
    unpack_device_warn("unpack-device: receive %llu has %llu pages (at most %d)", (unsigned long long)h->head,
                       (unsigned long long)cnt, MKCCL_UNPACK_MAX_SLICE_PAGES);
    return ncclInternalError;
  }
  const mkcclUnpackLoadMeta_v7* pages = h->meta->mem[slot];
  for (uint64_t i = 0; i < cnt; i++) {
    if (pages[i].dst_off > maxBytes || pages[i].len > maxBytes - pages[i].dst_off) {
      unpack_device_warn("unpack-device: receive %llu page %llu [%llu, +%u) is outside the %zu-byte destination",
                         (unsigned long long)h->head, (unsigned long long)i, (unsigned long long)pages[i].dst_off,
                         pages[i].len, maxBytes);
      return ncclInternalError;
    }
  }
  size_t total = 0;
  const char* bounce = h->bounce_buf;
  for (uint64_t i = 0; i < cnt; i++) {
    unpack_copy_page(dst + pages[i].dst_off, bounce + pages[i].src_off, pages[i].len);
    total += pages[i].len;
  }
  h->head++;
  *bytes = total;
  return ncclSuccess;
}
