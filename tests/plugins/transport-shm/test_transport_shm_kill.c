/* A shm segment outlives no crash: two ranks of one host connect over shm
 * and run an AllReduce, then rank 1 is killed with SIGKILL. Once it is gone,
 * /dev/shm holds no segment of either rank (the transport unlinks each name
 * as soon as both sides mapped it, so a killed process leaves nothing),
 * while rank 0's communicator still lives; rank 0 then aborts it. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "nccl.h"
#include "ranks.h"

typedef struct {
  ncclUniqueId id;
  volatile int pid[2];
  volatile int rank0Ok;
} shared_t;

/* Segments of process pid in /dev/shm (the transport names them
 * mkccl-shm-<pid>-<random>). */
static int segments_of(int pid) {
  char prefix[64];
  snprintf(prefix, sizeof(prefix), "mkccl-shm-%d-", pid);
  DIR* d = opendir("/dev/shm");
  CHECK(d != NULL);
  int n = 0;
  for (struct dirent* e; (e = readdir(d)) != NULL;) n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
  closedir(d);
  return n;
}

static int rank_main(int rank, int n, void* arg) {
  shared_t* s = arg;
  s->pid[rank] = (int)getpid();
  ncclComm_t comm;
  CHECK_NCCL(ncclCommInitRank(&comm, n, s->id, rank));
  int32_t one = 1, sum = 0;
  CHECK_NCCL(ncclAllReduce(&one, &sum, 1, ncclInt32, ncclSum, comm, NULL));
  CHECK_EQ_INT(sum, 2);
  if (rank == 1) raise(SIGKILL);
  /* Rank 1 is gone once ranks_run has reaped it. */
  int i = 0;
  while (kill(s->pid[1], 0) == 0 || errno != ESRCH) {
    CHECK_MSG(++i < 10000, "rank 1 (pid %d) still alive", s->pid[1]);
    usleep(1000);
  }
  CHECK_EQ_INT(segments_of(s->pid[1]), 0);
  CHECK_EQ_INT(segments_of(s->pid[0]), 0);
  CHECK_NCCL(ncclCommAbort(comm));
  s->rank0Ok = 1;
  return 0;
}

int main(void) {
  shared_t* s = ranks_shared_alloc(sizeof(shared_t));
  CHECK_NCCL(ncclGetUniqueId(&s->id));
  /* Rank 1 dies by design: ranks_run reports it; rank 0's verdict decides. */
  ranks_run(2, rank_main, s, 60);
  CHECK_MSG(s->rank0Ok, "rank 0 did not finish its checks");
  CHECK_EQ_INT(segments_of(s->pid[0]) + segments_of(s->pid[1]), 0);
  printf("test_transport_shm_kill: no segment left: ok\n");
  return 0;
}
