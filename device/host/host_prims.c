#include "host_prims.h"
#include "host_prims_slice.h"

#include <string.h>

#include "base/clock.h"
#include "base/err.h"
#include "device/common/work.h"

#include "device/common/sched_ring.h"
#include "transport/mkccl_conn_fifo_v1.h"
#include "host_wait.h"
#include "netdev/netdev.h"

void host_prims_begin(host_prims_t* p) {
  for (int i = 0; i < p->nRecv; i++) {
    uint64_t step = *p->recv[i].step, base = steps_op_base(step, p->shape.chunkSteps);
    /* Steps skipped by the rounding were never sent: hand their slots back
     * now (as NCCL's primitives do), or a sender that wraps onto them waits
     * for a release that only comes after it has sent. */
    if (base != step) conn_fifo_store(p->recv[i].info->head, base);
    *p->recv[i].step = base;
  }
  for (int i = 0; i < p->nSend; i++) *p->send[i].step = steps_op_base(*p->send[i].step, p->shape.chunkSteps);
}

/* Where a received step's data is: its slot, or what the FIFO says. */
static char* host_prims_recv_ptr(host_conn_t* c, uint64_t step, int stepSize) {
  mkcclConnInfo_v1* info = c->info;
  int slot = conn_fifo_slot(step);
  if (info->connFifo && (info->flags & MKCCL_CONN_USE_FIFO)) {
    mkcclConnFifo_v1* f = &info->connFifo[slot];
    if (f->mode == MKCCL_MODE_OFFSET) return info->buffs[MKCCL_PROTO_SIMPLE] + f->offset;
    if (f->mode == MKCCL_MODE_PTR) return (char*)f->ptr;
  }
  return info->buffs[MKCCL_PROTO_SIMPLE] + (size_t)slot * stepSize;
}

static char* host_prims_send_ptr(host_conn_t* c, uint64_t step, int stepSize) {
  mkcclConnInfo_v1* info = c->info;
  int slot = conn_fifo_slot(step);
  if ((info->flags & MKCCL_CONN_SHARED) && info->connFifo)
    return info->buffs[MKCCL_PROTO_SIMPLE] + info->connFifo[slot].offset;
  return info->buffs[MKCCL_PROTO_SIMPLE] + (size_t)slot * stepSize;
}

/* The FIFO words are used only by connections that say so. */
static mkcclConnFifo_v1* host_prims_fifo(host_conn_t* c) {
  return (c->info->flags & MKCCL_CONN_USE_FIFO) ? c->info->connFifo : NULL;
}

static ncclResult_t host_prims_wait_end(host_prims_t* p, int waited, const char* what) {
  if (waited == HOST_WAIT_OK) return ncclSuccess;
  if (waited == HOST_WAIT_TIMEOUT) host_wait_timed_out(p->abortFlag, what);
  return ncclRemoteError;
}

/* Until the peer's `word` reaches target. A wait the last value read
 * already satisfies reads nothing: the word's cache line stays with the
 * peer, which writes it (on 2 ranks over SHM, each read of a line the
 * other core wrote costs a transfer on the small-message path). */
ncclResult_t host_prims_wait_peer(host_prims_t* p, host_conn_t* c, volatile uint64_t* word, uint64_t target,
                                         const char* what) {
  if (*c->seen >= target) return ncclSuccess;
  int w = host_wait_ge(word, target, p->abortFlag, c->proxyLane);
  if (w == HOST_WAIT_OK) *c->seen = conn_fifo_load(word);
  return host_prims_wait_end(p, w, what);
}

/* Published: tail past the slice's last step. */
static ncclResult_t host_prims_wait_recv(host_prims_t* p, host_conn_t* c, uint64_t last) {
  return host_prims_wait_peer(p, c, c->info->tail, last + 1, "data from a receive peer");
}

/* The head a send connection needs before writing steps below `end`:
 * within MKCCL_STEPS of it (head counts freed steps), or, in OFFSET mode,
 * past it (head counts steps the proxy granted a pool slot, whose offset
 * is then in connFifo). */
static uint64_t host_prims_room_target(const host_conn_t* c, uint64_t end) {
  if (c->info->flags & MKCCL_CONN_SHARED) return end;
  return end > MKCCL_STEPS ? end - MKCCL_STEPS : 0;
}

/* Free: the slice's last step may be written. */
static ncclResult_t host_prims_wait_send(host_prims_t* p, host_conn_t* c, uint64_t last) {
  return host_prims_wait_peer(p, c, c->info->head, host_prims_room_target(c, last + 1), "a free slot from a send peer");
}

/* Whether the peer's word has reached target (no wait). */
static int host_prims_peer_at(host_conn_t* c, volatile uint64_t* word, uint64_t target) {
  if (*c->seen >= target) return 1;
  uint64_t v = conn_fifo_load(word);
  if (v < target) return 0;
  *c->seen = v;
  return 1;
}

int host_prims_ready(host_prims_t* p, int prim) {
  steps_shape_t s = p->shape;
  if (mk_prim_recvs(prim))
    for (int i = 0; i < p->nRecv; i++)
      if (!host_prims_peer_at(&p->recv[i], p->recv[i].info->tail, *p->recv[i].step + s.sliceSteps)) return 0;
  if (mk_prim_sends(prim))
    for (int i = 0; i < p->nSend; i++) {
      uint64_t end = *p->send[i].step + s.sliceSteps;
      if (!host_prims_peer_at(&p->send[i], p->send[i].info->head, host_prims_room_target(&p->send[i], end))) return 0;
    }
  return 1;
}

/* A recv connection's current slice, once published (and, with a device
 * offload, unpacked into its slots): where its data is. */
ncclResult_t host_prims_slice_in(host_prims_t* p, host_conn_t* c, steps_shape_t s, const char** in) {
  uint64_t step = *c->step;
  if (host_prims_wait_recv(p, c, step + s.sliceSteps - 1) != ncclSuccess) return ncclRemoteError;
  /* Device offload: the slice's receive landed elsewhere (UNPACK: pages in
   * a bounce buffer); bring it into its slots first. */
  if (c->info->netDeviceHandle &&
      netdev_host_unpack(c->info->netDeviceHandle, host_prims_recv_ptr(c, step, s.stepSize),
                         (size_t)s.stepSize * (size_t)s.sliceSteps) != ncclSuccess)
    return ncclInternalError;
  *in = host_prims_recv_ptr(c, step, s.stepSize);
  return ncclSuccess;
}

/* A send connection's current slice, once free: where to write it. */
ncclResult_t host_prims_slice_out(host_prims_t* p, host_conn_t* c, steps_shape_t s, char** out) {
  uint64_t step = *c->step;
  if (host_prims_wait_send(p, c, step + s.sliceSteps - 1) != ncclSuccess) return ncclRemoteError;
  *out = host_prims_send_ptr(c, step, s.stepSize);
  return ncclSuccess;
}

/* Done with a received slice: its slots go back to the sender. */
void host_prims_slice_release(host_conn_t* c, steps_shape_t s) {
  uint64_t step = *c->step;
  conn_fifo_release(host_prims_fifo(c), c->info->head, step, s.sliceSteps);
  *c->step = step + s.sliceSteps;
}

/* A written slice of `bytes` goes to the receiver. */
void host_prims_slice_publish(host_conn_t* c, steps_shape_t s, int64_t bytes) {
  uint64_t step = *c->step;
  conn_fifo_publish(host_prims_fifo(c), c->info->tail, step, s.sliceSteps, bytes);
  *c->step = step + s.sliceSteps;
}

/* The op for folding a further received input into a partial result:
 * both are already pre-multiplied, and only the last fold is final. */
static host_redop_t host_prims_fold_op(const host_redop_t* r) {
  host_redop_t f = *r;
  if (f.op == MK_OP_PREMULSUM) f.op = MK_OP_SUM;
  return f;
}

/* One slice's data: combine the received inputs and the local one into the
 * first destination (the first send slot, else the user output), mirror it
 * to the user output, then copy it to the other send slots. */
static void host_prims_move(host_prims_t* p, const char* const* in, int nIn, const char* mine, char* const* out,
                            int nOut, char* user, int64_t bytes, int final, int raw) {
  size_t n = (size_t)(bytes / (int64_t)p->typeSize);
  char* d1 = nOut ? out[0] : user;
  char* d2 = nOut ? user : NULL;
  if (!d1) return;
  host_redop_t fold = host_prims_fold_op(&p->redop);
  host_reduce_copy(raw ? &fold : &p->redop, d1, d2, nIn ? in[0] : NULL, mine, n, final && nIn <= 1);
  for (int i = 1; i < nIn; i++) host_reduce_copy(&fold, d1, d2, in[i], d1, n, final && i == nIn - 1);
  for (int i = 1; i < nOut; i++) memcpy(out[i], d1, (size_t)bytes);
}

/* The same with streaming stores to the send slots (host_store.h): block by
 * block, the result is made in the user buffer (or a scratch block) with
 * cached stores, then streamed to each slot while it is still in cache. */
static void host_prims_move_streamed(host_prims_t* p, const char* const* in, int nIn, const char* mine,
                                     char* const* out, int nOut, char* user, int64_t bytes, int final, int raw) {
  host_redop_t fold = host_prims_fold_op(&p->redop);
  for (int64_t off = 0; off < bytes; off += HOST_STORE_BLOCK) {
    int64_t len = bytes - off < HOST_STORE_BLOCK ? bytes - off : HOST_STORE_BLOCK;
    size_t n = (size_t)(len / (int64_t)p->typeSize);
    char* d = user ? user + off : p->store->scratch;
    host_reduce_copy(raw ? &fold : &p->redop, d, NULL, nIn ? in[0] + off : NULL, mine ? mine + off : NULL, n,
                     final && nIn <= 1);
    for (int i = 1; i < nIn; i++) host_reduce_copy(&fold, d, NULL, in[i] + off, d, n, final && i == nIn - 1);
    for (int i = 0; i < nOut; i++) host_copy_stream(out[i] + off, d, (size_t)len);
  }
  host_store_fence();
}

/* One slice's move, in the store mode the channel picks for its size, timed
 * when the channel compares the modes. */
void host_prims_move_slice(host_prims_t* p, const char* const* in, int nIn, const char* mine, char* const* out,
                           int nOut, char* user, int64_t bytes, int final, int raw) {
  int mode = nOut ? host_store_pick(p->store, bytes) : HOST_STORE_CACHED;
  int timed = nOut && host_store_measures(p->store, bytes);
  int64_t t0 = timed ? mk_now_ns() : 0;
  if (mode == HOST_STORE_STREAM)
    host_prims_move_streamed(p, in, nIn, mine, out, nOut, user, bytes, final, raw);
  else
    host_prims_move(p, in, nIn, mine, out, nOut, user, bytes, final, raw);
  if (timed) host_store_note(p->store, mode, bytes, mk_now_ns() - t0);
}

ncclResult_t host_prims_chunk(host_prims_t* p, int prim, const void* src, void* dst, int64_t nelem) {
  if (p->ptrPath && (prim == MK_PRIM_COPY_SEND || prim == MK_PRIM_RECV_COPY_SEND || prim == MK_PRIM_RECV))
    return host_prims_chunk_ptr(p, prim, src, dst, nelem);
  int nRecv = mk_prim_recvs(prim) ? p->nRecv : 0, nSend = mk_prim_sends(prim) ? p->nSend : 0;
  int useSrc = mk_prim_reads_src(prim), useDst = mk_prim_writes_dst(prim), final = mk_prim_is_final(prim);
  steps_shape_t s = p->shape;
  int64_t chunkBytes = nelem * (int64_t)p->typeSize;
  int slices = steps_slices_per_chunk(s);
  int64_t done = 0;
  for (int slice = 0; slice < slices; slice++) {
    int64_t bytes = steps_slice_len(s, chunkBytes, slice);
    const char* in[HOST_PRIMS_MAX_PEERS];
    char* out[HOST_PRIMS_MAX_PEERS];
    for (int i = 0; i < nRecv; i++) MK_CHECK(host_prims_slice_in(p, &p->recv[i], s, &in[i]));
    for (int i = 0; i < nSend; i++) MK_CHECK(host_prims_slice_out(p, &p->send[i], s, &out[i]));
    /* A receive the proxy landed in place (PTR mode, at the destination)
     * has nothing left to move. */
    int landed = nRecv == 1 && nSend == 0 && useDst && !useSrc && in[0] == (const char*)dst + done;
    if (bytes > 0 && !landed)
      host_prims_move_slice(p, in, nRecv, useSrc ? (const char*)src + done : NULL, out, nSend,
                            useDst ? (char*)dst + done : NULL, bytes, final, mk_prim_is_raw(prim));
    for (int i = 0; i < nRecv; i++) host_prims_slice_release(&p->recv[i], s);
    for (int i = 0; i < nSend; i++) host_prims_slice_publish(&p->send[i], s, bytes);
    done += bytes;
  }
  return ncclSuccess;
}

/* ---- LL lines (one 64-byte line a step, where a host transport offers them) ----
 * The GPU's LL format: 16 bytes per 8 data bytes, two 8-byte words of {4
 * data bytes, 4 flag bytes}, the flag the step + 1 (never 0: a zeroed line
 * is no step). A word is stored and loaded whole, so a reader that sees its
 * step's flag in a word has that word's data: the receiver reads the one
 * line the sender wrote, where Simple has it read the tail, then the data. */
#define HOST_LL_DATA_MAX 32 /* data bytes of a 64-byte line */

static int host_prims_ll_ok(const host_conn_t* c, size_t bytes) {
  const mkcclConnInfo_v1* i = c->info;
  return bytes > 0 && bytes <= HOST_LL_DATA_MAX && i->buffs[MKCCL_PROTO_LL] && !(i->flags & MKCCL_CONN_PROXY) &&
         (size_t)i->stepSize[MKCCL_PROTO_LL] >= 2 * bytes;
}

static uint64_t* host_prims_ll_words(const host_conn_t* c, uint64_t step) {
  const mkcclConnInfo_v1* i = c->info;
  return (uint64_t*)(i->buffs[MKCCL_PROTO_LL] + (size_t)conn_fifo_slot(step) * (size_t)i->stepSize[MKCCL_PROTO_LL]);
}

/* Store `nWords` data words (<= HOST_LL_DATA_MAX / 4) as this step's line
 * once the slot is free, back to back. The caller then publishes the step
 * (host_prims_slice_publish), so the tail and the step counters stay what
 * Simple expects. */
static inline ncclResult_t host_prims_ll_put(host_prims_t* p, host_conn_t* c, steps_shape_t s,
                                             const uint32_t* words, size_t nWords) {
  uint64_t step = *c->step;
  if (host_prims_wait_send(p, c, step + s.sliceSteps - 1) != ncclSuccess) return ncclRemoteError;
  uint64_t* w = host_prims_ll_words(c, step);
  uint64_t flag = (uint64_t)(uint32_t)(step + 1) << 32;
  for (size_t k = 0; k < nWords; k++) __atomic_store_n(&w[k], flag | words[k], __ATOMIC_RELAXED);
  return ncclSuccess;
}

/* The same for `bytes` (<= HOST_LL_DATA_MAX) anywhere. The words are made
 * first and stored back to back: a byte copy between two stores to the
 * line waited behind the first one's fetch of the line (the reader holds
 * it), and the reader took it back in between. */
static ncclResult_t host_prims_ll_write(host_prims_t* p, host_conn_t* c, steps_shape_t s, const char* data, size_t bytes) {
  uint32_t d[HOST_LL_DATA_MAX / 4] = {0};
  memcpy(d, data, bytes);
  return host_prims_ll_put(p, c, s, d, (bytes + 3) / 4);
}

/* This step's line: its first `nWords` data words into out, every word
 * waited for until it has the flag (whole words: out holds a line's data). */
static inline ncclResult_t host_prims_ll_recv(host_prims_t* p, host_conn_t* c, uint32_t* out, size_t nWords) {
  uint64_t step = *c->step;
  uint64_t* w = host_prims_ll_words(c, step);
  uint32_t flag = (uint32_t)(step + 1);
  for (size_t k = 0; k < nWords; k++) {
    uint64_t v;
    int res = host_wait_flag(&w[k], flag, c->info->tail, step + 1, p->abortFlag, &v);
    if (res != HOST_WAIT_OK) return host_prims_wait_end(p, res, "an LL line from a receive peer");
    out[k] = (uint32_t)v;
  }
  return ncclSuccess;
}

/* Whether every connection of a flat step takes `bytes` as a line. */
static int host_prims_all_lines(const host_prims_t* p, size_t bytes) {
  for (int i = 0; i < p->nSend; i++)
    if (!host_prims_ll_ok(&p->send[i], bytes)) return 0;
  for (int i = 0; i < p->nRecv; i++)
    if (!host_prims_ll_ok(&p->recv[i], bytes)) return 0;
  return 1;
}

/* Input i of a flat step in rank order: the received lines, with this
 * rank's own input at minePos. */
static const void* host_prims_flat_input(const uint32_t* mine, const uint32_t (*in)[HOST_LL_DATA_MAX / 4], int i,
                                         int minePos) {
  if (i == minePos) return mine;
  return in[i < minePos ? i : i - 1];
}

/* Flat step where every connection takes a line (inputs of up to 32 bytes
 * over SHM): the same protocol as the mixed case below, word by word, the
 * input going straight to the lines and the lines to the fold. A third fewer
 * instructions for an 8 B AllReduce; what is left of its time is mostly
 * the lines' trips between cores, hence the prefetch and the polls
 * below. */
static ncclResult_t host_prims_flat_lines(host_prims_t* p, const void* src, void* dst, size_t n, size_t bytes,
                                          int minePos) {
  steps_shape_t s = p->shape;
  size_t nWords = (bytes + 3) / 4;
  /* Words, aligned for the widest element the fold reads from them (8 bytes). */
  _Alignas(8) uint32_t mine[HOST_LL_DATA_MAX / 4];
  _Alignas(8) uint32_t in[HOST_PRIMS_MAX_PEERS][HOST_LL_DATA_MAX / 4];
  mine[nWords - 1] = 0; /* the last word's unused bytes go out as zeros */
  if (p->redop.op == MK_OP_PREMULSUM)
    host_reduce_copy(&p->redop, mine, NULL, NULL, src, n, 0);
  else
    memcpy(mine, src, bytes);
  for (int i = 0; i < p->nSend; i++) MK_CHECK(host_prims_ll_put(p, &p->send[i], s, mine, nWords));
  /* The lines this rank writes next time, owned now:
   * the peer read them 7 steps ago and still holds a copy, which a store
   * would have to take back first; done here, while we wait for the peer
   * anyway, the next write finds its line and the peer's read is the only
   * transfer on the way. */
  for (int i = 0; i < p->nSend; i++) host_prefetchw(host_prims_ll_words(&p->send[i], *p->send[i].step + 1));
  for (int r = 0; r < p->nRecv; r++) MK_CHECK(host_prims_ll_recv(p, &p->recv[r], in[r], nWords));
  /* Tails after the receives, as below. */
  for (int i = 0; i < p->nSend; i++) host_prims_slice_publish(&p->send[i], s, (int64_t)bytes);
  host_redop_t fold = host_prims_fold_op(&p->redop);
  int total = p->nRecv + 1;
  host_reduce_copy(&fold, dst, NULL, host_prims_flat_input(mine, in, 0, minePos),
                   host_prims_flat_input(mine, in, 1, minePos), n, total == 2);
  for (int i = 2; i < total; i++)
    host_reduce_copy(&fold, dst, NULL, dst, host_prims_flat_input(mine, in, i, minePos), n, i == total - 1);
  for (int i = 0; i < p->nRecv; i++) host_prims_slice_release(&p->recv[i], s);
  return ncclSuccess;
}

ncclResult_t host_prims_flat(host_prims_t* p, const void* src, void* dst, int64_t nelem, int minePos) {
  steps_shape_t s = p->shape;
  size_t n = (size_t)nelem, bytes = n * p->typeSize;
  if (p->nSend < 1 || p->nRecv < 1 || p->nRecv > HOST_PRIMS_MAX_PEERS || minePos < 0 || minePos > p->nRecv ||
      bytes > (size_t)s.stepSize * (size_t)s.sliceSteps)
    return ncclInternalError;
  if (bytes > 0 && bytes <= HOST_LL_DATA_MAX && host_prims_all_lines(p, bytes))
    return host_prims_flat_lines(p, src, dst, n, bytes, minePos);
  /* Out: pre-multiplied once (into the first Simple slot, or here when the
   * first connection takes a line), then copied to every other connection:
   * a line where it has them (small inputs), else its slot. */
  uint64_t mineBuf[HOST_LL_DATA_MAX / 8];
  _Alignas(8) uint32_t inBuf[HOST_PRIMS_MAX_PEERS][HOST_LL_DATA_MAX / 4];
  const char* mine = NULL;
  for (int i = 0; i < p->nSend; i++) {
    host_conn_t* c = &p->send[i];
    char* out = (char*)mineBuf;
    int ll = host_prims_ll_ok(c, bytes);
    if (!ll) MK_CHECK(host_prims_slice_out(p, c, s, &out));
    if (!mine) {
      host_reduce_copy(&p->redop, out, NULL, NULL, src, n, 0);
      mine = out;
    } else if (!ll) {
      memcpy(out, mine, bytes);
    }
    if (ll)
      MK_CHECK(host_prims_ll_write(p, c, s, mine, bytes));
    else
      host_prims_slice_publish(c, s, (int64_t)bytes);
  }
  /* In: every rank's input in rank order, this rank's at minePos. */
  const char* in[HOST_PRIMS_MAX_PEERS + 1];
  for (int i = 0, k = 0; i <= p->nRecv; i++) {
    if (i == minePos) {
      in[i] = mine;
      continue;
    }
    int r = k++;
    if (host_prims_ll_ok(&p->recv[r], bytes)) {
      MK_CHECK(host_prims_ll_recv(p, &p->recv[r], inBuf[r], (bytes + 3) / 4));
      in[i] = (const char*)inBuf[r];
    } else {
      MK_CHECK(host_prims_slice_in(p, &p->recv[r], s, &in[i]));
    }
  }
  /* The lines' tails move only now. A line needs no tail to be read (its
   * flags say it is there); the tail's store is a full barrier, which made
   * this rank wait for its line's write to reach the peer before it began
   * to read; now it waits for the peer's line instead. A peer asleep on the
   * tail wakes now: nothing here waited on it, since every rank writes all
   * its lines before it reads any. */
  for (int i = 0; i < p->nSend; i++)
    if (host_prims_ll_ok(&p->send[i], bytes)) host_prims_slice_publish(&p->send[i], s, (int64_t)bytes);
  /* All inputs are pre-multiplied: fold them left to right; the last fold is final. */
  host_redop_t fold = host_prims_fold_op(&p->redop);
  int total = p->nRecv + 1;
  host_reduce_copy(&fold, dst, NULL, in[0], in[1], n, total == 2);
  for (int i = 2; i < total; i++) host_reduce_copy(&fold, dst, NULL, dst, in[i], n, i == total - 1);
  for (int i = 0; i < p->nRecv; i++) host_prims_slice_release(&p->recv[i], s);
  return ncclSuccess;
}
