/* Host collectives through the public nccl.h API only, ranks as forked
 * processes sharing unique ids made in rank 0 (ranks_unique_id): every collective,
 * every type and op (PreMulSum with a host-immediate and a device scalar),
 * counts 0, 1, odd and a few MB, roots other than 0, each case in place and
 * out of place on inputs distinct by rank, element and call
 * (tests/common/coll_cases.c); then 1000 back-to-back small
 * collectives, two communicators used alternately, a ring of Send/Recv
 * inside a group, and an in-place AlltoAll larger than the connection
 * buffers. Every element of every result is checked.
 *
 *   test_coll_public N [quick] [shm|net]
 *     Transports follow the environment (NCCL_SHM_DISABLE=1 forces the
 *     net). With shm or net, every connection either communicator made
 *     must have been carried by that transport, as the library reports it:
 *     each rank logs (NCCL_DEBUG=INFO, INIT, a file of its own) one
 *     "Channel cc/i : rank -> peer via TRANSPORT" line per connection. */
#define _GNU_SOURCE /* mkdtemp, setenv */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "coll_cases.h"
#include "nccl.h"
#include "ranks_id.h"

static int quick;
static const char* transport; /* every connection's, or NULL: not checked */
static char logDir[64];
static ncclUniqueId ids[2];

/* This rank's connections as its log reports them: each must name the
 * expected transport, this rank (in comm2, n - 1 - rank) as one end, and
 * both directions must be there (a ring sends to one peer and receives
 * from another). The log's warnings go to stderr, where they would have
 * gone without the file. */
static void check_transport_log(int rank, int n) {
  char path[128], line[2048];
  snprintf(path, sizeof(path), "%s/log.%d", logDir, (int)getpid());
  FILE* f = fopen(path, "r");
  CHECK_MSG(f != NULL, "rank %d: no log at %s", rank, path);
  int sends = 0, recvs = 0, other = 0;
  while (fgets(line, sizeof(line), f)) {
    if (strstr(line, "NCCL WARN")) fputs(line, stderr);
    const char* at = strstr(line, "NCCL INFO Channel ");
    if (!at) continue;
    int ch, idx, me, peer;
    char dir[3], name[32];
    if (sscanf(at, "NCCL INFO Channel %d/%d : %d %2s %d via %31s", &ch, &idx, &me, dir, &peer, name) != 6) continue;
    CHECK_MSG(me == rank || me == n - 1 - rank, "rank %d: a connection of rank %d in its log: %s", rank, me, line);
    sends += strcmp(dir, "->") == 0;
    recvs += strcmp(dir, "<-") == 0;
    if (strcmp(name, transport) != 0) {
      fprintf(stderr, "rank %d: channel %d/%d %s %d went over %s, not %s\n", rank, ch, idx, dir, peer, name, transport);
      other++;
    }
  }
  fclose(f);
  unlink(path);
  CHECK_MSG(sends > 0 && recvs > 0, "rank %d: %d send and %d receive connections in %s", rank, sends, recvs, path);
  CHECK_MSG(other == 0, "rank %d: %d of %d connections not over %s", rank, other, sends + recvs, transport);
}

static int rank_main(int rank, int n, void* arg) {
  (void)arg;
  ranks_unique_id(rank, &ids[0]);
  ranks_unique_id(rank, &ids[1]);
  ncclComm_t comm, comm2;
  CHECK_NCCL(ncclCommInitRank(&comm, n, ids[0], rank));
  int cnt;
  CHECK_NCCL(ncclCommCount(comm, &cnt));
  CHECK_EQ_INT(cnt, n);
  long wrong = coll_matrix_run(comm, rank, n, quick, &coll_mem_host, NULL);
  CHECK_MSG(wrong == 0, "rank %d: %ld wrong elements", rank, wrong);

  /* 1000 back-to-back small collectives. */
  int64_t v = rank, sum = 0;
  for (int i = 0; i < 1000; i++) {
    CHECK_NCCL(ncclAllReduce(&v, &sum, 1, ncclInt64, ncclSum, comm, NULL));
    CHECK_EQ_INT(sum, (int64_t)n * (n - 1) / 2);
  }
  /* Two communicators used alternately. */
  CHECK_NCCL(ncclCommInitRank(&comm2, n, ids[1], n - 1 - rank));
  for (int i = 0; i < 50; i++) {
    int32_t a = rank + i, b = 0;
    CHECK_NCCL(ncclAllReduce(&a, &b, 1, ncclInt32, ncclMax, i % 2 ? comm2 : comm, NULL));
    CHECK_EQ_INT(b, n - 1 + i);
  }
  /* A ring of Send/Recv inside a group, several messages per peer. */
  int32_t out[3] = {rank, rank * 10, rank * 100}, in[3] = {-1, -1, -1};
  CHECK_NCCL(ncclGroupStart());
  for (int m = 0; m < 3; m++) {
    CHECK_NCCL(ncclSend(&out[m], 1, ncclInt32, (rank + 1) % n, comm, NULL));
    CHECK_NCCL(ncclRecv(&in[m], 1, ncclInt32, (rank - 1 + n) % n, comm, NULL));
  }
  CHECK_NCCL(ncclGroupEnd());
  int prev = (rank - 1 + n) % n;
  CHECK(in[0] == prev && in[1] == prev * 10 && in[2] == prev * 100);
  /* In-place AlltoAll with pieces larger than a connection's buffer, alone
   * and inside a group: the receive from a peer must not overwrite the
   * piece this rank still has to send (coll_api.c). */
  if (n <= 4) {
    size_t piece = (size_t)10 << 18; /* 10 MiB of int32 per peer */
    int32_t* a2a = malloc(piece * (size_t)n * sizeof(int32_t));
    CHECK(a2a);
    for (int grouped = 0; grouped < 2; grouped++) {
      for (int p = 0; p < n; p++)
        for (size_t i = 0; i < piece; i++) a2a[(size_t)p * piece + i] = (int32_t)(rank * 1000003 + p * 7919 + i % 4093);
      if (grouped) CHECK_NCCL(ncclGroupStart());
      CHECK_NCCL(ncclAlltoAll(a2a, a2a, piece, ncclInt32, comm, NULL));
      if (grouped) CHECK_NCCL(ncclGroupEnd());
      long bad = 0;
      for (int p = 0; p < n; p++)
        for (size_t i = 0; i < piece; i++)
          bad += a2a[(size_t)p * piece + i] != (int32_t)(p * 1000003 + rank * 7919 + i % 4093);
      CHECK_MSG(bad == 0, "rank %d: in-place AlltoAll (grouped %d): %ld wrong elements", rank, grouped, bad);
    }
    free(a2a);
  }
  CHECK_NCCL(ncclCommDestroy(comm2));
  CHECK_NCCL(ncclCommDestroy(comm));
  if (transport) check_transport_log(rank, n);
  return 0;
}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 2;
  /* MKCCL_TEST_QUICK: the sanitizer runs (tools/dev/sanitize.sh says why). */
  quick = getenv("MKCCL_TEST_QUICK") != NULL;
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "quick") == 0) quick = 1;
    else if (strcmp(argv[i], "shm") == 0 || strcmp(argv[i], "net") == 0) transport = argv[i];
    else CHECK_MSG(0, "usage: test_coll_public N [quick] [shm|net]; got %s", argv[i]);
  }
  if (transport) {
    /* Each rank's own log (%p), connections only (INIT). */
    snprintf(logDir, sizeof(logDir), "/tmp/mkccl-coll-XXXXXX");
    CHECK(mkdtemp(logDir));
    char file[96];
    snprintf(file, sizeof(file), "%s/log.%%p", logDir);
    setenv("NCCL_DEBUG", "INFO", 1);
    setenv("NCCL_DEBUG_SUBSYS", "INIT", 1);
    setenv("NCCL_DEBUG_FILE", file, 1);
  }
  int rc = ranks_run(n, rank_main, NULL, 900);
  if (transport) {
    char cmd[96];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", logDir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", logDir);
  }
  CHECK_EQ_INT(rc, 0);
  return 0;
}
