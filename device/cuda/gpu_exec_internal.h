/* The GPU executor's state, shared by the files of device/cuda that each do
 * one of its jobs. gpu_exec_create (gpu_exec.c) makes it in steps, each
 * declared here with its undo; every step takes (ex, comm) and, when it
 * fails, leaves nothing of its own behind. */
#ifndef MKCCL_CUDA_GPU_EXEC_INTERNAL_H
#define MKCCL_CUDA_GPU_EXEC_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "cuda/gpu.h"
#include "device/cuda/dev_comm.h"
#include "device/cuda/gpu_exec.h"
#include "fifo/work_fifo.h"
#include "proxy/proxy.h"

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
  cu_function_t kernelLL;   /* the LL-only kernel, NULL (net device unpack, or not loaded): all on `kernel` */
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
  struct gpu_win_table* winTables; /* the device API's window table, chained (gpu_win_table.c), NULL until used */
  uint64_t winSeq;                 /* windows made: names their handle exchange (the same on every rank) */
};

/* ---- The steps of gpu_exec_create, in its order, and their undo ---- */

/* gpu_exec_module.c: the kernels' module on the comm's context and both
 * kernels loaded, the context's stack limit set for them. */
ncclResult_t gpu_exec_module_load(gpu_exec_t* ex, struct ncclComm* comm);
void gpu_exec_module_unload(gpu_exec_t* ex);

/* gpu_exec_stream.c: the private set-up stream (initStream); closing it
 * also drops the join event. */
ncclResult_t gpu_exec_stream_open(gpu_exec_t* ex, struct ncclComm* comm);
void gpu_exec_stream_close(gpu_exec_t* ex);

/* gpu_exec_devcomm.c: the device comm, every channel's connection table
 * and ring order in device memory, and their host copies. */
ncclResult_t gpu_exec_devcomm_alloc(gpu_exec_t* ex, struct ncclComm* comm);
void gpu_exec_devcomm_free(gpu_exec_t* ex);

/* gpu_exec_fifo.c: the work FIFO in pinned host memory and the events
 * that give its space back. */
ncclResult_t gpu_exec_fifo_open(gpu_exec_t* ex, struct ncclComm* comm);
void gpu_exec_fifo_close(gpu_exec_t* ex);

/* gpu_exec_mapped.c: host memory the kernels see: the comm's abort flag
 * and the status rows. */
ncclResult_t gpu_exec_mapped_open(gpu_exec_t* ex, struct ncclComm* comm);
void gpu_exec_mapped_close(gpu_exec_t* ex);

/* gpu_exec_trace.c: MKCCL_GPU_TRACE's record (best effort: none when it
 * cannot be had). */
ncclResult_t gpu_exec_trace_open(gpu_exec_t* ex, struct ncclComm* comm);
void gpu_exec_trace_close(gpu_exec_t* ex);

/* gpu_exec_watchdog.c: the watchdog's events and read-back stream (best
 * effort, MKCCL_GPU_WATCHDOG only). */
ncclResult_t gpu_exec_diag_open(gpu_exec_t* ex, struct ncclComm* comm);
void gpu_exec_diag_close(gpu_exec_t* ex);

/* gpu_exec_devcomm.c: the device comm's fields filled and copied there with
 * the empty connection tables, waited for (nothing to undo). */
ncclResult_t gpu_exec_devcomm_upload(gpu_exec_t* ex, struct ncclComm* comm);

/* ---- After the steps, and before destroy's undo ---- */

/* gpu_exec_first_launch.c: the kernels launched once with no work, waited
 * for; `report` (MKCCL_GPU_PROBE) says how it went. 0: a kernel did not end. */
int gpu_exec_first_launch(gpu_exec_t* ex, int report);

/* gpu_exec_watchdog.c: the thread (MKCCL_GPU_WATCHDOG), started last,
 * stopped first. */
void gpu_exec_watchdog_start(gpu_exec_t* ex);
void gpu_exec_watchdog_stop(gpu_exec_t* ex);

/* gpu_exec_fifo.c: returns once every launch's event has completed (every
 * kernel has ended). */
void gpu_exec_fifo_drain(gpu_exec_t* ex);

/* gpu_exec_trace.c: the last traced kernel's events on stderr (after the
 * kernels ended). */
void gpu_exec_trace_print(gpu_exec_t* ex);

/* gpu_exec_graph.c: the work items kept for captured launches freed. */
void gpu_exec_graph_free(gpu_exec_t* ex);

/* ---- Shared by the launch paths ---- */

/* gpu_exec_launch.c: one launch of `fn`, nChannels CTAs on `stream`, reading
 * n items from `items` at `offset` (wrapped by `mask`, the FIFO's; a buffer
 * that never wraps passes all ones), or, with `inl`, the n <= MK_ARGS_WORKS
 * items there copied into the arguments. */
cu_result_t gpu_exec_kernel_launch(gpu_exec_t* ex, cu_function_t fn, const char* items, uint32_t mask, uint32_t offset,
                                   int n, int nChannels, cu_stream_t stream, const mk_work_t* inl);
/* The kernel for a launch of these items. */
cu_function_t gpu_exec_kernel_for(const gpu_exec_t* ex, const mk_work_t* works, int n);

/* gpu_exec_fifo.c: n items pushed into the work FIFO (waiting for room),
 * visible before a kernel starts. */
ncclResult_t gpu_exec_fifo_push(gpu_exec_t* ex, const mk_work_t* works, int n);
/* An event recorded on `stream` after a launch; once it completes, the
 * FIFO's space up to `consumedAfter` is free again. *recorded: the event. */
ncclResult_t gpu_exec_fifo_event_record(gpu_exec_t* ex, cu_stream_t stream, uint32_t consumedAfter,
                                        cu_event_t* recorded);

/* gpu_exec_graph.c: a launch into a graph being captured. */
ncclResult_t gpu_exec_graph_launch(gpu_exec_t* ex, const mk_work_t* works, int n, int nChannels, void* stream);

/* gpu_exec_watchdog.c: a query's result in a word ("done", "not-ready", the error). */
const char* gpu_exec_query_str(cu_result_t r);

#endif
