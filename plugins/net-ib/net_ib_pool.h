/* A fixed pool of IB_MAX_REQUESTS request slots per comm: taking one when
 * all are out fails (the caller is over the ABI's window), giving one back
 * twice is refused. Unit-tested alone. */
#ifndef NET_IB_POOL_H
#define NET_IB_POOL_H

#include <stdint.h>

#include "net_ib_fifo.h"

typedef struct {
  uint32_t used; /* bit i: slot i is out */
} net_ib_pool_t;

_Static_assert(IB_MAX_REQUESTS <= 32, "the pool is a 32-bit mask");

/* The lowest free slot, marked out; -1 when all are. */
static inline int net_ib_pool_get(net_ib_pool_t* p) {
  for (int i = 0; i < IB_MAX_REQUESTS; i++)
    if (!(p->used & (1u << i))) {
      p->used |= 1u << i;
      return i;
    }
  return -1;
}

/* 0, or -1 when i was not out. */
static inline int net_ib_pool_put(net_ib_pool_t* p, int i) {
  if (i < 0 || i >= IB_MAX_REQUESTS || !(p->used & (1u << i))) return -1;
  p->used &= ~(1u << i);
  return 0;
}

static inline int net_ib_pool_in_use(const net_ib_pool_t* p) { return __builtin_popcount(p->used); }

#endif
