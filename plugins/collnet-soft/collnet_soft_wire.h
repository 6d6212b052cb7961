/* What collnet-soft's ranks and its aggregator say to each other.
 *
 * listen() writes a handle (the listener's address); connect() makes every
 * rank dial handles[0], rank 0's listener, which rank 0 hands to the
 * aggregator process it forks. A connection opens with a hello (rank and
 * nranks in `arg`). Then per iallreduce, in the order each rank posts them:
 * the rank sends an op header and its `bytes` of data; the aggregator, once
 * every rank's header agrees, reduces chunk by chunk in rank order and sends
 * each rank a result header and the `bytes` of the result. A header that
 * disagrees gets status COLLNET_SOFT_MISMATCH and no data, and the
 * aggregator stops. */
#ifndef COLLNET_SOFT_WIRE_H
#define COLLNET_SOFT_WIRE_H

#include <stdint.h>

#include "sock/sock.h"

#define COLLNET_SOFT_MAGIC 0x636f6c6c736f6674ull /* "collsoft" */
#define COLLNET_SOFT_HELLO_TYPE 1
#define COLLNET_SOFT_VERSION 1
#define COLLNET_SOFT_MAX_RANKS 1024

/* In the handle the core exchanges (NCCL_NET_HANDLE_MAXSIZE bytes). */
typedef struct {
  uint64_t magic;
  sock_addr_t addr;
} collnet_soft_handle_t;

typedef struct {
  uint64_t magic;
  uint64_t seq;   /* 0, 1, ... per connection */
  uint64_t count; /* elements */
  uint64_t bytes; /* count * element size */
  int32_t dataType;
  int32_t redOp;
} collnet_soft_op_t;

enum { COLLNET_SOFT_OK = 0, COLLNET_SOFT_MISMATCH = 1 };

typedef struct {
  uint64_t magic;
  uint64_t seq;
  uint64_t bytes; /* what follows: the op's bytes, or 0 with an error status */
  int32_t status;
  int32_t pad;
} collnet_soft_result_t;

/* hello arg: rank in the low 32 bits, nranks in the high. */
static inline uint64_t collnet_soft_hello_arg(int rank, int nranks) {
  return (uint64_t)(uint32_t)rank | ((uint64_t)(uint32_t)nranks << 32);
}

#endif
