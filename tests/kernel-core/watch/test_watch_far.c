/* A departure heard from farther round the ring (watch/watch_far.c), on
 * bare comm objects (no sockets, no watch thread): the failure message of
 * a rank that left after N collectives fails a rank past them at once, and
 * a rank still in collective N only when it enters N + 1; a send to the
 * departed rank fails then, one to another rank does not; a failure of
 * another kind fails at once. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "comm/comm.h"
#include "nccl.h"
#include "watch/watch_proto.h"

#define TEXT "rank 1 (host h, pid 9) left the communicator after 3 collective(s)"

static struct ncclComm* bare(uint64_t entered, uint64_t done) {
  bootstrap_handle_t h;
  memset(&h, 0, sizeof(h));
  h.magic = 1;
  struct ncclComm* comm;
  CHECK_NCCL(comm_alloc(3, 0, &h, 1, -1, NULL, NULL, "test", &comm));
  watch_comm_t* w = &comm->watch;
  w->listenFd = w->prevFd = w->nextFd = -1;
  w->leftAt[0] = w->leftAt[1] = w->farAt = UINT64_MAX;
  pthread_mutex_init(&w->lock, NULL);
  comm->asyncResult = ncclSuccess; /* as after its init */
  w->rec.collEntered = entered;
  w->rec.collDone = done;
  return comm;
}

static watch_msg_t failure(int kind, uint64_t seq) {
  watch_msg_t m;
  memset(&m, 0, sizeof(m));
  m.type = WATCH_MSG_FAIL;
  m.from = 2;
  m.kind = kind;
  m.subject = 1;
  m.seq = seq;
  snprintf(m.text, sizeof(m.text), "%s", TEXT);
  return m;
}

static int failed(struct ncclComm* comm) { return watch_failure(comm, NULL, 0) != WATCH_FAIL_NONE; }

static void expect_failed(struct ncclComm* comm, const char* when) {
  char text[WATCH_TEXT_MAX];
  CHECK_MSG(watch_failure(comm, text, sizeof(text)) == WATCH_FAIL_LEFT, "%s: not failed as a departure", when);
  CHECK_MSG(strstr(text, TEXT), "%s: the failure says '%s'", when, text);
  CHECK_MSG(__atomic_load_n(comm->abortFlag, __ATOMIC_ACQUIRE), "%s: abort flag down", when);
  CHECK_EQ_INT(__atomic_load_n(&comm->asyncResult, __ATOMIC_ACQUIRE), ncclRemoteError); /* a bare comm: no state to ask */
}

int main(void) {
  /* Still in the departed rank's last collective: nothing yet; the next
   * collective fails, with the departure's text. */
  struct ncclComm* comm = bare(3, 2);
  watch_msg_t m = failure(WATCH_FAIL_LEFT, 3);
  watch_fail_heard(comm, &m, -1);
  CHECK_MSG(!failed(comm) && !__atomic_load_n(comm->abortFlag, __ATOMIC_ACQUIRE),
            "a rank finishing collective 3 failed on a departure after 3");
  comm->watch.rec.collDone = 3; /* collective 3 completed */
  CHECK_EQ_INT(watch_op_enter(comm, 2, 0, 8, ncclInt8, 2), ncclSuccess); /* a send to another rank */
  CHECK(!failed(comm));
  CHECK_EQ_INT(watch_op_enter(comm, 1, 0, 8, ncclFloat, -1), ncclRemoteError);
  expect_failed(comm, "collective 4 entered");
  CHECK_MSG(strstr(ncclGetLastError(comm), TEXT), "the last error: %s", ncclGetLastError(comm));
  comm_free(comm);

  /* Already in collective 4: at once. */
  comm = bare(4, 3);
  m = failure(WATCH_FAIL_LEFT, 3);
  watch_fail_heard(comm, &m, -1);
  expect_failed(comm, "in collective 4");
  comm_free(comm);

  /* Between calls, all done: a send to the departed rank fails. */
  comm = bare(3, 3);
  m = failure(WATCH_FAIL_ABORTED, 3);
  watch_fail_heard(comm, &m, -1);
  CHECK(!failed(comm));
  CHECK_EQ_INT(watch_op_enter(comm, 2, 0, 8, ncclInt8, 1), ncclRemoteError);
  CHECK_MSG(watch_failure(comm, NULL, 0) == WATCH_FAIL_ABORTED, "not failed as an abort");
  comm_free(comm);

  /* Two departures heard: the earlier one rules. */
  comm = bare(2, 2);
  m = failure(WATCH_FAIL_LEFT, 5);
  watch_fail_heard(comm, &m, -1);
  m = failure(WATCH_FAIL_LEFT, 2);
  watch_fail_heard(comm, &m, -1);
  CHECK(!failed(comm));
  CHECK_EQ_INT(watch_op_enter(comm, 1, 0, 8, ncclFloat, -1), ncclRemoteError);
  comm_free(comm);

  /* A death (no count of collectives) fails at once, wherever the rank is. */
  comm = bare(3, 2);
  m = failure(WATCH_FAIL_DIED, UINT64_MAX);
  watch_fail_heard(comm, &m, -1);
  CHECK_MSG(watch_failure(comm, NULL, 0) == WATCH_FAIL_DIED, "a death heard from afar did not fail the comm");
  comm_free(comm);
  printf("departures heard from afar: failed where passed, deferred where not, deaths at once\n");
  return 0;
}
