/* A lock-free multi-producer single-consumer queue of proxy ops (intrusive,
 * Vyukov style): calling threads push, the proxy thread pops. */
#ifndef MKCCL_PROXY_OP_QUEUE_H
#define MKCCL_PROXY_OP_QUEUE_H

#include <stdatomic.h>
#include <stddef.h>

typedef struct op_queue_node {
  _Atomic(struct op_queue_node*) next;
} op_queue_node_t;

typedef struct {
  _Atomic(op_queue_node_t*) head; /* producers swap in here */
  /* Consumer side: popped by whoever holds the proxy's round lock (the
   * thread or a helping caller); atomic because the proxy thread reads it
   * without that lock to decide whether it may sleep (proxy_nothing_to_do).
   * Relaxed: only the round lock orders the consumer's own accesses. */
  _Atomic(op_queue_node_t*) tail;
  op_queue_node_t stub;
} op_queue_t;

static inline void op_queue_init(op_queue_t* q) {
  atomic_store_explicit(&q->stub.next, NULL, memory_order_relaxed);
  atomic_store_explicit(&q->head, &q->stub, memory_order_relaxed);
  atomic_store_explicit(&q->tail, &q->stub, memory_order_relaxed);
}

static inline void op_queue_set_tail(op_queue_t* q, op_queue_node_t* n) {
  atomic_store_explicit(&q->tail, n, memory_order_relaxed);
}

static inline void op_queue_push(op_queue_t* q, op_queue_node_t* n) {
  atomic_store_explicit(&n->next, NULL, memory_order_relaxed);
  op_queue_node_t* prev = atomic_exchange_explicit(&q->head, n, memory_order_acq_rel);
  atomic_store_explicit(&prev->next, n, memory_order_release);
}

/* NULL when empty (or when a push is half done: try again later). */
static inline op_queue_node_t* op_queue_pop(op_queue_t* q) {
  op_queue_node_t* tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
  op_queue_node_t* next = atomic_load_explicit(&tail->next, memory_order_acquire);
  if (tail == &q->stub) {
    if (!next) return NULL;
    op_queue_set_tail(q, next);
    tail = next;
    next = atomic_load_explicit(&next->next, memory_order_acquire);
  }
  if (next) {
    op_queue_set_tail(q, next);
    return tail;
  }
  if (tail != atomic_load_explicit(&q->head, memory_order_acquire)) return NULL;
  op_queue_push(q, &q->stub);
  next = atomic_load_explicit(&tail->next, memory_order_acquire);
  if (next) {
    op_queue_set_tail(q, next);
    return tail;
  }
  return NULL;
}

#endif
