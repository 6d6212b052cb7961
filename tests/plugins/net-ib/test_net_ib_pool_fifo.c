/* Request pool exhaustion and reuse; remote FIFO slot arithmetic; the
 * split of a message over QPs. */
#include "check.h"
#include "net_ib_fifo.h"
#include "net_ib_pool.h"

int main(void) {
  /* pool: all 32 out, the 33rd refused, a freed one comes back */
  net_ib_pool_t p = {0};
  for (int i = 0; i < IB_MAX_REQUESTS; i++) CHECK_EQ_INT(net_ib_pool_get(&p), i);
  CHECK_EQ_INT(net_ib_pool_in_use(&p), IB_MAX_REQUESTS);
  CHECK_EQ_INT(net_ib_pool_get(&p), -1);
  CHECK_EQ_INT(net_ib_pool_put(&p, 17), 0);
  CHECK_EQ_INT(net_ib_pool_put(&p, 17), -1); /* twice */
  CHECK_EQ_INT(net_ib_pool_put(&p, 32), -1);
  CHECK_EQ_INT(net_ib_pool_put(&p, -1), -1);
  CHECK_EQ_INT(net_ib_pool_get(&p), 17);
  CHECK_EQ_INT(net_ib_pool_get(&p), -1);
  for (int i = 0; i < IB_MAX_REQUESTS; i++) CHECK_EQ_INT(net_ib_pool_put(&p, i), 0);
  CHECK_EQ_INT(net_ib_pool_in_use(&p), 0);

  /* FIFO: slots wrap every IB_MAX_REQUESTS, idx is seq + 1 (never 0, so a
   * zeroed FIFO is never "ready"), elements are contiguous per slot */
  CHECK_EQ_INT(net_ib_fifo_slot(0), 0);
  CHECK_EQ_INT(net_ib_fifo_slot(31), 31);
  CHECK_EQ_INT(net_ib_fifo_slot(32), 0);
  CHECK_EQ_INT(net_ib_fifo_slot(1000003), 1000003 % 32);
  CHECK(net_ib_fifo_idx(0) == 1 && net_ib_fifo_idx(31) == 32 && net_ib_fifo_idx(32) == 33);
  CHECK(net_ib_fifo_offset(0, 0) == 0);
  CHECK(net_ib_fifo_offset(0, 1) == 64);
  CHECK(net_ib_fifo_offset(1, 0) == 64 * IB_MAX_RECVS);
  CHECK(net_ib_fifo_offset(33, 2) == net_ib_fifo_offset(1, 2));
  CHECK(net_ib_fifo_offset(31, IB_MAX_RECVS - 1) + 64 == (uint64_t)IB_MAX_REQUESTS * IB_MAX_RECVS * 64);
  CHECK(net_ib_sizes_offset(2, 3) == (2 * IB_MAX_RECVS + 3) * 4);
  CHECK(net_ib_sizes_offset(34, 3) == net_ib_sizes_offset(2, 3));

  /* split: the QPs' parts tile the message, in order, 128-aligned starts */
  const size_t sizes[] = {0, 1, 127, 128, 129, 1000, 4096, 65537, 1 << 20, (1 << 20) + 5};
  for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
    for (int nqps = 1; nqps <= IB_MAX_QPS; nqps++) {
      size_t next = 0;
      for (int q = 0; q < nqps; q++) {
        size_t off, len;
        net_ib_split(sizes[si], nqps, q, &off, &len);
        CHECK_MSG(off == next || len == 0, "size %zu nqps %d q %d: off %zu, expected %zu", sizes[si], nqps, q, off, next);
        CHECK(off % IB_SPLIT_ALIGN == 0 || off == sizes[si]);
        CHECK(off + len <= sizes[si]);
        if (len) next = off + len;
      }
      CHECK_MSG(next == sizes[si], "size %zu over %d QPs covers %zu", sizes[si], nqps, next);
    }
  }
  /* an even split when it divides */
  size_t off, len;
  net_ib_split(1 << 20, 4, 2, &off, &len);
  CHECK(off == (1 << 19) && len == (1 << 18));
  printf("test_net_ib_pool_fifo: ok\n");
  return 0;
}
