/* Two hosts on one machine: ranks 0, 1 in one network namespace (hostname
 * mkccl-host-a), ranks 2, 3 in another (mkccl-host-b), joined by a veth
 * pair. Host hashes differ across namespaces and match inside one; every
 * ring and tree connection between ranks of one namespace goes over shm and
 * every one across over net; the collective matrix (quick) and AllReduce
 * forced onto trees give the right values across the mix.
 * Needs root and `ip netns`: skipped (exit 77) without. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "channel/channel.h"
#include "check.h"
#include "coll_cases.h"
#include "comm/comm.h"
#include "nccl.h"
#include "netns.h"
#include "ranks.h"
#include "transport/transport.h"

static netns_pair_t nsp;

typedef struct {
  volatile int ready;
  ncclUniqueId ids[2];
} shared_t;

/* Every connected collective connector of the comm uses shm within a
 * namespace and net across; returns how many were checked. */
static int check_transports(ncclComm_t comm) {
  int checked = 0;
  for (int c = 0; c < comm->dp.ch.nChannels; c++)
    for (int peer = 0; peer < comm->nRanks; peer++) {
      channel_peer_t* p = &comm->dp.ch.channels[c].peers[peer];
      connector_t* conns[2] = {&p->send[MK_CONN_COLL], &p->recv[MK_CONN_COLL]};
      for (int k = 0; k < 2; k++) {
        if (!conns[k]->connected) continue;
        const char* want = peer / 2 == comm->rank / 2 ? "shm" : "net";
        CHECK_MSG(strcmp(transport_conn_name(conns[k]), want) == 0, "rank %d %s %d: %s, expected %s", comm->rank,
                  k ? "<-" : "->", peer, transport_conn_name(conns[k]), want);
        checked++;
      }
    }
  return checked;
}

static int rank_main(int rank, int n, void* arg) {
  shared_t* s = arg;
  CHECK(netns_enter(&nsp, rank / 2, rank < 2 ? "mkccl-host-a" : "mkccl-host-b") == 0);
  if (rank == 0) {
    CHECK_NCCL(ncclGetUniqueId(&s->ids[0]));
    CHECK_NCCL(ncclGetUniqueId(&s->ids[1]));
    __atomic_store_n(&s->ready, 1, __ATOMIC_RELEASE);
  }
  for (int i = 0; i < 20000 && !__atomic_load_n(&s->ready, __ATOMIC_ACQUIRE); i++) usleep(1000);
  ncclComm_t comm, tree;
  CHECK_NCCL(ncclCommInitRank(&comm, n, s->ids[0], rank));
  CHECK_EQ_INT(comm->nNodes, 2);
  for (int r = 0; r < n; r++)
    CHECK_MSG((comm->peerInfo[r].hostHash == comm->peerInfo[rank].hostHash) == (r / 2 == rank / 2),
              "rank %d: host hash of rank %d", rank, r);
  /* The ring: one shm hop and one net hop out of each namespace. */
  CHECK_EQ_INT(check_transports(comm), 2 * comm->dp.ch.nChannels);

  long wrong = coll_matrix_run(comm, rank, n, 1, &coll_mem_host, NULL);
  CHECK_MSG(wrong == 0, "rank %d: %ld wrong elements", rank, wrong);

  /* Trees: their connections follow the same rule. */
  setenv("NCCL_ALGO", "allreduce:tree", 1);
  CHECK_NCCL(ncclCommInitRank(&tree, n, s->ids[1], rank));
  unsetenv("NCCL_ALGO");
  for (int type = 0; type < ncclNumTypes; type++)
    for (int op = 0; op < C_OP_N; op++)
      for (int inPlace = 0; inPlace < 2; inPlace++) {
        coll_case_t c = {C_ALLREDUCE, type, op, 0, inPlace, type == ncclFloat32 ? 300007 : 77, 0};
        coll_run_t run;
        coll_case_prepare(&run, &c, tree, rank, n, &coll_mem_host, NULL);
        CHECK_NCCL(coll_case_launch(&run));
        wrong += coll_case_check(&run);
      }
  CHECK_MSG(wrong == 0, "rank %d: %ld wrong elements on trees", rank, wrong);
  CHECK(tree->dp.ch.treesConnected && tree->dp.algoCount[MK_ALGO_TREE] > 0 && tree->dp.algoCount[MK_ALGO_RING] == 0);
  CHECK(check_transports(tree) > 2 * tree->dp.ch.nChannels); /* the tree added connections */
  CHECK_NCCL(ncclCommDestroy(tree));
  CHECK_NCCL(ncclCommDestroy(comm));
  return 0;
}

int main(void) {
  netns_require(&nsp);
  shared_t* s = ranks_shared_alloc(sizeof(shared_t));
  int rc = ranks_run(4, rank_main, s, 240);
  netns_pair_destroy(&nsp);
  CHECK(rc == 0);
  printf("2 namespaces x 2 ranks: shm inside, net across, collectives and trees right: ok\n");
  return 0;
}
