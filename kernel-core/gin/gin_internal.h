/* The engine's state, shared by its files: memory and queues (gin_engine.c),
 * connections (gin_conn.c), the thread (gin_progress.c). */
#ifndef MKCCL_GIN_GIN_INTERNAL_H
#define MKCCL_GIN_GIN_INTERNAL_H

#include <pthread.h>

#include "gin/gin.h"
#include "gin/gin_wire.h"

#define GIN_SENDS 4 /* messages in flight to one peer */
#define GIN_RECVS 4 /* receives kept posted from one peer */
#define GIN_TAG 0x4749

/* A descriptor being cut into messages. */
typedef struct gin_cur {
  gin_gfd_t gfd;
  uint64_t sent; /* payload bytes already in messages */
  int active;
} gin_cur_t;

typedef struct gin_ctx {
  gin_gpu_ctx_t* dev;    /* the kernels' handle: device memory */
  void* queuesHost;
  uint32_t* pis;         /* device memory */
  uint32_t* cisHost;
  uint64_t* countersHost;
  uint64_t* signalsHost;
  gin_gpu_ctx_t devView; /* what *dev holds */
  uint32_t* taken;       /* [nRanks] descriptors taken from each queue */
  uint32_t* consumed;    /* [nRanks] descriptors done (what cis shows) */
  gin_cur_t* cur;        /* [nRanks] */
} gin_ctx_t;

typedef struct gin_send {
  void* req;
  size_t bytes; /* the message, header included */
  int posted;   /* isend accepted it (req set) */
  int last;     /* the descriptor's last message: its completion is counted */
  int ctx;
  int hasCounter;
  uint32_t counterId;
} gin_send_t;

typedef struct gin_peer {
  void* listenComm;
  void* sendComm;
  void* recvComm;
  char* sendBuf; /* GIN_SENDS slots of slotBytes */
  char* recvBuf; /* GIN_RECVS slots */
  void* sendMh;
  void* recvMh;
  gin_send_t sends[GIN_SENDS];
  int sendHead, sendCount;
  void* recvReq[GIN_RECVS];
  int recvHead;   /* the oldest posted */
  int recvPosted; /* posted, from recvHead on */
  uint64_t sentMsgs;  /* messages whose send completed */
  uint64_t recvMsgs;  /* messages applied (atomic: destroy reads it) */
} gin_peer_t;

struct gin_engine {
  gin_config_t cfg;
  uint32_t queueSize;
  size_t chunk;     /* payload bytes per message */
  size_t slotBytes; /* header + chunk */
  gin_ctx_t ctx[GIN_MAX_CONTEXTS];
  uint64_t* shadows; /* device memory */
  gin_peer_t* peers; /* [nRanks]; this rank's own entry has no comms */
  char* selfBuf;     /* a chunk, for puts to this rank */
  pthread_t thread;
  int threadRunning;
  int stop;          /* atomic */
  int quiet;         /* atomic: every queue empty and no send in flight (the thread's last round) */
  int closing;       /* atomic: destroy is past its last wait; peers may close first, which is no failure */
  ncclResult_t error; /* atomic: the thread's failure */
};

/* gin_conn.c: every peer's send and receive comm and staging, collectively. */
ncclResult_t gin_conn_setup(gin_engine_t* e);
void gin_conn_close(gin_engine_t* e);

/* gin_progress.c */
void* gin_progress_thread(void* arg);

#endif
