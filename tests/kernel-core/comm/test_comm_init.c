/* Communicators through the public API only: 1..8 ranks as processes (id
 * set before fork, or published through shared memory), NCCL_COMM_ID,
 * non-blocking init, ncclCommInitAll, abort, a missing rank, and argument
 * checks. Apart from the "id set before fork" case, ranks get ids made in
 * rank 0 (ranks_unique_id), so ThreadSanitizer can run them. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "check.h"
#include "nccl.h"
#include "ranks_id.h"

static int check_comm(ncclComm_t comm, int rank, int n) {
  int count = -1, r = -1, dev = -2;
  CHECK_NCCL(ncclCommCount(comm, &count));
  CHECK_NCCL(ncclCommUserRank(comm, &r));
  CHECK_NCCL(ncclCommCuDevice(comm, &dev));
  CHECK_EQ_INT(count, n);
  CHECK_EQ_INT(r, rank);
  CHECK_EQ_INT(dev, -1); /* no CUDA driver shim yet: host ranks */
  ncclResult_t async = ncclInternalError;
  CHECK_NCCL(ncclCommGetAsyncError(comm, &async));
  CHECK_EQ_INT(async, ncclSuccess);
  return 0;
}

/* ---- id set before fork -------------------------------------------------------------------- */
/* Applications do this, so it is tested: the parent makes the id (its root
 * thread runs) and forks the ranks. The sanitizers cannot follow a fork
 * beside a running thread, so under them the ranks make the id in rank 0
 * instead (arg NULL): ThreadSanitizer stops ("dup thread with used id"),
 * and AddressSanitizer's allocator lock is not reset in the child, so a
 * fork while the root thread allocates left a rank waiting for ever in its
 * first calloc (6 ranks, about 1 run in 8 under load). */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define ID_BEFORE_FORK 0
#else
#define ID_BEFORE_FORK 1
#endif

static int rank_basic(int rank, int n, void* arg) {
  ncclUniqueId mine;
  ncclUniqueId* id = arg;
  if (!id) ranks_unique_id(rank, id = &mine);
  ncclComm_t comm = NULL;
  CHECK_NCCL(ncclCommInitRank(&comm, n, *id, rank));
  check_comm(comm, rank, n);
  CHECK_NCCL(ncclCommDestroy(comm));
  return 0;
}

static void test_processes(void) {
  for (int n = 1; n <= 8; n++) {
    ncclUniqueId id;
    if (ID_BEFORE_FORK) CHECK_NCCL(ncclGetUniqueId(&id));
    CHECK_MSG(ranks_run(n, rank_basic, ID_BEFORE_FORK ? &id : NULL, 60) == 0, "%d ranks", n);
  }
  printf("1..8 processes%s: ok\n", ID_BEFORE_FORK ? "" : " (sanitizer build: id made in rank 0)");
}

/* ---- id published through shared memory by rank 0 ------------------------------------------ */
typedef struct {
  volatile int ready;
  ncclUniqueId id;
} shared_id_t;

static int rank_shared(int rank, int n, void* arg) {
  shared_id_t* sh = arg;
  if (rank == 0) {
    CHECK_NCCL(ncclGetUniqueId(&sh->id)); /* the root runs in this rank's process */
    __atomic_store_n(&sh->ready, 1, __ATOMIC_RELEASE);
  } else {
    for (int i = 0; i < 10000 && !__atomic_load_n(&sh->ready, __ATOMIC_ACQUIRE); i++) usleep(1000);
    CHECK(sh->ready);
  }
  ncclComm_t comm;
  CHECK_NCCL(ncclCommInitRank(&comm, n, sh->id, rank));
  check_comm(comm, rank, n);
  CHECK_NCCL(ncclCommDestroy(comm));
  return 0;
}

static void test_shared_id(void) {
  shared_id_t* sh = ranks_shared_alloc(sizeof(shared_id_t));
  CHECK(sh);
  CHECK(ranks_run(5, rank_shared, sh, 60) == 0);
  printf("id through shared memory: ok\n");
}

/* ---- NCCL_COMM_ID: every rank makes the same id; rank 0 starts the root ---------------------- */
static int rank_comm_id(int rank, int n, void* arg) {
  (void)arg;
  ncclUniqueId id;
  CHECK_NCCL(ncclGetUniqueId(&id));
  ncclComm_t comm;
  CHECK_NCCL(ncclCommInitRank(&comm, n, id, rank));
  check_comm(comm, rank, n);
  CHECK_NCCL(ncclCommDestroy(comm));
  return 0;
}

/* A port the kernel just gave out and took back. */
static int free_port(void) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a;
  memset(&a, 0, sizeof(a));
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  CHECK(s >= 0 && bind(s, (struct sockaddr*)&a, sizeof(a)) == 0);
  CHECK(getsockname(s, (struct sockaddr*)&a, &len) == 0);
  close(s);
  return ntohs(a.sin_port);
}

static void test_comm_id(void) {
  char env[64];
  ncclComm_t c;
  snprintf(env, sizeof(env), "127.0.0.1:%d", free_port());
  setenv("NCCL_COMM_ID", env, 1);
  CHECK(ranks_run(3, rank_comm_id, NULL, 60) == 0);
  ncclUniqueId ids[2];
  CHECK_NCCL(ncclGetUniqueId(&ids[0]));
  ids[1] = ids[0];
  CHECK(ncclCommInitRankScalable(&c, 2, 0, 2, ids, NULL) == ncclInvalidUsage);
  unsetenv("NCCL_COMM_ID");
  printf("NCCL_COMM_ID=%s: ok\n", env);
}

/* ---- several roots --------------------------------------------------------------------------- */
static int rank_scalable(int rank, int n, void* arg) {
  (void)arg;
  ncclUniqueId ids[3];
  for (int i = 0; i < 3; i++) ranks_unique_id(rank, &ids[i]);
  ncclComm_t comm;
  CHECK_NCCL(ncclCommInitRankScalable(&comm, n, rank, 3, ids, NULL));
  check_comm(comm, rank, n);
  CHECK_NCCL(ncclCommDestroy(comm));
  return 0;
}

static void test_scalable(void) {
  CHECK(ranks_run(7, rank_scalable, NULL, 60) == 0);
  printf("ncclCommInitRankScalable, 7 ranks, 3 ids: ok\n");
}

/* ---- non-blocking ---------------------------------------------------------------------------- */
typedef struct {
  volatile int checked;
} nb_t;

static int rank_nonblocking(int rank, int n, void* arg) {
  nb_t* nb = arg;
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  config.commName = "nb";
  ncclComm_t comm = NULL;
  ncclUniqueId id;
  ranks_unique_id(rank, &id);
  if (rank == 1) /* arrive only after rank 0 has seen its comm in progress */
    for (int i = 0; i < 10000 && !__atomic_load_n(&nb->checked, __ATOMIC_ACQUIRE); i++) usleep(1000);
  ncclResult_t res = ncclCommInitRankConfig(&comm, n, id, rank, &config);
  CHECK_EQ_INT(res, ncclInProgress);
  CHECK(comm != NULL);
  if (rank == 0) {
    ncclResult_t async;
    CHECK_NCCL(ncclCommGetAsyncError(comm, &async));
    CHECK_EQ_INT(async, ncclInProgress);
    int count;
    CHECK_EQ_INT(ncclCommCount(comm, &count), ncclInvalidUsage); /* not ready yet */
    __atomic_store_n(&nb->checked, 1, __ATOMIC_RELEASE);
  }
  ncclResult_t async = ncclInProgress;
  for (int i = 0; i < 60000 && async == ncclInProgress; i++) {
    CHECK_NCCL(ncclCommGetAsyncError(comm, &async));
    if (async == ncclInProgress) usleep(1000);
  }
  CHECK_EQ_INT(async, ncclSuccess);
  check_comm(comm, rank, n);
  CHECK_NCCL(ncclCommFinalize(comm));
  CHECK_NCCL(ncclCommDestroy(comm));
  return 0;
}

static void test_nonblocking(void) {
  nb_t* nb = ranks_shared_alloc(sizeof(nb_t));
  CHECK(nb);
  CHECK(ranks_run(2, rank_nonblocking, nb, 60) == 0);
  printf("non-blocking init: ok\n");
}

/* ---- ncclCommInitAll ------------------------------------------------------------------------- */
static void test_init_all(void) {
  ncclComm_t comms[4] = {0};
  CHECK_NCCL(ncclCommInitAll(comms, 4, NULL));
  for (int i = 0; i < 4; i++) check_comm(comms[i], i, 4);
  for (int i = 0; i < 4; i++) CHECK_NCCL(ncclCommDestroy(comms[i]));
  int devs[3] = {2, 0, 1};
  CHECK_NCCL(ncclCommInitAll(comms, 3, devs));
  for (int i = 0; i < 3; i++) check_comm(comms[i], i, 3);
  for (int i = 0; i < 3; i++) CHECK_NCCL(ncclCommDestroy(comms[i]));
  int dup[2] = {1, 1};
  comms[0] = NULL;
  CHECK_EQ_INT(ncclCommInitAll(comms, 2, dup), ncclInvalidUsage);
  CHECK(comms[0] == NULL);
  CHECK_EQ_INT(ncclCommInitAll(comms, 0, NULL), ncclInvalidArgument);
  CHECK_EQ_INT(ncclCommInitAll(NULL, 2, NULL), ncclInvalidArgument);
  printf("ncclCommInitAll: ok\n");
}

/* ---- abort ----------------------------------------------------------------------------------- */
static int rank_abort_ready(int rank, int n, void* arg) {
  (void)arg;
  ncclComm_t comm = ranks_comm_init(rank, n);
  CHECK_NCCL(ncclCommAbort(comm));
  return 0;
}

static void test_abort(void) {
  /* Aborting an init that can never finish (rank 1 never comes). */
  ncclUniqueId id;
  CHECK_NCCL(ncclGetUniqueId(&id));
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t comm = NULL;
  CHECK_EQ_INT(ncclCommInitRankConfig(&comm, 2, id, 0, &config), ncclInProgress);
  CHECK_NCCL(ncclCommAbort(comm));
  /* Aborting ready communicators. */
  CHECK(ranks_run(3, rank_abort_ready, NULL, 60) == 0);
  CHECK_NCCL(ncclCommAbort(NULL));
  CHECK_NCCL(ncclCommDestroy(NULL));
  printf("abort: ok\n");
}

/* ---- a rank that never arrives ----------------------------------------------------------------- */
static int rank_missing(int rank, int n, void* arg) {
  (void)n;
  (void)arg;
  ncclUniqueId id;
  ranks_unique_id(rank, &id);
  ncclComm_t comm = (ncclComm_t)0x1;
  CHECK_EQ_INT(ncclCommInitRank(&comm, 3, id, rank), ncclRemoteError);
  CHECK(comm == (ncclComm_t)0x1);
  CHECK_STR_CONTAINS(ncclGetLastError(NULL), "MKCCL_BOOTSTRAP_TIMEOUT");
  return 0;
}

static void test_missing(void) {
  setenv("MKCCL_BOOTSTRAP_TIMEOUT", "2", 1);
  CHECK(ranks_run(2, rank_missing, NULL, 30) == 0);
  unsetenv("MKCCL_BOOTSTRAP_TIMEOUT");
  printf("missing rank: failed with a timeout: ok\n");
}

/* ---- argument checks ------------------------------------------------------------------------- */
static void test_args(void) {
  ncclUniqueId id, zero;
  memset(&zero, 0, sizeof(zero));
  CHECK_NCCL(ncclGetUniqueId(&id));
  ncclComm_t comm = NULL;
  CHECK_EQ_INT(ncclGetUniqueId(NULL), ncclInvalidArgument);
  CHECK_EQ_INT(ncclCommInitRank(NULL, 1, id, 0), ncclInvalidArgument);
  CHECK_EQ_INT(ncclCommInitRank(&comm, 0, id, 0), ncclInvalidArgument);
  CHECK_STR_CONTAINS(ncclGetLastError(NULL), "nranks");
  CHECK_EQ_INT(ncclCommInitRank(&comm, 2, id, -1), ncclInvalidArgument);
  CHECK_EQ_INT(ncclCommInitRank(&comm, 2, id, 2), ncclInvalidArgument);
  CHECK_STR_CONTAINS(ncclGetLastError(NULL), "rank 2 of 2");
  CHECK_EQ_INT(ncclCommInitRank(&comm, 1, zero, 0), ncclInvalidArgument);
  CHECK_STR_CONTAINS(ncclGetLastError(NULL), "ncclUniqueId is not valid");
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.magic = 0x1234;
  CHECK_EQ_INT(ncclCommInitRankConfig(&comm, 1, id, 0, &config), ncclInvalidArgument);
  CHECK_STR_CONTAINS(ncclGetLastError(NULL), "NCCL_CONFIG_INITIALIZER");
  ncclConfig_t c2 = NCCL_CONFIG_INITIALIZER;
  c2.blocking = 5;
  CHECK_EQ_INT(ncclCommInitRankConfig(&comm, 1, id, 0, &c2), ncclInvalidArgument);
  CHECK_STR_CONTAINS(ncclGetLastError(NULL), "blocking");
  ncclConfig_t c3 = NCCL_CONFIG_INITIALIZER;
  c3.size = 4;
  CHECK_EQ_INT(ncclCommInitRankConfig(&comm, 1, id, 0, &c3), ncclInvalidArgument);
  ncclConfig_t c4 = NCCL_CONFIG_INITIALIZER;
  c4.splitShare = 7;
  CHECK_EQ_INT(ncclCommInitRankConfig(&comm, 1, id, 0, &c4), ncclInvalidArgument);
  CHECK(comm == NULL);
  CHECK_EQ_INT(ncclCommInitRankScalable(&comm, 2, 0, 0, &id, NULL), ncclInvalidArgument);
  CHECK_EQ_INT(ncclCommInitRankScalable(&comm, 2, 0, 3, &id, NULL), ncclInvalidArgument);
  CHECK_EQ_INT(ncclCommInitRankScalable(&comm, 2, 0, 1, NULL, NULL), ncclInvalidArgument);

  /* An older, smaller config (version 2.13: no blocking field honoured) still works. */
  ncclConfig_t old = NCCL_CONFIG_INITIALIZER;
  old.size = 24;
  old.version = NCCL_VERSION(2, 13, 0);
  old.blocking = 0;
  CHECK_NCCL(ncclCommInitRankConfig(&comm, 1, id, 0, &old)); /* blocking: returns ncclSuccess */
  int count;
  CHECK_EQ_INT(ncclCommCount(NULL, &count), ncclInvalidArgument);
  CHECK_EQ_INT(ncclCommCount(comm, NULL), ncclInvalidArgument);
  CHECK_EQ_INT(ncclCommUserRank(comm, NULL), ncclInvalidArgument);
  CHECK_EQ_INT(ncclCommCuDevice(comm, NULL), ncclInvalidArgument);
  CHECK_EQ_INT(ncclCommGetAsyncError(comm, NULL), ncclInvalidArgument);
  ncclComm_t sub;
  CHECK_EQ_INT(ncclCommSplit(comm, 0, 0, NULL, NULL), ncclInvalidArgument);
  CHECK_EQ_INT(ncclCommSplit(comm, -7, 0, &sub, NULL), ncclInvalidArgument);
  CHECK_EQ_INT(ncclCommSplit(NULL, 0, 0, &sub, NULL), ncclInvalidArgument);
  CHECK_NCCL(ncclCommFinalize(comm));
  CHECK_EQ_INT(ncclCommFinalize(comm), ncclInvalidUsage);
  CHECK_EQ_INT(ncclCommCount(comm, &count), ncclInvalidUsage);
  CHECK_NCCL(ncclCommDestroy(comm));
  printf("argument checks: ok\n");
}

int main(void) {
  test_args();
  test_processes();
  test_shared_id();
  test_scalable();
  test_comm_id();
  test_nonblocking();
  test_init_all();
  test_abort();
  test_missing();
  return 0;
}
