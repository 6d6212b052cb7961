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
} gpu_win_peer_t;

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
 * mappings. */
static ncclResult_t gpu_win_map_all(gpu_exec_t* ex, struct ncclComm* comm, const cuda_vmm_t* v, gpu_win_t* w,
                                    const gpu_win_local_t* loc, int lsaRank, int lsaSize, size_t size) {
  ncclResult_t res = ncclSuccess;
  int myFd = -1, sock = -1;
  int* fds = NULL;
  gpu_win_peer_t* all = calloc((size_t)comm->nRanks, sizeof(*all));
  if (!all || !(fds = calloc((size_t)lsaSize, sizeof(int)))) {
    res = MK_FAIL(ncclSystemError, "out of memory");
    goto out;
  }
  cu_result_t r = v->export_handle(&myFd, loc->handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
  if (r != CUDA_DRV_SUCCESS) {
    res = MK_FAIL(ncclInvalidArgument,
                  "window: the allocation cannot be exported as a file descriptor (CUDA error %d): allocate it with "
                  "ncclMemAlloc, or with cuMemCreate and CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR", (int)r);
    myFd = -1;
    goto out;
  }
  uint64_t seq = ex->winSeq++;
  MK_CHECK_GOTO(gpu_win_fds_open(comm, seq, &sock), res, out);
  all[comm->rank] = (gpu_win_peer_t){loc->allocSize, loc->offset};
  MK_CHECK_GOTO(bootstrap_allgather(comm->bootstrap, all, sizeof(*all)), res, out);
  const gpu_win_peer_t* lsa = all + (comm->rank - lsaRank);
  size_t maxAlloc = 0;
  for (int i = 0; i < lsaSize; i++) {
    if (lsa[i].offset != loc->offset || lsa[i].offset + size > lsa[i].allocSize) {
      res = MK_FAIL(ncclInvalidUsage,
                    "window: rank %d's window starts %llu bytes into its allocation, rank %d's %llu: windows of the "
                    "device API start at the same place of every rank's allocation", comm->rank,
                    (unsigned long long)loc->offset, comm->rank - lsaRank + i, (unsigned long long)lsa[i].offset);
      goto out;
    }
    if (lsa[i].allocSize > maxAlloc) maxAlloc = lsa[i].allocSize;
  }
  w->stride = (maxAlloc + GPU_WIN_4G - 1) / GPU_WIN_4G * GPU_WIN_4G;
  if ((r = v->address_reserve(&w->base, (size_t)lsaSize * w->stride, GPU_WIN_4G, 0, 0)) != CUDA_DRV_SUCCESS) {
    w->base = 0;
    res = CU_FAIL("cuMemAddressReserve (window)", r);
    goto out;
  }
  res = gpu_win_fds_swap(comm, sock, seq, lsaRank, lsaSize, myFd, fds);
  sock = -1;
  if (res != ncclSuccess) goto out;
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
  if (!v) return ncclSystemError;
  if (!cuda_vmm_fd_supported(ex->dev))
    return MK_FAIL(ncclInvalidUsage, "window: GPU %d cannot export VMM memory as file descriptors, which windows of "
                   "the device API need", ex->dev);
  gpu_win_local_t loc;
  MK_CHECK(gpu_win_local_get(v, ex->dev, buff, size, &loc));
  ncclResult_t res = ncclSuccess;
  gpu_win_t* w = calloc(1, sizeof(*w));
  if (!w || !(w->mapped = calloc((size_t)lsaSize, sizeof(size_t)))) {
    free(w);
    v->release(loc.handle);
    return MK_FAIL(ncclSystemError, "out of memory");
  }
  w->lsaSize = lsaSize;
  res = gpu_win_map_all(ex, comm, v, w, &loc, lsaRank, lsaSize, size);
  v->release(loc.handle); /* our mapping holds our memory (and the user's own mapping theirs) */
  char* local = (char*)(uintptr_t)(w->base + (cu_deviceptr_t)lsaRank * w->stride + loc.offset);
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
  /* No peer touches our memory before every rank has mapped (and zeroed) its own. */
  if (res == ncclSuccess) res = bootstrap_barrier(comm->bootstrap);
  if (res != ncclSuccess) {
    gpu_win_free(ex, v, w);
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
