/* The event pool: an index taken with one atomic add; blocks of events
 * allocated ahead by the filler thread, or, when it is late or absent, by
 * the first thread that needs one (a losing racer frees its copy). The
 * first block is allocated and touched at init. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime with -std=c11 */
#include <stdlib.h>
#include <time.h>

#include "profiler.h"

uint64_t profiler_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* A zeroed block whose pages are all mapped (written once). */
static profiler_event_t* profiler_block_new(void) {
  profiler_event_t* b = calloc(PROFILER_BLOCK_EVENTS, sizeof(*b));
  /* A zero written through volatile: the compiler drops a memset after calloc. */
  for (size_t o = 0; b && o < PROFILER_BLOCK_EVENTS * sizeof(*b); o += 4096) ((volatile char*)b)[o] = 0;
  return b;
}

/* Publishes `fresh` as block b unless one is there (then frees it); the block in place. */
static profiler_event_t* profiler_block_publish(profiler_ctx_t* ctx, uint64_t b, profiler_event_t* fresh) {
  profiler_event_t* expected = NULL;
  if (atomic_compare_exchange_strong_explicit(&ctx->blocks[b], &expected, fresh, memory_order_acq_rel,
                                              memory_order_acquire))
    return fresh;
  free(fresh);
  return expected;
}

static void* profiler_filler_main(void* arg) {
  profiler_ctx_t* ctx = arg;
  uint64_t done = 0; /* blocks [1, done] handled */
  pthread_mutex_lock(&ctx->fillLock);
  for (;;) {
    while (!ctx->fillStop && ctx->fillWant <= done) pthread_cond_wait(&ctx->fillCond, &ctx->fillLock);
    if (ctx->fillStop) break;
    uint64_t want = ctx->fillWant;
    pthread_mutex_unlock(&ctx->fillLock);
    for (uint64_t b = done + 1; b <= want; b++) {
      if (atomic_load_explicit(&ctx->blocks[b], memory_order_acquire)) continue;
      profiler_event_t* fresh = profiler_block_new();
      if (fresh) profiler_block_publish(ctx, b, fresh);
    }
    done = want;
    pthread_mutex_lock(&ctx->fillLock);
  }
  pthread_mutex_unlock(&ctx->fillLock);
  return NULL;
}

/* Block b (> 0) will be needed soon. */
static void profiler_fill_request(profiler_ctx_t* ctx, uint64_t b) {
  if (!ctx->fillerOn || b >= PROFILER_MAX_BLOCKS || b * PROFILER_BLOCK_EVENTS >= ctx->maxEvents) return;
  pthread_mutex_lock(&ctx->fillLock);
  if (b > ctx->fillWant) ctx->fillWant = b;
  pthread_cond_signal(&ctx->fillCond);
  pthread_mutex_unlock(&ctx->fillLock);
}

int profiler_pool_init(profiler_ctx_t* ctx) {
  profiler_event_t* first = profiler_block_new(); /* preallocated: no malloc or page fault early on */
  if (!first) return -1;
  atomic_store(&ctx->blocks[0], first);
  pthread_mutex_init(&ctx->fillLock, NULL);
  pthread_cond_init(&ctx->fillCond, NULL);
  ctx->fillerOn = pthread_create(&ctx->filler, NULL, profiler_filler_main, ctx) == 0;
  profiler_fill_request(ctx, 1);
  return 0;
}

void profiler_pool_quiesce(profiler_ctx_t* ctx) {
  if (!ctx->fillerOn) return;
  pthread_mutex_lock(&ctx->fillLock);
  ctx->fillStop = 1;
  pthread_cond_signal(&ctx->fillCond);
  pthread_mutex_unlock(&ctx->fillLock);
  pthread_join(ctx->filler, NULL);
  ctx->fillerOn = 0;
}

profiler_event_t* profiler_event_alloc(profiler_ctx_t* ctx) {
  uint64_t i = atomic_fetch_add_explicit(&ctx->next, 1, memory_order_relaxed);
  if (i >= ctx->maxEvents) {
    atomic_fetch_add_explicit(&ctx->dropped, 1, memory_order_relaxed);
    return NULL;
  }
  uint64_t b = i / PROFILER_BLOCK_EVENTS;
  /* Half way through a block: the filler prepares the next one. */
  if (i % PROFILER_BLOCK_EVENTS == PROFILER_BLOCK_EVENTS / 2) profiler_fill_request(ctx, b + 1);
  profiler_event_t* block = atomic_load_explicit(&ctx->blocks[b], memory_order_acquire);
  if (!block) {
    profiler_event_t* fresh = calloc(PROFILER_BLOCK_EVENTS, sizeof(*fresh));
    if (!fresh) {
      atomic_fetch_add_explicit(&ctx->dropped, 1, memory_order_relaxed);
      return NULL;
    }
    block = profiler_block_publish(ctx, b, fresh);
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
  profiler_pool_quiesce(ctx);
  for (int b = 0; b < PROFILER_MAX_BLOCKS; b++) free(atomic_load(&ctx->blocks[b]));
  pthread_mutex_destroy(&ctx->fillLock);
  pthread_cond_destroy(&ctx->fillCond);
}
