/* The executor interface: what runs a communicator's work items, on the
 * host's threads or on a GPU's kernels. The data path picks one executor
 * per communicator at init (exec_for) and reaches it only through this
 * table; the executors live in device/ and register nothing else with the
 * core. Operations a kind of executor has no use for are still present and
 * do the trivial thing (a host executor has no device context to enter, no
 * graph capture, no stream to order), so callers need no second path. */
#ifndef MKCCL_EXEC_EXEC_H
#define MKCCL_EXEC_EXEC_H

#include <stddef.h>
#include <stdint.h>

#include "device/common/work.h"
#include "nccl.h"

struct ncclComm;

/* A window of NCCL's device API as the executor made it: every LSA peer's
 * copy of the buffer mapped into this rank at a fixed stride, and the
 * device-side description the user's kernels read. */
typedef struct exec_win {
  void* handle;      /* the ncclWindow_t handed out: points into device memory */
  char* lsaFlatBase; /* LSA rank 0's copy in this rank's address space */
  uint32_t stride4G; /* peer i's copy is at lsaFlatBase + i * stride4G * 4 GiB */
  void* localPtr;    /* this rank's copy, through the flat range */
  void* priv;        /* the executor's */
} exec_win_t;

typedef struct exec_ops {
  const char* name;
  /* The calling thread works in the communicator's device context
   * (bind/unbind), or keeps and gives back the one it had. */
  ncclResult_t (*bind)(struct ncclComm* comm);
  void (*unbind)(struct ncclComm* comm);
  ncclResult_t (*ctx_save)(void** ctx);
  void (*ctx_restore)(void* ctx);
  /* The executor of a communicator whose channels are connected; destroy
   * takes NULL. */
  ncclResult_t (*create)(struct ncclComm* comm, void** out);
  void (*destroy)(void* ex);
  /* Items queued on `stream` (GPU: returns once launched; host: once run).
   * nChannels bounds the channels the items use; `captured`: the stream is
   * being captured into a CUDA graph. */
  ncclResult_t (*launch)(void* ex, const mk_work_t* works, int n, int nChannels, void* stream, int captured);
  /* One item run on the calling thread, now (the host's lone small
   * collectives); ncclInvalidUsage where the executor cannot. */
  ncclResult_t (*run_here)(void* ex, const mk_work_t* w);
  ncclResult_t (*copy)(void* ex, void* dst, const void* src, size_t bytes, void* stream);
  /* The collective of a communicator of one rank on the calling thread: the
   * input reduced with itself (op MK_OP_*, scalar as in mk_work_t, read
   * from memory when scalarPtr); ncclInvalidUsage where the executor runs
   * such collectives as items. */
  ncclResult_t (*reduce_alone)(void* ex, void* dst, const void* src, size_t count, int type, int op, uint64_t scalar,
                               int scalarPtr);
  /* `waiter` runs its later work after what `waited` holds now. */
  ncclResult_t (*stream_join)(void* ex, void* waiter, void* waited);
  /* fn(arg) in stream order (a graph's host node when captured). */
  ncclResult_t (*host_call)(void* ex, void* stream, void (*fn)(void*), void* arg);
  /* The executor's copy of every connection brought up to date; `wait`:
   * before returning. */
  ncclResult_t (*sync_conns)(void* ex, struct ncclComm* comm, void* stream, int wait);
  /* 1 when `stream` is being captured (relaxed capture mode entered for the
   * set-up; capture_end restores the caller's). */
  int (*capture_begin)(void* stream, int* prevMode);
  void (*capture_end)(int prevMode);
  /* A buffer the executor can read and write. */
  int (*pointer_ok)(const void* ptr);
  /* A wait of the executor's ended by MKCCL_TIMEOUT. */
  int (*timed_out)(void* ex);
  /* Device API windows, collective over the communicator: `buff` (bytes of
   * one allocation the peers can import) mapped into every LSA peer (the
   * lsaSize consecutive ranks around this one, lsaRank among them), or,
   * with buff NULL, fresh zeroed memory of `size` (the resource window).
   * Entered in the window table kernels search (ncclFindWindow) when
   * `listed`. ncclInvalidUsage where the executor has no device memory. */
  ncclResult_t (*win_create)(void* ex, struct ncclComm* comm, void* buff, size_t size, int lsaRank, int lsaSize,
                             int listed, exec_win_t* out);
  void (*win_destroy)(void* ex, exec_win_t* win);
  /* The device window table of the communicator (made on first use). */
  ncclResult_t (*win_table)(void* ex, void** table);
} exec_ops_t;

/* The executor for a communicator: a GPU's when it has a CUDA device. */
const exec_ops_t* exec_for(const struct ncclComm* comm);

#endif
