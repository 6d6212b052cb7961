/* The process's proxy thread: started by the first communicator that needs
 * it, stopped with the last. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/err.h"
#include "base/param.h"
#include "proxy/proxy.h"
#include "proxy/proxy_internal.h"

static struct {
  pthread_mutex_t lifecycle; /* attach/detach, start/stop: held across the join */
  pthread_mutex_t lock;      /* stop and the sleep/wake handshake */
  pthread_cond_t wake;
  int nClients;
  int stop;
  _Atomic int sleeping;
  int running;
  pthread_t thread;
  proxy_loop_t* loops[PROXY_LANES];
  pthread_mutex_t freeLock;
  proxy_op_t* freeList;
} proxy = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, 0, 0, {NULL},
           PTHREAD_MUTEX_INITIALIZER, NULL};

/* A lane's rounds run under its lock, so a calling thread that waits on the
 * net can progress the ops itself (proxy_progress_help) instead of handing
 * off to the proxy thread and back: on few cores that hand-off is most of
 * the latency. Separate lanes let threads waiting on different channels
 * each move their own channel's traffic at the same time. */
static pthread_mutex_t proxy_round_lock[PROXY_LANES];
static pthread_once_t proxy_locks_once = PTHREAD_ONCE_INIT;
static int proxy_channel_lanes = -1; /* MKCCL_PROXY_LANES, read once */

static void proxy_locks_init(void) {
  for (int l = 0; l < PROXY_LANES; l++) pthread_mutex_init(&proxy_round_lock[l], NULL);
  int64_t n = param_MKCCL_PROXY_LANES();
  __atomic_store_n(&proxy_channel_lanes, n < 0 ? 0 : n > PROXY_CHANNEL_LANES ? PROXY_CHANNEL_LANES : (int)n,
                   __ATOMIC_RELEASE);
}

int proxy_lane_for(int channelId, int concurrent) {
  pthread_once(&proxy_locks_once, proxy_locks_init);
  int n = __atomic_load_n(&proxy_channel_lanes, __ATOMIC_ACQUIRE);
  return concurrent && n > 0 && channelId >= 0 ? 1 + channelId % n : 0;
}

/* Whether a lane has neither queued nor active ops (a cheap look, no lock). */
static int proxy_lane_empty(proxy_loop_t* loop) {
  op_queue_t* q = &loop->queue;
  return __atomic_load_n(&loop->nActive, __ATOMIC_ACQUIRE) == 0 && atomic_load(&q->head) == &q->stub &&
         atomic_load(&q->tail) == &q->stub && atomic_load(&q->stub.next) == NULL;
}

/* A round of one lane whose lock the caller took; releases it. Adds the
 * lane's active ops to *active and clears *idle when something moved. */
static void proxy_lane_round(int lane, int* active, int* idle) {
  int laneIdle = 1;
  *active += proxy_loop_round(proxy.loops[lane], &laneIdle);
  pthread_mutex_unlock(&proxy_round_lock[lane]);
  if (!laneIdle) *idle = 0;
}

/* One round over every lane with work, skipping those another thread is
 * in (it moves them). When every such lane is taken, wait for the first
 * one's lock and run it then, as a single lock always did: spinning on the
 * locks would take a CPU from the threads in them where ranks share few
 * cores. */
static int proxy_round(int* idleOut) {
  int active = 0, idle = 1, ran = 0, busy = -1;
  for (int l = 0; l < PROXY_LANES; l++) {
    proxy_loop_t* loop = proxy.loops[l];
    if (!loop || proxy_lane_empty(loop)) continue;
    if (pthread_mutex_trylock(&proxy_round_lock[l]) != 0) {
      if (busy < 0) busy = l;
      continue;
    }
    ran = 1;
    proxy_lane_round(l, &active, &idle);
  }
  if (busy >= 0) {
    if (ran) active++; /* its ops are not done; the thread in it moves them */
    else {
      pthread_mutex_lock(&proxy_round_lock[busy]);
      proxy_lane_round(busy, &active, &idle);
    }
  }
  *idleOut = idle;
  return active;
}

int proxy_progress_help(int lane) {
  if (lane < 0 || lane >= PROXY_LANES) return 0;
  if (!proxy.loops[lane] || pthread_mutex_trylock(&proxy_round_lock[lane]) != 0) return 0;
  int active = 0, idle = 1;
  proxy_lane_round(lane, &active, &idle);
  return !idle;
}

/* Up to *budget of the client's active ops in one lane, under the lane's
 * round lock: an active list only changes inside a round. */
static void proxy_dump_lane(proxy_client_t* client, const char* why, int lane, int* budget) {
  pthread_mutex_lock(&proxy_round_lock[lane]);
  for (proxy_op_t* op = proxy.loops[lane] ? proxy.loops[lane]->activeHead : NULL; op && *budget > 0;
       op = op->nextActive) {
    if (op->client != client) continue;
    (*budget)--;
    const mkcclProxyOp_v1* a = &op->args;
    for (int s = 0; s < a->nsubs && s < 4; s++) {
      const mkcclProxySubOp_v1* u = &a->subs[s];
      MK_WARN("%s: rank %d proxy op %llu lane %d pattern %d state %d sub %d/%d ch %d peer %d nsteps %llu base %llu "
              "posted %llu received %llu transmitted %llu done %llu", why, client->rank,
              (unsigned long long)a->opCount, lane, a->pattern, a->state, s, a->nsubs, u->channelId, u->peer,
              (unsigned long long)u->nsteps, (unsigned long long)u->base, (unsigned long long)u->posted,
              (unsigned long long)u->received, (unsigned long long)u->transmitted, (unsigned long long)u->done);
    }
  }
  pthread_mutex_unlock(&proxy_round_lock[lane]);
}

void proxy_client_dump(proxy_client_t* client, const char* why) {
  MK_WARN("%s: rank %d proxy: %llu ops posted, %llu done, error %d", why, client->rank,
          (unsigned long long)atomic_load(&client->opsPosted), (unsigned long long)atomic_load(&client->opsDone),
          atomic_load(&client->error));
  pthread_once(&proxy_locks_once, proxy_locks_init);
  int budget = 8;
  for (int l = 0; l < PROXY_LANES && budget > 0; l++) proxy_dump_lane(client, why, l, &budget);
}

ncclResult_t proxy_op_alloc(proxy_op_t** out) {
  pthread_mutex_lock(&proxy.freeLock);
  proxy_op_t* op = proxy.freeList;
  if (op) proxy.freeList = op->nextActive;
  pthread_mutex_unlock(&proxy.freeLock);
  if (!op) op = malloc(sizeof(*op));
  if (!op) return MK_FAIL(ncclSystemError, "proxy: out of memory for an op");
  memset(op, 0, sizeof(*op));
  *out = op;
  return ncclSuccess;
}

void proxy_op_free(proxy_op_t* op) {
  pthread_mutex_lock(&proxy.freeLock);
  op->nextActive = proxy.freeList;
  proxy.freeList = op;
  pthread_mutex_unlock(&proxy.freeLock);
}

/* Nothing queued and nothing active in any lane: helping callers may have
 * taken ops into an active list, which the thread must then keep
 * progressing. */
static int proxy_nothing_to_do(void) {
  for (int l = 0; l < PROXY_LANES; l++)
    if (proxy.loops[l] && !proxy_lane_empty(proxy.loops[l])) return 0;
  return 1;
}

/* Read by the thread that starts the proxy thread: parameters come from the
 * environment, and a program may change it (setenv) on its own threads,
 * which getenv on another thread may not race with. */
typedef struct {
  int64_t threshold, sleepUs, spinNs;
} proxy_idle_t;

static void* proxy_thread_main(void* arg) {
  proxy_idle_t idleParams = *(const proxy_idle_t*)arg;
  prctl(PR_SET_NAME, "mkccl-proxy", 0, 0, 0); /* top, ps -L, gdb */
  int64_t threshold = idleParams.threshold;
  int64_t sleepUs = idleParams.sleepUs;
  int64_t spinNs = idleParams.spinNs;
  int64_t idleRounds = 0, emptySince = 0;
  /* A sleep of NCCL_PROXY_IDLE_SLEEP_US, not 50 us more: Linux adds that
   * much timer slack by default, and a ring step over sockets would wait
   * for it. */
  prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
  for (;;) {
    int idle;
    int active = proxy_round(&idle);
    if (!idle) {
      idleRounds = 0;
      emptySince = 0;
      continue;
    }
    if (active == 0 && spinNs > 0) {
      /* No op left: keep polling for MKCCL_PROXY_SPIN_US, yielding, before
       * sleeping. The next collective of a loop posts within microseconds,
       * and a wake-up from the condvar costs far more, on VMs most. */
      int64_t t = mk_now_ns();
      if (!emptySince) emptySince = t;
      if (t - emptySince < spinNs) {
        sched_yield();
        continue;
      }
    }
    emptySince = 0; /* ops still active, or the polling is over */
    if (active == 0) {
      /* Nothing to do: block until an op is posted or we are stopped. */
      pthread_mutex_lock(&proxy.lock);
      atomic_store(&proxy.sleeping, 1);
      while (!proxy.stop && proxy_nothing_to_do()) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 50 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&proxy.wake, &proxy.lock, &ts);
      }
      atomic_store(&proxy.sleeping, 0);
      int stop = proxy.stop;
      pthread_mutex_unlock(&proxy.lock);
      if (stop) break;
      idleRounds = 0;
      continue;
    }
    if (++idleRounds < threshold) sched_yield();
    else usleep((useconds_t)sleepUs);
  }
  return NULL;
}

void proxy_op_post(proxy_client_t* client, proxy_op_t* op) {
  op->client = client;
  atomic_fetch_add_explicit(&client->opsPosted, 1, memory_order_relaxed);
  proxy_loop_post(proxy.loops[op->lane >= 0 && op->lane < PROXY_LANES ? op->lane : 0], op);
  if (atomic_load(&proxy.sleeping)) {
    pthread_mutex_lock(&proxy.lock);
    pthread_cond_signal(&proxy.wake);
    pthread_mutex_unlock(&proxy.lock);
  }
}

ncclResult_t proxy_client_attach(proxy_client_t* client, volatile uint32_t* abortFlag, int rank) {
  memset(client, 0, sizeof(*client));
  atomic_store(&client->errorPeer, -1);
  client->abortFlag = abortFlag;
  client->rank = rank;
  ncclResult_t res = ncclSuccess;
  pthread_mutex_lock(&proxy.lifecycle);
  if (proxy.nClients == 0) {
    pthread_once(&proxy_locks_once, proxy_locks_init);
    for (int l = 0; l < PROXY_LANES; l++)
      if (!proxy.loops[l]) MK_CHECK_GOTO(proxy_loop_create(&proxy.loops[l]), res, out);
    proxy.stop = 0;
    static proxy_idle_t idleParams; /* the lifecycle lock held: one start at a time */
    idleParams = (proxy_idle_t){param_NCCL_PROXY_IDLE_THRESHOLD(), param_NCCL_PROXY_IDLE_SLEEP_US(),
                                param_MKCCL_PROXY_SPIN_US() * 1000};
    int err = pthread_create(&proxy.thread, NULL, proxy_thread_main, &idleParams);
    if (err) {
      res = MK_FAIL(ncclSystemError, "proxy: cannot start the proxy thread: %s", strerror(err));
      goto out;
    }
    proxy.running = 1;
    MK_INFO(NCCL_PROXY | NCCL_INIT, "Proxy thread started");
  }
  proxy.nClients++;
out:
  pthread_mutex_unlock(&proxy.lifecycle);
  return res;
}

int proxy_client_drained(proxy_client_t* client) {
  return atomic_load_explicit(&client->opsDone, memory_order_acquire) ==
         atomic_load_explicit(&client->opsPosted, memory_order_relaxed);
}

ncclResult_t proxy_client_error(proxy_client_t* client) { return (ncclResult_t)atomic_load(&client->error); }
int proxy_client_error_peer(proxy_client_t* client) { return atomic_load(&client->errorPeer); }
int proxy_client_dropped(proxy_client_t* client) { return atomic_load(&client->dropped); }

ncclResult_t proxy_client_flush(proxy_client_t* client, const char* what) {
  uint64_t seen = atomic_load_explicit(&client->progress, memory_order_relaxed) +
                  atomic_load_explicit(&client->opsDone, memory_order_acquire);
  int64_t lastMove = mk_now_ns();
  int gaveUp = 0;
  while (!proxy_client_drained(client)) {
    if (!gaveUp && client->timeoutSec > 0) {
      uint64_t now = atomic_load_explicit(&client->progress, memory_order_relaxed) +
                     atomic_load_explicit(&client->opsDone, memory_order_acquire);
      int64_t t = mk_now_ns();
      if (now != seen) {
        seen = now;
        lastMove = t;
      } else if (t - lastMove >= client->timeoutSec * 1000000000LL) {
        uint64_t left = atomic_load(&client->opsPosted) - atomic_load(&client->opsDone);
        MK_WARN("proxy: rank %d: %s: %llu queued op(s) made no progress for %lld s (MKCCL_TIMEOUT): a peer died "
                "or stopped; dropping them, the communicator is aborted",
                client->rank, what, (unsigned long long)left, (long long)client->timeoutSec);
        proxy_client_fail(client, ncclRemoteError);
        gaveUp = 1; /* the loop drops them at its next round */
      }
    }
    usleep(100);
  }
  return proxy_client_error(client);
}

int proxy_client_drain_for(proxy_client_t* client, int ms) {
  int64_t end = mk_now_ns() + (int64_t)ms * 1000000;
  while (!proxy_client_drained(client)) {
    if (mk_now_ns() >= end || __atomic_load_n(client->abortFlag, __ATOMIC_ACQUIRE)) return 0;
    usleep(100);
  }
  return 1;
}

void proxy_client_detach(proxy_client_t* client) {
  /* Ops of an aborted client are dropped by the loop; others finish, or are
   * dropped after MKCCL_TIMEOUT without progress. */
  (void)proxy_client_flush(client, "detach");
  pthread_mutex_lock(&proxy.lifecycle);
  if (--proxy.nClients == 0) {
    pthread_mutex_lock(&proxy.lock);
    proxy.stop = 1;
    pthread_cond_signal(&proxy.wake);
    pthread_mutex_unlock(&proxy.lock);
    pthread_join(proxy.thread, NULL);
    proxy.running = 0;
    MK_INFO(NCCL_PROXY, "Proxy thread stopped");
  }
  pthread_mutex_unlock(&proxy.lifecycle);
}
