/* NCCL_ALGO / NCCL_PROTO: parsing (lists, exclusions, per-collective
 * entries, errors with offsets) and their effect on decisions. */
#include <stdlib.h>

#include "check.h"
#include "tune/tune.h"

static void test_parse(void) {
  tune_filter_t f;
  char err[160];
  tune_filter_init(&f);
  CHECK_EQ_INT(tune_filter_parse("Ring", TUNE_FILTER_ALGO, &f, err, sizeof(err)), 0);
  for (int fn = 0; fn < ncclNumFuncs; fn++) {
    CHECK(f.algo[fn][NCCL_ALGO_RING] && !f.algo[fn][NCCL_ALGO_TREE] && !f.algo[fn][NCCL_ALGO_NVLS]);
  }
  tune_filter_init(&f);
  CHECK_EQ_INT(tune_filter_parse(" ^tree , collnet ", TUNE_FILTER_ALGO, &f, err, sizeof(err)), 0);
  CHECK(f.algo[ncclFuncAllReduce][NCCL_ALGO_RING] && !f.algo[ncclFuncAllReduce][NCCL_ALGO_TREE]);
  CHECK(!f.algo[ncclFuncAllReduce][NCCL_ALGO_COLLNET_CHAIN] && f.algo[ncclFuncAllReduce][NCCL_ALGO_PAT]);
  tune_filter_init(&f);
  CHECK_EQ_INT(tune_filter_parse("allreduce:tree;allgather:^ring", TUNE_FILTER_ALGO, &f, err, sizeof(err)), 0);
  CHECK(f.algo[ncclFuncAllReduce][NCCL_ALGO_TREE] && !f.algo[ncclFuncAllReduce][NCCL_ALGO_RING]);
  CHECK(!f.algo[ncclFuncAllGather][NCCL_ALGO_RING] && f.algo[ncclFuncAllGather][NCCL_ALGO_PAT]);
  CHECK(f.algo[ncclFuncBroadcast][NCCL_ALGO_RING] && f.algo[ncclFuncBroadcast][NCCL_ALGO_TREE]);
  /* Later entries win. */
  tune_filter_init(&f);
  CHECK_EQ_INT(tune_filter_parse("ring;allreduce:tree", TUNE_FILTER_ALGO, &f, err, sizeof(err)), 0);
  CHECK(f.algo[ncclFuncAllReduce][NCCL_ALGO_TREE] && !f.algo[ncclFuncAllReduce][NCCL_ALGO_RING]);
  CHECK(!f.algo[ncclFuncReduce][NCCL_ALGO_TREE] && f.algo[ncclFuncReduce][NCCL_ALGO_RING]);
  tune_filter_init(&f);
  CHECK_EQ_INT(tune_filter_parse("^LL128", TUNE_FILTER_PROTO, &f, err, sizeof(err)), 0);
  CHECK(f.proto[ncclFuncAllReduce][NCCL_PROTO_LL] && !f.proto[ncclFuncAllReduce][NCCL_PROTO_LL128]);
  CHECK_EQ_INT(tune_filter_parse(NULL, TUNE_FILTER_PROTO, &f, err, sizeof(err)), 0);
  CHECK(f.proto[ncclFuncAllReduce][NCCL_PROTO_SIMPLE]);
}

static void test_parse_errors(void) {
  tune_filter_t f, before;
  char err[160];
  tune_filter_init(&f);
  before = f;
  CHECK_EQ_INT(tune_filter_parse("ring,rign", TUNE_FILTER_ALGO, &f, err, sizeof(err)), -1);
  CHECK_STR_CONTAINS(err, "unknown algorithm 'rign' at offset 5");
  CHECK_EQ_INT(tune_filter_parse("allreduc:tree", TUNE_FILTER_ALGO, &f, err, sizeof(err)), -1);
  CHECK_STR_CONTAINS(err, "unknown collective 'allreduc' at offset 0");
  CHECK_EQ_INT(tune_filter_parse("allreduce:", TUNE_FILTER_ALGO, &f, err, sizeof(err)), -1);
  CHECK_STR_CONTAINS(err, "empty algorithm list");
  CHECK_EQ_INT(tune_filter_parse("simple,,ll", TUNE_FILTER_PROTO, &f, err, sizeof(err)), -1);
  CHECK_STR_CONTAINS(err, "unknown protocol '' at offset 7");
  CHECK_EQ_INT(tune_filter_parse("ll;allgather:^lowlat", TUNE_FILTER_PROTO, &f, err, sizeof(err)), -1);
  CHECK_STR_CONTAINS(err, "unknown protocol 'lowlat' at offset 14");
  CHECK(memcmp(&f, &before, sizeof(f)) == 0); /* unchanged on error, even after a good first entry */
}

static tune_choice_t decide(const char* algo, const char* proto, int func, size_t bytes) {
  if (algo) setenv("NCCL_ALGO", algo, 1);
  else unsetenv("NCCL_ALGO");
  if (proto) setenv("NCCL_PROTO", proto, 1);
  else unsetenv("NCCL_PROTO");
  costmodel_topo_t topo;
  costmodel_topo_default(&topo, 32, 4);
  tune_ctx_t* ctx = NULL;
  CHECK_NCCL(tune_ctx_create(&topo, NULL, 1, &ctx));
  tune_choice_t c;
  CHECK_NCCL(tune_decide(ctx, func, bytes, 4, NULL, &c));
  tune_ctx_destroy(ctx);
  return c;
}

static void test_overrides(void) {
  tune_choice_t c = decide(NULL, NULL, ncclFuncAllReduce, 64);
  CHECK_EQ_INT(c.algo, NCCL_ALGO_TREE);
  CHECK_EQ_INT(c.proto, NCCL_PROTO_LL);
  c = decide("ring", NULL, ncclFuncAllReduce, 64);
  CHECK_EQ_INT(c.algo, NCCL_ALGO_RING);
  c = decide("^tree", "simple", ncclFuncAllReduce, 64);
  CHECK_EQ_INT(c.algo, NCCL_ALGO_RING);
  CHECK_EQ_INT(c.proto, NCCL_PROTO_SIMPLE);
  c = decide(NULL, NULL, ncclFuncAllReduce, (size_t)1 << 32);
  CHECK_EQ_INT(c.algo, NCCL_ALGO_RING);
  c = decide("allreduce:tree", NULL, ncclFuncAllReduce, (size_t)1 << 32);
  CHECK_EQ_INT(c.algo, NCCL_ALGO_TREE);
  c = decide("allreduce:tree", "ll", ncclFuncBroadcast, (size_t)1 << 32);
  CHECK_EQ_INT(c.algo, NCCL_ALGO_RING); /* the per-collective entry leaves broadcast alone */
  CHECK_EQ_INT(c.proto, NCCL_PROTO_LL);
}

static void test_bad_env(void) {
  costmodel_topo_t topo;
  costmodel_topo_default(&topo, 4, 1);
  tune_ctx_t* ctx = (tune_ctx_t*)0x1;
  setenv("NCCL_ALGO", "ring,bogus", 1);
  CHECK(tune_ctx_create(&topo, NULL, 1, &ctx) == ncclInvalidUsage);
  CHECK(ctx == (tune_ctx_t*)0x1);
  unsetenv("NCCL_ALGO");
  setenv("NCCL_PROTO", "allreduce:simple;allgather:", 1);
  CHECK(tune_ctx_create(&topo, NULL, 1, &ctx) == ncclInvalidUsage);
  /* Only tree allowed and AllGather has no tree: an error, not a silent ring. */
  setenv("NCCL_PROTO", "", 1);
  setenv("NCCL_ALGO", "tree", 1);
  CHECK_NCCL(tune_ctx_create(&topo, NULL, 1, &ctx));
  tune_choice_t c;
  CHECK(tune_decide(ctx, ncclFuncAllGather, 4096, 2, NULL, &c) == ncclInvalidUsage);
  tune_ctx_destroy(ctx);
  unsetenv("NCCL_ALGO");
  unsetenv("NCCL_PROTO");
}

int main(void) {
  unsetenv("NCCL_TUNER_PLUGIN");
  test_parse();
  test_parse_errors();
  test_overrides();
  test_bad_env();
  printf("test_tune_filter: OK\n");
  return 0;
}
