/* Proxy lanes: connections that allow it get their channel's lane
 * (MKCCL_PROXY_LANES of them), others lane 0; ops of two lanes progress at
 * the same time, one on the proxy thread and one on a helping caller, where
 * one lane would run them one after the other. Run with MKCCL_PROXY_LANES
 * unset (8), 0 and 3. */
#include <stdlib.h>
#include <time.h>

#include "check.h"
#include "proc_count.h"
#include "proxy/proxy.h"

static _Atomic int inside[2];
static _Atomic int met;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* Op i waits (up to 2 s) inside its progress call for the other op to be
 * inside its own: they meet only if two threads run them at once. */
static ncclResult_t meet_progress(void* tctx, mkcclProxyOp_v1* op) {
  int i = (int)(intptr_t)tctx;
  atomic_store(&inside[i], 1);
  double end = now_s() + 2.0;
  while (!atomic_load(&inside[1 - i]) && now_s() < end) {
  }
  if (atomic_load(&inside[1 - i])) atomic_store(&met, 1);
  atomic_store(&inside[i], 0); /* gone: a later call must not meet it */
  op->idle = 0;
  op->state = MKCCL_PROXY_OP_DONE;
  return ncclSuccess;
}

int main(void) {
  const char* env = getenv("MKCCL_PROXY_LANES");
  int lanes = env ? atoi(env) : 8;
  /* The mapping: lane 0 unless the connection allows a lane of its own. */
  for (int c = 0; c < 20; c++) {
    CHECK_EQ_INT(proxy_lane_for(c, 0), 0);
    CHECK_EQ_INT(proxy_lane_for(c, 1), lanes > 0 ? 1 + c % lanes : 0);
  }
  CHECK_EQ_INT(proxy_lane_for(-1, 1), 0);

  volatile uint32_t abortFlag = 0;
  proxy_client_t client;
  CHECK_NCCL(proxy_client_attach(&client, &abortFlag, 0));
  CHECK_EQ_INT(proc_wait_threads_named("mkccl-proxy", 10.0), 1); /* named for top, ps -L and gdb */
  int lane[2] = {proxy_lane_for(0, 1), proxy_lane_for(1, 1)};
  for (int i = 0; i < 2; i++) {
    proxy_op_t* op;
    CHECK_NCCL(proxy_op_alloc(&op));
    op->progress = meet_progress;
    op->tctx = (void*)(intptr_t)i;
    op->lane = lane[i];
    op->args.nsubs = 1;
    op->args.subs[0].nsteps = 1;
    proxy_op_post(&client, op);
  }
  /* Help both lanes until both ops are done: whichever lane the proxy
   * thread is not in, this thread can enter. */
  double end = now_s() + 20.0;
  while (!proxy_client_drained(&client) && now_s() < end) {
    proxy_progress_help(lane[0]);
    proxy_progress_help(lane[1]);
  }
  CHECK(proxy_client_drained(&client));
  if (lane[0] != lane[1]) CHECK(atomic_load(&met));
  else CHECK(!atomic_load(&met)); /* one lane: one op at a time */
  CHECK_EQ_INT(proxy_progress_help(PROXY_LANES), 0); /* no such lane */
  proxy_client_detach(&client);
  CHECK_NCCL(proxy_client_error(&client));
  return 0;
}
