/* Ring algorithms' step schedules, written once for both executors.
 *
 * Positions are ring hops from this rank: chunk c of a loop is the block
 * owned by ring position c. An executor walks j = 0 .. nops-1 and performs
 * the primitive sched_*_op() names on the chunk it returns; the number of
 * chunks each rank sends and receives per loop (what the proxy counts) comes
 * from sched_*_sends / sched_*_recvs. */
#ifndef MKCCL_DEVICE_SCHED_RING_H
#define MKCCL_DEVICE_SCHED_RING_H

#include "device/common/steps.h"

/* Primitives an executor provides. Names follow what they do, in order:
 * RECV (take from prev), REDUCE (with the local input), COPY (to the local
 * output), SEND (to next). */
enum {
  MK_PRIM_SEND = 0,           /* local input -> next */
  MK_PRIM_COPY_SEND,          /* local input -> local output and next */
  MK_PRIM_RECV_REDUCE_SEND,   /* prev (+) local input -> next */
  MK_PRIM_RECV_REDUCE_COPY_SEND, /* prev (+) local input -> local output and next (final value) */
  MK_PRIM_RECV_REDUCE_COPY,   /* prev (+) local input -> local output */
  MK_PRIM_RECV_COPY_SEND,     /* prev -> local output and next */
  MK_PRIM_RECV,               /* prev -> local output */
  MK_PRIM_SEND_OUTPUT,        /* local output (a final value) -> next, as is: no pre-multiplication */
  MK_PRIM_NONE
};

/* What each primitive does, for the executors' data movers. */
MK_HD int mk_prim_recvs(int prim) {
  return prim == MK_PRIM_RECV_REDUCE_SEND || prim == MK_PRIM_RECV_REDUCE_COPY_SEND || prim == MK_PRIM_RECV_REDUCE_COPY ||
         prim == MK_PRIM_RECV_COPY_SEND || prim == MK_PRIM_RECV;
}
MK_HD int mk_prim_sends(int prim) {
  return prim == MK_PRIM_SEND || prim == MK_PRIM_SEND_OUTPUT || prim == MK_PRIM_COPY_SEND || prim == MK_PRIM_RECV_REDUCE_SEND ||
         prim == MK_PRIM_RECV_REDUCE_COPY_SEND || prim == MK_PRIM_RECV_COPY_SEND;
}
/* The executor passes the output as the source of MK_PRIM_SEND_OUTPUT. */
MK_HD int mk_prim_reads_src(int prim) {
  return prim == MK_PRIM_SEND || prim == MK_PRIM_SEND_OUTPUT || prim == MK_PRIM_COPY_SEND || prim == MK_PRIM_RECV_REDUCE_SEND ||
         prim == MK_PRIM_RECV_REDUCE_COPY_SEND || prim == MK_PRIM_RECV_REDUCE_COPY;
}
MK_HD int mk_prim_writes_dst(int prim) {
  return prim == MK_PRIM_COPY_SEND || prim == MK_PRIM_RECV_REDUCE_COPY_SEND || prim == MK_PRIM_RECV_REDUCE_COPY ||
         prim == MK_PRIM_RECV_COPY_SEND || prim == MK_PRIM_RECV;
}
/* The local data is already reduced: no pre-multiplication applies. */
MK_HD int mk_prim_is_raw(int prim) { return prim == MK_PRIM_SEND_OUTPUT; }
/* The value written is final: the post-division applies. */
MK_HD int mk_prim_is_final(int prim) {
  return prim == MK_PRIM_RECV_REDUCE_COPY_SEND || prim == MK_PRIM_RECV_REDUCE_COPY;
}

MK_HD int sched_mod(int x, int n) { return ((x % n) + n) % n; }

/* AllReduce: reduce-scatter then all-gather around the ring; 2N-1 ops. */
MK_HD int sched_allreduce_nops(int nranks) { return 2 * nranks - 1; }
MK_HD int sched_allreduce_op(int nranks, int ringIx, int j, int* chunk) {
  if (j == 0) { *chunk = sched_mod(ringIx - 1, nranks); return MK_PRIM_SEND; }
  if (j < nranks - 1) { *chunk = sched_mod(ringIx - 1 - j, nranks); return MK_PRIM_RECV_REDUCE_SEND; }
  if (j == nranks - 1) { *chunk = ringIx; return MK_PRIM_RECV_REDUCE_COPY_SEND; }
  if (j < 2 * nranks - 2) { *chunk = sched_mod(ringIx - (j - nranks + 1), nranks); return MK_PRIM_RECV_COPY_SEND; }
  *chunk = sched_mod(ringIx + 1, nranks);
  return MK_PRIM_RECV;
}
MK_HD int sched_allreduce_sends(int nranks) { return 2 * (nranks - 1); }
MK_HD int sched_allreduce_recvs(int nranks) { return 2 * (nranks - 1); }

/* AllGather: own block out, then pass every other block along; N ops.
 * The chunk is the ring hop distance of the block's owner (0 = me). */
MK_HD int sched_allgather_nops(int nranks) { return nranks; }
MK_HD int sched_allgather_op(int nranks, int j, int* hop) {
  if (j == 0) { *hop = 0; return MK_PRIM_COPY_SEND; }
  *hop = nranks - j; /* block of the rank j hops behind */
  return j < nranks - 1 ? MK_PRIM_RECV_COPY_SEND : MK_PRIM_RECV;
}
MK_HD int sched_allgather_sends(int nranks) { return nranks - 1; }
MK_HD int sched_allgather_recvs(int nranks) { return nranks - 1; }

/* ReduceScatter: the block destined j+1 hops behind travels and grows; N ops. */
MK_HD int sched_reducescatter_nops(int nranks) { return nranks; }
MK_HD int sched_reducescatter_op(int nranks, int j, int* hop) {
  if (j == 0) { *hop = nranks - 1; return MK_PRIM_SEND; }
  if (j < nranks - 1) { *hop = nranks - 1 - j; return MK_PRIM_RECV_REDUCE_SEND; }
  *hop = 0;
  return MK_PRIM_RECV_REDUCE_COPY;
}
MK_HD int sched_reducescatter_sends(int nranks) { return nranks - 1; }
MK_HD int sched_reducescatter_recvs(int nranks) { return nranks - 1; }

/* Broadcast: a chain from the root along the ring; one op per loop.
 * hopsFromRoot: how far after the root this rank sits. */
MK_HD int sched_broadcast_op(int nranks, int hopsFromRoot) {
  if (nranks == 1) return MK_PRIM_NONE;
  if (hopsFromRoot == 0) return MK_PRIM_COPY_SEND;
  return hopsFromRoot == nranks - 1 ? MK_PRIM_RECV : MK_PRIM_RECV_COPY_SEND;
}
MK_HD int sched_broadcast_sends(int nranks, int hopsFromRoot) { return nranks > 1 && hopsFromRoot != nranks - 1; }
MK_HD int sched_broadcast_recvs(int nranks, int hopsFromRoot) { return nranks > 1 && hopsFromRoot != 0; }

/* Reduce: a chain that starts right after the root and ends at it. */
MK_HD int sched_reduce_op(int nranks, int hopsFromRoot) {
  if (nranks == 1) return MK_PRIM_NONE;
  if (hopsFromRoot == 0) return MK_PRIM_RECV_REDUCE_COPY;
  return hopsFromRoot == 1 ? MK_PRIM_SEND : MK_PRIM_RECV_REDUCE_SEND;
}
MK_HD int sched_reduce_sends(int nranks, int hopsFromRoot) { return nranks > 1 && hopsFromRoot != 0; }
MK_HD int sched_reduce_recvs(int nranks, int hopsFromRoot) { return nranks > 1 && hopsFromRoot != 1; }

/* Chunking of one channel's share of a loop (all counts in elements).
 * A loop covers nChannels * blocks * chunkElems elements; in the last loop
 * the chunk shrinks so every channel and block gets an equal part, rounded
 * to `align` elements. */
MK_HD int64_t sched_loop_elems(int64_t chunkElems, int nChannels, int blocks) {
  return chunkElems * nChannels * blocks;
}
MK_HD int64_t sched_real_chunk(int64_t count, int64_t gridOffset, int64_t chunkElems, int nChannels, int blocks,
                               int64_t align) {
  int64_t left = count - gridOffset;
  int64_t per = MK_DIV_UP(left, (int64_t)nChannels * blocks);
  per = MK_ROUND_UP(per, align);
  return per < chunkElems ? per : chunkElems;
}
MK_HD int64_t sched_nloops(int64_t count, int64_t chunkElems, int nChannels, int blocks) {
  return MK_DIV_UP(count, sched_loop_elems(chunkElems, nChannels, blocks));
}

#endif
