/* Operations queued on a communicator until the group ends: what the API
 * calls record and the planner turns into work (plan/plan.h). */
#ifndef MKCCL_GROUP_TASK_H
#define MKCCL_GROUP_TASK_H

#include <stddef.h>
#include <stdint.h>

#include "nccl.h"

typedef enum { TASK_COLL = 0, TASK_SEND, TASK_RECV } task_kind_t;

/* How a collective runs: the tuner's answer (plan/plan_tune.h). */
typedef struct {
  int algo;           /* NCCL_ALGO_* (== MK_ALGO_*) */
  int proto;          /* NCCL_PROTO_* (== MK_PROTO_*) */
  int nChannels;      /* in [1, the communicator's channels] */
  int64_t chunkBytes; /* in [one aligned element group, what the algorithm's chunk holds], a multiple of it */
  float predictedUs;  /* the model's time for the choice, -1 if it has none */
} task_choice_t;

typedef struct task {
  struct task* next;
  task_kind_t kind;
  int coll;               /* MK_COLL_* for TASK_COLL */
  const void* sendbuff;
  void* recvbuff;
  size_t count;           /* elements, as the API defines it per call */
  ncclDataType_t type;
  int op;                 /* MK_OP_* */
  uint64_t scalar;        /* operand of PREMULSUM / SUMPOSTDIV, or its address (scalarPtr) */
  int scalarPtr;          /* scalar is the address of an ncclScalarDevice operand, read when the work runs */
  int opUniform;          /* the op and its operand are the same on every rank (NCCL's own ops; not a user PreMulSum) */
  int root;               /* rooted collectives */
  int peer;               /* send/recv */
  void* stream;           /* cudaStream_t of the call (GPU communicators) */
  void* profApi;          /* its CollApi/P2pApi profiler event, parent of its Coll/P2p (NULL: none) */
  void* ownedBuf;         /* freed with the task: an in-place host AlltoAll's copy of its input (coll_api.c) */
  int tuned;              /* choice holds the tuner's answer (asked once per task) */
  task_choice_t choice;
} task_t;

typedef struct {
  task_t* head;
  task_t* tail;
  int n;
  int nP2p; /* sends and receives among the n */
} task_list_t;

#endif
