/* Ring allgather: n-1 steps; in step i each rank passes on the
 * slice it received in step i-1 (its own first). Each step sends and
 * receives at once, so slices of any size cannot block the ring. */
#include "bootstrap/bootstrap_internal.h"

ncclResult_t bootstrap_allgather(bootstrap_state_t* st, void* data, size_t size) {
  int n = st->nRanks, rank = st->rank;
  char* buf = data;
  int64_t deadline = bootstrap_deadline(st);
  ncclResult_t res = ncclSuccess;
  pthread_mutex_lock(&st->ringLock);
  for (int i = 0; i < n - 1; i++) {
    int sendSlice = (rank - i + n) % n, recvSlice = (rank - i - 1 + n) % n;
    int rc = sock_sendrecv_all(st->ringSendFd, buf + (size_t)sendSlice * size, size, st->ringRecvFd,
                               buf + (size_t)recvSlice * size, size, deadline, st->abortFlag);
    if (rc != SOCK_OK) {
      res = MK_FAIL(bootstrap_result(rc), "bootstrap: rank %d: ring allgather step %d of %d: %s", rank, i + 1, n - 1,
                    bootstrap_sock_error(rc));
      break;
    }
  }
  pthread_mutex_unlock(&st->ringLock);
  return res;
}
