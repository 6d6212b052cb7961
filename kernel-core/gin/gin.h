/* GIN through the proxy: the host side of NCCL 2.28's proxy GIN backend,
 * over any net plugin. Kernels post descriptors (gin_gfd.h) into one
 * queue per peer; a thread per engine takes them, reads the source from
 * the GPU, and sends each put as messages over the net plugin to the
 * target's engine, which writes the payload into its window and only then
 * adds the signal. The net ABI has two-sided sends alone, so a put is a
 * send here and a receive kept posted there.
 *
 *   gin_engine_create (collective) .. gin_engine_handle (for ncclDevComm)
 *   .. kernels run .. gin_engine_destroy (collective) */
#ifndef MKCCL_GIN_GIN_H
#define MKCCL_GIN_GIN_H

#include <stddef.h>
#include <stdint.h>

#include "bootstrap/bootstrap.h"
#include "gin/gin_gfd.h"
#include "net/nccl_net.h"
#include "nccl.h"

#define GIN_MAX_CONTEXTS 4

/* Where the engine's memory lives and how it reaches a window. A GPU
 * communicator's (gin_mem_cuda.c) maps host memory into the GPU; a host
 * one's (gin_mem_host.c) is plain memory, for tests that play the GPU. */
typedef struct gin_mem_ops {
  /* Zeroed memory the thread (*host) and the kernels (*dev) both reach. */
  ncclResult_t (*shared_alloc)(void* ctx, size_t bytes, void** host, void** dev);
  void (*shared_free)(void* ctx, void* host);
  /* Zeroed memory only the kernels use. */
  ncclResult_t (*dev_alloc)(void* ctx, size_t bytes, void** dev);
  void (*dev_free)(void* ctx, void* dev);
  /* Copies between host memory and a window, complete on return. */
  ncclResult_t (*to_dev)(void* ctx, void* dst, const void* src, size_t bytes);
  ncclResult_t (*from_dev)(void* ctx, void* dst, const void* src, size_t bytes);
  /* On the engine's thread, before its first copy. */
  ncclResult_t (*thread_start)(void* ctx);
  void (*thread_stop)(void* ctx);
  void* ctx;
} gin_mem_ops_t;

/* A window by its GIN handle (the same on every rank): its memory and
 * size, 1; 0 when no window has that handle. Called from the thread. */
typedef int (*gin_win_find_fn)(void* arg, uint64_t handle, char** ptr, size_t* size);

typedef struct gin_config {
  int rank, nRanks;
  bootstrap_state_t* bootstrap;
  const ncclNet_v12_t* net;
  void* netCtx;
  int netDev;
  volatile uint32_t* abortFlag;
  int nContexts;           /* 1 .. GIN_MAX_CONTEXTS */
  int nSignals, nCounters; /* per context */
  gin_mem_ops_t mem;
  gin_win_find_fn winFind;
  void* winFindArg;
  /* Called once, from the thread, when it fails (NULL: nobody is told). */
  void (*onFail)(void* arg, ncclResult_t res);
  void* onFailArg;
} gin_config_t;

typedef struct gin_engine gin_engine_t;

/* One context as the GPU sees it, through host pointers: tests play the
 * GPU with them (pis is device memory on a GPU communicator). */
typedef struct gin_view {
  volatile uint64_t* queues; /* [nRanks][queueSize][8] qwords */
  uint32_t queueSize;
  uint32_t* pis;
  volatile uint32_t* cis;
  volatile uint64_t* counters;
  volatile uint64_t* signals;
} gin_view_t;

ncclResult_t gin_engine_create(const gin_config_t* cfg, gin_engine_t** out);
/* ncclDevComm.ginHandles[c]: the device pointer of context c's gin_gpu_ctx_t. */
void* gin_engine_handle(const gin_engine_t* e, int c);
/* The signal shadows kernels keep: nContexts * nSignals, device memory. */
uint64_t* gin_engine_shadows(const gin_engine_t* e);
void gin_engine_view(const gin_engine_t* e, int c, gin_view_t* out);
/* A failed thread lets the kernels go rather than leave them waiting on a
 * dead engine: it adds GIN_FAIL_RELEASE to every signal and counter (every
 * wait the device code can be in ends), then takes and retires whatever is
 * queued without sending it, until the engine is destroyed. What the
 * kernels computed from then on is void; the failure is onFail's. */
#define GIN_FAIL_RELEASE (1ull << 62)

/* Collective: waits (MKCCL_TIMEOUT, abort flag) for this rank's puts to
 * leave, meets every rank, stops the thread, frees. Returns the thread's
 * failure if it had one. */
ncclResult_t gin_engine_destroy(gin_engine_t* e);

#endif
