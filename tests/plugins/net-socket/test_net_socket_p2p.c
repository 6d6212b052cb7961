/* Two processes, one connection, through the table ncclNetPlugin_v<N>:
 *   test_net_socket_p2p [<N> [threads socksPerThread [minTaskSize]]]   (N: 11)
 * Sizes 0, 1, odd, 1 MB, 64 MB verified byte for byte; a receive larger
 * than the message; 32 requests in flight (and the 33rd refused); grouped
 * receives matched by tag; messages that come before their receive while
 * a receive of another tag waits. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ns_harness.h"
#include "proc_count.h"
#include "ranks.h"

#define NS_TAG 7
#define NS_INFLIGHT NCCL_NET_MAX_REQUESTS

typedef struct {
  volatile int ready;
  char handle[NCCL_NET_HANDLE_MAXSIZE]; /* at offset 4: the plugin must not assume alignment */
} ns_shared_t;

static int g_version;

typedef struct {
  net_any_t* n;
  void* comm;
  int isSend;
} ns_end_t;

/* One message each way of the phase: post, wait, check size (and data). */
static void ns_send(ns_end_t* e, void* buf, size_t size, int tag, uint32_t seed) {
  void* mh = NULL;
  void* req = NULL;
  ns_fill(buf, size, seed);
  CHECK_EQ_INT(net_any_reg_mr(e->n, e->comm, buf, size ? size : 1, NCCL_PTR_HOST, &mh), ncclSuccess);
  while (!req) CHECK_EQ_INT(net_any_isend(e->n, e->comm, buf, size, tag, mh, &req), ncclSuccess);
  int got = -1;
  CHECK_EQ_INT(ns_wait(e->n, req, &got), ncclSuccess);
  CHECK_EQ_INT(got, size);
  CHECK_EQ_INT(net_any_dereg_mr(e->n, e->comm, mh), ncclSuccess);
}

static void ns_recv(ns_end_t* e, void* buf, size_t room, size_t expect, int tag, uint32_t seed) {
  void* mh = NULL;
  void* req = NULL;
  memset(buf, 0xee, room);
  CHECK_EQ_INT(net_any_reg_mr(e->n, e->comm, buf, room ? room : 1, NCCL_PTR_HOST, &mh), ncclSuccess);
  while (!req) CHECK_EQ_INT(net_any_irecv(e->n, e->comm, 1, &buf, &room, &tag, &mh, &req), ncclSuccess);
  int got = -1;
  CHECK_EQ_INT(ns_wait(e->n, req, &got), ncclSuccess);
  CHECK_EQ_INT(got, expect);
  long bad = ns_verify(buf, expect, seed);
  CHECK_MSG(bad < 0, "message of %zu bytes: byte %ld wrong", expect, bad);
  if (room > expect) CHECK_EQ_INT(((unsigned char*)buf)[expect], 0xee); /* nothing written past it */
  CHECK_EQ_INT(net_any_dereg_mr(e->n, e->comm, mh), ncclSuccess);
}

static const size_t ns_sizes[] = {0, 1, 4097, 1 << 20, 64 << 20};
#define NS_NSIZES (sizeof(ns_sizes) / sizeof(ns_sizes[0]))
#define NS_BIG (64u << 20)

static void phase_sizes(ns_end_t* e, char* buf) {
  for (unsigned i = 0; i < NS_NSIZES; i++) {
    if (e->isSend) ns_send(e, buf, ns_sizes[i], NS_TAG, i);
    else ns_recv(e, buf, ns_sizes[i], ns_sizes[i], NS_TAG, i);
  }
  /* A receive larger than the message completes with the message's size. */
  if (e->isSend) {
    ns_send(e, buf, 1000, NS_TAG, 100);
    ns_send(e, buf, (3 << 20) + 5, NS_TAG, 101);
  } else {
    ns_recv(e, buf, 1 << 20, 1000, NS_TAG, 100);
    ns_recv(e, buf, NS_BIG, (3 << 20) + 5, NS_TAG, 101);
  }
}

static size_t inflight_size(int i) { return (i % 2) ? (size_t)(100 * i + 1) : (size_t)(300000 + i); }

/* 32 requests posted before any test, the 33rd refused; tested in reverse. */
static void phase_inflight(ns_end_t* e, char* buf) {
  const size_t slot = 310000;
  void* req[NS_INFLIGHT + 1] = {0};
  int tag = NS_TAG;
  for (int i = 0; i < NS_INFLIGHT; i++) {
    char* p = buf + (size_t)i * slot;
    size_t size = inflight_size(i);
    if (e->isSend) {
      ns_fill(p, size, 200 + i);
      CHECK_EQ_INT(net_any_isend(e->n, e->comm, p, size, tag, NULL, &req[i]), ncclSuccess);
    } else {
      memset(p, 0xee, slot);
      void* data = p;
      CHECK_EQ_INT(net_any_irecv(e->n, e->comm, 1, &data, &slot, &tag, NULL, &req[i]), ncclSuccess);
    }
    CHECK(req[i] != NULL);
  }
  void* extra = buf + (size_t)NS_INFLIGHT * slot;
  if (e->isSend) CHECK_EQ_INT(net_any_isend(e->n, e->comm, extra, 1, tag, NULL, &req[NS_INFLIGHT]), ncclSuccess);
  else CHECK_EQ_INT(net_any_irecv(e->n, e->comm, 1, &extra, &slot, &tag, NULL, &req[NS_INFLIGHT]), ncclSuccess);
  CHECK(req[NS_INFLIGHT] == NULL); /* all request slots are taken */
  for (int i = NS_INFLIGHT - 1; i >= 0; i--) {
    int got = -1;
    CHECK_EQ_INT(ns_wait(e->n, req[i], &got), ncclSuccess);
    CHECK_EQ_INT(got, inflight_size(i));
    if (!e->isSend) CHECK_MSG(ns_verify(buf + (size_t)i * slot, (size_t)got, 200 + i) < 0, "in-flight message %d", i);
  }
}

/* Grouped receives: buffer k of a group takes the message with tags[k],
 * whatever order the messages come in. */
static const int ns_gtags[4] = {10, 11, 12, 13};
static const size_t ns_gsizes[4] = {5, 70001, 0, (2 << 20) + 3};
static const int ns_gorder[4] = {2, 0, 3, 1};

static void phase_grouped(ns_end_t* e, char* buf) {
  const size_t slot = 3 << 20;
  if (e->isSend) {
    for (int k = 0; k < 4; k++) {
      int g = ns_gorder[k];
      ns_send(e, buf, ns_gsizes[g], ns_gtags[g], 300 + ns_gtags[g]);
    }
  } else {
    void* data[4];
    size_t sizes[4];
    int got[NCCL_NET_MAX_REQUESTS];
    void* req = NULL;
    for (int k = 0; k < 4; k++) {
      data[k] = buf + (size_t)k * slot;
      sizes[k] = slot;
    }
    CHECK_EQ_INT(net_any_irecv(e->n, e->comm, 4, data, sizes, ns_gtags, NULL, &req), ncclSuccess);
    CHECK(req != NULL);
    CHECK_EQ_INT(ns_wait(e->n, req, got), ncclSuccess);
    for (int k = 0; k < 4; k++) {
      CHECK_EQ_INT(got[k], ns_gsizes[k]);
      CHECK_MSG(ns_verify(data[k], ns_gsizes[k], 300 + ns_gtags[k]) < 0, "grouped buffer %d", k);
    }
  }
  /* Two groups of 8 (maxRecvs) in flight; each round of tags 7..0 fills one group. */
  if (e->isSend) {
    for (int r = 0; r < 2; r++)
      for (int t = 7; t >= 0; t--) ns_send(e, buf, (size_t)(1000 * t + r), t, 400 + 8 * r + t);
  } else {
    void* req[2] = {0};
    void* data[2][8];
    size_t sizes[8];
    int tags[8];
    for (int r = 0; r < 2; r++) {
      for (int t = 0; t < 8; t++) {
        data[r][t] = buf + (size_t)(r * 8 + t) * 8192;
        sizes[t] = 8192;
        tags[t] = t;
      }
      CHECK_EQ_INT(net_any_irecv(e->n, e->comm, 8, data[r], sizes, tags, NULL, &req[r]), ncclSuccess);
      CHECK(req[r] != NULL);
    }
    for (int r = 0; r < 2; r++) {
      int got[8];
      CHECK_EQ_INT(ns_wait(e->n, req[r], got), ncclSuccess);
      for (int t = 0; t < 8; t++) {
        CHECK_EQ_INT(got[t], 1000 * t + r);
        CHECK_MSG(ns_verify(data[r][t], (size_t)got[t], 400 + 8 * r + t) < 0, "group %d buffer %d", r, t);
      }
    }
  }
}

/* Early messages: tag 21's messages (data sockets, inline, and one after a
 * tag-22 message) come before any tag-21 receive while a tag-22 receive
 * waits behind them. The tag-22 receive completes first (the comm keeps
 * the earlier ones rather than stop at them: the core's p2p channels share
 * a comm, and one channel running ahead of its receiver must not stall the
 * others), then tag-21 receives get theirs in send order. */
static const size_t ns_esizes[4] = {(2 << 20) + 3, 100, 70001, 4097};
static const int ns_etags[4] = {21, 21, 22, 21};

static void phase_early(ns_end_t* e, char* buf) {
  if (e->isSend) {
    for (int k = 0; k < 4; k++) ns_send(e, buf, ns_esizes[k], ns_etags[k], 500 + (uint32_t)k);
    return;
  }
  ns_recv(e, buf, 100000, ns_esizes[2], 22, 502);
  for (int k = 0; k < 4; k++)
    if (k != 2) ns_recv(e, buf, 3 << 20, ns_esizes[k], 21, 500 + (uint32_t)k);
}

static int g_threads = -1; /* helper threads asked for, -1: the plugin's choice */

/* The connection's helper threads, by name (mkccl-socks<i> sending,
 * mkccl-sockr<i> receiving): `expect` of each index while it is open. */
static void check_helpers(int receiving, int expect) {
  for (int t = 0; t < g_threads; t++) {
    char name[32];
    snprintf(name, sizeof(name), "mkccl-sock%c%d", receiving ? 'r' : 's', t);
    CHECK_EQ_INT(expect ? proc_wait_threads_named(name, 10.0) : proc_count_threads_named(name), expect);
  }
}

static int ns_rank(int rank, int nranks, void* arg) {
  (void)nranks;
  ns_shared_t* sh = arg;
  net_any_t n;
  ns_load(&n, g_version);
  int ndev = 0;
  CHECK_EQ_INT(net_any_devices(&n, &ndev), ncclSuccess);
  CHECK(ndev >= 1);
  char* buf = malloc(NS_BIG + 4096);
  CHECK(buf != NULL);
  ns_end_t e = {&n, NULL, rank == 1};
  void* lc = NULL;
  if (rank == 0) {
    CHECK_EQ_INT(net_any_listen(&n, 0, sh->handle, &lc), ncclSuccess);
    __atomic_store_n(&sh->ready, 1, __ATOMIC_RELEASE);
    e.comm = ns_accept(&n, lc);
  } else {
    char handle[NCCL_NET_HANDLE_MAXSIZE];
    while (!__atomic_load_n(&sh->ready, __ATOMIC_ACQUIRE)) sched_yield();
    memcpy(handle, sh->handle, sizeof(handle)); /* connect keeps its progress in its copy */
    e.comm = ns_connect(&n, 0, handle);
  }
  phase_sizes(&e, buf);
  check_helpers(rank == 0, 1);
  phase_inflight(&e, buf);
  phase_grouped(&e, buf);
  phase_early(&e, buf);
  if (rank == 0) {
    CHECK_EQ_INT(net_any_close_recv(&n, e.comm), ncclSuccess);
    CHECK_EQ_INT(net_any_close_listen(&n, lc), ncclSuccess);
  } else {
    CHECK_EQ_INT(net_any_close_send(&n, e.comm), ncclSuccess);
  }
  check_helpers(rank == 0, 0); /* joined at close */
  free(buf);
  net_any_close(&n);
  return 0;
}

int main(int argc, char** argv) {
  CHECK_MSG(argc <= 2 || argc >= 4, "usage: %s [version [threads socksPerThread [minTaskSize]]]", argv[0]);
  g_version = argc >= 2 ? atoi(argv[1]) : 11; /* v11: what NCCL 2.28 loads */
  setenv("NCCL_SOCKET_IFNAME", "lo", 1); /* the plugin reads the environment when NCCL hosts it */
  if (argc >= 4) {
    setenv("NCCL_SOCKET_NTHREADS", argv[2], 1);
    setenv("NCCL_NSOCKS_PERTHREAD", argv[3], 1);
    g_threads = atoi(argv[2]);
  }
  if (argc >= 5) setenv("NCCL_SOCKET_MIN_TASKSIZE", argv[4], 1);
  ns_shared_t* sh = ranks_shared_alloc(sizeof(*sh));
  CHECK(sh != NULL);
  CHECK_EQ_INT(ranks_run(2, ns_rank, sh, 100), 0);
  printf("net-socket p2p v%d: ok\n", g_version);
  return 0;
}
