/* Who frees an aborted communicator (comm/comm_abort.c), on bare comm
 * objects with threads that enter and leave them:
 * - held: two threads stay inside past the wait; comm_abort_free returns
 *   after the wait without freeing; the first to leave frees nothing, the
 *   last frees it;
 * - none inside: comm_abort_free frees it at once, without waiting;
 * - race: threads leave at random moments around the end of the wait;
 *   every round exactly one of the abort and the leavers frees the comm.
 *
 *   test_comm_abort [RACE_ROUNDS] */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "comm/comm.h"
#include "nccl.h"

#define RACERS 3

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static struct ncclComm* bare_comm(void) {
  bootstrap_handle_t h;
  memset(&h, 0, sizeof(h));
  h.magic = 1;
  struct ncclComm* comm;
  CHECK_NCCL(comm_alloc(2, 0, &h, 1, -1, NULL, NULL, "test", &comm));
  return comm;
}

/* Quarantined after comm_free: the poison is still readable. */
static int comm_freed(const struct ncclComm* comm) { return comm->startMagic == COMM_MAGIC_DEAD; }

static void test_held(void) {
  struct ncclComm* comm = bare_comm();
  comm_busy_enter(comm);
  comm_busy_enter(comm);
  double t0 = now_ms();
  CHECK_EQ_INT(comm_abort_free(comm, 100), 0);
  double took = now_ms() - t0;
  CHECK_MSG(took >= 100 && took < 2000, "comm_abort_free took %.1f ms, waiting 100", took);
  CHECK(!comm_freed(comm));
  CHECK_EQ_INT(comm_state_get(comm), COMM_STATE_ABORTED);
  CHECK_EQ_INT(comm_busy_count(comm), 2);
  CHECK_EQ_INT(comm_busy_leave(comm), 0);
  CHECK(!comm_freed(comm));
  CHECK_EQ_INT(comm_busy_leave(comm), 1);
  CHECK(comm_freed(comm));
}

static void test_none_inside(void) {
  struct ncclComm* comm = bare_comm();
  comm_busy_enter(comm);
  CHECK_EQ_INT(comm_busy_leave(comm), 0); /* not orphaned: the leaver frees nothing */
  double t0 = now_ms();
  CHECK_EQ_INT(comm_abort_free(comm, 5000), 1);
  CHECK_MSG(now_ms() - t0 < 1000, "comm_abort_free waited %.1f ms with nobody inside", now_ms() - t0);
  CHECK(comm_freed(comm));
}

typedef struct {
  struct ncclComm* comm;
  int delayUs;
  int freed;
} racer_t;

static void* racer_main(void* arg) {
  racer_t* r = arg;
  usleep((useconds_t)r->delayUs);
  r->freed = comm_busy_leave(r->comm);
  return NULL;
}

static void test_race(int rounds) {
  unsigned seed = 12345;
  int byAbort = 0;
  for (int k = 0; k < rounds; k++) {
    struct ncclComm* comm = bare_comm();
    racer_t rs[RACERS];
    pthread_t ts[RACERS];
    for (int i = 0; i < RACERS; i++) {
      comm_busy_enter(comm);
      rs[i] = (racer_t){comm, (int)(rand_r(&seed) % 3000), 0};
    }
    for (int i = 0; i < RACERS; i++) CHECK(pthread_create(&ts[i], NULL, racer_main, &rs[i]) == 0);
    int freed = comm_abort_free(comm, (int64_t)(rand_r(&seed) % 3));
    byAbort += freed;
    for (int i = 0; i < RACERS; i++) {
      CHECK(pthread_join(ts[i], NULL) == 0);
      freed += rs[i].freed;
    }
    CHECK_MSG(freed == 1, "round %d: the comm was freed %d times", k, freed);
    CHECK(comm_freed(comm));
  }
  printf("race: %d rounds, each comm freed once (%d by the abort, %d by the last leaver)\n", rounds, byAbort,
         rounds - byAbort);
}

int main(int argc, char** argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 2000;
  test_held();
  test_none_inside();
  test_race(rounds);
  printf("comm_abort: ok\n");
  return 0;
}
