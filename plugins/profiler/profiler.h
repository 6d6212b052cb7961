/* The trace profiler: events kept in memory while the communicator runs
 * (a lock-free pool, blocks allocated on first use, no locks on the event
 * path), written at finalize as one Chrome trace JSON per rank that Perfetto
 * and chrome://tracing open, plus a text summary per collective. */
#ifndef PROFILER_H
#define PROFILER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "profiler/nccl_profiler.h"

#define PROFILER_BLOCK_EVENTS 4096
#define PROFILER_MAX_BLOCKS 4096
#define PROFILER_STEP_STATES 6 /* SendGPUWait SendPeerWait SendWait RecvWait RecvFlushWait RecvGPUWait */

typedef struct profiler_event {
  uint64_t type; /* one ncclProfile* bit */
  uint64_t index; /* in the pool: parents come before their children */
  struct profiler_event* parent;
  uint64_t start, stop; /* ns; stop 0 while open */
  union {
    struct {
      const char* func;
      const char* datatype;
      const char* algo;
      const char* proto;
      uint64_t seq;
      size_t count;
      int root;
      int nChannels;
    } coll; /* Coll and P2p (peer in root) */
    struct {
      const char* func;
      const char* datatype;
      size_t count;
      int depth;
      uint64_t stateTs[2]; /* GroupStartApiStop, GroupEndApiStart */
    } api;
    struct {
      int channel, peer, nSteps, chunkSize, isSend;
    } op;
    struct {
      int step;
      size_t transSize;
      uint64_t stateTs[PROFILER_STEP_STATES];
    } step;
    struct {
      int64_t id;
      size_t length;
      int channel;
    } net; /* NetPlugin, KernelCh (channel) */
  };
} profiler_event_t;

typedef struct {
  int rank, nRanks, nNodes;
  uint64_t commId;
  char commName[128];
  char dir[1024];
  int summary;
  pid_t pid;
  int64_t wallOffsetNs; /* CLOCK_REALTIME - CLOCK_MONOTONIC at init: ranks on different hosts line up */
  uint64_t maxEvents;
  /* The pool index on a line of its own: every event's atomic add (from the
   * caller's and the proxy's threads) then leaves the fields both only read
   * (maxEvents, blocks) in their caches. */
  _Alignas(64) _Atomic uint64_t next;
  _Atomic uint64_t dropped;
  _Alignas(64) profiler_event_t* _Atomic blocks[PROFILER_MAX_BLOCKS];
  ncclDebugLogger_t log;
  /* The filler thread: allocates and touches the next block while the
   * current one is half used, so that neither calloc nor the first write to
   * each page (a fault, ~1.5 us on a VM: ~45 ns per event) lands on the
   * event path. Without it (pthread_create failed) the event path
   * allocates, as before. */
  pthread_t filler;
  int fillerOn;
  pthread_mutex_t fillLock;
  pthread_cond_t fillCond;
  uint64_t fillWant; /* under fillLock: blocks [1, fillWant] are wanted */
  int fillStop;      /* under fillLock */
} profiler_ctx_t;

uint64_t profiler_now(void);
/* A zeroed event, or NULL when the pool is full (counted in dropped). */
profiler_event_t* profiler_event_alloc(profiler_ctx_t* ctx);
profiler_event_t* profiler_event_at(profiler_ctx_t* ctx, uint64_t i);
uint64_t profiler_event_count(profiler_ctx_t* ctx);
void profiler_pool_free(profiler_ctx_t* ctx);
/* The pool at init (block 0, touched; the filler started) and before the
 * trace is written (the filler stopped). 0 on success. */
int profiler_pool_init(profiler_ctx_t* ctx);
void profiler_pool_quiesce(profiler_ctx_t* ctx);

/* Writers (at finalize, single-threaded). 0 on success. */
int profiler_trace_write(profiler_ctx_t* ctx, const char* path);
int profiler_summary_write(profiler_ctx_t* ctx, const char* path);

/* Effective end of an event: its stop, or the latest end of its
 * descendants (a collective's proxy work ends after its stop, which only
 * means "enqueued"), or now when still open. Filled by profiler_ends_compute. */
uint64_t* profiler_ends_compute(profiler_ctx_t* ctx);
size_t profiler_type_size(const char* datatype);

#endif
