/* PTR mode on the host, where a connection says its consumer reads the
 * sender's memory (MKCCL_CONN_PTR_READ, MKCCL_CONN_PTR_MAP): a send buffer
 * it can read goes out as its address, slice by slice, and the consumer
 * takes each slice from the sender's buffer: the receiver copies it into
 * its own (SHM: one copy instead of two through the step buffers), or the
 * proxy sends it from there (net: no copy on the sending side); the
 * sender's buffer is the sender's again once the consumer is done with its
 * slices. Point-to-point (send_addr, recv_any), and the raw copies of the
 * ring AllGather and Broadcast (chunk_ptr), where each rank hands on by
 * address what it holds in memory the next rank reads in place (shareable
 * memory it maps, or registered memory it reads by CMA): its input, or its
 * output once a slice has landed there. */
#include <errno.h>
#include <string.h>

#include "base/err.h"
#include "device/common/sched_ring.h"
#include "host_prims.h"
#include "host_prims_slice.h"
#include "host_wait.h"
#include "transport/mkccl_conn_fifo_v1.h"

ncclResult_t host_prims_send_addr(host_prims_t* p, const void* src, int64_t bytes) {
  host_conn_t* c = &p->send[0];
  steps_shape_t s = p->shape;
  int slices = steps_slices_per_chunk(s);
  int64_t done = 0;
  for (int slice = 0; slice < slices; slice++) {
    int64_t len = steps_slice_len(s, bytes, slice);
    char* unused;
    MK_CHECK(host_prims_slice_out(p, c, s, &unused));
    uint64_t step = *c->step;
    mkcclConnFifo_v1* f = &c->info->connFifo[conn_fifo_slot(step)];
    /* Empty slices go as usual: nothing to read. */
    f->mode = len > 0 ? MKCCL_MODE_PTR : MKCCL_MODE_NORMAL;
    f->ptr = (void*)((const char*)src + done);
    conn_fifo_publish(c->info->connFifo, c->info->tail, step, s.sliceSteps, len);
    *c->step = step + s.sliceSteps;
    done += len;
  }
  return ncclSuccess;
}

ncclResult_t host_prims_send_drain(host_prims_t* p) {
  host_conn_t* c = &p->send[0];
  const char* what = "the consumer's read of a registered send buffer";
  if (!(c->info->flags & MKCCL_CONN_SHARED) || *c->step == 0) return host_prims_wait_peer(p, c, c->info->head, *c->step, what);
  /* head counts grants here, not steps done: the consumer empties the
   * entries of done steps in step order, so the last step's entry empty
   * means every step has left the buffer. */
  mkcclConnFifo_v1* fifo = c->info->connFifo;
  int last = conn_fifo_slot(*c->step - 1);
  uint32_t spins = 0;
  int64_t deadline = 0;
  while (conn_fifo_size_load(fifo, last) >= 0) {
    int w = host_wait_any_round(&spins, &deadline, p->abortFlag, c->proxyLane);
    if (w == HOST_WAIT_TIMEOUT) host_wait_timed_out(p->abortFlag, what);
    if (w != HOST_WAIT_OK) return ncclRemoteError;
  }
  return ncclSuccess;
}

/* `bytes` at the sender's address src into dst: from this process's
 * mapping of that memory where the connection has one (with streaming
 * stores where p->ptrStream says), else through the transport's read. 0 or
 * errno. */
static int host_prims_ptr_copy(host_prims_t* p, const mkcclConnInfo_v1* info, void* dst, const void* src,
                               size_t bytes) {
  const void* at = info->ptrMap ? info->ptrMap(info->ptrCtx, src, bytes) : NULL;
  if (!at) return info->ptrRead ? info->ptrRead(info->ptrCtx, dst, src, bytes) : EINVAL;
  int mode = p->ptrStream ? HOST_STORE_STREAM : HOST_STORE_CACHED;
  if (mode == HOST_STORE_STREAM) {
    host_copy_stream(dst, at, bytes);
    host_store_fence(); /* before the head that hands the slots back */
  } else {
    memcpy(dst, at, bytes);
  }
  if (p->store) p->store->inPlace[mode] += bytes;
  return 0;
}

/* Bytes of the chunk at `done` of a part of `left` bytes. */
static int64_t host_prims_chunk_len(int64_t chunk, int64_t left, int64_t done) {
  return left - done < chunk ? left - done : chunk;
}

ncclResult_t host_prims_recv_any(host_prims_t* p, void* dst, int64_t chunk, int64_t left, int peer, int* nChunks) {
  host_conn_t* c = &p->recv[0];
  mkcclConnInfo_v1* info = c->info;
  steps_shape_t s = p->shape;
  if (s.chunkSteps != 1 || s.sliceSteps != 1)
    return MK_FAIL(ncclInternalError, "host executor: PTR receive of %d-step chunks", s.chunkSteps);
  const char* in;
  MK_CHECK(host_prims_slice_in(p, c, s, &in));
  uint64_t step = *c->step;
  mkcclConnFifo_v1* fifo = info->connFifo;
  mkcclConnFifo_v1* f = &fifo[conn_fifo_slot(step)];
  if (f->mode != MKCCL_MODE_PTR) {
    int64_t len = host_prims_chunk_len(chunk, left, 0);
    if (len > 0) memcpy(dst, in, (size_t)len);
    host_prims_slice_release(c, s);
    *nChunks = 1;
    return ncclSuccess;
  }
  /* This chunk, and the published ones after it that go on where it ends
   * in the sender's buffer: one read for all (a call costs more than a
   * step's pages at small steps). */
  const char* from = f->ptr;
  int n = 0;
  int64_t total = 0;
  for (;;) {
    int slot = conn_fifo_slot(step + (uint64_t)n);
    int64_t want = host_prims_chunk_len(chunk, left, total);
    int64_t sent = conn_fifo_size_load(fifo, slot);
    if (n == 0 && sent != want)
      return MK_FAIL(ncclInvalidUsage, "host executor: rank %d sent a chunk of %lld bytes where %lld were expected",
                     peer, (long long)sent, (long long)want);
    if (n > 0 && (fifo[slot].mode != MKCCL_MODE_PTR || fifo[slot].ptr != from + total || sent != want)) break;
    total += want;
    n++;
    if (n == MKCCL_STEPS || total >= left || !conn_fifo_can_consume(info->tail, step + (uint64_t)n)) break;
  }
  int err = host_prims_ptr_copy(p, info, dst, from, (size_t)total);
  if (err)
    return MK_FAIL(ncclSystemError, "host executor: reading %lld bytes of rank %d's registered buffer failed: %s",
                   (long long)total, peer, strerror(err));
  /* The slots back as NORMAL and empty, then head past them all. */
  for (int k = 0; k < n; k++) {
    int slot = conn_fifo_slot(step + (uint64_t)k);
    fifo[slot].mode = MKCCL_MODE_NORMAL;
    conn_fifo_size_store(fifo, slot, -1);
  }
  conn_fifo_store(info->head, step + (uint64_t)n);
  *c->step = step + (uint64_t)n;
  *nChunks = n;
  return ncclSuccess;
}

/* A received PTR slice of `bytes` into dst, its slot back as NORMAL and
 * empty (the release then moves head). */
static ncclResult_t host_prims_ptr_take(host_prims_t* p, host_conn_t* c, mkcclConnFifo_v1* f, int slot, char* dst,
                                        int64_t bytes) {
  mkcclConnInfo_v1* info = c->info;
  int64_t sent = conn_fifo_size_load(info->connFifo, slot);
  if (sent != bytes)
    return MK_FAIL(ncclInternalError, "host executor: a ring peer sent a slice of %lld bytes by address where %lld were "
                   "expected", (long long)sent, (long long)bytes);
  int err = host_prims_ptr_copy(p, info, dst, f->ptr, (size_t)bytes);
  if (err)
    return MK_FAIL(ncclSystemError, "host executor: reading %lld bytes of a ring peer's buffer failed: %s",
                   (long long)bytes, strerror(err));
  f->mode = MKCCL_MODE_NORMAL;
  conn_fifo_size_store(info->connFifo, slot, -1);
  return ncclSuccess;
}

ncclResult_t host_prims_chunk_ptr(host_prims_t* p, int prim, const void* src, void* dst, int64_t nelem) {
  int recv = prim != MK_PRIM_COPY_SEND, send = prim != MK_PRIM_RECV;
  steps_shape_t s = p->shape;
  int64_t chunkBytes = nelem * (int64_t)p->typeSize;
  int slices = steps_slices_per_chunk(s);
  host_conn_t* rc = &p->recv[0];
  host_conn_t* sc = &p->send[0];
  int64_t done = 0;
  for (int slice = 0; slice < slices; slice++) {
    int64_t bytes = steps_slice_len(s, chunkBytes, slice);
    const char* mine = recv ? NULL : (const char*)src + done;
    char* user = (char*)dst + done;
    const char* in = NULL;
    char* out = NULL;
    mkcclConnFifo_v1* rf = NULL;
    int rslot = 0;
    if (recv) {
      MK_CHECK(host_prims_slice_in(p, rc, s, &in));
      rslot = conn_fifo_slot(*rc->step);
      rf = &rc->info->connFifo[rslot];
    }
    int cameAsPtr = rf && bytes > 0 && rf->mode == MKCCL_MODE_PTR;
    /* What this rank can hand on by address once the slice is in dst. */
    const char* addr = !send || !p->ptrSend || bytes <= 0 ? NULL
                       : !recv && p->srcShared        ? mine
                       : p->dstShared                 ? user
                                                      : NULL;
    if (send) MK_CHECK(host_prims_slice_out(p, sc, s, &out));
    if (!cameAsPtr && !addr) {
      if (bytes > 0)
        host_prims_move_slice(p, &in, recv, mine, &out, send, user, bytes, mk_prim_is_final(prim), mk_prim_is_raw(prim));
    } else {
      if (cameAsPtr) MK_CHECK(host_prims_ptr_take(p, rc, rf, rslot, user, bytes));
      else if (recv) memcpy(user, in, (size_t)bytes);
      else if (user != mine) memcpy(user, mine, (size_t)bytes);
      if (send && !addr) memcpy(out, user, (size_t)bytes);
    }
    if (recv) host_prims_slice_release(rc, s);
    if (send && addr) {
      uint64_t step = *sc->step;
      mkcclConnFifo_v1* f = &sc->info->connFifo[conn_fifo_slot(step)];
      f->mode = MKCCL_MODE_PTR;
      f->ptr = (void*)addr;
      conn_fifo_publish(sc->info->connFifo, sc->info->tail, step, s.sliceSteps, bytes);
      *sc->step = step + s.sliceSteps;
      p->ptrPosted = 1;
    } else if (send) {
      host_prims_slice_publish(sc, s, bytes);
    }
    done += bytes;
  }
  return ncclSuccess;
}
