/* ncclCommSplit over the parent's bootstrap: allgather (color, key), rank
 * within a colour by key then parent rank; the colour's first rank makes a
 * new unique id (never NCCL_COMM_ID's) and sends it to the others. A rank
 * with NCCL_SPLIT_NOCOLOR takes part and gets no communicator. */
#include <stdlib.h>

#include "base/err.h"
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

ncclResult_t comm_split(struct ncclComm* parent, int color, int key, const ncclConfig_t* config,
                        struct ncclComm** out, const char* fn) {
  int n = parent->nRanks;
  comm_split_entry_t* all = calloc((size_t)n, sizeof(*all));
  if (!all) return MK_FAIL(ncclSystemError, "%s: out of memory", fn);
  ncclResult_t res = ncclSuccess;
  all[parent->rank] = (comm_split_entry_t){color, key, parent->rank};
  MK_CHECK_GOTO(bootstrap_allgather(parent->bootstrap, all, sizeof(*all)), res, done);
  if (color == NCCL_SPLIT_NOCOLOR) {
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
  MK_CHECK_GOTO(comm_split_id(parent, all, m, me, &h), res, done);
  MK_INFO(NCCL_INIT, "comm %p rank %d: split color %d key %d -> rank %d of %d", (void*)parent, parent->rank, color, key,
          me, m);
  res = comm_create(out, m, &h, 1, me, parent->cudaDev, config, &parent->config, fn);
done:
  free(all);
  return res;
}
