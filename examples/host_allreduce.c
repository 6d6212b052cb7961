/* The smallest mkccl program: every rank sums a vector in host memory.
 *
 *   build/bin/mkccl-run -n 4 -- build/bin/example_host_allreduce
 *
 * It is plain NCCL code: the only mkccl-specific thing is that the buffers
 * are ordinary host memory and the stream is NULL (the call returns when
 * the result is there). mkccl-run gives each rank MKCCL_RUN_RANK,
 * MKCCL_RUN_NRANKS and NCCL_COMM_ID, so ncclGetUniqueId returns the same id
 * on every rank and no side channel (MPI) is needed. */
#include <stdio.h>
#include <stdlib.h>

#include "nccl.h"

#define COUNT 1000

int main(void) {
  const char* r = getenv("MKCCL_RUN_RANK");
  const char* n = getenv("MKCCL_RUN_NRANKS");
  if (!r || !n) {
    fprintf(stderr, "run me under mkccl-run -n N\n");
    return 2;
  }
  int rank = atoi(r), nranks = atoi(n);
  ncclUniqueId id;
  ncclComm_t comm;
  if (ncclGetUniqueId(&id) != ncclSuccess || ncclCommInitRank(&comm, nranks, id, rank) != ncclSuccess) {
    fprintf(stderr, "rank %d: init failed: %s\n", rank, ncclGetLastError(NULL));
    return 1;
  }
  float* data = malloc(COUNT * sizeof(float));
  for (int i = 0; i < COUNT; i++) data[i] = (float)(rank + i);
  ncclResult_t res = ncclAllReduce(data, data, COUNT, ncclFloat, ncclSum, comm, NULL);
  int wrong = 0;
  for (int i = 0; res == ncclSuccess && i < COUNT; i++) {
    /* sum over ranks of (rank + i) */
    float expect = (float)(nranks * (nranks - 1) / 2 + nranks * i);
    if (data[i] != expect) wrong++;
  }
  if (res != ncclSuccess) fprintf(stderr, "rank %d: allreduce failed: %s\n", rank, ncclGetLastError(comm));
  else printf("rank %d of %d: %s\n", rank, nranks, wrong ? "WRONG" : "sum correct");
  free(data);
  ncclCommDestroy(comm);
  return res != ncclSuccess || wrong;
}
