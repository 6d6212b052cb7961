/* A communicator's buffer registrations (ncclCommRegister): the ranges a
 * rank promised to keep while registered, which the planner may hand to a
 * transport to read in place (PTR mode). */
#ifndef MKCCL_API_MEM_REG_H
#define MKCCL_API_MEM_REG_H

#include <stddef.h>
#include <stdint.h>

#include "nccl.h"

struct ncclComm;

typedef struct mem_reg {
  struct mem_reg* next;
  uint64_t magic;
  struct ncclComm* comm;
  void* buff;
  size_t size;
} mem_reg_t;

/* Record [buff, buff + size) on comm; *out is the user's handle. */
ncclResult_t mem_reg_add(struct ncclComm* comm, void* buff, size_t size, mem_reg_t** out);
/* Forget a handle of comm (ncclInvalidArgument: not one of its); *base and
 * *size: the range it held. */
ncclResult_t mem_reg_remove(struct ncclComm* comm, void* handle, void** base, size_t* size);
/* Every registration left on comm freed (the comm is going away). */
void mem_reg_drop_all(struct ncclComm* comm);
/* 1 when [ptr, ptr + bytes) lies inside one registration or one window
 * (ncclCommWindowRegister) of comm, else 0. */
int mem_reg_covers(const struct ncclComm* comm, const void* ptr, size_t bytes);
/* The registration or window of comm holding [ptr, ptr + bytes): its
 * start and length; ncclInvalidArgument (no last-error text: callers fall
 * back) when none does. */
ncclResult_t mem_reg_find(const struct ncclComm* comm, const void* ptr, size_t bytes, void** base, size_t* size);

#endif
