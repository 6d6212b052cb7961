/* Proxy ops of a captured launch: taken as templates, then every replay
 * posts fresh copies in the planned order; the templates themselves are
 * never progressed, so a tenth replay starts from the same state as the
 * first. Runs with the process's real proxy thread and a scripted
 * transport (no GPU: the host node's body is called directly). */
#include <unistd.h>

#include "check.h"
#include "proxy/proxy_replay.h"

typedef struct {
  int order[64];
  int norder;
} script_t;

/* Two calls per step; records which op (opCount) finished. */
static ncclResult_t script_progress(void* tctx, mkcclProxyOp_v1* op) {
  script_t* s = tctx;
  mkcclProxySubOp_v1* sub = &op->subs[0];
  CHECK(op->state == MKCCL_PROXY_OP_READY || op->state == MKCCL_PROXY_OP_PROGRESS);
  op->state = MKCCL_PROXY_OP_PROGRESS;
  if (sub->posted < sub->nsteps) sub->posted++;
  else if (sub->done < sub->nsteps) sub->done++;
  op->idle = 0;
  if (sub->done == sub->nsteps) {
    if (s->norder < 64) s->order[s->norder++] = (int)op->opCount;
    op->state = MKCCL_PROXY_OP_DONE;
  }
  return ncclSuccess;
}

int main(void) {
  volatile uint32_t abortFlag = 0;
  proxy_client_t client;
  CHECK_NCCL(proxy_client_attach(&client, &abortFlag, 0));
  script_t s = {{0}, 0};
  proxy_op_t* ops[3];
  for (int i = 0; i < 3; i++) {
    proxy_op_t* op;
    CHECK_NCCL(proxy_op_alloc(&op));
    op->progress = script_progress;
    op->tctx = &s;
    op->args.state = MKCCL_PROXY_OP_READY;
    op->args.opCount = (uint64_t)(7 + i);
    op->args.nsubs = 1;
    op->args.subs[0].nsteps = 4;
    ops[i] = op;
  }
  proxy_replay_t* g = NULL;
  CHECK_NCCL(proxy_replay_take(&client, ops, 3, &g));
  CHECK(g != NULL);
  proxy_replay_t* list = NULL;
  proxy_replay_keep(&list, g);
  CHECK(list == g);
  /* Nothing is posted by taking: the proxy has seen no op. */
  usleep(20000);
  CHECK_EQ_INT(s.norder, 0);
  CHECK_EQ_INT((int)atomic_load(&client.opsPosted), 0);
  const int replays = 10;
  for (int r = 0; r < replays; r++) {
    proxy_replay_post(g);
    for (int i = 0; i < 5000 && !proxy_client_drained(&client); i++) usleep(1000);
    CHECK(proxy_client_drained(&client));
    CHECK_EQ_INT(s.norder, 3 * (r + 1));
  }
  CHECK_EQ_INT((int)atomic_load(&client.opsDone), 3 * replays);
  /* Each replay ran the three ops in the planned order. */
  for (int k = 0; k < 3 * replays; k++) CHECK_EQ_INT(s.order[k], 7 + k % 3);
  CHECK_EQ_INT(proxy_client_error(&client), ncclSuccess);
  CHECK_EQ_INT(abortFlag, 0);
  proxy_client_detach(&client);
  proxy_replay_free_all(&list);
  CHECK(list == NULL);
  return 0;
}
