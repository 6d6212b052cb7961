/* Memory registration cache of one device (protection domain): requests
 * are widened to whole pages; a request inside a registered range of the
 * same kind takes a reference on it (hit); the last reference deregisters
 * it at once (a freed buffer must not keep a stale registration). Entries
 * never move, so an entry pointer is the mhandle. Registration itself goes
 * through callbacks: unit-tested with fakes, no hardware. */
#ifndef NET_IB_MRCACHE_H
#define NET_IB_MRCACHE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
  uintptr_t start, end; /* page-aligned [start, end) */
  int kind;             /* NCCL_PTR_HOST / CUDA / DMABUF: never shared across kinds */
  int refs;
  void* mr;             /* what reg returned (struct ibv_mr*) */
  uint32_t lkey, rkey;
} net_ib_mr_entry_t;

typedef struct {
  uintptr_t start;
  size_t len;
  int kind;
  int fd;               /* dma-buf fd, -1 otherwise */
  uint64_t offset;      /* offset of start within the dma-buf */
} net_ib_mr_request_t;

/* Registers req; 0 and *mr, *lkey, *rkey on success. */
typedef int (*net_ib_mr_reg_fn)(void* ctx, const net_ib_mr_request_t* req, void** mr, uint32_t* lkey, uint32_t* rkey);
typedef void (*net_ib_mr_dereg_fn)(void* ctx, void* mr);

typedef struct {
  pthread_mutex_t lock;
  net_ib_mr_entry_t** entries;
  int n, cap;
  size_t pageSize;
  net_ib_mr_reg_fn reg;
  net_ib_mr_dereg_fn dereg;
  void* ctx;
  uint64_t hits, misses;
} net_ib_mrcache_t;

void net_ib_mrcache_init(net_ib_mrcache_t* c, size_t pageSize, net_ib_mr_reg_fn reg, net_ib_mr_dereg_fn dereg, void* ctx);
/* Deregisters whatever is left. */
void net_ib_mrcache_fini(net_ib_mrcache_t* c);
/* 0 and *out (one more reference); -1 when registration failed or memory ran out.
 * fd >= 0: a dma-buf, where dmaOffset is the offset of addr within it. */
int net_ib_mrcache_get(net_ib_mrcache_t* c, void* addr, size_t size, int kind, int fd, uint64_t dmaOffset,
                   net_ib_mr_entry_t** out);
/* Drops one reference; the last one deregisters. -1 if e is not in the cache. */
int net_ib_mrcache_put(net_ib_mrcache_t* c, net_ib_mr_entry_t* e);

#endif
