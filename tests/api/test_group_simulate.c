/* ncclGroupSimulateEnd through the public API, 2 ranks as processes: the
 * group's collectives are costed (a positive estimate that grows with the
 * size) and never run (the output buffer is untouched), the group is closed
 * after it, and bad uses are refused with a last-error text. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "nccl.h"
#include "ranks_id.h"

#define BIG (1 << 20)

static float simulate_allreduce(ncclComm_t comm, float* in, float* out, size_t count) {
  ncclSimInfo_t sim = NCCL_SIM_INFO_INITIALIZER;
  CHECK_NCCL(ncclGroupStart());
  CHECK_NCCL(ncclAllReduce(in, out, count, ncclFloat32, ncclSum, comm, NULL));
  CHECK_NCCL(ncclGroupSimulateEnd(&sim));
  return sim.estimatedTime;
}

static int rank_main(int rank, int n, void* arg) {
  (void)arg;
  ncclComm_t comm = ranks_comm_init(rank, n);
  float* in = malloc(BIG * sizeof(float));
  float* out = malloc(BIG * sizeof(float));
  CHECK(in && out);
  for (int i = 0; i < BIG; i++) in[i] = (float)(rank + 1), out[i] = -7.0f;

  float small = simulate_allreduce(comm, in, out, 16);
  float big = simulate_allreduce(comm, in, out, BIG);
  CHECK_MSG(small > 0 && big > small, "estimates: %g us for 64 B, %g us for 4 MB", small, big);
  for (int i = 0; i < BIG; i++) CHECK_MSG(out[i] == -7.0f, "element %d was written: nothing may run", i);

  /* The group is closed: a real collective runs and is right. */
  CHECK_NCCL(ncclAllReduce(in, out, BIG, ncclFloat32, ncclSum, comm, NULL));
  for (int i = 0; i < BIG; i++) CHECK(out[i] == (float)(n * (n + 1) / 2));

  /* Bad uses. */
  ncclSimInfo_t sim = NCCL_SIM_INFO_INITIALIZER;
  CHECK_EQ_INT(ncclGroupSimulateEnd(&sim), ncclInvalidUsage); /* no group open */
  CHECK_STR_CONTAINS(ncclGetLastError(comm), "no group is open");
  CHECK_NCCL(ncclGroupStart());
  CHECK_EQ_INT(ncclGroupSimulateEnd(NULL), ncclInvalidArgument);
  ncclSimInfo_t raw;
  memset(&raw, 0, sizeof(raw));
  CHECK_EQ_INT(ncclGroupSimulateEnd(&raw), ncclInvalidArgument);
  CHECK_STR_CONTAINS(ncclGetLastError(comm), "NCCL_SIM_INFO_INITIALIZER");
  CHECK_NCCL(ncclGroupStart()); /* nested: only the outermost may be simulated */
  CHECK_EQ_INT(ncclGroupSimulateEnd(&sim), ncclInvalidUsage);
  CHECK_NCCL(ncclGroupEnd());
  CHECK_NCCL(ncclGroupSimulateEnd(&sim)); /* an empty group costs nothing */
  CHECK(sim.estimatedTime == 0.0f);

  free(in), free(out);
  CHECK_NCCL(ncclCommDestroy(comm));
  return 0;
}

int main(void) {
  CHECK_EQ_INT(ranks_run(2, rank_main, NULL, 120), 0);
  return 0;
}
