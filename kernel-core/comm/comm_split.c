/* ncclCommSplit over the parent's bootstrap: allgather (color, key), rank
 * within a colour by key then parent rank; the colour's first rank makes a
 * new unique id (never NCCL_COMM_ID's) and sends it to the others. A rank
 * with NCCL_SPLIT_NOCOLOR takes part and gets no communicator.
 *
 * ncclCommShrink: the excluded ranks take no part (they may be dead), so
 * nothing is gathered: every survivor knows the members from the list, in
 * parent order, and the first of them sends the new id to the others. */
#include <stdlib.h>

#include "base/err.h"
#include "base/param.h"
#include "comm/comm.h"

typedef struct {
  int32_t color, key, rank;
} comm_split_entry_t;

static int comm_split_cmp(const void* a, const void* b) {
  const comm_split_entry_t *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* The new id: the leader makes it (and hosts its root), the others receive it. */
static ncclResult_t comm_split_id(struct ncclComm* parent, const comm_split_entry_t* members, int n, int me,
                                  bootstrap_handle_t* h) {
  if (me != 0) return bootstrap_recv(parent->bootstrap, members[0].rank, BOOTSTRAP_TAG_SPLIT, h, sizeof(*h));
  MK_CHECK(bootstrap_handle_create(h, 0));
  for (int i = 1; i < n; i++) {
    ncclResult_t res = bootstrap_send(parent->bootstrap, members[i].rank, BOOTSTRAP_TAG_SPLIT, h, sizeof(*h));
    if (res != ncclSuccess) {
      bootstrap_root_finish(h, 1);
      return res;
    }
  }
  return ncclSuccess;
}

/* A revoked parent (its abort flag raised) still serves as a parent: its
 * bootstrap's waits stop watching the flag for the exchange. */
static volatile uint32_t* comm_parent_unwatch(struct ncclComm* parent) {
  if (!__atomic_load_n(&parent->revoked, __ATOMIC_ACQUIRE)) return parent->abortFlag;
  return bootstrap_abort_watch(parent->bootstrap, NULL);
}

static void comm_parent_rewatch(struct ncclComm* parent, volatile uint32_t* watched) {
  if (__atomic_load_n(&parent->revoked, __ATOMIC_ACQUIRE)) bootstrap_abort_watch(parent->bootstrap, watched);
}

/* A thread still inside after the wait may be using the bootstrap a split
 * would use: the comm is not revoked then, and only an abort is left. */
ncclResult_t comm_revoke(struct ncclComm* parent, int selfInside) {
  __atomic_store_n(parent->abortFlag, 1, __ATOMIC_RELEASE); /* every wait of its work ends */
  int64_t waitMs = param_MKCCL_ABORT_WAIT_MS();
  int inside = comm_busy_wait(parent, waitMs, selfInside);
  if (inside > 0)
    return MK_FAIL(ncclInternalError, "revoking comm %p rank %d: %d thread(s) still inside it %lld ms after the flag "
                   "rose (MKCCL_ABORT_WAIT_MS): not revoked; ncclCommAbort it", (void*)parent, parent->rank, inside,
                   (long long)waitMs);
  __atomic_store_n(&parent->revoked, 1, __ATOMIC_RELEASE);
  MK_INFO(NCCL_INIT, "comm %p rank %d: revoked", (void*)parent, parent->rank);
  return ncclSuccess;
}

ncclResult_t comm_split(struct ncclComm* parent, int color, int key, const ncclConfig_t* config,
                        struct ncclComm** out, const char* fn) {
  int n = parent->nRanks;
  comm_split_entry_t* all = calloc((size_t)n, sizeof(*all));
  if (!all) return MK_FAIL(ncclSystemError, "%s: out of memory", fn);
  ncclResult_t res = ncclSuccess;
  all[parent->rank] = (comm_split_entry_t){color, key, parent->rank};
  volatile uint32_t* watched = comm_parent_unwatch(parent);
  res = bootstrap_allgather(parent->bootstrap, all, sizeof(*all));
  if (res != ncclSuccess) {
    comm_parent_rewatch(parent, watched);
    goto done;
  }
  if (color == NCCL_SPLIT_NOCOLOR) {
    comm_parent_rewatch(parent, watched);
    *out = NULL;
    goto done;
  }
  int m = 0;
  for (int r = 0; r < n; r++)
    if (all[r].color == color) all[m++] = all[r]; /* in place: m <= r */
  qsort(all, (size_t)m, sizeof(*all), comm_split_cmp);
  int me = 0;
  while (all[me].rank != parent->rank) me++;
  bootstrap_handle_t h;
  res = comm_split_id(parent, all, m, me, &h);
  comm_parent_rewatch(parent, watched);
  if (res != ncclSuccess) goto done;
  MK_INFO(NCCL_INIT, "comm %p rank %d: split color %d key %d -> rank %d of %d", (void*)parent, parent->rank, color, key,
          me, m);
  res = comm_create(out, m, &h, 1, me, parent->cudaDev, config, &parent->config, fn);
done:
  free(all);
  return res;
}

ncclResult_t comm_shrink(struct ncclComm* parent, const int* exclude, int nExclude, const ncclConfig_t* config,
                         int flags, struct ncclComm** out, const char* fn) {
  int n = parent->nRanks;
  char* out_of = calloc((size_t)n, 1);
  comm_split_entry_t* members = calloc((size_t)n, sizeof(*members));
  ncclResult_t res = ncclSuccess;
  if (!out_of || !members) {
    res = MK_FAIL(ncclSystemError, "%s: out of memory", fn);
    goto done;
  }
  for (int i = 0; i < nExclude; i++) out_of[exclude[i]] = 1;
  int m = 0, me = -1;
  for (int r = 0; r < n; r++) {
    if (out_of[r]) continue;
    if (r == parent->rank) me = m;
    members[m++] = (comm_split_entry_t){0, 0, r};
  }
  /* ABORT: end whatever the parent still runs (a failed peer's collective)
   * as ncclCommRevoke does, then talk to the survivors regardless. */
  if (flags & NCCL_SHRINK_ABORT) MK_CHECK_GOTO(comm_revoke(parent, 1), res, done); /* ncclCommShrink is inside */
  volatile uint32_t* watched = comm_parent_unwatch(parent);
  bootstrap_handle_t h;
  res = comm_split_id(parent, members, m, me, &h);
  comm_parent_rewatch(parent, watched);
  if (res != ncclSuccess) goto done;
  MK_INFO(NCCL_INIT, "comm %p rank %d: shrink without %d rank(s) -> rank %d of %d", (void*)parent, parent->rank,
          nExclude, me, m);
  res = comm_create(out, m, &h, 1, me, parent->cudaDev, config, &parent->config, fn);
done:
  free(members);
  free(out_of);
  return res;
}
