/* ncclCommWindowRegister/Deregister through the public API, 3 ranks as
 * processes: a window registered by every rank is usable (an in-place
 * AllReduce on it is right) and deregisters; ranks that disagree on the
 * size fail together with ncclInvalidUsage and a text naming the ranks;
 * unknown flags fail on every rank before anything is exchanged; a window
 * of another communicator, or a stale pointer, is refused. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "nccl.h"
#include "ranks_id.h"

#define COUNT 4096

static int rank_main(int rank, int n, void* arg) {
  (void)arg;
  ncclComm_t comm = ranks_comm_init(rank, n);
  float* buf = malloc(COUNT * sizeof(float));
  CHECK(buf);
  for (int i = 0; i < COUNT; i++) buf[i] = (float)(rank + 1);

  ncclWindow_t win = NULL;
  CHECK_NCCL(ncclCommWindowRegister(comm, buf, COUNT * sizeof(float), &win, NCCL_WIN_COLL_SYMMETRIC));
  CHECK(win != NULL);
  CHECK_NCCL(ncclAllReduce(buf, buf, COUNT, ncclFloat32, ncclSum, comm, NULL));
  for (int i = 0; i < COUNT; i++) CHECK(buf[i] == (float)(n * (n + 1) / 2));

  /* Another communicator's window is not this one's to deregister. */
  ncclComm_t other;
  CHECK_NCCL(ncclCommSplit(comm, 0, rank, &other, NULL));
  CHECK_EQ_INT(ncclCommWindowDeregister(other, win), ncclInvalidArgument);
  CHECK_STR_CONTAINS(ncclGetLastError(other), "not registered with this communicator");
  CHECK_NCCL(ncclCommWindowDeregister(comm, win));

  /* Sizes that differ: every rank refuses, none keeps a window. */
  ncclWindow_t bad = NULL;
  size_t size = (rank == 1 ? COUNT / 2 : COUNT) * sizeof(float);
  CHECK_EQ_INT(ncclCommWindowRegister(comm, buf, size, &bad, NCCL_WIN_DEFAULT), ncclInvalidUsage);
  CHECK_STR_CONTAINS(ncclGetLastError(comm), "ranks disagree");
  CHECK(bad == NULL);
  /* Unknown flags, on every rank: refused before any exchange. */
  CHECK_EQ_INT(ncclCommWindowRegister(comm, buf, COUNT * sizeof(float), &bad, 0x40), ncclInvalidArgument);
  CHECK(bad == NULL);
  /* The communicator is still usable: windows of both flags, one after the other. */
  ncclWindow_t a = NULL, b = NULL;
  CHECK_NCCL(ncclCommWindowRegister(comm, buf, COUNT * sizeof(float), &a, NCCL_WIN_DEFAULT));
  CHECK_NCCL(ncclCommWindowRegister(other, buf, COUNT * sizeof(float), &b, NCCL_WIN_COLL_SYMMETRIC));
  CHECK(a && b && a != b);
  CHECK_NCCL(ncclCommWindowDeregister(other, b));
  CHECK_NCCL(ncclCommWindowDeregister(comm, a));

  free(buf);
  CHECK_NCCL(ncclCommDestroy(other));
  CHECK_NCCL(ncclCommDestroy(comm));
  return 0;
}

int main(void) {
  CHECK_EQ_INT(ranks_run(3, rank_main, NULL, 120), 0);
  return 0;
}
