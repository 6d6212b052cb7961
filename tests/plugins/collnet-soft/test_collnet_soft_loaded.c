/* collnet-soft as the core takes it: from the default manifest, with
 * NCCL_COLLNET_ENABLE=1, through plugin_collnet_acquire (its parameters
 * then come from the core's services, not the environment directly), and a
 * two-rank iallreduce through the table the core holds. */
#define _DEFAULT_SOURCE /* usleep, setenv */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "plugin/collnet.h"
#include "ranks.h"

#define NRANKS 2
#define COUNT 5000

typedef struct {
  volatile int arrived;
  char handles[NRANKS][NCCL_NET_HANDLE_MAXSIZE];
} shared_t;

static shared_t* sh;

static int rank_main(int rank, int n, void* arg) {
  (void)n, (void)arg;
  plugin_collnet_t* pc = NULL;
  CHECK_NCCL(plugin_collnet_acquire(&pc));
  CHECK(strcmp(pc->name, "collnet-soft") == 0);
  CHECK_EQ_INT(pc->abi, 12);
  CHECK_EQ_INT(pc->ndev, 1);
  const ncclCollNet_v12_t* cn = pc->collnet;
  void* ctx = NULL;
  CHECK_NCCL(cn->init(&ctx, 7, NULL));
  void* lc = NULL;
  CHECK_NCCL(cn->listen(ctx, 0, sh->handles[rank], &lc));
  __atomic_add_fetch(&sh->arrived, 1, __ATOMIC_ACQ_REL);
  for (int i = 0; __atomic_load_n(&sh->arrived, __ATOMIC_ACQUIRE) < NRANKS; i++) {
    CHECK_MSG(i < 20000, "the other rank never listened");
    usleep(1000);
  }
  void* handles[NRANKS] = {sh->handles[0], sh->handles[1]};
  void* cc = NULL;
  CHECK_NCCL(cn->connect(handles, NRANKS, rank, lc, &cc));
  CHECK_NCCL(cn->closeListen(lc));
  int32_t* send = malloc(COUNT * sizeof(int32_t));
  int32_t* recv = malloc(COUNT * sizeof(int32_t));
  CHECK(send && recv);
  for (int i = 0; i < COUNT; i++) send[i] = (rank + 1) * i - 3 * rank;
  void* req = NULL;
  CHECK_NCCL(cn->iallreduce(cc, send, recv, COUNT, ncclInt32, ncclSum, NULL, NULL, &req));
  int done = 0, size = 0;
  for (long polls = 0; !done; polls++) {
    CHECK_MSG(polls < 50000000, "the iallreduce never completed");
    CHECK_NCCL(cn->test(req, &done, &size));
  }
  CHECK_EQ_INT(size, COUNT * sizeof(int32_t));
  for (int i = 0; i < COUNT; i++) CHECK_MSG(recv[i] == 3 * i - 3, "rank %d element %d: %d", rank, i, recv[i]);
  free(send), free(recv);
  CHECK_NCCL(cn->closeColl(cc));
  CHECK_NCCL(cn->finalize(ctx));
  CHECK_NCCL(plugin_collnet_release(pc));
  return 0;
}

int main(void) {
  sh = ranks_shared_alloc(sizeof(*sh));
  CHECK(sh != NULL);
  memset(sh, 0, sizeof(*sh));
  CHECK_EQ_INT(ranks_run(NRANKS, rank_main, NULL, 60), 0);
  return 0;
}
