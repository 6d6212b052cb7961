#include "device/cuda/gpu_exec.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/err.h"
#include "base/param.h"
#include "comm/comm.h"
#include "cuda/gpu.h"
#include "device/cuda/dev_comm.h"
#include "fifo/work_fifo.h"

#define GPU_EVENTS 128

/* Work items of a launch captured into a CUDA graph: every replay of the
 * kernel node reads them again, so they cannot sit in the work FIFO, whose
 * space is reused. Kept until the executor is destroyed (a graph must not
 * be replayed after its communicator is gone). */
typedef struct gpu_graph_work {
  struct gpu_graph_work* next;
  void* items; /* pinned, mapped */
} gpu_graph_work_t;

typedef struct {
  work_fifo_event_t ev;
  cu_event_t event;
} gpu_fifo_event_t;

struct gpu_exec {
  const cuda_gpu_t* g;
  cu_context_t ctx;
  int dev;
  cu_module_t module;
  int ownModule;            /* module is this executor's (net device code linked in, or not cached): unloaded */
  cu_function_t kernel;
  cu_function_t kernelLL;   /* the LL-only kernel, NULL (net device unpack): items all go to `kernel` */
  mk_dev_comm_t* devComm;   /* device memory */
  mk_dev_comm_t* hostComm;  /* what was copied there */
  mk_dev_conn_t* devConns;  /* every channel's connection table (device memory) */
  mk_dev_conn_t* hostConns; /* ... and its host copy, same layout */
  size_t connsBytes;
  int32_t* devRingRanks;    /* every channel's ring order, [MK_DEV_MAX_CHANNELS][nRanks], after devConns */
  int32_t* hostRingRanks;   /* ... and its host copy */
  uint8_t* synced;          /* per connection of devConns: copied there */
  uint8_t ringSynced[MK_DEV_MAX_CHANNELS]; /* ring description copied */
  uint64_t syncedGen;                      /* comm->dp.ch.connGen at the last full sync (+1: none yet) */
  proxy_client_t* proxy;                   /* the comm's, for the watchdog */
  char* fifoBuf;            /* pinned, mapped */
  work_fifo_t fifo;
  gpu_fifo_event_t events[GPU_EVENTS];
  int nextEvent;
  volatile uint32_t* abortDev; /* the comm's abort flag as the GPU sees it */
  void* abortHost;             /* ... and the page registered for it */
  volatile uint64_t* status;   /* the kernels' progress rows (mapped host memory) */
  int rank;
  /* Set-up copies (device comm, connections at init) go through this
   * private non-blocking stream, never the legacy NULL stream: a legacy-stream
   * operation waits for every blocking stream of the context, among them a
   * kernel of another communicator on this GPU that may wait for us. */
  cu_stream_t initStream;
  int localBytes;           /* the kernel's local memory per thread */
  size_t stackLimit;        /* the context's stack limit before init */
  double loadMs;            /* loading the module and the kernel (JIT included, if any) */
  int unpack;               /* the module calls the net device plugin's unpack */
  pthread_t watchdog;
  int watchdogRunning;
  volatile int stop;
  /* Watchdog diagnostics: events around the last launch (was anything
   * queued ahead of the kernel? did it end?) and a read-back stream. */
  cu_event_t diagPre, diagPost;
  volatile int diagLaunched;
  cu_stream_t diagStream;
  uint64_t* diagBuf; /* pinned: read-back of channel 0's connections */
  gpu_graph_work_t* graphWork; /* work items of captured launches, for the graphs' replays */
  cu_event_t joinEvent;        /* orders the streams of one group (gpu_exec_stream_join), made on first use */
  /* The last uncaptured launch: a launch on another stream waits for it, so
   * the communicator's kernels run one after the other in call order, as
   * NCCL's do (they share channels and step counters). */
  void* lastStream;
  cu_event_t lastEvent;
  uint64_t* trace;             /* MKCCL_GPU_TRACE: the kernels' slice events (device memory), or NULL */
};

/* MKCCL_GPU_TRACE: the last traced kernel's slice events on channel 0, one
 * line each, microseconds from the kernel's start (diagnostics: the cost of
 * a slice's wait, barrier, data and posts on a real GPU). */
static void gpu_trace_print(gpu_exec_t* ex) {
  uint32_t cap = ex->hostComm->traceCap;
  uint64_t* t = calloc(1 + 2 * (size_t)cap, sizeof(uint64_t));
  if (!t) return;
  if (ex->g->memcpy_dtoh(t, (cu_deviceptr_t)(uintptr_t)ex->trace, (1 + 2 * (size_t)cap) * sizeof(uint64_t)) ==
      CUDA_DRV_SUCCESS) {
    static const char* evs[] = {"kernel", "slice", "waited", "go", "data", "posted", "run", "bound", "prev", "end"};
    uint64_t n = t[0] < cap ? t[0] : cap;
    fprintf(stderr, "# mkccl trace rank %d: %llu events of channel 0 (us from kernel start; prim, slice, bytes)\n",
            ex->rank, (unsigned long long)n);
    for (uint64_t i = 0; i < n; i++) {
      uint64_t c = t[2 + 2 * i];
      fprintf(stderr, "# rank %d %9.3f %-6s prim %llu slice %llu bytes %llu\n", ex->rank,
              (double)(int64_t)(t[1 + 2 * i] - t[1]) / 1e3, evs[(c & 15) < 10 ? (c & 15) : 0],
              (unsigned long long)((c >> 4) & 0xff), (unsigned long long)((c >> 12) & 0xff),
              (unsigned long long)(c >> 32));
    }
  }
  free(t);
}

/* The GPU watchdog (MKCCL_GPU_WATCHDOG seconds, 0 off): every that many
 * seconds, report what each channel's CTA last did (a diagnostic for GPU
 * hangs; a channel's row changes as its kernel makes progress). */
static const char* gpu_query_str(cu_result_t r) {
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

/* (unused in a build without the kernels) */
__attribute__((unused)) static void* gpu_watchdog_main(void* arg) {
  gpu_exec_t* ex = arg;
  int64_t limit = param_MKCCL_GPU_WATCHDOG();
  /* Driver calls below (queries, read-back copies) need the context. */
  if (ex->ctx) ex->g->ctx_set_current(ex->ctx);
  for (int64_t t = 0; !ex->stop; t++) {
    sleep(1);
    if (t % limit != limit - 1) continue;
    if (ex->diagLaunched)
      MK_WARN("GPU watchdog: rank %d: last launch: work ahead of it %s, kernel %s", ex->rank,
              gpu_query_str(ex->g->event_query(ex->diagPre)), gpu_query_str(ex->g->event_query(ex->diagPost)));
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

#ifdef MKCCL_HAVE_KERNELS
extern const char mk_cuda_fatbin[];
#endif

/* The comm holds its device's primary context from its first bind until
 * gpu_exec_unbind: a context nobody holds (the application may not have
 * touched the device yet) would be destroyed under us. */
ncclResult_t gpu_exec_bind(struct ncclComm* comm) {
  const cuda_gpu_t* g = cuda_gpu();
  if (!g) return ncclInvalidUsage;
  if (!comm->dp.exec.gpuCtx) {
    cu_context_t ctx;
    CU_CHECK(g->primary_ctx_retain(&ctx, comm->cudaDev));
    comm->dp.exec.gpuCtx = ctx;
  }
  CU_CHECK(g->ctx_set_current((cu_context_t)comm->dp.exec.gpuCtx));
  return ncclSuccess;
}

void gpu_exec_unbind(struct ncclComm* comm) {
  const cuda_gpu_t* g = cuda_gpu();
  if (g && comm->dp.exec.gpuCtx) g->primary_ctx_release(comm->cudaDev);
  comm->dp.exec.gpuCtx = NULL;
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

__attribute__((unused)) static int gpu_event_query(work_fifo_event_t* ev) {
  gpu_fifo_event_t* e = (gpu_fifo_event_t*)ev;
  return cuda_gpu()->event_query(e->event) == CUDA_DRV_SUCCESS;
}

/* One launch of the kernel, nChannels CTAs on `stream`, reading n work
 * items from `items` at `offset` (wrapped by `mask`, the FIFO's; a buffer
 * that never wraps passes all ones), or, with `inl`, the n <= MK_ARGS_WORKS
 * items there copied into the arguments. */
static cu_result_t gpu_kernel_launch(gpu_exec_t* ex, cu_function_t fn, const char* items, uint32_t mask,
                                     uint32_t offset, int n, int nChannels, cu_stream_t stream, const mk_work_t* inl) {
  mk_kernel_args_t args;
  memset(&args, 0, sizeof(args));
  args.comm = ex->devComm;
  args.workBuf = items;
  args.workMask = mask;
  args.workOffset = offset;
  args.nWorks = (uint32_t)n;
  if (inl) {
    args.inlined = 1;
    memcpy(args.works, inl, (size_t)n * sizeof(mk_work_t));
  }
  void* params[] = {&args};
  return ex->g->launch_kernel(fn, (unsigned)nChannels, 1, 1, MK_KERNEL_THREADS, 1, 1, 0, stream, params, NULL);
}

#ifdef MKCCL_HAVE_KERNELS
/* Wait for a stream without blocking forever: polls for at most `ms`. */
static cu_result_t gpu_stream_wait(const cuda_gpu_t* g, cu_stream_t s, int ms) {
  for (int i = 0;; i++) {
    cu_result_t r = g->stream_query(s);
    if (r != CUDA_DRV_ERROR_NOT_READY || i >= ms * 10) return r;
    usleep(100);
  }
}

/* The kernel's local memory (stack) as the context's stack limit, set now:
 * a launch that needs more than the context has grows it first, and that
 * waits for every kernel of the context to finish, among them another
 * rank's kernel on this GPU that waits for ours (NCCL can set the limit at
 * init for the same reason: NCCL_SET_STACK_SIZE). */
static void gpu_stack_limit(gpu_exec_t* ex, const cuda_gpu_t* g, cu_function_t fn, int rank) {
  int local = 0;
  size_t cur = 0;
  if (g->func_get_attribute(&local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, fn) != CUDA_DRV_SUCCESS ||
      g->ctx_get_limit(&cur, CU_LIMIT_STACK_SIZE) != CUDA_DRV_SUCCESS)
    return;
  if ((size_t)local > cur) {
    cu_result_t r = g->ctx_set_limit(CU_LIMIT_STACK_SIZE, (size_t)local);
    if (r != CUDA_DRV_SUCCESS) MK_WARN("Rank %d: cuCtxSetLimit(stack %d bytes) failed: %s", rank, local, cuda_result_str(r));
  }
  ex->localBytes = local;
  ex->stackLimit = cur;
  MK_INFO(NCCL_INIT, "Rank %d: kernel local memory %d bytes per thread, context stack limit was %zu", rank, local, cur);
}

/* The kernel's first launch, with no work (it only bumps its channel 0
 * status word), at init, waited for. A module's first launch may need the
 * context to itself even after its function was loaded: on an H100, two
 * ranks of one process on one GPU hung when rank 1's first kernel would not
 * start while rank 0's ran, waiting for it (SHM, then NET; not seen in the
 * runs that made this launch at init, as MKCCL_GPU_PROBE did). A launch
 * still queued after 10 s (another kernel of the context holds it) is
 * harmless, it has no work: init goes on. With MKCCL_GPU_PROBE the
 * result is reported too: it tells "kernels of this communicator cannot run
 * or their status is invisible" apart from a hang in the protocol. */
static int gpu_first_launch(gpu_exec_t* ex, int report) {
  const cuda_gpu_t* g = ex->g;
  volatile uint64_t* ticks = ex->status + MK_STATUS_TICKS;
  uint64_t before = *ticks;
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  cu_result_t r = gpu_kernel_launch(ex, ex->kernel, ex->fifoBuf, ex->fifo.bytes - 1, 0, 0, 1, ex->initStream, NULL);
  if (r == CUDA_DRV_SUCCESS && ex->kernelLL)
    r = gpu_kernel_launch(ex, ex->kernelLL, ex->fifoBuf, ex->fifo.bytes - 1, 0, 0, 1, ex->initStream, NULL);
  if (r == CUDA_DRV_SUCCESS) r = gpu_stream_wait(g, ex->initStream, 10000);
  double ms = mk_ms_since(&t0);
  if (!report) {
    if (r == CUDA_DRV_SUCCESS) *ticks = before;
    else MK_WARN("Rank %d: the kernel's first launch (no work) at init: %s after %.2f ms", ex->rank, gpu_query_str(r), ms);
    return 1;
  }
  MK_WARN("GPU probe: rank %d device %d: empty kernel %s after %.2f ms; status word %llu -> %llu (%s); kernel local "
          "memory %d B/thread, stack limit was %zu; module load %.1f ms; driver %d",
          ex->rank, ex->dev, gpu_query_str(r), ms, (unsigned long long)before, (unsigned long long)*ticks,
          *ticks == before + 1000000 ? "visible" : "NOT visible", ex->localBytes, ex->stackLimit, ex->loadMs,
          cuda_driver() ? cuda_driver()->driverVersion : 0);
  *ticks = before;
  return r == CUDA_DRV_SUCCESS;
}
#endif

/* The built-in kernels, loaded once per context and kept (as NCCL's own
 * kernels are): a module loaded and unloaded per communicator left GPU
 * memory behind, 2 MB every few init/destroy cycles on an H100
 * (test_gpu_fault leak), and cost its load time at every init. A cached
 * module that no longer answers (its context was destroyed, and another
 * came with the same handle) is loaded again. */
#define GPU_MODULES_MAX 64
static struct {
  cu_context_t ctx;
  cu_module_t module;
} gpu_modules[GPU_MODULES_MAX];
static int gpu_nmodules;
static pthread_mutex_t gpu_modules_lock = PTHREAD_MUTEX_INITIALIZER;

/* *owned: the module is the caller's to unload (more contexts than slots). */
__attribute__((unused)) static cu_result_t gpu_builtin_module(const cuda_gpu_t* g, cu_context_t ctx, const void* image,
                                                              cu_module_t* out, int* owned) {
  pthread_mutex_lock(&gpu_modules_lock);
  int slot = -1;
  for (int i = 0; i < gpu_nmodules; i++)
    if (gpu_modules[i].ctx == ctx) slot = i;
  cu_function_t fn;
  cu_result_t r = CUDA_DRV_SUCCESS;
  if (slot < 0 || g->module_get_function(&fn, gpu_modules[slot].module, MK_KERNEL_NAME) != CUDA_DRV_SUCCESS) {
    cu_module_t m;
    r = g->module_load_data(&m, image);
    if (r == CUDA_DRV_SUCCESS) {
      if (slot < 0 && gpu_nmodules < GPU_MODULES_MAX) slot = gpu_nmodules++;
      if (slot >= 0) gpu_modules[slot].ctx = ctx, gpu_modules[slot].module = m;
      *out = m;
      *owned = slot < 0;
    }
  } else {
    *out = gpu_modules[slot].module;
    *owned = 0;
  }
  pthread_mutex_unlock(&gpu_modules_lock);
  return r;
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
  ex->ctx = (cu_context_t)comm->dp.exec.gpuCtx;
  struct timespec l0;
  clock_gettime(CLOCK_MONOTONIC, &l0);
  /* Net receives that need a plugin's unpack: the kernels linked with its
   * device code at init (netdev_comm_open); else the built-in ones. */
  ex->unpack = comm->dp.net.devCubin != NULL;
  ex->ownModule = ex->unpack;
  cu_result_t r = ex->unpack ? g->module_load_data(&ex->module, comm->dp.net.devCubin)
                             : gpu_builtin_module(g, ex->ctx, mk_cuda_fatbin, &ex->module, &ex->ownModule);
  if (r != CUDA_DRV_SUCCESS) {
    res = CU_FAIL(ex->unpack ? "cuModuleLoadData (mkccl kernels linked with the net device code)"
                             : "cuModuleLoadData (mkccl kernels)", r);
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
  /* The LL-only kernel, loaded now too (same reason); without it every
   * item runs on the full kernel. Not with the net device's unpack: LL
   * runs over P2P lines only, never over a net connection. */
  int regsLL = 0;
  if (!ex->unpack &&
      (g->module_get_function(&ex->kernelLL, ex->module, MK_KERNEL_LL_NAME) != CUDA_DRV_SUCCESS ||
       g->func_get_attribute(&regsLL, CU_FUNC_ATTRIBUTE_NUM_REGS, ex->kernelLL) != CUDA_DRV_SUCCESS))
    ex->kernelLL = NULL;
  ex->loadMs = mk_ms_since(&l0);
  MK_INFO(NCCL_INIT, "Rank %d: mkccl kernel%s loaded on device %d in %.1f ms (%d registers per thread; LL kernel %s)",
          comm->rank, ex->unpack ? " (net device unpack)" : "", comm->cudaDev, ex->loadMs, regs,
          ex->kernelLL ? "loaded" : "off");
  if (ex->kernelLL) gpu_stack_limit(ex, g, ex->kernelLL, comm->rank);
  gpu_stack_limit(ex, g, ex->kernel, comm->rank);
  if ((r = g->stream_create(&ex->initStream, CU_STREAM_NON_BLOCKING)) != CUDA_DRV_SUCCESS) {
    res = CU_FAIL("cuStreamCreate (set-up stream)", r);
    goto fail_module;
  }
  cu_deviceptr_t d;
  if ((r = g->mem_alloc(&d, sizeof(mk_dev_comm_t))) != CUDA_DRV_SUCCESS) {
    res = CU_FAIL("cuMemAlloc (device comm)", r);
    goto fail_stream;
  }
  ex->devComm = (mk_dev_comm_t*)(uintptr_t)d;
  ex->hostComm = calloc(1, sizeof(mk_dev_comm_t));
  uint32_t fifoBytes = (uint32_t)param_NCCL_WORK_FIFO_BYTES();
  if (!ex->hostComm) {
    res = MK_FAIL(ncclSystemError, "out of memory");
    goto fail_dev;
  }
  /* Every channel's connections, kind by kind, peer by peer. */
  size_t nConns = (size_t)MK_DEV_MAX_CHANNELS * MK_DEV_CONN_KINDS * (size_t)comm->nRanks;
  ex->connsBytes = nConns * sizeof(mk_dev_conn_t);
  size_t nRing = (size_t)MK_DEV_MAX_CHANNELS * (size_t)comm->nRanks;
  cu_deviceptr_t dc;
  if ((r = g->mem_alloc(&dc, ex->connsBytes + nRing * sizeof(int32_t))) != CUDA_DRV_SUCCESS) {
    res = CU_FAIL("cuMemAlloc (device connections)", r);
    goto fail_host;
  }
  ex->devConns = (mk_dev_conn_t*)(uintptr_t)dc;
  ex->devRingRanks = (int32_t*)((char*)ex->devConns + ex->connsBytes);
  ex->hostConns = calloc(nConns, sizeof(mk_dev_conn_t));
  ex->hostRingRanks = calloc(nRing, sizeof(int32_t));
  ex->synced = calloc(nConns, 1);
  if (!ex->hostConns || !ex->synced || !ex->hostRingRanks) {
    res = MK_FAIL(ncclSystemError, "out of memory");
    goto fail_conns;
  }
  for (int c = 0; c < MK_DEV_MAX_CHANNELS; c++) {
    ex->hostComm->channels[c].conns = ex->devConns + (size_t)c * MK_DEV_CONN_KINDS * (size_t)comm->nRanks;
    ex->hostComm->channels[c].ringRanks = ex->devRingRanks + (size_t)c * (size_t)comm->nRanks;
  }
  if ((r = g->mem_host_alloc((void**)&ex->fifoBuf, fifoBytes, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP)) !=
      CUDA_DRV_SUCCESS) {
    res = CU_FAIL("cuMemHostAlloc (work FIFO)", r);
    goto fail_conns;
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
  ex->proxy = &comm->dp.proxy;
  ex->hostComm->rank = comm->rank;
  ex->hostComm->nRanks = comm->nRanks;
  ex->hostComm->abortFlag = ex->abortDev;
  ex->hostComm->status = ex->status;
  int64_t timeoutSec = param_MKCCL_TIMEOUT();
  ex->hostComm->timeoutNs = timeoutSec > 0 ? (uint64_t)timeoutSec * 1000000000ull : 0;
  ex->hostComm->traceStatus = param_MKCCL_GPU_WATCHDOG() > 0 || param_MKCCL_GPU_PROBE() != 0;
  int64_t traceCap = param_MKCCL_GPU_TRACE();
  size_t traceBytes = (1 + 2 * (size_t)traceCap) * sizeof(uint64_t);
  cu_deviceptr_t traceDev;
  if (traceCap > 0 && traceCap < (1 << 20) && g->mem_alloc(&traceDev, traceBytes) == CUDA_DRV_SUCCESS &&
      g->memset_d8(traceDev, 0, traceBytes) == CUDA_DRV_SUCCESS) {
    ex->trace = (uint64_t*)(uintptr_t)traceDev;
    ex->hostComm->trace = ex->trace;
    ex->hostComm->traceCap = (uint32_t)traceCap;
  }
  r = g->memcpy_async(d, (cu_deviceptr_t)(uintptr_t)ex->hostComm, sizeof(mk_dev_comm_t), ex->initStream);
  if (r == CUDA_DRV_SUCCESS) /* zeros: no connection yet */
    r = g->memcpy_async((cu_deviceptr_t)(uintptr_t)ex->devConns, (cu_deviceptr_t)(uintptr_t)ex->hostConns,
                        ex->connsBytes, ex->initStream);
  if (r == CUDA_DRV_SUCCESS) r = g->stream_synchronize(ex->initStream);
  if (r != CUDA_DRV_SUCCESS) {
    res = CU_FAIL("cuMemcpyAsync (device comm)", r);
    g->mem_free_host((void*)ex->status);
    g->mem_host_unregister((void*)comm->abortFlag);
    goto fail_events;
  }
  /* A probe kernel that did not end may still use this executor's memory:
   * the executor is left allocated (a diagnostic run ends here anyway). */
  if (!gpu_first_launch(ex, param_MKCCL_GPU_PROBE() != 0))
    return MK_FAIL(ncclSystemError, "Rank %d: GPU probe: an empty kernel did not end (see the GPU probe line)",
                   comm->rank);
  if (param_MKCCL_GPU_WATCHDOG() > 0) {
    /* Best effort: without these the watchdog reports the status rows only. */
    if (g->event_create(&ex->diagPre, CU_EVENT_DISABLE_TIMING) != CUDA_DRV_SUCCESS) ex->diagPre = NULL;
    if (g->event_create(&ex->diagPost, CU_EVENT_DISABLE_TIMING) != CUDA_DRV_SUCCESS) ex->diagPost = NULL;
    if (g->stream_create(&ex->diagStream, CU_STREAM_NON_BLOCKING) != CUDA_DRV_SUCCESS) ex->diagStream = NULL;
    if (g->mem_host_alloc((void**)&ex->diagBuf, 256, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP) !=
        CUDA_DRV_SUCCESS)
      ex->diagBuf = NULL;
    if (pthread_create(&ex->watchdog, NULL, gpu_watchdog_main, ex) == 0) ex->watchdogRunning = 1;
  }
  *out = ex;
  return ncclSuccess;
fail_events:
  for (int i = nEvents - 1; i >= 0; i--) g->event_destroy(ex->events[i].event);
fail_fifo:
  g->mem_free_host(ex->fifoBuf);
fail_conns:
  free(ex->synced);
  free(ex->hostRingRanks);
  free(ex->hostConns);
  g->mem_free((cu_deviceptr_t)(uintptr_t)ex->devConns);
fail_host:
  free(ex->hostComm);
fail_dev:
  g->mem_free((cu_deviceptr_t)(uintptr_t)ex->devComm);
fail_stream:
  g->stream_destroy(ex->initStream);
fail_module:
  if (ex->ownModule) g->module_unload(ex->module);
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
  if (ex->joinEvent) g->event_destroy(ex->joinEvent);
  if (ex->diagPost) g->event_destroy(ex->diagPost);
  if (ex->diagPre) g->event_destroy(ex->diagPre);
  if (ex->diagStream) g->stream_destroy(ex->diagStream);
  if (ex->diagBuf) g->mem_free_host(ex->diagBuf);
  if (ex->trace) {
    gpu_trace_print(ex);
    g->mem_free((cu_deviceptr_t)(uintptr_t)ex->trace);
  }
  while (ex->graphWork) {
    gpu_graph_work_t* w = ex->graphWork;
    ex->graphWork = w->next;
    g->mem_free_host(w->items);
    free(w);
  }
  g->mem_host_unregister(ex->abortHost);
  g->mem_free_host((void*)ex->status);
  g->mem_free_host(ex->fifoBuf);
  free(ex->synced);
  free(ex->hostRingRanks);
  free(ex->hostConns);
  g->mem_free((cu_deviceptr_t)(uintptr_t)ex->devConns);
  free(ex->hostComm);
  g->mem_free((cu_deviceptr_t)(uintptr_t)ex->devComm);
  g->stream_destroy(ex->initStream);
  if (ex->ownModule) g->module_unload(ex->module);
  free(ex);
}

static ncclResult_t gpu_conn_fill(gpu_exec_t* ex, mk_dev_conn_t* d, const connector_t* c) {
  memset(d, 0, sizeof(*d));
  /* UNPACK: the kernel hands the type's own handle (device-visible memory of
   * the net plugin, docs/UNPACK.md) to the plugin's device code. */
  const ncclNetDeviceHandle_v12_t* nd = c->info.netDeviceHandle;
  if (nd && nd->handle) {
    if (!ex->unpack)
      return MK_FAIL(ncclInternalError, "Rank %d: a net connection needs the device unpack, but the kernels loaded do "
                     "not call it", ex->rank);
    if (!gpu_exec_pointer_ok(nd->handle))
      return MK_FAIL(ncclInvalidUsage, "Rank %d: the net plugin's UNPACK handle %p is not device-visible memory "
                     "(the producer must register it with CUDA)", ex->rank, nd->handle);
    d->netDevHandle = nd->handle;
  }
  d->buff = c->info.buffs[MKCCL_PROTO_SIMPLE];
  d->stepSize = c->info.stepSize[MKCCL_PROTO_SIMPLE];
  d->flags = c->info.flags;
  d->tail = c->info.tail;
  d->head = c->info.head;
  d->connFifo = c->info.connFifo;
  d->llBuff = c->info.buffs[MKCCL_PROTO_LL];
  d->llStepSize = c->info.stepSize[MKCCL_PROTO_LL];
  d->step = 0;
  return ncclSuccess;
}

/* Host to device, asynchronous and ordered on `stream`: the launch stream
 * (NULL there is the user's legacy stream, whose kernel comes next), or the
 * set-up stream. Never the synchronous cuMemcpyHtoD, which runs on the legacy
 * stream and so waits for every blocking stream of the context, among them
 * another communicator's kernel that waits for ours (one GPU, one process). */
static ncclResult_t gpu_copy_in(gpu_exec_t* ex, void* dev, const void* host, size_t bytes, cu_stream_t stream) {
  cu_result_t r = ex->g->memcpy_async((cu_deviceptr_t)(uintptr_t)dev, (cu_deviceptr_t)(uintptr_t)host, bytes, stream);
  if (r != CUDA_DRV_SUCCESS) return CU_FAIL("cuMemcpyAsync (device comm)", r);
  return ncclSuccess;
}

/* One device entry: copied once, when its connector is connected. */
static ncclResult_t gpu_conn_sync(gpu_exec_t* ex, uint8_t* synced, mk_dev_conn_t* host, mk_dev_conn_t* dev,
                                  const connector_t* c, cu_stream_t stream) {
  if (*synced || !c->connected) return ncclSuccess;
  MK_CHECK(gpu_conn_fill(ex, host, c));
  MK_CHECK(gpu_copy_in(ex, dev, host, sizeof(*host), stream));
  *synced = 1;
  return ncclSuccess;
}

ncclResult_t gpu_exec_sync_conns(gpu_exec_t* ex, struct ncclComm* comm, void* launchStream, int wait) {
  /* No connection made since the last sync: nothing new to copy (the walk
   * over 64 channels x peers x 4 kinds would cost every launch). */
  if (ex->syncedGen == comm->dp.ch.connGen + 1) return ncclSuccess;
  cu_stream_t stream = wait ? ex->initStream : (cu_stream_t)launchStream;
  for (int c = 0; c < comm->dp.ch.nChannels && c < MK_DEV_MAX_CHANNELS; c++) {
    channel_t* ch = &comm->dp.ch.channels[c];
    mk_dev_channel_t* h = &ex->hostComm->channels[c];
    mk_dev_channel_t* d = &ex->devComm->channels[c];
    if (!ex->ringSynced[c]) {
      /* Ring description: written once, before any connection is used (a
       * flag of its own: a one-rank ring never connects, and copying it at
       * every launch cost ~5 us per channel). */
      h->ringPrev = ch->ring.prev;
      h->ringNext = ch->ring.next;
      h->ringIndex = ch->ring.index;
      int32_t* order = ex->hostRingRanks + (size_t)c * (size_t)comm->nRanks;
      for (int r = 0; r < comm->nRanks; r++) order[r] = ch->ring.userRanks[r];
      MK_CHECK(gpu_copy_in(ex, (void*)h->ringRanks, order, (size_t)comm->nRanks * sizeof(int32_t), stream));
      MK_CHECK(gpu_copy_in(ex, d, h, sizeof(*h), stream));
      ex->ringSynced[c] = 1;
    }
    /* Every peer's: rings and trees (connected when first used) alike. */
    for (int p = 0; p < comm->nRanks; p++) {
      channel_peer_t* peer = &ch->peers[p];
      const connector_t* conn[MK_DEV_CONN_KINDS] = {&peer->send[MK_CONN_COLL], &peer->recv[MK_CONN_COLL],
                                                    &peer->send[MK_CONN_P2P], &peer->recv[MK_CONN_P2P]};
      for (int k = 0; k < MK_DEV_CONN_KINDS; k++) {
        size_t i = ((size_t)c * MK_DEV_CONN_KINDS + (size_t)k) * (size_t)comm->nRanks + (size_t)p;
        MK_CHECK(gpu_conn_sync(ex, &ex->synced[i], &ex->hostConns[i], &ex->devConns[i], conn[k], stream));
      }
    }
  }
  if (wait) {
    cu_result_t r = ex->g->stream_synchronize(ex->initStream);
    if (r != CUDA_DRV_SUCCESS) return CU_FAIL("cuStreamSynchronize (set-up stream)", r);
  }
  ex->syncedGen = comm->dp.ch.connGen + 1;
  return ncclSuccess;
}

int gpu_exec_capture_begin(void* stream, int* prevMode) {
  const cuda_gpu_t* g = cuda_gpu();
  int status = CU_STREAM_CAPTURE_STATUS_NONE;
  if (!g || g->stream_is_capturing((cu_stream_t)stream, &status) != CUDA_DRV_SUCCESS ||
      status == CU_STREAM_CAPTURE_STATUS_NONE)
    return 0;
  *prevMode = CU_STREAM_CAPTURE_MODE_RELAXED;
  if (g->thread_exchange_capture_mode(prevMode) != CUDA_DRV_SUCCESS) *prevMode = -1;
  return 1;
}

void gpu_exec_capture_end(int prevMode) {
  const cuda_gpu_t* g = cuda_gpu();
  if (g && prevMode >= 0) g->thread_exchange_capture_mode(&prevMode);
}

/* The kernel for a launch: the LL-only one when it runs every item, else
 * the full one. */
static cu_function_t gpu_kernel_for(const gpu_exec_t* ex, const mk_work_t* works, int n) {
  return ex->kernelLL && mk_works_ll_only(works, n, ex->hostComm->nRanks) ? ex->kernelLL : ex->kernel;
}

/* A launch into a graph being captured: items in a buffer of their own, no
 * FIFO space and no event (a captured event record completes nothing now). */
static ncclResult_t gpu_launch_captured(gpu_exec_t* ex, const mk_work_t* works, int n, int nChannels, void* stream) {
  const cuda_gpu_t* g = ex->g;
  gpu_graph_work_t* w = calloc(1, sizeof(*w));
  if (!w) return MK_FAIL(ncclSystemError, "out of memory (graph work)");
  cu_result_t r = g->mem_host_alloc(&w->items, (size_t)n * sizeof(mk_work_t),
                                    CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
  if (r != CUDA_DRV_SUCCESS) {
    free(w);
    return CU_FAIL("cuMemHostAlloc (work items of a captured launch)", r);
  }
  memcpy(w->items, works, (size_t)n * sizeof(mk_work_t));
  w->next = ex->graphWork;
  ex->graphWork = w;
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  r = gpu_kernel_launch(ex, gpu_kernel_for(ex, works, n), (const char*)w->items, 0xffffffffu, 0, n, nChannels,
                        (cu_stream_t)stream, NULL);
  if (r != CUDA_DRV_SUCCESS) return CU_FAIL("cuLaunchKernel (captured)", r);
  return ncclSuccess;
}

ncclResult_t gpu_exec_launch(gpu_exec_t* ex, const mk_work_t* works, int n, int nChannels, void* stream, int captured) {
  const cuda_gpu_t* g = ex->g;
  /* The kernels run rings, trees and (in LL) FLAT. */
  for (int i = 0; i < n; i++)
    if (works[i].coll != MK_COLL_SENDRECV && works[i].algo != MK_ALGO_RING && works[i].algo != MK_ALGO_TREE &&
        !(works[i].algo == MK_ALGO_FLAT && works[i].proto == MK_PROTO_LL))
      return MK_FAIL(ncclInternalError, "GPU executor: algorithm %d (protocol %d) is not supported", works[i].algo,
                     works[i].proto);
  /* At most MK_ARGS_WORKS items travel in the kernel's arguments (captured
   * or not): no FIFO space, nothing for the kernel to read across PCIe. */
  int inl = n <= MK_ARGS_WORKS;
  uint32_t bytes = inl ? 0 : (uint32_t)(n * sizeof(mk_work_t)); /* of FIFO space */
  cu_result_t r;
  if (captured && inl) {
    r = gpu_kernel_launch(ex, gpu_kernel_for(ex, works, n), NULL, 0, 0, n, nChannels, (cu_stream_t)stream, works);
    if (r != CUDA_DRV_SUCCESS) return CU_FAIL("cuLaunchKernel (captured)", r);
    return ncclSuccess;
  }
  if (captured) return gpu_launch_captured(ex, works, n, nChannels, stream);
  uint32_t offset = ex->fifo.produced;
  if (!inl) {
    MK_CHECK(work_fifo_wait_room(&ex->fifo, bytes, (volatile uint32_t*)ex->abortHost));
    for (int i = 0; i < n; i++) work_fifo_push(&ex->fifo, &works[i], sizeof(mk_work_t));
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* items visible before the kernel starts */
  }
  /* Watchdog on: events around the launch tell whether the kernel waits
   * behind other work of the stream, runs, or ended. */
  if (ex->lastEvent && stream != ex->lastStream &&
      (r = g->stream_wait_event((cu_stream_t)stream, ex->lastEvent, 0)) != CUDA_DRV_SUCCESS)
    return CU_FAIL("cuStreamWaitEvent (after the communicator's launch on another stream)", r);
  int diag = ex->watchdogRunning && ex->diagPre && ex->diagPost;
  if (diag) g->event_record(ex->diagPre, (cu_stream_t)stream);
  r = gpu_kernel_launch(ex, gpu_kernel_for(ex, works, n), ex->fifoBuf, ex->fifo.bytes - 1, offset, n, nChannels,
                        (cu_stream_t)stream, inl ? works : NULL);
  if (r != CUDA_DRV_SUCCESS) return CU_FAIL("cuLaunchKernel", r);
  if (diag && g->event_record(ex->diagPost, (cu_stream_t)stream) == CUDA_DRV_SUCCESS) ex->diagLaunched = 1;
  /* The space these items took (none when inlined) returns once the kernel
   * is done; the event also tells destroy when the kernels ended. */
  gpu_fifo_event_t* e = &ex->events[ex->nextEvent];
  /* Events are reused round robin: the one to reuse is the oldest queued. */
  /* Polled with the abort flag checked, not cuEventSynchronize: the kernels
   * of an aborted communicator (or of a peer that died) may never end, and
   * the caller must get its error instead of blocking here for ever. */
  while (e->ev.queued) {
    work_fifo_poll(&ex->fifo);
    if (!e->ev.queued) break;
    if (__atomic_load_n((volatile uint32_t*)ex->abortHost, __ATOMIC_ACQUIRE))
      return MK_FAIL(ncclRemoteError, "Rank %d: aborted while waiting for a GPU launch event", ex->rank);
    sched_yield();
  }
  ex->nextEvent = (ex->nextEvent + 1) % GPU_EVENTS;
  if ((r = g->event_record(e->event, (cu_stream_t)stream)) != CUDA_DRV_SUCCESS) return CU_FAIL("cuEventRecord", r);
  ex->lastEvent = e->event;
  ex->lastStream = stream;
  e->ev.consumedAfter = offset + bytes;
  work_fifo_event_add(&ex->fifo, &e->ev);
  work_fifo_poll(&ex->fifo);
  return ncclSuccess;
}

ncclResult_t gpu_exec_host_call(gpu_exec_t* ex, void* stream, void (*fn)(void*), void* arg) {
  cu_result_t r = ex->g->launch_host_func((cu_stream_t)stream, fn, arg);
  if (r != CUDA_DRV_SUCCESS) return CU_FAIL("cuLaunchHostFunc", r);
  return ncclSuccess;
}

/* One event serves every join: a wait takes the record made before it. */
ncclResult_t gpu_exec_stream_join(gpu_exec_t* ex, void* waiter, void* waited) {
  const cuda_gpu_t* g = ex->g;
  cu_result_t r;
  if (!ex->joinEvent && (r = g->event_create(&ex->joinEvent, CU_EVENT_DISABLE_TIMING)) != CUDA_DRV_SUCCESS) {
    ex->joinEvent = NULL;
    return CU_FAIL("cuEventCreate (joining a group's streams)", r);
  }
  if ((r = g->event_record(ex->joinEvent, (cu_stream_t)waited)) != CUDA_DRV_SUCCESS)
    return CU_FAIL("cuEventRecord (joining a group's streams)", r);
  if ((r = g->stream_wait_event((cu_stream_t)waiter, ex->joinEvent, 0)) != CUDA_DRV_SUCCESS)
    return CU_FAIL("cuStreamWaitEvent (joining a group's streams)", r);
  return ncclSuccess;
}

ncclResult_t gpu_exec_copy(gpu_exec_t* ex, void* dst, const void* src, size_t bytes, void* stream) {
  cu_result_t r = ex->g->memcpy_async((cu_deviceptr_t)(uintptr_t)dst, (cu_deviceptr_t)(uintptr_t)src, bytes,
                                      (cu_stream_t)stream);
  if (r != CUDA_DRV_SUCCESS) return CU_FAIL("cuMemcpyAsync (one-rank collective)", r);
  return ncclSuccess;
}

int gpu_exec_timed_out(gpu_exec_t* ex) {
  for (int c = 0; ex && c < MK_DEV_MAX_CHANNELS; c++)
    if (__atomic_load_n(&ex->status[c * MK_DEV_STATUS_WORDS + MK_STATUS_TIMEDOUT], __ATOMIC_ACQUIRE)) return 1;
  return 0;
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
