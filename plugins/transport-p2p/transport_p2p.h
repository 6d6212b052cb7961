/* transport-p2p's shared types: the context, a connection, the connect
 * info; and the process's record of the peers' regions it imported. */
#ifndef TRANSPORT_P2P_H
#define TRANSPORT_P2P_H

#include <stdint.h>

#include "transport/mkccl_conn_fifo_v1.h"
#include "transport/mkccl_transport_v1.h"

#define P2P_CTRL_BYTES 4096
#define P2P_LOG(ctx, level, ...) (ctx)->services->log(level, NCCL_P2P, __FILE__, __LINE__, __VA_ARGS__)

typedef struct {
  const mkcclTransportServices_v1* services;
  int readMode;
} p2p_ctx_t;

typedef struct {
  int32_t readMode;
  int32_t hasBuffer;
  uint64_t pidHash;
  uint64_t bytes;
  uint64_t llBytes; /* LL lines in this region (a receiver's), after the control words */
  void* ptr;     /* the region in its own process: used by a peer in it, and recorded by importers */
  char ipc[64];  /* the region, for another process */
} p2p_connect_info_t;
_Static_assert(sizeof(p2p_connect_info_t) <= MKCCL_CONNECT_INFO_BYTES, "p2p connect info too large");

typedef struct {
  p2p_ctx_t* ctx;
  int isSend;
  int stepSize;
  int llBytes;        /* our LL lines (a receiver's; 0: none) */
  char* local;        /* our region */
  int localHasBuffer;
  char* remote;       /* the peer's region as we address it */
  int remoteIpc;      /* opened through IPC (and recorded): close it */
  uint64_t myPidHash;
} p2p_conn_t;

/* transport_p2p_imports.c. Opens the peer's region through its IPC handle,
 * recorded for the process. A region of the same process that overlaps an
 * earlier import is a new allocation where a freed one was: that import is
 * stale (its communicator's peer ended first) and is closed first, or the
 * driver would refuse the new one as already mapped. */
ncclResult_t p2p_import_open(p2p_conn_t* c, const p2p_connect_info_t* peer);
/* Closes c's import (if it still has one) and forgets it. */
void p2p_import_close(p2p_conn_t* c);

#endif
