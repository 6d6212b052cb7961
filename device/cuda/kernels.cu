/* The GPU executor: one CTA per channel, the same ring and tree schedules
 * and connection FIFO protocol as the host executor (device/common), Simple
 * protocol with 16-byte vector accesses (and LL on rings). Compiled to a
 * fatbin that the core loads through the driver at run time (no CUDA
 * runtime dependency). */
#include <stdint.h>

#include "device/common/sched_ring.h"
#include "device/common/sched_tree.h"
#include "device/common/shape.h"
#include "device/common/work.h"
#include "device/cuda/dev_comm.h"
#include "device/cuda/reduce.cuh"
#include "device/cuda/symm.cuh"
#include "device/cuda/sync.cuh"

#ifdef MKCCL_KERNEL_UNPACK
/* The variant for communicators whose net receives need a net-device
 * plugin's unpack (docs/UNPACK.md): relocatable code, linked with the
 * plugin's device code at communicator init (nvJitLink). The names and
 * signatures are the ABI of abi/net-device/mkccl_net_device_v1.h. */
#include "net-device/mkccl_net_device_v1.h"
extern "C" __device__ uint64_t mkcclNetDevUnpackHead_v1(const void* handle);
extern "C" __device__ void mkcclNetDevUnpack_v1(const void* handle, uint64_t head, char* dst, int nbytes,
                                                void* warpScratch, int tid, int nthreads);
extern "C" __device__ void mkcclNetDevUnpackSaveHead_v1(void* handle, uint64_t head);
#define MK_UNPACK_SCRATCH (MK_KERNEL_THREADS / 32 * MKCCL_NET_DEVICE_WARP_SCRATCH)
#endif

/* ---- step waits and posts (the connection FIFO protocol, GPU side) ----- */

/* Progress report for the host's watchdog (thread 0 only, cheap stores). */
static __device__ __forceinline__ void mk_status(volatile uint64_t* st, int word, uint64_t v) {
  if (st) st[word] = v;
}

struct mk_prims {
  mk_dev_conn_t* recv; /* NULL when unused */
  mk_dev_conn_t* send;
  mk_dev_conn_t* recv1; /* a tree's second child, NULL when unused (Simple only) */
  mk_dev_conn_t* send1;
  int chunkSteps, sliceSteps, stepSize;
  int type, op;
  uint64_t scalar;
  int ts;
  volatile uint32_t* abortFlag;
  uint64_t timeoutNs; /* 0: wait forever */
  int* aborted; /* shared */
  volatile uint64_t* status; /* this channel's row when progress is traced (traceStatus), else NULL */
  volatile uint64_t* row;    /* this channel's row, for a timeout's mark, or NULL */
  uint64_t ticks;            /* thread 0's progress count, written to the row (never read back: host memory) */
  char* unpackScratch;       /* shared, per-warp metadata staging (UNPACK variant) */
  int proto;                 /* MK_PROTO_SIMPLE or MK_PROTO_LL */
  /* The threads that run these primitives: the block (bar 0), or one half
   * of it with a named barrier of its own (a send and a receive of one
   * channel side by side, as NCCL's send/recv warp groups). */
  int tid, nthreads, bar;
  /* Every thread's own copy of the bound connections' step counters, so
   * that no thread waits for thread 0's posts to read them (thread 0 also
   * keeps the slot's `step` current, for the write-back). */
  uint64_t rstep, sstep, rstep1, sstep1;
  struct mk_conn_slots* slots; /* shared: the bound connections */
  uint64_t* trace;             /* MKCCL_GPU_TRACE, channel 0 only, else NULL */
  uint64_t* traceStart;        /* shared: [0] the kernel's start time until its first event (then 0), [1] events */
  uint32_t traceCap;
};

/* The connections an item uses, copied into shared memory while it runs
 * (mk_attach), written back when it ends (mk_detach_t0): each slice reads
 * a connection's pointers and step, from device memory a round trip to L2
 * on the critical path of every hop. */
enum { MK_SLOT_RECV, MK_SLOT_SEND, MK_SLOT_RECV1, MK_SLOT_SEND1, MK_SLOTS };
struct mk_conn_slots {
  mk_dev_conn_t c[MK_SLOTS];
  mk_dev_conn_t* home[MK_SLOTS]; /* where each came from, NULL: free */
};

/* Slice events for MKCCL_GPU_TRACE (block thread 0 of channel 0): the
 * first of a kernel starts the record over, after its start time and the
 * previous traced kernel's (so the record shows the gap between kernels:
 * launch cost that no event inside a kernel sees). Stores only (the count
 * lives in shared memory): a load of the record's count from device memory
 * at every event would slow what the trace measures. */
enum { MK_EV_KERNEL, MK_EV_SLICE, MK_EV_WAITED, MK_EV_GO, MK_EV_DATA, MK_EV_POSTED, MK_EV_RUN, MK_EV_BOUND,
       MK_EV_PREV, MK_EV_END };
static __device__ void mk_trace_at(uint64_t* t, uint32_t cap, uint64_t* traceStart, int ev, int prim, int slice,
                                   int64_t bytes) {
  if (!t || threadIdx.x != 0) return;
  if (traceStart[0]) {
    uint64_t prev = t[1]; /* the last kernel's start (0: none) */
    t[1] = traceStart[0];
    t[2] = MK_EV_KERNEL;
    traceStart[0] = 0;
    traceStart[1] = 1;
    if (prev && cap > 1) {
      t[3] = prev;
      t[4] = MK_EV_PREV;
      traceStart[1] = 2;
    }
  }
  uint64_t n = traceStart[1];
  if (n >= cap) return;
  traceStart[1] = n + 1;
  t[1 + 2 * n] = mk_globaltimer();
  t[2 + 2 * n] = (uint64_t)ev | (uint64_t)prim << 4 | (uint64_t)(slice & 0xff) << 12 | (uint64_t)bytes << 32;
  t[0] = n + 1;
}
static __device__ __forceinline__ void mk_trace(const mk_prims* p, int ev, int prim, int slice, int64_t bytes) {
  if (p->trace) mk_trace_at(p->trace, p->traceCap, p->traceStart, ev, prim, slice, bytes);
}

static __device__ __forceinline__ void mk_sync(const mk_prims* p) {
  if (p->bar == 0)
    __syncthreads();
  else
    asm volatile("bar.sync %0, %1;" ::"r"(p->bar), "r"(p->nthreads) : "memory");
}

/* A named barrier of n threads that also ORs v over them. */
static __device__ __forceinline__ bool mk_bar_or(int bar, int n, int v) {
  int r;
  asm volatile("{ .reg .pred a, b; setp.ne.s32 a, %1, 0; bar.red.or.pred b, %2, %3, a; selp.s32 %0, 1, 0, b; }"
               : "=r"(r)
               : "r"(v), "r"(bar), "r"(n)
               : "memory");
  return r != 0;
}

/* The same barrier, and whether the work is aborted, one answer for every
 * thread of the group: with two groups in a block, the other may raise the
 * flag between this group's reads of it, and a thread that went on alone
 * would wait at the next barrier for ever. */
static __device__ __forceinline__ bool mk_sync_aborted(const mk_prims* p) {
  int v = *(volatile int*)p->aborted != 0;
  if (p->bar == 0) return __syncthreads_or(v) != 0;
  return mk_bar_or(p->bar, p->nthreads, v);
}

/* Every so often in a spin (Simple's step words, LL's lines): false once
 * the communicator aborts, or when the wait has seen no progress for
 * timeoutNs (a dead or stuck peer): then it marks the channel's status row
 * and raises the communicator's abort flag, so every channel ends and the
 * host reports ncclRemoteError (as the host executor does after
 * MKCCL_TIMEOUT). `since`: when progress was last seen (0: not yet). */
static __device__ bool mk_spin_ok(const mk_prims* p, bool progressed, uint64_t* since) {
  if (*p->abortFlag) return false;
  if (!p->timeoutNs) return true;
  uint64_t now = mk_globaltimer();
  if (*since == 0 || progressed) {
    *since = now;
    return true;
  }
  if (now - *since <= p->timeoutNs) return true;
  if (p->row) p->row[MK_STATUS_TIMEDOUT] = 1;
  __threadfence_system();
  *p->abortFlag = 1;
  return false;
}

/* Thread 0 spins on a step word; progress is reported to the status row
 * when traced. */
static __device__ bool mk_wait(mk_prims* p, volatile uint64_t* word, uint64_t target) {
  int spins = 0;
  uint64_t v, seen = 0, since = 0;
  while ((v = mk_ld_acquire(word)) < target) {
    if (++spins == 4096) {
      spins = 0;
      if (p->status) {
        p->status[MK_STATUS_WORD] = v;
        p->status[MK_STATUS_TARGET] = target;
        p->status[MK_STATUS_TICKS] = ++p->ticks;
      }
      bool progressed = v != seen;
      seen = v;
      if (!mk_spin_ok(p, progressed, &since)) return false;
    }
  }
  return true;
}

/* A free slot on send connection c for a piece ending at step `end`: the
 * receiver's head within MKCCL_STEPS of it (no underflow at the start);
 * in OFFSET mode (MKCCL_CONN_SHARED) head counts steps the proxy granted a
 * pool slot, offset written first, so it must be past the piece.
 * A head read earlier that allows it already is not read again: with 8
 * slots, most steps of a small collective need no read at all (thread 0). */
static __device__ bool mk_wait_room(mk_prims* p, mk_dev_conn_t* c, uint64_t end) {
  uint64_t target = (c->flags & MKCCL_CONN_SHARED) ? end : end > MKCCL_STEPS ? end - MKCCL_STEPS : 0;
  if (c->headSeen >= target) return true;
  if (!mk_wait(p, c->head, target)) return false;
  c->headSeen = mk_ld_acquire(c->head);
  return true;
}

/* Done reading a received slice at `step`: its slots go back to the
 * sender (the FIFO entry cleared before the head moves). */
static __device__ void mk_post_head(mk_dev_conn_t* c, uint64_t step, int sliceSteps) {
  if (c->connFifo && (c->flags & MKCCL_CONN_USE_FIFO)) {
    c->connFifo[step % MKCCL_STEPS].size = -1;
    mk_st_release(c->head, step + sliceSteps); /* the clear before the head */
  } else {
    mk_st_relaxed(c->head, step + sliceSteps);
  }
  c->step = step + sliceSteps;
}

/* A sent slice's size, for connections whose proxy reads it (before the fence). */
static __device__ void mk_post_size(mk_dev_conn_t* c, uint64_t step, int64_t bytes) {
  if (c->connFifo && (c->flags & MKCCL_CONN_USE_FIFO))
    *(volatile int64_t*)&c->connFifo[step % MKCCL_STEPS].size = bytes;
}

/* A sent slice's tail (after the fence that orders the data before it). */
static __device__ void mk_post_tail(mk_dev_conn_t* c, uint64_t step, int sliceSteps) {
  mk_st_relaxed(c->tail, step + sliceSteps);
  c->step = step + sliceSteps;
}

static __device__ char* mk_recv_ptr(mk_dev_conn_t* c, uint64_t step) {
  int slot = (int)(step % MKCCL_STEPS);
  if (c->connFifo && (c->flags & MKCCL_CONN_USE_FIFO)) {
    mkcclConnFifo_v1* f = &c->connFifo[slot];
    if (f->mode == MKCCL_MODE_OFFSET) return c->buff + f->offset;
    if (f->mode == MKCCL_MODE_PTR) return (char*)f->ptr;
  }
  return c->buff + (size_t)slot * c->stepSize;
}

static __device__ char* mk_send_ptr(mk_dev_conn_t* c, uint64_t step) {
  int slot = (int)(step % MKCCL_STEPS);
  if ((c->flags & MKCCL_CONN_SHARED) && c->connFifo) return c->buff + c->connFifo[slot].offset;
  return c->buff + (size_t)slot * c->stepSize;
}

template <typename T, int OP>
static __device__ void mk_data(int tid, int n, const char* a, const char* b, char* d0, char* d1, int64_t nelem,
                        uint64_t scalar, int post) {
  mk_reduce_copy<T, OP>(tid, n, a, b, d0, d1, nelem, scalar, post);
}

template <typename T>
static __device__ void mk_data_op(int op, int tid, int n, const char* a, const char* b, char* d0, char* d1, int64_t nelem,
                           uint64_t scalar, int post) {
  switch (op) {
    case MK_OP_PROD: mk_data<T, MK_OP_PROD>(tid, n, a, b, d0, d1, nelem, scalar, post); break;
    case MK_OP_MAX: mk_data<T, MK_OP_MAX>(tid, n, a, b, d0, d1, nelem, scalar, post); break;
    case MK_OP_MIN: mk_data<T, MK_OP_MIN>(tid, n, a, b, d0, d1, nelem, scalar, post); break;
    case MK_OP_PREMULSUM: mk_data<T, MK_OP_PREMULSUM>(tid, n, a, b, d0, d1, nelem, scalar, post); break;
    case MK_OP_SUMPOSTDIV: mk_data<T, MK_OP_SUMPOSTDIV>(tid, n, a, b, d0, d1, nelem, scalar, post); break;
    default: mk_data<T, MK_OP_SUM>(tid, n, a, b, d0, d1, nelem, scalar, post); break;
  }
}

/* The op that folds a further input into a partial result: both are
 * already pre-multiplied (as the host's host_prims_fold_op). */
static __device__ __forceinline__ int mk_fold_op(int op) { return op == MK_OP_PREMULSUM ? MK_OP_SUM : op; }

/* Move or combine nelem elements with `op`: a copy when there is one input
 * and no arithmetic; else the typed loop. */
static __device__ void mk_move(const mk_prims& p, int op, const char* a, const char* b, char* d0, char* d1,
                               int64_t nelem, int post) {
  int tid = p.tid, n = p.nthreads;
  bool arith = (a && b) || (b && op == MK_OP_PREMULSUM) || (post && op == MK_OP_SUMPOSTDIV);
  if (!arith) {
    const char* src = a ? a : b;
    if (d1 == src) d1 = nullptr;
    if (d0 == src) return;
    mk_copy(tid, n, src, d0, d1, nelem * p.ts);
    return;
  }
  switch (p.type) {
    case ncclInt8: mk_data_op<int8_t>(op, tid, n, a, b, d0, d1, nelem, p.scalar, post); break;
    case ncclUint8: mk_data_op<uint8_t>(op, tid, n, a, b, d0, d1, nelem, p.scalar, post); break;
    case ncclInt32: mk_data_op<int32_t>(op, tid, n, a, b, d0, d1, nelem, p.scalar, post); break;
    case ncclUint32: mk_data_op<uint32_t>(op, tid, n, a, b, d0, d1, nelem, p.scalar, post); break;
    case ncclInt64: mk_data_op<int64_t>(op, tid, n, a, b, d0, d1, nelem, p.scalar, post); break;
    case ncclUint64: mk_data_op<uint64_t>(op, tid, n, a, b, d0, d1, nelem, p.scalar, post); break;
    case ncclFloat16: mk_data_op<__half>(op, tid, n, a, b, d0, d1, nelem, p.scalar, post); break;
    case ncclFloat32: mk_data_op<float>(op, tid, n, a, b, d0, d1, nelem, p.scalar, post); break;
    case ncclFloat64: mk_data_op<double>(op, tid, n, a, b, d0, d1, nelem, p.scalar, post); break;
    case ncclBfloat16: mk_data_op<__nv_bfloat16>(op, tid, n, a, b, d0, d1, nelem, p.scalar, post); break;
    case ncclFloat8e4m3: mk_data_op<__nv_fp8_e4m3>(op, tid, n, a, b, d0, d1, nelem, p.scalar, post); break;
    case ncclFloat8e5m2: mk_data_op<__nv_fp8_e5m2>(op, tid, n, a, b, d0, d1, nelem, p.scalar, post); break;
  }
}

#ifdef MKCCL_KERNEL_UNPACK
/* The receive at the handle's head, by the whole block; thread 0 moves the
 * head on once every thread is done with it. */
static __device__ void mk_unpack(mk_prims* p, mk_dev_conn_t* c, char* slot, int64_t bytes) {
  void* h = c->netDevHandle;
  uint64_t head = mkcclNetDevUnpackHead_v1(h);
  mkcclNetDevUnpack_v1(h, head, slot, (int)bytes, p->unpackScratch, p->tid, p->nthreads);
  __threadfence(); /* the slot's bytes before the block reads them */
  mk_sync(p);
  if (p->tid == 0) mkcclNetDevUnpackSaveHead_v1(h, head + 1);
  mk_sync(p);
}
#endif

/* One slice's data (host_prims_move's order, so both executors give the
 * same bits): the inputs received (in0, in1) combined with the local one
 * (mine) into the first destination (the first send slot, else the user
 * output) and mirrored to the user output; then a second send slot gets a
 * copy. Passes that read what an earlier one wrote come after a barrier. */
static __device__ void mk_slice_data(const mk_prims* p, int prim, const char* in0, const char* in1, const char* mine,
                                     char* out0, char* out1, char* user, int64_t nelem, int final) {
  char* d0 = out0 ? out0 : user;
  char* d1 = out0 ? user : nullptr;
  if (!d0) return;
  int fold = mk_fold_op(p->op);
  /* With no user output, the second send slot is the first pass's mirror. */
  if (!d1 && out1 && !in1) {
    d1 = out1;
    out1 = nullptr;
  }
  mk_move(*p, mk_prim_is_raw(prim) ? fold : p->op, in0, mine, d0, d1, nelem, final && !in1);
  if (in1) {
    mk_sync(p);
    mk_move(*p, fold, in1, d0, d0, d1, nelem, final);
  }
  if (out1) {
    mk_sync(p);
    mk_move(*p, fold, nullptr, d1 ? d1 : d0, out1, nullptr, nelem, 0);
  }
}

/* When a whole block runs the Simple primitives, its last warp posts each
 * slice (heads, sizes, the system fence, tails) while the other warps go on
 * to the next slice's wait and data, as NCCL's primitives give the posts to
 * threads of their own: a slice's fence waits for its stores to reach the
 * peer, and no data would move meanwhile. Barriers: MK_BAR_WORKERS among
 * the others, MK_BAR_SLICE (the whole block, once per slice) hands a
 * slice that is written over to the post warp, and an abort with it. */
#define MK_BAR_WORKERS 3
#define MK_BAR_SLICE 4
#define MK_POST_WARP_TID (MK_KERNEL_THREADS - 32)

static __device__ bool mk_post_roles(const mk_prims* p) {
  return p->bar == 0 && p->nthreads == MK_KERNEL_THREADS && (int)blockDim.x == MK_KERNEL_THREADS;
}

/* A slice's posts, by one thread after the barrier that ends its data: one
 * system fence per slice that sends, none for a receive's head, as NCCL's
 * Simple protocol does (a fence per post would cost a hop several times over); the
 * block's reads of the slot ended before the barrier, so the head needs no
 * fence. r1, s1: a tree's second child, else NULL. */
static __device__ void mk_post_slice(mk_prims* p, bool recv, mk_dev_conn_t* r1, bool send, mk_dev_conn_t* s1,
                                     int64_t bytes) {
  if (recv) mk_post_head(p->recv, p->rstep, p->sliceSteps);
  if (r1) mk_post_head(r1, p->rstep1, p->sliceSteps);
  if (send) {
    mk_post_size(p->send, p->sstep, bytes);
    if (s1) mk_post_size(s1, p->sstep1, bytes);
    mk_fence_sys(); /* the block's data (and the sizes) before the tails */
    mk_post_tail(p->send, p->sstep, p->sliceSteps);
    if (s1) mk_post_tail(s1, p->sstep1, p->sliceSteps);
  }
}

/* Every thread's step counters past a slice (each counts them itself). */
static __device__ void mk_steps_advance(mk_prims* p, bool recv, const mk_dev_conn_t* r1, bool send,
                                        const mk_dev_conn_t* s1) {
  if (recv) p->rstep += p->sliceSteps;
  if (r1) p->rstep1 += p->sliceSteps;
  if (send) p->sstep += p->sliceSteps;
  if (s1) p->sstep1 += p->sliceSteps;
}

/* The post warp's side of a chunk: the same slices, posted. */
static __device__ int mk_post_chunk(mk_prims* p, int prim, int64_t nelem) {
  bool recv = mk_prim_recvs(prim), send = mk_prim_sends(prim);
  mk_dev_conn_t* r1 = recv ? p->recv1 : nullptr;
  mk_dev_conn_t* s1 = send ? p->send1 : nullptr;
  steps_shape_t s = {p->chunkSteps, p->sliceSteps, p->stepSize};
  int64_t chunkBytes = nelem * p->ts;
  int slices = steps_slices_per_chunk(s);
  for (int slice = 0; slice < slices; slice++) {
    int64_t bytes = steps_slice_len(s, chunkBytes, slice);
    if (mk_bar_or(MK_BAR_SLICE, MK_KERNEL_THREADS, 0)) return 1; /* the workers are done with it (or aborted) */
    if ((int)threadIdx.x == MK_POST_WARP_TID) mk_post_slice(p, recv, r1, send, s1, bytes);
    mk_steps_advance(p, recv, r1, send, s1);
  }
  return 0;
}

/* The slices of a chunk, by the threads that move data: the whole block,
 * or all but the post warp (`roles`, see mk_post_chunk). */
static __device__ int mk_prims_chunk_work(mk_prims* p, int prim, const char* src, char* dst, int64_t nelem, bool roles) {
  bool recv = mk_prim_recvs(prim), send = mk_prim_sends(prim);
  mk_dev_conn_t* r1 = recv ? p->recv1 : nullptr;
  mk_dev_conn_t* s1 = send ? p->send1 : nullptr;
  bool useSrc = mk_prim_reads_src(prim), useDst = mk_prim_writes_dst(prim);
  int final = mk_prim_is_final(prim);
  steps_shape_t s = {p->chunkSteps, p->sliceSteps, p->stepSize};
  int64_t chunkBytes = nelem * p->ts;
  int slices = steps_slices_per_chunk(s);
  int64_t done = 0;
  for (int slice = 0; slice < slices; slice++) {
    int64_t bytes = steps_slice_len(s, chunkBytes, slice);
    uint64_t rstep = p->rstep, sstep = p->sstep, rstep1 = p->rstep1, sstep1 = p->sstep1;
    mk_trace(p, MK_EV_SLICE, prim, slice, bytes);
    if (p->tid == 0) {
      bool ok = true;
      mk_status(p->status, MK_STATUS_TICKS, ++p->ticks);
      mk_status(p->status, MK_STATUS_PRIM, (uint64_t)prim | (uint64_t)slice << 8);
      mk_status(p->status, MK_STATUS_RSTEP, rstep);
      mk_status(p->status, MK_STATUS_SSTEP, sstep);
      if (recv) ok = mk_wait(p, p->recv->tail, rstep + p->sliceSteps);
      if (ok && r1) ok = mk_wait(p, r1->tail, rstep1 + p->sliceSteps);
      if (ok && send) ok = mk_wait_room(p, p->send, sstep + p->sliceSteps);
      if (ok && s1) ok = mk_wait_room(p, s1, sstep1 + p->sliceSteps);
      if (!ok) *p->aborted = 1;
      mk_trace(p, MK_EV_WAITED, prim, slice, bytes);
    }
    if (mk_sync_aborted(p)) {
      if (roles) mk_bar_or(MK_BAR_SLICE, MK_KERNEL_THREADS, 1); /* the post warp ends too */
      return 1;
    }
    mk_trace(p, MK_EV_GO, prim, slice, bytes);
#ifdef MKCCL_KERNEL_UNPACK
    /* One net receive per slice: its pages go from the bounce buffer into
     * the slot before anyone reads it (the host executor does the same). */
    if (recv && p->recv->netDevHandle) mk_unpack(p, p->recv, mk_recv_ptr(p->recv, rstep), bytes);
    if (r1 && r1->netDevHandle) mk_unpack(p, r1, mk_recv_ptr(r1, rstep1), bytes);
#endif
    if (bytes > 0)
      mk_slice_data(p, prim, recv ? mk_recv_ptr(p->recv, rstep) : nullptr, r1 ? mk_recv_ptr(r1, rstep1) : nullptr,
                    useSrc ? src + done : nullptr, send ? mk_send_ptr(p->send, sstep) : nullptr,
                    s1 ? mk_send_ptr(s1, sstep1) : nullptr, useDst ? dst + done : nullptr, bytes / p->ts, final);
    if (roles) /* the slice to the post warp; on to the next one */
      mk_bar_or(MK_BAR_SLICE, MK_KERNEL_THREADS, 0);
    else
      mk_sync(p);
    mk_trace(p, MK_EV_DATA, prim, slice, bytes);
    /* Posts (thread 0 for the block, unless the post warp does them). No
     * barrier after them: the other threads go on to the next slice's
     * barrier, which thread 0 reaches once it has posted and waited. */
    if (p->tid == 0 && !roles) {
      mk_post_slice(p, recv, r1, send, s1, bytes);
      mk_trace(p, MK_EV_POSTED, prim, slice, bytes);
    }
    mk_steps_advance(p, recv, r1, send, s1);
    done += bytes;
  }
  return 0;
}

/* One chunk (exactly chunkSteps steps on each connection used). Returns
 * non-zero when aborted. Rings use recv and send; trees also recv1 and
 * send1 (a second child). */
static __device__ int mk_prims_chunk(mk_prims* p, int prim, const char* src, char* dst, int64_t nelem) {
  bool roles = mk_post_roles(p);
  if (roles && (int)threadIdx.x >= MK_POST_WARP_TID) return mk_post_chunk(p, prim, nelem);
  if (roles) { /* the workers: their own barrier */
    p->nthreads = MK_POST_WARP_TID;
    p->bar = MK_BAR_WORKERS;
  }
  int r = mk_prims_chunk_work(p, prim, src, dst, nelem, roles);
  if (roles) {
    p->nthreads = MK_KERNEL_THREADS;
    p->bar = 0;
  }
  return r;
}

#include "device/cuda/prims_ll.cuh"

static __device__ __forceinline__ int mk_prims_any(mk_prims* p, int prim, const char* src, char* dst, int64_t nelem) {
  return p->proto == MK_PROTO_LL ? mk_prims_chunk_ll(p, prim, src, dst, nelem) : mk_prims_chunk(p, prim, src, dst, nelem);
}

#define MK_ALGO_FN static __device__
#define MK_PRIMS_T mk_prims
#define MK_PRIMS_CHUNK(p, prim, src, dst, nelem) mk_prims_any((p), (prim), (const char*)(src), (char*)(dst), (nelem))
#include "device/common/coll_ring.h"

/* The rings again for the LL-only kernel (mkccl_kernel_ll): the same
 * primitives type by another name, whose chunks are LL and nothing else, so
 * that kernel's code holds no Simple data loop. */
struct mk_prims_ll : mk_prims {};
#undef MK_PRIMS_T
#undef MK_PRIMS_CHUNK
#undef MKCCL_DEVICE_COLL_RING_FNS
#define MK_PRIMS_T mk_prims_ll
#define MK_PRIMS_CHUNK(p, prim, src, dst, nelem) mk_prims_chunk_ll((p), (prim), (const char*)(src), (char*)(dst), (nelem))
#include "device/common/coll_ring.h"
#undef MK_PRIMS_T
#undef MK_PRIMS_CHUNK
#define MK_PRIMS_T mk_prims
#define MK_PRIMS_CHUNK(p, prim, src, dst, nelem) mk_prims_any((p), (prim), (const char*)(src), (char*)(dst), (nelem))

/* A send connection's step rounded up to the operation's chunk (thread 0). */
static __device__ void mk_begin(mk_dev_conn_t* c, int chunkSteps) { c->step = steps_op_base(c->step, chunkSteps); }

/* The same for a receive: steps skipped by the rounding were never sent,
 * so their slots go back to the sender now (as the host's primitives and
 * NCCL's do). Else, in a ring of 3+ ranks, each rank's second chunk waits
 * for room its receiver only gives after it has sent its own second chunk:
 * with 3 steps skipped (4-step chunks), the target base - 2 is above the
 * head, base - 3. A FLAT op (+1 step) leaves steps there and a large AllReduce
 * of 4 ranks would hang so; an LL AllGather or ReduceScatter of 4 ranks (3
 * steps per loop) could as well. */
static __device__ void mk_begin_recv(mk_dev_conn_t* c, int chunkSteps) {
  uint64_t step = c->step, base = steps_op_base(step, chunkSteps);
  if (base != step) mk_post_head(c, step, (int)(base - step));
}

/* Connections back to device memory (their step counters and the head the
 * kernel saw): thread 0, after a block barrier (every thread is done). */
static __device__ void mk_detach_t0(mk_conn_slots* s) {
  for (int k = 0; k < MK_SLOTS; k++) {
    mk_dev_conn_t* g = s->home[k];
    if (!g) continue;
    g->step = s->c[k].step;
    g->headSeen = s->c[k].headSeen;
    s->home[k] = nullptr;
  }
}

/* Bind the primitives of the whole block to these connections (NULL:
 * unused), starting an operation of p->chunkSteps on each: what was bound
 * before goes back to device memory, these come into shared memory. Every
 * thread of the block calls it. */
static __device__ void mk_attach(mk_prims* p, mk_dev_conn_t* recv, mk_dev_conn_t* send, mk_dev_conn_t* recv1,
                                 mk_dev_conn_t* send1) {
  mk_conn_slots* s = p->slots;
  mk_dev_conn_t* g[MK_SLOTS] = {recv, send, recv1, send1};
  __syncthreads();
  if (threadIdx.x == 0) {
    mk_detach_t0(s);
    for (int k = 0; k < MK_SLOTS; k++) {
      if (!g[k]) continue;
      s->home[k] = g[k];
      s->c[k] = *g[k];
      if (k == MK_SLOT_RECV || k == MK_SLOT_RECV1)
        mk_begin_recv(&s->c[k], p->chunkSteps);
      else
        mk_begin(&s->c[k], p->chunkSteps);
    }
  }
  __syncthreads();
  p->recv = recv ? &s->c[MK_SLOT_RECV] : nullptr;
  p->send = send ? &s->c[MK_SLOT_SEND] : nullptr;
  p->recv1 = recv1 ? &s->c[MK_SLOT_RECV1] : nullptr;
  p->send1 = send1 ? &s->c[MK_SLOT_SEND1] : nullptr;
  p->rstep = recv ? p->recv->step : 0;
  p->sstep = send ? p->send->step : 0;
  p->rstep1 = recv1 ? p->recv1->step : 0;
  p->sstep1 = send1 ? p->send1->step : 0;
  mk_dev_conn_t* any = p->recv ? p->recv : p->send;
  p->stepSize = any ? any->stepSize : 0;
}

/* What a tree's MK_PRIMS_BIND needs: the channel and the communicator's size. */
struct mk_tree_exec {
  mk_dev_channel_t* ch;
  int nRanks;
};

/* A tree phase's connections (coll_tree.h): up to two peers each way, the
 * channel's per-peer collective connections. */
static __device__ int mk_prims_bind(mk_prims* p, const mk_tree_exec* x, const int* recvPeers, int nRecv,
                                    const int* sendPeers, int nSend) {
  mk_dev_channel_t* ch = x->ch;
  int n = x->nRanks;
  mk_attach(p, nRecv > 0 ? MK_DEV_CONN(ch, n, MK_DEV_COLL_RECV, recvPeers[0]) : nullptr,
            nSend > 0 ? MK_DEV_CONN(ch, n, MK_DEV_COLL_SEND, sendPeers[0]) : nullptr,
            nRecv > 1 ? MK_DEV_CONN(ch, n, MK_DEV_COLL_RECV, recvPeers[1]) : nullptr,
            nSend > 1 ? MK_DEV_CONN(ch, n, MK_DEV_COLL_SEND, sendPeers[1]) : nullptr);
  return 0;
}

#define MK_PRIMS_BIND(p, ctx, recvPeers, nRecv, sendPeers, nSend) \
  mk_prims_bind((p), (const mk_tree_exec*)(ctx)->exec, (recvPeers), (nRecv), (sendPeers), (nSend))
#include "device/common/coll_tree.h"

/* A send over a connection whose consumer reads the sender's memory (net
 * with GPUDirect RDMA, a registered buffer: the proxy sends from the
 * user's GPU buffer; P2P to a peer of this process, any buffer: its kernel
 * copies from ours): a chunk goes out as its address, posted by thread 0,
 * no data moved here. Returns non-zero when aborted. */
static __device__ int mk_send_addr_chunk(mk_prims* p, const char* src, int64_t bytes) {
  if (p->tid == 0) {
    mk_dev_conn_t* c = p->send;
    if (!mk_wait_room(p, c, p->sstep + 1)) {
      *p->aborted = 1;
    } else {
      mkcclConnFifo_v1* f = &c->connFifo[p->sstep % MKCCL_STEPS];
      f->mode = bytes > 0 ? MKCCL_MODE_PTR : MKCCL_MODE_NORMAL;
      f->ptr = (void*)src;
      mk_post_size(c, p->sstep, bytes);
      mk_fence_sys(); /* the entry before the tail */
      mk_post_tail(c, p->sstep, 1);
    }
  }
  p->sstep += 1;
  return mk_sync_aborted(p);
}

/* Until a FIFO entry's size is -1 again (its consumer is done with it). */
static __device__ bool mk_wait_empty(mk_prims* p, volatile int64_t* size) {
  int spins = 0;
  uint64_t since = 0;
  while (*size >= 0)
    if (++spins == 4096) {
      spins = 0;
      if (!mk_spin_ok(p, false, &since)) return false;
    }
  return true;
}

/* After the last chunk by address: the consumer is done with every step,
 * so the buffer is the user's again when the kernel ends. head catches up;
 * where it counts grants (a pool, MKCCL_CONN_SHARED), the last step's
 * entry is emptied instead (the proxy empties them in step order). */
static __device__ int mk_send_addr_drain(mk_prims* p) {
  if (p->tid == 0) {
    mk_dev_conn_t* c = p->send;
    bool ok = (c->flags & MKCCL_CONN_SHARED) ? mk_wait_empty(p, &c->connFifo[(p->sstep - 1) % MKCCL_STEPS].size)
                                             : mk_wait(p, c->head, p->sstep);
    if (!ok) *p->aborted = 1;
  }
  return mk_sync_aborted(p);
}

/* Where a send's chunks go out by address from (their consumer reads
 * there), or nullptr: they go through the step buffers. */
static __device__ const char* mk_send_addr_base(const mk_work_t* w, const mk_dev_conn_t* c) {
  if (!c || !c->connFifo || !(c->flags & MKCCL_CONN_USE_FIFO)) return nullptr;
  if ((c->flags & MKCCL_CONN_PTR_READ) && ((w->flags & MK_WORK_SEND_REG) || (c->flags & MKCCL_CONN_PTR_ANY)))
    return (const char*)w->sendbuff; /* the proxy, or a peer of this process */
  if ((c->flags & MKCCL_CONN_PTR_PEER) && (w->flags & MK_WORK_SEND_PEER))
    return (const char*)w->sendbuff + w->symmSend; /* where the receiver sees it */
  return nullptr;
}

static __device__ void mk_run_p2p(mk_dev_channel_t* ch, int nRanks, const mk_work_t* w, mk_prims* base, int bid) {
  int64_t chunk = w->chunkSize, sendOff = 0, sendLen = 0, recvOff = 0, recvLen = 0;
  int sendChunks = 0, recvChunks = 0;
  mk_prims sp = *base;
  sp.ts = 1;
  sp.type = ncclUint8;
  sp.op = MK_OP_SUM;
  sp.proto = MK_PROTO_SIMPLE;
  sp.chunkSteps = sp.sliceSteps = 1;
  mk_dev_conn_t *sendConn = nullptr, *recvConn = nullptr;
  if (w->sendBytes >= 0) {
    coll_p2p_part(w->sendBytes, w->nChannels, bid, chunk, &sendOff, &sendLen, &sendChunks);
    sendConn = MK_DEV_CONN(ch, nRanks, MK_DEV_P2P_SEND, w->sendPeer);
  }
  if (w->recvBytes >= 0) {
    coll_p2p_part(w->recvBytes, w->nChannels, bid, chunk, &recvOff, &recvLen, &recvChunks);
    recvConn = MK_DEV_CONN(ch, nRanks, MK_DEV_P2P_RECV, w->recvPeer);
  }
  mk_attach(&sp, recvConn, sendConn, nullptr, nullptr);
  mk_prims rp = sp;
  sp.recv = nullptr;
  rp.send = nullptr;
  if (sp.send) sp.stepSize = sp.send->stepSize;
  if (rp.recv) rp.stepSize = rp.recv->stepSize;
  /* Both ways: half the block sends while the other half receives, each
   * with its own named barrier; one way: the whole block. */
  bool both = sendChunks > 0 && recvChunks > 0;
  int half = blockDim.x / 2;
  bool sends = !both || (int)threadIdx.x < half, recvs = !both || (int)threadIdx.x >= half;
  if (both) {
    sp.tid = threadIdx.x, sp.nthreads = half, sp.bar = 1;
    rp.tid = threadIdx.x - half, rp.nthreads = blockDim.x - half, rp.bar = 2;
  }
  const char* addrBase = sendChunks > 0 ? mk_send_addr_base(w, sp.send) : nullptr;
  bool byAddr = addrBase != nullptr;
  for (int i = 0; i < sendChunks || i < recvChunks; i++) {
    int64_t off = (int64_t)i * chunk;
    const char* src = (const char*)w->sendbuff + sendOff + off;
    if (sends && i < sendChunks &&
        (byAddr ? mk_send_addr_chunk(&sp, addrBase + sendOff + off, coll_clamp(sendLen, off, chunk))
                : mk_prims_chunk(&sp, MK_PRIM_SEND, src, nullptr, coll_clamp(sendLen, off, chunk))))
      return;
    if (recvs && i < recvChunks &&
        mk_prims_chunk(&rp, MK_PRIM_RECV, nullptr, (char*)w->recvbuff + recvOff + off, coll_clamp(recvLen, off, chunk)))
      return;
  }
  if (sends && byAddr) mk_send_addr_drain(&sp);
}

/* A tree item on this channel. Not inlined: the ring path's registers
 * stay as they were without it. */
static __device__ __noinline__ void mk_run_tree(mk_dev_comm_t* comm, mk_dev_channel_t* ch, const mk_work_t* w,
                                                int channel, int bid, mk_prims* p) {
  int up, down[MK_TREE_MAX_DOWN];
  sched_tree_ranks(comm->nRanks, ch->ringRanks, ch->ringIndex, channel, w->coll, w->root, &up, down);
  mk_tree_exec x = {ch, comm->nRanks};
  mk_tree_ctx_t t;
  coll_tree_ctx_init(&t, up, down, bid, w->chunkSize, p->ts, &x);
  coll_tree_run(p, w, &t);
}

/* A device-resident PreMulSum operand's bits, read as the item runs (so a
 * replayed graph reads the value of its replay). */
static __device__ __forceinline__ uint64_t mk_scalar_load(const void* p, int ts) {
  switch (ts) {
    case 1: return *(const volatile uint8_t*)p;
    case 2: return *(const volatile uint16_t*)p;
    case 4: return *(const volatile uint32_t*)p;
    default: return *(const volatile uint64_t*)p;
  }
}

/* The primitives' state for item w on `channel`, common to both kernels. */
static __device__ __forceinline__ void mk_prims_setup(mk_prims& p, mk_dev_comm_t* comm, const mk_work_t* w, int channel,
                                                      int* aborted, char* scratch, mk_conn_slots* slots,
                                                      uint64_t* traceStart) {
  p.slots = slots;
  p.trace = channel == 0 && comm->traceCap ? comm->trace : nullptr;
  p.traceCap = comm->traceCap;
  p.traceStart = traceStart;
  p.rstep = p.sstep = p.rstep1 = p.sstep1 = 0;
  int chunkSteps, sliceSteps;
  mk_coll_shape_proto(w->coll, w->algo, w->proto, &chunkSteps, &sliceSteps);
  p.chunkSteps = chunkSteps;
  p.sliceSteps = sliceSteps;
  p.type = w->type;
  p.op = w->op;
  p.ts = w->coll == MK_COLL_SENDRECV ? 1 : mk_type_size(w->type);
  p.scalar = (w->flags & MK_WORK_SCALAR_PTR) ? mk_scalar_load((const void*)(uintptr_t)w->scalar, p.ts) : w->scalar;
  p.abortFlag = comm->abortFlag;
  p.timeoutNs = comm->timeoutNs;
  p.aborted = aborted;
  p.row = comm->status ? comm->status + (size_t)channel * MK_DEV_STATUS_WORDS : nullptr;
  p.status = comm->traceStatus ? p.row : nullptr;
  p.unpackScratch = scratch;
  p.ticks = 0;
  p.proto = w->proto == MK_PROTO_LL ? MK_PROTO_LL : MK_PROTO_SIMPLE;
  p.tid = threadIdx.x, p.nthreads = blockDim.x, p.bar = 0;
  p.recv = p.send = p.recv1 = p.send1 = nullptr;
  if (threadIdx.x == 0) mk_status(p.status, MK_STATUS_OP, w->opCount + 1);
}

/* A ring item: its connections bound, then the collective's schedule. */
template <typename P>
static __device__ __forceinline__ void mk_run_ring(P& p, mk_dev_comm_t* comm, mk_dev_channel_t* ch, const mk_work_t* w,
                                                   int bid) {
  mk_ring_ctx_t c;
  c.nRanks = comm->nRanks;
  c.ringIx = ch->ringIndex;
  c.ringRanks = ch->ringRanks;
  c.bid = bid;
  c.ts = p.ts;
  c.align = mk_elem_align(p.ts);
  c.chunkElems = w->chunkSize / p.ts;
  int recvs, sends;
  coll_ring_uses(&c, w, &recvs, &sends);
  mk_trace(&p, MK_EV_RUN, 0, 0, 0);
  mk_attach(&p, recvs ? MK_DEV_CONN(ch, comm->nRanks, MK_DEV_COLL_RECV, ch->ringPrev) : nullptr,
            sends ? MK_DEV_CONN(ch, comm->nRanks, MK_DEV_COLL_SEND, ch->ringNext) : nullptr, nullptr, nullptr);
  mk_trace(&p, MK_EV_BOUND, 0, 0, 0);
  coll_ring_run(&p, w, &c);
}

static __device__ void mk_run(mk_dev_comm_t* comm, mk_dev_channel_t* ch, const mk_work_t* w, int channel, int* aborted,
                              char* scratch, mk_conn_slots* slots, uint64_t* traceStart) {
  if (w->algo == MK_ALGO_SYMM) { /* the peers' windows, no connection */
    mk_run_symm(comm, w, channel, aborted);
    return;
  }
  mk_prims p;
  mk_prims_setup(p, comm, w, channel, aborted, scratch, slots, traceStart);
  int bid = channel - w->channelLo;
  /* (Send/Recv to itself never comes here: the planner copies on the stream.) */
  if (w->coll == MK_COLL_SENDRECV) {
    mk_run_p2p(ch, comm->nRanks, w, &p, bid);
    return;
  }
  if (comm->nRanks == 1) {
    /* A communicator of one: the result is the input (pre/post applied). */
    int64_t off, len;
    int chunks;
    coll_p2p_part((int64_t)w->count * p.ts, w->nChannels, bid, w->chunkSize, &off, &len, &chunks);
    if (len > 0) mk_move(p, p.op, nullptr, (const char*)w->sendbuff + off, (char*)w->recvbuff + off, nullptr, len / p.ts, 1);
    return;
  }
  if (w->algo == MK_ALGO_TREE) {
    mk_run_tree(comm, ch, w, channel, bid, &p);
    return;
  }
  if (w->algo == MK_ALGO_FLAT) {
    mk_run_flat(comm, ch, w, &p);
    return;
  }
  mk_run_ring(p, comm, ch, w, bid);
}

/* The LL-only kernel's items: FLAT, or a ring in LL, on 2+ ranks (the host
 * launches nothing else on it: mk_works_ll_only, device/common/work.h). */
static __device__ void mk_run_ll(mk_dev_comm_t* comm, mk_dev_channel_t* ch, const mk_work_t* w, int channel,
                                 int* aborted, char* scratch, mk_conn_slots* slots, uint64_t* traceStart) {
  mk_prims_ll p;
  mk_prims_setup(p, comm, w, channel, aborted, scratch, slots, traceStart);
  if (w->algo == MK_ALGO_FLAT)
    mk_run_flat(comm, ch, w, &p);
  else
    mk_run_ring(p, comm, ch, w, channel - w->channelLo);
}

/* The kernels' body: the items of one launch, each on the channels it
 * uses. LL: the LL-only kernel (small items: its code is a fraction of the
 * full kernel's, so a launch fetches less of it). */
template <bool LL>
static __device__ __forceinline__ void mk_kernel_main(const mk_kernel_args_t& args) {
  __shared__ mk_work_t work;
  __shared__ int aborted;
  __shared__ mk_conn_slots slots;
  __shared__ uint64_t traceStart[2];
  __shared__ uint32_t traceCap; /* thread 0's copy of the communicator's */
#ifdef MKCCL_KERNEL_UNPACK
  __shared__ __align__(16) char scratch[MK_UNPACK_SCRATCH];
#else
  char* scratch = nullptr;
#endif
  int channel = (int)args.channelLo + (int)blockIdx.x;
  mk_dev_channel_t* ch = &args.comm->channels[channel];
  if (threadIdx.x == 0) {
    aborted = 0;
    for (int k = 0; k < MK_SLOTS; k++) slots.home[k] = nullptr;
    traceStart[0] = mk_globaltimer();
    traceCap = args.comm->traceCap; /* with the start's other loads: none at the kernel's end */
    if (args.comm->traceStatus && args.comm->status)
      args.comm->status[channel * MK_DEV_STATUS_WORDS + MK_STATUS_TICKS] += 1000000;
  }
  for (uint32_t i = 0; i < args.nWorks; i++) {
    if (threadIdx.x < sizeof(mk_work_t) / 16) {
      uint4 v;
      if (args.inlined) {
        v = ((const uint4*)&args.works[i])[threadIdx.x];
      } else {
        /* The FIFO is host memory the host rewrites: read it fresh, 16 bytes a read. */
        uint32_t off = (args.workOffset + i * (uint32_t)sizeof(mk_work_t) + threadIdx.x * 16) & args.workMask;
        v = mk_ld_volatile_v4(args.workBuf + off);
      }
      ((uint4*)&work)[threadIdx.x] = v;
    }
    __syncthreads();
    if (channel >= work.channelLo && channel < work.channelLo + work.nChannels && !aborted) {
      if (LL)
        mk_run_ll(args.comm, ch, &work, channel, &aborted, scratch, &slots, traceStart);
      else
        mk_run(args.comm, ch, &work, channel, &aborted, scratch, &slots, traceStart);
    }
    __syncthreads();
    if (threadIdx.x == 0) mk_detach_t0(&slots); /* before the next item's barrier */
  }
  if (channel == 0 && threadIdx.x == 0 && traceCap)
    mk_trace_at(args.comm->trace, traceCap, traceStart, MK_EV_END, 0, 0, 0);
}

/* One CTA per SM (minBlocks 1): ptxas may then give a thread 128 registers.
 * Without it, it chooses fewer and spills the data loops' vectors to local
 * memory, and a CTA moves a fraction of what it can. */
extern "C" __global__ void __launch_bounds__(MK_KERNEL_THREADS, 1) mkccl_kernel(mk_kernel_args_t args) {
  mk_kernel_main<false>(args);
}

extern "C" __global__ void __launch_bounds__(MK_KERNEL_THREADS, 1) mkccl_kernel_ll(mk_kernel_args_t args) {
  mk_kernel_main<true>(args);
}
