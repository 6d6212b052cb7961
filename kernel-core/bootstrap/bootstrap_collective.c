/* Barriers and the subset allgather, built on the tagged messages. */
#include "bootstrap/bootstrap_internal.h"

/* Dissemination: in round k send to me + 2^k, receive from me - 2^k. The
 * peers of one barrier's rounds are distinct, so FIFO order per (peer, tag)
 * keeps consecutive barriers apart. */
static ncclResult_t bootstrap_dissemination(bootstrap_state_t* st, const int* ranks, int n, int me, int tag) {
  for (int mask = 1, round = 0; mask < n; mask <<= 1, round++) {
    int dst = (me + mask) % n, src = (me - mask + n) % n;
    int got = -1;
    MK_CHECK(bootstrap_send(st, ranks ? ranks[dst] : dst, tag, &round, sizeof(round)));
    MK_CHECK(bootstrap_recv(st, ranks ? ranks[src] : src, tag, &got, sizeof(got)));
    if (got != round)
      return MK_FAIL(ncclInternalError, "bootstrap: rank %d: barrier round %d got round %d", st->rank, round, got);
  }
  return ncclSuccess;
}

ncclResult_t bootstrap_barrier(bootstrap_state_t* st) {
  return bootstrap_dissemination(st, NULL, st->nRanks, st->rank, BOOTSTRAP_TAG_BARRIER);
}

static ncclResult_t bootstrap_subset_check(bootstrap_state_t* st, const int* ranks, int n, int me) {
  if (!ranks || n < 1 || me < 0 || me >= n || ranks[me] != st->rank)
    return MK_FAIL(ncclInvalidArgument, "bootstrap: rank %d: bad subset (n %d, me %d)", st->rank, n, me);
  return ncclSuccess;
}

ncclResult_t bootstrap_subset_barrier(bootstrap_state_t* st, const int* ranks, int n, int me) {
  MK_CHECK(bootstrap_subset_check(st, ranks, n, me));
  return bootstrap_dissemination(st, ranks, n, me, BOOTSTRAP_TAG_SUBSET_BARRIER);
}

ncclResult_t bootstrap_subset_allgather(bootstrap_state_t* st, const int* ranks, int n, int me, void* data,
                                        size_t size) {
  MK_CHECK(bootstrap_subset_check(st, ranks, n, me));
  char* buf = data;
  int next = ranks[(me + 1) % n], prev = ranks[(me - 1 + n) % n];
  for (int i = 0; i < n - 1; i++) {
    int sendSlice = (me - i + n) % n, recvSlice = (me - i - 1 + n) % n;
    MK_CHECK(bootstrap_send(st, next, BOOTSTRAP_TAG_SUBSET_ALLGATHER, buf + (size_t)sendSlice * size, size));
    MK_CHECK(bootstrap_recv(st, prev, BOOTSTRAP_TAG_SUBSET_ALLGATHER, buf + (size_t)recvSlice * size, size));
  }
  return ncclSuccess;
}
