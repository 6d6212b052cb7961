/* CollNet's connections, shared by its set-up (collnet_comm.c) and its
 * proxy progress (collnet_progress.c). */
#ifndef MKCCL_COLLNET_INTERNAL_H
#define MKCCL_COLLNET_INTERNAL_H

#include <stdatomic.h>
#include <stdint.h>

#include "collnet/collnet.h"
#include "collnet/nccl_collnet.h"
#include "channel/channel.h"
#include "plugin/collnet.h"

/* One channel's connection pair. The send side's head and the recv side's
 * tail are the proxy's to write; the executor writes the others. Both
 * sides move the same steps (a chunk is one step each way). */
typedef struct collnet_conn {
  struct collnet_comm* owner;
  void* collComm;        /* the plugin's collective communicator of this channel */
  char* sendBuff;        /* MKCCL_STEPS steps of stepSize */
  char* recvBuff;
  void* sendMh, * recvMh; /* their regMr handles */
  int stepSize;
  mkcclSendMem_v1* sendHead; /* send connector: steps freed (proxy) */
  mkcclRecvMem_v1* sendTail; /* send connector: steps published, sizes (executor) */
  mkcclSendMem_v1* recvHead; /* recv connector: steps consumed (executor) */
  mkcclRecvMem_v1* recvTail; /* recv connector: results published, sizes (proxy) */
  void* ctrl;            /* the four above, one allocation */
  uint64_t step;         /* next step of the next op (proxy thread) */
  uint64_t postedEnd;    /* the last op that posted all its steps ends here */
  uint64_t handedEnd;    /* the last op that handed all its steps back ends here */
} collnet_conn_t;

struct collnet_comm {
  plugin_collnet_t* plugin;
  const ncclCollNet_v12_t* cn;
  void* ctx;             /* the plugin's context for this communicator (init) */
  int nChannels;
  int rank;
  collnet_conn_t conns[MK_MAX_CHANNELS];
  uint8_t reduces[ncclNumTypes][4]; /* reduceSupport for sum, prod, max, min */
  _Atomic uint64_t requests;
};

/* The proxy side, for the connectors' transport table. */
ncclResult_t collnet_progress(void* tctx, mkcclProxyOp_v1* op);

/* MK_OP_* -> the ncclRedOp_t the plugin reduces with; -1: none. */
int collnet_plugin_op(int mkOp);

#endif
