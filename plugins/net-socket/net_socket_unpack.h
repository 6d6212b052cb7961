/* Unpack mode (MKCCL_SOCKET_UNPACK=1): net-socket as a producer of UNPACK
 * receives (docs/UNPACK.md), so the device-offload path runs on any machine.
 *
 * The properties report UNPACK 0x7 and one buffer per receive. When the
 * core hands accept a device handle of that type, the receive comm gets a
 * queue: {meta, bounce_buf, head} (abi/net-device/mkccl_unpack_v7.h) with
 * MKCCL_UNPACK_QUEUE_DEPTH slots. A receive takes the next slot; TCP lands
 * its bytes contiguous in the slot's landing area; when it completes, test()
 * moves them into the bounce buffer as 4 KiB pages in a permuted order, at
 * source offsets skewed by (receive number % 16) bytes so every alignment
 * class occurs, describes each page {src_off, len, dst_off} and publishes
 * the page count (release). The buffer the caller posted is never written:
 * only the consumer's unpack fills it. irecvConsumed frees the slot.
 * Without a handle from the core (HOST, or UNPACK refused) receives are
 * ordinary. */
#ifndef NET_SOCKET_UNPACK_H
#define NET_SOCKET_UNPACK_H

#include <stddef.h>
#include <stdint.h>

#include "net-device/mkccl_unpack_v7.h"
#include "net/nccl_net.h"

struct net_socket_comm;
struct net_socket_request;

typedef struct net_socket_unpack {
  mkcclUnpackHandle_v7 handle; /* what the consumer reads (and advances head in) */
  char* landing;               /* MKCCL_UNPACK_QUEUE_DEPTH * MKCCL_UNPACK_MAX_SLICE_SIZE */
  size_t bounceBytes, landingBytes, slotBytes;
  uint64_t tail;               /* receives posted */
  int busy[MKCCL_UNPACK_QUEUE_DEPTH];
  int cudaRegistered;          /* handle, meta and bounce buffer mapped for a GPU consumer */
} net_socket_unpack_t;

/* MKCCL_SOCKET_UNPACK is set: report UNPACK in the properties. */
int net_socket_unpack_mode(void);

/* After accept: give the receive comm a queue when the core asked for
 * UNPACK (dev: the core's handle, filled here). */
ncclResult_t net_socket_unpack_attach(struct net_socket_comm* comm, ncclNetDeviceHandle_v7_t* dev);
void net_socket_unpack_free(net_socket_unpack_t* u);

/* irecv: the slot and landing area of the next receive; *landing NULL when
 * every slot still awaits irecvConsumed (the caller retries). */
ncclResult_t net_socket_unpack_post(struct net_socket_comm* comm, int n, const size_t* sizes,
                                    struct net_socket_request* r, char** landing);
/* test(), the receive complete: pages into the bounce buffer, metadata, count. */
void net_socket_unpack_publish(struct net_socket_comm* comm, struct net_socket_request* r);

/* irecvConsumed of the net ABI (v8..v12). */
ncclResult_t net_socket_irecv_consumed(void* recvComm, int n, void* request);

#endif
