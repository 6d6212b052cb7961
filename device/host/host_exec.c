#include "host_exec.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "base/err.h"
#include "base/log.h"
#include "fifo/work_fifo.h"
#include "host_prims.h"
#include "host_wait.h"
#include "profile/profile.h"

typedef struct {
  host_exec_t* ex;
  int channel;
  pthread_t thread;
  _Atomic uint32_t cursor; /* FIFO offset this channel has finished up to (its own writes) */
  _Atomic uint32_t target; /* drain up to here: the end of the last item on this channel (the caller's) */
  _Atomic uint32_t start;  /* where that run's first item on this channel begins (the caller's) */
  _Atomic int result;
  _Atomic int sleeping; /* on ex->wake, set under ex->lock: a raised target needs a wake-up */
  host_store_t store;   /* this channel's store mode for send slots (only its runner touches it) */
} host_worker_t;

typedef struct {
  work_fifo_event_t ev;
  host_exec_t* ex;
} host_fifo_event_t;

struct host_exec {
  host_exec_config_t cfg;
  work_fifo_t fifo;
  char* fifoBuf;
  host_worker_t workers[MK_MAX_CHANNELS];
  pthread_mutex_t lock;
  pthread_cond_t wake;
  int stop;
  host_fifo_event_t event;
  host_prims_t flatBound; /* channel 0's flat connections, for run_here (host_coll_flat_bound) */
};

/* The "kernel" timer of KernelCh events: host threads have the monotonic clock, in ns. */
static uint64_t host_exec_timer(void) { return (uint64_t)mk_now_ns(); }

/* A channel's run of an item, under the item's Coll (or a P2p's Send, else Recv) event. */
static void* host_exec_kernel_ch_start(profile_comm_t* pc, const mk_work_t* item, int channel) {
  if (!profile_active(pc, ncclProfileKernelCh)) return NULL;
  void* parent = item->profiler[1] ? item->profiler[1] : item->profiler[0];
  return profile_kernel_ch_start(pc, parent, channel, host_exec_timer());
}

/* Run the items in [cursor, end) that include this worker's channel. */
static void host_worker_drain(host_worker_t* w, uint32_t cursor, uint32_t end) {
  host_exec_t* ex = w->ex;
  while (cursor != end) {
    mk_work_t item;
    work_fifo_read(&ex->fifo, cursor, &item, sizeof(item));
    if (w->channel >= item.channelLo && w->channel < item.channelLo + item.nChannels &&
        atomic_load(&w->result) == ncclSuccess) {
      void* kch = host_exec_kernel_ch_start(ex->cfg.profile, &item, w->channel);
      ncclResult_t res = host_coll_run(&ex->cfg.channels[w->channel], &item, ex->cfg.rank, ex->cfg.nRanks,
                                       ex->cfg.abortFlag, &w->store);
      if (kch) profile_kernel_ch_stop(ex->cfg.profile, kch, host_exec_timer());
      if (res != ncclSuccess) atomic_store(&w->result, res);
    }
    cursor += sizeof(item);
    atomic_store_explicit(&w->cursor, cursor, memory_order_release);
  }
}

/* A worker wakes only for items on its channel: the caller raises its
 * target for those. Items between its cursor and the run's start are none
 * of its own (their space may be reused already), so it jumps over them.
 * Waking, or even spinning, every worker for a collective on one channel
 * would cost many times a small collective's time, and far more with more
 * threads than cores. */
static void* host_worker_main(void* arg) {
  host_worker_t* w = arg;
  host_exec_t* ex = w->ex;
  char name[16];
  snprintf(name, sizeof(name), "mkccl-ch%d", w->channel); /* top, ps -L, gdb */
  prctl(PR_SET_NAME, name, 0, 0, 0);
  uint32_t cursor = atomic_load(&w->cursor);
  for (;;) {
    uint32_t end = atomic_load_explicit(&w->target, memory_order_acquire);
    if (end != cursor) {
      uint32_t start = atomic_load_explicit(&w->start, memory_order_relaxed);
      if ((int32_t)(start - cursor) > 0) cursor = start;
      host_worker_drain(w, cursor, end);
      cursor = end;
      continue;
    }
    /* Poll (pauses, then yields) for MKCCL_HOST_SPIN_US, then sleep on the
     * condvar. A thread that slept after a few rounds had to be woken for
     * the next collective of a busy loop, and on VMs a wake-up costs enough
     * to leave 4-rank 1 MB SHM AllReduces at a fraction of their bandwidth. */
    host_waiter_t waiter = {0};
    int found = 0;
    int64_t until = 0;
    for (uint32_t i = 0; !found; i++) {
      found = atomic_load_explicit(&w->target, memory_order_acquire) != cursor;
      if (found) break;
      if (i >= 2 * HOST_WAIT_SPINS && i % 64 == 0) {
        int64_t now = mk_now_ns();
        if (!until) until = now + ex->cfg.spinUs * 1000;
        if (now >= until) break;
      }
      host_wait_round(&waiter, ex->cfg.abortFlag);
    }
    if (found) continue;
    /* sleeping before target, the caller target before sleeping (both
     * sequentially consistent): one of us sees the other's store. */
    pthread_mutex_lock(&ex->lock);
    atomic_store(&w->sleeping, 1);
    while (!ex->stop && atomic_load(&w->target) == cursor) pthread_cond_wait(&ex->wake, &ex->lock);
    atomic_store(&w->sleeping, 0);
    int stop = ex->stop;
    pthread_mutex_unlock(&ex->lock);
    if (stop) break;
  }
  return NULL;
}

/* Space in the FIFO returns once every channel has passed an item, or has
 * finished everything on it (what follows is not its: it jumps over it). */
static int host_fifo_event_query(work_fifo_event_t* ev) {
  host_exec_t* ex = ((host_fifo_event_t*)ev)->ex;
  for (int c = 0; c < ex->cfg.nChannels; c++) {
    uint32_t cursor = atomic_load(&ex->workers[c].cursor);
    if ((int32_t)(cursor - ev->consumedAfter) < 0 && cursor != atomic_load(&ex->workers[c].target)) return 0;
  }
  return 1;
}

ncclResult_t host_exec_create(const host_exec_config_t* cfg, host_exec_t** out) {
  if (cfg->nChannels < 1 || cfg->nChannels > MK_MAX_CHANNELS)
    return MK_FAIL(ncclInternalError, "host executor: %d channels", cfg->nChannels);
  ncclResult_t res = ncclSuccess;
  host_exec_t* ex = calloc(1, sizeof(*ex));
  if (!ex) return MK_FAIL(ncclSystemError, "host executor: out of memory");
  ex->cfg = *cfg;
  __atomic_store_n(&host_wait_timeout_ns, cfg->timeoutSec > 0 ? cfg->timeoutSec * 1000000000 : 0, __ATOMIC_RELAXED);
  __atomic_store_n(&host_ll_polls, (uint32_t)(cfg->llPolls > 0 ? (cfg->llPolls < (1 << 20) ? cfg->llPolls : 1 << 20) : 0),
                   __ATOMIC_RELAXED);
  ex->fifoBuf = aligned_alloc(64, cfg->fifoBytes);
  if (!ex->fifoBuf) {
    res = MK_FAIL(ncclSystemError, "host executor: out of memory for a %u-byte work FIFO", cfg->fifoBytes);
    goto fail_ex;
  }
  MK_CHECK_GOTO(work_fifo_init(&ex->fifo, ex->fifoBuf, cfg->fifoBytes), res, fail_buf);
  pthread_mutex_init(&ex->lock, NULL);
  pthread_cond_init(&ex->wake, NULL);
  for (int c = 0; c < cfg->nChannels; c++) {
    ex->workers[c].ex = ex;
    ex->workers[c].channel = c;
    host_store_init(&ex->workers[c].store, cfg->streamStores, cfg->streamMinBytes);
    ex->workers[c].store.singleBytes = cfg->singleStreamBytes;
  }
  int started = 1; /* channel 0 is the calling thread */
  for (; started < cfg->nChannels; started++) {
    int err = pthread_create(&ex->workers[started].thread, NULL, host_worker_main, &ex->workers[started]);
    if (err) {
      res = MK_FAIL(ncclSystemError, "host executor: cannot start channel thread: %s", strerror(err));
      goto fail_threads;
    }
  }
  *out = ex;
  return ncclSuccess;
fail_threads:
  pthread_mutex_lock(&ex->lock);
  ex->stop = 1;
  pthread_cond_broadcast(&ex->wake);
  pthread_mutex_unlock(&ex->lock);
  for (int c = 1; c < started; c++) pthread_join(ex->workers[c].thread, NULL);
  pthread_cond_destroy(&ex->wake);
  pthread_mutex_destroy(&ex->lock);
fail_buf:
  free(ex->fifoBuf);
fail_ex:
  free(ex);
  return res;
}

/* The item just pushed at [begin, end) runs on its channels: raise their
 * targets (a channel's first item of the run sets where it starts) and
 * wake those asleep. */
static void host_exec_publish(host_exec_t* ex, const mk_work_t* item, uint32_t begin, uint32_t end, uint64_t* seen) {
  int wake = 0;
  for (int c = item->channelLo; c < item->channelLo + item->nChannels && c < ex->cfg.nChannels; c++) {
    if (c == 0) continue; /* the caller's */
    host_worker_t* w = &ex->workers[c];
    if (!(*seen >> c & 1)) atomic_store_explicit(&w->start, begin, memory_order_relaxed);
    *seen |= 1ull << c;
    atomic_store(&w->target, end);
    wake |= atomic_load(&w->sleeping);
  }
  if (!wake) return;
  pthread_mutex_lock(&ex->lock);
  pthread_cond_broadcast(&ex->wake);
  pthread_mutex_unlock(&ex->lock);
}

ncclResult_t host_exec_run(host_exec_t* ex, const mk_work_t* works, int n) {
  /* One item's worth of space at a time: the executors drain as we push.
   * A run takes at most half the FIFO (the planner's batches), so space
   * the FIFO event returns early (a channel idle before its next item of
   * the run, host_fifo_event_query) is not written again before the run
   * ends, and that waits for every channel it is on. */
  if (n > 1 && (uint64_t)n * sizeof(mk_work_t) > ex->fifo.bytes / 2)
    return MK_FAIL(ncclInternalError, "host executor: %d items exceed half the %u-byte work FIFO", n,
                   ex->fifo.bytes);
  uint32_t end = 0;
  uint64_t seen = 0; /* channels an item of this run is on */
  for (int i = 0; i < n; i++) {
    MK_CHECK(work_fifo_wait_room(&ex->fifo, sizeof(mk_work_t), ex->cfg.abortFlag));
    uint32_t begin = work_fifo_push(&ex->fifo, &works[i], sizeof(mk_work_t));
    end = begin + sizeof(mk_work_t);
    host_exec_publish(ex, &works[i], begin, end, &seen);
    if (ex->fifo.eventsHead == NULL) {
      ex->event.ex = ex;
      ex->event.ev.query = host_fifo_event_query;
      ex->event.ev.consumedAfter = end;
      work_fifo_event_add(&ex->fifo, &ex->event.ev);
    } else {
      ex->event.ev.consumedAfter = end; /* one event, moved forward */
    }
    host_worker_drain(&ex->workers[0], atomic_load(&ex->workers[0].cursor), end);
  }
  /* Wait for the other channels this run is on. */
  ncclResult_t res = ncclSuccess;
  for (int c = 1; c < ex->cfg.nChannels; c++) {
    host_waiter_t w = {0};
    if (!(seen >> c & 1)) continue;
    uint32_t target = atomic_load(&ex->workers[c].target);
    while (atomic_load_explicit(&ex->workers[c].cursor, memory_order_acquire) != target)
      host_wait_round(&w, ex->cfg.abortFlag);
  }
  /* Only channels this run was on can have failed: an 8 B AllReduce on one
   * channel of 8 need not take 7 other workers' lines for an exchange. */
  for (int c = 0; c < ex->cfg.nChannels; c++) {
    if (c != 0 && !(seen >> c & 1)) continue;
    int r = atomic_exchange(&ex->workers[c].result, ncclSuccess);
    if (r != ncclSuccess && res == ncclSuccess) res = (ncclResult_t)r;
  }
  work_fifo_poll(&ex->fifo);
  return res;
}

ncclResult_t host_exec_run_here(host_exec_t* ex, const mk_work_t* w) {
  if (w->channelLo != 0 || w->nChannels != 1) return host_exec_run(ex, w, 1);
  void* kch = host_exec_kernel_ch_start(ex->cfg.profile, w, 0);
  channel_t* ch = &ex->cfg.channels[0];
  host_store_t* store = &ex->workers[0].store;
  ncclResult_t res =
      host_coll_flat_one_step(w)
          ? host_coll_flat_bound(ch, w, ex->cfg.rank, ex->cfg.nRanks, ex->cfg.abortFlag, store, &ex->flatBound)
          : host_coll_run(ch, w, ex->cfg.rank, ex->cfg.nRanks, ex->cfg.abortFlag, store);
  if (kch) profile_kernel_ch_stop(ex->cfg.profile, kch, host_exec_timer());
  return res;
}

void host_exec_destroy(host_exec_t* ex) {
  if (!ex) return;
  for (int c = 0; c < ex->cfg.nChannels; c++) {
    const host_store_t* st = &ex->workers[c].store;
    if (st->inPlace[0] + st->inPlace[1])
      MK_INFO(NCCL_COLL, "Rank %d channel %d: read in place %llu bytes with cached stores, %llu with streaming stores",
              ex->cfg.rank, c, (unsigned long long)st->inPlace[0], (unsigned long long)st->inPlace[1]);
    if (st->slices[0] + st->slices[1] == 0) continue;
    char what[128];
    host_store_describe(st, what, sizeof(what));
    MK_INFO(NCCL_COLL, "Rank %d channel %d: large send slices %s", ex->cfg.rank, c, what);
  }
  pthread_mutex_lock(&ex->lock);
  ex->stop = 1;
  pthread_cond_broadcast(&ex->wake);
  pthread_mutex_unlock(&ex->lock);
  for (int c = 1; c < ex->cfg.nChannels; c++) pthread_join(ex->workers[c].thread, NULL);
  pthread_cond_destroy(&ex->wake);
  pthread_mutex_destroy(&ex->lock);
  free(ex->fifoBuf);
  free(ex);
}
