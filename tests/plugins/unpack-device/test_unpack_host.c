/* The CPU unpack of plugins/unpack-device, on its own sources: the
 * alignment classes, every source/destination misalignment with lengths
 * around the 16-byte bulk boundary (tails), a receive whose pages lie in
 * the bounce buffer in a permuted order with odd-sized pages, 0-length
 * receives, the queue wrapping around many times, and malformed metadata
 * refused without advancing the head. Every byte is checked, and bytes
 * around each destination must stay untouched. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "unpack_device.h"

static int warnings;
void unpack_device_warn(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  warnings++;
}

static unsigned char pattern(size_t i, unsigned seed) { return (unsigned char)(i * 131u + seed * 17u + (i >> 8)); }

static void test_align_classes(void) {
  _Alignas(16) static char buf[64];
  CHECK_EQ_INT(unpack_align_class(buf, buf + 32), 16);
  CHECK_EQ_INT(unpack_align_class(buf + 8, buf + 16), 8);
  CHECK_EQ_INT(unpack_align_class(buf + 16, buf + 24), 8);
  CHECK_EQ_INT(unpack_align_class(buf + 4, buf + 12), 4);
  CHECK_EQ_INT(unpack_align_class(buf + 12, buf), 4);
  CHECK_EQ_INT(unpack_align_class(buf + 2, buf + 6), 2);
  CHECK_EQ_INT(unpack_align_class(buf + 1, buf), 1);
  CHECK_EQ_INT(unpack_align_class(buf + 16, buf + 3), 1);
}

/* Every (src, dst) misalignment, lengths around the bulk/tail split. */
static void test_copy_page(void) {
  const uint32_t lens[] = {0, 1, 2, 7, 15, 16, 17, 31, 32, 33, 100, 4095, 4096};
  _Alignas(16) static char src[4096 + 64], dst[4096 + 96];
  for (size_t i = 0; i < sizeof(src); i++) src[i] = (char)pattern(i, 1);
  for (int so = 0; so < 16; so++)
    for (int d = 0; d < 16; d++)
      for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
        memset(dst, 0x5c, sizeof(dst));
        unpack_copy_page(dst + 32 + d, src + so, lens[l]);
        CHECK_MSG(memcmp(dst + 32 + d, src + so, lens[l]) == 0, "src+%d dst+%d len %u", so, d, lens[l]);
        for (int g = 0; g < 32 + d; g++) CHECK_MSG(dst[g] == 0x5c, "byte before dst written (src+%d dst+%d)", so, d);
        for (size_t g = 32 + (size_t)d + lens[l]; g < sizeof(dst); g++)
          CHECK_MSG(dst[g] == 0x5c, "byte after dst written (src+%d dst+%d len %u)", so, d, lens[l]);
      }
}

typedef struct {
  mkcclUnpackMeta_v7* meta;
  char* bounce;
  size_t bounceSize;
  mkcclUnpackHandle_v7 h;
} fixture_t;

static void fixture_init(fixture_t* f, size_t bounceSize) {
  f->meta = aligned_alloc(16, sizeof(*f->meta));
  CHECK(f->meta);
  memset(f->meta, 0, sizeof(*f->meta));
  f->bounce = aligned_alloc(4096, bounceSize);
  CHECK(f->bounce);
  f->bounceSize = bounceSize;
  f->h.meta = f->meta;
  f->h.bounce_buf = f->bounce;
  f->h.head = 0;
}

static void fixture_fini(fixture_t* f) {
  free(f->meta);
  free(f->bounce);
}

/* Lays a `bytes` receive (content `seed`) out as pages of pageLen in a
 * permuted order at the slot of receive `seq`, src offsets skewed by `skew`
 * bytes (alignment classes); returns the page count. */
static uint64_t produce(fixture_t* f, uint64_t seq, size_t bytes, uint32_t pageLen, unsigned seed, unsigned skew) {
  uint64_t slot = seq % MKCCL_UNPACK_QUEUE_DEPTH;
  uint64_t pages = (bytes + pageLen - 1) / pageLen;
  CHECK(pages <= MKCCL_UNPACK_MAX_SLICE_PAGES);
  size_t stride = (size_t)pageLen + 16;
  CHECK(pages * stride + skew <= f->bounceSize);
  for (uint64_t i = 0; i < pages; i++) {
    uint64_t at = (i * 7 + 3) % pages; /* 7 is prime to the counts used: a permutation */
    if (pages % 7 == 0) at = pages - 1 - i;
    uint32_t len = (uint32_t)((i + 1) * pageLen <= bytes ? pageLen : bytes - i * pageLen);
    mkcclUnpackLoadMeta_v7* m = &f->meta->mem[slot][i];
    m->src_off = (uint32_t)(at * stride + skew);
    m->len = len;
    m->dst_off = i * pageLen;
    for (uint32_t b = 0; b < len; b++) f->bounce[m->src_off + b] = (char)pattern(i * pageLen + b, seed);
  }
  __atomic_store_n(&f->meta->cnt[slot], pages, __ATOMIC_RELEASE);
  return pages;
}

static void consume_check(fixture_t* f, size_t bytes, unsigned seed, size_t room) {
  char* dst = malloc(room + 64);
  CHECK(dst);
  memset(dst, 0x3a, room + 64);
  uint64_t head = f->h.head;
  size_t got = 12345;
  CHECK_EQ_INT(unpack_host_unpack(&f->h, dst, room, &got), ncclSuccess);
  CHECK_EQ_INT(got, bytes);
  CHECK_EQ_INT(f->h.head, head + 1);
  for (size_t i = 0; i < bytes; i++)
    CHECK_MSG((unsigned char)dst[i] == pattern(i, seed), "receive %llu byte %zu", (unsigned long long)head, i);
  for (size_t i = bytes; i < room + 64; i++) CHECK_MSG(dst[i] == 0x3a, "byte %zu past the receive written", i);
  free(dst);
}

static void test_permuted_receive(void) {
  fixture_t f;
  fixture_init(&f, 2u << 20);
  /* 4 KiB pages, a partial last page, every skew (alignment class). */
  for (unsigned skew = 0; skew < 16; skew++) {
    size_t bytes = 37 * 4096 + 1000 + skew;
    produce(&f, f.h.head, bytes, MKCCL_UNPACK_PAGE_SIZE, skew + 1, skew);
    consume_check(&f, bytes, skew + 1, 64 * 4096);
  }
  /* Odd page sizes: bulk and tail in every page. */
  const uint32_t pageLens[] = {1, 15, 17, 1000, 4095};
  for (size_t k = 0; k < sizeof(pageLens) / sizeof(pageLens[0]); k++) {
    size_t bytes = pageLens[k] * 13 + 5;
    produce(&f, f.h.head, bytes, pageLens[k], 40 + (unsigned)k, (unsigned)k * 3);
    consume_check(&f, bytes, 40 + (unsigned)k, bytes + 8);
  }
  fixture_fini(&f);
}

static void test_zero_length(void) {
  fixture_t f;
  fixture_init(&f, 1 << 16);
  CHECK_EQ_INT(produce(&f, 0, 0, MKCCL_UNPACK_PAGE_SIZE, 9, 0), 0);
  consume_check(&f, 0, 9, 256);
  CHECK_EQ_INT(f.h.head, 1);
  fixture_fini(&f);
}

/* The head runs 5 times around the queue; the producer stays up to the
 * whole depth ahead, each slot reused only after it was consumed. */
static void test_wrap_around(void) {
  fixture_t f;
  fixture_init(&f, 16u << 20);
  uint64_t produced = 0;
  const int total = MKCCL_UNPACK_QUEUE_DEPTH * 5 + 3;
  size_t sizes[MKCCL_UNPACK_QUEUE_DEPTH];
  /* Each slot's pages in their own part of the bounce buffer. */
  size_t part = f.bounceSize / MKCCL_UNPACK_QUEUE_DEPTH;
  while ((int)f.h.head < total) {
    while (produced < f.h.head + MKCCL_UNPACK_QUEUE_DEPTH && (int)produced < total) {
      uint64_t slot = produced % MKCCL_UNPACK_QUEUE_DEPTH;
      size_t bytes = (produced * 977) % (20 * 4096) + (produced % 3 == 0 ? 0 : 1);
      fixture_t view = f;
      view.bounce = f.bounce + slot * part;
      view.bounceSize = part;
      produce(&view, produced, bytes, MKCCL_UNPACK_PAGE_SIZE, (unsigned)produced, (unsigned)(produced % 16));
      /* produce() wrote offsets relative to the view: make them absolute. */
      for (uint64_t i = 0; i < f.meta->cnt[slot]; i++) f.meta->mem[slot][i].src_off += (uint32_t)(slot * part);
      sizes[slot] = bytes;
      produced++;
    }
    uint64_t slot = f.h.head % MKCCL_UNPACK_QUEUE_DEPTH;
    consume_check(&f, sizes[slot], (unsigned)f.h.head, 21 * 4096);
  }
  CHECK_EQ_INT(f.h.head, total);
  fixture_fini(&f);
}

static void test_refusals(void) {
  fixture_t f;
  fixture_init(&f, 1 << 16);
  char dst[4096];
  size_t got = 0;
  /* A page past the destination. */
  produce(&f, 0, 3 * 1024, 1024, 1, 0);
  int before = warnings;
  CHECK_EQ_INT(unpack_host_unpack(&f.h, dst, 2 * 1024, &got), ncclInternalError);
  CHECK_EQ_INT(f.h.head, 0);
  CHECK(warnings == before + 1);
  /* More pages than a receive may have. */
  f.meta->cnt[0] = MKCCL_UNPACK_MAX_SLICE_PAGES + 1;
  CHECK_EQ_INT(unpack_host_unpack(&f.h, dst, sizeof(dst), &got), ncclInternalError);
  CHECK_EQ_INT(f.h.head, 0);
  /* No metadata at all. */
  mkcclUnpackHandle_v7 empty = {NULL, NULL, 0};
  CHECK_EQ_INT(unpack_host_unpack(&empty, dst, sizeof(dst), &got), ncclInternalError);
  fixture_fini(&f);
}

int main(void) {
  CHECK_EQ_INT(sizeof(mkcclUnpackLoadMeta_v7), 16);
  CHECK_EQ_INT(_Alignof(mkcclUnpackLoadMeta_v7), 16);
  CHECK_EQ_INT(MKCCL_UNPACK_MAX_SLICE_PAGES, 2048);
  test_align_classes();
  test_copy_page();
  test_permuted_receive();
  test_zero_length();
  test_wrap_around();
  test_refusals();
  printf("test_unpack_host: OK\n");
  return 0;
}
