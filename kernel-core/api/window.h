/* The host's record of every window (ncclCommWindowRegister, and the
 * device communicators' resource windows): found by the handle the user
 * holds, which on a GPU communicator points into device memory and is
 * never read on the host. */
#ifndef MKCCL_API_WINDOW_H
#define MKCCL_API_WINDOW_H

#include <stddef.h>
#include <stdint.h>

#include "exec/exec.h"
#include "nccl.h"

struct ncclComm;

typedef struct api_window {
  struct api_window* next;
  struct ncclComm* comm;
  ncclWindow_t handle;
  void* userPtr;
  size_t size;
  int flags;
  int mapped;      /* the executor made it (GPU communicators): exec is its */
  int internal;    /* a device communicator's resources: not the user's to deregister */
  uint64_t ginHandle; /* what GIN descriptors name it by: the same on every rank (creation order) */
  struct api_devcomm_gin* gin; /* the resource window of a device communicator with GIN: its engine */
  exec_win_t exec;
  /* Mapped windows: each rank's exec.lsaFlatBase, [nRanks], gathered at
   * creation (0 for ranks of other LSA teams): where a peer sees our copy. */
  uint64_t* peerFlatBase;
} api_window_t;

/* This rank's LSA team: lsaSize consecutive ranks, this one lsaRank among them. */
void api_window_lsa(const struct ncclComm* comm, int* lsaRank, int* lsaSize);

/* Collective: a window over `buff` (NULL: fresh zeroed device memory of
 * `size`, for a device communicator's resources). GPU communicators map it
 * into every LSA peer; host communicators keep the record alone. `listed`:
 * kernels find it with ncclFindWindow. */
ncclResult_t api_window_create(struct ncclComm* comm, void* buff, size_t size, int flags, int listed,
                               api_window_t** out);
/* The record of `handle` on `comm` (NULL: on any communicator), or NULL. */
api_window_t* api_window_find(const struct ncclComm* comm, ncclWindow_t handle);
/* 1 when [ptr, ptr + bytes) lies inside one of comm's user windows, else 0. */
int api_window_covers(const struct ncclComm* comm, const void* ptr, size_t bytes);
/* The address at which LSA peer `peer`, in its own process, sees this
 * rank's [ptr, ptr + bytes) of a mapped user window of comm: 1 and *addr,
 * or 0 when no such window holds it or the peer is of another team. */
int api_window_peer_addr(const struct ncclComm* comm, const void* ptr, size_t bytes, int peer, uint64_t* addr);
/* The user window of comm holding [ptr, ptr + bytes): 1 and its range, or 0. */
int api_window_range(const struct ncclComm* comm, const void* ptr, size_t bytes, void** base, size_t* size);
/* The memory and size of `comm`'s window whose GIN handle is `handle`: 1,
 * or 0 when none (gin_win_find_fn; arg is the communicator). */
int api_window_gin_find(void* comm, uint64_t handle, char** ptr, size_t* size);
/* One window still registered on comm, taken off the records (the caller
 * destroys it), or NULL when none is left. */
api_window_t* api_window_next_of(const struct ncclComm* comm);
/* Unmapped, forgotten, freed. */
void api_window_destroy(api_window_t* w);

/* Where a buffer lies in a window, as the symmetric kernels need it: LSA
 * rank r's copy of the window's user address p is at
 * flatBase + r * stride + (p - userPtr). */
typedef struct api_window_span {
  const char* userPtr;
  size_t size;
  int flags;
  const char* flatBase;
  uint64_t stride;
} api_window_span_t;

/* window_symm.c. After a window with NCCL_WIN_COLL_SYMMETRIC was registered
 * (collectively) on comm: the first one also makes the communicator's
 * symmetric resources (barrier flags), collectively, where its ranks form
 * one LSA team of GPUs. */
ncclResult_t api_window_symm_added(struct ncclComm* comm, const api_window_t* w);
/* Before such a window is deregistered: the last one frees the resources. */
void api_window_symm_removing(struct ncclComm* comm, const api_window_t* w);
/* 1 with *out set when [ptr, ptr + bytes) lies inside one mapped window of
 * comm registered with NCCL_WIN_COLL_SYMMETRIC, else 0. */
int api_window_symm_find(const struct ncclComm* comm, const void* ptr, size_t bytes, api_window_span_t* out);
/* The resource window's span (barrier flags), or 0 when comm has none. */
int api_window_symm_res(const struct ncclComm* comm, api_window_span_t* out);

#endif
