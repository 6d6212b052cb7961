/* A device API window on the GPU executor: this rank's VMM allocation
 * (the user's, or one made here for the resource window) exported, every
 * LSA peer's imported and mapped at base + lsaRank * stride of one
 * reserved range, and the struct ncclWindow_vidmem written to device
 * memory (gpu_win.h says why VMM). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "bootstrap/bootstrap.h"
#include "comm/comm.h"
#include "device/cuda/gpu_win.h"

#define GPU_WIN_4G (1ull << 32)

/* What each rank says about its allocation (bootstrap allgather). */
typedef struct {
  uint64_t allocSize; /* bytes of the physical allocation */
  uint64_t offset;    /* the window's start in it */
  int32_t res;        /* ncclSuccess, or why this rank has nothing to offer */
  int32_t pad;
} gpu_win_peer_t;

/* Every rank's result, so that all fail alike instead of some waiting for
 * the others forever (also the barrier: no peer touches our memory before
 * every rank has mapped, and zeroed, its own). */
static ncclResult_t gpu_win_verdict(struct ncclComm* comm, ncclResult_t mine) {
  int32_t* all = calloc((size_t)comm->nRanks, sizeof(*all));
  if (!all) return MK_FAIL(ncclSystemError, "out of memory");
  all[comm->rank] = (int32_t)mine;
  ncclResult_t res = bootstrap_allgather(comm->bootstrap, all, sizeof(*all));
  for (int r = 0; r < comm->nRanks && res == ncclSuccess && mine == ncclSuccess; r++)
    if (all[r] != ncclSuccess)
      res = MK_FAIL((ncclResult_t)all[r], "window: rank %d could not make its part of the window (its log says why)", r);
  free(all);
  return mine != ncclSuccess ? mine : res;
}

/* This rank's allocation: the one under `buff`, retained, or a fresh one
 * of `size` bytes (rounded up to the granularity). */
typedef struct {
  cu_mem_handle_t handle;
  size_t allocSize, offset;
} gpu_win_local_t;

static ncclResult_t gpu_win_local_get(const cuda_vmm_t* v, int dev, void* buff, size_t size, gpu_win_local_t* out) {
  cu_result_t r;
  if (!buff) {
    cu_mem_prop_t prop = cuda_vmm_prop(dev);
    size_t gran = 0;
    if ((r = v->granularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED)) != CUDA_DRV_SUCCESS)
      return CU_FAIL("cuMemGetAllocationGranularity (window)", r);
    out->allocSize = (size + gran - 1) / gran * gran;
    out->offset = 0;
    if ((r = v->create(&out->handle, out->allocSize, &prop, 0)) != CUDA_DRV_SUCCESS)
      return CU_FAIL("cuMemCreate (device API resources)", r);
    return ncclSuccess;
  }
  if (v->retain_handle(&out->handle, buff) != CUDA_DRV_SUCCESS)
    return MK_FAIL(ncclInvalidArgument,
                   "ncclCommWindowRegister: %p is not memory of the CUDA VMM API (cuMemCreate); a window of a GPU "
                   "communicator must be allocated with ncclMemAlloc so that its LSA peers can map it", buff);
  cu_deviceptr_t base = 0;
  size_t bytes = 0;
  if ((r = v->address_range(&base, &bytes, (cu_deviceptr_t)(uintptr_t)buff)) != CUDA_DRV_SUCCESS) {
    v->release(out->handle);
    return CU_FAIL("cuMemGetAddressRange (window)", r);
  }
  out->offset = (size_t)((uintptr_t)buff - (uintptr_t)base);
  out->allocSize = bytes;
  if (out->offset + size > bytes) {
    v->release(out->handle);
    return MK_FAIL(ncclInvalidArgument,
                   "ncclCommWindowRegister: [%p, +%zu) spans more than the one allocation it starts in (%zu bytes "
                   "at offset %zu); register each allocation as its own window", buff, size, bytes, out->offset);
  }
  return ncclSuccess;
}

static void gpu_win_unmap(const cuda_vmm_t* v, gpu_win_t* w) {
  for (int i = 0; i < w->lsaSize; i++)
    if (w->mapped[i]) v->unmap(w->base + (cu_deviceptr_t)i * w->stride, w->mapped[i]);
  if (w->base) v->address_free(w->base, (size_t)w->lsaSize * w->stride);
}

/* Slot i of the range: our handle, or peer i's imported from its descriptor
 * (closed here); readable and writable by our device. */
static ncclResult_t gpu_win_map_slot(const cuda_vmm_t* v, int dev, gpu_win_t* w, int i, int own, cu_mem_handle_t mine,
                                     int fd, size_t bytes) {
  cu_mem_handle_t h = mine;
  cu_result_t r;
  if (!own) {
    r = v->import_handle(&h, (void*)(uintptr_t)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    close(fd);
    if (r != CUDA_DRV_SUCCESS) return CU_FAIL("cuMemImportFromShareableHandle (window of an LSA peer)", r);
  }
  cu_deviceptr_t at = w->base + (cu_deviceptr_t)i * w->stride;
  r = v->map(at, bytes, 0, h, 0);
  if (!own) v->release(h); /* the mapping holds the peer's memory from now on */
  if (r != CUDA_DRV_SUCCESS) return CU_FAIL("cuMemMap (window)", r);
  w->mapped[i] = bytes;
  cu_mem_access_t acc = {{CU_MEM_LOCATION_TYPE_DEVICE, dev}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
  if ((r = v->set_access(at, bytes, &acc, 1)) != CUDA_DRV_SUCCESS) return CU_FAIL("cuMemSetAccess (window)", r);
  return ncclSuccess;
}

/* Everything collective: the peers' sizes, the range, the descriptors, the
 * mappings. `mine`: whether this rank's allocation (loc) is there; a rank
 * that fails at any point still takes part in each exchange, so the others
 * never wait for it. */
static ncclResult_t gpu_win_map_all(gpu_exec_t* ex, struct ncclComm* comm, const cuda_vmm_t* v, gpu_win_t* w,
                                    const gpu_win_local_t* loc, ncclResult_t mine, int lsaRank, int lsaSize,
                                    size_t size) {
  ncclResult_t res = mine;
  int myFd = -1, sock = -1;
  int* fds = calloc((size_t)lsaSize, sizeof(int));
  gpu_win_peer_t* all = calloc((size_t)comm->nRanks, sizeof(*all));
  if (!all || !fds) {
    free(fds), free(all);
    return MK_FAIL(ncclSystemError, "out of memory");
  }
  cu_result_t r;
  if (res == ncclSuccess && (r = v->export_handle(&myFd, loc->handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0)) !=
                                CUDA_DRV_SUCCESS) {
    myFd = -1;
    res = MK_FAIL(ncclInvalidArgument,
                  "window: the allocation cannot be exported as a file descriptor (CUDA error %d): allocate it with "
                  "ncclMemAlloc, or with cuMemCreate and CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR", (int)r);
  }
  uint64_t seq = ex->winSeq++;
  if (res == ncclSuccess) res = gpu_win_fds_open(comm, seq, &sock);
  all[comm->rank] = (gpu_win_peer_t){res == ncclSuccess ? loc->allocSize : 0, res == ncclSuccess ? loc->offset : 0,
                                     (int32_t)res, 0};
  ncclResult_t ag = bootstrap_allgather(comm->bootstrap, all, sizeof(*all));
  if (ag != ncclSuccess) {
    res = res != ncclSuccess ? res : ag;
    goto out;
  }
  const gpu_win_peer_t* lsa = all + (comm->rank - lsaRank);
  for (int i = 0; i < comm->nRanks && res == ncclSuccess; i++)
    if (all[i].res != ncclSuccess)
      res = MK_FAIL((ncclResult_t)all[i].res, "window: rank %d has no memory to offer (its log says why)", i);
  if (res != ncclSuccess) goto out; /* every rank saw the same table: none exchanges descriptors */
  size_t maxAlloc = 0;
  for (int i = 0; i < lsaSize; i++) {
    if (lsa[i].offset != loc->offset || lsa[i].offset + size > lsa[i].allocSize) {
      res = MK_FAIL(ncclInvalidUsage,
                    "window: rank %d's window starts %llu bytes into its allocation, rank %d's %llu: windows of the "
                    "device API start at the same place of every rank's allocation", comm->rank,
                    (unsigned long long)loc->offset, comm->rank - lsaRank + i, (unsigned long long)lsa[i].offset);
      goto out; /* the same verdict on every rank of the team */
    }
    if (lsa[i].allocSize > maxAlloc) maxAlloc = lsa[i].allocSize;
  }
  w->stride = (maxAlloc + GPU_WIN_4G - 1) / GPU_WIN_4G * GPU_WIN_4G;
  if ((r = v->address_reserve(&w->base, (size_t)lsaSize * w->stride, GPU_WIN_4G, 0, 0)) != CUDA_DRV_SUCCESS) {
    w->base = 0;
    res = CU_FAIL("cuMemAddressReserve (window)", r);
  }
  /* Swapped even when the range failed: the peers wait for our descriptor. */
  ncclResult_t swapped = gpu_win_fds_swap(comm, sock, seq, lsaRank, lsaSize, myFd, fds);
  sock = -1;
  if (swapped != ncclSuccess) {
    res = res != ncclSuccess ? res : swapped;
    goto out;
  }
  for (int i = 0; i < lsaSize; i++) {
    int own = i == lsaRank;
    if (res == ncclSuccess)
      res = gpu_win_map_slot(v, ex->dev, w, i, own, loc->handle, fds[i], (size_t)lsa[i].allocSize);
    else if (!own)
      close(fds[i]); /* not mapped after an earlier failure */
  }
out:
  if (sock >= 0) close(sock);
  if (myFd >= 0) close(myFd);
  free(fds);
  free(all);
  return res;
}

/* The handle's target: the description kernels read, in device memory. */
static ncclResult_t gpu_win_vidmem_write(gpu_exec_t* ex, struct ncclComm* comm, gpu_win_t* w, size_t offset,
                                         int lsaRank) {
  struct ncclWindow_vidmem h;
  memset(&h, 0, sizeof(h));
  h.winHost = w;
  h.lsaFlatBase = (char*)(uintptr_t)(w->base + offset);
  h.lsaRank = lsaRank;
  h.worldRank = comm->rank;
  h.stride4G = (uint32_t)(w->stride >> 32);
  cu_result_t r = ex->g->mem_alloc(&w->vidmem, sizeof(h));
  if (r != CUDA_DRV_SUCCESS) {
    w->vidmem = 0;
    return CU_FAIL("cuMemAlloc (window description)", r);
  }
  r = ex->g->memcpy_async(w->vidmem, (cu_deviceptr_t)(uintptr_t)&h, sizeof(h), ex->initStream);
  if (r == CUDA_DRV_SUCCESS) r = ex->g->stream_synchronize(ex->initStream);
  if (r != CUDA_DRV_SUCCESS) return CU_FAIL("cuMemcpyAsync (window description)", r);
  return ncclSuccess;
}

static void gpu_win_free(gpu_exec_t* ex, const cuda_vmm_t* v, gpu_win_t* w) {
  if (w->listed) gpu_win_table_remove(ex, (void*)(uintptr_t)w->vidmem);
  if (w->vidmem) ex->g->mem_free(w->vidmem);
  gpu_win_unmap(v, w);
  free(w->mapped);
  free(w);
}

ncclResult_t gpu_exec_win_create(void* exv, struct ncclComm* comm, void* buff, size_t size, int lsaRank, int lsaSize,
                                 int listed, exec_win_t* out) {
  gpu_exec_t* ex = exv;
  const cuda_vmm_t* v = cuda_vmm();
  gpu_win_t* w = calloc(1, sizeof(*w));
  if (w && !(w->mapped = calloc((size_t)lsaSize, sizeof(size_t)))) free(w), w = NULL;
  ncclResult_t res = ncclSuccess;
  gpu_win_local_t loc = {0, 0, 0};
  int haveLocal = 0;
  if (!w)
    res = MK_FAIL(ncclSystemError, "out of memory");
  else if (!v)
    res = ncclSystemError;
  else if (!cuda_vmm_fd_supported(ex->dev))
    res = MK_FAIL(ncclInvalidUsage, "window: GPU %d cannot export VMM memory as file descriptors, which windows of "
                  "the device API need", ex->dev);
  else
    haveLocal = (res = gpu_win_local_get(v, ex->dev, buff, size, &loc)) == ncclSuccess;
  if (w) w->lsaSize = lsaSize;
  /* A rank that failed above still joins the exchanges (map_all, verdict):
   * map_all touches neither v nor w once its rank has failed. */
  res = gpu_win_map_all(ex, comm, v, w, &loc, res, lsaRank, lsaSize, size);
  if (haveLocal) v->release(loc.handle); /* our mapping holds our memory (and the user's own mapping theirs) */
  char* local = w ? (char*)(uintptr_t)(w->base + (cu_deviceptr_t)lsaRank * w->stride + loc.offset) : NULL;
  if (res == ncclSuccess && !buff) {
    cu_result_t r = ex->g->memset_d8_async((cu_deviceptr_t)(uintptr_t)local, 0, size, ex->initStream);
    if (r == CUDA_DRV_SUCCESS) r = ex->g->stream_synchronize(ex->initStream);
    if (r != CUDA_DRV_SUCCESS) res = CU_FAIL("cuMemsetD8Async (device API resources)", r);
  }
  if (res == ncclSuccess) res = gpu_win_vidmem_write(ex, comm, w, loc.offset, lsaRank);
  if (res == ncclSuccess && listed) {
    res = gpu_win_table_add(ex, buff ? (uintptr_t)buff : (uintptr_t)local, size, (void*)(uintptr_t)w->vidmem);
    w->listed = res == ncclSuccess;
  }
  res = gpu_win_verdict(comm, res);
  if (res != ncclSuccess) {
    if (w && v) gpu_win_free(ex, v, w);
    else if (w) free(w->mapped), free(w);
    return res;
  }
  *out = (exec_win_t){(void*)(uintptr_t)w->vidmem, (char*)(uintptr_t)(w->base + loc.offset),
                      (uint32_t)(w->stride >> 32), local, w};
  return ncclSuccess;
}

void gpu_exec_win_destroy(void* exv, exec_win_t* win) {
  const cuda_vmm_t* v = cuda_vmm();
  if (!win || !win->priv || !v) return;
  gpu_win_free(exv, v, win->priv);
  win->priv = NULL;
}

ncclResult_t gpu_exec_win_table(void* ex, void** table) { return gpu_win_table_get(ex, table); }
