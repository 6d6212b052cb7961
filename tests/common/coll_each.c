/* The workload of coll_each.h. */
#include "coll_each.h"

#include <stdlib.h>

#include "check.h"

void coll_each_run(ncclComm_t comm, int rank, int n, size_t count) {
  size_t all = count * (size_t)n;
  float* in = calloc(all, sizeof(float));
  float* out = calloc(all, sizeof(float));
  CHECK(in && out && n >= 2);
  for (size_t i = 0; i < all; i++) in[i] = (float)(rank + 1);
  float sum = (float)(n * (n + 1) / 2);
  CHECK_NCCL(ncclAllReduce(in, out, count, ncclFloat32, ncclSum, comm, NULL));
  CHECK(out[0] == sum && out[count - 1] == sum);
  CHECK_NCCL(ncclAllGather(in, out, count, ncclFloat32, comm, NULL));
  CHECK(out[0] == 1.0f && out[all - 1] == (float)n);
  CHECK_NCCL(ncclReduceScatter(in, out, count, ncclFloat32, ncclSum, comm, NULL));
  CHECK(out[0] == sum && out[count - 1] == sum);
  CHECK_NCCL(ncclBroadcast(in, out, count, ncclFloat32, 1, comm, NULL));
  CHECK(out[0] == 2.0f && out[count - 1] == 2.0f);
  CHECK_NCCL(ncclReduce(in, out, count, ncclFloat32, ncclMax, 1, comm, NULL));
  if (rank == 1) CHECK(out[0] == (float)n && out[count - 1] == (float)n);
  CHECK_NCCL(ncclGroupStart());
  CHECK_NCCL(ncclSend(in, count, ncclFloat32, (rank + 1) % n, comm, NULL));
  CHECK_NCCL(ncclRecv(out, count, ncclFloat32, (rank + n - 1) % n, comm, NULL));
  CHECK_NCCL(ncclGroupEnd());
  CHECK(out[count - 1] == (float)((rank + n - 1) % n + 1));
  free(in);
  free(out);
}
