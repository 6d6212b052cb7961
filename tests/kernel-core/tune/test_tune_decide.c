/* The tuning context's decisions (tune_decide) over the built-in cost
 * model: tree for small and ring for large AllReduce across nodes, with one
 * crossover, and inside one node of 8 ranks (the host executor's Simple
 * protocol) too; LL for small and Simple for large; predicted times grow
 * with size; Broadcast and Reduce cross over once too; only what the
 * executors support is chosen. The model's table alone:
 * tests/common/costmodel. */
#include <stdlib.h>

#include "check.h"
#include "tune/tune.h"

#define SIZES 31 /* 8 B .. 8 GiB */

static size_t size_of(int i) { return (size_t)8 << i; }

/* Decisions for AllReduce over the size sweep; returns how many times the
 * algorithm changes and checks the time never decreases. */
static int sweep(tune_ctx_t* ctx, int func, int* algos, int* protos) {
  int changes = 0;
  float last = 0;
  for (int i = 0; i < SIZES; i++) {
    tune_choice_t c;
    CHECK_NCCL(tune_decide(ctx, func, size_of(i), 4, NULL, &c));
    algos[i] = c.algo;
    protos[i] = c.proto;
    CHECK_MSG(c.predictedUs >= last, "time went down at %zu bytes: %f < %f", size_of(i), c.predictedUs, last);
    CHECK(c.nChannels >= 1 && c.nChannels <= 4);
    last = c.predictedUs;
    if (i && algos[i] != algos[i - 1]) changes++;
  }
  return changes;
}

/* For each protocol, tree vs ring costs cross at most once, tree first. */
static void check_per_protocol_monotonic(tune_ctx_t* ctx) {
  for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++) {
    int ringWon = 0;
    for (int i = 0; i < SIZES; i++) {
      float t[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
      int nc;
      tune_request_t req = {ncclFuncAllReduce, size_of(i), 4, 1, 0, 0, NULL};
      CHECK_NCCL(tune_table(ctx, &req, t, &nc));
      if (t[NCCL_ALGO_RING][p] < 0) continue;
      int ring = t[NCCL_ALGO_RING][p] < t[NCCL_ALGO_TREE][p];
      CHECK_MSG(!(ringWon && !ring), "%s: tree wins again at %zu bytes", costmodel_proto_name(p), size_of(i));
      ringWon |= ring;
    }
  }
}

static void test_multi_node_crossover(int nNodes, int rpn, int expectChanges) {
  costmodel_topo_t topo;
  costmodel_topo_default(&topo, nNodes * rpn, nNodes);
  topo.intraLink = NCCL_HW_NVLINK;
  topo.intraBw = 100.0;
  topo.interBw = 12.0;
  tune_ctx_t* ctx = NULL;
  CHECK_NCCL(tune_ctx_create(&topo, NULL, 1, &ctx));
  int algos[SIZES], protos[SIZES];
  int changes = sweep(ctx, ncclFuncAllReduce, algos, protos);
  CHECK_MSG(algos[0] == NCCL_ALGO_TREE, "%d nodes: 8 B uses %s", nNodes, costmodel_algo_name(algos[0]));
  CHECK_MSG(algos[SIZES - 1] == NCCL_ALGO_RING, "%d nodes: 8 GiB uses %s", nNodes, costmodel_algo_name(algos[SIZES - 1]));
  CHECK(changes >= 1);
  if (expectChanges) CHECK_EQ_INT(changes, expectChanges); /* one crossover, tree below, ring above */
  check_per_protocol_monotonic(ctx);
  CHECK_EQ_INT(protos[0], NCCL_PROTO_LL);
  CHECK_EQ_INT(protos[SIZES - 1], NCCL_PROTO_SIMPLE);
  int protoChanges = 0;
  for (int i = 1; i < SIZES; i++) protoChanges += protos[i] != protos[i - 1] && protos[i] == NCCL_PROTO_LL;
  CHECK_EQ_INT(protoChanges, 0); /* never back to LL once Simple */
  tune_ctx_destroy(ctx);
}

/* 8 ranks of one host, what the host executor runs (Simple): tree below
 * one crossover, ring above it. */
static void test_single_node_8_ranks(void) {
  int sup[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS] = {{0}};
  sup[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE] = sup[NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE] = 1;
  costmodel_topo_t topo;
  costmodel_topo_default(&topo, 8, 1);
  tune_ctx_t* ctx = NULL;
  CHECK_NCCL(tune_ctx_create(&topo, NULL, 1, &ctx));
  int changes = 0, algos[SIZES];
  for (int i = 0; i < SIZES; i++) {
    tune_choice_t c;
    CHECK_NCCL(tune_decide(ctx, ncclFuncAllReduce, size_of(i), 1, (const int(*)[NCCL_NUM_PROTOCOLS])sup, &c));
    algos[i] = c.algo;
    if (i && algos[i] != algos[i - 1]) changes++;
  }
  CHECK_MSG(algos[0] == NCCL_ALGO_TREE, "8 ranks, 8 B: %s", costmodel_algo_name(algos[0]));
  CHECK_MSG(algos[SIZES - 1] == NCCL_ALGO_RING, "8 ranks, 8 GiB: %s", costmodel_algo_name(algos[SIZES - 1]));
  CHECK_EQ_INT(changes, 1);
  tune_ctx_destroy(ctx);
}

/* Broadcast and Reduce on one host (Simple): tree below one crossover,
 * ring above. */
static void test_rooted(int nRanks) {
  int sup[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS] = {{0}};
  sup[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE] = sup[NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE] = 1;
  costmodel_topo_t topo;
  costmodel_topo_default(&topo, nRanks, 1);
  tune_ctx_t* ctx = NULL;
  CHECK_NCCL(tune_ctx_create(&topo, NULL, 1, &ctx));
  const int funcs[2] = {ncclFuncBroadcast, ncclFuncReduce};
  for (int f = 0; f < 2; f++) {
    int changes = 0, algos[SIZES];
    for (int i = 0; i < SIZES; i++) {
      tune_choice_t c;
      CHECK_NCCL(tune_decide(ctx, funcs[f], size_of(i), 2, (const int(*)[NCCL_NUM_PROTOCOLS])sup, &c));
      algos[i] = c.algo;
      if (i && algos[i] != algos[i - 1]) changes++;
    }
    CHECK_MSG(algos[0] == NCCL_ALGO_TREE, "%s %d ranks, 8 B: %s", costmodel_func_name(funcs[f]), nRanks,
              costmodel_algo_name(algos[0]));
    CHECK_MSG(algos[SIZES - 1] == NCCL_ALGO_RING, "%s %d ranks, 8 GiB: %s", costmodel_func_name(funcs[f]), nRanks,
              costmodel_algo_name(algos[SIZES - 1]));
    CHECK_EQ_INT(changes, 1);
  }
  tune_ctx_destroy(ctx);
}

static void test_executor_support(void) {
  /* Executors with ring/Simple only: every decision is ring/Simple. */
  int sup[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS] = {{0}};
  sup[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE] = 1;
  costmodel_topo_t topo;
  costmodel_topo_default(&topo, 32, 4);
  tune_ctx_t* ctx = NULL;
  CHECK_NCCL(tune_ctx_create(&topo, NULL, 1, &ctx));
  /* (A GPU communicator: the model prefers tree for small ones of these, the
   * kernels have rings only, and the ring runs.) */
  const int funcs[3] = {ncclFuncAllReduce, ncclFuncBroadcast, ncclFuncReduce};
  for (int i = 0; i < SIZES * 3; i += 5) {
    tune_choice_t c;
    CHECK_NCCL(tune_decide(ctx, funcs[i % 3], size_of(i / 3), 2, (const int(*)[NCCL_NUM_PROTOCOLS])sup, &c));
    CHECK_EQ_INT(c.algo, NCCL_ALGO_RING);
    CHECK_EQ_INT(c.proto, NCCL_PROTO_SIMPLE);
    CHECK(c.predictedUs > 0);
  }
  /* Nothing supported: an error, not a guess. */
  memset(sup, 0, sizeof(sup));
  tune_choice_t c = {-7, -7, 0, 0, 0, 0};
  CHECK(tune_decide(ctx, ncclFuncAllReduce, 1024, 2, (const int(*)[NCCL_NUM_PROTOCOLS])sup, &c) == ncclInvalidUsage);
  CHECK_EQ_INT(c.algo, -7); /* outputs untouched on failure */
  tune_ctx_destroy(ctx);
}

int main(void) {
  unsetenv("NCCL_ALGO");
  unsetenv("NCCL_PROTO");
  unsetenv("NCCL_TUNER_PLUGIN");
  test_multi_node_crossover(4, 8, 1);
  test_multi_node_crossover(16, 8, 1);
  /* Small shapes may switch back and forth as the protocol changes; each
   * protocol alone still crosses once. */
  test_multi_node_crossover(2, 4, 0);
  test_single_node_8_ranks();
  for (int n = 2; n <= 16; n *= 2) test_rooted(n);
  test_executor_support();
  printf("test_tune_decide: OK\n");
  return 0;
}
