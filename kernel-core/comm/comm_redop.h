/* Reduction operators as the executors see them (comm_redop.c). */
#ifndef MKCCL_COMM_COMM_REDOP_H
#define MKCCL_COMM_COMM_REDOP_H

#include <stdint.h>

#include "nccl.h"

struct ncclComm;

/* Turn an ncclRedOp_t, built in or created on comm, into the executor's op
 * (fn: the API call, named in errors). A device-resident PreMulSum scalar
 * comes back as its address (*scalarPtr 1), read when the work runs. */
ncclResult_t comm_redop_resolve(struct ncclComm* comm, const char* fn, ncclRedOp_t op, ncclDataType_t type,
                                int* mkOp, uint64_t* scalar, int* scalarPtr);

/* Whether the op, applied over one rank, leaves the data as it is (a
 * one-rank collective is then a copy). */
int comm_redop_is_identity(int mkOp, ncclDataType_t type, uint64_t scalar);

#endif
