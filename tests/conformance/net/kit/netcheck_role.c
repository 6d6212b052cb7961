/* A role process: what every scenario builds on. Bounded loops around the
 * plugin's non-blocking calls, the relay to the other role, verdicts. */
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "netcheck.h"

int netcheck_check(netcheck_role_t* r, int ok, const char* check, const char* fmt, ...) {
  char frame[NC_FRAME_MAX];
  frame[0] = ok ? 'P' : 'F';
  int n = snprintf(frame + 1, sizeof(frame) - 1, "%s", check) + 2;
  va_list ap;
  va_start(ap, fmt);
  int m = n < (int)sizeof(frame) ? vsnprintf(frame + n, sizeof(frame) - (size_t)n, fmt, ap) : 0;
  va_end(ap);
  int len = n + m + 1;
  if (len > (int)sizeof(frame)) len = sizeof(frame);
  frame[len - 1] = 0;
  netcheck_ctl_send(r->ctl, NC_CHECK, frame, (uint32_t)len);
  return ok;
}

void netcheck_skip(netcheck_role_t* r, const char* check, const char* why) {
  char frame[NC_FRAME_MAX];
  int n = snprintf(frame, sizeof(frame), "S%s%c%s", check, 0, why);
  netcheck_ctl_send(r->ctl, NC_CHECK, frame, (uint32_t)(n + 1));
}

int netcheck_relay_send(netcheck_role_t* r, const void* data, uint32_t len) {
  return netcheck_ctl_send(r->ctl, NC_RELAY, data, len);
}

int netcheck_relay_recv(netcheck_role_t* r, void* data, uint32_t len) {
  uint32_t type = 0;
  int n = netcheck_ctl_recv(r->ctl, &type, data, len, r->deadlineMs);
  return n == (int)len && type == NC_RELAY ? 0 : -1;
}

int netcheck_sync(netcheck_role_t* r, uint32_t word) {
  uint32_t got = 0;
  if (netcheck_relay_send(r, &word, sizeof(word)) != 0) return -1;
  if (netcheck_relay_recv(r, &got, sizeof(got)) != 0) return -1;
  return got == word ? 0 : -1;
}

static int netcheck_expired(const netcheck_role_t* r) { return netcheck_now_ms() > r->deadlineMs; }

int netcheck_pair_accept(netcheck_role_t* r, void** recvComm) {
  const ncclNet_v12_t* net = r->plugin.net;
  char handle[NCCL_NET_HANDLE_MAXSIZE];
  void* lc = NULL;
  memset(handle, 0, sizeof(handle));
  ncclResult_t res = net->listen(r->plugin.ctx, r->dev, handle, &lc);
  if (res != ncclSuccess || !lc)
    return !netcheck_check(r, 0, "listen", "listen(dev %d) returned %d, listenComm %p", r->dev, (int)res, lc);
  if (netcheck_relay_send(r, handle, sizeof(handle)) != 0)
    return !netcheck_check(r, 0, "listen", "could not hand the handle to the peer");
  void* rc = NULL;
  ncclNetDeviceHandle_v12_t* dh = NULL;
  while (!rc && !netcheck_expired(r)) {
    res = net->accept(lc, &rc, &dh);
    if (res != ncclSuccess) break;
    if (!rc) sched_yield();
  }
  if (!rc) {
    net->closeListen(lc);
    return !netcheck_check(r, 0, "accept", res != ncclSuccess ? "accept returned %d" : "no connection before the deadline (%d)",
                           (int)res);
  }
  res = net->closeListen(lc);
  if (res != ncclSuccess) return !netcheck_check(r, 0, "accept", "closeListen after accept returned %d", (int)res);
  *recvComm = rc;
  return 0;
}

int netcheck_pair_connect(netcheck_role_t* r, void** sendComm) {
  const ncclNet_v12_t* net = r->plugin.net;
  char handle[NCCL_NET_HANDLE_MAXSIZE];
  if (netcheck_relay_recv(r, handle, sizeof(handle)) != 0)
    return !netcheck_check(r, 0, "connect", "no handle from the peer");
  void* sc = NULL;
  ncclNetDeviceHandle_v12_t* dh = NULL;
  ncclResult_t res = ncclSuccess;
  while (!sc && !netcheck_expired(r)) {
    res = net->connect(r->plugin.ctx, r->dev, handle, &sc, &dh);
    if (res != ncclSuccess) break;
    if (!sc) sched_yield();
  }
  if (!sc)
    return !netcheck_check(r, 0, "connect", res != ncclSuccess ? "connect returned %d" : "not connected before the deadline (%d)",
                           (int)res);
  *sendComm = sc;
  return 0;
}

int netcheck_wait(netcheck_role_t* r, void* request, int* sizes, ncclResult_t* res) {
  int done = 0;
  *res = ncclSuccess;
  while (!netcheck_expired(r)) {
    *res = r->plugin.net->test(request, &done, sizes);
    if (*res != ncclSuccess) return 1;
    if (done) return 0;
  }
  return -1;
}

ncclResult_t netcheck_isend(netcheck_role_t* r, void* comm, void* data, size_t size, int tag, void* mh, void** req) {
  ncclResult_t res = ncclSuccess;
  *req = NULL;
  while (!*req && !netcheck_expired(r)) {
    res = r->plugin.net->isend(comm, data, size, tag, mh, NULL, req);
    if (res != ncclSuccess) return res;
  }
  return *req ? ncclSuccess : ncclInProgress;
}

ncclResult_t netcheck_irecv(netcheck_role_t* r, void* comm, int n, void** data, size_t* sizes, int* tags, void** mh,
                            void** req) {
  ncclResult_t res = ncclSuccess;
  *req = NULL;
  while (!*req && !netcheck_expired(r)) {
    res = r->plugin.net->irecv(comm, n, data, sizes, tags, mh, NULL, req);
    if (res != ncclSuccess) return res;
  }
  return *req ? ncclSuccess : ncclInProgress;
}

static uint8_t netcheck_byte(size_t i, uint32_t seed) {
  uint32_t v = (uint32_t)i * 0x9E3779B1u ^ (seed * 0x85EBCA77u + 0x165667B1u);
  return (uint8_t)(v >> 24 ^ v >> 11 ^ (uint32_t)(i >> 12));
}

void netcheck_fill(void* buf, size_t size, uint32_t seed) {
  uint8_t* p = buf;
  for (size_t i = 0; i < size; i++) p[i] = netcheck_byte(i, seed);
}

long netcheck_verify(const void* buf, size_t size, uint32_t seed) {
  const uint8_t* p = buf;
  for (size_t i = 0; i < size; i++)
    if (p[i] != netcheck_byte(i, seed)) return (long)i;
  return -1;
}

/* Role process: --role A|B --scenario NAME --ctl FD --dev D --abi N --timeout S [--quick] PLUGIN */
int netcheck_role_main(int argc, char** argv) {
  netcheck_role_t r;
  memset(&r, 0, sizeof(r));
  r.ctl = -1;
  const char* path = NULL;
  int abi = 0, timeout = 60;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--role") && i + 1 < argc) r.roleName = argv[++i][0];
    else if (!strcmp(argv[i], "--scenario") && i + 1 < argc) r.scenario = argv[++i];
    else if (!strcmp(argv[i], "--ctl") && i + 1 < argc) r.ctl = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--dev") && i + 1 < argc) r.dev = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--abi") && i + 1 < argc) abi = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--timeout") && i + 1 < argc) timeout = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--quick")) r.quick = 1;
    else if (!strcmp(argv[i], "--verbose")) netcheck_verbose = 1;
    else path = argv[i];
  }
  const netcheck_scenario_t* s = NULL;
  for (int i = 0; i < netcheck_nscenarios; i++)
    if (r.scenario && !strcmp(netcheck_scenarios[i].name, r.scenario)) s = &netcheck_scenarios[i];
  if (!s || r.ctl < 0 || !path || (r.roleName != 'A' && r.roleName != 'B')) {
    fprintf(stderr, "mkccl-netcheck: bad role arguments\n");
    return 2;
  }
  /* A little before the referee's own limit, so the role can say what it waited for. */
  r.deadlineMs = netcheck_now_ms() + (int64_t)timeout * 1000 - 2000;
  char why[512];
  if (netcheck_load(path, abi, &r.plugin, why, sizeof(why)) != 0) {
    netcheck_check(&r, 0, "load", "%s", why); /* the referee loaded it: this process must too */
    return 1;
  }
  ncclResult_t res = r.plugin.net->getProperties(r.dev, &r.props);
  if (res != ncclSuccess) {
    netcheck_check(&r, 0, "getProperties", "device %d: %d", r.dev, (int)res);
    return 1;
  }
  int rc = r.roleName == 'A' ? s->roleA(&r) : s->roleB(&r);
  netcheck_unload(&r.plugin);
  return rc == 0 ? 0 : 1;
}
