#include "host_store.h"

#include <stdio.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

void host_store_init(host_store_t* s, int policy, int64_t minBytes) {
  s->policy = policy < 0 ? HOST_STORE_AUTO : policy ? HOST_STORE_STREAM : HOST_STORE_CACHED;
  s->minBytes = minBytes < 0 ? 0 : minBytes;
  s->nsPerByte[0] = s->nsPerByte[1] = 0;
  s->picks = 0;
  s->slices[0] = s->slices[1] = 0;
  s->singleBytes = -1;
  s->inPlace[0] = s->inPlace[1] = 0;
}

int host_store_single_stream(const host_store_t* s, int64_t totalBytes) {
  return s && s->singleBytes >= 0 && totalBytes >= s->singleBytes;
}

int host_store_measures(const host_store_t* s, int64_t bytes) {
  return s && s->policy == HOST_STORE_AUTO && bytes > 0 && bytes >= s->minBytes;
}

static int host_store_choose(host_store_t* s, int64_t bytes) {
  if (!s || bytes < s->minBytes || s->policy == HOST_STORE_CACHED) return HOST_STORE_CACHED;
  if (s->policy == HOST_STORE_STREAM) return HOST_STORE_STREAM;
  /* The first picks alternate: both modes measured a few times (the first
   * slices also pay for first touches of the slots) before one is favoured. */
  if (s->picks < HOST_STORE_WARMUP) return (int)(s->picks++ & 1);
  double cached = s->nsPerByte[HOST_STORE_CACHED], stream = s->nsPerByte[HOST_STORE_STREAM];
  int best = stream <= HOST_STORE_MARGIN * cached ? HOST_STORE_STREAM : HOST_STORE_CACHED;
  /* The other mode is tried again after HOST_STORE_EXPLORE picks, times
   * how much dearer it is (at most 8): a try costs that much. */
  double ratio = best == HOST_STORE_STREAM ? cached / stream : stream / cached;
  uint32_t every = (uint32_t)(HOST_STORE_EXPLORE * (ratio < 1 ? 1 : ratio > 8 ? 8 : ratio));
  if (++s->picks - HOST_STORE_WARMUP >= every) {
    s->picks = HOST_STORE_WARMUP;
    return !best;
  }
  return best;
}

int host_store_pick(host_store_t* s, int64_t bytes) {
  int mode = host_store_choose(s, bytes);
  if (s && bytes >= s->minBytes) s->slices[mode]++;
  return mode;
}

void host_store_describe(const host_store_t* s, char* buf, size_t len) {
  snprintf(buf, len, "%llu cached, %llu streamed (%.1f / %.1f ns per KB)", (unsigned long long)s->slices[0],
           (unsigned long long)s->slices[1], s->nsPerByte[0] * 1024, s->nsPerByte[1] * 1024);
}

void host_store_note(host_store_t* s, int mode, int64_t bytes, int64_t ns) {
  if (!host_store_measures(s, bytes) || ns < 0) return;
  double x = (double)ns / (double)bytes, *avg = &s->nsPerByte[mode];
  /* Quick to fall, slow to rise: a slice that paid for page faults or lost
   * its CPU says little about the mode, one that ran fast says it can. A
   * rise counts at most 4x the average. */
  if (*avg == 0)
    *avg = x;
  else if (x < *avg)
    *avg -= (*avg - x) / 2;
  else
    *avg += ((x > 4 * *avg ? 4 * *avg : x) - *avg) / 8;
}

void host_copy_stream(void* dst, const void* src, size_t bytes) {
#if defined(__SSE2__)
  char* d = dst;
  const char* s = src;
  /* Streaming stores need 16-byte aligned destinations. */
  size_t head = (size_t)(-(uintptr_t)d & 15);
  if (head > bytes) head = bytes;
  memcpy(d, s, head);
  d += head, s += head, bytes -= head;
  for (; bytes >= 64; d += 64, s += 64, bytes -= 64) {
    __m128i a = _mm_loadu_si128((const __m128i*)s), b = _mm_loadu_si128((const __m128i*)(s + 16));
    __m128i c = _mm_loadu_si128((const __m128i*)(s + 32)), e = _mm_loadu_si128((const __m128i*)(s + 48));
    _mm_stream_si128((__m128i*)d, a);
    _mm_stream_si128((__m128i*)(d + 16), b);
    _mm_stream_si128((__m128i*)(d + 32), c);
    _mm_stream_si128((__m128i*)(d + 48), e);
  }
  memcpy(d, s, bytes);
#else
  memcpy(dst, src, bytes);
#endif
}

void host_store_fence(void) {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}
