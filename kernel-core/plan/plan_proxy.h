/* Proxy ops of one launch: subs for every connector that needs a proxy,
 * grouped per work item and transport side, posted in creation order (ops
 * on one connector must start in the order the executor runs them). */
#ifndef MKCCL_PLAN_PROXY_H
#define MKCCL_PLAN_PROXY_H

#include "channel/channel.h"
#include "device/common/work.h"
#include "group/task.h"
#include "proxy/proxy.h"

struct ncclComm;

#define PLAN_PROXY_MAX_OPS 256

typedef struct {
  struct ncclComm* comm;
  proxy_op_t* ops[PLAN_PROXY_MAX_OPS];
  int nOps;
  void* profGroup; /* the launch's profiler Group event, parent of its Coll/P2p events (NULL: none) */
  int captured;    /* ops of a captured launch: replayed later, outside any Coll/P2p event, so untracked */
} plan_proxy_t;

void plan_proxy_init(plan_proxy_t* pp, struct ncclComm* comm);
/* A sub of `steps` steps on `conn` for work `w` (nothing when the connector
 * has no proxy or steps is 0). */
ncclResult_t plan_proxy_add(plan_proxy_t* pp, connector_t* conn, uint64_t steps, const mk_work_t* w, int chunkSteps,
                            int sliceSteps);
/* The same, for a p2p receive landing in a registered buffer: the sub
 * carries its part of that buffer (userBuff, nbytes), which a transport
 * may receive into in place. */
ncclResult_t plan_proxy_add_user(plan_proxy_t* pp, connector_t* conn, uint64_t steps, const mk_work_t* w,
                                 void* userBuff, int64_t nbytes);
/* Hand every op to the proxy thread. */
void plan_proxy_post(plan_proxy_t* pp);
/* Free ops not posted (after an error). */
void plan_proxy_discard(plan_proxy_t* pp);

/* A CollNet AllReduce item's subs (plan_collnet.c). */
ncclResult_t plan_collnet_proxy(struct ncclComm* comm, const mk_work_t* w, plan_proxy_t* pp);

/* Point-to-point: connect what the queued sends/recvs need, then plan them
 * as rounds (plan_p2p.c). */
ncclResult_t plan_p2p_connect(struct ncclComm* comm, task_list_t* tasks);
/* 1 when every connection the queued sends/recvs use is up already. */
int plan_p2p_connected(struct ncclComm* comm, const task_list_t* tasks);
/* Whether every connection comm's queued tasks need is made, so their
 * launch waits on no peer: point-to-point, and the tree (or FLAT) the
 * tuner picks for a collective (the tasks are tuned here, once). */
int plan_connected(struct ncclComm* comm, task_list_t* tasks);
ncclResult_t plan_p2p(struct ncclComm* comm, task_list_t* tasks, mk_work_t* works, int* nWorks,
                      plan_proxy_t* pp);

#endif
