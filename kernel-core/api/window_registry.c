/* Window records, process-wide, under one lock: registering and finding a
 * window are rare next to collectives. */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>

#include "api/device_api.h"
#include "api/window.h"
#include "base/err.h"
#include "comm/comm.h"
#include "cuda/gpu.h"

static pthread_mutex_t window_lock = PTHREAD_MUTEX_INITIALIZER;

/* Kernels name a window in GIN descriptors by ginWins[context] of its
 * description: its GIN handle in every context (ginOffset4K stays 0). */
static ncclResult_t window_gin_publish(api_window_t* w) {
  const cuda_gpu_t* g = cuda_gpu();
  void* wins[MK_GIN_MAX_CONTEXTS];
  for (int c = 0; c < MK_GIN_MAX_CONTEXTS; c++) wins[c] = (void*)(uintptr_t)w->ginHandle;
  cu_deviceptr_t at = (cu_deviceptr_t)(uintptr_t)w->handle + offsetof(struct ncclWindow_vidmem, ginWins);
  cu_result_t r = g ? g->memcpy_htod(at, wins, sizeof(wins)) : CUDA_DRV_ERROR_NO_DEVICE;
  if (r != CUDA_DRV_SUCCESS) return CU_FAIL("cuMemcpyHtoD (window GIN handles)", r);
  return ncclSuccess;
}
static api_window_t* window_list;

/* Every rank's flat base of a window just mapped (collective). */
static ncclResult_t window_peer_bases(struct ncclComm* comm, api_window_t* w, int lsaRank, int lsaSize) {
  uint64_t* all = calloc((size_t)comm->nRanks, sizeof(*all));
  if (!all) return MK_FAIL(ncclSystemError, "window: out of memory");
  all[comm->rank] = (uint64_t)(uintptr_t)w->exec.lsaFlatBase;
  ncclResult_t res = bootstrap_allgather(comm->bootstrap, all, sizeof(*all));
  if (res != ncclSuccess) {
    free(all);
    return res;
  }
  int first = comm->rank - lsaRank;
  for (int r = 0; r < comm->nRanks; r++)
    if (r < first || r >= first + lsaSize) all[r] = 0;
  w->peerFlatBase = all;
  return ncclSuccess;
}

void api_window_lsa(const struct ncclComm* comm, int* lsaRank, int* lsaSize) {
  *lsaSize = api_team_lsa_size(comm);
  *lsaRank = comm->rank % *lsaSize;
}

ncclResult_t api_window_create(struct ncclComm* comm, void* buff, size_t size, int flags, int listed,
                               api_window_t** out) {
  api_window_t* w = calloc(1, sizeof(*w));
  if (!w) return MK_FAIL(ncclSystemError, "window: out of memory");
  w->comm = comm;
  w->userPtr = buff;
  w->size = size;
  w->flags = flags;
  w->handle = (ncclWindow_t)w; /* a host communicator's handle: the record itself */
  w->ginHandle = ++comm->winCount;
  if (comm->cudaDev >= 0) {
    int lsaRank, lsaSize;
    api_window_lsa(comm, &lsaRank, &lsaSize);
    const exec_ops_t* ops = comm->dp.exec.ops;
    void* callerCtx = NULL;
    ncclResult_t res = ops->ctx_save(&callerCtx);
    if (res == ncclSuccess && (res = ops->bind(comm)) == ncclSuccess)
      res = ops->win_create(comm->dp.exec.state, comm, buff, size, lsaRank, lsaSize, listed, &w->exec);
    /* win_create failed on every rank or none: all gather the bases. */
    if (res == ncclSuccess && (res = window_peer_bases(comm, w, lsaRank, lsaSize)) != ncclSuccess)
      ops->win_destroy(comm->dp.exec.state, &w->exec);
    if (res == ncclSuccess) {
      w->mapped = 1;
      w->handle = w->exec.handle;
      res = window_gin_publish(w);
      if (res != ncclSuccess) ops->win_destroy(comm->dp.exec.state, &w->exec);
    }
    ops->ctx_restore(callerCtx);
    if (res != ncclSuccess) {
      free(w->peerFlatBase);
      free(w);
      return res;
    }
    if (!buff) w->userPtr = w->exec.localPtr;
  }
  pthread_mutex_lock(&window_lock);
  w->next = window_list;
  window_list = w;
  pthread_mutex_unlock(&window_lock);
  *out = w;
  return ncclSuccess;
}

api_window_t* api_window_find(const struct ncclComm* comm, ncclWindow_t handle) {
  api_window_t* found = NULL;
  pthread_mutex_lock(&window_lock);
  for (api_window_t* w = window_list; w && !found; w = w->next)
    if (w->handle == handle && (!comm || w->comm == comm)) found = w;
  pthread_mutex_unlock(&window_lock);
  return found;
}

int api_window_symm_find(const struct ncclComm* comm, const void* ptr, size_t bytes, api_window_span_t* out) {
  const char* p = ptr;
  int found = 0;
  pthread_mutex_lock(&window_lock);
  for (const api_window_t* w = window_list; w && !found; w = w->next) {
    const char* lo = w->userPtr;
    if (w->comm != comm || !w->mapped || w->internal || !(w->flags & NCCL_WIN_COLL_SYMMETRIC) || p < lo ||
        (size_t)(p - lo) > w->size || bytes > w->size - (size_t)(p - lo))
      continue;
    *out = (api_window_span_t){lo, w->size, w->flags, w->exec.lsaFlatBase, (uint64_t)w->exec.stride4G << 32};
    found = 1;
  }
  pthread_mutex_unlock(&window_lock);
  return found;
}

int api_window_peer_addr(const struct ncclComm* comm, const void* ptr, size_t bytes, int peer, uint64_t* addr) {
  const char* p = ptr;
  int found = 0, lsaRank, lsaSize;
  if (peer < 0 || peer >= comm->nRanks) return 0;
  api_window_lsa(comm, &lsaRank, &lsaSize);
  pthread_mutex_lock(&window_lock);
  for (const api_window_t* w = window_list; w && !found; w = w->next) {
    const char* lo = w->userPtr;
    if (w->comm != comm || !w->mapped || w->internal || !w->peerFlatBase || !w->peerFlatBase[peer] || p < lo ||
        (size_t)(p - lo) > w->size || bytes > w->size - (size_t)(p - lo))
      continue;
    *addr = w->peerFlatBase[peer] + (uint64_t)lsaRank * ((uint64_t)w->exec.stride4G << 32) + (uint64_t)(p - lo);
    found = 1;
  }
  pthread_mutex_unlock(&window_lock);
  return found;
}

int api_window_range(const struct ncclComm* comm, const void* ptr, size_t bytes, void** base, size_t* size) {
  const char* p = ptr;
  int found = 0;
  pthread_mutex_lock(&window_lock);
  for (const api_window_t* w = window_list; w && !found; w = w->next) {
    const char* lo = w->userPtr;
    found = w->comm == comm && !w->internal && p >= lo && (size_t)(p - lo) <= w->size &&
            bytes <= w->size - (size_t)(p - lo);
    if (found) {
      *base = w->userPtr;
      *size = w->size;
    }
  }
  pthread_mutex_unlock(&window_lock);
  return found;
}

int api_window_covers(const struct ncclComm* comm, const void* ptr, size_t bytes) {
  void* base;
  size_t size;
  return api_window_range(comm, ptr, bytes, &base, &size);
}

int api_window_gin_find(void* comm, uint64_t handle, char** ptr, size_t* size) {
  int found = 0;
  pthread_mutex_lock(&window_lock);
  for (api_window_t* w = window_list; w && !found; w = w->next)
    if (w->comm == comm && w->ginHandle == handle) {
      *ptr = w->mapped ? w->exec.localPtr : w->userPtr;
      *size = w->size;
      found = 1;
    }
  pthread_mutex_unlock(&window_lock);
  return found;
}

api_window_t* api_window_next_of(const struct ncclComm* comm) {
  api_window_t* found = NULL;
  pthread_mutex_lock(&window_lock);
  for (api_window_t** p = &window_list; *p; p = &(*p)->next)
    if ((*p)->comm == comm) {
      found = *p;
      *p = found->next;
      found->next = NULL;
      break;
    }
  pthread_mutex_unlock(&window_lock);
  return found;
}

void api_window_destroy(api_window_t* w) {
  pthread_mutex_lock(&window_lock);
  for (api_window_t** p = &window_list; *p; p = &(*p)->next)
    if (*p == w) {
      *p = w->next;
      break;
    }
  pthread_mutex_unlock(&window_lock);
  if (w->mapped) {
    struct ncclComm* comm = w->comm;
    const exec_ops_t* ops = comm->dp.exec.ops;
    void* callerCtx = NULL;
    if (ops->ctx_save(&callerCtx) == ncclSuccess && ops->bind(comm) == ncclSuccess)
      ops->win_destroy(comm->dp.exec.state, &w->exec);
    else
      MK_WARN("window %p: the communicator's device context is gone; its mappings are left", (void*)w->handle);
    ops->ctx_restore(callerCtx);
  }
  free(w->peerFlatBase);
  free(w);
}
