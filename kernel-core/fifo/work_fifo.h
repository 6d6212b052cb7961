/* The work FIFO (DESIGN.md, "Work FIFO"): how the enqueuing thread hands
 * work items to an executor (host threads or a GPU kernel) without blocking.
 *
 * A power-of-two ring of bytes; `produced` and `consumed` are 32-bit byte
 * counters that wrap: every comparison is on their difference, which is
 * exact while the ring is smaller than 2^31. The producer waits for room
 * (back-pressure) by polling event callbacks: each callback, when its event
 * has happened (executor progress, a GPU event), returns space by moving
 * `consumed` forward. Items are written in 16-byte units and may wrap. */
#ifndef MKCCL_FIFO_WORK_FIFO_H
#define MKCCL_FIFO_WORK_FIFO_H

#include <stdint.h>

#include "nccl.h"

typedef struct work_fifo_event {
  struct work_fifo_event* next;
  /* 1 when the event happened (its work was consumed). */
  int (*query)(struct work_fifo_event* ev);
  uint32_t consumedAfter; /* `consumed` once this event happened */
  void* arg;
  int queued;             /* between work_fifo_event_add and its callback */
} work_fifo_event_t;

typedef struct {
  char* buf;              /* host memory (pinned for a GPU executor) */
  uint32_t bytes;         /* power of two */
  uint32_t produced;
  volatile uint32_t consumed;
  work_fifo_event_t* eventsHead; /* in production order */
  work_fifo_event_t* eventsTail;
} work_fifo_t;

/* `bytes` must be a power of two >= 256 and < 2^31. */
ncclResult_t work_fifo_init(work_fifo_t* fifo, void* buf, uint32_t bytes);

static inline uint32_t work_fifo_used(const work_fifo_t* fifo) { return fifo->produced - fifo->consumed; }
static inline int work_fifo_has_room(const work_fifo_t* fifo, uint32_t bytes) {
  return (uint32_t)(fifo->produced + bytes - fifo->consumed) <= fifo->bytes;
}

/* Run callbacks whose events happened, oldest first; stops at the first
 * that has not. */
void work_fifo_poll(work_fifo_t* fifo);

/* Wait until `bytes` fit, polling events; ncclInvalidUsage if they never
 * can, ncclRemoteError if *abortFlag rises while waiting. */
ncclResult_t work_fifo_wait_room(work_fifo_t* fifo, uint32_t bytes, volatile uint32_t* abortFlag);

/* Append (after wait_room). Returns the item's offset (a produced count). */
uint32_t work_fifo_push(work_fifo_t* fifo, const void* data, uint32_t bytes);

/* Read back an item at `offset` (executor side). */
void work_fifo_read(const work_fifo_t* fifo, uint32_t offset, void* out, uint32_t bytes);

/* Register an event that returns space up to `consumedAfter` once it happens. */
void work_fifo_event_add(work_fifo_t* fifo, work_fifo_event_t* ev);

#endif
