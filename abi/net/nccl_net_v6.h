/* NCCL net plugin ABI v6 (frozen). Exported as `ncclNetPlugin_v6`.
 * Sizes are `int`; no device offload; a plugin may keep at most
 * NCCL_NET_MAX_REQUESTS_V6 requests per comm outstanding. */
#ifndef MKCCL_ABI_NET_NCCL_NET_V6_H
#define MKCCL_ABI_NET_NCCL_NET_V6_H

#include "net/nccl_net.h"

typedef struct {
  char* name;      /* for logs */
  char* pciPath;   /* /sys path of the PCI device */
  uint64_t guid;   /* identifies the NIC chip across its PCI functions */
  int ptrSupport;  /* NCCL_PTR_HOST | NCCL_PTR_CUDA | NCCL_PTR_DMABUF */
  int speed;       /* Mbps */
  int port;
  float latency;   /* microseconds */
  int maxComms;
  int maxRecvs;    /* receives one irecv may group */
} ncclNetProperties_v6_t;

typedef struct {
  const char* name;
  ncclResult_t (*init)(ncclDebugLogger_t logFunction);
  ncclResult_t (*devices)(int* ndev);
  ncclResult_t (*getProperties)(int dev, ncclNetProperties_v6_t* props);
  ncclResult_t (*listen)(int dev, void* handle, void** listenComm);
  /* connect/accept never block: they return a NULL comm until done. */
  ncclResult_t (*connect)(int dev, void* handle, void** sendComm);
  ncclResult_t (*accept)(void* listenComm, void** recvComm);
  ncclResult_t (*regMr)(void* comm, void* data, int size, int type, void** mhandle);
  ncclResult_t (*regMrDmaBuf)(void* comm, void* data, size_t size, int type, uint64_t offset, int fd,
                              void** mhandle);
  ncclResult_t (*deregMr)(void* comm, void* mhandle);
  /* isend/irecv may return *request == NULL: try again later. */
  ncclResult_t (*isend)(void* sendComm, void* data, int size, int tag, void* mhandle, void** request);
  ncclResult_t (*irecv)(void* recvComm, int n, void** data, int* sizes, int* tags, void** mhandles,
                        void** request);
  ncclResult_t (*iflush)(void* recvComm, int n, void** data, int* sizes, void** mhandles, void** request);
  ncclResult_t (*test)(void* request, int* done, int* sizes);
  ncclResult_t (*closeSend)(void* sendComm);
  ncclResult_t (*closeRecv)(void* recvComm);
  ncclResult_t (*closeListen)(void* listenComm);
} ncclNet_v6_t;

#endif
