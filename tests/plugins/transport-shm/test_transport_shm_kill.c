/* A shm segment outlives no crash:
 *  - two ranks of one host connect over shm and run an AllReduce, then
 *    rank 1 is killed with SIGKILL. Once it is gone, /dev/shm holds no
 *    segment of either rank (the transport unlinks each name as soon as
 *    both sides mapped it), while rank 0's communicator still lives;
 *  - a segment left by a process killed during setup (made here: the name
 *    of a child that has exited) is removed when the next communicator
 *    sets its transports up. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "nccl.h"
#include "proc_count.h"
#include "ranks_id.h"

typedef struct {
  volatile int pid[2];
  volatile int rank0Ok;
} shared_t;

static int rank_main(int rank, int n, void* arg) {
  shared_t* s = arg;
  s->pid[rank] = (int)getpid();
  ncclComm_t comm = ranks_comm_init(rank, n);
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
  CHECK_EQ_INT(proc_count_shm_segments(s->pid[1]), 0);
  CHECK_EQ_INT(proc_count_shm_segments(s->pid[0]), 0);
  CHECK_NCCL(ncclCommAbort(comm));
  s->rank0Ok = 1;
  return 0;
}

/* A segment named as a process that died before anyone unlinked it. */
static int stale_segment(char* name, size_t size) {
  pid_t child = fork();
  CHECK(child >= 0);
  if (child == 0) _exit(0);
  CHECK(waitpid(child, NULL, 0) == child);
  snprintf(name, size, "/mkccl-shm-%lu-%d-00000000deadbeef", proc_pidns(), (int)child);
  int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
  CHECK(fd >= 0 && ftruncate(fd, 4096) == 0);
  close(fd);
  return (int)child;
}

int main(void) {
  char stale[96];
  int deadPid = stale_segment(stale, sizeof(stale));
  CHECK_EQ_INT(proc_count_shm_segments(deadPid), 1);
  shared_t* s = ranks_shared_alloc(sizeof(shared_t));
  /* Rank 1 dies by design: ranks_run reports it; rank 0's verdict decides. */
  ranks_run(2, rank_main, s, 60);
  CHECK_MSG(s->rank0Ok, "rank 0 did not finish its checks");
  CHECK_EQ_INT(proc_count_shm_segments(s->pid[0]) + proc_count_shm_segments(s->pid[1]), 0);
  int left = proc_count_shm_segments(deadPid);
  if (left) shm_unlink(stale);
  CHECK_MSG(left == 0, "%s of dead pid %d is still there", stale, deadPid);
  printf("test_transport_shm_kill: no segment left: ok\n");
  return 0;
}
