/* Each tuner ABI version (v2..v6) loads through the loader and its adapter
 * and drives the decision: a test tuner forcing ring makes small multi-node
 * AllReduce ring (the model alone picks tree), one forcing tree makes large
 * ones tree; channel counts, v5+ constants and v6 chunk sizes come through. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "tune/tune.h"

static const char* const plugin_paths[7] = {NULL, NULL, TEST_TUNER_V2, TEST_TUNER_V3,
                                             TEST_TUNER_V4, TEST_TUNER_V5, TEST_TUNER_V6};

static tune_choice_t decide_with(const ncclTuner_v6_t* tuner, size_t bytes) {
  costmodel_topo_t topo;
  costmodel_topo_default(&topo, 32, 4);
  tune_ctx_t* ctx = NULL;
  CHECK_NCCL(tune_ctx_create(&topo, tuner, 42, &ctx));
  CHECK(tune_ctx_tuner(ctx) == tuner);
  tune_request_t req = {ncclFuncAllReduce, bytes, 8, 1, 0, 4096, NULL};
  tune_choice_t c;
  CHECK_NCCL(tune_decide_request(ctx, &req, &c));
  tune_ctx_destroy(ctx);
  return c;
}

static void test_version(int v, tune_plugin_t** keep) {
  setenv("NCCL_TUNER_PLUGIN", plugin_paths[v], 1);
  tune_plugin_t* p = NULL;
  CHECK_NCCL(tune_plugin_load(&p));
  CHECK_MSG(p != NULL, "v%d did not load", v);
  CHECK_EQ_INT(tune_plugin_abi(p), v);
  const ncclTuner_v6_t* t = tune_plugin_table(p);
  char name[16];
  snprintf(name, sizeof(name), "test-v%d", v);
  CHECK_STR_CONTAINS(t->name, name);

  tune_choice_t alone = decide_with(NULL, 64);
  CHECK_EQ_INT(alone.algo, NCCL_ALGO_TREE);
  setenv("MKCCL_TEST_TUNER_FORCE", "ring", 1);
  tune_choice_t c = decide_with(t, 64);
  CHECK_MSG(c.algo == NCCL_ALGO_RING, "v%d: forced ring, got %s", v, costmodel_algo_name(c.algo));
  CHECK_EQ_INT(c.proto, NCCL_PROTO_SIMPLE);
  CHECK_EQ_INT(c.nChannels, 3);
  CHECK_EQ_INT(c.byTuner, 1);
  CHECK_EQ_INT(c.chunkSize, v == 6 ? 12345 : 4096);

  tune_choice_t big = decide_with(NULL, (size_t)1 << 30);
  CHECK_EQ_INT(big.algo, NCCL_ALGO_RING);
  setenv("MKCCL_TEST_TUNER_FORCE", "tree", 1);
  c = decide_with(t, (size_t)1 << 30);
  CHECK_MSG(c.algo == NCCL_ALGO_TREE, "v%d: forced tree, got %s", v, costmodel_algo_name(c.algo));
  CHECK_EQ_INT(c.nChannels, 3);

  /* v5+ receive the constants and may change them: the prediction moves. */
  tune_choice_t ringAlone = decide_with(NULL, 64);
  setenv("MKCCL_TEST_TUNER_FORCE", "tree", 1);
  c = decide_with(t, 64);
  CHECK_EQ_INT(c.algo, ringAlone.algo);
  if (v >= 5) CHECK_MSG(c.predictedUs > ringAlone.predictedUs * 2, "v%d: constants not applied", v);
  else CHECK(c.predictedUs > 0);
  keep[v] = p; /* stays loaded: every version's adapter holds its own plugin */
}

int main(void) {
  unsetenv("NCCL_ALGO");
  unsetenv("NCCL_PROTO");
  tune_plugin_t* loaded[7] = {0};
  for (int v = 2; v <= 6; v++) test_version(v, loaded);
  for (int v = 2; v <= 6; v++) tune_plugin_unload(loaded[v]);

  /* "none": no plugin, the model decides. */
  setenv("NCCL_TUNER_PLUGIN", "none", 1);
  tune_plugin_t* p = (tune_plugin_t*)0x1;
  CHECK_NCCL(tune_plugin_load(&p));
  CHECK(p == NULL);
  /* The process's tuner: shared, loaded once, released by the last user. */
  setenv("NCCL_TUNER_PLUGIN", TEST_TUNER_V3, 1);
  const ncclTuner_v6_t *a = NULL, *b = NULL;
  CHECK_NCCL(tune_plugin_acquire(&a));
  CHECK_NCCL(tune_plugin_acquire(&b));
  CHECK(a && a == b);
  tune_plugin_release();
  tune_plugin_release();
  printf("test_tune_versions: OK\n");
  return 0;
}
