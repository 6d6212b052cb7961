/* One collective as a test case, run through the public API and checked
 * element by element, on host or device buffers (the caller lends memory
 * operations). Shared by the host and GPU collective tests. */
#ifndef MKCCL_TESTS_COLL_CASES_H
#define MKCCL_TESTS_COLL_CASES_H

#include <stddef.h>
#include <stdint.h>

#include "nccl.h"

enum { C_ALLREDUCE, C_ALLGATHER, C_REDUCESCATTER, C_BROADCAST, C_REDUCE, C_SENDRECV, C_ALLTOALL, C_GATHER, C_SCATTER, C_N };
/* Operators past the built-in five: ncclRedOpCreatePreMulSum's, with the
 * scalar in host memory read at creation (host-immediate) or behind a
 * pointer read for each collective (device; on a host communicator that
 * pointer is host memory). */
#define C_OP_PREMUL 5
#define C_OP_PREMUL_DEV 6
#define C_OP_N 7

/* `iter` tells calls of one shape apart: it is part of the seed of every
 * input, so a result left over from an earlier call is wrong. */
typedef struct {
  int coll, type, op, root, inPlace;
  size_t count;
  int iter;
} coll_case_t;

/* Where the buffers live: host memory (malloc/memcpy) or a GPU's. */
typedef struct {
  void* (*alloc)(size_t bytes);
  void (*release)(void* p);
  void (*to_dev)(void* dst, const void* src, size_t bytes);
  void (*to_host)(void* dst, const void* src, size_t bytes);
  void (*sync)(void* stream); /* wait for the stream's work */
  int direct;                  /* host memory: the buffers are their own image */
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
  size_t bytes;        /* of the whole region: send, receive and the guards around them */
  char* host;          /* the image of the region */
  char* dev;           /* the region */
  char *s, *r;         /* send and receive pointers inside dev */
  size_t sBase;        /* the send buffer's first element in the region */
  void* scalar;        /* the device scalar of C_OP_PREMUL_DEV, in `mem`'s memory */
  unsigned char hostScalar[8]; /* C_OP_PREMUL's, overwritten once the operator is made */
  uint64_t seed;       /* of every input of the case */
  uint64_t poison;     /* bits no correct result has: the receive buffer and guards before */
  uint64_t moveMask;   /* the bits moved data may use (a float's stays finite) */
  char* sent;          /* a copy of this rank's input */
  void* table;         /* reductions: the rows inputs are drawn from (coll_cases.c) */
  ncclRedOp_t rop;
} coll_run_t;

const char* coll_name(int coll);
int coll_reduces(int coll);
int coll_rooted(int coll);

/* Fill and upload; then launch (inside a group if several ranks share a
 * thread); then check (after the stream's work): wrong elements, counting
 * as wrong any element outside the result that changed (the send buffer
 * out of place, the guards, a non-root's receive buffer).
 *
 * Inputs differ by rank, element, call (the case and its iter) and buffer:
 * data movements carry bit patterns with the sender's rank in their low
 * bits; reductions carry small integers, exact in every type for every
 * order of the operations (products of +-1 and +-2); the receive buffer and
 * the guards start as a value no correct result has (NaN, or an integer
 * outside the results' range). Float Avg over a rank count that is not a
 * power of two multiplies by an inexact 1/n: within a rounding bound. */
void coll_case_prepare(coll_run_t* run, const coll_case_t* c, ncclComm_t comm, int rank, int n, const coll_mem_t* mem,
                       void* stream);
ncclResult_t coll_case_launch(coll_run_t* run);
long coll_case_check(coll_run_t* run);
/* Whether the result is exact, so that any algorithm gives the same bits
 * (between prepare and check): all but float Avg over a rank count that is
 * not a power of two, whose 1/n rounds. */
int coll_case_exact(const coll_run_t* run);

/* The whole matrix on one rank (each case prepared, launched, checked):
 * every collective, type and op, counts 0/1/odd/large, roots, each case in
 * place and out of place. */
long coll_matrix_run(ncclComm_t comm, int rank, int n, int quick, const coll_mem_t* mem, void* stream);

#endif
