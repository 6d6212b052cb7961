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
  op_queue_node_t* tail;          /* consumer side */
  op_queue_node_t stub;
} op_queue_t;

static inline void op_queue_init(op_queue_t* q) {
  atomic_store_explicit(&q->stub.next, NULL, memory_order_relaxed);
  atomic_store_explicit(&q->head, &q->stub, memory_order_relaxed);
  q->tail = &q->stub;
}

static inline void op_queue_push(op_queue_t* q, op_queue_node_t* n) {
  atomic_store_explicit(&n->next, NULL, memory_order_relaxed);
  op_queue_node_t* prev = atomic_exchange_explicit(&q->head, n, memory_order_acq_rel);
  atomic_store_explicit(&prev->next, n, memory_order_release);
}

/* NULL when empty (or when a push is half done: try again later). */
static inline op_queue_node_t* op_queue_pop(op_queue_t* q) {
  op_queue_node_t* tail = q->tail;
  op_queue_node_t* next = atomic_load_explicit(&tail->next, memory_order_acquire);
  if (tail == &q->stub) {
    if (!next) return NULL;
    q->tail = next;
    tail = next;
    next = atomic_load_explicit(&next->next, memory_order_acquire);
  }
  if (next) {
    q->tail = next;
    return tail;
  }
  if (tail != atomic_load_explicit(&q->head, memory_order_acquire)) return NULL;
  op_queue_push(q, &q->stub);
  next = atomic_load_explicit(&tail->next, memory_order_acquire);
  if (next) {
    q->tail = next;
    return tail;
  }
  return NULL;
}

#endif
