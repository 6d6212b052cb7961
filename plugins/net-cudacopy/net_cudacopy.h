/* net-cudacopy: a net plugin (NCCL net v11) for tests that takes CUDA
 * pointers (NCCL_PTR_CUDA) without any RDMA hardware. It wraps another net
 * plugin (net-socket by default) and moves GPU memory by copying it through
 * the CUDA driver (opened at run time) to and from a host copy of each
 * registration, which the wrapped plugin sends and receives. Host memory
 * passes straight through. iflush waits for the registration's copies and
 * is counted, as is every registration, send and receive by memory type;
 * the counts are logged at INFO when the plugin is finalized. For tests
 * only: never installed, in no manifest. */
#ifndef MKCCL_NET_CUDACOPY_H
#define MKCCL_NET_CUDACOPY_H

#include <stddef.h>
#include <stdint.h>

#include "mkccl_plugin_v1.h"
#include "net/nccl_net_v11.h"

#define CUDACOPY_MAX_RECVS 8

/* One registration: the caller's memory, and for GPU memory the host copy
 * the wrapped plugin moves. */
typedef struct {
  int type;     /* NCCL_PTR_HOST or NCCL_PTR_CUDA */
  void* inner;  /* the wrapped plugin's registration (of base, or of shadow) */
  char* base;
  size_t size;
  char* shadow; /* CUDA: host copy of [base, base + size) */
  void* cuCtx;  /* CUDA: the context the memory belongs to */
  void* stream; /* CUDA: copies run here (non-blocking: never behind a user's kernel) */
} cudacopy_mr_t;

/* A request: the wrapped plugin's, or a flush of our own. */
typedef struct cudacopy_req {
  struct cudacopy_req *prev, *next; /* outstanding receives, freed at their comm's close if never done */
  void* comm;
  void* inner;  /* NULL: a flush, done at its first test */
  int isRecv;
  int n;
  void* dst[CUDACOPY_MAX_RECVS];  /* receive into GPU memory: where the bytes go */
  cudacopy_mr_t* mr[CUDACOPY_MAX_RECVS];
} cudacopy_req_t;

/* What moved, by memory type (atomics). */
typedef struct {
  int64_t regCuda, regHost;
  int64_t sendCuda, sendHost;
  int64_t recvCuda, recvHost;
  int64_t flushes;
  int64_t regDmaBuf;
} cudacopy_counts_t;
extern cudacopy_counts_t cudacopy_counts;

/* ---- parameters and logging (net_cudacopy_params.c) ---- */
const char* cudacopy_param_plugin(void);
int cudacopy_param_force_flush(void);
int cudacopy_param_dmabuf(void);
void cudacopy_log(int level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void cudacopy_set_logger(ncclDebugLogger_t logger);

/* ---- the wrapped plugin (net_cudacopy_inner.c) ---- */
extern const ncclNet_v11_t* cudacopy_inner;
ncclResult_t cudacopy_inner_load(const char* plugin);

/* ---- the CUDA driver (net_cudacopy_cuda.c) ---- */
/* Fills the CUDA fields of mr for memory at base (its context, a stream). */
ncclResult_t cudacopy_cuda_attach(cudacopy_mr_t* mr);
void cudacopy_cuda_detach(cudacopy_mr_t* mr);
/* Copies and waits: GPU -> host, host -> GPU, on mr's stream. */
ncclResult_t cudacopy_cuda_dtoh(cudacopy_mr_t* mr, void* dst, const void* src, size_t size);
ncclResult_t cudacopy_cuda_htod(cudacopy_mr_t* mr, void* dst, const void* src, size_t size);
/* Every copy of mr has landed. */
ncclResult_t cudacopy_cuda_sync(cudacopy_mr_t* mr);

#endif
