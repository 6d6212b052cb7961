/* What must fail, fails, and nothing hangs (a watchdog kills a hung test):
 *   test_net_socket_errors [<case> [threads socksPerThread]]   (no case: all)
 * magic      : foreign sockets and a handle with the wrong magic are rejected
 * truncate   : a message larger than the posted receive is an error
 * kill-sender / kill-receiver : the peer process dies mid-transfer
 * close      : closing in every state releases every fd and thread */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "net_socket_handle.h"
#include "net_socket_wire.h"
#include "ns_harness.h"
#include "proc_count.h"

#define NS_VERSION 11
#define NS_BIG (64u << 20)

/* Post a send and a receive on a pair and wait for both. */
static void exchange(net_any_t* n, void* sc, void* rc, size_t size, uint32_t seed) {
  char* s = malloc(size + 1);
  char* r = malloc(size + 1);
  CHECK(s && r);
  ns_fill(s, size, seed);
  int tag = 1;
  void *sreq = NULL, *rreq = NULL;
  CHECK_EQ_INT(net_any_irecv(n, rc, 1, (void**)&r, &size, &tag, NULL, &rreq), ncclSuccess);
  CHECK_EQ_INT(net_any_isend(n, sc, s, size, tag, NULL, &sreq), ncclSuccess);
  int sdone = 0, rdone = 0, got = -1;
  while (!sdone || !rdone) {
    if (!sdone) CHECK_EQ_INT(net_any_test(n, sreq, &sdone, NULL), ncclSuccess);
    if (!rdone) CHECK_EQ_INT(net_any_test(n, rreq, &rdone, &got), ncclSuccess);
  }
  CHECK_EQ_INT(got, size);
  CHECK(ns_verify(r, size, seed) < 0);
  free(s);
  free(r);
}

/* A plain TCP client of the listener a handle names. */
static int raw_connect(const void* handle) {
  net_socket_handle_t h;
  memcpy(&h, handle, sizeof(h)); /* handle buffers need not be aligned */
  int fd = socket(h.addr.sa.sa_family, SOCK_STREAM, 0);
  CHECK(fd >= 0);
  CHECK(connect(fd, &h.addr.sa, sock_addr_len(&h.addr)) == 0);
  return fd;
}

static void test_magic(void) {
  net_any_t n;
  ns_load(&n, NS_VERSION);
  char handle[NCCL_NET_HANDLE_MAXSIZE], bad[NCCL_NET_HANDLE_MAXSIZE], good[NCCL_NET_HANDLE_MAXSIZE];
  void* lc = NULL;
  CHECK_EQ_INT(net_any_listen(&n, 0, handle, &lc), ncclSuccess);
  /* A foreign client: 32 bytes that are not a hello. */
  int raw = raw_connect(handle);
  char junk[sizeof(net_socket_hello_t)];
  memset(junk, 'x', sizeof(junk));
  CHECK(send(raw, junk, sizeof(junk), 0) == (ssize_t)sizeof(junk));
  /* A connector whose handle carries another magic: it connects (the
   * listener says nothing back) but is never accepted. */
  memcpy(bad, handle, sizeof(bad));
  uint64_t magic;
  memcpy(&magic, bad + offsetof(net_socket_handle_t, magic), sizeof(magic));
  magic ^= 0x5a5a5a5a5a5a5a5aull;
  memcpy(bad + offsetof(net_socket_handle_t, magic), &magic, sizeof(magic));
  void* badSc = ns_connect(&n, 0, bad);
  memcpy(good, handle, sizeof(good));
  void *sc = NULL, *rc = NULL;
  while (!sc || !rc) {
    if (!sc) CHECK_EQ_INT(net_any_connect(&n, 0, good, &sc), ncclSuccess);
    if (!rc) CHECK_EQ_INT(net_any_accept(&n, lc, &rc), ncclSuccess);
  }
  exchange(&n, sc, rc, 100000, 5); /* the accepted comm is the good one */
  /* The rejected sockets are closed: the foreign client reads EOF, the bad
   * connector's sends fail; no further comm is ever accepted. */
  int rawClosed = 0, badFailed = 0;
  char byte;
  void* req = NULL;
  while (!rawClosed || !badFailed) {
    void* extra = NULL;
    CHECK_EQ_INT(net_any_accept(&n, lc, &extra), ncclSuccess);
    CHECK(extra == NULL);
    if (!rawClosed) {
      ssize_t got = recv(raw, &byte, 1, MSG_DONTWAIT);
      CHECK(got <= 0);
      rawClosed = got == 0 || (got < 0 && errno == ECONNRESET);
    }
    if (!badFailed) {
      ncclResult_t res = req ? ncclSuccess : net_any_isend(&n, badSc, junk, sizeof(junk), 1, NULL, &req);
      int done = 0;
      if (res == ncclSuccess && req) res = net_any_test(&n, req, &done, NULL);
      if (done) req = NULL;
      badFailed = res != ncclSuccess;
      if (badFailed) CHECK(res == ncclRemoteError || res == ncclSystemError);
    }
  }
  close(raw);
  CHECK_EQ_INT(net_any_close_send(&n, badSc), ncclSuccess);
  CHECK_EQ_INT(net_any_close_send(&n, sc), ncclSuccess);
  CHECK_EQ_INT(net_any_close_recv(&n, rc), ncclSuccess);
  CHECK_EQ_INT(net_any_close_listen(&n, lc), ncclSuccess);
  net_any_close(&n);
}

static void test_truncate(size_t sent, size_t room) {
  net_any_t n;
  ns_load(&n, NS_VERSION);
  void *sc, *rc;
  ns_pair(&n, 0, &sc, &rc);
  char* s = calloc(1, sent);
  char* r = calloc(1, room);
  int tag = 3;
  void *sreq = NULL, *rreq = NULL;
  CHECK_EQ_INT(net_any_irecv(&n, rc, 1, (void**)&r, &room, &tag, NULL, &rreq), ncclSuccess);
  CHECK_EQ_INT(net_any_isend(&n, sc, s, sent, tag, NULL, &sreq), ncclSuccess);
  ncclResult_t res = ns_wait(&n, rreq, NULL);
  CHECK_EQ_INT(res, ncclInvalidUsage);
  /* The receive side is dead now: posting again reports it. */
  void* again = NULL;
  CHECK(net_any_irecv(&n, rc, 1, (void**)&r, &room, &tag, NULL, &again) != ncclSuccess);
  /* The sender completes (it was all buffered) or fails; it does not hang. */
  res = ns_wait(&n, sreq, NULL);
  CHECK(res == ncclSuccess || res == ncclRemoteError || res == ncclSystemError);
  CHECK_EQ_INT(net_any_close_send(&n, sc), ncclSuccess);
  CHECK_EQ_INT(net_any_close_recv(&n, rc), ncclSuccess);
  free(s);
  free(r);
  net_any_close(&n);
}

/* The victim (child) connects to or accepts from the survivor (parent),
 * moves part of a message, says so on a pipe, and waits to be killed. */
static void test_kill(int victimSends) {
  int hp[2], sp[2]; /* handle: parent -> child; status: child -> parent */
  CHECK(pipe(hp) == 0 && pipe(sp) == 0);
  net_any_t n;
  ns_load(&n, NS_VERSION);
  char* buf = malloc(NS_BIG);
  CHECK(buf != NULL);
  char handle[NCCL_NET_HANDLE_MAXSIZE];
  void* lc = NULL;
  if (victimSends) CHECK_EQ_INT(net_any_listen(&n, 0, handle, &lc), ncclSuccess); /* survivor receives */
  fflush(stderr);
  pid_t child = fork();
  CHECK(child >= 0);
  if (child == 0) {
    void* comm;
    char childHandle[NCCL_NET_HANDLE_MAXSIZE];
    if (victimSends) {
      memcpy(childHandle, handle, sizeof(childHandle));
      comm = ns_connect(&n, 0, childHandle);
      void* req = NULL;
      CHECK_EQ_INT(net_any_isend(&n, comm, buf, NS_BIG, 1, NULL, &req), ncclSuccess);
      for (int i = 0; i < 100; i++) { /* push what the socket buffers take; 64 MB never fit */
        int done = 0;
        CHECK_EQ_INT(net_any_test(&n, req, &done, NULL), ncclSuccess);
        CHECK(!done);
      }
    } else {
      void* clc = NULL;
      CHECK_EQ_INT(net_any_listen(&n, 0, childHandle, &clc), ncclSuccess);
      CHECK(write(hp[1], childHandle, sizeof(childHandle)) == (ssize_t)sizeof(childHandle));
      comm = ns_accept(&n, clc); /* and never posts a receive */
    }
    CHECK(write(sp[1], "k", 1) == 1);
    for (;;) pause();
  }
  void* comm;
  void* req = NULL;
  if (victimSends) {
    comm = ns_accept(&n, lc);
  } else {
    CHECK(read(hp[0], handle, sizeof(handle)) == (ssize_t)sizeof(handle));
    comm = ns_connect(&n, 0, handle);
    CHECK_EQ_INT(net_any_isend(&n, comm, buf, NS_BIG, 1, NULL, &req), ncclSuccess);
  }
  char k;
  CHECK(read(sp[0], &k, 1) == 1);
  CHECK(kill(child, SIGKILL) == 0);
  CHECK(waitpid(child, NULL, 0) == child);
  ncclResult_t res = ncclSuccess;
  if (victimSends) { /* the error surfaces from irecv (it progresses too) or from test */
    size_t room = NS_BIG;
    int tag = 1;
    res = net_any_irecv(&n, comm, 1, (void**)&buf, &room, &tag, NULL, &req);
    CHECK(res != ncclSuccess || req != NULL);
  }
  if (res == ncclSuccess) res = ns_wait(&n, req, NULL);
  CHECK_MSG(res == ncclRemoteError || res == ncclSystemError, "test returned %d", (int)res);
  if (victimSends) {
    CHECK_EQ_INT(net_any_close_recv(&n, comm), ncclSuccess);
    CHECK_EQ_INT(net_any_close_listen(&n, lc), ncclSuccess);
  } else {
    CHECK_EQ_INT(net_any_close_send(&n, comm), ncclSuccess);
  }
  free(buf);
  net_any_close(&n);
}

/* Thread exit is seen in /proc a moment after pthread_join returns. */
static void wait_threads(int want) {
  for (int i = 0; i < 2000 && proc_count_threads() != want; i++) usleep(1000);
  CHECK_EQ_INT(proc_count_threads(), want);
}

static void test_close(void) {
  net_any_t n;
  ns_load(&n, NS_VERSION);
  void *lc, *sc, *rc, *req;
  /* One connection made and closed first: what a runtime starts lazily (a
   * sanitizer's thread) is then part of the baseline. */
  ns_pair(&n, 0, &sc, &rc);
  exchange(&n, sc, rc, 1000, 1);
  CHECK_EQ_INT(net_any_close_send(&n, sc), ncclSuccess);
  CHECK_EQ_INT(net_any_close_recv(&n, rc), ncclSuccess);
  usleep(100000);
  int fds = proc_count_fds(), threads = proc_count_threads();
  char handle[NCCL_NET_HANDLE_MAXSIZE], h2[NCCL_NET_HANDLE_MAXSIZE];
  char* big = malloc(NS_BIG);
  CHECK(big != NULL);
  int tag = 1;
  size_t room = NS_BIG;

  /* A listener nobody connected to. */
  CHECK_EQ_INT(net_any_listen(&n, 0, handle, &lc), ncclSuccess);
  CHECK_EQ_INT(net_any_close_listen(&n, lc), ncclSuccess);
  CHECK_EQ_INT(proc_count_fds(), fds);

  /* A listener with a connection it never accepted, and one half-said hello. */
  CHECK_EQ_INT(net_any_listen(&n, 0, handle, &lc), ncclSuccess);
  memcpy(h2, handle, sizeof(h2));
  sc = ns_connect(&n, 0, h2);
  int raw = raw_connect(handle);
  CHECK(send(raw, "MKNS", 4, 0) == 4);
  void* none = NULL;
  CHECK_EQ_INT(net_any_accept(&n, lc, &none), ncclSuccess); /* takes the sockets, the group is incomplete or complete */
  if (none) CHECK_EQ_INT(net_any_close_recv(&n, none), ncclSuccess);
  CHECK_EQ_INT(net_any_close_listen(&n, lc), ncclSuccess);
  CHECK_EQ_INT(net_any_close_send(&n, sc), ncclSuccess);
  close(raw);
  CHECK_EQ_INT(proc_count_fds(), fds);
  wait_threads(threads);

  /* Both ends with requests in flight: a 64 MB send no one receives, a
   * receive no one sends. */
  ns_pair(&n, 0, &sc, &rc);
  CHECK_EQ_INT(net_any_isend(&n, sc, big, NS_BIG, tag, NULL, &req), ncclSuccess);
  void* rreq = NULL;
  char small[16];
  void* sp = small;
  size_t srm = sizeof(small);
  int otherTag = 2;
  CHECK_EQ_INT(net_any_irecv(&n, rc, 1, &sp, &srm, &otherTag, NULL, &rreq), ncclSuccess);
  CHECK_EQ_INT(net_any_close_send(&n, sc), ncclSuccess);
  CHECK_EQ_INT(net_any_close_recv(&n, rc), ncclSuccess);
  CHECK_EQ_INT(proc_count_fds(), fds);
  wait_threads(threads);

  /* The receiver closes mid-transfer: two 64 MB messages, it takes the first
   * and closes; the second cannot fit in the socket buffers, so the sender
   * fails; it does not hang. */
  ns_pair(&n, 0, &sc, &rc);
  char* rbuf = malloc(NS_BIG);
  CHECK(rbuf != NULL);
  void* req2 = NULL;
  CHECK_EQ_INT(net_any_irecv(&n, rc, 1, (void**)&rbuf, &room, &tag, NULL, &rreq), ncclSuccess);
  CHECK_EQ_INT(net_any_isend(&n, sc, big, NS_BIG, tag, NULL, &req), ncclSuccess);
  CHECK_EQ_INT(net_any_isend(&n, sc, big, NS_BIG, tag, NULL, &req2), ncclSuccess);
  for (int rdone = 0; !rdone;) {
    int sdone = 0;
    CHECK_EQ_INT(net_any_test(&n, rreq, &rdone, NULL), ncclSuccess);
    if (req) CHECK_EQ_INT(net_any_test(&n, req, &sdone, NULL), ncclSuccess);
    if (sdone) req = NULL;
  }
  req = req2;
  CHECK_EQ_INT(net_any_close_recv(&n, rc), ncclSuccess);
  ncclResult_t res = ns_wait(&n, req, NULL);
  CHECK_MSG(res == ncclRemoteError || res == ncclSystemError, "test returned %d", (int)res);
  CHECK_EQ_INT(net_any_close_send(&n, sc), ncclSuccess);
  CHECK_EQ_INT(proc_count_fds(), fds);
  wait_threads(threads);
  free(rbuf);
  free(big);
  net_any_close(&n);
}

int main(int argc, char** argv) {
  CHECK_MSG(argc <= 2 || argc == 4, "usage: %s [case [threads socksPerThread]]", argv[0]);
  setenv("NCCL_SOCKET_IFNAME", "lo", 1);
  if (argc == 4) {
    setenv("NCCL_SOCKET_NTHREADS", argv[2], 1);
    setenv("NCCL_NSOCKS_PERTHREAD", argv[3], 1);
  }
  ns_watchdog(60);
  const char* c = argc >= 2 ? argv[1] : "all";
  int all = strcmp(c, "all") == 0, ran = 0;
  if (all || strcmp(c, "magic") == 0) ran += (test_magic(), 1);
  if (all || strcmp(c, "truncate") == 0) {
    test_truncate(1000, 100);
    test_truncate(1 << 20, 100000);
    ran++;
  }
  if (all || strcmp(c, "kill-sender") == 0) ran += (test_kill(1), 1);
  if (all || strcmp(c, "kill-receiver") == 0) ran += (test_kill(0), 1);
  if (all || strcmp(c, "close") == 0) ran += (test_close(), 1);
  CHECK_MSG(ran > 0, "unknown case %s", c);
  printf("net-socket errors (%s): ok\n", c);
  return 0;
}
