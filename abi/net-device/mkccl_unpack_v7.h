/* The UNPACK net device type, version 0x7 (docs/UNPACK.md): the layout a net
 * plugin (the producer) and an UNPACK net-device plugin (the consumer)
 * share. Plain C, included by C and CUDA code alike.
 *
 * Per receive comm: one handle {meta, bounce_buf, head}. The producer lands
 * a receive's bytes in bounce_buf as pages, describes them in
 * meta->mem[slot] (slot = its receive sequence % queue depth) and publishes
 * meta->cnt[slot] (release) before the receive tests done. The consumer, for
 * its receive number `head`, reads cnt[head % depth] pages, copies each from
 * bounce_buf + src_off to dst + dst_off, and advances head. The producer
 * reuses a slot once told (irecvConsumed) the consumer is done with it. */
#ifndef MKCCL_ABI_UNPACK_V7_H
#define MKCCL_ABI_UNPACK_V7_H

#include <stdint.h>

#define MKCCL_UNPACK_VERSION 0x7
#define MKCCL_UNPACK_QUEUE_DEPTH 16               /* NCCL_NET_DEVICE_UNPACK_MAX_QUEUE_DEPTH */
#define MKCCL_UNPACK_PAGE_SIZE 4096               /* SLICE_PAGE_SIZE */
#define MKCCL_UNPACK_MAX_SLICE_SIZE 4194304       /* NET_UNPACK_MAX_SLICE_SIZE: bytes per receive */
/* Pages per receive: a page may straddle two destination pages, hence * 2. */
#define MKCCL_UNPACK_MAX_SLICE_PAGES (MKCCL_UNPACK_MAX_SLICE_SIZE / MKCCL_UNPACK_PAGE_SIZE * 2)

/* One contiguous copy; 16 bytes, 16-aligned (one 128-bit load). */
typedef union {
  uint64_t r64[2];
  struct {
    uint32_t src_off; /* in bounce_buf */
    uint32_t len;
    uint64_t dst_off; /* from the receive's destination */
  };
} __attribute__((aligned(16))) mkcclUnpackLoadMeta_v7;

typedef struct {
  mkcclUnpackLoadMeta_v7 mem[MKCCL_UNPACK_QUEUE_DEPTH][MKCCL_UNPACK_MAX_SLICE_PAGES];
  uint64_t cnt[MKCCL_UNPACK_QUEUE_DEPTH];
} mkcclUnpackMeta_v7;

typedef struct {
  mkcclUnpackMeta_v7* meta; /* memory the executor can read */
  void* bounce_buf;
  uint64_t head;            /* consumer's next receive number */
} mkcclUnpackHandle_v7;

#endif
