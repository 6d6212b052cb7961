/* NCCL collnet plugin ABI v6 (frozen). Exported as `ncclCollNetPlugin_v6`.
 * Sizes and counts are `int`; allreduce only. */
#ifndef MKCCL_ABI_COLLNET_NCCL_COLLNET_V6_H
#define MKCCL_ABI_COLLNET_NCCL_COLLNET_V6_H

#include "collnet/nccl_collnet.h"

typedef struct {
  const char* name;
  ncclResult_t (*init)(ncclDebugLogger_t logFunction);
  /* 0 devices: every other member may be NULL. */
  ncclResult_t (*devices)(int* ndev);
  ncclResult_t (*getProperties)(int dev, ncclNetProperties_v6_t* props);
  /* Each rank listens; the handles (NCCL_NET_HANDLE_MAXSIZE bytes each) are
   * exchanged and every rank connects with all of them. */
  ncclResult_t (*listen)(int dev, void* handle, void** listenComm);
  ncclResult_t (*connect)(void* handles[], int nranks, int rank, void* listenComm, void** collComm);
  /* *supported 1 when the network reduces dataType with redOp. */
  ncclResult_t (*reduceSupport)(ncclDataType_t dataType, ncclRedOp_t redOp, int* supported);
  ncclResult_t (*regMr)(void* collComm, void* data, int size, int type, void** mhandle);
  ncclResult_t (*regMrDmaBuf)(void* collComm, void* data, size_t size, int type, uint64_t offset, int fd,
                              void** mhandle);
  ncclResult_t (*deregMr)(void* collComm, void* mhandle);
  /* May return *request == NULL: try again later. */
  ncclResult_t (*iallreduce)(void* collComm, void* sendData, void* recvData, int count, ncclDataType_t dataType,
                             ncclRedOp_t redOp, void* sendMhandle, void* recvMhandle, void** request);
  ncclResult_t (*iflush)(void* collComm, void* data, int size, void* mhandle, void** request);
  ncclResult_t (*test)(void* request, int* done, int* size);
  ncclResult_t (*closeColl)(void* collComm);
  ncclResult_t (*closeListen)(void* listenComm);
} ncclCollNet_v6_t;

#endif
