/* The host executor: runs work items on host buffers with one thread per
 * channel (channel 0 runs on the calling thread, so small collectives pay no
 * hand-off). Work arrives through the communicator's work FIFO; a call
 * returns when every channel has finished its items, so host collectives
 * complete before the API call returns. */
#ifndef MKCCL_HOST_EXEC_H
#define MKCCL_HOST_EXEC_H

#include <stdint.h>

#include "channel/channel.h"
#include "device/common/work.h"
#include "host_store.h"
#include "nccl.h"

typedef struct host_exec host_exec_t;

typedef struct {
  int rank;
  int nRanks;
  int nChannels;
  channel_t* channels;
  volatile uint32_t* abortFlag;
  uint32_t fifoBytes;
  struct profile_comm* profile; /* KernelCh events per channel and item (the comm's; may be NULL) */
  int64_t timeoutSec; /* MKCCL_TIMEOUT: a wait on a peer longer than this fails (0: none) */
  int64_t spinUs;     /* MKCCL_HOST_SPIN_US: an idle channel thread polls this long before it sleeps */
  int streamStores;        /* MKCCL_HOST_STREAM_STORES: -1 measure, 0 cached, 1 streaming (host_store.h) */
  int64_t streamMinBytes;  /* MKCCL_HOST_STREAM_MIN_BYTES: smaller slices are written cached */
  int64_t llPolls;         /* MKCCL_HOST_LL_POLLS: back-to-back reads before an LL wait pauses (host_wait.h) */
  int64_t singleStreamBytes; /* MKCCL_HOST_SINGLE_STREAM_BYTES (host_store.h) */
} host_exec_config_t;

ncclResult_t host_exec_create(const host_exec_config_t* cfg, host_exec_t** out);
/* Run `n` items (in order, each on its channel range); blocks until done. */
ncclResult_t host_exec_run(host_exec_t* ex, const mk_work_t* works, int n);
/* Run one item on the calling thread at once, without the work FIFO. Only
 * for an item on channel 0 alone (the caller's): between runs no channel
 * has work queued, so nothing can come before it. Others: host_exec_run. */
ncclResult_t host_exec_run_here(host_exec_t* ex, const mk_work_t* w);
void host_exec_destroy(host_exec_t* ex);

/* One item on one channel (host_coll.c); `store` is the channel's store
 * mode state (host_store.h; NULL: cached stores). */
ncclResult_t host_coll_run(channel_t* ch, const mk_work_t* w, int rank, int nRanks, volatile uint32_t* abortFlag,
                           host_store_t* store);

/* A CollNet AllReduce item on channel ch (host_collnet.c), on prims
 * `base` set up for the item (op, type, shape). */
struct host_prims;
ncclResult_t host_collnet_run(channel_t* ch, const mk_work_t* w, struct host_prims* base);

/* Whether w is an AllReduce FLAT moves in one step (host_prims_flat). */
int host_coll_flat_one_step(const mk_work_t* w);
/* Such an item on channel ch through `bound`, prims that stay bound to the
 * channel's flat connections from one run to the next (zeroed before the
 * first: it binds them). The connectors own the step counters; the prims
 * only point at them, so a general run in between keeps them in step.
 * Only for the caller's thread (host_exec_run_here): a small AllReduce
 * alone, again and again, skips the binding, a sixth of its instructions. */
struct host_prims;
ncclResult_t host_coll_flat_bound(channel_t* ch, const mk_work_t* w, int rank, int nRanks,
                                  volatile uint32_t* abortFlag, host_store_t* store, struct host_prims* bound);

#endif
