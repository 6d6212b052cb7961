/* The host executor's store mode (device/host/host_store.h): what each
 * policy picks, how the measured choice follows scripted costs both ways,
 * and that the streaming copy copies exactly, at every alignment. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "device/host/host_store.h"

/* n auto picks for slices of `bytes`, each noted at the scripted cost
 * (ns per byte) of its mode; returns how many were streamed. */
static int drive(host_store_t* s, int n, int64_t bytes, double cachedCost, double streamCost) {
  int streamed = 0;
  for (int i = 0; i < n; i++) {
    int mode = host_store_pick(s, bytes);
    streamed += mode == HOST_STORE_STREAM;
    host_store_note(s, mode, bytes, (int64_t)((mode == HOST_STORE_STREAM ? streamCost : cachedCost) * (double)bytes));
  }
  return streamed;
}

static void test_fixed_policies(void) {
  host_store_t s;
  CHECK_EQ_INT(host_store_pick(NULL, 1 << 20), HOST_STORE_CACHED);
  host_store_init(&s, HOST_STORE_CACHED, 0);
  CHECK_EQ_INT(drive(&s, 100, 1 << 20, 3, 1), 0);
  CHECK_EQ_INT(host_store_measures(&s, 1 << 20), 0);
  host_store_init(&s, HOST_STORE_STREAM, 65536);
  CHECK_EQ_INT(drive(&s, 100, 1 << 20, 1, 3), 100);
  CHECK_EQ_INT(drive(&s, 100, 65535, 1, 3), 0); /* below the minimum: cached */
  CHECK_EQ_INT(host_store_measures(&s, 1 << 20), 0);
}

static void test_auto_follows_costs(void) {
  host_store_t s;
  host_store_init(&s, HOST_STORE_AUTO, 65536);
  CHECK_EQ_INT(drive(&s, 100, 4096, 3, 1), 0); /* small slices: cached, not measured */
  CHECK(s.nsPerByte[0] == 0 && s.nsPerByte[1] == 0);
  /* The warm-up alternates. */
  CHECK_EQ_INT(drive(&s, HOST_STORE_WARMUP, 1 << 19, 3, 1), HOST_STORE_WARMUP / 2);
  /* Streaming three times cheaper (the 2-core VM with its vCPUs apart):
   * streamed but for one try of cached stores every 3 x 32 slices. */
  int streamed = drive(&s, 960, 1 << 19, 3, 1);
  CHECK_MSG(streamed >= 960 - 11 && streamed <= 960 - 9, "streamed %d of 960 with streaming 3x cheaper", streamed);
  /* The vCPUs meet again: the same cost both ways. Within a few tries the
   * cached mode comes back, and then stays but for a try every 32. */
  drive(&s, 400, 1 << 19, 1, 1);
  streamed = drive(&s, 320, 1 << 19, 1, 1);
  CHECK_MSG(streamed >= 9 && streamed <= 11, "streamed %d of 320 at equal cost", streamed);
  /* Only a clear gain streams: 10 % cheaper is not enough. */
  drive(&s, 400, 1 << 19, 1, 0.9);
  streamed = drive(&s, 320, 1 << 19, 1, 0.9);
  CHECK_MSG(streamed <= 11, "streamed %d of 320 at 0.9x the cost", streamed);
  /* Far apart, the dearer mode is tried at most every 8 x 32 slices. */
  drive(&s, 400, 1 << 19, 100, 1);
  streamed = drive(&s, 2560, 1 << 19, 100, 1);
  CHECK_MSG(streamed >= 2560 - 11 && streamed <= 2560 - 9, "streamed %d of 2560 with streaming 100x cheaper",
            streamed);
}

static void test_outlier_is_capped(void) {
  host_store_t s;
  host_store_init(&s, HOST_STORE_AUTO, 0);
  drive(&s, 200, 1 << 19, 3, 1);
  double before = s.nsPerByte[HOST_STORE_STREAM];
  /* A slice the thread lost its CPU in, 1000x the cost, moves the average
   * by at most (4x - 1x) / 8. */
  host_store_note(&s, HOST_STORE_STREAM, 1 << 19, (int64_t)(1000.0 * (1 << 19)));
  CHECK_MSG(s.nsPerByte[HOST_STORE_STREAM] <= before * 1.375 + 1e-9, "average %g after an outlier (was %g)",
            s.nsPerByte[HOST_STORE_STREAM], before);
  /* A fast slice brings it half way back. */
  double raised = s.nsPerByte[HOST_STORE_STREAM];
  host_store_note(&s, HOST_STORE_STREAM, 1 << 19, 1 << 19);
  CHECK(s.nsPerByte[HOST_STORE_STREAM] <= (raised + before) / 2 + 1e-9);
}

static void test_copy_stream_exact(void) {
  enum { MAX = 3 * 4096 + 200 };
  unsigned char* src = malloc(MAX + 64);
  unsigned char* dst = malloc(MAX + 64);
  CHECK(src && dst);
  for (int i = 0; i < MAX + 64; i++) src[i] = (unsigned char)(i * 131 + 7);
  const size_t sizes[] = {0, 1, 15, 16, 17, 63, 64, 65, 127, 4096, 4096 + 3, MAX};
  for (int dOff = 0; dOff < 17; dOff++)
    for (int sOff = 0; sOff < 3; sOff++)
      for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        size_t n = sizes[k];
        memset(dst, 0xEE, MAX + 64);
        host_copy_stream(dst + dOff, src + sOff, n);
        host_store_fence();
        CHECK_MSG(memcmp(dst + dOff, src + sOff, n) == 0, "copy of %zu at dst+%d src+%d differs", n, dOff, sOff);
        for (int i = 0; i < dOff; i++) CHECK_MSG(dst[i] == 0xEE, "byte %d before the copy written", i);
        for (size_t i = dOff + n; i < MAX + 64; i++) CHECK_MSG(dst[i] == 0xEE, "byte %zu after the copy written", i);
      }
  free(src);
  free(dst);
}

int main(void) {
  test_fixed_policies();
  test_auto_follows_costs();
  test_outlier_is_capped();
  test_copy_stream_exact();
  return 0;
}
