/* Event descriptors of NCCL's own net plugins (version 1), which a
 * profiler finds as netPlugin.data when netPlugin.id names the type. */
#ifndef MKCCL_ABI_PROFILER_NCCL_PROFILER_NET_H
#define MKCCL_ABI_PROFILER_NCCL_PROFILER_NET_H

#include <stddef.h>
#include <stdint.h>

#define NCCL_PROFILER_NET_IB_VER 1
#define NCCL_PROFILER_NET_SOCKET_VER 1

enum { ncclProfileQp = (1 << 0) };
enum { ncclProfileSocket = (1 << 0) };

typedef struct {
  uint8_t type; /* ncclProfileQp */
  union {
    struct {
      int device;
      uint64_t wr_id;
      int opcode;
      int qpNum;
      size_t length;
    } qp;
  };
} ncclProfilerNetIbDescr_v1_t;

typedef struct {
  uint8_t type; /* ncclProfileSocket */
  union {
    struct {
      int fd;
      int op;
      size_t length;
    } sock;
  };
} ncclProfilerNetSockDescr_v1_t;

#endif
