/* Who frees an aborted communicator. Threads inside the library on a comm
 * (a group or lone collective running it, its non-blocking init) count in
 * comm->busy. ncclCommAbort raises the abort flag, which ends their waits,
 * and waits for them up to MKCCL_ABORT_WAIT_MS. One still inside then (a
 * plugin call that does not return, a wait that misses the flag) still
 * uses the comm's memory: abort marks the comm orphaned and returns, and
 * the last thread to leave frees it. Exactly one party tears down:
 * whichever of abort and the last leaver comes last. */
#include <unistd.h>

#include "base/clock.h"
#include "base/err.h"
#include "comm/comm.h"

#define COMM_BUSY_ORPHAN (1 << 30) /* abort gave up waiting; the rest of busy counts callers */

static void comm_abort_teardown(struct ncclComm* comm, const char* who) {
  int rank = comm->rank, nRanks = comm->nRanks;
  comm_stages_destroy(comm);
  comm_free(comm);
  MK_INFO(NCCL_INIT, "comm %p rank %d nRanks %d - Abort COMPLETE (%s)", (void*)comm, rank, nRanks, who);
}

void comm_busy_enter(struct ncclComm* comm) { __atomic_add_fetch(&comm->busy, 1, __ATOMIC_ACQ_REL); }

int comm_busy_leave(struct ncclComm* comm) {
  /* The last touch unless orphaned: an abort may free the comm right after. */
  if (__atomic_sub_fetch(&comm->busy, 1, __ATOMIC_ACQ_REL) != COMM_BUSY_ORPHAN) return 0;
  comm_abort_teardown(comm, "by the last thread to leave it");
  return 1;
}

int comm_busy_count(const struct ncclComm* comm) {
  return __atomic_load_n(&comm->busy, __ATOMIC_ACQUIRE) & ~COMM_BUSY_ORPHAN;
}

int comm_busy_wait(struct ncclComm* comm, int64_t waitMs, int keep) {
  int64_t end = mk_now_ns() + (waitMs > 0 ? waitMs : 0) * 1000000;
  int inside;
  while ((inside = comm_busy_count(comm) - keep) > 0 && mk_now_ns() < end) usleep(1000);
  return inside;
}

/* 1: nobody is inside, the caller tears down; 0: the last to leave will. */
static int comm_busy_hand_off(struct ncclComm* comm) {
  int old = __atomic_load_n(&comm->busy, __ATOMIC_ACQUIRE);
  for (;;) {
    if ((old & ~COMM_BUSY_ORPHAN) == 0) return 1;
    if (__atomic_compare_exchange_n(&comm->busy, &old, old | COMM_BUSY_ORPHAN, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
      return 0;
  }
}

int comm_abort_free(struct ncclComm* comm, int64_t waitMs) {
  int inside = comm_busy_wait(comm, waitMs, 0);
  __atomic_store_n(&comm->state, COMM_STATE_ABORTED, __ATOMIC_RELEASE);
  /* An init thread that left only has its return ahead; one still inside
   * is let go, to free the comm itself if it is the last. */
  if (inside == 0) comm_init_thread_reap(comm, 1);
  else comm_init_thread_detach(comm);
  int rank = comm->rank; /* once handed off, the last leaver may free it at any time */
  if (comm_busy_hand_off(comm)) {
    comm_abort_teardown(comm, "by ncclCommAbort");
    return 1;
  }
  MK_WARN("ncclCommAbort: comm %p rank %d: %d thread(s) still inside it (a collective, group or init on it) %lld ms "
          "after the abort flag rose (MKCCL_ABORT_WAIT_MS): returning, the last to leave frees it",
          (void*)comm, rank, inside, (long long)waitMs);
  return 0;
}
