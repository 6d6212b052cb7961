/* Calling any NCCL net plugin, whatever ABI version it exports (v6..v12),
 * through one interface: the benchmark and the net-socket tests use it to
 * drive a plugin exactly as a host would, table by table. Sizes are size_t;
 * versions with int sizes get them checked and narrowed. */
#ifndef MKCCL_TOOLS_NET_ANY_H
#define MKCCL_TOOLS_NET_ANY_H

#include <stddef.h>
#include <stdint.h>

#include "nccl.h"
#include "net/nccl_net.h"

typedef struct {
  int version;       /* 6..12 */
  const void* table; /* the plugin's ncclNet_vN_t */
  void* dl;          /* dlopen handle */
  void* ctx;         /* v11+: the context init returned */
} net_any_t;

/* dlopen(path) and dlsym("ncclNetPlugin_v<version>"). 0, or -1 with a
 * message in err. */
int net_any_open(net_any_t* n, const char* path, int version, char* err, size_t errLen);
void net_any_close(net_any_t* n); /* finalize (v11+) and dlclose */
const char* net_any_name(const net_any_t* n);

ncclResult_t net_any_init(net_any_t* n, ncclDebugLogger_t logger);
ncclResult_t net_any_devices(net_any_t* n, int* ndev);
/* Properties widened to the v12 layout (fields the version lacks: zero). */
ncclResult_t net_any_props(net_any_t* n, int dev, ncclNetProperties_v12_t* props);
ncclResult_t net_any_listen(net_any_t* n, int dev, void* handle, void** listenComm);
ncclResult_t net_any_connect(net_any_t* n, int dev, void* handle, void** sendComm);
ncclResult_t net_any_accept(net_any_t* n, void* listenComm, void** recvComm);
ncclResult_t net_any_reg_mr(net_any_t* n, void* comm, void* data, size_t size, int type, void** mhandle);
ncclResult_t net_any_dereg_mr(net_any_t* n, void* comm, void* mhandle);
ncclResult_t net_any_isend(net_any_t* n, void* sendComm, void* data, size_t size, int tag, void* mhandle,
                           void** request);
ncclResult_t net_any_irecv(net_any_t* n, void* recvComm, int nr, void** data, const size_t* sizes, const int* tags,
                           void** mhandles, void** request);
ncclResult_t net_any_iflush(net_any_t* n, void* recvComm, int nr, void** data, int* sizes, void** mhandles,
                            void** request);
ncclResult_t net_any_test(net_any_t* n, void* request, int* done, int* sizes);
ncclResult_t net_any_close_send(net_any_t* n, void* comm);
ncclResult_t net_any_close_recv(net_any_t* n, void* comm);
ncclResult_t net_any_close_listen(net_any_t* n, void* comm);

#endif
