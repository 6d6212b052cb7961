#include "device/cuda/gpu_exec.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "base/param.h"
#include "comm/comm.h"
#include "cuda/gpu.h"
#include "device/cuda/dev_comm.h"
#include "fifo/work_fifo.h"

#define GPU_EVENTS 128

typedef struct {
  work_fifo_event_t ev;
  cu_event_t event;
} gpu_fifo_event_t;

struct gpu_exec {
  const cuda_gpu_t* g;
  cu_context_t ctx;
  int dev;
  cu_module_t module;
  cu_function_t kernel;
  mk_dev_comm_t* devComm;   /* device memory */
  mk_dev_comm_t* hostComm;  /* what was copied there */
  uint8_t synced[MK_DEV_MAX_CHANNELS][2 + 2 * MK_DEV_MAX_RANKS];
  char* fifoBuf;            /* pinned, mapped */
  work_fifo_t fifo;
  gpu_fifo_event_t events[GPU_EVENTS];
  int nextEvent;
  volatile uint32_t* abortDev; /* the comm's abort flag as the GPU sees it */
  void* abortHost;             /* ... and the page registered for it */
  volatile uint64_t* status;   /* the kernels' progress rows (mapped host memory) */
  int rank;
  pthread_t watchdog;
  int watchdogRunning;
  volatile int stop;
};

/* The GPU watchdog (MKCCL_GPU_WATCHDOG seconds, 0 off): every that many
 * seconds, report what each channel's CTA last did (a diagnostic for GPU
 * hangs; a channel's row changes as its kernel makes progress). */
__attribute__((unused)) /* without kernels (MKCCL_ENABLE_CUDA=OFF) nothing starts it */
static void* gpu_watchdog_main(void* arg) {
  gpu_exec_t* ex = arg;
  int64_t limit = param_int("MKCCL_GPU_WATCHDOG");
  for (int64_t t = 0; !ex->stop; t++) {
    sleep(1);
    if (t % limit != limit - 1) continue;
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
  }
  return NULL;
}

#ifdef MKCCL_HAVE_KERNELS
extern const char mk_cuda_fatbin[];
#endif

/* The comm holds its device's primary context from its first bind until
 * gpu_exec_unbind: a context nobody holds (the application may not have
 * touched the device yet) would be destroyed under us. */
ncclResult_t gpu_exec_bind(struct ncclComm* comm) {
  const cuda_gpu_t* g = cuda_gpu();
  if (!g) return ncclInvalidUsage;
  if (!comm->dp.gpuCtx) {
    cu_context_t ctx;
    CU_CHECK(g->primary_ctx_retain(&ctx, comm->cudaDev));
    comm->dp.gpuCtx = ctx;
  }
  CU_CHECK(g->ctx_set_current((cu_context_t)comm->dp.gpuCtx));
  return ncclSuccess;
}

void gpu_exec_unbind(struct ncclComm* comm) {
  const cuda_gpu_t* g = cuda_gpu();
  if (g && comm->dp.gpuCtx) g->primary_ctx_release(comm->cudaDev);
  comm->dp.gpuCtx = NULL;
}

ncclResult_t gpu_exec_ctx_save(void** ctx) {
  const cuda_driver_t* d = cuda_driver();
  if (!d) return MK_FAIL(ncclInvalidUsage, "GPU communicator without a CUDA driver");
  cu_context_t c = NULL;
  CU_CHECK(d->ctx_get_current(&c));
  *ctx = c;
  return ncclSuccess;
}

void gpu_exec_ctx_restore(void* ctx) {
  const cuda_gpu_t* g = cuda_gpu();
  if (g && ctx) g->ctx_set_current((cu_context_t)ctx);
}

__attribute__((unused)) /* as gpu_watchdog_main */
static int gpu_event_query(work_fifo_event_t* ev) {
  gpu_fifo_event_t* e = (gpu_fifo_event_t*)ev;
  return cuda_gpu()->event_query(e->event) == CUDA_DRV_SUCCESS;
}

ncclResult_t gpu_exec_create(struct ncclComm* comm, gpu_exec_t** out) {
#ifndef MKCCL_HAVE_KERNELS
  (void)comm, (void)out;
  return MK_FAIL(ncclInvalidUsage, "this mkccl was built without the CUDA kernels (nvcc was not found at build time)");
#else
  const cuda_gpu_t* g = cuda_gpu();
  if (!g) return ncclInvalidUsage;
  ncclResult_t res = ncclSuccess;
  gpu_exec_t* ex = calloc(1, sizeof(*ex));
  if (!ex) return MK_FAIL(ncclSystemError, "out of memory");
  ex->g = g;
  ex->dev = comm->cudaDev;
  cu_result_t r = g->module_load_data(&ex->module, mk_cuda_fatbin);
  if (r != CUDA_DRV_SUCCESS) {
    res = CU_FAIL("cuModuleLoadData (mkccl kernels)", r);
    goto fail;
  }
  if ((r = g->module_get_function(&ex->kernel, ex->module, MK_KERNEL_NAME)) != CUDA_DRV_SUCCESS) {
    res = CU_FAIL("cuModuleGetFunction", r);
    goto fail_module;
  }
  /* Load the kernel now: with lazy module loading, a first launch loads it
   * and waits for the context's running kernels, and those (other ranks'
   * kernels on this GPU) wait for this one. */
  int regs = 0;
  if ((r = g->func_get_attribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, ex->kernel)) != CUDA_DRV_SUCCESS) {
    res = CU_FAIL("cuFuncGetAttribute (loading the kernel)", r);
    goto fail_module;
  }
  MK_INFO(NCCL_INIT, "Rank %d: mkccl kernel loaded on device %d (%d registers per thread)", comm->rank, comm->cudaDev,
          regs);
  cu_deviceptr_t d;
  if ((r = g->mem_alloc(&d, sizeof(mk_dev_comm_t))) != CUDA_DRV_SUCCESS) {
    res = CU_FAIL("cuMemAlloc (device comm)", r);
    goto fail_module;
  }
  ex->devComm = (mk_dev_comm_t*)(uintptr_t)d;
  ex->hostComm = calloc(1, sizeof(mk_dev_comm_t));
  uint32_t fifoBytes = (uint32_t)param_int("NCCL_WORK_FIFO_BYTES");
  if (!ex->hostComm) {
    res = MK_FAIL(ncclSystemError, "out of memory");
    goto fail_dev;
  }
  if ((r = g->mem_host_alloc((void**)&ex->fifoBuf, fifoBytes, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP)) !=
      CUDA_DRV_SUCCESS) {
    res = CU_FAIL("cuMemHostAlloc (work FIFO)", r);
    goto fail_host;
  }
  MK_CHECK_GOTO(work_fifo_init(&ex->fifo, ex->fifoBuf, fifoBytes), res, fail_fifo);
  int nEvents = 0;
  for (; nEvents < GPU_EVENTS; nEvents++) {
    if ((r = g->event_create(&ex->events[nEvents].event, CU_EVENT_DISABLE_TIMING)) != CUDA_DRV_SUCCESS) {
      res = CU_FAIL("cuEventCreate", r);
      goto fail_events;
    }
    ex->events[nEvents].ev.query = gpu_event_query;
  }
  /* The abort flag, mapped for the kernels (its own page, see comm_alloc). */
  cu_deviceptr_t abortDev;
  r = g->mem_host_register((void*)comm->abortFlag, 4096, CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP);
  if (r != CUDA_DRV_SUCCESS && r != CUDA_DRV_ERROR_HOST_MEMORY_ALREADY_REGISTERED) {
    res = CU_FAIL("cuMemHostRegister (abort flag)", r);
    goto fail_events;
  }
  if ((r = g->mem_host_get_device_pointer(&abortDev, (void*)comm->abortFlag, 0)) != CUDA_DRV_SUCCESS) {
    res = CU_FAIL("cuMemHostGetDevicePointer (abort flag)", r);
    g->mem_host_unregister((void*)comm->abortFlag);
    goto fail_events;
  }
  ex->abortDev = (volatile uint32_t*)(uintptr_t)abortDev;
  ex->abortHost = (void*)comm->abortFlag;
  if ((r = g->mem_host_alloc((void**)&ex->status, sizeof(uint64_t) * MK_DEV_MAX_CHANNELS * MK_DEV_STATUS_WORDS,
                             CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP)) != CUDA_DRV_SUCCESS) {
    res = CU_FAIL("cuMemHostAlloc (status)", r);
    g->mem_host_unregister((void*)comm->abortFlag);
    goto fail_events;
  }
  memset((void*)ex->status, 0, sizeof(uint64_t) * MK_DEV_MAX_CHANNELS * MK_DEV_STATUS_WORDS);
  ex->rank = comm->rank;
  ex->hostComm->rank = comm->rank;
  ex->hostComm->nRanks = comm->nRanks;
  ex->hostComm->abortFlag = ex->abortDev;
  ex->hostComm->status = ex->status;
  if ((r = g->memcpy_htod(d, ex->hostComm, sizeof(mk_dev_comm_t))) != CUDA_DRV_SUCCESS) {
    res = CU_FAIL("cuMemcpyHtoD (device comm)", r);
    g->mem_host_unregister((void*)comm->abortFlag);
    goto fail_events;
  }
  if (param_int("MKCCL_GPU_WATCHDOG") > 0 && pthread_create(&ex->watchdog, NULL, gpu_watchdog_main, ex) == 0)
    ex->watchdogRunning = 1;
  *out = ex;
  return ncclSuccess;
fail_events:
  for (int i = nEvents - 1; i >= 0; i--) g->event_destroy(ex->events[i].event);
fail_fifo:
  g->mem_free_host(ex->fifoBuf);
fail_host:
  free(ex->hostComm);
fail_dev:
  g->mem_free((cu_deviceptr_t)(uintptr_t)ex->devComm);
fail_module:
  g->module_unload(ex->module);
fail:
  free(ex);
  return res;
#endif
}

void gpu_exec_destroy(gpu_exec_t* ex) {
  if (!ex) return;
  const cuda_gpu_t* g = ex->g;
  if (ex->watchdogRunning) {
    ex->stop = 1;
    pthread_join(ex->watchdog, NULL);
  }
  for (int i = GPU_EVENTS - 1; i >= 0; i--) {
    g->event_synchronize(ex->events[i].event);
    g->event_destroy(ex->events[i].event);
  }
  g->mem_host_unregister(ex->abortHost);
  g->mem_free_host((void*)ex->status);
  g->mem_free_host(ex->fifoBuf);
  free(ex->hostComm);
  g->mem_free((cu_deviceptr_t)(uintptr_t)ex->devComm);
  g->module_unload(ex->module);
  free(ex);
}

static void gpu_conn_fill(mk_dev_conn_t* d, const connector_t* c) {
  memset(d, 0, sizeof(*d));
  d->buff = c->info.buffs[MKCCL_PROTO_SIMPLE];
  d->stepSize = c->info.stepSize[MKCCL_PROTO_SIMPLE];
  d->flags = c->info.flags;
  d->tail = c->info.tail;
  d->head = c->info.head;
  d->connFifo = c->info.connFifo;
  d->step = 0;
}

/* Host to device, ordered on the launch stream: a copy on the legacy NULL
 * stream would wait for every blocking stream of the context, among them
 * another communicator's kernel that waits for ours (one GPU, one process). */
static ncclResult_t gpu_copy_in(gpu_exec_t* ex, void* dev, const void* host, size_t bytes, void* stream) {
  cu_result_t r = stream ? ex->g->memcpy_async((cu_deviceptr_t)(uintptr_t)dev, (cu_deviceptr_t)(uintptr_t)host, bytes,
                                               (cu_stream_t)stream)
                         : ex->g->memcpy_htod((cu_deviceptr_t)(uintptr_t)dev, host, bytes);
  if (r != CUDA_DRV_SUCCESS) return CU_FAIL(stream ? "cuMemcpyAsync (device comm)" : "cuMemcpyHtoD (device comm)", r);
  return ncclSuccess;
}

/* One device entry: copied once, when its connector is connected. */
static ncclResult_t gpu_conn_sync(gpu_exec_t* ex, uint8_t* synced, mk_dev_conn_t* host, mk_dev_conn_t* dev,
                                  const connector_t* c, void* stream) {
  if (*synced || !c->connected) return ncclSuccess;
  gpu_conn_fill(host, c);
  MK_CHECK(gpu_copy_in(ex, dev, host, sizeof(*host), stream));
  *synced = 1;
  return ncclSuccess;
}

ncclResult_t gpu_exec_sync_conns(gpu_exec_t* ex, struct ncclComm* comm, void* stream) {
  if (comm->nRanks > MK_DEV_MAX_RANKS)
    return MK_FAIL(ncclInvalidUsage, "GPU communicators are limited to %d ranks in this build", MK_DEV_MAX_RANKS);
  for (int c = 0; c < comm->dp.nChannels && c < MK_DEV_MAX_CHANNELS; c++) {
    channel_t* ch = &comm->dp.channels[c];
    mk_dev_channel_t* h = &ex->hostComm->channels[c];
    mk_dev_channel_t* d = &ex->devComm->channels[c];
    if (!ex->synced[c][0] && !ex->synced[c][1]) {
      /* Ring description: written once, before any connection is used. */
      h->ringPrev = ch->ring.prev;
      h->ringNext = ch->ring.next;
      h->ringIndex = ch->ring.index;
      for (int r = 0; r < comm->nRanks; r++) h->ringRanks[r] = ch->ring.userRanks[r];
      MK_CHECK(gpu_copy_in(ex, d, h, offsetof(mk_dev_channel_t, ringSend), stream));
    }
    MK_CHECK(gpu_conn_sync(ex, &ex->synced[c][0], &h->ringSend, &d->ringSend, &ch->peers[ch->ring.next].send[MK_CONN_COLL], stream));
    MK_CHECK(gpu_conn_sync(ex, &ex->synced[c][1], &h->ringRecv, &d->ringRecv, &ch->peers[ch->ring.prev].recv[MK_CONN_COLL], stream));
    for (int p = 0; p < comm->nRanks; p++) {
      MK_CHECK(gpu_conn_sync(ex, &ex->synced[c][2 + p], &h->p2pSend[p], &d->p2pSend[p], &ch->peers[p].send[MK_CONN_P2P], stream));
      MK_CHECK(gpu_conn_sync(ex, &ex->synced[c][2 + MK_DEV_MAX_RANKS + p], &h->p2pRecv[p], &d->p2pRecv[p],
                             &ch->peers[p].recv[MK_CONN_P2P], stream));
    }
  }
  return ncclSuccess;
}

ncclResult_t gpu_exec_launch(gpu_exec_t* ex, const mk_work_t* works, int n, int nChannels, void* stream) {
  const cuda_gpu_t* g = ex->g;
  uint32_t bytes = (uint32_t)(n * sizeof(mk_work_t));
  MK_CHECK(work_fifo_wait_room(&ex->fifo, bytes, NULL));
  uint32_t offset = ex->fifo.produced;
  for (int i = 0; i < n; i++) work_fifo_push(&ex->fifo, &works[i], sizeof(mk_work_t));
  __atomic_thread_fence(__ATOMIC_SEQ_CST); /* items visible before the kernel starts */
  mk_kernel_args_t args = {ex->devComm, ex->fifoBuf, ex->fifo.bytes - 1, offset, (uint32_t)n, 0};
  void* params[] = {&args};
  cu_result_t r = g->launch_kernel(ex->kernel, (unsigned)nChannels, 1, 1, MK_KERNEL_THREADS, 1, 1, 0,
                                   (cu_stream_t)stream, params, NULL);
  if (r != CUDA_DRV_SUCCESS) return CU_FAIL("cuLaunchKernel", r);
  /* The space these items took returns once the kernel is done. */
  gpu_fifo_event_t* e = &ex->events[ex->nextEvent];
  /* Events are reused round robin: the one to reuse is the oldest queued. */
  while (e->ev.queued) {
    g->event_synchronize(((gpu_fifo_event_t*)ex->fifo.eventsHead)->event);
    work_fifo_poll(&ex->fifo);
  }
  ex->nextEvent = (ex->nextEvent + 1) % GPU_EVENTS;
  if ((r = g->event_record(e->event, (cu_stream_t)stream)) != CUDA_DRV_SUCCESS) return CU_FAIL("cuEventRecord", r);
  e->ev.consumedAfter = offset + bytes;
  work_fifo_event_add(&ex->fifo, &e->ev);
  work_fifo_poll(&ex->fifo);
  return ncclSuccess;
}

int gpu_exec_pointer_ok(const void* ptr) {
  const cuda_driver_t* d = cuda_driver();
  if (!d || !ptr) return 0;
  unsigned int type = 0;
  if (d->pointer_get_attribute(&type, CUDA_DRV_POINTER_ATTR_MEMORY_TYPE, (cu_deviceptr_t)(uintptr_t)ptr) !=
      CUDA_DRV_SUCCESS)
    return 0; /* unregistered host memory */
  return 1;   /* device, managed, or registered/pinned host memory */
}
