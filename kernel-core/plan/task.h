/* Operations queued on a communicator until the group ends. */
#ifndef MKCCL_PLAN_TASK_H
#define MKCCL_PLAN_TASK_H

#include <stddef.h>
#include <stdint.h>

#include "device/common/work.h"
#include "nccl.h"

typedef enum { TASK_COLL = 0, TASK_SEND, TASK_RECV } task_kind_t;

/* How a collective runs: the tuner's answer (plan/plan_tune.h). */
typedef struct {
  int algo;           /* NCCL_ALGO_* (== MK_ALGO_*) */
  int proto;          /* NCCL_PROTO_* (== MK_PROTO_*) */
  int nChannels;      /* in [1, the communicator's channels] */
  int64_t chunkBytes; /* in [one aligned element group, what the algorithm's chunk holds], a multiple of it */
  float predictedUs;  /* the model's time for the choice, -1 if it has none */
} plan_choice_t;

typedef struct plan_task {
  struct plan_task* next;
  task_kind_t kind;
  int coll;               /* MK_COLL_* for TASK_COLL */
  const void* sendbuff;
  void* recvbuff;
  size_t count;           /* elements, as the API defines it per call */
  ncclDataType_t type;
  int op;                 /* MK_OP_* */
  uint64_t scalar;        /* operand of PREMULSUM / SUMPOSTDIV, or its address (scalarPtr) */
  int scalarPtr;          /* scalar is the address of an ncclScalarDevice operand, read when the work runs */
  int root;               /* rooted collectives */
  int peer;               /* send/recv */
  void* stream;           /* cudaStream_t of the call (GPU communicators) */
  void* profApi;          /* its CollApi/P2pApi profiler event, parent of its Coll/P2p (NULL: none) */
  void* ownedBuf;         /* freed with the task: an in-place host AlltoAll's copy of its input (coll_api.c) */
  int tuned;              /* choice holds the tuner's answer (asked once per task) */
  plan_choice_t choice;
} plan_task_t;

typedef struct {
  plan_task_t* head;
  plan_task_t* tail;
  int n;
  int nP2p; /* sends and receives among the n */
} plan_task_list_t;

struct ncclComm;

/* The cost model's time for comm's queued collectives, run one after the
 * other (point-to-point has no model: 0). */
ncclResult_t plan_simulate(struct ncclComm* comm, const plan_task_list_t* tasks, float* us);

/* Plan and run everything queued on comm: host collectives complete here,
 * GPU ones are queued on the stream. */
ncclResult_t plan_launch(struct ncclComm* comm, plan_task_list_t* tasks);

/* A collective task's work item, from its tuned choice (plan_host.c):
 * counts the operation (opCount, algoCount). */
void plan_coll_work(struct ncclComm* comm, const plan_task_t* t, mk_work_t* w);
/* What a failed run returns: the proxy's error if it has one (a network
 * peer failed), else res; the last-error text says which. */
ncclResult_t plan_exec_failed(struct ncclComm* comm, ncclResult_t res);

/* A collective called outside any group (the caller checks) on a host
 * communicator, which FLAT runs over connections made already that need no
 * proxy, with no profiler: run here at once (plan_alone.c). *ran is 0 where that does not
 * hold, and the caller takes the general path. */
ncclResult_t plan_alone_run(struct ncclComm* comm, plan_task_t* t, int* ran);

#endif
