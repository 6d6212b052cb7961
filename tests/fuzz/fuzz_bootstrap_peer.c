/* Fuzz target: what a rank's bootstrap listener accepts from its peers: the
 * hello (magic, type RING or P2P, version, the sender's rank), then on a P2P
 * connection tagged messages (tag, size, payload) and on the ring connection
 * the allgather's slices. Each input is one connection's bytes (when the
 * first byte is odd, the job's real magic replaces the first 8 bytes so the
 * checks past it are reached too) to rank 0 of 4. The harness polls the
 * listener (bootstrap_conn_poll, one round of bootstrap_conn_wait) until the
 * connection is filed or dropped; a filed P2P connection then serves a fixed
 * sequence of bootstrap_recv calls, a ring connection one allgather, each
 * until the first error (the harness closed its end: no wait). */
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bootstrap/bootstrap_internal.h"
#include "fuzz_setup.h"
#include "sock/sock.h"

#define FUZZ_RANKS 4
#define FUZZ_MAGIC 0x6675a2a2beefULL

static int fuzz_listenFd = -1;
static sock_addr_t fuzz_listenAddr;

static bootstrap_state_t* fuzz_state_new(void) {
  if (fuzz_listenFd < 0) {
    sock_addr_t any;
    if (sock_addr_parse("127.0.0.1:0", 0, &any) != SOCK_OK) return NULL;
    if (sock_listen(&any, 0, &fuzz_listenFd, &fuzz_listenAddr) != SOCK_OK) return NULL;
  }
  bootstrap_state_t* st = calloc(1, sizeof(*st));
  if (!st) return NULL;
  st->rank = 0;
  st->nRanks = FUZZ_RANKS;
  st->magic = FUZZ_MAGIC;
  st->timeoutMs = 500;
  st->handshakeMs = 200;
  st->listenFd = fuzz_listenFd;
  st->listenAddr = fuzz_listenAddr;
  st->ringSendFd = st->ringRecvFd = -1;
  pthread_mutex_init(&st->ringLock, NULL);
  pthread_mutex_init(&st->sendLock, NULL);
  pthread_mutex_init(&st->recvLock, NULL);
  st->peerAddrs = calloc(FUZZ_RANKS, sizeof(*st->peerAddrs));
  st->sendFds = malloc(sizeof(int) * FUZZ_RANKS);
  st->recvFds = malloc(sizeof(int) * FUZZ_RANKS);
  for (int i = 0; i < FUZZ_RANKS; i++) st->sendFds[i] = st->recvFds[i] = -1;
  return st;
}

static void fuzz_state_free(bootstrap_state_t* st) {
  st->listenFd = -1; /* kept for the next input */
  bootstrap_destroy(st);
}

/* The connection filed: the P2P slot's peer, FUZZ_RANKS for the ring, -1 for none. */
static int fuzz_filed(const bootstrap_state_t* st) {
  for (int p = 0; p < FUZZ_RANKS; p++)
    if (st->recvFds[p] >= 0) return p;
  return st->ringRecvFd >= 0 ? FUZZ_RANKS : -1;
}

static const struct {
  int tag;
  size_t size;
} fuzz_recvs[] = {{0, 8}, {BOOTSTRAP_TAG_BARRIER, 0}, {3, 64}, {0, 8}, {1, 4}, {BOOTSTRAP_TAG_SPLIT, 24}};

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  bootstrap_state_t* st = fuzz_state_new();
  if (!st) fuzz_setup_failed("fuzz_bootstrap_peer", "no listener on 127.0.0.1");
  int fd = -1;
  /* Generous: on a loaded machine (sanitizer runs beside it) a connect can
   * wait for the scheduler or for a loopback port to leave TIME_WAIT. */
  if (sock_connect(&st->listenAddr, sock_deadline_ms(5000), NULL, &fd) != SOCK_OK) {
    char why[256];
    snprintf(why, sizeof(why), "no connection to its listener: %s", sock_error());
    fuzz_setup_failed("fuzz_bootstrap_peer", why);
  }
  uint8_t msg[4096];
  size_t n = size < sizeof(msg) ? size : sizeof(msg);
  memcpy(msg, data, n);
  if (n >= 8 && (msg[0] & 1)) {
    uint64_t magic = FUZZ_MAGIC;
    memcpy(msg, &magic, 8);
  }
  if (n) (void)sock_send_all(fd, msg, n, sock_deadline_ms(200), NULL);
  shutdown(fd, SHUT_WR);

  /* Accept, then read the hello until the connection is filed or dropped. */
  int64_t deadline = sock_deadline_ms(300);
  int seen = 0;
  pthread_mutex_lock(&st->recvLock);
  while (fuzz_filed(st) < 0 && sock_time_ns() < deadline) {
    bootstrap_conn_poll(st, 5);
    if (st->nPending) seen = 1;
    else if (seen) break;
  }
  pthread_mutex_unlock(&st->recvLock);
  sock_close(&fd); /* everything is sent: the listener's reads end at EOF */

  int peer = fuzz_filed(st);
  if (peer == FUZZ_RANKS) {
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == 0) {
      st->ringSendFd = pair[0];
      char slices[FUZZ_RANKS * 16];
      memset(slices, 0, sizeof(slices));
      (void)bootstrap_allgather(st, slices, 16);
      close(pair[1]);
    }
  } else if (peer >= 0) {
    char buf[64];
    for (size_t i = 0; i < sizeof(fuzz_recvs) / sizeof(fuzz_recvs[0]); i++)
      if (bootstrap_recv(st, peer, fuzz_recvs[i].tag, buf, fuzz_recvs[i].size) != ncclSuccess) break;
  }
  fuzz_state_free(st);
  return 0;
}
