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

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "transport/mkccl_transport_v1.h"

#define SHM_MAGIC 0x6d6b73686dULL /* "mkshm" */
#define SHM_NAME_MAX 64

/* The receiver's answer, in its header, to how it reads the sender's
 * memory in place (transport_shm_cma.c, transport_shm_map.c); the sender's
 * connect waits for it. */
#define SHM_READS_PENDING 0
#define SHM_READS_ANSWERED 0x1
#define SHM_READS_CMA 0x2 /* any address: registered buffers */
#define SHM_READS_MAP 0x4 /* shareable host memory only */

typedef struct {
  uint64_t magic;
  volatile uint32_t peerMapped;
  volatile uint32_t reads; /* receiver segment: SHM_READS_* */
  uint64_t token;         /* random: the CMA probe tells this segment from any other */
  char pad[40];
} shm_header_t;
_Static_assert(sizeof(shm_header_t) == 64, "the segment header is one cache line");

typedef struct {
  char name[SHM_NAME_MAX];
  uint64_t bytes;
  int32_t rank;
  int32_t llBytes; /* the receiver's segment has LL lines of this many bytes (0: none) */
  uint64_t header; /* the segment's address in its creator's process (the CMA probe reads it there) */
} shm_connect_info_t;

struct shm_map;

typedef struct {
  const mkcclTransportServices_v1* services;
  int cma;      /* MKCCL_SHM_CMA, host ranks only */
  int cmaFault; /* MKCCL_SHM_CMA_FAULT */
  int map;      /* MKCCL_SHM_MAP, host ranks only */
  pthread_mutex_t mapLock;
  struct shm_map* maps; /* peers' shareable memory we mapped */
} shm_ctx_t;

typedef struct {
  shm_ctx_t* ctx;
  int isSend;
  int stepSize;
  int llBytes;     /* LL lines in the receiver's segment (ours when receiving, the peer's when sending) */
  int peerPid;
  int cmaOk;       /* the receiver reads the sender's registered buffers in place */
  int mapOk;       /* the receiver maps the sender's shareable host memory */
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

/* Single copy (transport_shm_cma.c). Receiver, at connect: whether it can
 * read the sender's memory, by reading the sender's header at its address
 * peerHeader (said once at INFO when not). */
int shm_cma_probe(const shm_conn_t* c, uint64_t peerHeader, int peerRank);
/* `bytes` at the sender's src into dst, by process_vm_readv; 0 or errno. */
int shm_cma_read(void* conn, void* dst, const void* src, size_t bytes);

/* Single copy from mapped shareable memory (transport_shm_map.c).
 * Receiver, at connect: whether it can map the sender's ncclMemAlloc
 * memory (said once at INFO when not). */
int shm_map_probe(const shm_conn_t* c, uint64_t peerHeader, const char* peerName, int peerRank);
/* mkcclConnInfo_v1.ptrRead: from a mapping when src is shareable memory,
 * else by CMA where the connection has it. */
int shm_map_read(void* conn, void* dst, const void* src, size_t bytes);
/* mkcclConnInfo_v1.ptrMap: where our mapping holds src, if it is
 * shareable memory we map; else NULL. */
const void* shm_map_at(void* conn, const void* src, size_t bytes);
/* Every mapping of the context undone (at finalize). */
void shm_map_drop_all(shm_ctx_t* ctx);

#endif
