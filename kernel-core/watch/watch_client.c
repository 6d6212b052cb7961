/* mkcclInfoStatus (mkccl-info --status): asks the mkccl processes of this
 * host, through their status sockets, which communicators they hold; then,
 * per communicator, one of them gathers every rank's record (other hosts
 * included) and the table says which ranks the others wait for. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/err.h"
#include "mkccl_info.h"
#include "sock/sock.h"
#include "watch/watch_proto.h"

static const char* const watch_coll_names[] = {"AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce",
                                               "SendRecv",  "AlltoAll",  "Gather",        "Scatter"};
static const char* const watch_type_names[] = {"int8", "uint8", "int32", "uint32", "int64", "uint64", "float16",
                                               "float32", "float64", "bfloat16", "fp8e4m3", "fp8e5m2"};

/* A request to process pid; *st gets the malloc'ed answer. -1: no answer. */
static int watch_ask(int pid, const watch_req_t* req, watch_status_t** st) {
  /* Non-blocking, as the sock_* calls expect: a stopped process's socket
   * takes the connection into its backlog and never answers. */
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  struct sockaddr_un sa;
  memset(&sa, 0, sizeof(sa));
  sa.sun_family = AF_UNIX;
  int len = snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, WATCH_UNIX_PREFIX "%d", pid);
  socklen_t slen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)len);
  uint32_t n = 0;
  /* A list is local work; a gather waits up to 2 s on every rank. */
  int64_t deadline = sock_deadline_ms(req->what == WATCH_REQ_LIST ? 1000 : 5000);
  int ok = connect(fd, (struct sockaddr*)&sa, slen) == 0 && sock_send_all(fd, req, sizeof(*req), deadline, NULL) == SOCK_OK &&
           sock_recv_all(fd, &n, sizeof(n), deadline, NULL) == SOCK_OK && n < (1u << 20);
  watch_status_t* out = NULL;
  if (ok && n) {
    out = calloc(n, sizeof(*out));
    ok = out && sock_recv_all(fd, out, sizeof(*out) * n, deadline, NULL) == SOCK_OK;
  }
  close(fd);
  if (!ok) {
    free(out);
    return -1;
  }
  *st = out;
  return (int)n;
}

/* Processes with a status socket, from /proc/net/unix ("@mkccl-status-<pid>"). */
static int watch_find_pids(int* pids, int max) {
  FILE* f = fopen("/proc/net/unix", "r");
  if (!f) return 0;
  char line[512];
  int n = 0;
  const char* tag = "@" WATCH_UNIX_PREFIX;
  while (n < max && fgets(line, sizeof(line), f)) {
    char* p = strstr(line, tag);
    if (!p) continue;
    int pid = atoi(p + strlen(tag));
    int seen = 0;
    for (int i = 0; i < n; i++) seen |= pids[i] == pid;
    if (pid > 0 && !seen) pids[n++] = pid;
  }
  fclose(f);
  return n;
}

static void watch_print_last(FILE* out, const watch_status_t* s) {
  double age = s->lastAgeNs >= 0 ? (double)s->lastAgeNs / 1e9 : 0;
  if (s->lastKind == 1) {
    const char* c = s->lastColl >= 0 && s->lastColl < 9 ? watch_coll_names[s->lastColl] : "?";
    const char* t = s->lastType >= 0 && s->lastType < 12 ? watch_type_names[s->lastType] : "?";
    fprintf(out, "%s %llu x %s", c, (unsigned long long)s->lastCount, t);
    if (s->lastColl == 3 || s->lastColl == 4 || s->lastColl == 7 || s->lastColl == 8) fprintf(out, " root %d", s->lastPeer);
  } else if (s->lastKind == 2 || s->lastKind == 3) {
    fprintf(out, "%s %llu x %s %s rank %d", s->lastKind == 2 ? "Send" : "Recv", (unsigned long long)s->lastCount,
            s->lastType >= 0 && s->lastType < 12 ? watch_type_names[s->lastType] : "?", s->lastKind == 2 ? "to" : "from",
            s->lastPeer);
  } else {
    fprintf(out, "no call yet");
    return;
  }
  fprintf(out, ", %.1f s ago", age);
}

/* One communicator's table and who the others wait for. */
static void watch_print_comm(FILE* out, const watch_status_t* st, int n, int askedPid) {
  fprintf(out, "communicator %016llx: %d ranks (gathered by pid %d)\n", (unsigned long long)st[0].commHash, n, askedPid);
  fprintf(out, "  %5s  %-20s %8s  %12s %6s  %s\n", "rank", "host", "pid", "collectives", "p2p", "last call");
  uint64_t most = 0;
  for (int r = 0; r < n; r++)
    if (st[r].reachable && st[r].collEntered > most) most = st[r].collEntered;
  int lagging = 0, unreachable = 0, under = 0;
  for (int r = 0; r < n; r++) {
    const watch_status_t* s = &st[r];
    fprintf(out, "  %5d  %-20.20s %8d  ", r, s->host, (int)s->pid);
    if (!s->reachable) {
      fprintf(out, "%12s %6s  no answer (dead, stopped, or its host unreachable)\n", "?", "?");
      unreachable++;
      continue;
    }
    char colls[32];
    snprintf(colls, sizeof(colls), "%llu%s", (unsigned long long)s->collEntered, s->collDone < s->collEntered ? "*" : "");
    fprintf(out, "%12s %6llu  ", colls, (unsigned long long)s->p2pEntered);
    watch_print_last(out, s);
    if (s->failKind) fprintf(out, "  [failed: rank %d]", s->failRank);
    fprintf(out, "\n");
    lagging += s->collEntered < most;
    under += s->collDone < s->collEntered;
  }
  if (under) fprintf(out, "  * in that collective now (not completed)\n");
  if (lagging) {
    fprintf(out, "  waiting for:");
    for (int r = 0; r < n; r++)
      if (st[r].reachable && st[r].collEntered < most)
        fprintf(out, " rank %d (host %s, pid %d: %llu of %llu collectives called)", r, st[r].host, (int)st[r].pid,
                (unsigned long long)st[r].collEntered, (unsigned long long)most);
    fprintf(out, "\n");
  } else if (!unreachable) {
    fprintf(out, "  no rank lags: every rank has called %llu collectives%s\n", (unsigned long long)most,
            under ? " (ranks still in the last one wait on a transport: MKCCL_TIMEOUT ends the wait)" : "");
  }
  if (unreachable) {
    fprintf(out, "  no answer from:");
    for (int r = 0; r < n; r++)
      if (!st[r].reachable) fprintf(out, " rank %d (host %s, pid %d)", r, st[r].host, (int)st[r].pid);
    fprintf(out, "\n");
  }
}

__attribute__((visibility("default"))) ncclResult_t mkcclInfoStatus(FILE* out, int pid) {
  if (!out) return MK_FAIL(ncclInvalidArgument, "mkcclInfoStatus: out is NULL");
  int pids[256];
  int np = pid > 0 ? (pids[0] = pid, 1) : watch_find_pids(pids, 256);
  /* Every local record, then one gather per communicator. */
  watch_status_t* all = NULL;
  int* owner = NULL;
  int nAll = 0;
  for (int i = 0; i < np; i++) {
    watch_req_t req = {WATCH_REQ_LIST, 0, 0, -1, 0};
    watch_status_t* st = NULL;
    int n = watch_ask(pids[i], &req, &st);
    if (n < 0 && pid > 0) return MK_FAIL(ncclInvalidUsage, "mkcclInfoStatus: process %d does not answer on @%s%d (not "
                                         "an mkccl process with a communicator, or MKCCL_WATCH_STATUS=0)", pid,
                                         WATCH_UNIX_PREFIX, pid);
    if (n <= 0) continue;
    watch_status_t* a = realloc(all, sizeof(*a) * (size_t)(nAll + n));
    int* o = realloc(owner, sizeof(*o) * (size_t)(nAll + n));
    if (a) all = a;
    if (o) owner = o;
    if (!a || !o) break;
    for (int j = 0; j < n; j++) all[nAll + j] = st[j], owner[nAll + j] = pids[i];
    nAll += n;
    free(st);
  }
  if (nAll == 0) fprintf(out, "no mkccl communicator found on this host (%d process(es) asked)\n", np);
  for (int i = 0; i < nAll; i++) {
    int seen = 0;
    for (int j = 0; j < i; j++) seen |= all[j].commHash == all[i].commHash;
    if (seen) continue;
    watch_req_t req = {WATCH_REQ_GATHER, 0, all[i].commHash, all[i].rank, 0};
    watch_status_t* st = NULL;
    int n = watch_ask(owner[i], &req, &st);
    if (n > 0) watch_print_comm(out, st, n, owner[i]);
    else fprintf(out, "communicator %016llx: pid %d did not answer\n", (unsigned long long)all[i].commHash, owner[i]);
    free(st);
  }
  free(all);
  free(owner);
  return ncclSuccess;
}
