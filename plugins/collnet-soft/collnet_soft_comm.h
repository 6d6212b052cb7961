/* A rank's side of collnet-soft: its listener, its connection to the
 * aggregator, and the iallreduces it has posted there, in post order. */
#ifndef COLLNET_SOFT_COMM_H
#define COLLNET_SOFT_COMM_H

#include <stddef.h>
#include <sys/types.h>

#include "collnet_soft_wire.h"
#include "collnet/nccl_collnet.h"
#include "nccl.h"

/* Requests a comm may have outstanding; iallreduce beyond it returns a NULL
 * request (try again), as the ABI allows. */
#define COLLNET_SOFT_MAX_REQUESTS 32

typedef struct {
  int fd;
  sock_addr_t addr;
} collnet_soft_listen_t;

struct collnet_soft_comm;

typedef struct collnet_soft_req {
  struct collnet_soft_comm* comm;
  struct collnet_soft_req* next; /* post order */
  collnet_soft_op_t op;
  const char* send;
  char* recv;
  size_t sent;       /* of sizeof(op) + op.bytes */
  size_t received;   /* of sizeof(result) + op.bytes */
  collnet_soft_result_t result;
  int done;
  /* iallgather and ireducescatter (collnet_soft_window.c): an allreduce of
   * `window`, a buffer of the request's own, whose result `finish` puts
   * where the caller wants it once done. NULL for a plain iallreduce. */
  char* window;
  void (*finish)(struct collnet_soft_req* r);
  void* parts;        /* the caller's recv parts (allgather), copied */
  int nParts;
  size_t mineOff, mineLen; /* reducescatter: this rank's bytes of the window */
  char* mineDst;
} collnet_soft_req_t;

typedef struct collnet_soft_comm {
  int fd;
  int rank, nranks;
  pid_t aggregator; /* rank 0: the forked aggregator; else 0 */
  uint64_t nextSeq;
  collnet_soft_req_t* head; /* oldest not yet returned done by test() */
  int nReqs;
  ncclResult_t failed; /* once set, every call fails: the stream is out of step */
} collnet_soft_comm_t;

ncclResult_t collnet_soft_listen(int dev, void* handle, void** listenComm);
ncclResult_t collnet_soft_connect(void* handles[], int nranks, int rank, void* listenComm, void** collComm);
ncclResult_t collnet_soft_close_listen(void* listenComm);
ncclResult_t collnet_soft_close_coll(void* collComm);

ncclResult_t collnet_soft_iallreduce(void* collComm, void* sendData, void* recvData, size_t count,
                                     ncclDataType_t dataType, ncclRedOp_t redOp, void* sendMhandle,
                                     void* recvMhandle, void** request);
/* Queue an allreduce of count elements (the ABI's checks done by the
 * caller); *out NULL when COLLNET_SOFT_MAX_REQUESTS are outstanding. */
ncclResult_t collnet_soft_enqueue(collnet_soft_comm_t* c, const void* send, void* recv, size_t count,
                                  ncclDataType_t dataType, ncclRedOp_t redOp, collnet_soft_req_t** out);
/* collnet_soft_window.c: the v12 ABI's windowed allgather and reduce-scatter. */
ncclResult_t collnet_soft_iallgather(void* collComm, void* sendData, int nRecvParts, ncclNetSGE_v12_t* recvParts,
                                     size_t bytesPerRank, size_t windowOffset, size_t windowBytes, void* sendMhandle,
                                     void** request);
ncclResult_t collnet_soft_ireducescatter(void* collComm, int nSendParts, ncclNetSGE_v12_t* sendParts, void* recvData,
                                         size_t bytesPerRank, size_t windowOffset, size_t windowBytes,
                                         ncclDataType_t dataType, ncclRedOp_t redOp, void* recvMhandle,
                                         void** request);
ncclResult_t collnet_soft_iflush(void* collComm, void* data, int size, void* mhandle, void** request);
ncclResult_t collnet_soft_test(void* request, int* done, int* size);

#endif
