/* One communicator's calls in one group may name different streams, as
 * frameworks do (NCCL allows it): on a host communicator the group runs
 * as any other, every result right. 3 ranks as processes; inputs differ by
 * rank and element. (On GPUs the streams are joined: tests/gpu,
 * test_gpu_paths streams.) */
#include <stdlib.h>

#include "check.h"
#include "nccl.h"
#include "ranks_id.h"

#define COUNT 3001

static int rank_main(int rank, int n, void* arg) {
  (void)arg;
  ncclComm_t comm = ranks_comm_init(rank, n);
  int* sum = malloc(COUNT * sizeof(int));
  int* gathered = malloc((size_t)n * sizeof(int));
  CHECK(sum && gathered);
  for (int round = 0; round < 2; round++) {
    for (int i = 0; i < COUNT; i++) sum[i] = rank * 100003 + i + round;
    CHECK_NCCL(ncclGroupStart());
    CHECK_NCCL(ncclAllReduce(sum, sum, COUNT, ncclInt32, ncclSum, comm, (cudaStream_t)0x10));
    int mine = rank * 7 + round;
    CHECK_NCCL(ncclAllGather(&mine, gathered, 1, ncclInt32, comm, (cudaStream_t)0x20));
    CHECK_NCCL(ncclGroupEnd());
    for (int i = 0; i < COUNT; i++) CHECK_EQ_INT(sum[i], n * (i + round) + 100003 * n * (n - 1) / 2);
    for (int r = 0; r < n; r++) CHECK_EQ_INT(gathered[r], r * 7 + round);
  }
  free(gathered);
  free(sum);
  CHECK_NCCL(ncclCommDestroy(comm));
  return 0;
}

int main(void) {
  CHECK_EQ_INT(ranks_run(3, rank_main, NULL, 120), 0);
  return 0;
}
