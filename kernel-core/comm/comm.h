/* struct ncclComm: one rank's communicator. Fields are grouped by the
 * module that owns them; a module appends its own group (with a comment
 * naming it) and adds one line to the stage table in comm_init.c. */
#ifndef MKCCL_COMM_COMM_H
#define MKCCL_COMM_COMM_H

#include <pthread.h>
#include <stdint.h>

#include "bootstrap/bootstrap.h"
#include "nccl.h"
#include "dp/dp.h"
#include "group/task.h"
#include "profile/profile.h"
#include "watch/watch.h"

#define COMM_MAGIC 0x6d6b63636c434f4dull      /* "mkcclCOM" */
#define COMM_MAGIC_DEAD 0x6465616464656164ull /* "deaddead": written just before free */
#define COMM_NAME_MAX 128
#define COMM_NET_DEVS_MAX 8

typedef enum {
  COMM_STATE_INITIALIZING = 1,
  COMM_STATE_READY = 2,
  COMM_STATE_FAILED = 3, /* init failed; asyncResult says why */
  COMM_STATE_FINALIZED = 4,
  COMM_STATE_ABORTED = 5,
  COMM_STATE_DESTROYED = 6,
} comm_state_t;

/* What every rank tells every other at init (bootstrap allgather). Plain
 * data, same layout on every rank. */
typedef struct {
  int32_t rank;
  int32_t cudaDev; /* -1: a host rank */
  int32_t pid;
  int32_t nNetDevs; /* filled from comm->netDevs (net layer) */
  uint64_t hostHash;
  uint64_t pidHash;
  int64_t busId; /* PCI bus id of the GPU, -1 without one */
  char hostname[64];
  int32_t netDevs[COMM_NET_DEVS_MAX];
  int32_t cpus; /* CPUs this process may keep busy (affinity mask, cgroup quota) */
  int32_t watchPort; /* the peer watch's listener, at the bootstrap address (0: not watched) */
  uint64_t reserved[3];
} comm_peer_info_t;

/* ncclRedOpCreatePreMulSum's operators. */
typedef struct {
  int used;
  ncclDataType_t type;
  ncclScalarResidence_t residence;
  uint64_t bits;   /* host-immediate scalar */
  void* devPtr;    /* device-resident scalar, read when the collective runs */
} comm_redop_t;

struct ncclComm {
  uint64_t startMagic;

  /* ---- identity (comm) ---- */
  int rank, nRanks;
  int cudaDev;     /* -1 for a host rank; TODO(cuda shim): set from the driver */
  int64_t busId;   /* -1 without a GPU */
  uint64_t commHash; /* hash of the (first) unique id: equal on every rank */
  uint64_t magic;    /* bootstrap magic of the id */
  ncclConfig_t config; /* validated; config.commName/netName point into this struct */
  char commName[COMM_NAME_MAX];
  char netName[COMM_NAME_MAX];
  /* GPU memory the transports hold through the services' deviceAlloc
   * (step buffers, LL lines, pools, control words): ncclCommMemStats. Atomic. */
  uint64_t gpuMemBytes;

  /* ---- lifecycle (comm) ---- */
  int state;                 /* comm_state_t, atomic */
  ncclResult_t asyncResult;  /* atomic: ncclInProgress while init runs */
  volatile uint32_t* abortFlag; /* shared with every thread working for this comm */
  uint32_t* abortFlagAlloc;
  pthread_mutex_t lock;
  pthread_t initThread;
  int initThreadJoinable;
  int stagesDone; /* comm_init.c: stages whose init completed */
  int finalizeCalled;
  int busy; /* atomic: threads inside the library on it (comm_abort.c), and whether an abort left it to them */
  uint32_t winCount; /* windows ever made on it: the next one's GIN handle (api/window_registry.c) */
  struct mem_reg* memRegs; /* ncclCommRegister's ranges (api/mem_reg.c) */
  int revoked; /* atomic: ncclCommRevoke ended its work; only a parent (Split/Shrink) or torn down now */

  /* ---- bootstrap (bootstrap) ---- */
  bootstrap_handle_t* handles; /* [nHandles] the unique ids */
  int nHandles;
  bootstrap_state_t* bootstrap;

  /* ---- peers (comm/peer_info.c) ---- */
  comm_peer_info_t* peerInfo; /* [nRanks] */
  int node, nNodes;           /* nodes numbered by first appearance in rank order */
  int localRank, localRanks;
  int* localRankToRank;       /* [localRanks] */
  int nNetDevs;               /* this rank's net devices: set by the net layer before "peer-info" */
  int netDevs[COMM_NET_DEVS_MAX];

  /* ---- peer watch (watch/): dead and departed neighbours, status ---- */
  watch_comm_t watch;

  /* ---- data path (dp/dp.c): channels, transports, proxy, executors ---- */
  dp_state_t dp;

  /* ---- groups and tasks (group/group.c) ---- */
  task_list_t tasks;      /* queued until the group ends */
  int inGroup;                 /* in the current thread's group list */
  struct ncclComm* groupNext;

  /* ---- symmetric collectives (api/window_symm.c): their barrier flags, made with the first
   * NCCL_WIN_COLL_SYMMETRIC window and freed with the last ---- */
  struct api_window* symmRes;
  int symmWindows;

  /* ---- user reduction operators (api/redop_api.c) ---- */
#define COMM_MAX_REDOPS 64
  comm_redop_t redOps[COMM_MAX_REDOPS];

  /* ---- tuning (tune/tune_comm_stage.c) and profiling (profile/profile_comm_stage.c) ---- */
  struct tune_ctx* tune;   /* asked for every collective; NULL before the "tune" stage */
  profile_comm_t profile;  /* mask 0 and no plugin unless a profiler loaded */
  void* profGroupApi;      /* GroupApi event of the group it is queued in (group/group.c) */

  uint64_t endMagic;
};

/* ---- stages (comm_init.c) -------------------------------------------------------------------- */
typedef struct {
  const char* name;
  ncclResult_t (*init)(struct ncclComm* comm);
  ncclResult_t (*finalize)(struct ncclComm* comm); /* NULL: nothing to flush */
  void (*destroy)(struct ncclComm* comm);          /* NULL: nothing to undo; runs only after init succeeded */
} comm_stage_t;

/* Runs the stages in order; on failure the completed ones stay recorded
 * for comm_stages_destroy. */
ncclResult_t comm_stages_init(struct ncclComm* comm);
ncclResult_t comm_stages_finalize(struct ncclComm* comm);
/* Undoes the completed stages in reverse order. */
void comm_stages_destroy(struct ncclComm* comm);

/* ---- lifecycle (comm_lifecycle.c) ---------------------------------------------------------- */
/* A communicator object in state INITIALIZING: nothing started yet. config
 * and inherit as comm_config_parse (fn names the API call in errors). */
ncclResult_t comm_alloc(int nRanks, int rank, const bootstrap_handle_t* handles, int nHandles, int cudaDev,
                        const ncclConfig_t* config, const ncclConfig_t* inherit, const char* fn,
                        struct ncclComm** comm);
/* comm_alloc + comm_init_launch (async when config.blocking is 0). Blocking:
 * *out only on success. Non-blocking: *out at once, ncclInProgress. */
ncclResult_t comm_create(struct ncclComm** out, int nRanks, const bootstrap_handle_t* handles, int nHandles, int rank,
                         int cudaDev, const ncclConfig_t* config, const ncclConfig_t* inherit, const char* fn);
/* ncclCommSplit's work (comm_split.c): *out NULL for NCCL_SPLIT_NOCOLOR. */
ncclResult_t comm_split(struct ncclComm* parent, int color, int key, const ncclConfig_t* config,
                        struct ncclComm** out, const char* fn);
/* ncclCommRevoke's work (comm_split.c): end the comm's work, refuse new
 * work; it stays a parent for Split and Shrink. selfInside: 1 when the
 * caller itself is inside the comm (a shrink), not waited for. */
ncclResult_t comm_revoke(struct ncclComm* comm, int selfInside);
/* ncclCommShrink's work (comm_split.c); the arguments are checked and the
 * caller is inside the comm (comm_busy_enter). */
ncclResult_t comm_shrink(struct ncclComm* parent, const int* exclude, int nExclude, const ncclConfig_t* config,
                         int flags, struct ncclComm** out, const char* fn);
/* Frees the object (stages must be undone). */
void comm_free(struct ncclComm* comm);
/* Runs the init stages: on this thread (result returned; on failure the
 * stages are undone), or on a new thread (ncclInProgress; poll asyncResult). */
ncclResult_t comm_init_launch(struct ncclComm* comm, int async);
/* Joins a finished init thread (wait: also one still running). */
void comm_init_thread_reap(struct ncclComm* comm, int wait);
/* Lets a running init thread go unjoined (it frees the comm if last out). */
void comm_init_thread_detach(struct ncclComm* comm);

/* ---- threads inside a comm, and who frees an aborted one (comm_abort.c) ----------------------- */
/* A thread starts using comm: an API call that uses it (a collective, a
 * split or shrink), a group that queued work on it, the init thread. */
void comm_busy_enter(struct ncclComm* comm);
/* Its last touch of comm; every decrement of busy goes through it. When an
 * abort gave up waiting, the last to leave frees the comm here: 1 then. */
int comm_busy_leave(struct ncclComm* comm);
int comm_busy_count(const struct ncclComm* comm);
/* Waits up to waitMs for the threads inside to leave, but for `keep` (the
 * caller's own entries); how many others are left. */
int comm_busy_wait(struct ncclComm* comm, int64_t waitMs, int keep);
/* ncclCommAbort after its flag rose: waits up to waitMs, then frees the
 * comm (1) or leaves that to the last thread inside, with a WARN (0). */
int comm_abort_free(struct ncclComm* comm, int64_t waitMs);
int comm_state_get(const struct ncclComm* comm);
ncclResult_t comm_async_result(struct ncclComm* comm);

/* ncclInvalidArgument unless comm looks like a live communicator. */
ncclResult_t comm_check(const struct ncclComm* comm, const char* fn);
/* comm_check, then ncclInvalidUsage (or the init error) unless READY. */
ncclResult_t comm_ensure_ready(struct ncclComm* comm, const char* fn);

/* For collectives: comm_ensure_ready, and not aborted by a failed peer. */
ncclResult_t comm_check_usable(struct ncclComm* comm, const char* fn);
/* A collective failed: remember it for ncclCommGetAsyncError. */
void comm_async_error_set(struct ncclComm* comm, ncclResult_t res);
/* A GPU kernel that timed out waiting on a peer: the comm's async error. */
void comm_poll_device_error(struct ncclComm* comm);

/* ---- data path stage (dp/dp.c) ---- */
ncclResult_t comm_dp_stage_init(struct ncclComm* comm);
ncclResult_t comm_dp_stage_finalize(struct ncclComm* comm);
void comm_dp_stage_destroy(struct ncclComm* comm);

/* ---- config (comm_config.c) ------------------------------------------------------------------ */
/* Validates user (may be NULL) as NCCL 2.28 does and fills out. inherit
 * (may be NULL): a parent's config, taken whole when user is NULL (split).
 * The strings are copied into comm (commName, netName). */
ncclResult_t comm_config_parse(const ncclConfig_t* user, const ncclConfig_t* inherit, struct ncclComm* comm,
                               const char* fn);

/* ---- peers (peer_info.c) --------------------------------------------------------------------- */
uint64_t comm_hash_bytes(uint64_t seed, const void* data, size_t len);
/* This host (hostname, boot id, network namespace; NCCL_HOSTID overrides). */
uint64_t comm_host_hash(void);
uint64_t comm_pid_hash(void);
int comm_peer_same_host(const struct ncclComm* comm, int a, int b);
int comm_peer_same_process(const struct ncclComm* comm, int a, int b);
/* How many ranks share rank r's host (r included). */
int comm_peer_host_ranks(const struct ncclComm* comm, int r);
/* Over the ranks of this node only (after "peer-info"): data holds
 * localRanks slices, this rank's at localRank * size. */
ncclResult_t comm_local_allgather(struct ncclComm* comm, void* data, size_t size);
ncclResult_t comm_local_barrier(struct ncclComm* comm);

/* ---- stage functions (one pair per stage, in the table in comm_init.c) ------------------------ */
ncclResult_t comm_bootstrap_stage_init(struct ncclComm* comm);
/* *all = whether `mine` holds on every rank (every rank calls it, at the
 * same point); what failed is in the last-error text (`what` names it). */
ncclResult_t comm_all_agree(struct ncclComm* comm, int mine, int* all, const char* what);
void comm_bootstrap_stage_destroy(struct ncclComm* comm);
ncclResult_t comm_peer_info_stage_init(struct ncclComm* comm);
void comm_peer_info_stage_destroy(struct ncclComm* comm);
ncclResult_t comm_ready_stage_init(struct ncclComm* comm);
ncclResult_t comm_profile_stage_init(struct ncclComm* comm);
void comm_profile_stage_destroy(struct ncclComm* comm);
ncclResult_t comm_tune_stage_init(struct ncclComm* comm);
void comm_tune_stage_destroy(struct ncclComm* comm);
ncclResult_t comm_windows_stage_init(struct ncclComm* comm); /* api/window_comm_stage.c */
void comm_windows_stage_destroy(struct ncclComm* comm);

/* ---- CUDA (comm_cuda.c): TODO(cuda shim) ----------------------------------------------------- */
int comm_cuda_device_count(void);
int comm_cuda_device_current(void);
int64_t comm_cuda_bus_id(int dev);

#endif
