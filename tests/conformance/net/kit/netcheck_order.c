/* many-to-one: several connections into one receiver, each carrying a train
 * of one tag whose sizes mix tiny, eager and rendezvous-sized messages, all
 * in flight at once and interleaved across the connections. Every receive
 * must get its own message (the ABI: one tag matches in send order).
 * Each connection's receives are tested oldest first, a later one only once
 * the earlier ones are done, the connections in turn: that is all NCCL's
 * core does (it tests the oldest unfinished request of a connection, as
 * mkccl's transport-net does), and NCCL's own socket plugin depends on it
 * (its test of a fresh request reads the next size header off the control
 * socket, so testing a later receive first would take an earlier message's
 * size). The ABI's README says test is called "until they complete" and
 * nothing more; the kit asks no more than NCCL does. Role A receives, role
 * B sends. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netcheck.h"

#define NC_CONNS 3
#define NC_TAG 21
static const size_t nc_order_sizes[] = {4093, 0, 2 << 20, 7, 65539, 1 << 20};
#define NC_ORDER_MAX (int)(sizeof(nc_order_sizes) / sizeof(nc_order_sizes[0]))

/* Messages per connection: the sizes the run allows, at most the ABI window. */
static int nc_order_count(const netcheck_role_t* r, size_t* cap) {
  *cap = r->quick ? (1 << 20) : (2 << 20);
  if (*cap > r->props.maxP2pBytes) *cap = r->props.maxP2pBytes;
  int n = NC_ORDER_MAX, window = netcheck_max_requests(&r->plugin);
  return n < window ? n : window;
}

/* Message i of connection k: its size (capped) and fill seed. */
static size_t nc_order_size(int k, int i, size_t cap) {
  size_t s = nc_order_sizes[(i + k) % NC_ORDER_MAX];
  return s < cap ? s : cap - 1;
}
static uint32_t nc_order_seed(int k, int i) { return 7000u + (uint32_t)k * 100u + (uint32_t)i; }

static void* nc_order_alloc(size_t size) { return aligned_alloc(4096, (size + 4095) / 4096 * 4096 + 4096); }

typedef struct {
  void* comm;
  void* mh;
  uint8_t* buf;
  void* reqs[NC_ORDER_MAX];
} nc_order_conn_t;

static void nc_order_close(netcheck_role_t* r, nc_order_conn_t* c, int n, int isRecv) {
  const ncclNet_v12_t* net = r->plugin.net;
  for (int k = 0; k < n; k++) {
    if (c[k].mh) net->deregMr(c[k].comm, c[k].mh);
    if (c[k].comm) (isRecv ? net->closeRecv : net->closeSend)(c[k].comm);
    free(c[k].buf);
  }
}

/* Tests each connection's oldest unfinished receive, connection after
 * connection, until all are done: a receive is tested only once every
 * earlier receive of its connection is done. */
static int nc_order_wait_all(netcheck_role_t* r, nc_order_conn_t* c, int m, size_t cap) {
  int left = NC_CONNS * m;
  int next[NC_CONNS] = {0};
  while (left > 0) {
    if (netcheck_now_ms() > r->deadlineMs)
      return !netcheck_check(r, 0, "match", "%d of %d receives not done before the deadline", left, NC_CONNS * m);
    for (int k = 0; k < NC_CONNS; k++) {
      int i = next[k];
      if (i == m) continue;
      int got = -1, fin = 0;
      ncclResult_t res = r->plugin.net->test(c[k].reqs[i], &fin, &got);
      if (res != ncclSuccess) return !netcheck_check(r, 0, "match", "connection %d receive %d: test returned %d", k, i, (int)res);
      if (!fin) continue;
      next[k]++;
      left--;
      size_t want = nc_order_size(k, i, cap);
      if (got != (int)want || netcheck_verify(c[k].buf + (size_t)i * cap, want, nc_order_seed(k, i)) >= 0)
        return !netcheck_check(r, 0, "match", "connection %d receive %d: %d bytes or wrong data, message was %zu bytes",
                               k, i, got, want);
    }
  }
  return 0;
}

int netcheck_order_a(netcheck_role_t* r) {
  nc_order_conn_t c[NC_CONNS];
  memset(c, 0, sizeof(c));
  size_t cap;
  int m = nc_order_count(r, &cap), ok = 1;
  for (int k = 0; ok && k < NC_CONNS; k++) ok = netcheck_pair_accept(r, &c[k].comm) == 0;
  if (ok) netcheck_check(r, 1, "connect", "%d connections into one receiver", NC_CONNS);
  for (int k = 0; ok && k < NC_CONNS; k++) {
    c[k].buf = nc_order_alloc(cap * (size_t)m);
    ncclResult_t res = c[k].buf ? r->plugin.net->regMr(c[k].comm, c[k].buf, cap * (size_t)m, NCCL_PTR_HOST, &c[k].mh)
                                : ncclSystemError;
    if (res != ncclSuccess) ok = netcheck_check(r, 0, "regMr", "connection %d: %d", k, (int)res);
  }
  /* Every receive takes the largest message: a wrong match shows in size or data. */
  for (int i = 0; ok && i < m; i++)
    for (int k = 0; ok && k < NC_CONNS; k++) {
      void* data = c[k].buf + (size_t)i * cap;
      size_t size = cap;
      int tag = NC_TAG;
      ncclResult_t res = netcheck_irecv(r, c[k].comm, 1, &data, &size, &tag, &c[k].mh, &c[k].reqs[i]);
      if (res != ncclSuccess) ok = netcheck_check(r, 0, "post", "connection %d irecv %d: %d", k, i, (int)res);
    }
  if (ok) netcheck_check(r, 1, "post", "%d receives in flight over %d connections", NC_CONNS * m, NC_CONNS);
  if (ok && netcheck_sync(r, 1) != 0) ok = netcheck_check(r, 0, "sync", "sender did not start");
  if (ok && nc_order_wait_all(r, c, m, cap) != 0) ok = 0;
  if (ok)
    netcheck_check(r, 1, "match", "every message in its own receive (each connection tested oldest first, the "
                   "connections in turn)");
  nc_order_close(r, c, NC_CONNS, 1);
  return ok ? 0 : -1;
}

int netcheck_order_b(netcheck_role_t* r) {
  nc_order_conn_t c[NC_CONNS];
  memset(c, 0, sizeof(c));
  size_t cap;
  int m = nc_order_count(r, &cap), ok = 1;
  for (int k = 0; ok && k < NC_CONNS; k++) ok = netcheck_pair_connect(r, &c[k].comm) == 0;
  for (int k = 0; ok && k < NC_CONNS; k++) {
    c[k].buf = nc_order_alloc(cap * (size_t)m);
    ncclResult_t res = c[k].buf ? r->plugin.net->regMr(c[k].comm, c[k].buf, cap * (size_t)m, NCCL_PTR_HOST, &c[k].mh)
                                : ncclSystemError;
    if (res != ncclSuccess) ok = netcheck_check(r, 0, "regMr-send", "connection %d: %d", k, (int)res);
    for (int i = 0; ok && i < m; i++) netcheck_fill(c[k].buf + (size_t)i * cap, nc_order_size(k, i, cap), nc_order_seed(k, i));
  }
  if (ok && netcheck_sync(r, 1) != 0) ok = netcheck_check(r, 0, "sync", "receiver did not post");
  /* Interleaved across the connections, all in flight before any is tested. */
  for (int i = 0; ok && i < m; i++)
    for (int k = 0; ok && k < NC_CONNS; k++) {
      ncclResult_t res = netcheck_isend(r, c[k].comm, c[k].buf + (size_t)i * cap, nc_order_size(k, i, cap), NC_TAG,
                                        c[k].mh, &c[k].reqs[i]);
      if (res != ncclSuccess) ok = netcheck_check(r, 0, "isend", "connection %d isend %d: %d", k, i, (int)res);
    }
  for (int k = 0; ok && k < NC_CONNS; k++)
    for (int i = 0; ok && i < m; i++) {
      ncclResult_t res;
      int w = netcheck_wait(r, c[k].reqs[i], NULL, &res);
      if (w != 0) ok = netcheck_check(r, 0, "send-complete", "connection %d send %d: %s %d", k, i, w < 0 ? "timeout" : "error", (int)res);
    }
  if (ok) netcheck_check(r, 1, "isend", "%d sends over %d connections completed", NC_CONNS * m, NC_CONNS);
  nc_order_close(r, c, NC_CONNS, 0);
  return ok ? 0 : -1;
}
