/* ncclCommAbort, many times, wherever it may come: every abort returns
 * ncclSuccess within a bound (the maximum is printed), a collective it cuts
 * short returns an error, promptly, and after every round the process has
 * the threads, file descriptors and shared-memory segments it started
 * with. Each scenario runs in its own process (the driver, rank 0); each
 * round forks a fresh peer (rank 1). Inputs differ per rank and call; every
 * collective that succeeds, on either rank, is checked.
 *
 *   init     non-blocking init (config.blocking = 0) aborted while
 *            ncclInProgress: the peer never comes, comes late or at once.
 *            A blocking init cannot be aborted: ncclCommInitRank hands out
 *            the communicator only once it is ready, so no other thread
 *            has one to abort.
 *   coll     both ranks run K checked AllReduces; the peer stops; the
 *            driver's next one, on another thread, is aborted.
 *   destroy  the same, but the peer destroys its communicator; the abort
 *            comes while it does, or after.
 *   kill     the peer is SIGKILLed before or during the next collective;
 *            the driver aborts before its MKCCL_TIMEOUT, or once the
 *            collective failed by itself.
 *   hold     a tuner plugin (abort_hold_tuner.c) keeps the driver's
 *            collective inside the library past MKCCL_ABORT_WAIT_MS: the
 *            abort returns after the wait without freeing anything, and
 *            the collective, let go, returns an error and frees the comm.
 *
 *   test_fault_abort_stress ROUNDS [all|init|coll|destroy|kill|hold] [SEED]
 *   (NCCL_SHM_DISABLE=1 makes it cross the net) */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "nccl.h"
#include "proc_count.h"
#include "ranks.h"

#define WAIT_MS 500        /* MKCCL_ABORT_WAIT_MS for this test */
#define TIMEOUT_S 2        /* MKCCL_TIMEOUT for this test */
#define SLACK_MS 2500      /* teardown and scheduling on a loaded 2-core machine */
#define ABORT_BOUND_MS (WAIT_MS + SLACK_MS)
#define PROMPT_MS 1500     /* a collective cut short returns this soon */
#define HOLD_CAP_MS 20000  /* the tuner lets go by then, whatever happens */
#define SIDE_WAIT_MS 30000 /* one rank waiting for the other's step */
#define MAX_COUNT (256 * 1024)

typedef enum { SC_INIT, SC_COLL, SC_DESTROY, SC_KILL, SC_HOLD, SC_N } scenario_t;
static const char* sc_names[SC_N] = {"init", "coll", "destroy", "kill", "hold"};

/* One round, in memory both ranks of it see. */
typedef struct {
  ncclUniqueId id;
  volatile int idReady;
  int variant, calls; /* variant: the round's number; the peer runs `calls` checked AllReduces, the driver one more */
  size_t count;
  unsigned seed;
  volatile int driverInside; /* the driver's last call started */
  volatile int peerDestroying, peerDestroyed;
  volatile int peerRan; /* the peer's calls all returned (an abort before could cut the last in flight) */
  volatile int driverAborted;
} round_t;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void sleep_ms(double ms) {
  if (ms > 0) usleep((useconds_t)(ms * 1000));
}

/* Until *flag is set, at most ms; whether it was. */
static int wait_flag(volatile int* flag, double ms) {
  double end = now_ms() + ms;
  while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE) && now_ms() < end) usleep(200);
  return __atomic_load_n(flag, __ATOMIC_ACQUIRE);
}

static void set_flag(volatile int* flag) { __atomic_store_n(flag, 1, __ATOMIC_RELEASE); }

/* ---- the hold: test_abort_hold is called by abort_hold_tuner.c's getCollInfo ---- */
static volatile int hold_armed, hold_held, hold_release;

__attribute__((visibility("default"))) void test_abort_hold(void);
void test_abort_hold(void) {
  if (!__atomic_exchange_n(&hold_armed, 0, __ATOMIC_ACQ_REL)) return;
  set_flag(&hold_held);
  wait_flag(&hold_release, HOLD_CAP_MS);
}

/* ---- checked AllReduces ---- */
static void fill(float* in, size_t n, int rank, int call) {
  for (size_t i = 0; i < n; i++) in[i] = (float)((rank + 1) * (call + 1) + (int)(i % 17));
}

static void check_sum(const float* out, size_t n, int rank, int call) {
  for (size_t i = 0; i < n; i++) {
    float want = (float)(3 * (call + 1) + 2 * (int)(i % 17)); /* ranks 0 and 1 */
    if (out[i] != want) {
      fprintf(stderr, "rank %d call %d: element %zu is %g, want %g\n", rank, call, i, out[i], want);
      exit(1);
    }
  }
}

typedef struct {
  ncclComm_t comm;
  int rank, first, calls, holdAt; /* calls first..first+calls-1; holdAt: the one the tuner holds (-1: none) */
  size_t count;
  float *in, *out;
  volatile int started, ok, finished;
  ncclResult_t res; /* of the last call */
  double returnedAt;
} runner_t;

static void* runner_main(void* arg) {
  runner_t* r = arg;
  for (int c = r->first; c < r->first + r->calls; c++) {
    fill(r->in, r->count, r->rank, c);
    if (c == r->holdAt) __atomic_store_n(&hold_armed, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&r->started, c - r->first + 1, __ATOMIC_RELEASE);
    r->res = ncclAllReduce(r->in, r->out, r->count, ncclFloat, ncclSum, r->comm, NULL);
    r->returnedAt = now_ms();
    if (r->res != ncclSuccess) break;
    check_sum(r->out, r->count, r->rank, c);
    r->ok++;
  }
  set_flag(&r->finished);
  return NULL;
}

static void runner_setup(runner_t* r, ncclComm_t comm, int rank, int calls, size_t count) {
  memset(r, 0, sizeof(*r));
  r->comm = comm, r->rank = rank, r->calls = calls, r->count = count, r->holdAt = -1;
  r->in = malloc(count * sizeof(float));
  r->out = malloc(count * sizeof(float));
  CHECK(r->in && r->out);
}

static void runner_free(runner_t* r) {
  free(r->in);
  free(r->out);
}

/* ncclCommAbort, timed and checked; its duration in ms. */
static double timed_abort(ncclComm_t comm, const char* who) {
  double t0 = now_ms();
  ncclResult_t res = ncclCommAbort(comm);
  double took = now_ms() - t0;
  CHECK_MSG(res == ncclSuccess, "%s: ncclCommAbort returned %s", who, ncclGetErrorString(res));
  CHECK_MSG(took <= ABORT_BOUND_MS, "%s: ncclCommAbort took %.0f ms (bound %d)", who, took, ABORT_BOUND_MS);
  return took;
}

/* ---- the peer (rank 1): a fresh process each round ---- */
static ncclComm_t peer_init(round_t* r) {
  CHECK(wait_flag(&r->idReady, SIDE_WAIT_MS));
  ncclComm_t comm;
  CHECK_NCCL(ncclCommInitRank(&comm, 2, r->id, 1));
  return comm;
}

static void peer_run(ncclComm_t comm, round_t* r, int first, int calls) {
  runner_t run;
  runner_setup(&run, comm, 1, calls, r->count);
  run.first = first;
  runner_main(&run);
  CHECK_MSG(run.ok == calls, "peer: call %d of %d returned %s", run.ok, calls, ncclGetErrorString(run.res));
  runner_free(&run);
}

static void* peer_killer(void* arg) {
  round_t* r = arg;
  sleep_ms(r->seed % 4); /* before, while or after the call moves data */
  raise(SIGKILL);
  return NULL;
}

/* Non-blocking too; aborted by itself once the driver aborted, ready or not. */
static void peer_init_round(round_t* r) {
  if (r->variant % 3 == 0) return; /* never comes */
  CHECK(wait_flag(&r->idReady, SIDE_WAIT_MS));
  if (r->variant % 3 == 1) sleep_ms(r->seed % 40);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t comm = NULL;
  ncclResult_t res = ncclCommInitRankConfig(&comm, 2, r->id, 1, &config);
  CHECK_MSG(res == ncclInProgress || res == ncclSuccess, "peer: init returned %s", ncclGetErrorString(res));
  wait_flag(&r->driverAborted, SIDE_WAIT_MS);
  timed_abort(comm, "peer");
}

static int peer_main(scenario_t sc, round_t* r) {
  if (sc == SC_INIT) {
    peer_init_round(r);
    return 0;
  }
  ncclComm_t comm = peer_init(r);
  peer_run(comm, r, 0, r->calls);
  set_flag(&r->peerRan);
  if (sc == SC_KILL) {
    if (r->variant % 2 == 0) raise(SIGKILL);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, peer_killer, r) == 0);
    peer_run(comm, r, r->calls, 1); /* may complete before the kill: the driver checks what it got */
    pause();
  }
  if (sc == SC_DESTROY) {
    CHECK(wait_flag(&r->driverInside, SIDE_WAIT_MS));
    sleep_ms(r->seed % 10);
    set_flag(&r->peerDestroying);
    double t0 = now_ms();
    ncclResult_t res = ncclCommDestroy(comm);
    double took = now_ms() - t0;
    CHECK_MSG(took <= ABORT_BOUND_MS, "peer: ncclCommDestroy took %.0f ms", took);
    CHECK_MSG(res == ncclSuccess, "peer: ncclCommDestroy returned %s", ncclGetErrorString(res));
    set_flag(&r->peerDestroyed);
    return 0;
  }
  CHECK(wait_flag(&r->driverAborted, SIDE_WAIT_MS));
  if (r->seed % 2) timed_abort(comm, "peer");
  else CHECK_NCCL(ncclCommDestroy(comm));
  return 0;
}

/* ---- the driver (rank 0) ---- */
typedef struct {
  int threads, fds;
} baseline_t;

typedef struct {
  double abortMax, promptMax; /* ms: abort's duration; a cut collective's return after the abort */
  int inProgress;             /* init: aborts that came while ncclInProgress */
} stats_t;

static void leak_check(const baseline_t* b, pid_t peer, int round) {
  /* A thread that freed the comm, or an init thread let go, may still be
   * on its way out. */
  double end = now_ms() + 2000;
  while (proc_count_threads() != b->threads && now_ms() < end) usleep(1000);
  CHECK_MSG(proc_count_threads() == b->threads, "round %d: %d threads, %d before", round, proc_count_threads(),
            b->threads);
  CHECK_MSG(proc_count_fds() == b->fds, "round %d: %d fds, %d before", round, proc_count_fds(), b->fds);
  CHECK_MSG(proc_count_shm_mappings() == 0, "round %d: %d mkccl-shm mappings left", round, proc_count_shm_mappings());
  CHECK_MSG(proc_count_shm_segments(getpid()) == 0, "round %d: segments of this rank left in /dev/shm", round);
  CHECK_MSG(proc_count_shm_segments(peer) == 0, "round %d: segments of the peer left in /dev/shm", round);
}

/* The peer's end: exit 0, or SIGKILL when it was meant to die. */
static void peer_reap(pid_t pid, int killed, int round) {
  int st = 0;
  double end = now_ms() + SIDE_WAIT_MS;
  pid_t got;
  while ((got = waitpid(pid, &st, WNOHANG)) == 0 && now_ms() < end) usleep(1000);
  if (got == 0) {
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    CHECK_MSG(0, "round %d: the peer did not end within %d ms", round, SIDE_WAIT_MS);
  }
  if (killed) CHECK_MSG(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "round %d: peer status 0x%x", round, st);
  else CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "round %d: peer status 0x%x", round, st);
}

static void share_id(round_t* r) {
  CHECK_NCCL(ncclGetUniqueId(&r->id));
  set_flag(&r->idReady);
}

static void driver_init_round(round_t* r, stats_t* s) {
  share_id(r);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t comm = NULL;
  ncclResult_t res = ncclCommInitRankConfig(&comm, 2, r->id, 0, &config);
  CHECK_MSG(res == ncclInProgress || res == ncclSuccess, "init returned %s", ncclGetErrorString(res));
  sleep_ms(r->seed % 40);
  ncclResult_t async = ncclInProgress;
  CHECK_NCCL(ncclCommGetAsyncError(comm, &async));
  if (async == ncclInProgress) s->inProgress++;
  CHECK_MSG(async == ncclInProgress || async == ncclSuccess, "init failed: %s", ncclGetErrorString(async));
  double took = timed_abort(comm, "driver");
  if (took > s->abortMax) s->abortMax = took;
  set_flag(&r->driverAborted);
}

/* The driver's last call is in (it cannot end by itself but for a kill
 * during it): the scenario decides when the abort comes. */
static void driver_coll_round(scenario_t sc, round_t* r, pid_t peer, stats_t* s) {
  share_id(r);
  ncclComm_t comm;
  CHECK_NCCL(ncclCommInitRank(&comm, 2, r->id, 0));
  runner_t run;
  runner_setup(&run, comm, 0, r->calls + 1, r->count);
  if (sc == SC_HOLD) run.holdAt = r->calls;
  pthread_t t;
  CHECK(pthread_create(&t, NULL, runner_main, &run) == 0);
  double end = now_ms() + SIDE_WAIT_MS;
  while (__atomic_load_n(&run.started, __ATOMIC_ACQUIRE) < r->calls + 1 &&
         !__atomic_load_n(&run.finished, __ATOMIC_ACQUIRE) && now_ms() < end)
    usleep(200);
  /* A killed peer's socket reset may cut the call it had just finished, on
   * this side still in flight. */
  int cutEarly = sc == SC_KILL && __atomic_load_n(&run.finished, __ATOMIC_ACQUIRE) && run.ok == r->calls - 1;
  CHECK_MSG(run.started == r->calls + 1 || cutEarly, "the driver's call %d never started (%d ok: %s)", r->calls + 1,
            run.ok, ncclGetErrorString(run.res));
  sleep_ms(3); /* past the call's entry checks, inside it */
  set_flag(&r->driverInside);
  int mayComplete = 0, cutByAbort = 1;
  switch (sc) {
    case SC_COLL:
      CHECK(wait_flag(&r->peerRan, SIDE_WAIT_MS));
      sleep_ms(r->seed % 30);
      break;
    case SC_DESTROY:
      CHECK(wait_flag(r->variant % 2 ? &r->peerDestroyed : &r->peerDestroying, SIDE_WAIT_MS));
      sleep_ms(r->seed % (r->variant % 2 ? 20 : 3));
      cutByAbort = 0; /* over the net the closed sockets may end it first */
      break;
    case SC_KILL:
      peer_reap(peer, 1, r->variant);
      mayComplete = r->variant % 2 == 1;
      cutByAbort = 0;
      if (r->variant % 4 >= 2) { /* the collective fails by itself (closed socket or MKCCL_TIMEOUT) */
        CHECK_MSG(wait_flag(&run.finished, (TIMEOUT_S * 1000 + SLACK_MS) + 1000.0),
                  "the collective did not end %d s after its peer died", TIMEOUT_S);
      } else {
        sleep_ms(r->seed % 200);
      }
      break;
    case SC_HOLD:
      CHECK(wait_flag(&hold_held, SIDE_WAIT_MS));
      CHECK(wait_flag(&r->peerRan, SIDE_WAIT_MS));
      break;
    default: break;
  }
  if (cutByAbort)
    CHECK_MSG(!__atomic_load_n(&run.finished, __ATOMIC_ACQUIRE), "call %d returned %s before the abort", r->calls + 1,
              ncclGetErrorString(run.res));
  double abortAt = now_ms();
  double took = timed_abort(comm, "driver");
  if (took > s->abortMax) s->abortMax = took;
  set_flag(&r->driverAborted);
  double cutFrom = abortAt;
  if (sc == SC_HOLD) {
    CHECK_MSG(took >= WAIT_MS, "held: ncclCommAbort returned after %.0f ms, before MKCCL_ABORT_WAIT_MS", took);
    CHECK_MSG(!__atomic_load_n(&run.finished, __ATOMIC_ACQUIRE), "held: the collective returned %s while held",
              ncclGetErrorString(run.res));
    sleep_ms(r->seed % 50);
    cutFrom = now_ms();
    set_flag(&hold_release); /* the collective leaves, and frees the comm */
  }
  CHECK(pthread_join(t, NULL) == 0);
  int okWant = r->calls;
  if (mayComplete && run.ok == r->calls + 1) okWant = r->calls + 1;
  if (sc == SC_KILL && run.ok == r->calls - 1) okWant = r->calls - 1;
  CHECK_MSG(run.ok == okWant, "the driver's calls: %d ok, want %d (last: %s)", run.ok, okWant,
            ncclGetErrorString(run.res));
  if (run.ok < run.calls) {
    CHECK_MSG(run.res != ncclSuccess && run.res != ncclInProgress, "the cut collective returned %d", (int)run.res);
    double late = run.returnedAt - cutFrom;
    CHECK_MSG(late <= PROMPT_MS, "the cut collective returned %.0f ms after the abort", late);
    if (late > s->promptMax) s->promptMax = late;
  }
  runner_free(&run);
}

static void driver_round(scenario_t sc, int k, unsigned seed, round_t* r, const baseline_t* b, stats_t* s) {
  static const size_t counts[] = {2, 1000, MAX_COUNT}; /* a lone small one, and ones through the group path */
  memset(r, 0, sizeof(*r));
  r->seed = seed;
  r->variant = k;
  r->calls = (int)(seed / 7 % 4);
  r->count = counts[seed / 29 % 3];
  hold_armed = hold_held = hold_release = 0;
  pid_t pid = fork(); /* the driver has no thread now: leak_check saw to it */
  CHECK(pid >= 0);
  if (pid == 0) _exit(peer_main(sc, r));
  if (sc == SC_INIT) driver_init_round(r, s);
  else driver_coll_round(sc, r, pid, s);
  if (sc != SC_KILL) peer_reap(pid, 0, k);
  leak_check(b, pid, k);
}

typedef struct {
  scenario_t sc;
  int rounds;
  unsigned seed;
} driver_arg_t;

static int driver_main(int rank, int n, void* arg) {
  (void)rank, (void)n;
  driver_arg_t* a = arg;
  if (a->sc == SC_HOLD) setenv("NCCL_TUNER_PLUGIN", HOLD_TUNER, 1);
  round_t* r = ranks_shared_alloc(sizeof(round_t));
  CHECK(r);
  baseline_t b = {proc_count_threads(), proc_count_fds()};
  stats_t s = {0, 0, 0};
  double t0 = now_ms();
  for (int k = 0; k < a->rounds; k++) {
    unsigned seed = a->seed + 7919u * (unsigned)k;
    driver_round(a->sc, k, rand_r(&seed), r, &b, &s);
  }
  if (a->sc == SC_INIT) CHECK_MSG(s.inProgress > 0, "no abort came while the init was in progress");
  printf("%-7s %3d rounds in %5.1f s: ncclCommAbort at most %.1f ms", sc_names[a->sc], a->rounds,
         (now_ms() - t0) / 1e3, s.abortMax);
  if (a->sc == SC_INIT) printf(", %d while ncclInProgress", s.inProgress);
  else printf(", cut collective returned at most %.1f ms after it", s.promptMax);
  printf("; threads, fds, shm as before\n");
  fflush(stdout);
  return 0;
}

int main(int argc, char** argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 3;
  const char* which = argc > 2 ? argv[2] : "all";
  unsigned seed = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 0) : (unsigned)time(NULL);
  char wait[32], timeout[32];
  snprintf(wait, sizeof(wait), "%d", WAIT_MS);
  snprintf(timeout, sizeof(timeout), "%d", TIMEOUT_S);
  setenv("MKCCL_ABORT_WAIT_MS", wait, 1);
  setenv("MKCCL_TIMEOUT", timeout, 1);
  printf("seed %u (argument 3 repeats it)\n", seed);
  fflush(stdout);
  int ran = 0;
  for (int sc = 0; sc < SC_N; sc++) {
    if (strcmp(which, "all") != 0 && strcmp(which, sc_names[sc]) != 0) continue;
    driver_arg_t a = {(scenario_t)sc, rounds, seed + (unsigned)sc};
    CHECK_MSG(ranks_run(1, driver_main, &a, 30 + rounds * 20) == 0, "scenario %s failed", sc_names[sc]);
    ran++;
  }
  CHECK_MSG(ran > 0, "unknown scenario %s", which);
  return 0;
}
