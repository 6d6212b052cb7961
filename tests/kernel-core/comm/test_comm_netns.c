/* Ranks in two network namespaces joined by a veth pair act as two hosts:
 * each picks its veth interface on its own, bootstrap crosses the link, and
 * the peer info counts two nodes of two ranks. Needs root and `ip netns`;
 * skipped (with a message) where they are missing. */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "comm/comm.h"
#include "nccl.h"
#include "ranks.h"

static char nsA[32], nsB[32], vA[16], vB[16];

static int sh(const char* fmt, const char* a, const char* b) {
  char cmd[512];
  snprintf(cmd, sizeof(cmd), fmt, a, b);
  return system(cmd);
}

static int netns_setup(void) {
  int pid = (int)getpid();
  snprintf(nsA, sizeof(nsA), "mkccl_a_%d", pid);
  snprintf(nsB, sizeof(nsB), "mkccl_b_%d", pid);
  snprintf(vA, sizeof(vA), "mka%d", pid);
  snprintf(vB, sizeof(vB), "mkb%d", pid);
  if (sh("ip netns add %s 2>/dev/null && ip netns add %s 2>/dev/null", nsA, nsB) != 0) return -1;
  int rc = sh("ip link add %s type veth peer name %s", vA, vB);
  rc |= sh("ip link set %s netns %s", vA, nsA);
  rc |= sh("ip link set %s netns %s", vB, nsB);
  rc |= sh("ip -n %s addr add 10.77.0.1/24 dev %s", nsA, vA);
  rc |= sh("ip -n %s addr add 10.77.0.2/24 dev %s", nsB, vB);
  rc |= sh("ip -n %s link set %s up", nsA, vA);
  rc |= sh("ip -n %s link set %s up", nsB, vB);
  rc |= sh("ip -n %s link set lo up%s", nsA, "");
  rc |= sh("ip -n %s link set lo up%s", nsB, "");
  return rc == 0 ? 0 : -1;
}

static void netns_cleanup(void) {
  sh("ip netns del %s 2>/dev/null; ip netns del %s 2>/dev/null", nsA, nsB);
}

typedef struct {
  volatile int ready;
  ncclUniqueId id;
} shared_t;

/* Ranks 0, 1 in A; 2, 3 in B. */
static int rank_main(int rank, int n, void* arg) {
  shared_t* s = arg;
  char path[128];
  snprintf(path, sizeof(path), "/var/run/netns/%s", rank < 2 ? nsA : nsB);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  CHECK(fd >= 0 && setns(fd, CLONE_NEWNET) == 0);
  close(fd);
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
  if (geteuid() != 0 || netns_setup() != 0) {
    netns_cleanup();
    printf("skip: cannot create network namespaces with a veth pair here (needs root and ip netns)\n");
    return 0;
  }
  shared_t* s = ranks_shared_alloc(sizeof(shared_t));
  int rc = ranks_run(4, rank_main, s, 60);
  netns_cleanup();
  CHECK(rc == 0);
  printf("2 namespaces x 2 ranks: 2 nodes: ok\n");
  return 0;
}
