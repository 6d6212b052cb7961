/* Symmetric kernels (MK_ALGO_SYMM): which GPU collectives run on them and
 * what their items carry (plan_symm.c). A collective qualifies when every
 * buffer it touches lies in a window registered with
 * NCCL_WIN_COLL_SYMMETRIC on a communicator whose ranks form one LSA team;
 * everything else runs as before. */
#ifndef MKCCL_PLAN_SYMM_H
#define MKCCL_PLAN_SYMM_H

#include <stddef.h>
#include <stdint.h>

#include "api/window.h"
#include "device/common/work.h"
#include "group/task.h"

struct ncclComm;

/* Everything the choice depends on, gathered from the task, the
 * communicator and its windows (plan_symm_choose), or written by a test. */
typedef struct plan_symm_query {
  int coll, type, op, opUniform, scalarPtr;
  size_t count;
  int rank, nRanks;
  int maxChannels;       /* the communicator's channels */
  int tuner;             /* a tuner plugin decides */
  int64_t maxBytes;      /* MKCCL_SYMM_MAX_BYTES (0: off, also under NCCL_ALGO/NCCL_PROTO) */
  int64_t oneShotMaxBytes;
  int64_t channelBytes;
  const void* sendbuff;
  const void* recvbuff;
  int haveSend, haveRecv, haveRes; /* the windows the buffers lie in, the barrier flags' */
  api_window_span_t send, recv, res;
} plan_symm_query_t;

typedef struct plan_symm {
  int oneShot;   /* AllReduce: one shot, else two */
  int nChannels;
  size_t bytes;  /* NCCL's nBytes */
  int64_t sendDelta, recvDelta; /* LSA rank 0's copy of a buffer minus the buffer */
  uint64_t sendStride, recvStride;
  const char* res;
  uint64_t resStride;
} plan_symm_t;

/* 1 with *out set when q runs on the symmetric kernels; 0 with *why the
 * first reason it does not. Every input is the same on every rank where the
 * user registered the windows alike, so every rank decides alike. */
int plan_symm_pick(const plan_symm_query_t* q, plan_symm_t* out, const char** why);

/* The planner's question for task t on comm: 1 with *choice (algorithm
 * SYMM) when it runs symmetric, logged at INFO (TUNING); 0 otherwise. */
int plan_symm_choose(struct ncclComm* comm, const task_t* t, task_choice_t* choice);

/* The symmetric fields of t's item w (after plan_coll_work). */
ncclResult_t plan_symm_work(struct ncclComm* comm, const task_t* t, mk_work_t* w);

#endif
