/* The progress loop itself, independent of the thread that runs it. */
#include <stdlib.h>

#include "base/err.h"
#include "profile/profile.h"
#include "proxy/proxy.h"
#include "proxy/proxy_internal.h"

ncclResult_t proxy_loop_create(proxy_loop_t** out) {
  proxy_loop_t* loop = calloc(1, sizeof(*loop));
  if (!loop) return MK_FAIL(ncclSystemError, "proxy: out of memory");
  op_queue_init(&loop->queue);
  *out = loop;
  return ncclSuccess;
}

void proxy_loop_destroy(proxy_loop_t* loop) { free(loop); }

void proxy_loop_post(proxy_loop_t* loop, proxy_op_t* op) { op_queue_push(&loop->queue, &op->node); }

/* A run of ops one client posted, taken into the active list: a ProxyCtrl
 * event of that client's communicator (Append, then AppendEnd with the
 * count). The thread serves every communicator, so its own idle/sleep
 * states belong to none and are not reported. */
static void* proxy_loop_ctrl_begin(proxy_client_t* c) {
  if (!c || !profile_active(c->profile, ncclProfileProxyCtrl)) return NULL;
  void* ev = profile_proxy_ctrl_start(c->profile);
  profile_proxy_ctrl_state(c->profile, ev, ncclProfilerProxyCtrlAppend, 0);
  return ev;
}

static void proxy_loop_ctrl_end(proxy_client_t* c, void* ev, int appended) {
  if (!ev) return;
  profile_proxy_ctrl_state(c->profile, ev, ncclProfilerProxyCtrlAppendEnd, appended);
  profile_event_stop(c->profile, ev);
}

/* New ops join the end of the active list, keeping post order: ops on one
 * connection must start in the order they were posted. */
static void proxy_loop_take_new(proxy_loop_t* loop) {
  op_queue_node_t* n;
  proxy_client_t* runClient = NULL;
  void* runEvent = NULL;
  int runOps = 0;
  while ((n = op_queue_pop(&loop->queue)) != NULL) {
    proxy_op_t* op = (proxy_op_t*)n;
    if (op->client != runClient || runOps == 0) {
      proxy_loop_ctrl_end(runClient, runEvent, runOps);
      runClient = op->client;
      runEvent = proxy_loop_ctrl_begin(runClient);
      runOps = 0;
    }
    runOps++;
    op->nextActive = NULL;
    if (loop->activeTail) loop->activeTail->nextActive = op;
    else loop->activeHead = op;
    loop->activeTail = op;
    __atomic_add_fetch(&loop->nActive, 1, __ATOMIC_RELEASE);
  }
  proxy_loop_ctrl_end(runClient, runEvent, runOps);
}

static void proxy_loop_finish(proxy_op_t* op) {
  proxy_client_t* c = op->client;
  if (profile_proxy_tracked(&op->args)) profile_proxy_finish(&op->args);
  proxy_op_free(op);
  if (c) atomic_fetch_add_explicit(&c->opsDone, 1, memory_order_release);
}

void proxy_client_fail(proxy_client_t* c, ncclResult_t res) {
  if (!c) return;
  int expected = 0;
  atomic_compare_exchange_strong(&c->error, &expected, (int)res);
  if (c->abortFlag) __atomic_store_n(c->abortFlag, 1, __ATOMIC_RELEASE);
}

int proxy_loop_round(proxy_loop_t* loop, int* idleOut) {
  proxy_loop_take_new(loop);
  int idle = 1;
  proxy_op_t* prev = NULL;
  proxy_op_t* op = loop->activeHead;
  while (op) {
    proxy_op_t* next = op->nextActive;
    proxy_client_t* c = op->client;
    int drop = 0;
    if (c && ((c->abortFlag && __atomic_load_n(c->abortFlag, __ATOMIC_ACQUIRE)) || atomic_load(&c->error))) {
      drop = 1; /* aborted: the op will never complete */
      atomic_store_explicit(&c->dropped, 1, memory_order_relaxed);
    } else {
      op->args.idle = 1;
      int tracked = profile_proxy_tracked(&op->args); /* profiler off: no trackers, one branch */
      if (tracked) profile_proxy_prepare(&op->args);
      ncclResult_t res = op->progress(op->tctx, &op->args);
      if (tracked) profile_proxy_observe(&op->args);
      if (res != ncclSuccess) {
        int none = -1;
        if (c && op->args.nsubs > 0) atomic_compare_exchange_strong(&c->errorPeer, &none, op->args.subs[0].peer);
        proxy_client_fail(c, res);
        if (c) atomic_store_explicit(&c->dropped, 1, memory_order_relaxed);
        drop = 1;
      } else {
        if (!op->args.idle) {
          idle = 0;
          if (c) atomic_fetch_add_explicit(&c->progress, 1, memory_order_relaxed);
        }
        drop = op->args.state == MKCCL_PROXY_OP_DONE;
      }
    }
    if (drop) {
      idle = 0;
      if (prev) prev->nextActive = next;
      else loop->activeHead = next;
      if (loop->activeTail == op) loop->activeTail = prev;
      __atomic_sub_fetch(&loop->nActive, 1, __ATOMIC_RELEASE);
      proxy_loop_finish(op);
    } else {
      prev = op;
    }
    op = next;
  }
  if (idleOut) *idleOut = idle;
  return loop->nActive;
}
