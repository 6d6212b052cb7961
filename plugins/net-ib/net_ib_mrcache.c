/* The registration cache (see net_ib_mrcache.h). */
#include "net_ib_mrcache.h"

#include <stdlib.h>
#include <string.h>

void net_ib_mrcache_init(net_ib_mrcache_t* c, size_t pageSize, net_ib_mr_reg_fn reg, net_ib_mr_dereg_fn dereg, void* ctx) {
  memset(c, 0, sizeof(*c));
  pthread_mutex_init(&c->lock, NULL);
  c->pageSize = pageSize;
  c->reg = reg;
  c->dereg = dereg;
  c->ctx = ctx;
}

void net_ib_mrcache_fini(net_ib_mrcache_t* c) {
  for (int i = 0; i < c->n; i++) {
    c->dereg(c->ctx, c->entries[i]->mr);
    free(c->entries[i]);
  }
  free(c->entries);
  pthread_mutex_destroy(&c->lock);
  memset(c, 0, sizeof(*c));
}

int net_ib_mrcache_get(net_ib_mrcache_t* c, void* addr, size_t size, int kind, int fd, uint64_t dmaOffset,
                   net_ib_mr_entry_t** out) {
  uintptr_t start = (uintptr_t)addr / c->pageSize * c->pageSize;
  uintptr_t end = ((uintptr_t)addr + (size ? size : 1) + c->pageSize - 1) / c->pageSize * c->pageSize;
  int rc = -1;
  pthread_mutex_lock(&c->lock);
  for (int i = 0; i < c->n; i++) {
    net_ib_mr_entry_t* e = c->entries[i];
    if (e->kind == kind && e->start <= start && e->end >= end) {
      e->refs++;
      c->hits++;
      *out = e;
      rc = 0;
      goto out;
    }
  }
  c->misses++;
  if (c->n == c->cap) {
    int cap = c->cap ? c->cap * 2 : 16;
    net_ib_mr_entry_t** grown = realloc(c->entries, sizeof(*grown) * (size_t)cap);
    if (!grown) goto out;
    c->entries = grown;
    c->cap = cap;
  }
  net_ib_mr_entry_t* e = calloc(1, sizeof(*e));
  if (!e) goto out;
  /* a dma-buf offset moves with the start we widened to */
  net_ib_mr_request_t req = {start, end - start, kind, fd, fd >= 0 ? dmaOffset - ((uintptr_t)addr - start) : 0};
  if (fd >= 0 && dmaOffset < (uintptr_t)addr - start) req.start = (uintptr_t)addr, req.len = size, req.offset = dmaOffset;
  if (c->reg(c->ctx, &req, &e->mr, &e->lkey, &e->rkey) != 0) {
    free(e);
    goto out;
  }
  e->start = req.start;
  e->end = req.start + req.len;
  e->kind = kind;
  e->refs = 1;
  c->entries[c->n++] = e;
  *out = e;
  rc = 0;
out:
  pthread_mutex_unlock(&c->lock);
  return rc;
}

int net_ib_mrcache_put(net_ib_mrcache_t* c, net_ib_mr_entry_t* e) {
  int rc = -1;
  pthread_mutex_lock(&c->lock);
  for (int i = 0; i < c->n; i++) {
    if (c->entries[i] != e) continue;
    rc = 0;
    if (--e->refs == 0) {
      c->dereg(c->ctx, e->mr);
      c->entries[i] = c->entries[--c->n];
      free(e);
    }
    break;
  }
  pthread_mutex_unlock(&c->lock);
  return rc;
}
