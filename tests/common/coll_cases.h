/* One collective as a test case, run through the public API and checked
 * element by element, on host or device buffers (the caller lends memory
 * operations). Shared by the host and GPU collective tests. */
#ifndef MKCCL_TESTS_COLL_CASES_H
#define MKCCL_TESTS_COLL_CASES_H

#include <stddef.h>

#include "nccl.h"

enum { C_ALLREDUCE, C_ALLGATHER, C_REDUCESCATTER, C_BROADCAST, C_REDUCE, C_SENDRECV, C_ALLTOALL, C_GATHER, C_SCATTER, C_N };
#define C_OP_PREMUL 5 /* a user operator made with ncclRedOpCreatePreMulSum */

typedef struct {
  int coll, type, op, root, inPlace;
  size_t count;
} coll_case_t;

/* Where the buffers live: host memory (malloc/memcpy) or a GPU's. */
typedef struct {
  void* (*alloc)(size_t bytes);
  void (*release)(void* p);
  void (*to_dev)(void* dst, const void* src, size_t bytes);
  void (*to_host)(void* dst, const void* src, size_t bytes);
  void (*sync)(void* stream); /* wait for the stream's work */
} coll_mem_t;

extern const coll_mem_t coll_mem_host;

/* A case in flight on one rank. */
typedef struct {
  coll_case_t c;
  ncclComm_t comm;
  int rank, n;
  const coll_mem_t* mem;
  void* stream;
  size_t ts, inCnt, outCnt;
  char* host;   /* the image of the buffers */
  char* dev;    /* the buffers */
  char *s, *r;  /* send and receive pointers inside dev */
  ncclRedOp_t rop;
} coll_run_t;

const char* coll_name(int coll);
int coll_reduces(int coll);
int coll_rooted(int coll);

/* Fill and upload; then launch (inside a group if several ranks share a
 * thread); then check (after the stream's work): wrong elements. */
void coll_case_prepare(coll_run_t* run, const coll_case_t* c, ncclComm_t comm, int rank, int n, const coll_mem_t* mem,
                       void* stream);
ncclResult_t coll_case_launch(coll_run_t* run);
long coll_case_check(coll_run_t* run);

/* The whole matrix on one rank (each case prepared, launched, checked):
 * every collective, type and op, counts 0/1/odd/large, roots, in place. */
long coll_matrix_run(ncclComm_t comm, int rank, int n, int quick, const coll_mem_t* mem, void* stream);

#endif
