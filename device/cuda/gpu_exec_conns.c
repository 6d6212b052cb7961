/* Connections to the device: each connector's device entry copied once it
 * is connected, and every channel's ring description once, ordered before
 * the next launch (or, at init, waited for on the set-up stream). */
#include <string.h>

#include "base/err.h"
#include "comm/comm.h"
#include "device/cuda/gpu_exec_internal.h"

static ncclResult_t gpu_conn_fill(gpu_exec_t* ex, mk_dev_conn_t* d, const connector_t* c) {
  memset(d, 0, sizeof(*d));
  /* UNPACK: the kernel hands the type's own handle (device-visible memory of
   * the net plugin, docs/UNPACK.md) to the plugin's device code. */
  const ncclNetDeviceHandle_v12_t* nd = c->info.netDeviceHandle;
  if (nd && nd->handle) {
    if (!ex->unpack)
      return MK_FAIL(ncclInternalError, "Rank %d: a net connection needs the device unpack, but the kernels loaded do "
                     "not call it", ex->rank);
    if (!gpu_exec_pointer_ok(nd->handle))
      return MK_FAIL(ncclInvalidUsage, "Rank %d: the net plugin's UNPACK handle %p is not device-visible memory "
                     "(the producer must register it with CUDA)", ex->rank, nd->handle);
    d->netDevHandle = nd->handle;
  }
  d->buff = c->info.buffs[MKCCL_PROTO_SIMPLE];
  d->stepSize = c->info.stepSize[MKCCL_PROTO_SIMPLE];
  d->flags = c->info.flags;
  d->tail = c->info.tail;
  d->head = c->info.head;
  d->connFifo = c->info.connFifo;
  d->llBuff = c->info.buffs[MKCCL_PROTO_LL];
  d->llStepSize = c->info.stepSize[MKCCL_PROTO_LL];
  d->step = 0;
  return ncclSuccess;
}

/* Host to device, asynchronous and ordered on `stream`: the launch stream
 * (NULL there is the user's legacy stream, whose kernel comes next), or the
 * set-up stream. Never the synchronous cuMemcpyHtoD, which runs on the legacy
 * stream and so waits for every blocking stream of the context, among them
 * another communicator's kernel that waits for ours (one GPU, one process). */
static ncclResult_t gpu_copy_in(gpu_exec_t* ex, void* dev, const void* host, size_t bytes, cu_stream_t stream) {
  cu_result_t r = ex->g->memcpy_async((cu_deviceptr_t)(uintptr_t)dev, (cu_deviceptr_t)(uintptr_t)host, bytes, stream);
  if (r != CUDA_DRV_SUCCESS) return CU_FAIL("cuMemcpyAsync (device comm)", r);
  return ncclSuccess;
}

/* One device entry: copied once, when its connector is connected. */
static ncclResult_t gpu_conn_sync(gpu_exec_t* ex, uint8_t* synced, mk_dev_conn_t* host, mk_dev_conn_t* dev,
                                  const connector_t* c, cu_stream_t stream) {
  if (*synced || !c->connected) return ncclSuccess;
  MK_CHECK(gpu_conn_fill(ex, host, c));
  MK_CHECK(gpu_copy_in(ex, dev, host, sizeof(*host), stream));
  *synced = 1;
  return ncclSuccess;
}

ncclResult_t gpu_exec_sync_conns(gpu_exec_t* ex, struct ncclComm* comm, void* launchStream, int wait) {
  /* No connection made since the last sync: nothing new to copy (the walk
   * over 64 channels x peers x 4 kinds would cost every launch). */
  if (ex->syncedGen == comm->dp.ch.connGen + 1) return ncclSuccess;
  cu_stream_t stream = wait ? ex->initStream : (cu_stream_t)launchStream;
  for (int c = 0; c < comm->dp.ch.nChannels && c < MK_DEV_MAX_CHANNELS; c++) {
    channel_t* ch = &comm->dp.ch.channels[c];
    mk_dev_channel_t* h = &ex->hostComm->channels[c];
    mk_dev_channel_t* d = &ex->devComm->channels[c];
    if (!ex->ringSynced[c]) {
      /* Ring description: written once, before any connection is used (a
       * flag of its own: a one-rank ring never connects, and copying it at
       * every launch would cost each launch per channel). */
      h->ringPrev = ch->ring.prev;
      h->ringNext = ch->ring.next;
      h->ringIndex = ch->ring.index;
      int32_t* order = ex->hostRingRanks + (size_t)c * (size_t)comm->nRanks;
      for (int r = 0; r < comm->nRanks; r++) order[r] = ch->ring.userRanks[r];
      MK_CHECK(gpu_copy_in(ex, (void*)h->ringRanks, order, (size_t)comm->nRanks * sizeof(int32_t), stream));
      MK_CHECK(gpu_copy_in(ex, d, h, sizeof(*h), stream));
      ex->ringSynced[c] = 1;
    }
    /* Every peer's: rings and trees (connected when first used) alike. */
    for (int p = 0; p < comm->nRanks; p++) {
      channel_peer_t* peer = &ch->peers[p];
      const connector_t* conn[MK_DEV_CONN_KINDS] = {&peer->send[MK_CONN_COLL], &peer->recv[MK_CONN_COLL],
                                                    &peer->send[MK_CONN_P2P], &peer->recv[MK_CONN_P2P]};
      for (int k = 0; k < MK_DEV_CONN_KINDS; k++) {
        size_t i = ((size_t)c * MK_DEV_CONN_KINDS + (size_t)k) * (size_t)comm->nRanks + (size_t)p;
        MK_CHECK(gpu_conn_sync(ex, &ex->synced[i], &ex->hostConns[i], &ex->devConns[i], conn[k], stream));
      }
    }
  }
  if (wait) {
    cu_result_t r = ex->g->stream_synchronize(ex->initStream);
    if (r != CUDA_DRV_SUCCESS) return CU_FAIL("cuStreamSynchronize (set-up stream)", r);
  }
  ex->syncedGen = comm->dp.ch.connGen + 1;
  return ncclSuccess;
}
