/* The ring collectives, written once for every executor.
 *
 * Include after defining:
 *   MK_ALGO_FN                 function qualifiers (static inline / __device__ ...)
 *   MK_PRIMS_T                 the executor's primitives type
 *   MK_PRIMS_CHUNK(p, prim, src, dst, nelem)
 *                              run MK_PRIM_* on one chunk; 0 on success
 * The caller has set the primitives up with the ring connections the
 * collective uses (coll_ring_uses()). Offsets are in elements of size ts. */
#ifndef MKCCL_DEVICE_COLL_RING_H
#define MKCCL_DEVICE_COLL_RING_H

#include "device/common/p2p_part.h"
#include "device/common/sched_ring.h"
#include "device/common/work.h"

typedef struct {
  int nRanks;
  int ringIx;           /* this rank's position in the ring */
  const int* ringRanks; /* ranks in ring order */
  int bid;              /* this channel's index among the item's channels */
  int64_t chunkElems;
  int64_t align;
  int64_t ts;
} mk_ring_ctx_t;

MK_HD int coll_ring_hops_from(const mk_ring_ctx_t* c, int rank) {
  for (int i = 0; i < c->nRanks; i++)
    if (c->ringRanks[i] == rank) return sched_mod(c->ringIx - i, c->nRanks);
  return 0;
}

/* Whether this rank receives from prev / sends to next in collective w. */
MK_HD void coll_ring_uses(const mk_ring_ctx_t* c, const mk_work_t* w, int* recvs, int* sends) {
  int N = c->nRanks, hop = coll_ring_hops_from(c, w->root);
  switch (w->coll) {
    case MK_COLL_BROADCAST: *recvs = sched_broadcast_recvs(N, hop); *sends = sched_broadcast_sends(N, hop); break;
    case MK_COLL_REDUCE: *recvs = sched_reduce_recvs(N, hop); *sends = sched_reduce_sends(N, hop); break;
    default: *recvs = N > 1; *sends = N > 1; break;
  }
}

#define MK_AT(base, elem, ts) ((char*)(base) + (elem) * (ts))
#endif

/* The algorithm functions, once per primitives type: an includer with two
 * (the GPU's LL-only kernel, device/cuda/kernels.cu) undefines
 * MKCCL_DEVICE_COLL_RING_FNS and includes this again with another
 * MK_PRIMS_T and MK_PRIMS_CHUNK (C++ overloads them by that type). */
#ifndef MKCCL_DEVICE_COLL_RING_FNS
#define MKCCL_DEVICE_COLL_RING_FNS
MK_ALGO_FN int coll_ring_allreduce(MK_PRIMS_T* p, const mk_work_t* w, const mk_ring_ctx_t* c) {
  int N = c->nRanks;
  int64_t count = (int64_t)w->count;
  int64_t loop = sched_loop_elems(c->chunkElems, w->nChannels, N);
  for (int64_t grid = 0; grid < count; grid += loop) {
    int64_t real = sched_real_chunk(count, grid, c->chunkElems, w->nChannels, N, c->align);
    for (int j = 0; j < sched_allreduce_nops(N); j++) {
      int chunk;
      int prim = sched_allreduce_op(N, c->ringIx, j, &chunk);
      int64_t off = grid + ((int64_t)c->bid * N + chunk) * real;
      if (MK_PRIMS_CHUNK(p, prim, MK_AT(w->sendbuff, off, c->ts), MK_AT(w->recvbuff, off, c->ts),
                         coll_clamp(count, off, real)))
        return 1;
    }
  }
  return 0;
}

/* AllGather and ReduceScatter: block of ring hop `hop` at element offset off. */
MK_ALGO_FN int coll_ring_gather_scatter(MK_PRIMS_T* p, const mk_work_t* w, const mk_ring_ctx_t* c, int isGather) {
  int N = c->nRanks;
  int64_t count = (int64_t)w->count;
  int64_t loop = sched_loop_elems(c->chunkElems, w->nChannels, 1);
  for (int64_t grid = 0; grid < count; grid += loop) {
    int64_t real = sched_real_chunk(count, grid, c->chunkElems, w->nChannels, 1, c->align);
    int64_t off = grid + (int64_t)c->bid * real;
    int64_t nelem = coll_clamp(count, off, real);
    int nops = isGather ? sched_allgather_nops(N) : sched_reducescatter_nops(N);
    for (int j = 0; j < nops; j++) {
      int hop;
      int prim = isGather ? sched_allgather_op(N, j, &hop) : sched_reducescatter_op(N, j, &hop);
      int64_t owner = c->ringRanks[sched_mod(c->ringIx + hop, N)];
      const char* src = isGather ? MK_AT(w->sendbuff, off, c->ts) : MK_AT(w->sendbuff, owner * count + off, c->ts);
      char* dst = isGather ? MK_AT(w->recvbuff, owner * count + off, c->ts) : MK_AT(w->recvbuff, off, c->ts);
      if (MK_PRIMS_CHUNK(p, prim, src, dst, nelem)) return 1;
    }
  }
  return 0;
}

/* Broadcast and Reduce: one chain primitive per chunk. */
MK_ALGO_FN int coll_ring_chain(MK_PRIMS_T* p, const mk_work_t* w, const mk_ring_ctx_t* c) {
  int N = c->nRanks, hop = coll_ring_hops_from(c, w->root);
  int prim = w->coll == MK_COLL_REDUCE ? sched_reduce_op(N, hop) : sched_broadcast_op(N, hop);
  int64_t count = (int64_t)w->count;
  int64_t loop = sched_loop_elems(c->chunkElems, w->nChannels, 1);
  for (int64_t grid = 0; grid < count; grid += loop) {
    int64_t real = sched_real_chunk(count, grid, c->chunkElems, w->nChannels, 1, c->align);
    int64_t off = grid + (int64_t)c->bid * real;
    if (MK_PRIMS_CHUNK(p, prim, MK_AT(w->sendbuff, off, c->ts), MK_AT(w->recvbuff, off, c->ts),
                       coll_clamp(count, off, real)))
      return 1;
  }
  return 0;
}

MK_ALGO_FN int coll_ring_run(MK_PRIMS_T* p, const mk_work_t* w, const mk_ring_ctx_t* c) {
  switch (w->coll) {
    case MK_COLL_ALLREDUCE: return coll_ring_allreduce(p, w, c);
    case MK_COLL_ALLGATHER: return coll_ring_gather_scatter(p, w, c, 1);
    case MK_COLL_REDUCESCATTER: return coll_ring_gather_scatter(p, w, c, 0);
    case MK_COLL_BROADCAST:
    case MK_COLL_REDUCE: return coll_ring_chain(p, w, c);
    default: return 1;
  }
}

#endif
