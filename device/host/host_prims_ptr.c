/* Point-to-point in PTR mode, where a connection has MKCCL_CONN_PTR_READ:
 * a registered send buffer goes out as its address, slice by slice, and
 * the consumer takes each slice from the sender's buffer: the receiver
 * copies it into its own (SHM: one copy instead of two through the step
 * buffers), or the proxy sends it from there (net: no copy on the sending
 * side); the sender's buffer is the sender's again once the consumer is
 * done with its slices. */
#include <errno.h>
#include <string.h>

#include "base/err.h"
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
  int err = info->ptrRead(info->ptrCtx, dst, from, (size_t)total);
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
