/* Symmetric kernels (MK_ALGO_SYMM): collectives on buffers that every rank
 * registered in a window with NCCL_WIN_COLL_SYMMETRIC, so that each rank
 * reaches every LSA peer's copy at a fixed stride (plan/plan_symm.c). No
 * connection, no proxy: loads and stores of the peers' memory between
 * barriers over the resource window (device/common/symm.h).
 *
 * Each channel (CTA) owns one part of every rank's block, the same part on
 * every rank, and meets the same channel of every peer at its barriers:
 *   AllReduce one-shot: every rank reads its part of every input, reduces in
 *     rank order (the same bits everywhere) and writes its own output. A
 *     barrier between the loads and the stores of each round, since the
 *     output may be the input a slower peer is still reading (in place).
 *   AllReduce two-shot: rank r reduces slice r of every input and stores the
 *     result into every rank's output; a barrier at the end.
 *   ReduceScatter: rank r reduces block r of every input into its output.
 *   AllGather: rank r stores its input into block r of every output.
 * Every collective starts with a barrier: the peers' inputs are ready and
 * their outputs free. Every wait sees the abort flag and MKCCL_TIMEOUT. */
#ifndef MKCCL_CUDA_SYMM_CUH
#define MKCCL_CUDA_SYMM_CUH

#include <stdint.h>

#include "device/common/symm.h"
#include "device/common/work.h"
#include "device/cuda/dev_comm.h"
#include "device/cuda/reduce.cuh"
#include "device/cuda/sync.cuh"

/* Bytes each thread holds per round: a round's loads all land before its
 * stores start. */
#define MK_SYMM_THREAD_BYTES 64

struct mk_symm {
  int rank, nRanks, channel;
  int tid, nthreads;
  const char* in;      /* LSA rank 0's copy of sendbuff; rank r's at in + r * inStride */
  uint64_t inStride;
  char* out;           /* likewise for recvbuff */
  uint64_t outStride;
  char* outLocal;      /* recvbuff as this rank's stream sees it */
  const char* inLocal;
  char* res;           /* the resource window, rank r's copy at res + r * resStride */
  uint64_t resStride;
  volatile uint32_t* abortFlag;
  uint64_t timeoutNs;
  volatile uint64_t* row; /* this channel's status row, for a timeout's mark */
  int* aborted;           /* shared */
  uint64_t* epoch;        /* shared: this channel's barrier count */
};

/* Thread's wait for a peer's arrival: false once the communicator aborts or
 * MKCCL_TIMEOUT passes without it (then the timeout is marked and the abort
 * flag raised, as the ring kernels do). */
static __device__ bool mk_symm_wait(const mk_symm& s, const volatile uint64_t* word, uint64_t target) {
  int spins = 0;
  uint64_t since = 0;
  while (mk_ld_acquire(word) < target) {
    if (++spins < 1024) continue;
    spins = 0;
    if (*s.abortFlag) return false;
    if (!s.timeoutNs) continue;
    uint64_t now = mk_globaltimer();
    if (!since) since = now;
    if (now - since <= s.timeoutNs) continue;
    if (s.row) s.row[MK_STATUS_TIMEDOUT] = 1;
    __threadfence_system();
    *s.abortFlag = 1;
    return false;
  }
  return true;
}

/* This channel of every rank meets here: what the CTA did before is visible
 * to the peers, what they did before is visible to the CTA after. Thread r
 * signals rank r and waits for it. false (every thread alike): aborted. */
static __device__ bool mk_symm_barrier(mk_symm& s) {
  __syncthreads();
  if (s.tid == 0) *s.epoch += 1;
  __syncthreads();
  uint64_t e = *s.epoch;
  bool ok = true;
  for (int r = s.tid; r < s.nRanks; r += s.nthreads) {
    volatile uint64_t* to = (volatile uint64_t*)(s.res + (uint64_t)r * s.resStride +
                                                 mk_symm_inbox_off(s.nRanks, s.channel, s.rank));
    mk_fence_sys(); /* the CTA's accesses (ordered before by the barrier above) before the arrival */
    mk_st_release(to, e);
  }
  for (int r = s.tid; r < s.nRanks && ok; r += s.nthreads)
    ok = mk_symm_wait(s, (const volatile uint64_t*)(s.res + (uint64_t)s.rank * s.resStride +
                                                     mk_symm_inbox_off(s.nRanks, s.channel, r)), e);
  bool failed = __syncthreads_or(!ok) != 0;
  if (failed && s.tid == 0) *s.aborted = 1;
  return !failed;
}

/* Bytes [0, len) at inOff of every rank's input reduced in rank order;
 * stored at outOff of this rank's output (toAll false) or of every rank's
 * (toAll). V: the access unit, a 16-byte vector or one element. midBarrier:
 * a barrier between each round's loads and its stores. */
template <typename T, int OP, typename V>
static __device__ __noinline__ bool mk_symm_reduce(mk_symm& s, int64_t inOff, int64_t outOff, int64_t len, bool toAll,
                                                bool midBarrier, uint64_t scalarBits) {
  typedef typename mk_elem<T>::C C;
  typedef mk_op<T, OP> O;
  constexpr int E = (int)(sizeof(V) / sizeof(T));
  constexpr int K = MK_SYMM_THREAD_BYTES / (int)sizeof(V);
  const C sc = mk_scalar<T>(scalarBits, OP);
  const int64_t round = (int64_t)s.nthreads * MK_SYMM_THREAD_BYTES;
  for (int64_t base = 0; base < len; base += round) {
    C acc[K][E];
    for (int r = 0; r < s.nRanks; r++) {
      const char* src = s.in + (uint64_t)r * s.inStride + inOff + base;
      V v[K];
#pragma unroll
      for (int k = 0; k < K; k++) {
        int64_t at = ((int64_t)k * s.nthreads + s.tid) * (int64_t)sizeof(V);
        v[k] = base + at < len ? *(const V*)(src + at) : V();
      }
#pragma unroll
      for (int k = 0; k < K; k++) {
        const T* x = (const T*)&v[k];
#pragma unroll
        for (int e = 0; e < E; e++) {
          C c = mk_elem<T>::load(x[e]);
          acc[k][e] = r == 0 ? O::pre(c, sc) : O::combine(acc[k][e], c, sc);
        }
      }
    }
    if (midBarrier && !mk_symm_barrier(s)) return false;
#pragma unroll
    for (int k = 0; k < K; k++) {
      int64_t at = ((int64_t)k * s.nthreads + s.tid) * (int64_t)sizeof(V);
      if (base + at >= len) continue;
      V o;
      T* ot = (T*)&o;
#pragma unroll
      for (int e = 0; e < E; e++) ot[e] = mk_elem<T>::store(O::post(acc[k][e], sc));
      int64_t dst = outOff + base + at;
      if (!toAll) {
        *(V*)(s.outLocal + dst) = o;
        continue;
      }
      for (int j = 1; j <= s.nRanks; j++) { /* the peers first, this rank last */
        int r = s.rank + j < s.nRanks ? s.rank + j : s.rank + j - s.nRanks;
        *(V*)(s.out + (uint64_t)r * s.outStride + dst) = o;
      }
    }
  }
  return true;
}

/* Bytes [0, len) at inOff of this rank's input stored at outOff of every
 * rank's output. */
template <typename V>
static __device__ __noinline__ void mk_symm_copy(mk_symm& s, int64_t inOff, int64_t outOff, int64_t len) {
  for (int64_t at = (int64_t)s.tid * (int64_t)sizeof(V); at < len; at += (int64_t)s.nthreads * (int64_t)sizeof(V)) {
    V v = *(const V*)(s.inLocal + inOff + at);
    for (int j = 1; j <= s.nRanks; j++) {
      int r = s.rank + j < s.nRanks ? s.rank + j : s.rank + j - s.nRanks;
      *(V*)(s.out + (uint64_t)r * s.outStride + outOff + at) = v;
    }
  }
}

template <typename T, int OP>
static __device__ bool mk_symm_reduce_v(mk_symm& s, bool vec, int64_t inOff, int64_t outOff, int64_t len, bool toAll,
                                        bool mid, uint64_t scalar) {
  return vec ? mk_symm_reduce<T, OP, uint4>(s, inOff, outOff, len, toAll, mid, scalar)
             : mk_symm_reduce<T, OP, T>(s, inOff, outOff, len, toAll, mid, scalar);
}

template <typename A> struct mk_symm_float { static constexpr bool v = false; };
template <> struct mk_symm_float<float> { static constexpr bool v = true; };
template <> struct mk_symm_float<double> { static constexpr bool v = true; };
template <> struct mk_symm_float<__half> { static constexpr bool v = true; };
template <> struct mk_symm_float<__nv_bfloat16> { static constexpr bool v = true; };

/* The ops the planner sends (plan/plan_symm.c): Avg is PREMULSUM on the
 * floating types and SUMPOSTDIV on the integer ones; only those are built. */
template <typename T>
static __device__ bool mk_symm_reduce_op(mk_symm& s, int op, bool vec, int64_t inOff, int64_t outOff, int64_t len,
                                         bool toAll, bool mid, uint64_t scalar) {
  switch (op) {
    case MK_OP_SUM: return mk_symm_reduce_v<T, MK_OP_SUM>(s, vec, inOff, outOff, len, toAll, mid, scalar);
    case MK_OP_PROD: return mk_symm_reduce_v<T, MK_OP_PROD>(s, vec, inOff, outOff, len, toAll, mid, scalar);
    case MK_OP_MAX: return mk_symm_reduce_v<T, MK_OP_MAX>(s, vec, inOff, outOff, len, toAll, mid, scalar);
    case MK_OP_MIN: return mk_symm_reduce_v<T, MK_OP_MIN>(s, vec, inOff, outOff, len, toAll, mid, scalar);
    default:
      if constexpr (mk_symm_float<T>::v)
        return mk_symm_reduce_v<T, MK_OP_PREMULSUM>(s, vec, inOff, outOff, len, toAll, mid, scalar);
      else
        return mk_symm_reduce_v<T, MK_OP_SUMPOSTDIV>(s, vec, inOff, outOff, len, toAll, mid, scalar);
  }
}

static __device__ bool mk_symm_reduce_any(mk_symm& s, int type, int op, bool vec, int64_t inOff, int64_t outOff,
                                          int64_t len, bool toAll, bool mid, uint64_t scalar) {
  switch (type) {
    case 2: return mk_symm_reduce_op<int32_t>(s, op, vec, inOff, outOff, len, toAll, mid, scalar);
    case 3: return mk_symm_reduce_op<uint32_t>(s, op, vec, inOff, outOff, len, toAll, mid, scalar);
    case 4: return mk_symm_reduce_op<int64_t>(s, op, vec, inOff, outOff, len, toAll, mid, scalar);
    case 5: return mk_symm_reduce_op<uint64_t>(s, op, vec, inOff, outOff, len, toAll, mid, scalar);
    case 6: return mk_symm_reduce_op<__half>(s, op, vec, inOff, outOff, len, toAll, mid, scalar);
    case 7: return mk_symm_reduce_op<float>(s, op, vec, inOff, outOff, len, toAll, mid, scalar);
    case 8: return mk_symm_reduce_op<double>(s, op, vec, inOff, outOff, len, toAll, mid, scalar);
    case 9: return mk_symm_reduce_op<__nv_bfloat16>(s, op, vec, inOff, outOff, len, toAll, mid, scalar);
    default: return false; /* never planned (plan_symm.c) */
  }
}

/* Whether 16-byte accesses fit every address involved and the length. */
static __device__ __forceinline__ bool mk_symm_vec(const mk_symm& s, int64_t inOff, int64_t outOff, int64_t len) {
  uintptr_t mis = (uintptr_t)(s.in + inOff) | (uintptr_t)(s.inLocal + inOff) | (uintptr_t)(s.out + outOff) |
                  (uintptr_t)(s.outLocal + outOff) | (uintptr_t)s.inStride | (uintptr_t)s.outStride | (uintptr_t)len;
  return (mis & 15) == 0;
}

/* Item w on `channel`: its part, between its barriers. */
static __device__ void mk_run_symm(const mk_dev_comm_t* comm, const mk_work_t* w, int channel, int* aborted) {
  __shared__ uint64_t epoch;
  mk_symm s;
  s.rank = comm->rank;
  s.nRanks = comm->nRanks;
  s.channel = channel;
  s.tid = threadIdx.x;
  s.nthreads = blockDim.x;
  s.inLocal = (const char*)w->sendbuff;
  s.outLocal = (char*)w->recvbuff;
  s.in = s.inLocal + w->symmSend;
  s.inStride = w->symmSendStride;
  s.out = s.outLocal + w->symmRecv;
  s.outStride = w->symmRecvStride;
  s.res = w->symmRes;
  s.resStride = w->symmResStride;
  s.abortFlag = comm->abortFlag;
  s.timeoutNs = comm->timeoutNs;
  s.row = comm->status ? comm->status + (size_t)channel * MK_DEV_STATUS_WORDS : nullptr;
  s.aborted = aborted;
  s.epoch = &epoch;
  /* The epoch lives in this rank's own copy: only this channel touches it,
   * and one communicator's kernels run one after the other. */
  uint64_t* home = (uint64_t*)(s.res + (uint64_t)s.rank * s.resStride + mk_symm_epoch_off(channel));
  if (s.tid == 0) epoch = *home;
  int ts = mk_type_size(w->type);
  int bid = channel - w->channelLo;
  int64_t align = 16 / ts;
  int64_t count = (int64_t)w->count;
  uint64_t scalar = (w->flags & MK_WORK_SCALAR_PTR) ? 0 : w->scalar; /* never planned with a device scalar */
  int64_t off, len;
  bool ok = mk_symm_barrier(s);
  if (ok && w->coll == MK_COLL_ALLGATHER) {
    mk_symm_part(count, w->nChannels, bid, align, &off, &len);
    int64_t in = off * ts, out = ((int64_t)s.rank * count + off) * ts, bytes = len * ts;
    if (mk_symm_vec(s, in, out, bytes))
      mk_symm_copy<uint4>(s, in, out, bytes);
    else
      mk_symm_copy<char>(s, in, out, bytes);
  } else if (ok && w->coll == MK_COLL_REDUCESCATTER) {
    mk_symm_part(count, w->nChannels, bid, align, &off, &len);
    int64_t in = ((int64_t)s.rank * count + off) * ts, out = off * ts, bytes = len * ts;
    ok = mk_symm_reduce_any(s, w->type, w->op, mk_symm_vec(s, in, out, bytes), in, out, bytes, false, false, scalar);
  } else if (ok && (w->flags & MK_WORK_SYMM_ONESHOT)) {
    mk_symm_part(count, w->nChannels, bid, align, &off, &len);
    int64_t at = off * ts, bytes = len * ts;
    ok = mk_symm_reduce_any(s, w->type, w->op, mk_symm_vec(s, at, at, bytes), at, at, bytes, false, true, scalar);
  } else if (ok) {
    int64_t sOff, sLen;
    mk_symm_part(count, s.nRanks, s.rank, align, &sOff, &sLen);
    mk_symm_part(sLen, w->nChannels, bid, align, &off, &len);
    int64_t at = (sOff + off) * ts, bytes = len * ts;
    ok = mk_symm_reduce_any(s, w->type, w->op, mk_symm_vec(s, at, at, bytes), at, at, bytes, true, false, scalar);
  }
  /* One-shot's last round barrier ended every peer's reads of this rank. */
  if (ok && !(w->coll == MK_COLL_ALLREDUCE && (w->flags & MK_WORK_SYMM_ONESHOT))) ok = mk_symm_barrier(s);
  __syncthreads();
  if (s.tid == 0) *home = epoch;
  (void)ok;
}

#endif
