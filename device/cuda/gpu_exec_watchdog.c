/* The GPU watchdog (MKCCL_GPU_WATCHDOG seconds, 0 off): every that many
 * seconds, report what each channel's CTA last did (a diagnostic for GPU
 * hangs; a channel's row changes as its kernel makes progress), whether the
 * last launch started and ended, and channel 0's ring connections as the
 * device sees them. */
#include <pthread.h>
#include <unistd.h>

#include "base/err.h"
#include "base/param.h"
#include "device/cuda/gpu_exec_internal.h"

const char* gpu_exec_query_str(cu_result_t r) {
  return r == CUDA_DRV_SUCCESS ? "done" : r == CUDA_DRV_ERROR_NOT_READY ? "not-ready" : cuda_result_str(r);
}

/* Copy `bytes` at `src` (any UVA address) into the pinned read-back buffer
 * on the diagnostic stream, waiting at most ~200 ms (a copy that cannot run
 * is itself a finding). */
static const char* gpu_diag_read(gpu_exec_t* ex, void* dst, const void* src, size_t bytes) {
  if (!src) return "null";
  cu_result_t r = ex->g->memcpy_async((cu_deviceptr_t)(uintptr_t)dst, (cu_deviceptr_t)(uintptr_t)src, bytes,
                                      ex->diagStream);
  if (r != CUDA_DRV_SUCCESS) return cuda_result_str(r);
  for (int i = 0; i < 200; i++) {
    r = ex->g->stream_query(ex->diagStream);
    if (r != CUDA_DRV_ERROR_NOT_READY) return r == CUDA_DRV_SUCCESS ? NULL : cuda_result_str(r);
    usleep(1000);
  }
  return "copy blocked";
}

/* Channel 0's ring connections as the device sees them: the device copy
 * (pointers and the kernel's step counters) and the head/tail words. */
static void gpu_watchdog_conns(gpu_exec_t* ex) {
  if (!ex->diagStream || !ex->diagBuf) return;
  mk_dev_conn_t* conns = (mk_dev_conn_t*)ex->diagBuf;
  mk_dev_channel_t dev0 = ex->hostComm->channels[0]; /* its device table */
  int n = ex->hostComm->nRanks;
  const char* err =
      gpu_diag_read(ex, &conns[0], MK_DEV_CONN(&dev0, n, MK_DEV_COLL_SEND, dev0.ringNext), sizeof(mk_dev_conn_t));
  if (!err)
    err = gpu_diag_read(ex, &conns[1], MK_DEV_CONN(&dev0, n, MK_DEV_COLL_RECV, dev0.ringPrev), sizeof(mk_dev_conn_t));
  if (err) {
    MK_WARN("GPU watchdog: rank %d: reading the device comm: %s", ex->rank, err);
    return;
  }
  const char* names[2] = {"send", "recv"};
  for (int k = 0; k < 2; k++) {
    mk_dev_conn_t* c = &conns[k];
    uint64_t* w = ex->diagBuf + 16 + 2 * k;
    const char* e1 = gpu_diag_read(ex, &w[0], (const void*)c->tail, sizeof(uint64_t));
    const char* e2 = gpu_diag_read(ex, &w[1], (const void*)c->head, sizeof(uint64_t));
    MK_WARN("GPU watchdog: rank %d channel 0 ring %s: devStep %llu tail@%p=%lld%s%s head@%p=%lld%s%s buff %p "
            "stepSize %d flags 0x%x connFifo %p",
            ex->rank, names[k], (unsigned long long)c->step, (void*)c->tail, e1 ? -1LL : (long long)w[0],
            e1 ? " " : "", e1 ? e1 : "", (void*)c->head, e2 ? -1LL : (long long)w[1], e2 ? " " : "", e2 ? e2 : "",
            (void*)c->buff, c->stepSize, c->flags, (void*)c->connFifo);
  }
}

/* A second, in slices: a destroy or abort that stops the watchdog waits
 * for one slice, not for the rest of the second. */
static void gpu_watchdog_sleep(const gpu_exec_t* ex) {
  for (int i = 0; i < 100 && !__atomic_load_n(&ex->stop, __ATOMIC_ACQUIRE); i++) usleep(10000);
}

static void* gpu_watchdog_main(void* arg) {
  gpu_exec_t* ex = arg;
  int64_t limit = param_MKCCL_GPU_WATCHDOG();
  /* Driver calls below (queries, read-back copies) need the context. */
  if (ex->ctx) ex->g->ctx_set_current(ex->ctx);
  for (int64_t t = 0; !__atomic_load_n(&ex->stop, __ATOMIC_ACQUIRE); t++) {
    gpu_watchdog_sleep(ex);
    if (t % limit != limit - 1 || __atomic_load_n(&ex->stop, __ATOMIC_ACQUIRE)) continue;
    if (ex->diagLaunched)
      MK_WARN("GPU watchdog: rank %d: last launch: work ahead of it %s, kernel %s", ex->rank,
              gpu_exec_query_str(ex->g->event_query(ex->diagPre)),
              gpu_exec_query_str(ex->g->event_query(ex->diagPost)));
    for (int c = 0; c < MK_DEV_MAX_CHANNELS; c++) {
      volatile uint64_t* r = ex->status + c * MK_DEV_STATUS_WORDS;
      if (!r[MK_STATUS_OP] && !r[MK_STATUS_TICKS] && c > 0) continue;
      MK_WARN("GPU watchdog: rank %d channel %d op %llu prim %llu slice %llu word=%llu target %llu "
              "rstep %llu sstep %llu ticks %llu", ex->rank, c, (unsigned long long)r[MK_STATUS_OP] - 1,
              (unsigned long long)(r[MK_STATUS_PRIM] & 0xff), (unsigned long long)(r[MK_STATUS_PRIM] >> 8),
              (unsigned long long)r[MK_STATUS_WORD], (unsigned long long)r[MK_STATUS_TARGET],
              (unsigned long long)r[MK_STATUS_RSTEP], (unsigned long long)r[MK_STATUS_SSTEP],
              (unsigned long long)r[MK_STATUS_TICKS]);
    }
    /* Connection words live partly in peers' memory, which a peer frees at
     * its destroy: read them only while our last kernel is still running
     * (reading a freed peer region crashed the driver, two comms in one
     * process). */
    if (ex->diagLaunched && ex->g->event_query(ex->diagPost) != CUDA_DRV_SUCCESS) gpu_watchdog_conns(ex);
    if (ex->proxy) proxy_client_dump(ex->proxy, "GPU watchdog");
  }
  return NULL;
}

/* Best effort: without these the watchdog reports the status rows only. */
ncclResult_t gpu_exec_diag_open(gpu_exec_t* ex, struct ncclComm* comm) {
  (void)comm;
  const cuda_gpu_t* g = ex->g;
  if (param_MKCCL_GPU_WATCHDOG() <= 0) return ncclSuccess;
  if (g->event_create(&ex->diagPre, CU_EVENT_DISABLE_TIMING) != CUDA_DRV_SUCCESS) ex->diagPre = NULL;
  if (g->event_create(&ex->diagPost, CU_EVENT_DISABLE_TIMING) != CUDA_DRV_SUCCESS) ex->diagPost = NULL;
  if (g->stream_create(&ex->diagStream, CU_STREAM_NON_BLOCKING) != CUDA_DRV_SUCCESS) ex->diagStream = NULL;
  if (g->mem_host_alloc((void**)&ex->diagBuf, 256, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP) !=
      CUDA_DRV_SUCCESS)
    ex->diagBuf = NULL;
  return ncclSuccess;
}

void gpu_exec_diag_close(gpu_exec_t* ex) {
  const cuda_gpu_t* g = ex->g;
  if (ex->diagPost) g->event_destroy(ex->diagPost);
  if (ex->diagPre) g->event_destroy(ex->diagPre);
  if (ex->diagStream) g->stream_destroy(ex->diagStream);
  if (ex->diagBuf) g->mem_free_host(ex->diagBuf);
}

void gpu_exec_watchdog_start(gpu_exec_t* ex) {
  if (param_MKCCL_GPU_WATCHDOG() > 0 && pthread_create(&ex->watchdog, NULL, gpu_watchdog_main, ex) == 0)
    ex->watchdogRunning = 1;
}

void gpu_exec_watchdog_stop(gpu_exec_t* ex) {
  if (!ex->watchdogRunning) return;
  __atomic_store_n(&ex->stop, 1, __ATOMIC_RELEASE);
  pthread_join(ex->watchdog, NULL);
}
