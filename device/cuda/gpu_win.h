/* Windows of NCCL's device API on the GPU executor (exec.h's win_* ops).
 *
 * NVIDIA's inline device code finds peer i's copy of a window at
 * lsaFlatBase + i * stride4G * 4 GiB, so every LSA peer's allocation must
 * sit at a stride this rank chooses. CUDA IPC handles cannot give that
 * (cuIpcOpenMemHandle picks the address), so windows use the driver's VMM:
 * each rank exports its allocation as a POSIX file descriptor, the
 * descriptors travel over Unix sockets (abstract names, one host), and
 * each rank maps every peer's allocation into one reserved range. That
 * works alike for peers on other GPUs of the host and for several
 * processes on one GPU (MKCCL_ALLOW_SAME_GPU), and it needs the buffer to
 * be a VMM allocation: ncclMemAlloc makes those. */
#ifndef MKCCL_CUDA_GPU_WIN_H
#define MKCCL_CUDA_GPU_WIN_H

#include <stdint.h>

#include "api/device_api.h"
#include "cuda/vmm.h"
#include "device/cuda/gpu_exec_internal.h"
#include "exec/exec.h"

struct ncclComm;

/* One window's mappings in this rank. */
typedef struct gpu_win {
  cu_deviceptr_t base;  /* the reserved range: lsaSize slots of `stride` */
  size_t stride;
  int lsaSize;
  size_t* mapped;       /* [lsaSize] bytes mapped in each slot, 0: none */
  cu_deviceptr_t vidmem; /* the struct ncclWindow_vidmem the handle points to */
  int listed;           /* entered in the window table */
} gpu_win_t;

/* gpu_win_fds.c: a socket bound under this rank's name for window `seq`
 * (before the ranks' allgather, so every name exists once it returns). */
ncclResult_t gpu_win_fds_open(struct ncclComm* comm, uint64_t seq, int* sock);
/* Our descriptor sent to every LSA peer and theirs received into
 * fds[lsaSize] (fds[lsaRank] = myFd); the socket closed. On failure the
 * descriptors received are closed. */
ncclResult_t gpu_win_fds_swap(struct ncclComm* comm, int sock, uint64_t seq, int lsaRank, int lsaSize, int myFd,
                              int* fds);

/* gpu_win_table.c: the communicator's window table in device memory,
 * chained 32 entries at a time; entries added and taken away. */
ncclResult_t gpu_win_table_get(gpu_exec_t* ex, void** table);
ncclResult_t gpu_win_table_add(gpu_exec_t* ex, uintptr_t base, size_t size, void* window);
void gpu_win_table_remove(gpu_exec_t* ex, void* window);
void gpu_win_table_free(gpu_exec_t* ex);

/* gpu_win_map.c: the exec ops. */
ncclResult_t gpu_exec_win_create(void* ex, struct ncclComm* comm, void* buff, size_t size, int lsaRank, int lsaSize,
                                 int listed, exec_win_t* out);
void gpu_exec_win_destroy(void* ex, exec_win_t* win);
ncclResult_t gpu_exec_win_table(void* ex, void** table);

#endif
