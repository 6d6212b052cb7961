/* Host primitives: move one chunk through a connection's step buffers
 * following the connection FIFO protocol (kernel-core/fifo/conn_fifo.h).
 * The GPU executor has the same primitives in device/cuda. */
#ifndef MKCCL_HOST_PRIMS_H
#define MKCCL_HOST_PRIMS_H

#include <stdint.h>

#include "fifo/steps.h"
#include "host_reduce.h"
#include "nccl.h"
#include "transport/mkccl_transport_v1.h"

/* One side of a connection as the executor drives it. `step` persists
 * across operations on the connection. */
typedef struct {
  mkcclConnInfo_v1* info;
  uint64_t* step;
} host_conn_t;

typedef struct {
  host_conn_t recv;   /* info == NULL when absent */
  host_conn_t send;
  steps_shape_t shape;
  host_redop_t redop;
  size_t typeSize;
  volatile uint32_t* abortFlag;
} host_prims_t;

/* Round both connections' step counters up to the chunk boundary: every
 * operation starts on a fresh chunk (the proxy does the same). */
void host_prims_begin(host_prims_t* p);

/* Run primitive `prim` (MK_PRIM_*) on one chunk of `nelem` elements: src is
 * this rank's input, dst its output (either may be unused by the primitive).
 * Consumes exactly chunkSteps steps on each connection it uses. */
ncclResult_t host_prims_chunk(host_prims_t* p, int prim, const void* src, void* dst, int64_t nelem);

#endif
