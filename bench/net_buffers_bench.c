/* mkccl-net-buffers-bench N: N host ranks (forked processes) make one
 * communicator, run one group in which every rank sends 4 bytes to and
 * receives 4 bytes from every other rank (so every p2p connection is made),
 * and destroy it. Run with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT: each rank
 * logs the staging its transports hold ("transport-net holds N bytes ...").
 * The ranks meet through NCCL_COMM_ID (bench/net_shared_buffers.sh sets it):
 * each makes its own unique id from it, so no bootstrap root runs before
 * the fork. Exit status 0 when every rank succeeded and checked its data. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nccl.h"

#define TRY(call)                                                                               \
  do {                                                                                          \
    ncclResult_t r_ = (call);                                                                   \
    if (r_ != ncclSuccess) {                                                                    \
      fprintf(stderr, "rank %d: %s failed: %s\n", rank, #call, ncclGetLastError(NULL));         \
      return 1;                                                                                 \
    }                                                                                           \
  } while (0)

static int rank_main(int rank, int n) {
  ncclUniqueId id;
  ncclComm_t comm;
  TRY(ncclGetUniqueId(&id));
  TRY(ncclCommInitRank(&comm, n, id, rank));
  int* out = malloc(sizeof(int) * (size_t)n);
  int* in = malloc(sizeof(int) * (size_t)n);
  if (!out || !in) return 1;
  TRY(ncclGroupStart());
  for (int p = 0; p < n; p++) {
    if (p == rank) continue;
    out[p] = rank * 1000 + p;
    in[p] = -1;
    TRY(ncclSend(&out[p], 1, ncclInt32, p, comm, NULL));
    TRY(ncclRecv(&in[p], 1, ncclInt32, p, comm, NULL));
  }
  TRY(ncclGroupEnd());
  int bad = 0;
  for (int p = 0; p < n; p++)
    if (p != rank && in[p] != p * 1000 + rank) bad++;
  TRY(ncclCommDestroy(comm));
  free(out);
  free(in);
  if (bad) fprintf(stderr, "rank %d: %d wrong values\n", rank, bad);
  return bad != 0;
}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 2;
  if (n < 2 || !getenv("NCCL_COMM_ID")) {
    fprintf(stderr, "usage: NCCL_COMM_ID=host:port mkccl-net-buffers-bench N (N >= 2)\n");
    return 2;
  }
  for (int r = 0; r < n; r++) {
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) _exit(rank_main(r, n));
  }
  int failed = 0, status;
  while (wait(&status) > 0) failed += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  return failed != 0;
}
