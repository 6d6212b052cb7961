/* The default tuner plugin is the built-in model: loaded through the
 * loader with the same topology it decides exactly as the core alone, over
 * sizes and shapes; it keeps cells the core disabled and cells the model
 * does not cost (NVLS, CollNet) as the core left them. */
#include <stdlib.h>

#include "check.h"
#include "tune/tune.h"

static void compare_shape(const ncclTuner_v6_t* plugin, int nRanks, int nNodes) {
  costmodel_topo_t topo;
  costmodel_topo_default(&topo, nRanks, nNodes);
  tune_ctx_t *alone = NULL, *with = NULL;
  CHECK_NCCL(tune_ctx_create(&topo, NULL, 1, &alone));
  CHECK_NCCL(tune_ctx_create(&topo, plugin, 1, &with));
  CHECK(tune_ctx_tuner(with) == plugin);
  for (int f = ncclFuncBroadcast; f <= ncclFuncAllReduce; f++) {
    for (size_t bytes = 8; bytes <= ((size_t)1 << 33); bytes <<= 2) {
      tune_choice_t a, b;
      tune_request_t req = {f, bytes, 1, 1, 0, 0, NULL};
      CHECK_NCCL(tune_decide_request(alone, &req, &a));
      CHECK_NCCL(tune_decide_request(with, &req, &b));
      CHECK_MSG(a.algo == b.algo && a.proto == b.proto, "%d ranks/%d nodes %s %zu: model %s/%s, plugin %s/%s", nRanks,
                nNodes, costmodel_func_name(f), bytes, costmodel_algo_name(a.algo), costmodel_proto_name(a.proto),
                costmodel_algo_name(b.algo), costmodel_proto_name(b.proto));
    }
  }
  tune_ctx_destroy(with);
  tune_ctx_destroy(alone);
}

static void check_cells_kept(const ncclTuner_v6_t* t) {
  ncclNvlDomainInfo_v6_t nvl = {4, 8, 8};
  costmodel_topo_t topo;
  costmodel_topo_default(&topo, 32, 4);
  ncclTunerConstants_v6_t c;
  costmodel_constants(&topo, &c);
  void* ctx = NULL;
  CHECK_NCCL(t->init(&ctx, 7, 32, 4, NULL, &nvl, &c));
  float table[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
  for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
    for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++) table[a][p] = 1234.0f;
  table[NCCL_ALGO_TREE][NCCL_PROTO_LL] = -1.0f; /* the core disabled it */
  int nc = 9;
  CHECK_NCCL(t->getCollInfo(ctx, ncclFuncAllReduce, 4096, 1, (float**)table, 7, 3, 0, &nc));
  CHECK(table[NCCL_ALGO_TREE][NCCL_PROTO_LL] == -1.0f);
  CHECK(table[NCCL_ALGO_NVLS][NCCL_PROTO_SIMPLE] == 1234.0f);
  CHECK(table[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE] != 1234.0f && table[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE] > 0);
  CHECK(table[NCCL_ALGO_RING][NCCL_PROTO_LL128] == 1234.0f); /* no GPU: LL128 not costed, left alone */
  CHECK_EQ_INT(nc, 9);
  CHECK_NCCL(t->finalize(ctx));
}

int main(void) {
  unsetenv("NCCL_ALGO");
  unsetenv("NCCL_PROTO");
  /* The same topology the core's default summary describes. */
  setenv("MKCCL_TUNER_INTRA_LINK", "pci", 1);
  setenv("MKCCL_TUNER_INTRA_BW", "20", 1);
  setenv("MKCCL_TUNER_INTER_BW", "10", 1);
  setenv("MKCCL_TUNER_GPU", "0", 1);
  setenv("NCCL_TUNER_PLUGIN", TUNER_PLUGIN, 1);
  tune_plugin_t* p = NULL;
  CHECK_NCCL(tune_plugin_load(&p));
  CHECK(p != NULL);
  CHECK_EQ_INT(tune_plugin_abi(p), 6);
  CHECK_STR_CONTAINS(tune_plugin_table(p)->name, "mkccl-model");
  compare_shape(tune_plugin_table(p), 32, 4);
  compare_shape(tune_plugin_table(p), 8, 1);
  compare_shape(tune_plugin_table(p), 256, 32);
  check_cells_kept(tune_plugin_table(p));
  tune_plugin_unload(p);
  printf("test_tuner_default: OK\n");
  return 0;
}
