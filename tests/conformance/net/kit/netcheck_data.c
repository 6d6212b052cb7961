/* Data scenarios: connection and registration, every size with its bytes
 * verified, a receive larger than the message, the full window of requests
 * in flight, tags, grouped receives. Role A receives, role B sends. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "netcheck.h"

#define NC_CANARY 64
#define NC_CANARY_BYTE 0xEE

static void* nc_alloc(size_t size) {
  size_t rounded = (size + 4095) / 4096 * 4096;
  return aligned_alloc(4096, rounded ? rounded : 4096);
}

static int nc_reg(netcheck_role_t* r, void* comm, void* buf, size_t size, void** mh) {
  ncclResult_t res = r->plugin.net->regMr(comm, buf, size, NCCL_PTR_HOST, mh);
  if (res == ncclSuccess) return 0;
  netcheck_check(r, 0, "regMr", "regMr(%zu bytes) returned %d", size, (int)res);
  return -1;
}

static int nc_canary_ok(const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i] != NC_CANARY_BYTE) return 0;
  return 1;
}

/* ---- connect: listen/connect/accept, regMr/deregMr, close ---- */
int netcheck_connect_a(netcheck_role_t* r) {
  const ncclNet_v12_t* net = r->plugin.net;
  void* rc = NULL;
  if (netcheck_pair_accept(r, &rc) != 0) return -1;
  netcheck_check(r, 1, "listen-accept", "recvComm %p", rc);
  size_t size = 1 << 20;
  char* buf = nc_alloc(size);
  void *mh1 = NULL, *mh2 = NULL;
  ncclResult_t a = net->regMr(rc, buf, size, NCCL_PTR_HOST, &mh1);
  ncclResult_t b = net->regMr(rc, buf + 4096, 8192, NCCL_PTR_HOST, &mh2); /* inside the first */
  ncclResult_t c = a == ncclSuccess ? net->deregMr(rc, mh1) : ncclSuccess;
  ncclResult_t d = b == ncclSuccess ? net->deregMr(rc, mh2) : ncclSuccess;
  int ok = netcheck_check(r, a == ncclSuccess && b == ncclSuccess && c == ncclSuccess && d == ncclSuccess,
                          "regMr-deregMr", "regMr %d, nested regMr %d, deregMr %d, %d", a, b, c, d);
  free(buf);
  if (netcheck_sync(r, 1) != 0) ok = netcheck_check(r, 0, "sync", "peer did not reach the end");
  ncclResult_t cl = net->closeRecv(rc);
  ok &= netcheck_check(r, cl == ncclSuccess, "closeRecv", "returned %d", (int)cl);
  return ok ? 0 : -1;
}

int netcheck_connect_b(netcheck_role_t* r) {
  const ncclNet_v12_t* net = r->plugin.net;
  void* sc = NULL;
  if (netcheck_pair_connect(r, &sc) != 0) return -1;
  netcheck_check(r, 1, "connect", "sendComm %p", sc);
  char* buf = nc_alloc(65536);
  void* mh = NULL;
  ncclResult_t a = net->regMr(sc, buf, 65536, NCCL_PTR_HOST, &mh);
  ncclResult_t b = a == ncclSuccess ? net->deregMr(sc, mh) : ncclSuccess;
  int ok = netcheck_check(r, a == ncclSuccess && b == ncclSuccess, "regMr-send", "regMr %d, deregMr %d", a, b);
  free(buf);
  if (netcheck_sync(r, 1) != 0) ok = netcheck_check(r, 0, "sync", "peer did not reach the end");
  ncclResult_t cl = net->closeSend(sc);
  ok &= netcheck_check(r, cl == ncclSuccess, "closeSend", "returned %d", (int)cl);
  return ok ? 0 : -1;
}

/* ---- sizes: 0, 1, odd, pages, up to 64 MB (or maxP2pBytes) ---- */
static const size_t nc_sizes[] = {0, 1, 7, 4095, 4096, 4097, 65539, 1 << 20, 8 << 20, 64 << 20};
#define NC_NSIZES (int)(sizeof(nc_sizes) / sizeof(nc_sizes[0]))

static int nc_nsizes(const netcheck_role_t* r) {
  int n = 0;
  size_t cap = r->quick ? (1 << 20) : (64 << 20);
  while (n < NC_NSIZES && nc_sizes[n] <= cap && nc_sizes[n] <= r->props.maxP2pBytes) n++;
  return n;
}

int netcheck_sizes_a(netcheck_role_t* r) {
  void* rc = NULL;
  if (netcheck_pair_accept(r, &rc) != 0) return -1;
  int n = nc_nsizes(r);
  size_t max = nc_sizes[n - 1];
  uint8_t* buf = nc_alloc(max + NC_CANARY);
  void* mh = NULL;
  int ok = nc_reg(r, rc, buf, max + NC_CANARY, &mh) == 0;
  for (int i = 0; ok && i < n; i++) {
    size_t size = nc_sizes[i];
    char name[32];
    snprintf(name, sizeof(name), "%zu", size);
    memset(buf, NC_CANARY_BYTE, size + NC_CANARY);
    void* data = buf;
    size_t want = size;
    int tag = 7, got = -1;
    void* req = NULL;
    ncclResult_t res = netcheck_irecv(r, rc, 1, &data, &want, &tag, &mh, &req);
    if (res != ncclSuccess) {
      ok = netcheck_check(r, 0, name, "irecv returned %d", (int)res);
      break;
    }
    int w = netcheck_wait(r, req, &got, &res);
    if (w != 0) {
      ok = netcheck_check(r, 0, name, w < 0 ? "receive not done before the deadline" : "test returned %d", (int)res);
      break;
    }
    long bad = netcheck_verify(buf, size, (uint32_t)size);
    if (got != (int)size) ok &= netcheck_check(r, 0, name, "test reported %d bytes, %zu were sent", got, size);
    else if (bad >= 0) ok &= netcheck_check(r, 0, name, "data differs from byte %ld on", bad);
    else if (!nc_canary_ok(buf + size, NC_CANARY)) ok &= netcheck_check(r, 0, name, "bytes written past the message");
    else netcheck_check(r, 1, name, "data verified");
  }
  if (mh) r->plugin.net->deregMr(rc, mh);
  r->plugin.net->closeRecv(rc);
  free(buf);
  return ok ? 0 : -1;
}

int netcheck_sizes_b(netcheck_role_t* r) {
  void* sc = NULL;
  if (netcheck_pair_connect(r, &sc) != 0) return -1;
  int n = nc_nsizes(r);
  size_t max = nc_sizes[n - 1];
  uint8_t* buf = nc_alloc(max);
  void* mh = NULL;
  int ok = nc_reg(r, sc, buf, max ? max : 1, &mh) == 0;
  for (int i = 0; ok && i < n; i++) {
    size_t size = nc_sizes[i];
    netcheck_fill(buf, size, (uint32_t)size);
    void* req = NULL;
    ncclResult_t res = netcheck_isend(r, sc, buf, size, 7, mh, &req);
    int w = res == ncclSuccess ? netcheck_wait(r, req, NULL, &res) : 1;
    if (w != 0) ok = netcheck_check(r, 0, "send", "%zu bytes: %s %d", size, w < 0 ? "timeout" : "error", (int)res);
  }
  if (mh) r->plugin.net->deregMr(sc, mh);
  r->plugin.net->closeSend(sc);
  free(buf);
  return ok ? 0 : -1;
}

/* ---- a receive larger than the message: the size test reports ---- */
int netcheck_larger_a(netcheck_role_t* r) {
  void* rc = NULL;
  if (netcheck_pair_accept(r, &rc) != 0) return -1;
  size_t cap = 1 << 20;
  uint8_t* buf = nc_alloc(cap);
  void* mh = NULL;
  int ok = nc_reg(r, rc, buf, cap, &mh) == 0;
  const size_t sent[] = {1000, 0, 4096 + 3};
  for (int i = 0; ok && i < 3; i++) {
    memset(buf, NC_CANARY_BYTE, cap);
    void* data = buf;
    size_t want = cap;
    int tag = 3, got = -1;
    void* req = NULL;
    ncclResult_t res = netcheck_irecv(r, rc, 1, &data, &want, &tag, &mh, &req);
    int w = res == ncclSuccess ? netcheck_wait(r, req, &got, &res) : 1;
    char name[32];
    snprintf(name, sizeof(name), "%zu-into-1MB", sent[i]);
    if (w != 0) {
      ok = netcheck_check(r, 0, name, "%s %d", w < 0 ? "timeout" : "error", (int)res);
      break;
    }
    if (got != (int)sent[i]) ok &= netcheck_check(r, 0, name, "test reported %d bytes, %zu were sent", got, sent[i]);
    else if (netcheck_verify(buf, sent[i], (uint32_t)sent[i] + 1) >= 0) ok &= netcheck_check(r, 0, name, "data differs");
    else if (!nc_canary_ok(buf + sent[i], NC_CANARY)) ok &= netcheck_check(r, 0, name, "bytes written past the message");
    else netcheck_check(r, 1, name, "size reported, data verified");
  }
  if (mh) r->plugin.net->deregMr(rc, mh);
  r->plugin.net->closeRecv(rc);
  free(buf);
  return ok ? 0 : -1;
}

int netcheck_larger_b(netcheck_role_t* r) {
  void* sc = NULL;
  if (netcheck_pair_connect(r, &sc) != 0) return -1;
  uint8_t* buf = nc_alloc(8192);
  void* mh = NULL;
  int ok = nc_reg(r, sc, buf, 8192, &mh) == 0;
  const size_t sent[] = {1000, 0, 4096 + 3};
  for (int i = 0; ok && i < 3; i++) {
    netcheck_fill(buf, sent[i], (uint32_t)sent[i] + 1);
    void* req = NULL;
    ncclResult_t res = netcheck_isend(r, sc, buf, sent[i], 3, mh, &req);
    int w = res == ncclSuccess ? netcheck_wait(r, req, NULL, &res) : 1;
    if (w != 0) ok = netcheck_check(r, 0, "send", "%zu bytes: %s %d", sent[i], w < 0 ? "timeout" : "error", (int)res);
  }
  if (mh) r->plugin.net->deregMr(sc, mh);
  r->plugin.net->closeSend(sc);
  free(buf);
  return ok ? 0 : -1;
}

/* ---- the whole request window in flight, in order ---- */
static size_t nc_inflight_size(int i) { return 1000 + (size_t)i * 1237; }

int netcheck_inflight_a(netcheck_role_t* r) {
  void* rc = NULL;
  if (netcheck_pair_accept(r, &rc) != 0) return -1;
  int n = netcheck_max_requests(&r->plugin);
  size_t slot = 65536;
  uint8_t* buf = nc_alloc(slot * (size_t)n);
  void* mh = NULL;
  int ok = nc_reg(r, rc, buf, slot * (size_t)n, &mh) == 0;
  void* reqs[NCCL_NET_MAX_REQUESTS] = {0};
  int posted = 0;
  for (; ok && posted < n; posted++) {
    void* data = buf + slot * (size_t)posted;
    size_t want = slot;
    int tag = 11;
    ncclResult_t res = netcheck_irecv(r, rc, 1, &data, &want, &tag, &mh, &reqs[posted]);
    if (res != ncclSuccess) ok = netcheck_check(r, 0, "post", "irecv %d of %d: %d", posted + 1, n, (int)res);
  }
  if (ok) netcheck_check(r, 1, "post", "%d receives in flight", n);
  int bad = 0;
  for (int i = 0; ok && i < n; i++) {
    int got = -1;
    ncclResult_t res;
    int w = netcheck_wait(r, reqs[i], &got, &res);
    if (w != 0) {
      ok = netcheck_check(r, 0, "complete", "receive %d: %s %d", i, w < 0 ? "timeout" : "error", (int)res);
      break;
    }
    if (got != (int)nc_inflight_size(i) || netcheck_verify(buf + slot * (size_t)i, (size_t)got, 500u + (uint32_t)i) >= 0) {
      if (!bad++) netcheck_check(r, 0, "order", "receive %d got %d bytes / wrong data (message order or matching broken)", i, got);
    }
  }
  if (ok && !bad) netcheck_check(r, 1, "complete", "%d messages matched in order, data verified", n);
  if (mh) r->plugin.net->deregMr(rc, mh);
  r->plugin.net->closeRecv(rc);
  free(buf);
  return ok && !bad ? 0 : -1;
}

int netcheck_inflight_b(netcheck_role_t* r) {
  void* sc = NULL;
  if (netcheck_pair_connect(r, &sc) != 0) return -1;
  int n = netcheck_max_requests(&r->plugin);
  size_t slot = 65536;
  uint8_t* buf = nc_alloc(slot * (size_t)n);
  void* mh = NULL;
  int ok = nc_reg(r, sc, buf, slot * (size_t)n, &mh) == 0;
  void* reqs[NCCL_NET_MAX_REQUESTS] = {0};
  for (int i = 0; ok && i < n; i++) {
    netcheck_fill(buf + slot * (size_t)i, nc_inflight_size(i), 500u + (uint32_t)i);
    ncclResult_t res = netcheck_isend(r, sc, buf + slot * (size_t)i, nc_inflight_size(i), 11, mh, &reqs[i]);
    if (res != ncclSuccess) ok = netcheck_check(r, 0, "isend", "isend %d of %d: %d", i + 1, n, (int)res);
  }
  if (ok) netcheck_check(r, 1, "isend", "%d sends in flight", n);
  for (int i = 0; ok && i < n; i++) {
    ncclResult_t res;
    int w = netcheck_wait(r, reqs[i], NULL, &res);
    if (w != 0) ok = netcheck_check(r, 0, "send-complete", "send %d: %s %d", i, w < 0 ? "timeout" : "error", (int)res);
  }
  if (mh) r->plugin.net->deregMr(sc, mh);
  r->plugin.net->closeSend(sc);
  free(buf);
  return ok ? 0 : -1;
}

/* ---- series of single messages, one in flight at a time ----
 * Message i has 100 + i bytes and tags[i]; A posts each receive once the
 * one before it completed, B sends each once the one before it completed. */
#define NC_SERIES_CAP 8192

static int nc_recv_series(netcheck_role_t* r, void* rc, const int* tags, int n, uint32_t seed, const char* check,
                          const char* what) {
  uint8_t* buf = nc_alloc(NC_SERIES_CAP);
  void* mh = NULL;
  int ok = nc_reg(r, rc, buf, NC_SERIES_CAP, &mh) == 0;
  for (int i = 0; ok && i < n; i++) {
    void* data = buf;
    size_t want = NC_SERIES_CAP;
    int tag = tags[i], got = -1;
    void* req = NULL;
    ncclResult_t res = netcheck_irecv(r, rc, 1, &data, &want, &tag, &mh, &req);
    int w = res == ncclSuccess ? netcheck_wait(r, req, &got, &res) : 1;
    if (w != 0)
      ok = netcheck_check(r, 0, check, "message %d of %d (tag %d): %s %d", i, n, tag, w < 0 ? "timeout" : "error",
                          (int)res);
    else if (got != 100 + i || netcheck_verify(buf, (size_t)got, seed + (uint32_t)i) >= 0)
      ok = netcheck_check(r, 0, check, "message %d (tag %d): %d bytes or data wrong", i, tag, got);
  }
  if (ok) netcheck_check(r, 1, check, "%d messages %s", n, what);
  if (mh) r->plugin.net->deregMr(rc, mh);
  free(buf);
  return ok;
}

static int nc_send_series(netcheck_role_t* r, void* sc, const int* tags, int n, uint32_t seed) {
  uint8_t* buf = nc_alloc(NC_SERIES_CAP);
  void* mh = NULL;
  int ok = nc_reg(r, sc, buf, NC_SERIES_CAP, &mh) == 0;
  for (int i = 0; ok && i < n; i++) {
    netcheck_fill(buf, 100 + (size_t)i, seed + (uint32_t)i);
    void* req = NULL;
    ncclResult_t res = netcheck_isend(r, sc, buf, 100 + (size_t)i, tags[i], mh, &req);
    int w = res == ncclSuccess ? netcheck_wait(r, req, NULL, &res) : 1;
    if (w != 0) ok = netcheck_check(r, 0, "send", "message %d: %s %d", i, w < 0 ? "timeout" : "error", (int)res);
  }
  if (mh) r->plugin.net->deregMr(sc, mh);
  free(buf);
  return ok;
}

/* ---- tags: single receives, the tag of each message posted in order ---- */
static const int nc_tags[] = {0, 5, 9, 5, 2, 1 << 30, 77, 5};
#define NC_NTAGS (int)(sizeof(nc_tags) / sizeof(nc_tags[0]))

int netcheck_tags_a(netcheck_role_t* r) {
  void* rc = NULL;
  if (netcheck_pair_accept(r, &rc) != 0) return -1;
  int ok = nc_recv_series(r, rc, nc_tags, NC_NTAGS, 900u, "single", "with varied tags matched");
  r->plugin.net->closeRecv(rc);
  return ok ? 0 : -1;
}

int netcheck_tags_b(netcheck_role_t* r) {
  void* sc = NULL;
  if (netcheck_pair_connect(r, &sc) != 0) return -1;
  int ok = nc_send_series(r, sc, nc_tags, NC_NTAGS, 900u);
  r->plugin.net->closeSend(sc);
  return ok ? 0 : -1;
}

/* ---- close after send: what a completed send handed over must arrive ----
 * B sends, waits for each send to complete, closes and ends its process
 * (the plugin is unloaded with it). A posts its receives only later: a
 * plugin whose sends complete before delivery, and whose connection drops
 * what the receiver had not matched yet, loses the last messages here. A
 * plugin whose sends wait for the receive (RDMA into posted buffers) just
 * makes B wait for A. Every message is small: a provider sends those eagerly
 * (a large one would make B wait for A's receive and hide the loss). */
static const int nc_late_tags[] = {7, 7, 7, 7, 7, 7, 7, 7};
#define NC_LATE_N (int)(sizeof(nc_late_tags) / sizeof(nc_late_tags[0]))
#define NC_LATE_MS 500

int netcheck_close_after_send_a(netcheck_role_t* r) {
  void* rc = NULL;
  if (netcheck_pair_accept(r, &rc) != 0) return -1;
  int64_t until = netcheck_now_ms() + NC_LATE_MS; /* B sends, closes and exits meanwhile */
  while (netcheck_now_ms() < until) usleep(10000);
  int ok = nc_recv_series(r, rc, nc_late_tags, NC_LATE_N, 700u, "late-recv",
                          "received, posted after the sender closed and exited");
  r->plugin.net->closeRecv(rc);
  return ok ? 0 : -1;
}

int netcheck_close_after_send_b(netcheck_role_t* r) {
  void* sc = NULL;
  if (netcheck_pair_connect(r, &sc) != 0) return -1;
  int ok = nc_send_series(r, sc, nc_late_tags, NC_LATE_N, 700u);
  ncclResult_t cl = r->plugin.net->closeSend(sc);
  ok &= netcheck_check(r, cl == ncclSuccess, "closeSend", "after %d completed sends: %d", NC_LATE_N, (int)cl);
  return ok ? 0 : -1;
}

/* ---- grouped receives: n buffers, n tags, sends in reverse order ---- */
#define NC_MR_SLOT 65536
static int nc_group(const netcheck_role_t* r) { return r->props.maxRecvs < 8 ? r->props.maxRecvs : 8; }
static size_t nc_group_size(int round, int i) { return round == 0 ? 1000 * (size_t)(i + 1) + (size_t)i : (i % 2 ? 0 : 4096); }

int netcheck_multirecv_a(netcheck_role_t* r) {
  int n = nc_group(r);
  if (n <= 1) {
    netcheck_skip(r, "grouped", "maxRecvs is 1");
    return netcheck_sync(r, 0) == 0 ? 0 : -1; /* B learns there is nothing to send */
  }
  if (netcheck_sync(r, (uint32_t)n) != 0) return !netcheck_check(r, 0, "grouped", "peer disagrees on maxRecvs");
  void* rc = NULL;
  if (netcheck_pair_accept(r, &rc) != 0) return -1;
  uint8_t* buf = nc_alloc((size_t)NC_MR_SLOT * (size_t)n);
  void* mh = NULL;
  int ok = nc_reg(r, rc, buf, (size_t)NC_MR_SLOT * (size_t)n, &mh) == 0;
  for (int round = 0; ok && round < 2; round++) {
    void* data[8];
    size_t sizes[8];
    int tags[8], got[8];
    void* mhs[8];
    for (int i = 0; i < n; i++) {
      data[i] = buf + (size_t)NC_MR_SLOT * (size_t)i;
      sizes[i] = NC_MR_SLOT;
      tags[i] = 100 + i;
      mhs[i] = mh;
      got[i] = -1;
    }
    memset(buf, NC_CANARY_BYTE, (size_t)NC_MR_SLOT * (size_t)n);
    void* req = NULL;
    ncclResult_t res = netcheck_irecv(r, rc, n, data, sizes, tags, mhs, &req);
    int w = res == ncclSuccess ? netcheck_wait(r, req, got, &res) : 1;
    char name[32];
    snprintf(name, sizeof(name), "grouped-%d%s", n, round ? "-with-empty" : "");
    if (w != 0) {
      ok = netcheck_check(r, 0, name, "%s %d", w < 0 ? "timeout" : "error", (int)res);
      break;
    }
    int good = 1;
    for (int i = 0; i < n && good; i++) {
      size_t want = nc_group_size(round, i);
      if (got[i] != (int)want) {
        good = netcheck_check(r, 0, name, "receive %d (tag %d) reported %d bytes, %zu were sent", i, tags[i], got[i], want);
      } else if (netcheck_verify(data[i], want, 7000u + (uint32_t)(round * 16 + i)) >= 0) {
        good = netcheck_check(r, 0, name, "receive %d (tag %d) holds the wrong data (tag matching?)", i, tags[i]);
      }
    }
    if (good) netcheck_check(r, 1, name, "each tag got its own message");
    ok &= good;
  }
  if (mh) r->plugin.net->deregMr(rc, mh);
  r->plugin.net->closeRecv(rc);
  free(buf);
  return ok ? 0 : -1;
}

int netcheck_multirecv_b(netcheck_role_t* r) {
  int n = nc_group(r);
  if (netcheck_sync(r, n <= 1 ? 0 : (uint32_t)n) != 0) return -1;
  if (n <= 1) return 0;
  void* sc = NULL;
  if (netcheck_pair_connect(r, &sc) != 0) return -1;
  uint8_t* buf = nc_alloc((size_t)NC_MR_SLOT * (size_t)n);
  void* mh = NULL;
  int ok = nc_reg(r, sc, buf, (size_t)NC_MR_SLOT * (size_t)n, &mh) == 0;
  for (int round = 0; ok && round < 2; round++) {
    void* reqs[8] = {0};
    for (int i = n - 1; ok && i >= 0; i--) { /* reverse: matching must go by tag */
      uint8_t* p = buf + (size_t)NC_MR_SLOT * (size_t)i;
      netcheck_fill(p, nc_group_size(round, i), 7000u + (uint32_t)(round * 16 + i));
      ncclResult_t res = netcheck_isend(r, sc, p, nc_group_size(round, i), 100 + i, mh, &reqs[i]);
      if (res != ncclSuccess) ok = netcheck_check(r, 0, "isend", "tag %d: %d", 100 + i, (int)res);
    }
    for (int i = 0; ok && i < n; i++) {
      ncclResult_t res;
      int w = netcheck_wait(r, reqs[i], NULL, &res);
      if (w != 0) ok = netcheck_check(r, 0, "send", "tag %d: %s %d", 100 + i, w < 0 ? "timeout" : "error", (int)res);
    }
  }
  if (mh) r->plugin.net->deregMr(sc, mh);
  r->plugin.net->closeSend(sc);
  free(buf);
  return ok ? 0 : -1;
}
