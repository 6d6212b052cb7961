/* Host primitives: move one chunk through a connection's step buffers
 * following the connection FIFO protocol (kernel-core/fifo/conn_fifo.h).
 * The GPU executor has the same primitives in device/cuda. */
#ifndef MKCCL_HOST_PRIMS_H
#define MKCCL_HOST_PRIMS_H

#include <stdint.h>

#include "device/common/work.h"
#include "device/common/steps.h"
#include "host_reduce.h"
#include "host_store.h"
#include "nccl.h"
#include "transport/mkccl_transport_v1.h"

/* One side of a connection as the executor drives it. `step` and `seen`
 * (the peer's word as last read: head when sending, tail when receiving)
 * persist across operations on the connection. */
typedef struct {
  mkcclConnInfo_v1* info;
  uint64_t* step;
  uint64_t* seen;
  int proxyLane; /* the proxy lane a waiter progresses, or -1: no proxy moves this connection */
} host_conn_t;

/* Peers one primitive reads from or writes to at most: a ring has one each
 * way, a binary tree node two children, a flat AllReduce every other rank. */
#define HOST_PRIMS_MAX_PEERS (MK_FLAT_MAX_RANKS - 1)

typedef struct host_prims {
  host_conn_t recv[HOST_PRIMS_MAX_PEERS]; /* received inputs are combined in this order */
  host_conn_t send[HOST_PRIMS_MAX_PEERS]; /* every send gets the same data */
  int nRecv, nSend;
  steps_shape_t shape;
  host_redop_t redop;
  size_t typeSize;
  volatile uint32_t* abortFlag;
  host_store_t* store; /* the channel's store mode for send slots (NULL: cached stores) */
  /* Ring AllGather and Broadcast by address (host_prims_ptr.c): set per
   * item by the ring; 0 everywhere else. */
  uint8_t ptrPath;   /* raw copies, one peer each way: slices may come or go as PTR slots */
  uint8_t ptrSend;   /* srcShared or dstShared: some slices may go to send[0] as addresses */
  uint8_t srcShared; /* send[0]'s receiver reads the item's send buffer in place (mapped or by CMA) */
  uint8_t dstShared; /* and its receive buffer */
  uint8_t ptrPosted; /* a slice went out by address: drain before the item ends */
  /* Point-to-point and ring by address: slices read in place of the
   * sender's memory are written with streaming stores (host_store.h). */
  uint8_t ptrStream;
} host_prims_t;

/* Round both connections' step counters up to the chunk boundary: every
 * operation starts on a fresh chunk (the proxy does the same). */
void host_prims_begin(host_prims_t* p);

/* Run primitive `prim` (MK_PRIM_*) on one chunk of `nelem` elements: src is
 * this rank's input, dst its output (either may be unused by the primitive).
 * A receiving primitive reduces what every recv connection brings (with the
 * local input when it reads one); a sending one writes to every send
 * connection. Consumes exactly chunkSteps steps on each connection it uses. */
ncclResult_t host_prims_chunk(host_prims_t* p, int prim, const void* src, void* dst, int64_t nelem);

/* Whether primitive `prim`'s next slice could move now on every connection
 * it uses (data published / slots free), without waiting. */
int host_prims_ready(host_prims_t* p, int prim);

/* Point-to-point in PTR mode (host_prims_ptr.c), on a connection with
 * MKCCL_CONN_PTR_READ, on send[0] / recv[0]. send_addr posts one chunk of
 * `bytes` at src as its address instead of its data (src must stay until
 * send_drain returns: the consumer, the receiver or the proxy, is done with all
 * that was posted).
 * recv_any takes a p2p part's next chunks (of `chunk` bytes, `left` bytes
 * to go from dst; chunks of one step) as their sender posted them: one
 * copied from its slot, or the run of published PTR chunks that go on in
 * the sender's buffer read at once; *nChunks says how many. `peer` names
 * the sender in errors. */
ncclResult_t host_prims_send_addr(host_prims_t* p, const void* src, int64_t bytes);
ncclResult_t host_prims_send_drain(host_prims_t* p);
ncclResult_t host_prims_recv_any(host_prims_t* p, void* dst, int64_t chunk, int64_t left, int peer, int* nChunks);
/* host_prims_chunk for a raw copy (MK_PRIM_COPY_SEND, RECV_COPY_SEND,
 * RECV) with ptrPath set: a slice that came as a PTR slot is read from the
 * sender's memory into dst; one whose data lies in this rank's shareable
 * memory (src, or dst once written) goes to send[0] as its address when
 * ptrSend; the rest moves as host_prims_chunk moves it. */
ncclResult_t host_prims_chunk_ptr(host_prims_t* p, int prim, const void* src, void* dst, int64_t nelem);

/* Flat AllReduce of one step (nelem fits a step): this rank's input,
 * pre-multiplied, to every send connection; then the inputs of all ranks
 * combined in rank order into dst, so that every rank computes the same
 * value bit for bit. The recv connections are in rank order without this
 * rank, which sits at minePos among them; its own input is read back from
 * the first send slot (dst may be src). Needs nSend >= 1 and nRecv >= 1. */
ncclResult_t host_prims_flat(host_prims_t* p, const void* src, void* dst, int64_t nelem, int minePos);

#endif
