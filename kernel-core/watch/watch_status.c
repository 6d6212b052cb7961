/* Status answers: a rank's record over its TCP listener, and over the
 * process's unix socket the records of its communicators (LIST) or of every
 * rank of one of them, gathered from their listeners (GATHER). */
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/err.h"
#include "comm/comm.h"
#include "watch/watch_proto.h"

void watch_status_fill(const struct ncclComm* comm, watch_status_t* st) {
  const watch_rec_t* r = &comm->watch.rec;
  memset(st, 0, sizeof(*st));
  st->commHash = comm->commHash;
  st->rank = comm->rank;
  st->nRanks = comm->nRanks;
  st->pid = (int32_t)getpid();
  st->cudaDev = comm->cudaDev;
  if (comm->peerInfo) memcpy(st->host, comm->peerInfo[comm->rank].hostname, sizeof(st->host));
  st->host[sizeof(st->host) - 1] = '\0';
  st->collEntered = __atomic_load_n(&r->collEntered, __ATOMIC_ACQUIRE);
  st->collDone = __atomic_load_n(&r->collDone, __ATOMIC_ACQUIRE);
  st->p2pEntered = __atomic_load_n(&r->p2pEntered, __ATOMIC_RELAXED);
  st->lastKind = __atomic_load_n(&r->lastKind, __ATOMIC_RELAXED);
  st->lastColl = __atomic_load_n(&r->lastColl, __ATOMIC_RELAXED);
  st->lastType = __atomic_load_n(&r->lastType, __ATOMIC_RELAXED);
  st->lastPeer = __atomic_load_n(&r->lastPeer, __ATOMIC_RELAXED);
  st->lastCount = __atomic_load_n(&r->lastCount, __ATOMIC_RELAXED);
  int64_t at = __atomic_load_n(&r->lastNs, __ATOMIC_RELAXED);
  st->lastAgeNs = at ? mk_now_ns() - at : -1;
  st->failKind = __atomic_load_n(&comm->watch.failKind, __ATOMIC_ACQUIRE);
  st->failRank = st->failKind ? comm->watch.failRank : -1;
  st->reachable = 1;
}

void watch_status_serve_tcp(struct ncclComm* comm, int fd) {
  watch_status_t st;
  watch_status_fill(comm, &st);
  sock_send_all(fd, &st, sizeof(st), sock_deadline_ms(200), NULL);
  sock_close(&fd);
}

/* ---- gathering a communicator's records from every rank ----------------------------------------- */
/* What a gather needs, copied under the registry lock (the comm may end
 * while the gather runs). */
typedef struct {
  uint64_t commHash, magic;
  int nRanks, rank;
  sock_addr_t* addrs; /* [nRanks], each rank's watch listener (port 0: none) */
  watch_status_t* out; /* [nRanks] */
  int found;
} watch_gather_t;

static void watch_gather_copy(struct ncclComm* comm, void* arg) {
  watch_gather_t* g = arg;
  if (g->found || comm->commHash != g->commHash || (g->rank >= 0 && comm->rank != g->rank) || !comm->peerInfo) return;
  g->addrs = calloc((size_t)comm->nRanks, sizeof(sock_addr_t));
  g->out = calloc((size_t)comm->nRanks, sizeof(watch_status_t));
  if (!g->addrs || !g->out) return;
  g->nRanks = comm->nRanks;
  g->rank = comm->rank;
  g->magic = comm->magic ^ WATCH_MAGIC_SALT;
  for (int r = 0; r < comm->nRanks; r++) {
    g->addrs[r] = *bootstrap_peer_addr(comm->bootstrap, r);
    sock_addr_set_port(&g->addrs[r], comm->peerInfo[r].watchPort);
    g->out[r].rank = r;
    g->out[r].nRanks = comm->nRanks;
    g->out[r].commHash = comm->commHash;
    g->out[r].pid = comm->peerInfo[r].pid;
    memcpy(g->out[r].host, comm->peerInfo[r].hostname, sizeof(g->out[r].host));
    g->out[r].host[sizeof(g->out[r].host) - 1] = '\0';
  }
  watch_status_fill(comm, &g->out[comm->rank]);
  g->found = 1;
}

/* Every other rank: connect and hello to all, then read all, under one
 * deadline, so the whole gather takes WATCH_GATHER_MS at most however many
 * ranks do not answer (those left when it passes are unreachable). */
#define WATCH_GATHER_MS 2000
static void watch_gather_run(watch_gather_t* g) {
  int n = g->nRanks;
  int* fds = malloc(sizeof(int) * (size_t)n);
  if (!fds) return;
  int64_t deadline = sock_deadline_ms(WATCH_GATHER_MS);
  for (int r = 0; r < n; r++) {
    fds[r] = -1;
    if (r == g->rank || sock_addr_port(&g->addrs[r]) == 0) continue;
    int64_t connectBy = sock_deadline_ms(500);
    if (connectBy > deadline) connectBy = deadline;
    if (sock_time_ns() >= deadline || sock_connect(&g->addrs[r], connectBy, NULL, &fds[r]) != SOCK_OK ||
        sock_hello_send(fds[r], g->magic, WATCH_CONN_STATUS, WATCH_PROTO_VERSION, (uint64_t)g->rank, deadline, NULL) !=
            SOCK_OK)
      sock_close(&fds[r]);
  }
  for (int r = 0; r < n; r++) {
    if (r == g->rank) continue;
    watch_status_t st;
    if (fds[r] >= 0 && sock_recv_all(fds[r], &st, sizeof(st), deadline, NULL) == SOCK_OK && st.rank == r) {
      g->out[r] = st;
      g->out[r].reachable = 1;
    } else {
      g->out[r].reachable = 0;
    }
    sock_close(&fds[r]);
  }
  free(fds);
}

/* ---- the unix socket ---------------------------------------------------------------------------- */
typedef struct {
  watch_status_t* st;
  uint32_t n, cap;
} watch_list_t;

static void watch_list_add(struct ncclComm* comm, void* arg) {
  watch_list_t* l = arg;
  if (l->n == l->cap) {
    uint32_t cap = l->cap ? 2 * l->cap : 4;
    watch_status_t* s = realloc(l->st, sizeof(*s) * cap);
    if (!s) return;
    l->st = s, l->cap = cap;
  }
  watch_status_fill(comm, &l->st[l->n++]);
}

static void watch_reply(int fd, const watch_status_t* st, uint32_t n) {
  int64_t deadline = sock_deadline_ms(1000);
  if (sock_send_all(fd, &n, sizeof(n), deadline, NULL) == SOCK_OK && n)
    sock_send_all(fd, st, sizeof(*st) * n, deadline, NULL);
}

void watch_status_serve_unix(int fd) {
  watch_req_t req;
  if (sock_recv_all(fd, &req, sizeof(req), sock_deadline_ms(1000), NULL) != SOCK_OK) {
    close(fd);
    return;
  }
  if (req.what == WATCH_REQ_LIST) {
    watch_list_t l = {NULL, 0, 0};
    watch_each_comm(watch_list_add, &l);
    watch_reply(fd, l.st, l.n);
    free(l.st);
  } else if (req.what == WATCH_REQ_GATHER) {
    watch_gather_t g;
    memset(&g, 0, sizeof(g));
    g.commHash = req.commHash;
    g.rank = req.rank;
    watch_each_comm(watch_gather_copy, &g);
    if (g.found) {
      watch_gather_run(&g);
      watch_reply(fd, g.out, (uint32_t)g.nRanks);
    } else {
      watch_reply(fd, NULL, 0);
    }
    free(g.addrs);
    free(g.out);
  }
  close(fd);
}
