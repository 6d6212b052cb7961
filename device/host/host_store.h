/* How the host executor writes the data another thread reads next (a send
 * connection's slots): with cached stores or with streaming (non-temporal)
 * stores that go to memory.
 *
 * Where the reader's CPU shares a cache with the writer's, cached stores are
 * faster: the reader takes the lines from that cache. Where it does not (a
 * VM whose two vCPUs the host puts on two core complexes), each cached write
 * must first take its line back from the reader's cache, and the reader then
 * pulls it from the writer's, and streaming stores win. Which of the two holds can
 * change while a process runs (the host moves vCPUs), so by default each
 * channel measures both: most slices use the cheaper mode, every
 * HOST_STORE_EXPLORE-th the other. */
#ifndef MKCCL_HOST_STORE_H
#define MKCCL_HOST_STORE_H

#include <stddef.h>
#include <stdint.h>

enum { HOST_STORE_CACHED = 0, HOST_STORE_STREAM = 1 };
enum { HOST_STORE_AUTO = -1 };

/* The first picks alternate between the modes. */
#define HOST_STORE_WARMUP 16
/* After the warm-up, one slice in this many (times how much dearer the
 * other mode is, at most 8) takes the mode the averages do not favour. */
#define HOST_STORE_EXPLORE 32
/* Streaming is chosen only when the writer's slices cost at most this share
 * of cached ones: streamed data is read back from memory, not a cache, a
 * cost the writer's clock does not see. Where the
 * caches are apart the share is far below this; a margin near 1 picks
 * streaming where it loses bandwidth. */
#define HOST_STORE_MARGIN 0.5
/* A streamed slice is computed in blocks this size, then streamed out. */
#define HOST_STORE_BLOCK 8192

typedef struct {
  int policy;          /* MKCCL_HOST_STREAM_STORES: HOST_STORE_AUTO, _CACHED or _STREAM */
  int64_t minBytes;    /* MKCCL_HOST_STREAM_MIN_BYTES: smaller slices are always cached */
  double nsPerByte[2]; /* moving average cost of a slice in each mode; 0: not measured yet */
  uint32_t picks;      /* auto choices: the warm-up's, then since the last exploring one */
  uint64_t slices[2];  /* slices written in each mode (for the log) */
  /* MKCCL_HOST_SINGLE_STREAM_BYTES (-1 after init: never): a receive that
   * reads this many bytes or more in place of its sender's memory (single
   * copy) writes them with streaming stores. Its output is past the caches
   * anyway, and cached stores would first read every line of it. */
  int64_t singleBytes;
  uint64_t inPlace[2]; /* bytes so read, in each mode (for the log) */
  _Alignas(64) char scratch[HOST_STORE_BLOCK]; /* a block with no user buffer to compute in */
} host_store_t;

void host_store_init(host_store_t* s, int policy, int64_t minBytes);

/* Whether a single-copy receive of `totalBytes` in all writes with
 * streaming stores (NULL: never). */
int host_store_single_stream(const host_store_t* s, int64_t totalBytes);

/* The mode for a slice of `bytes` (NULL: cached). */
int host_store_pick(host_store_t* s, int64_t bytes);

/* Whether a slice of `bytes` is measured for host_store_note. */
int host_store_measures(const host_store_t* s, int64_t bytes);

/* A slice of `bytes` written in `mode` took `ns` (the whole move: reads,
 * arithmetic and writes). */
void host_store_note(host_store_t* s, int mode, int64_t bytes, int64_t ns);

/* "N cached, M streamed (x / y ns per KB)": for the log. */
void host_store_describe(const host_store_t* s, char* buf, size_t len);

/* memcpy with streaming stores where the CPU has them (x86: SSE2). */
void host_copy_stream(void* dst, const void* src, size_t bytes);

/* After streamed copies, before the flag that publishes them: streaming
 * stores are not ordered with later stores without a fence. */
void host_store_fence(void);

#endif
