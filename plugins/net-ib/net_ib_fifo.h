/* The remote FIFO of receive buffers (as NCCL's IB transport does it): the
 * receiver RDMA-writes, for each irecv, one element per buffer into slot
 * (seq % IB_MAX_REQUESTS) of a FIFO in the sender's memory; the sender finds
 * the slot ready when its elements carry idx == seq + 1, writes the data to
 * the addresses named there, and ends with an RDMA write with immediate.
 * Messages are split over the connection's QPs in 128-byte aligned chunks.
 * Pure arithmetic, unit-tested alone. */
#ifndef NET_IB_FIFO_H
#define NET_IB_FIFO_H

#include <stddef.h>
#include <stdint.h>

#define IB_MAX_REQUESTS 32 /* NCCL_NET_MAX_REQUESTS */
#define IB_MAX_RECVS 8
#define IB_MAX_QPS 16
#define IB_SPLIT_ALIGN 128

/* One receive buffer as the sender sees it; 64 bytes so a slot never
 * straddles cache lines unevenly. idx is last: written with the rest. */
typedef struct {
  uint64_t addr;
  uint64_t size;
  uint32_t rkey;
  uint32_t nreqs;
  uint32_t tag;
  uint32_t pad0;
  uint64_t idx;
  uint8_t pad1[24];
} net_ib_fifo_elem_t;

_Static_assert(sizeof(net_ib_fifo_elem_t) == 64, "FIFO element is 64 bytes");

static inline int net_ib_fifo_slot(uint64_t seq) { return (int)(seq % IB_MAX_REQUESTS); }

/* The idx a slot's elements carry once the receiver posted sequence seq. */
static inline uint64_t net_ib_fifo_idx(uint64_t seq) { return seq + 1; }

/* Byte offset of element i of the slot holding seq. */
static inline uint64_t net_ib_fifo_offset(uint64_t seq, int i) {
  return ((uint64_t)net_ib_fifo_slot(seq) * IB_MAX_RECVS + (uint64_t)i) * sizeof(net_ib_fifo_elem_t);
}

/* Offset of the sizes word of element i of the slot holding seq, in the
 * receiver's sizes FIFO (int32 per element). */
static inline uint64_t net_ib_sizes_offset(uint64_t seq, int i) {
  return ((uint64_t)net_ib_fifo_slot(seq) * IB_MAX_RECVS + (uint64_t)i) * sizeof(int32_t);
}

/* The part of a size-byte message QP q of nqps carries: [*off, *off + *len). */
static inline void net_ib_split(size_t size, int nqps, int q, size_t* off, size_t* len) {
  size_t per = (size + (size_t)nqps - 1) / (size_t)nqps;
  size_t chunk = (per + IB_SPLIT_ALIGN - 1) / IB_SPLIT_ALIGN * IB_SPLIT_ALIGN;
  size_t start = chunk * (size_t)q;
  if (start > size) start = size;
  size_t end = start + chunk > size ? size : start + chunk;
  *off = start;
  *len = end - start;
}

#endif
