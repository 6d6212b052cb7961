/* The work items' shared rules (device/common/work.h): which launches the
 * GPU's LL-only kernel may run (it holds FLAT and LL rings, nothing else). */
#include <string.h>

#include "check.h"
#include "device/common/work.h"

static mk_work_t item(int coll, int algo, int proto) {
  mk_work_t w;
  memset(&w, 0, sizeof(w));
  w.coll = (uint8_t)coll;
  w.algo = (uint8_t)algo;
  w.proto = (uint8_t)proto;
  return w;
}

static void test_single_items(void) {
  mk_work_t w = item(MK_COLL_ALLREDUCE, MK_ALGO_FLAT, MK_PROTO_LL);
  CHECK_EQ_INT(mk_works_ll_only(&w, 1, 2), 1);
  for (int c = MK_COLL_ALLREDUCE; c <= MK_COLL_REDUCE; c++) {
    w = item(c, MK_ALGO_RING, MK_PROTO_LL);
    CHECK_MSG(mk_works_ll_only(&w, 1, 4) == 1, "LL ring of collective %d", c);
    w = item(c, MK_ALGO_RING, MK_PROTO_SIMPLE);
    CHECK_MSG(mk_works_ll_only(&w, 1, 4) == 0, "Simple ring of collective %d", c);
    w = item(c, MK_ALGO_TREE, MK_PROTO_LL);
    CHECK_MSG(mk_works_ll_only(&w, 1, 4) == 0, "LL tree of collective %d", c);
  }
  w = item(MK_COLL_SENDRECV, MK_ALGO_RING, MK_PROTO_LL); /* point-to-point runs Simple code */
  CHECK_EQ_INT(mk_works_ll_only(&w, 1, 2), 0);
  w = item(MK_COLL_ALLREDUCE, MK_ALGO_RING, MK_PROTO_LL128);
  CHECK_EQ_INT(mk_works_ll_only(&w, 1, 2), 0);
}

static void test_launches(void) {
  mk_work_t w[3] = {item(MK_COLL_ALLREDUCE, MK_ALGO_FLAT, MK_PROTO_LL),
                    item(MK_COLL_ALLGATHER, MK_ALGO_RING, MK_PROTO_LL),
                    item(MK_COLL_BROADCAST, MK_ALGO_RING, MK_PROTO_LL)};
  CHECK_EQ_INT(mk_works_ll_only(w, 3, 8), 1);
  CHECK_EQ_INT(mk_works_ll_only(w, 3, 1), 0); /* a communicator of one copies: full kernel */
  CHECK_EQ_INT(mk_works_ll_only(w, 0, 8), 0); /* nothing to run */
  w[2] = item(MK_COLL_BROADCAST, MK_ALGO_RING, MK_PROTO_SIMPLE); /* one item needs Simple */
  CHECK_EQ_INT(mk_works_ll_only(w, 3, 8), 0);
  CHECK_EQ_INT(mk_works_ll_only(w, 2, 8), 1);
}

int main(void) {
  test_single_items();
  test_launches();
  return 0;
}
