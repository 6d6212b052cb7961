/* The window table kernels search with ncclFindWindow: 32 entries (user
 * base, size, window handle) and a link to the next table, in device
 * memory, with the host's copy beside each. An entry is free when its
 * window is NULL. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "device/cuda/gpu_win.h"

typedef struct gpu_win_table {
  struct gpu_win_table* next;
  cu_deviceptr_t dev;
  mk_window_table_t host;
} gpu_win_table_t;

/* bytes at host copy `src` copied to `dst` in device memory, waited for
 * (the set-up stream: never the legacy stream, which would wait for other
 * communicators' kernels). */
static ncclResult_t gpu_win_table_upload(gpu_exec_t* ex, cu_deviceptr_t dst, const void* src, size_t bytes) {
  cu_result_t r = ex->g->memcpy_async(dst, (cu_deviceptr_t)(uintptr_t)src, bytes, ex->initStream);
  if (r == CUDA_DRV_SUCCESS) r = ex->g->stream_synchronize(ex->initStream);
  if (r != CUDA_DRV_SUCCESS) return CU_FAIL("cuMemcpyAsync (window table)", r);
  return ncclSuccess;
}

static ncclResult_t gpu_win_table_new(gpu_exec_t* ex, gpu_win_table_t** out) {
  gpu_win_table_t* t = calloc(1, sizeof(*t));
  if (!t) return MK_FAIL(ncclSystemError, "out of memory");
  cu_result_t r = ex->g->mem_alloc(&t->dev, sizeof(t->host));
  if (r != CUDA_DRV_SUCCESS) {
    free(t);
    return CU_FAIL("cuMemAlloc (window table)", r);
  }
  ncclResult_t res = gpu_win_table_upload(ex, t->dev, &t->host, sizeof(t->host));
  if (res != ncclSuccess) {
    ex->g->mem_free(t->dev);
    free(t);
    return res;
  }
  *out = t;
  return ncclSuccess;
}

ncclResult_t gpu_win_table_get(gpu_exec_t* ex, void** table) {
  if (!ex->winTables) MK_CHECK(gpu_win_table_new(ex, &ex->winTables));
  *table = (void*)(uintptr_t)ex->winTables->dev;
  return ncclSuccess;
}

ncclResult_t gpu_win_table_add(gpu_exec_t* ex, uintptr_t base, size_t size, void* window) {
  void* first;
  MK_CHECK(gpu_win_table_get(ex, &first));
  gpu_win_table_t* t = ex->winTables;
  for (;;) {
    for (int i = 0; i < MK_WINDOW_TABLE_ENTRIES; i++) {
      mk_window_table_entry_t* e = &t->host.entries[i];
      if (e->window) continue;
      *e = (mk_window_table_entry_t){base, size, window};
      ncclResult_t res = gpu_win_table_upload(ex, t->dev + (cu_deviceptr_t)((char*)e - (char*)&t->host), e, sizeof(*e));
      if (res != ncclSuccess) memset(e, 0, sizeof(*e));
      return res;
    }
    if (!t->next) {
      gpu_win_table_t* n;
      MK_CHECK(gpu_win_table_new(ex, &n));
      t->host.next = (mk_window_table_t*)(uintptr_t)n->dev;
      ncclResult_t res = gpu_win_table_upload(ex, t->dev + offsetof(mk_window_table_t, next), &t->host.next,
                                              sizeof(t->host.next));
      if (res != ncclSuccess) {
        t->host.next = NULL;
        ex->g->mem_free(n->dev);
        free(n);
        return res;
      }
      t->next = n;
    }
    t = t->next;
  }
}

void gpu_win_table_remove(gpu_exec_t* ex, void* window) {
  for (gpu_win_table_t* t = ex->winTables; t; t = t->next)
    for (int i = 0; i < MK_WINDOW_TABLE_ENTRIES; i++) {
      mk_window_table_entry_t* e = &t->host.entries[i];
      if (e->window != window) continue;
      memset(e, 0, sizeof(*e));
      if (gpu_win_table_upload(ex, t->dev + (cu_deviceptr_t)((char*)e - (char*)&t->host), e, sizeof(*e)) != ncclSuccess)
        MK_WARN("window table: clearing the entry of window %p failed", window);
      return;
    }
}

void gpu_win_table_free(gpu_exec_t* ex) {
  while (ex->winTables) {
    gpu_win_table_t* t = ex->winTables;
    ex->winTables = t->next;
    ex->g->mem_free(t->dev);
    free(t);
  }
}
