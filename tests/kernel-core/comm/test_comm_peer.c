/* Peer info and local ranks (internal view): hosts by NCCL_HOSTID, a
 * network namespace makes a different host, ranks of one process;
 * config parsing details (copied strings, environment overrides). */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "comm/comm.h"
#include "nccl.h"
#include "ranks_id.h"

static void test_host_hash(void) {
  setenv("NCCL_HOSTID", "alpha", 1);
  uint64_t a = comm_host_hash();
  CHECK(a == comm_host_hash());
  setenv("NCCL_HOSTID", "beta", 1);
  uint64_t b = comm_host_hash();
  unsetenv("NCCL_HOSTID");
  uint64_t real = comm_host_hash();
  CHECK(a != b && real != a && real != b);
  CHECK(comm_pid_hash() != real);
}

/* `test_comm_peer netns`: a child in a new network namespace is another
 * host (skipped where unshare(CLONE_NEWNET) is not permitted). */
static void test_netns_hash(void) {
  uint64_t real = comm_host_hash();
  int pipefd[2];
  CHECK(pipe(pipefd) == 0);
  pid_t pid = fork();
  if (pid == 0) {
    uint64_t h = 0;
    if (unshare(CLONE_NEWNET) == 0) h = comm_host_hash();
    (void)!write(pipefd[1], &h, sizeof(h));
    _exit(0);
  }
  uint64_t child = 0;
  CHECK(read(pipefd[0], &child, sizeof(child)) == sizeof(child));
  waitpid(pid, NULL, 0);
  close(pipefd[0]);
  close(pipefd[1]);
  if (child == 0) SKIP("unshare(CLONE_NEWNET) not permitted here");
  CHECK(child != real);
  printf("network namespace changes the host hash: ok\n");
}

/* Ranks 0..5 on hosts A B A B B C. */
static const char* host_of[6] = {"A", "B", "A", "B", "B", "C"};

static int rank_hosts(int rank, int n, void* arg) {
  (void)arg;
  setenv("NCCL_HOSTID", host_of[rank], 1);
  ncclComm_t comm = ranks_comm_init(rank, n);
  CHECK_EQ_INT(comm->nNodes, 3);
  int wantNode = host_of[rank][0] - 'A';
  CHECK_EQ_INT(comm->node, wantNode);
  int local[6], nl = 0, me = -1;
  for (int r = 0; r < n; r++)
    if (host_of[r][0] == host_of[rank][0]) {
      if (r == rank) me = nl;
      local[nl++] = r;
    }
  CHECK_EQ_INT(comm->localRanks, nl);
  CHECK_EQ_INT(comm->localRank, me);
  for (int i = 0; i < nl; i++) CHECK_EQ_INT(comm->localRankToRank[i], local[i]);
  char host[64] = "";
  gethostname(host, sizeof(host) - 1);
  for (int r = 0; r < n; r++) {
    const comm_peer_info_t* p = &comm->peerInfo[r];
    CHECK_EQ_INT(p->rank, r);
    CHECK_EQ_INT(p->cudaDev, -1);
    CHECK_EQ_INT(p->busId, -1);
    CHECK(strcmp(p->hostname, host) == 0);
    CHECK_EQ_INT(comm_peer_same_host(comm, rank, r), host_of[r][0] == host_of[rank][0]);
    CHECK_EQ_INT(comm_peer_same_process(comm, rank, r), r == rank);
    if (r != rank) CHECK(p->pid != comm->peerInfo[rank].pid);
  }
  CHECK_EQ_INT(comm->peerInfo[rank].pid, getpid());
  /* Node-local collectives see exactly the node's ranks. */
  int got[6] = {-1, -1, -1, -1, -1, -1};
  got[comm->localRank] = rank * 10;
  CHECK_NCCL(comm_local_allgather(comm, got, sizeof(int)));
  for (int i = 0; i < nl; i++) CHECK_EQ_INT(got[i], local[i] * 10);
  CHECK_NCCL(comm_local_barrier(comm));
  CHECK_NCCL(ncclCommDestroy(comm));
  return 0;
}

static void test_hosts(void) {
  CHECK(ranks_run(6, rank_hosts, NULL, 60) == 0);
  printf("hosts by NCCL_HOSTID: ok\n");
}

static void test_one_process(void) {
  ncclComm_t comms[3];
  CHECK_NCCL(ncclCommInitAll(comms, 3, NULL));
  for (int i = 0; i < 3; i++) {
    CHECK_EQ_INT(comms[i]->localRanks, 3);
    CHECK_EQ_INT(comms[i]->localRank, i);
    CHECK_EQ_INT(comms[i]->nNodes, 1);
    CHECK(comm_peer_same_process(comms[i], 0, 2));
    CHECK(comms[i]->commHash == comms[0]->commHash);
    CHECK_EQ_INT(comm_state_get(comms[i]), COMM_STATE_READY);
  }
  for (int i = 0; i < 3; i++) CHECK_NCCL(ncclCommDestroy(comms[i]));
  printf("ranks of one process: ok\n");
}

static void test_config(void) {
  bootstrap_handle_t h;
  memset(&h, 0, sizeof(h));
  h.magic = 1;
  struct ncclComm* comm;
  char name[16] = "first";
  ncclConfig_t user = NCCL_CONFIG_INITIALIZER;
  user.commName = name;
  user.splitShare = 1;
  CHECK_NCCL(comm_alloc(2, 0, &h, 1, -1, &user, NULL, "test", &comm));
  strcpy(name, "changed");
  CHECK(strcmp(comm->config.commName, "first") == 0);
  CHECK_EQ_INT(comm->config.blocking, 1);
  CHECK_EQ_INT(comm->config.splitShare, 1);
  /* A child with no config takes the parent's whole. */
  struct ncclComm* child;
  CHECK_NCCL(comm_alloc(1, 0, &h, 1, -1, NULL, &comm->config, "test", &child));
  CHECK(strcmp(child->config.commName, "first") == 0 && child->config.commName != comm->config.commName);
  CHECK_EQ_INT(child->config.splitShare, 1);
  comm_free(child);
  /* The environment overrides the config, as NCCL's does. */
  setenv("NCCL_COMM_BLOCKING", "0", 1);
  setenv("NCCL_COMM_SPLIT_SHARE_RESOURCES", "0", 1);
  CHECK_NCCL(comm_alloc(1, 0, &h, 1, -1, NULL, &comm->config, "test", &child));
  CHECK_EQ_INT(child->config.blocking, 0);
  CHECK_EQ_INT(child->config.splitShare, 0);
  comm_free(child);
  unsetenv("NCCL_COMM_BLOCKING");
  unsetenv("NCCL_COMM_SPLIT_SHARE_RESOURCES");
  comm_free(comm);
  printf("config: ok\n");
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "netns") == 0) {
    test_netns_hash();
    return 0;
  }
  test_host_hash();
  test_hosts();
  test_one_process();
  test_config();
  return 0;
}
