/* The LL protocol: each 16-byte line carries 8 data bytes
 * and the step's flag twice, {data1, flag1, data2, flag2}, stored in one
 * vector store. The receiver polls its own lines until both flags say this
 * step, so a hop costs one store across the link: no system fence, no tail,
 * no block barrier between the wait and the data. Only the head (the
 * sender's credit) is posted as in Simple. A chunk is one step; its lines
 * sit in the receiver's memory (transport-p2p), each thread moves its own.
 * Included by kernels.cu after mk_prims and its helpers. */
#ifndef MKCCL_CUDA_PRIMS_LL_CUH
#define MKCCL_CUDA_PRIMS_LL_CUH

/* 8 bytes of an element run: the line's data, folded per type and op. */
template <typename T, int OP>
static __device__ __forceinline__ uint64_t mk_ll_fold(bool hasA, bool hasB, uint64_t x, uint64_t y, uint64_t scalarBits,
                                                      bool post) {
  return mk_combine_pack<T, OP, uint64_t>(hasA, hasB, x, y, mk_scalar<T>(scalarBits, OP), post && OP == MK_OP_SUMPOSTDIV);
}

template <typename T>
static __device__ uint64_t mk_ll_fold_op(int op, bool hasA, bool hasB, uint64_t x, uint64_t y, uint64_t s, bool post) {
  switch (op) {
    case MK_OP_PROD: return mk_ll_fold<T, MK_OP_PROD>(hasA, hasB, x, y, s, post);
    case MK_OP_MAX: return mk_ll_fold<T, MK_OP_MAX>(hasA, hasB, x, y, s, post);
    case MK_OP_MIN: return mk_ll_fold<T, MK_OP_MIN>(hasA, hasB, x, y, s, post);
    case MK_OP_PREMULSUM: return mk_ll_fold<T, MK_OP_PREMULSUM>(hasA, hasB, x, y, s, post);
    case MK_OP_SUMPOSTDIV: return mk_ll_fold<T, MK_OP_SUMPOSTDIV>(hasA, hasB, x, y, s, post);
    default: return mk_ll_fold<T, MK_OP_SUM>(hasA, hasB, x, y, s, post);
  }
}

/* x: received, y: this rank's input (either may be absent), for `type`
 * and `op`. Small messages only, so one switch per line costs nothing that
 * matters, and keeps the kernel's instantiations (and CI's build time) down. */
static __device__ __noinline__ uint64_t mk_ll_fold_with(int type, int op, uint64_t scalar, bool hasA, bool hasB,
                                                        uint64_t x, uint64_t y, bool post) {
  switch (type) {
    case ncclInt8: return mk_ll_fold_op<int8_t>(op, hasA, hasB, x, y, scalar, post);
    case ncclUint8: return mk_ll_fold_op<uint8_t>(op, hasA, hasB, x, y, scalar, post);
    case ncclInt32: return mk_ll_fold_op<int32_t>(op, hasA, hasB, x, y, scalar, post);
    case ncclUint32: return mk_ll_fold_op<uint32_t>(op, hasA, hasB, x, y, scalar, post);
    case ncclInt64: return mk_ll_fold_op<int64_t>(op, hasA, hasB, x, y, scalar, post);
    case ncclUint64: return mk_ll_fold_op<uint64_t>(op, hasA, hasB, x, y, scalar, post);
    case ncclFloat16: return mk_ll_fold_op<__half>(op, hasA, hasB, x, y, scalar, post);
    case ncclFloat32: return mk_ll_fold_op<float>(op, hasA, hasB, x, y, scalar, post);
    case ncclFloat64: return mk_ll_fold_op<double>(op, hasA, hasB, x, y, scalar, post);
    case ncclBfloat16: return mk_ll_fold_op<__nv_bfloat16>(op, hasA, hasB, x, y, scalar, post);
    case ncclFloat8e4m3: return mk_ll_fold_op<__nv_fp8_e4m3>(op, hasA, hasB, x, y, scalar, post);
    default: return mk_ll_fold_op<__nv_fp8_e5m2>(op, hasA, hasB, x, y, scalar, post);
  }
}

static __device__ __forceinline__ uint64_t mk_ll_fold_any(const mk_prims* p, bool hasA, bool hasB, uint64_t x, uint64_t y,
                                                          bool post) {
  return mk_ll_fold_with(p->type, p->op, p->scalar, hasA, hasB, x, y, post);
}

/* Up to 8 bytes of user memory; byte by byte where the address or the
 * length does not allow one 8-byte access (int8 buffers may start anywhere). */
static __device__ __forceinline__ uint64_t mk_ll_load(const char* src, int len) {
  if (len == 8 && ((uintptr_t)src & 7) == 0) return *(const uint64_t*)src;
  uint64_t v = 0;
  for (int k = 0; k < len; k++) v |= (uint64_t)(uint8_t)src[k] << (8 * k);
  return v;
}
static __device__ __forceinline__ void mk_ll_store(char* dst, uint64_t v, int len) {
  if (len == 8 && ((uintptr_t)dst & 7) == 0) {
    *(uint64_t*)dst = v;
    return;
  }
  for (int k = 0; k < len; k++) dst[k] = (char)(v >> (8 * k));
}

static __device__ __forceinline__ void mk_ll_put(char* line, uint64_t v, uint32_t flag) {
  mk_st_volatile_v4(line, make_uint4((uint32_t)v, flag, (uint32_t)(v >> 32), flag));
}

/* Poll one line until it carries `flag` in both halves (each 8-byte half is
 * stored whole, so both flags right means both data words are). Every 4096
 * polls: another thread's abort, then mk_spin_ok (no progress short of the
 * line itself). */
static __device__ bool mk_ll_get(const mk_prims* p, const char* line, uint32_t flag, uint64_t* out) {
  int spins = 0;
  uint64_t since = 0;
  for (;;) {
    uint4 l = mk_ld_volatile_v4(line); /* {data1, flag1, data2, flag2} */
    if (l.y == flag && l.w == flag) {
      *out = (uint64_t)l.x | (uint64_t)l.z << 32;
      return true;
    }
    if (++spins < 4096) continue;
    spins = 0;
    if (*(volatile int*)p->aborted || !mk_spin_ok(p, false, &since)) return false;
  }
}

/* One chunk (one step on each connection used) in LL. Non-zero when aborted. */
static __device__ int mk_prims_chunk_ll(mk_prims* p, int prim, const char* src, char* dst, int64_t nelem) {
  bool recv = mk_prim_recvs(prim), send = mk_prim_sends(prim);
  bool useSrc = mk_prim_reads_src(prim), useDst = mk_prim_writes_dst(prim);
  bool final = mk_prim_is_final(prim);
  bool arith = (recv && useSrc) || (useSrc && p->op == MK_OP_PREMULSUM) || (final && p->op == MK_OP_SUMPOSTDIV);
  int64_t bytes = nelem * p->ts;
  uint64_t rstep = p->rstep, sstep = p->sstep;
  mk_trace(p, MK_EV_SLICE, prim, 0, bytes);
  if (send) { /* a free slot: the receiver is done with the step MKCCL_STEPS back */
    if (p->tid == 0 && !mk_wait_room(p, p->send, sstep + 1)) *p->aborted = 1;
    if (mk_sync_aborted(p)) return 1;
    mk_trace(p, MK_EV_WAITED, prim, 0, bytes);
  }
  const char* rl = recv ? p->recv->llBuff + (size_t)(rstep % MKCCL_STEPS) * p->recv->llStepSize : nullptr;
  char* sl = send ? p->send->llBuff + (size_t)(sstep % MKCCL_STEPS) * p->send->llStepSize : nullptr;
  uint32_t rflag = (uint32_t)(rstep + 1), sflag = (uint32_t)(sstep + 1); /* never 0: zeroed lines are no step */
  int64_t lines = (bytes + 7) / 8;
  for (int64_t i = p->tid; i < lines; i += p->nthreads) {
    int len = bytes - i * 8 < 8 ? (int)(bytes - i * 8) : 8;
    uint64_t in = 0, mine = 0, v;
    if (recv && !mk_ll_get(p, rl + i * 16, rflag, &in)) {
      *(volatile int*)p->aborted = 1;
      break;
    }
    if (useSrc) mine = mk_ll_load(src + i * 8, len);
    v = arith ? mk_ll_fold_any(p, recv, useSrc, in, mine, final) : (recv ? in : mine);
    if (send) mk_ll_put(sl + i * 16, v, sflag);
    if (useDst) mk_ll_store(dst + i * 8, v, len);
  }
  if (mk_sync_aborted(p)) return 1;
  mk_trace(p, MK_EV_DATA, prim, 0, bytes);
  if (p->tid == 0) {
    if (recv) mk_post_head(p->recv, rstep, 1); /* every thread has read its lines (the barrier): the slot is free */
    if (send) p->send->step = sstep + 1;
  }
  /* No barrier: every thread counts the steps itself (as in mk_prims_chunk). */
  if (recv) p->rstep = rstep + 1;
  if (send) p->sstep = sstep + 1;
  return 0;
}

/* Where step `step` of connection c keeps its lines. */
static __device__ __forceinline__ char* mk_ll_slot(const mk_dev_conn_t* c, uint64_t step) {
  return c->llBuff + (size_t)(step % MKCCL_STEPS) * c->llStepSize;
}

/* FLAT AllReduce in LL, on channel 0's collective connections to every
 * other rank (one step on each): this rank's input, pre-multiplied, goes to
 * every peer as lines; then every rank's lines are combined in rank order,
 * so all ranks get the same bits. One hop where a ring takes 2(N-1): the
 * host's FLAT (host_prims_flat) on the GPU. Non-zero when aborted. */
static __device__ __noinline__ int mk_run_flat(mk_dev_comm_t* comm, mk_dev_channel_t* ch, const mk_work_t* w,
                                               mk_prims* p) {
  int n = comm->nRanks, me = comm->rank;
  int64_t bytes = (int64_t)w->count * p->ts, lines = (bytes + 7) / 8;
  mk_trace(p, MK_EV_SLICE, 0, 0, bytes);
  if (p->tid == 0) /* a free slot on every send connection */
    for (int q = 0; q < n; q++) {
      if (q == me) continue;
      mk_dev_conn_t* s = MK_DEV_CONN(ch, n, MK_DEV_COLL_SEND, q);
      if (!mk_wait_room(p, s, s->step + 1)) {
        *p->aborted = 1;
        break;
      }
    }
  if (mk_sync_aborted(p)) return 1;
  mk_trace(p, MK_EV_WAITED, 0, 0, bytes);
  const char* src = (const char*)w->sendbuff;
  char* dst = (char*)w->recvbuff;
  int fold = p->op == MK_OP_PREMULSUM ? MK_OP_SUM : p->op; /* the lines are pre-multiplied already */
  for (int64_t i = p->tid; i < lines; i += p->nthreads) {
    int len = bytes - i * 8 < 8 ? (int)(bytes - i * 8) : 8;
    uint64_t mine = mk_ll_fold_any(p, false, true, 0, mk_ll_load(src + i * 8, len), false);
    for (int q = 0; q < n; q++) {
      if (q == me) continue;
      const mk_dev_conn_t* s = MK_DEV_CONN(ch, n, MK_DEV_COLL_SEND, q);
      mk_ll_put(mk_ll_slot(s, s->step) + i * 16, mine, (uint32_t)(s->step + 1));
    }
    uint64_t acc = 0;
    for (int r = 0; r < n; r++) {
      uint64_t x = mine;
      if (r != me) {
        const mk_dev_conn_t* c = MK_DEV_CONN(ch, n, MK_DEV_COLL_RECV, r);
        if (!mk_ll_get(p, mk_ll_slot(c, c->step) + i * 16, (uint32_t)(c->step + 1), &x)) {
          *(volatile int*)p->aborted = 1;
          break;
        }
      }
      acc = r == 0 ? x : mk_ll_fold_with(p->type, fold, p->scalar, true, true, acc, x, r == n - 1);
    }
    if (*(volatile int*)p->aborted) break;
    mk_ll_store(dst + i * 8, acc, len);
  }
  if (mk_sync_aborted(p)) return 1;
  mk_trace(p, MK_EV_DATA, 0, 0, bytes);
  if (p->tid == 0)
    for (int q = 0; q < n; q++) {
      if (q == me) continue;
      mk_dev_conn_t* r = MK_DEV_CONN(ch, n, MK_DEV_COLL_RECV, q);
      mk_post_head(r, r->step, 1); /* every thread has read its lines (the barrier) */
      MK_DEV_CONN(ch, n, MK_DEV_COLL_SEND, q)->step += 1;
    }
  mk_sync(p);
  return 0;
}

#endif
