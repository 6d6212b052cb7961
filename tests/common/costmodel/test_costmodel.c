/* The cost model's table on its own (common/costmodel): which cells it
 * costs (ring and tree, LL128 only with a GPU, tree only for AllReduce,
 * Broadcast and Reduce), more channels never slower, a measured latency
 * replacing the Simple hop latency, a rooted tree costing one way of the
 * tree (less than AllReduce's two); and the names round-trip. */
#include <string.h>

#include "check.h"
#include "costmodel/costmodel.h"
#include "costmodel/costmodel_names.h"

static void test_table_shape(void) {
  costmodel_topo_t topo;
  costmodel_topo_default(&topo, 16, 2);
  ncclTunerConstants_v5_t c;
  costmodel_constants(&topo, &c);
  float t[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
  costmodel_table(&topo, &c, ncclFuncAllReduce, 1 << 20, 2, 4, t);
  CHECK(t[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE] > 0 && t[NCCL_ALGO_TREE][NCCL_PROTO_LL] > 0);
  CHECK(t[NCCL_ALGO_RING][NCCL_PROTO_LL128] < 0); /* no GPU */
  for (int a = NCCL_ALGO_COLLNET_DIRECT; a < NCCL_NUM_ALGORITHMS; a++)
    for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++) CHECK(t[a][p] < 0);
  costmodel_table(&topo, &c, ncclFuncAllGather, 1 << 20, 2, 4, t);
  CHECK(t[NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE] < 0 && t[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE] > 0);
  topo.gpu = 1;
  costmodel_constants(&topo, &c);
  costmodel_table(&topo, &c, ncclFuncAllReduce, 1 << 20, 2, 4, t);
  CHECK(t[NCCL_ALGO_RING][NCCL_PROTO_LL128] > 0);
  /* More channels: never slower for a large message. */
  float one[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
  costmodel_table(&topo, &c, ncclFuncAllReduce, 64 << 20, 1, 4, one);
  costmodel_table(&topo, &c, ncclFuncAllReduce, 64 << 20, 4, 4, t);
  CHECK(t[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE] < one[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE]);
  /* A measured latency replaces the Simple hop latency. */
  topo.interLatUs = 28.0;
  costmodel_constants(&topo, &c);
  CHECK(c.hwLatencies[NCCL_HW_NET][NCCL_ALGO_RING][NCCL_PROTO_SIMPLE] == 28.0);
}


static void test_rooted_table(int nRanks) {
  costmodel_topo_t topo;
  costmodel_topo_default(&topo, nRanks, 1);
  ncclTunerConstants_v5_t c;
  costmodel_constants(&topo, &c);
  float ar[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS], bc[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
  costmodel_table(&topo, &c, ncclFuncAllReduce, 8, 1, 2, ar);
  costmodel_table(&topo, &c, ncclFuncBroadcast, 8, 1, 2, bc);
  CHECK(bc[NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE] > 0 &&
        bc[NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE] < ar[NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE]);
}

static void test_channels(void) {
  CHECK_EQ_INT(costmodel_channels(0, 4), 1);
  CHECK_EQ_INT(costmodel_channels(128 << 10, 4), 1);
  CHECK_EQ_INT(costmodel_channels((128 << 10) + 1, 4), 2);
  CHECK_EQ_INT(costmodel_channels((size_t)1 << 30, 4), 4);
  CHECK_EQ_INT(costmodel_channels((size_t)1 << 30, 0), 1);
}

static void test_names(void) {
  for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++) {
    const char* n = costmodel_algo_name(a);
    CHECK_EQ_INT(costmodel_algo_parse(n, strlen(n)), a);
  }
  for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++) {
    const char* n = costmodel_proto_name(p);
    CHECK_EQ_INT(costmodel_proto_parse(n, strlen(n)), p);
  }
  for (int f = 0; f < ncclNumFuncs; f++) {
    const char* n = costmodel_func_name(f);
    CHECK_EQ_INT(costmodel_func_parse(n, strlen(n)), f);
  }
  CHECK_EQ_INT(costmodel_algo_parse("RING", 4), NCCL_ALGO_RING);
  CHECK_EQ_INT(costmodel_proto_parse("ll128x", 5), NCCL_PROTO_LL128); /* only text[0..len) */
  CHECK_EQ_INT(costmodel_algo_parse("rin", 3), -1);
  CHECK(strcmp(costmodel_algo_name(NCCL_NUM_ALGORITHMS), "?") == 0);
  CHECK(strcmp(costmodel_func_name(-1), "?") == 0);
}

int main(void) {
  test_table_shape();
  for (int n = 2; n <= 16; n *= 2) test_rooted_table(n);
  test_channels();
  test_names();
  printf("test_costmodel: OK\n");
  return 0;
}
