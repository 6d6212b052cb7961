/* ncclMemAlloc/ncclMemFree and ncclCommRegister/ncclCommDeregister through
 * the public API on a host communicator (MKCCL_CUDA_DISABLE=1: no CUDA
 * driver, as on a machine without a GPU), 3 ranks as processes:
 *  - ncclMemAlloc with no GPU gives host memory: zeroed, writable to
 *    its last byte, a second allocation apart from the first, each freed
 *    by ncclMemFree; ncclMemFree(NULL) succeeds (as cudaFree(NULL)), a
 *    pointer ncclMemAlloc did not give is refused, a freed one too;
 *  - a registered host buffer carries collectives: AllReduce in place on
 *    it, out of place into a second registered buffer, AllGather from it,
 *    every element checked on every rank; the same range registered twice
 *    gives two handles, each deregistered once;
 *  - handles that are not this communicator's are refused with a text:
 *    NULL, another communicator's (which still deregisters there), memory
 *    that is no handle; registering a NULL buffer, size 0 or without a
 *    handle is refused.
 * ncclMemAlloc's success path needs a GPU: tests/gpu/test_gpu_api.c. */
#define _GNU_SOURCE /* setenv */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "nccl.h"
#include "ranks_id.h"

#define COUNT 10007 /* odd, and over a few steps of the connection buffers */

static void check_mem_alloc(int rank) {
  uint8_t *p = NULL, *q = NULL;
  CHECK_NCCL(ncclMemAlloc((void**)&p, 4097));
  CHECK_NCCL(ncclMemAlloc((void**)&q, 1));
  CHECK(p && q && (q >= p + 4097 || q + 1 <= p));
  long nonzero = 0;
  for (int i = 0; i < 4097; i++) nonzero += p[i] != 0;
  CHECK_MSG(nonzero == 0 && q[0] == 0, "rank %d: ncclMemAlloc's memory is not zeroed", rank);
  for (int i = 0; i < 4097; i++) p[i] = (uint8_t)(rank * 31 + i);
  q[0] = 0x5a;
  for (int i = 0; i < 4097; i++) nonzero += p[i] != (uint8_t)(rank * 31 + i);
  CHECK_MSG(nonzero == 0 && q[0] == 0x5a, "rank %d: ncclMemAlloc's two allocations overlap", rank);
  CHECK_NCCL(ncclMemFree(p));
  CHECK_NCCL(ncclMemFree(q));
  CHECK_EQ_INT(ncclMemFree(p), ncclInvalidUsage); /* freed already */
  CHECK_NCCL(ncclMemFree(NULL));
  int64_t host = 0;
  CHECK_EQ_INT(ncclMemFree(&host), ncclInvalidUsage);
  CHECK_STR_CONTAINS(ncclGetLastError(NULL), "CUDA driver");
}

static int rank_main(int rank, int n, void* arg) {
  (void)arg;
  check_mem_alloc(rank);
  ncclComm_t comm = ranks_comm_init(rank, n);
  ncclComm_t other;
  CHECK_NCCL(ncclCommSplit(comm, 0, rank, &other, NULL));
  int32_t* a = malloc(COUNT * sizeof(int32_t));
  int32_t* b = malloc(COUNT * (size_t)n * sizeof(int32_t));
  CHECK(a && b);
  void *ha = NULL, *hb = NULL, *ha2 = NULL, *ho = NULL;
  CHECK_NCCL(ncclCommRegister(comm, a, COUNT * sizeof(int32_t), &ha));
  CHECK_NCCL(ncclCommRegister(comm, b, COUNT * (size_t)n * sizeof(int32_t), &hb));
  CHECK_NCCL(ncclCommRegister(comm, a, COUNT * sizeof(int32_t), &ha2));
  CHECK_NCCL(ncclCommRegister(other, a, COUNT * sizeof(int32_t), &ho));
  CHECK(ha && hb && ha2 && ho && ha != ha2 && ha != ho);

  /* Inputs distinct by rank and element; sums stay in int32. */
  for (int i = 0; i < COUNT; i++) a[i] = rank * 1000003 + i;
  CHECK_NCCL(ncclAllReduce(a, a, COUNT, ncclInt32, ncclSum, comm, NULL));
  long wrong = 0;
  for (int i = 0; i < COUNT; i++) wrong += a[i] != 1000003 * n * (n - 1) / 2 + n * i;
  CHECK_MSG(wrong == 0, "rank %d: in-place AllReduce on a registered buffer: %ld wrong", rank, wrong);
  for (int i = 0; i < COUNT; i++) a[i] = rank * 1000003 + i;
  for (int i = 0; i < COUNT * n; i++) b[i] = -1;
  CHECK_NCCL(ncclAllReduce(a, b, COUNT, ncclInt32, ncclMax, comm, NULL));
  for (int i = 0; i < COUNT; i++) wrong += b[i] != (n - 1) * 1000003 + i || a[i] != rank * 1000003 + i;
  for (int i = COUNT; i < COUNT * n; i++) wrong += b[i] != -1;
  CHECK_MSG(wrong == 0, "rank %d: out-of-place AllReduce between registered buffers: %ld wrong", rank, wrong);
  CHECK_NCCL(ncclAllGather(a, b, COUNT, ncclInt32, comm, NULL));
  for (int r = 0; r < n; r++)
    for (int i = 0; i < COUNT; i++) wrong += b[(size_t)r * COUNT + i] != r * 1000003 + i;
  CHECK_MSG(wrong == 0, "rank %d: AllGather from a registered buffer: %ld wrong", rank, wrong);

  /* Not this communicator's handles. */
  CHECK_EQ_INT(ncclCommDeregister(comm, NULL), ncclInvalidArgument);
  CHECK_STR_CONTAINS(ncclGetLastError(comm), "not registered with this communicator");
  CHECK_EQ_INT(ncclCommDeregister(comm, ho), ncclInvalidArgument);
  CHECK_EQ_INT(ncclCommDeregister(other, ha), ncclInvalidArgument);
  uint64_t notHandle[8] = {0};
  CHECK_EQ_INT(ncclCommDeregister(comm, notHandle), ncclInvalidArgument);
  void* none = (void*)&none;
  CHECK_EQ_INT(ncclCommRegister(comm, NULL, 64, &none), ncclInvalidArgument);
  CHECK_EQ_INT(ncclCommRegister(comm, a, 0, &none), ncclInvalidArgument);
  CHECK_EQ_INT(ncclCommRegister(comm, a, 64, NULL), ncclInvalidArgument);
  CHECK(none == (void*)&none);

  CHECK_NCCL(ncclCommDeregister(other, ho));
  CHECK_NCCL(ncclCommDeregister(comm, ha2));
  CHECK_NCCL(ncclCommDeregister(comm, hb));
  CHECK_NCCL(ncclCommDeregister(comm, ha));
  free(a);
  free(b);
  CHECK_NCCL(ncclCommDestroy(other));
  CHECK_NCCL(ncclCommDestroy(comm));
  return 0;
}

int main(void) {
  setenv("MKCCL_CUDA_DISABLE", "1", 1);
  CHECK_EQ_INT(ranks_run(3, rank_main, NULL, 120), 0);
  return 0;
}
