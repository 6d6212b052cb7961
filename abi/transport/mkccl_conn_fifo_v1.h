/* The connection FIFO protocol (DESIGN.md, "Connection FIFO"), host side,
 * with C11 atomics.
 * Part of the transport ABI: the core's executor and a transport's proxy
 * code both follow it, so it is spelled once, here.
 *
 * Ordering rules (invariants):
 *   producer: data, then connFifo[slot].size, then tail   (release on tail)
 *   consumer: read tail (acquire), data; then clear size, then head (release)
 * Both counters only grow; outstanding = tail - head is in [0, MKCCL_STEPS].
 * The GPU executor follows the same rules with its own fences (device/cuda). */
#ifndef MKCCL_ABI_CONN_FIFO_V1_H
#define MKCCL_ABI_CONN_FIFO_V1_H

#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* glibc declares syscall() only with _DEFAULT_SOURCE; users of this header
 * may build with plain -std=c11. */
extern long syscall(long number, ...);

#include "transport/mkccl_transport_v1.h"

static inline int conn_fifo_slot(uint64_t step) { return (int)(step % MKCCL_STEPS); }

static inline uint64_t conn_fifo_load(volatile uint64_t* word) {
  return atomic_load_explicit((_Atomic uint64_t*)word, memory_order_acquire);
}

/* The sleepers' count that follows every head/tail word. */
static inline volatile uint32_t* conn_fifo_waiters(volatile uint64_t* word) { return (volatile uint32_t*)(word + 1); }

/* Wake host threads sleeping on `word` (shared futex: works across processes
 * on shared memory). The store before it and the sleeper's count increment
 * are both sequentially consistent, so one of the two sides always sees the
 * other. */
static inline void conn_fifo_wake(volatile uint64_t* word) {
  if (atomic_load_explicit((_Atomic uint32_t*)conn_fifo_waiters(word), memory_order_seq_cst))
    syscall(SYS_futex, (uint32_t*)word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* Advance a head or tail word and wake whoever sleeps on it. */
static inline void conn_fifo_store(volatile uint64_t* word, uint64_t value) {
  atomic_store_explicit((_Atomic uint64_t*)word, value, memory_order_seq_cst);
  conn_fifo_wake(word);
}

/* Sleep until *word's low 32 bits change from `seen` (or timeoutNs passes). */
static inline void conn_fifo_sleep(volatile uint64_t* word, uint64_t seen, long timeoutNs) {
  struct timespec ts = {0, timeoutNs};
  atomic_fetch_add_explicit((_Atomic uint32_t*)conn_fifo_waiters(word), 1, memory_order_seq_cst);
  if (atomic_load_explicit((_Atomic uint64_t*)word, memory_order_seq_cst) == seen)
    syscall(SYS_futex, (uint32_t*)word, FUTEX_WAIT, (uint32_t)seen, &ts, NULL, 0);
  atomic_fetch_sub_explicit((_Atomic uint32_t*)conn_fifo_waiters(word), 1, memory_order_seq_cst);
}

static inline int64_t conn_fifo_size_load(mkcclConnFifo_v1* fifo, int slot) {
  return atomic_load_explicit((_Atomic int64_t*)&fifo[slot].size, memory_order_acquire);
}

static inline void conn_fifo_size_store(mkcclConnFifo_v1* fifo, int slot, int64_t size) {
  atomic_store_explicit((_Atomic int64_t*)&fifo[slot].size, size, memory_order_release);
}

/* Producer: may step `step` be written? (a free slot exists) */
static inline int conn_fifo_can_produce(volatile uint64_t* head, uint64_t step) {
  return conn_fifo_load(head) + MKCCL_STEPS > step;
}

/* Producer: publish the slice of `nsteps` steps starting at `first`, holding
 * `size` bytes. Data must already be written. The size lives in the slot of
 * the slice's first step. */
static inline void conn_fifo_publish(mkcclConnFifo_v1* fifo, volatile uint64_t* tail, uint64_t first, int nsteps,
                                     int64_t size) {
  if (fifo) conn_fifo_size_store(fifo, conn_fifo_slot(first), size);
  conn_fifo_store(tail, first + (uint64_t)nsteps);
}

/* Consumer: has step `step` been published? */
static inline int conn_fifo_can_consume(volatile uint64_t* tail, uint64_t step) {
  return conn_fifo_load(tail) > step;
}

/* Consumer: release the slice starting at `first` (its slots may be reused). */
static inline void conn_fifo_release(mkcclConnFifo_v1* fifo, volatile uint64_t* head, uint64_t first, int nsteps) {
  if (fifo) conn_fifo_size_store(fifo, conn_fifo_slot(first), -1);
  conn_fifo_store(head, first + (uint64_t)nsteps);
}

/* Every slot empty: after allocation, before first use. */
static inline void conn_fifo_init(mkcclConnFifo_v1* fifo) {
  for (int i = 0; i < MKCCL_STEPS; i++) {
    fifo[i].mode = MKCCL_MODE_NORMAL;
    fifo[i].offset = 0;
    fifo[i].ptr = 0;
    conn_fifo_size_store(fifo, i, -1);
  }
}

#endif
