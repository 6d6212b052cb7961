/* A communicator's life: allocated (INITIALIZING), stages run on the
 * caller's thread or on an init thread, READY or FAILED; then FINALIZED,
 * ABORTED, DESTROYED (api/comm_destroy_api.c). State and async result are
 * atomics: the init thread writes them while the application polls. */
#include <stdlib.h>
#include <string.h>

#include "api/mem_reg.h"
#include "base/err.h"
#include "base/log.h"
#include "comm/comm.h"

int comm_state_get(const struct ncclComm* comm) { return __atomic_load_n(&comm->state, __ATOMIC_ACQUIRE); }

static void comm_state_set(struct ncclComm* comm, comm_state_t s) { __atomic_store_n(&comm->state, s, __ATOMIC_RELEASE); }

ncclResult_t comm_alloc(int nRanks, int rank, const bootstrap_handle_t* handles, int nHandles, int cudaDev,
                        const ncclConfig_t* config, const ncclConfig_t* inherit, const char* fn,
                        struct ncclComm** out) {
  struct ncclComm* comm = calloc(1, sizeof(*comm));
  /* A page of its own: a GPU communicator registers it so kernels see it. */
  uint32_t* flag = NULL;
  if (posix_memalign((void**)&flag, 4096, 4096) == 0) memset(flag, 0, 4096);
  bootstrap_handle_t* hs = calloc((size_t)nHandles, sizeof(*hs));
  if (!comm || !flag || !hs) {
    free(comm), free(flag), free(hs);
    return MK_FAIL(ncclSystemError, "out of memory for a communicator");
  }
  comm->startMagic = comm->endMagic = COMM_MAGIC;
  comm->rank = rank;
  comm->nRanks = nRanks;
  comm->cudaDev = cudaDev;
  comm->busId = cudaDev >= 0 ? comm_cuda_bus_id(cudaDev) : -1;
  memcpy(hs, handles, sizeof(*hs) * (size_t)nHandles);
  comm->handles = hs;
  comm->nHandles = nHandles;
  comm->magic = handles[0].magic;
  ncclUniqueId id;
  bootstrap_handle_to_id(&handles[0], &id);
  comm->commHash = comm_hash_bytes(0, &id, sizeof(id));
  comm->abortFlagAlloc = flag;
  comm->abortFlag = flag;
  comm->state = COMM_STATE_INITIALIZING;
  comm->asyncResult = ncclInProgress;
  comm->node = comm->localRank = -1;
  pthread_mutex_init(&comm->lock, NULL);
  ncclResult_t res = comm_config_parse(config, inherit, comm, fn);
  if (res != ncclSuccess) {
    comm_free(comm);
    return res;
  }
  *out = comm;
  return ncclSuccess;
}

/* Destroyed communicators are kept, poisoned, for the next COMM_QUARANTINE
 * destructions before their memory is freed: a call with a stale pointer
 * then reads the poison (comm_check: "destroyed") instead of whatever a
 * later allocation put there, or another live communicator. */
#define COMM_QUARANTINE 64
static struct ncclComm* comm_quarantine[COMM_QUARANTINE];
static unsigned comm_quarantine_next;
static pthread_mutex_t comm_quarantine_lock = PTHREAD_MUTEX_INITIALIZER;

void comm_free(struct ncclComm* comm) {
  if (!comm) return;
  mem_reg_drop_all(comm);
  pthread_mutex_destroy(&comm->lock);
  free(comm->handles);
  comm->handles = NULL;
  free(comm->abortFlagAlloc);
  comm->abortFlagAlloc = NULL;
  comm->startMagic = comm->endMagic = COMM_MAGIC_DEAD;
  comm->state = COMM_STATE_DESTROYED;
  pthread_mutex_lock(&comm_quarantine_lock);
  struct ncclComm* oldest = comm_quarantine[comm_quarantine_next % COMM_QUARANTINE];
  comm_quarantine[comm_quarantine_next++ % COMM_QUARANTINE] = comm;
  pthread_mutex_unlock(&comm_quarantine_lock);
  free(oldest);
}

/* The stages; the outcome lands in state and asyncResult. A failed init
 * releases what it built at once, so peers waiting on us see it. */
static ncclResult_t comm_init_run(struct ncclComm* comm) {
  log_set_device(comm->cudaDev);
  MK_INFO(NCCL_INIT, "comm %p rank %d nRanks %d cudaDev %d busId %llx commHash 0x%llx%s%s - Init START", (void*)comm,
          comm->rank, comm->nRanks, comm->cudaDev, (unsigned long long)comm->busId,
          (unsigned long long)comm->commHash, comm->commName[0] ? " commName " : "", comm->commName);
  ncclResult_t res = comm_stages_init(comm);
  if (res == ncclSuccess) {
    comm_state_set(comm, COMM_STATE_READY);
    MK_INFO(NCCL_INIT, "comm %p rank %d nRanks %d nNodes %d localRanks %d localRank %d - Init COMPLETE", (void*)comm,
            comm->rank, comm->nRanks, comm->nNodes, comm->localRanks, comm->localRank);
  } else {
    comm_stages_destroy(comm);
    comm_state_set(comm, COMM_STATE_FAILED);
  }
  __atomic_store_n(&comm->asyncResult, res, __ATOMIC_RELEASE);
  return res;
}

/* The init thread is inside the comm until it leaves: an abort waits for it
 * as for a collective. */
static void* comm_init_thread(void* arg) {
  comm_init_run(arg);
  comm_busy_leave(arg);
  return NULL;
}

ncclResult_t comm_init_launch(struct ncclComm* comm, int async) {
  if (!async) return comm_init_run(comm);
  comm_busy_enter(comm);
  int err = pthread_create(&comm->initThread, NULL, comm_init_thread, comm);
  if (err != 0) {
    comm_busy_leave(comm);
    ncclResult_t res = MK_FAIL(ncclSystemError, "pthread_create for the init thread failed: %s", strerror(err));
    comm_state_set(comm, COMM_STATE_FAILED);
    __atomic_store_n(&comm->asyncResult, res, __ATOMIC_RELEASE);
    return res;
  }
  comm->initThreadJoinable = 1;
  return ncclInProgress;
}

void comm_init_thread_reap(struct ncclComm* comm, int wait) {
  pthread_mutex_lock(&comm->lock);
  if (comm->initThreadJoinable &&
      (wait || __atomic_load_n(&comm->asyncResult, __ATOMIC_ACQUIRE) != ncclInProgress)) {
    pthread_join(comm->initThread, NULL);
    comm->initThreadJoinable = 0;
  }
  pthread_mutex_unlock(&comm->lock);
}

void comm_init_thread_detach(struct ncclComm* comm) {
  pthread_mutex_lock(&comm->lock);
  if (comm->initThreadJoinable) {
    pthread_detach(comm->initThread);
    comm->initThreadJoinable = 0;
  }
  pthread_mutex_unlock(&comm->lock);
}

ncclResult_t comm_async_result(struct ncclComm* comm) {
  ncclResult_t res = __atomic_load_n(&comm->asyncResult, __ATOMIC_ACQUIRE);
  if (res != ncclInProgress) comm_init_thread_reap(comm, 0);
  return res;
}

ncclResult_t comm_check(const struct ncclComm* comm, const char* fn) {
  if (!comm) return MK_FAIL(ncclInvalidArgument, "%s: comm is NULL", fn);
  if (comm->startMagic != COMM_MAGIC || comm->endMagic != COMM_MAGIC)
    return MK_FAIL(ncclInvalidArgument, "%s: comm %p is not a valid communicator (destroyed or corrupted?)", fn,
                   (const void*)comm);
  return ncclSuccess;
}

ncclResult_t comm_ensure_ready(struct ncclComm* comm, const char* fn) {
  MK_CHECK(comm_check(comm, fn));
  switch (comm_state_get(comm)) {
    case COMM_STATE_READY: return ncclSuccess;
    case COMM_STATE_INITIALIZING:
      return MK_FAIL(ncclInvalidUsage, "%s: comm %p is still initializing (poll ncclCommGetAsyncError until "
                                       "ncclSuccess first)", fn, (void*)comm);
    case COMM_STATE_FAILED: {
      ncclResult_t res = comm_async_result(comm);
      MK_WARN("%s: comm %p failed to initialize (%s)", fn, (void*)comm, ncclGetErrorString(res));
      return res;
    }
    case COMM_STATE_FINALIZED: return MK_FAIL(ncclInvalidUsage, "%s: comm %p was finalized", fn, (void*)comm);
    default: return MK_FAIL(ncclInvalidUsage, "%s: comm %p was aborted", fn, (void*)comm);
  }
}
