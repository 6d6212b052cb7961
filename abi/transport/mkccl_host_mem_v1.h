/* Shareable host memory, version 1: what ncclMemAlloc gives in a process
 * with no GPU (no CUDA driver or no device), and how a transport in another
 * process of the host maps it.
 *
 * Each allocation is one memfd whose name starts with MKCCL_HOST_MEM_NAME,
 * mapped whole (MAP_SHARED) at the address the caller gets. The file is
 * the caller's bytes rounded up to pages, then one page that starts with a
 * mkcclHostMemTail_v1. The allocating process keeps the descriptor open
 * until ncclMemFree, so a peer allowed to read /proc/<pid>/maps and
 * /proc/<pid>/fd finds the mapping holding an address there, opens the
 * same file and maps it.
 *
 * ncclMemFree zeroes the tail's id before it unmaps the file: a peer that
 * kept a mapping checks the id before each copy and drops the mapping when
 * it has changed. Frozen: fields are only appended. */
#ifndef MKCCL_ABI_HOST_MEM_V1_H
#define MKCCL_ABI_HOST_MEM_V1_H

#include <stdint.h>

#define MKCCL_HOST_MEM_NAME "mkccl-host-mem"
#define MKCCL_HOST_MEM_MAGIC 0x6d6b686d656d3031ULL /* "mkhmem01" */

typedef struct {
  uint64_t magic;       /* MKCCL_HOST_MEM_MAGIC */
  volatile uint64_t id; /* nonzero, unique in its process while allocated; 0 once freed */
  uint64_t bytes;       /* bytes before the tail page (the caller's size rounded up to pages) */
} mkcclHostMemTail_v1;

#endif
