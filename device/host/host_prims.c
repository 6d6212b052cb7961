#include "host_prims.h"

#include "device/common/sched_ring.h"
#include "transport/mkccl_conn_fifo_v1.h"
#include "host_wait.h"

void host_prims_begin(host_prims_t* p) {
  if (p->recv.info) *p->recv.step = steps_op_base(*p->recv.step, p->shape.chunkSteps);
  if (p->send.info) *p->send.step = steps_op_base(*p->send.step, p->shape.chunkSteps);
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

/* Published: tail past the slice's last step. */
static ncclResult_t host_prims_wait_recv(host_prims_t* p, uint64_t last) {
  int w = host_wait_ge(p->recv.info->tail, last + 1, p->abortFlag, (p->recv.info->flags & MKCCL_CONN_PROXY) != 0);
  return host_prims_wait_end(p, w, "data from the receive peer");
}

/* Free: head within MKCCL_STEPS of the slice's last step. */
static ncclResult_t host_prims_wait_send(host_prims_t* p, uint64_t last) {
  uint64_t target = last + 1 > MKCCL_STEPS ? last + 1 - MKCCL_STEPS : 0;
  int w = host_wait_ge(p->send.info->head, target, p->abortFlag, (p->send.info->flags & MKCCL_CONN_PROXY) != 0);
  return host_prims_wait_end(p, w, "a free slot from the send peer");
}

ncclResult_t host_prims_chunk(host_prims_t* p, int prim, const void* src, void* dst, int64_t nelem) {
  int recv = mk_prim_recvs(prim), send = mk_prim_sends(prim);
  int useSrc = mk_prim_reads_src(prim), useDst = mk_prim_writes_dst(prim), final = mk_prim_is_final(prim);
  steps_shape_t s = p->shape;
  int64_t chunkBytes = nelem * (int64_t)p->typeSize;
  int slices = steps_slices_per_chunk(s);
  int64_t done = 0;
  for (int slice = 0; slice < slices; slice++) {
    int64_t bytes = steps_slice_len(s, chunkBytes, slice);
    uint64_t rstep = recv ? *p->recv.step : 0, sstep = send ? *p->send.step : 0;
    if (recv && host_prims_wait_recv(p, rstep + s.sliceSteps - 1) != ncclSuccess) return ncclRemoteError;
    if (send && host_prims_wait_send(p, sstep + s.sliceSteps - 1) != ncclSuccess) return ncclRemoteError;
    if (bytes > 0) {
      const char* in = recv ? host_prims_recv_ptr(&p->recv, rstep, s.stepSize) : NULL;
      char* out = send ? host_prims_send_ptr(&p->send, sstep, s.stepSize) : NULL;
      const char* mine = useSrc ? (const char*)src + done : NULL;
      char* user = useDst ? (char*)dst + done : NULL;
      char* d1 = out ? out : user;
      char* d2 = out ? user : NULL;
      if (d1) host_reduce_copy(&p->redop, d1, d2, in, mine, (size_t)(bytes / (int64_t)p->typeSize), final);
    }
    if (recv) {
      conn_fifo_release(host_prims_fifo(&p->recv), p->recv.info->head, rstep, s.sliceSteps);
      *p->recv.step = rstep + s.sliceSteps;
    }
    if (send) {
      conn_fifo_publish(host_prims_fifo(&p->send), p->send.info->tail, sstep, s.sliceSteps, bytes);
      *p->send.step = sstep + s.sliceSteps;
    }
    done += bytes;
  }
  return ncclSuccess;
}
