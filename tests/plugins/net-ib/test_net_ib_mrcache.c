/* MR cache: page widening, hits and references, deregistration at the last
 * reference, kinds kept apart, dma-buf offsets, failures, growth. */
#include "check.h"
#include "net_ib_mrcache.h"

#define PAGE 4096

typedef struct {
  int regs, deregs, fail, live;
  net_ib_mr_request_t last;
} fake_t;

static int fake_reg(void* ctx, const net_ib_mr_request_t* req, void** mr, uint32_t* lkey, uint32_t* rkey) {
  fake_t* f = ctx;
  if (f->fail) return -1;
  f->regs++;
  f->live++;
  f->last = *req;
  *mr = (void*)(uintptr_t)(0x1000 + f->regs);
  *lkey = 100u + (uint32_t)f->regs;
  *rkey = 200u + (uint32_t)f->regs;
  return 0;
}

static void fake_dereg(void* ctx, void* mr) {
  fake_t* f = ctx;
  CHECK(mr != NULL);
  f->deregs++;
  f->live--;
}

int main(void) {
  fake_t f = {0};
  net_ib_mrcache_t c;
  net_ib_mrcache_init(&c, PAGE, fake_reg, fake_dereg, &f);
  static char arena[64 * PAGE] __attribute__((aligned(PAGE)));
  net_ib_mr_entry_t *a, *b, *d, *e;

  /* a request inside one page is widened to it */
  CHECK_EQ_INT(net_ib_mrcache_get(&c, arena + 100, 50, 1, -1, 0, &a), 0);
  CHECK_EQ_INT(f.regs, 1);
  CHECK(f.last.start == (uintptr_t)arena && f.last.len == PAGE);
  CHECK(a->start == (uintptr_t)arena && a->end == (uintptr_t)arena + PAGE);
  /* inside it: a hit, one more reference, same keys */
  CHECK_EQ_INT(net_ib_mrcache_get(&c, arena + 2000, 100, 1, -1, 0, &b), 0);
  CHECK(a == b);
  CHECK_EQ_INT(a->refs, 2);
  CHECK_EQ_INT(f.regs, 1);
  CHECK_EQ_INT((int)c.hits, 1);
  /* straddling the page: a new, wider registration */
  CHECK_EQ_INT(net_ib_mrcache_get(&c, arena + PAGE - 10, 20, 1, -1, 0, &d), 0);
  CHECK(d != a && f.regs == 2);
  CHECK(d->start == (uintptr_t)arena && d->end == (uintptr_t)arena + 2 * PAGE);
  /* same range, other kind: never shared */
  CHECK_EQ_INT(net_ib_mrcache_get(&c, arena + 100, 50, 2, -1, 0, &e), 0);
  CHECK(e != a && e->kind == 2 && f.regs == 3);
  /* references: the first put keeps it, the last deregisters at once */
  CHECK_EQ_INT(net_ib_mrcache_put(&c, a), 0);
  CHECK_EQ_INT(f.deregs, 0);
  CHECK_EQ_INT(net_ib_mrcache_put(&c, b), 0);
  CHECK_EQ_INT(f.deregs, 1);
  CHECK_EQ_INT(c.n, 2);
  /* a put of something no longer (or never) in the cache is refused */
  CHECK_EQ_INT(net_ib_mrcache_put(&c, a), -1);
  net_ib_mr_entry_t stranger = {0};
  CHECK_EQ_INT(net_ib_mrcache_put(&c, &stranger), -1);
  /* the wider entry d still covers page 0: a hit on it */
  CHECK_EQ_INT(net_ib_mrcache_get(&c, arena + 100, 50, 1, -1, 0, &a), 0);
  CHECK(a == d && d->refs == 2 && f.regs == 3);
  CHECK_EQ_INT(net_ib_mrcache_put(&c, a), 0);
  /* once d is gone too, the same range registers again (no stale entry) */
  CHECK_EQ_INT(net_ib_mrcache_put(&c, d), 0);
  CHECK_EQ_INT(f.deregs, 2);
  CHECK_EQ_INT(net_ib_mrcache_get(&c, arena + 100, 50, 1, -1, 0, &a), 0);
  CHECK_EQ_INT(f.regs, 4);
  CHECK_EQ_INT(net_ib_mrcache_put(&c, a), 0);
  /* dma-buf: the offset follows the widened start */
  int regsBefore = f.regs;
  CHECK_EQ_INT(net_ib_mrcache_get(&c, arena + 10 * PAGE + 300, 1000, 4, 7, 5000, &e), 0);
  CHECK_EQ_INT(f.regs, regsBefore + 1);
  CHECK(f.last.fd == 7 && f.last.offset == 5000 - 300 && f.last.start == (uintptr_t)arena + 10 * PAGE);
  /* ... unless widening would go below the dma-buf's start */
  CHECK_EQ_INT(net_ib_mrcache_get(&c, arena + 12 * PAGE + 300, 1000, 4, 7, 100, &b), 0);
  CHECK(f.last.offset == 100 && f.last.start == (uintptr_t)arena + 12 * PAGE + 300 && f.last.len == 1000);
  net_ib_mrcache_put(&c, b);
  net_ib_mrcache_put(&c, e);
  /* a failing registration leaves nothing behind */
  int n = c.n;
  f.fail = 1;
  CHECK_EQ_INT(net_ib_mrcache_get(&c, arena + 30 * PAGE, 10, 1, -1, 0, &b), -1);
  CHECK_EQ_INT(c.n, n);
  f.fail = 0;
  /* growth past the first allocation keeps entries where they are */
  net_ib_mr_entry_t* many[40];
  for (int i = 0; i < 40; i++) CHECK_EQ_INT(net_ib_mrcache_get(&c, arena + 40 * PAGE + (size_t)i, 1, 10 + i, -1, 0, &many[i]), 0);
  CHECK(many[0]->kind == 10 && many[39]->kind == 49);
  for (int i = 0; i < 40; i++) CHECK_EQ_INT(net_ib_mrcache_put(&c, many[i]), 0);
  /* fini deregisters what is left */
  net_ib_mrcache_fini(&c);
  CHECK_EQ_INT(f.live, 0);
  printf("test_net_ib_mrcache: ok (%d registrations)\n", f.regs);
  return 0;
}
