/* transport-shm: ranks of one host exchange steps through POSIX shared
 * memory, executor to executor, with no proxy on the hot path.
 *
 * The receiver owns a segment with its tail, FIFO and step buffers; the
 * sender owns one with its head. Each side maps the other's. Segments are
 * created 0600 with a random name; the peer unlinks a segment as soon as it
 * has mapped it and marks it mapped, and the owner unlinks too once it sees
 * the mark, so after connect no name is left for a crash to leak; names a
 * crash during setup left behind are swept at the next init. */
#ifndef TRANSPORT_SHM_H
#define TRANSPORT_SHM_H

#include <stddef.h>
#include <stdint.h>

#include "transport/mkccl_transport_v1.h"

#define SHM_MAGIC 0x6d6b73686dULL /* "mkshm" */
#define SHM_NAME_MAX 64

typedef struct {
  uint64_t magic;
  volatile uint32_t peerMapped;
  char pad[52];
} shm_header_t;

typedef struct {
  char name[SHM_NAME_MAX];
  uint64_t bytes;
  int32_t rank;
  int32_t llBytes; /* the receiver's segment has LL lines of this many bytes (0: none) */
} shm_connect_info_t;

typedef struct {
  const mkcclTransportServices_v1* services;
} shm_ctx_t;

typedef struct {
  shm_ctx_t* ctx;
  int isSend;
  int stepSize;
  int llBytes;     /* LL lines in the receiver's segment (ours when receiving, the peer's when sending) */
  /* our segment */
  char name[SHM_NAME_MAX];
  void* local;
  size_t localBytes;
  int unlinked;
  /* the peer's segment */
  void* remote;
  size_t remoteBytes;
  /* GPU executors: both segments registered, addressed through these */
  void* localDev;
  void* remoteDev;
} shm_conn_t;

/* Segment helpers (transport_shm_segment.c). */
int shm_segment_create(size_t bytes, char* name, size_t nameSize, void** ptr);
int shm_segment_open(const char* name, size_t bytes, void** ptr);
void shm_segment_close(void* ptr, size_t bytes);
void shm_segment_unlink(const char* name);
/* Unlink the segments of dead processes of our pid namespace; how many. */
int shm_segment_sweep_dead(void);

#endif
