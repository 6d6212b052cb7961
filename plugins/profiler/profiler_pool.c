/* The event pool: an index taken with one atomic add; blocks of events
 * allocated by the first thread that needs one (a losing racer frees its
 * copy). The first block is allocated at init. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime with -std=c11 */
#include <stdlib.h>
#include <time.h>

#include "profiler.h"

uint64_t profiler_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

profiler_event_t* profiler_event_alloc(profiler_ctx_t* ctx) {
  uint64_t i = atomic_fetch_add_explicit(&ctx->next, 1, memory_order_relaxed);
  if (i >= ctx->maxEvents) {
    atomic_fetch_add_explicit(&ctx->dropped, 1, memory_order_relaxed);
    return NULL;
  }
  uint64_t b = i / PROFILER_BLOCK_EVENTS;
  profiler_event_t* block = atomic_load_explicit(&ctx->blocks[b], memory_order_acquire);
  if (!block) {
    profiler_event_t* fresh = calloc(PROFILER_BLOCK_EVENTS, sizeof(*fresh));
    if (!fresh) {
      atomic_fetch_add_explicit(&ctx->dropped, 1, memory_order_relaxed);
      return NULL;
    }
    profiler_event_t* expected = NULL;
    if (atomic_compare_exchange_strong_explicit(&ctx->blocks[b], &expected, fresh, memory_order_acq_rel,
                                                memory_order_acquire)) {
      block = fresh;
    } else {
      free(fresh);
      block = expected;
    }
  }
  profiler_event_t* e = &block[i % PROFILER_BLOCK_EVENTS];
  e->index = i;
  return e;
}

uint64_t profiler_event_count(profiler_ctx_t* ctx) {
  uint64_t n = atomic_load(&ctx->next);
  return n < ctx->maxEvents ? n : ctx->maxEvents;
}

profiler_event_t* profiler_event_at(profiler_ctx_t* ctx, uint64_t i) {
  profiler_event_t* block = atomic_load(&ctx->blocks[i / PROFILER_BLOCK_EVENTS]);
  return block ? &block[i % PROFILER_BLOCK_EVENTS] : NULL;
}

void profiler_pool_free(profiler_ctx_t* ctx) {
  for (int b = 0; b < PROFILER_MAX_BLOCKS; b++) free(atomic_load(&ctx->blocks[b]));
}
