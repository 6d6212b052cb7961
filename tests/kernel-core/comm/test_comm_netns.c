/* Ranks in two network namespaces joined by a veth pair act as two hosts:
 * each picks its veth interface on its own, bootstrap crosses the link, and
 * the peer info counts two nodes of two ranks. Needs root and `ip netns`;
 * skipped (exit 77, with the reason) where they are missing. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "comm/comm.h"
#include "nccl.h"
#include "netns.h"
#include "ranks.h"

static netns_pair_t nsp;

typedef struct {
  volatile int ready;
  ncclUniqueId id;
} shared_t;

/* Ranks 0, 1 in A; 2, 3 in B. */
static int rank_main(int rank, int n, void* arg) {
  shared_t* s = arg;
  CHECK(netns_enter(&nsp, rank / 2, rank < 2 ? "mkccl-host-a" : "mkccl-host-b") == 0);
  if (rank == 0) {
    CHECK_NCCL(ncclGetUniqueId(&s->id));
    __atomic_store_n(&s->ready, 1, __ATOMIC_RELEASE);
  }
  for (int i = 0; i < 20000 && !__atomic_load_n(&s->ready, __ATOMIC_ACQUIRE); i++) usleep(1000);
  ncclComm_t comm;
  CHECK_NCCL(ncclCommInitRank(&comm, n, s->id, rank));
  CHECK_EQ_INT(comm->nNodes, 2);
  CHECK_EQ_INT(comm->node, rank / 2);
  CHECK_EQ_INT(comm->localRanks, 2);
  CHECK_EQ_INT(comm->localRank, rank % 2);
  CHECK(comm_peer_same_host(comm, 0, 1) && comm_peer_same_host(comm, 2, 3) && !comm_peer_same_host(comm, 1, 2));
  /* Bootstrap picked the veth address, not loopback. */
  const sock_addr_t* me = bootstrap_peer_addr(comm->bootstrap, rank);
  CHECK(!sock_addr_is_loopback(me));
  CHECK_NCCL(ncclCommDestroy(comm));
  return 0;
}

int main(void) {
  netns_require(&nsp);
  shared_t* s = ranks_shared_alloc(sizeof(shared_t));
  int rc = ranks_run(4, rank_main, s, 60);
  netns_pair_destroy(&nsp);
  CHECK(rc == 0);
  printf("2 namespaces x 2 ranks: 2 nodes: ok\n");
  return 0;
}
