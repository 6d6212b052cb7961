/* Bootstrap under faults: stray connections (wrong magic, garbage, silence,
 * right magic with nonsense) to the root and to a rank are dropped while
 * init and messages succeed; a rank that never arrives makes init fail
 * with a clear error after MKCCL_BOOTSTRAP_TIMEOUT; the abort flag ends a
 * wait. `test_bootstrap_faults ipv6 IFNAME|any`: bootstrap over IPv6
 * (skipped where the interface has no IPv6 address). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bootstrap/bootstrap.h"
#include "check.h"
#include "nccl.h"
#include "ranks.h"

/* Wire details a stray needs to look plausible (bootstrap_internal.h). */
#include "bootstrap/bootstrap_internal.h"

/* In shared memory: rank 0 makes the ids (its process hosts the roots), so
 * the parent forks with no thread running; a root that logs while the
 * parent forks could leave the log's lock held in a child. */
typedef struct {
  volatile int ready;
  int nRoots, nRanks;
  bootstrap_handle_t handles[2];
  int strays; /* rank 0 also opens strays at its root first */
} job_t;

static job_t* job_new(int nRoots, int nRanks, int strays) {
  job_t* job = ranks_shared_alloc(sizeof(job_t));
  CHECK(job);
  job->nRoots = nRoots;
  job->nRanks = nRanks;
  job->strays = strays;
  return job;
}

enum { STRAY_MAGIC, STRAY_GARBAGE, STRAY_SILENT, STRAY_BAD_RANK, STRAY_BAD_RING, STRAY_N };

/* Opens the strays at addr; magic is what a legitimate peer would use. */
static void strays_open(const sock_addr_t* addr, uint64_t magic, int root, int fds[STRAY_N]) {
  for (int i = 0; i < STRAY_N; i++) {
    CHECK(sock_connect(addr, sock_deadline_ms(5000), NULL, &fds[i]) == SOCK_OK);
    int64_t dl = sock_deadline_ms(5000);
    struct {
      sock_hello_t h;
      bootstrap_root_info_t info;
    } m;
    memset(&m, 0, sizeof(m));
    switch (i) {
      case STRAY_MAGIC:
        m.h = (sock_hello_t){magic ^ 1, root ? BOOTSTRAP_CONN_ROOT_REGISTER : BOOTSTRAP_CONN_P2P, 1, 0};
        CHECK(sock_send_all(fds[i], &m, sizeof(m), dl, NULL) == SOCK_OK);
        break;
      case STRAY_GARBAGE: {
        char junk[100];
        for (int k = 0; k < 100; k++) junk[k] = (char)(k * 37 + 11);
        CHECK(sock_send_all(fds[i], junk, sizeof(junk), dl, NULL) == SOCK_OK);
        break;
      }
      case STRAY_SILENT: break;
      case STRAY_BAD_RANK:
        m.h = (sock_hello_t){magic, root ? BOOTSTRAP_CONN_ROOT_REGISTER : BOOTSTRAP_CONN_P2P, 1, 99};
        m.info = (bootstrap_root_info_t){99, 4, 1, 0, *addr};
        CHECK(sock_send_all(fds[i], &m, sizeof(m.h) + sizeof(m.info), dl, NULL) == SOCK_OK);
        break;
      case STRAY_BAD_RING: /* a ring connection claiming to be rank 1, not the previous rank */
        m.h = (sock_hello_t){magic, root ? 77u : BOOTSTRAP_CONN_RING, 1, 1};
        CHECK(sock_send_all(fds[i], &m, sizeof(m.h), dl, NULL) == SOCK_OK);
        break;
    }
  }
}

/* Each stray must see its connection closed by the other side. */
static void strays_check_closed(int fds[STRAY_N], int64_t ms) {
  for (int i = 0; i < STRAY_N; i++) {
    char c;
    int rc = sock_recv_all(fds[i], &c, 1, sock_deadline_ms(ms), NULL);
    CHECK_MSG(rc == SOCK_ECLOSED, "stray %d: %s", i, sock_status_name(rc));
    sock_close(&fds[i]);
  }
}

/* ---- strays at the root -------------------------------------------------------------------- */
enum { STRAY_N_MAX = STRAY_N };
static int strayFds[STRAY_N_MAX]; /* rank 0's */

static void job_ids(job_t* job, int rank) {
  if (rank == 0) {
    for (int i = 0; i < job->nRoots; i++) CHECK_NCCL(bootstrap_handle_create(&job->handles[i], 0));
    if (job->strays) strays_open(&job->handles[0].addr, job->handles[0].magic, 1, strayFds);
    __atomic_store_n(&job->ready, 1, __ATOMIC_RELEASE);
  }
  for (int i = 0; i < 30000 && !__atomic_load_n(&job->ready, __ATOMIC_ACQUIRE); i++) usleep(1000);
  CHECK(job->ready);
}

static void job_roots_finish(job_t* job, int rank) {
  if (rank == 0)
    for (int i = 0; i < job->nRoots; i++) bootstrap_root_finish(&job->handles[i], 0);
}

static int rank_plain(int rank, int n, void* arg) {
  job_t* job = arg;
  bootstrap_state_t* st;
  job_ids(job, rank);
  CHECK_NCCL(bootstrap_init(job->handles, job->nRoots, rank, n, NULL, &st));
  int v[8] = {0};
  v[rank] = rank + 1;
  CHECK_NCCL(bootstrap_allgather(st, v, sizeof(int)));
  for (int r = 0; r < n; r++) CHECK_EQ_INT(v[r], r + 1);
  CHECK_NCCL(bootstrap_barrier(st));
  bootstrap_destroy(st);
  job_roots_finish(job, rank);
  if (rank == 0 && job->strays) strays_check_closed(strayFds, 10000);
  return 0;
}

static void test_root_strays(void) {
  CHECK(ranks_run(4, rank_plain, job_new(1, 4, 1), 60) == 0);
  printf("root strays: ok\n");
}

/* ---- strays at a rank ---------------------------------------------------------------------- */
/* Rank 0 waits for rank 2's first message; meanwhile rank 1 sends strays to
 * rank 0 and waits until rank 0 has closed every one, then lets rank 2 go. */
static int rank_strays(int rank, int n, void* arg) {
  job_t* job = arg;
  bootstrap_state_t* st;
  job_ids(job, rank);
  CHECK_NCCL(bootstrap_init(job->handles, 1, rank, n, NULL, &st));
  int v = -1, go = 1;
  if (rank == 0) {
    CHECK_NCCL(bootstrap_recv(st, 2, 5, &v, sizeof(v)));
    CHECK_EQ_INT(v, 222);
    CHECK_NCCL(bootstrap_recv(st, 1, 5, &v, sizeof(v)));
    CHECK_EQ_INT(v, 111);
  } else if (rank == 1) {
    int fds[STRAY_N];
    strays_open(bootstrap_peer_addr(st, 0), job->handles[0].magic, 0, fds);
    strays_check_closed(fds, 10000); /* the silent one after the handshake timeout */
    CHECK_NCCL(bootstrap_send(st, 2, 6, &go, sizeof(go)));
    v = 111;
    CHECK_NCCL(bootstrap_send(st, 0, 5, &v, sizeof(v)));
  } else if (rank == 2) {
    CHECK_NCCL(bootstrap_recv(st, 1, 6, &go, sizeof(go)));
    v = 222;
    CHECK_NCCL(bootstrap_send(st, 0, 5, &v, sizeof(v)));
  }
  CHECK_NCCL(bootstrap_barrier(st));
  bootstrap_destroy(st);
  job_roots_finish(job, rank);
  return 0;
}

static void test_rank_strays(void) {
  CHECK(ranks_run(3, rank_strays, job_new(1, 3, 0), 60) == 0);
  printf("rank strays: ok\n");
}

/* ---- a rank that never arrives --------------------------------------------------------------- */
static int rank_missing(int rank, int n, void* arg) {
  (void)n;
  job_t* job = arg;
  bootstrap_state_t* st = (bootstrap_state_t*)0x1;
  job_ids(job, rank);
  ncclResult_t res = bootstrap_init(job->handles, job->nRoots, rank, job->nRanks, NULL, &st);
  CHECK_EQ_INT(res, ncclRemoteError);
  CHECK(st == (bootstrap_state_t*)0x1); /* outputs only on success */
  const char* err = ncclGetLastError(NULL);
  /* Either this rank's own wait timed out, or a neighbour that gave up
   * closed the ring under it. */
  CHECK_MSG(strstr(err, "MKCCL_BOOTSTRAP_TIMEOUT") || strstr(err, "closed the connection"), "%s", err);
  /* The ranks the root answers hear who is missing. */
  if (job->nRoots == 1 || rank == 2) CHECK_STR_CONTAINS(err, "missing: 3");
  job_roots_finish(job, rank); /* they gave up on their own */
  return 0;
}

static void test_missing_rank(int nRoots) {
  setenv("MKCCL_BOOTSTRAP_TIMEOUT", "2", 1);
  int64_t t0 = sock_time_ns();
  CHECK(ranks_run(3, rank_missing, job_new(nRoots, 4, 0), 30) == 0); /* 3 of 4 ranks */
  printf("missing rank (%d root(s)): failed cleanly after %.1f s\n", nRoots, (sock_time_ns() - t0) / 1e9);
  unsetenv("MKCCL_BOOTSTRAP_TIMEOUT");
}

/* ---- abort ----------------------------------------------------------------------------------- */
static volatile uint32_t abortFlag;
static void* abort_later(void* p) {
  (void)p;
  usleep(200 * 1000);
  __atomic_store_n(&abortFlag, 1, __ATOMIC_RELEASE);
  return NULL;
}

static void test_abort(void) {
  bootstrap_handle_t h;
  CHECK_NCCL(bootstrap_handle_create(&h, 0));
  pthread_t t;
  abortFlag = 0;
  CHECK(pthread_create(&t, NULL, abort_later, NULL) == 0);
  bootstrap_state_t* st = NULL;
  CHECK_EQ_INT(bootstrap_init(&h, 1, 0, 2, &abortFlag, &st), ncclInternalError); /* rank 1 never comes */
  CHECK_STR_CONTAINS(ncclGetLastError(NULL), "aborted");
  CHECK(st == NULL);
  pthread_join(t, NULL);
  bootstrap_root_finish(&h, 1);
  printf("abort: ok\n");
}

/* ---- IPv6 ------------------------------------------------------------------------------------ */
static void test_ipv6(const char* ifname) {
  sock_iface_t iface;
  int n;
  if (sock_ifaces_find(ifname, AF_INET6, &iface, 1, &n) != SOCK_OK)
    SKIP("no IPv6 address on %s (%s)", ifname ? ifname : "any interface", sock_error());
  setenv("NCCL_SOCKET_FAMILY", "AF_INET6", 1);
  if (ifname) setenv("NCCL_SOCKET_IFNAME", ifname, 1);
  job_t* job = job_new(1, 3, 0);
  CHECK(ranks_run(3, rank_plain, job, 60) == 0);
  CHECK(job->handles[0].addr.sa.sa_family == AF_INET6);
  unsetenv("NCCL_SOCKET_FAMILY");
  unsetenv("NCCL_SOCKET_IFNAME");
  char text[SOCK_ADDR_STRLEN];
  printf("IPv6 bootstrap on %s: ok\n", sock_addr_to_string(&job->handles[0].addr, text, sizeof(text), 1));
}

int main(int argc, char** argv) {
  setenv("MKCCL_BOOTSTRAP_HANDSHAKE_TIMEOUT", "500", 1);
  if (argc > 2 && strcmp(argv[1], "ipv6") == 0) {
    test_ipv6(strcmp(argv[2], "any") == 0 ? NULL : argv[2]);
    return 0;
  }
  test_root_strays();
  test_rank_strays();
  test_missing_rank(1);
  test_missing_rank(2);
  test_abort();
  return 0;
}
