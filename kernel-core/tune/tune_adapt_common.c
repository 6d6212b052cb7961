/* What the tuner adapters share: v2's support flags. */
#include "tune/tune_adapt.h"

static int adapt_row_offered(float** table, int algo) {
  const float(*t)[NCCL_NUM_PROTOCOLS] = (const float(*)[NCCL_NUM_PROTOCOLS])table;
  for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++)
    if (t[algo][p] != (float)NCCL_ALGO_PROTO_IGNORE) return 1;
  return 0;
}

int tune_adapt_has_collnet(float** table) {
  return adapt_row_offered(table, NCCL_ALGO_COLLNET_DIRECT) || adapt_row_offered(table, NCCL_ALGO_COLLNET_CHAIN);
}

int tune_adapt_has_nvls(float** table) {
  return adapt_row_offered(table, NCCL_ALGO_NVLS) || adapt_row_offered(table, NCCL_ALGO_NVLS_TREE);
}
