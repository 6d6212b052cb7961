/* Point-to-point in PTR mode, where a connection has MKCCL_CONN_PTR_READ:
 * a registered send buffer goes out as its address, slice by slice, and
 * the receiver copies each slice from the sender's buffer into its own
 * (one copy instead of two through the step buffers); the sender's buffer
 * is the sender's again once the receiver's head has passed its slices. */
#include <errno.h>
#include <string.h>

#include "base/err.h"
#include "host_prims.h"
#include "host_prims_slice.h"
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
  return host_prims_wait_peer(p, c, c->info->head, *c->step, "the receive peer's read of a registered buffer");
}

ncclResult_t host_prims_recv_any(host_prims_t* p, void* dst, int64_t bytes, int peer) {
  host_conn_t* c = &p->recv[0];
  mkcclConnInfo_v1* info = c->info;
  steps_shape_t s = p->shape;
  int slices = steps_slices_per_chunk(s);
  int64_t done = 0;
  for (int slice = 0; slice < slices; slice++) {
    int64_t len = steps_slice_len(s, bytes, slice);
    const char* in;
    MK_CHECK(host_prims_slice_in(p, c, s, &in));
    mkcclConnFifo_v1* f = &info->connFifo[conn_fifo_slot(*c->step)];
    if (f->mode == MKCCL_MODE_PTR) {
      int64_t sent = conn_fifo_size_load(info->connFifo, conn_fifo_slot(*c->step));
      if (sent != len)
        return MK_FAIL(ncclInvalidUsage, "host executor: rank %d sent a slice of %lld bytes where %lld were expected",
                       peer, (long long)sent, (long long)len);
      int err = info->ptrRead(info->ptrCtx, (char*)dst + done, f->ptr, (size_t)len);
      if (err)
        return MK_FAIL(ncclSystemError, "host executor: reading %lld bytes of rank %d's registered buffer failed: %s",
                       (long long)len, peer, strerror(err));
      f->mode = MKCCL_MODE_NORMAL; /* before the release: the sender reuses the slot after it */
      conn_fifo_release(info->connFifo, info->head, *c->step, s.sliceSteps);
      *c->step += s.sliceSteps;
    } else {
      if (len > 0) memcpy((char*)dst + done, in, (size_t)len);
      host_prims_slice_release(c, s);
    }
    done += len;
  }
  return ncclSuccess;
}
