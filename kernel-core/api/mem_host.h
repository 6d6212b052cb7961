/* ncclMemAlloc where there is no GPU: shareable host memory (one memfd per
 * allocation, abi/transport/mkccl_host_mem_v1.h), which a transport in
 * another process of the host may map and copy from in place. */
#ifndef MKCCL_API_MEM_HOST_H
#define MKCCL_API_MEM_HOST_H

#include <stddef.h>

#include "nccl.h"

/* `size` bytes, zeroed; *ptr set only on success. */
ncclResult_t mem_host_alloc(size_t size, void** ptr);
/* 1 when ptr is an allocation of mem_host_alloc (then freed, *res says how
 * that went), else 0 (nothing done). */
int mem_host_free(void* ptr, ncclResult_t* res);
/* 1 when [ptr, ptr + bytes) lies inside one allocation of mem_host_alloc. */
int mem_host_covers(const void* ptr, size_t bytes);

#endif
