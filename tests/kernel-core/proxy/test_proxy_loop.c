/* The proxy loop: ops progress in post order, finish, count as done; a
 * failing progress raises the client's error and abort flag and drops its
 * ops; aborted clients' ops are dropped; the op queue keeps order across
 * threads. Then the real proxy thread runs a scripted transport. */
#include <pthread.h>
#include <unistd.h>

#include "check.h"
#include "proxy/proxy.h"

typedef struct {
  int calls;
  int failAt; /* call index that fails, -1 never */
  int order[64];
  int norder;
} fake_transport_t;

/* Each op needs `subs[0].nsteps` calls; records which op (opCount) ran. */
static ncclResult_t fake_progress(void* tctx, mkcclProxyOp_v1* op) {
  fake_transport_t* t = tctx;
  if (t->calls++ == t->failAt) return ncclRemoteError;
  if (op->state == MKCCL_PROXY_OP_READY) op->state = MKCCL_PROXY_OP_PROGRESS;
  mkcclProxySubOp_v1* sub = &op->subs[0];
  if (sub->done < sub->nsteps) {
    sub->done++;
    op->idle = 0;
  }
  if (sub->done == sub->nsteps) {
    if (t->norder < 64) t->order[t->norder++] = (int)op->opCount;
    op->state = MKCCL_PROXY_OP_DONE;
  }
  return ncclSuccess;
}

static proxy_op_t* make_op(proxy_client_t* c, fake_transport_t* t, uint64_t opCount, uint64_t nsteps) {
  proxy_op_t* op;
  CHECK_NCCL(proxy_op_alloc(&op));
  op->client = c;
  op->progress = fake_progress;
  op->tctx = t;
  op->args.opCount = opCount;
  op->args.nsubs = 1;
  op->args.subs[0].nsteps = nsteps;
  return op;
}

int main(void) {
  proxy_loop_t* loop;
  CHECK_NCCL(proxy_loop_create(&loop));
  volatile uint32_t abortFlag = 0;
  proxy_client_t client = {0};
  client.abortFlag = &abortFlag;
  fake_transport_t t = {0, -1, {0}, 0};
  for (int i = 0; i < 3; i++) {
    proxy_op_t* op = make_op(&client, &t, (uint64_t)i, (uint64_t)(3 - i));
    atomic_fetch_add(&client.opsPosted, 1);
    proxy_loop_post(loop, op);
  }
  int idle, rounds = 0;
  while (proxy_loop_round(loop, &idle) > 0) rounds++;
  CHECK_EQ_INT(t.norder, 3);
  /* Shorter ops finish first, but all started in post order. */
  CHECK_EQ_INT(t.order[0], 2);
  CHECK_EQ_INT(t.order[2], 0);
  CHECK(proxy_client_drained(&client));
  CHECK_EQ_INT(proxy_client_error(&client), ncclSuccess);
  CHECK_EQ_INT(proxy_loop_round(loop, &idle), 0);
  CHECK(idle);

  /* A transport error: first error kept, abort raised, every op dropped. */
  fake_transport_t bad = {0, 1, {0}, 0};
  for (int i = 0; i < 2; i++) {
    atomic_fetch_add(&client.opsPosted, 1);
    proxy_loop_post(loop, make_op(&client, &bad, 10 + (uint64_t)i, 5));
  }
  while (proxy_loop_round(loop, &idle) > 0) {
  }
  CHECK_EQ_INT(proxy_client_error(&client), ncclRemoteError);
  CHECK_EQ_INT(abortFlag, 1);
  CHECK(proxy_client_drained(&client));
  CHECK_EQ_INT(bad.norder, 0);
  proxy_loop_destroy(loop);

  /* The process's proxy thread with two clients. */
  volatile uint32_t abortA = 0, abortB = 0;
  proxy_client_t a, b;
  CHECK_NCCL(proxy_client_attach(&a, &abortA, 0));
  CHECK_NCCL(proxy_client_attach(&b, &abortB, 1));
  fake_transport_t ta = {0, -1, {0}, 0}, tb = {0, -1, {0}, 0};
  for (int i = 0; i < 20; i++) {
    proxy_op_post(&a, make_op(&a, &ta, (uint64_t)i, 50));
    proxy_op_post(&b, make_op(&b, &tb, (uint64_t)i, 10));
  }
  for (int i = 0; i < 2000 && !(proxy_client_drained(&a) && proxy_client_drained(&b)); i++) usleep(1000);
  CHECK(proxy_client_drained(&a));
  CHECK(proxy_client_drained(&b));
  CHECK_EQ_INT(ta.norder, 20);
  proxy_client_detach(&a);
  proxy_client_detach(&b);
  /* Attach again after the thread stopped: it starts anew. */
  CHECK_NCCL(proxy_client_attach(&a, &abortA, 0));
  proxy_op_post(&a, make_op(&a, &ta, 99, 3));
  for (int i = 0; i < 2000 && !proxy_client_drained(&a); i++) usleep(1000);
  CHECK(proxy_client_drained(&a));
  proxy_client_detach(&a);
  return 0;
}
