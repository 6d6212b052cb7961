/* Shared buffers (OFFSET mode) of transport-net, end to end: N host ranks
 * as processes, forced onto the net (NCCL_SHM_DISABLE=1, NCCL_P2P_DISABLE=1),
 * run several groups in which every rank sends to and receives from every
 * other rank, with sizes that differ per call and pair (zero bytes, one
 * step, many steps); every element tells call, sender, receiver and index
 * apart and is checked on every rank, and the bytes past each receive stay
 * untouched. Done once with NCCL_NET_SHARED_BUFFERS=1 and once with 0.
 *
 * From each rank's INFO log ("rank R: transport-net holds N bytes of
 * staging (P pools, C connections), K steps in OFFSET mode"): with shared
 * buffers every rank moved steps in OFFSET mode and holds 2 x channels
 * pools, without none and none; both runs made the same connections, and
 * the bytes held differ by exactly what the p2p connections' own buffers
 * minus the pools come to, so with more than 2 peers shared holds less.
 *
 *   test_transport_net_shared N */
#define _GNU_SOURCE /* mkdtemp, setenv */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "nccl.h"
#include "ranks.h"
#include "ranks_id.h"

#define BUFFSIZE 65536 /* NCCL_BUFFSIZE: 8 KB steps, so a few hundred KB spans many */
#define STEP (BUFFSIZE / 8)
#define P2P_CHANNELS 2
#define NCALLS 6

typedef struct {
  long long bytes; /* the most the rank held */
  int pools, conns;
  long long offsetSteps; /* at the end */
  int lines;
} rank_stats_t;

static rank_stats_t* stats; /* [rank], shared with the children */
static char logDir[64];

/* Elements (int32) rank src sends rank dst in call k. */
static size_t count_of(int k, int src, int dst) {
  static const size_t base[NCALLS] = {1000, 0, 37 * STEP / 4 + 3, 1, 5 * STEP, 90 * STEP / 4 + 11};
  if (k == 1) return 0;                          /* a group of zero-byte sends only */
  if (k == 4 && (src + dst) % 3 == 0) return 0; /* zero bytes among others */
  return base[k] + (size_t)((src * 7 + dst * 3) % 5) * 13;
}

static uint32_t value_of(int k, int src, int dst, size_t i) {
  uint64_t x = ((uint64_t)k << 56) ^ ((uint64_t)src << 44) ^ ((uint64_t)dst << 32) ^ (uint64_t)i;
  x ^= x >> 29;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 32;
  return (uint32_t)x;
}

#define GUARD 16 /* elements past each receive that must stay untouched */
#define GUARD_VALUE 0xdeadbeefu

static void read_log(int rank) {
  char path[128], line[2048];
  snprintf(path, sizeof(path), "%s/log.%d", logDir, (int)getpid());
  FILE* f = fopen(path, "r");
  CHECK_MSG(f != NULL, "rank %d: no log at %s", rank, path);
  rank_stats_t* st = &stats[rank];
  memset(st, 0, sizeof(*st));
  while (fgets(line, sizeof(line), f)) {
    if (strstr(line, "NCCL WARN")) fputs(line, stderr);
    const char* at = strstr(line, "transport-net holds ");
    if (!at) continue;
    int r, pools, conns;
    long long bytes, steps;
    const char* from = strstr(line, "rank ");
    CHECK_MSG(from && sscanf(from, "rank %d: transport-net holds %lld bytes of staging (%d pools, %d connections), %lld steps in OFFSET mode",
                             &r, &bytes, &pools, &conns, &steps) == 5,
              "rank %d: cannot read: %s", rank, line);
    CHECK_EQ_INT(r, rank);
    if (bytes > st->bytes) {
      st->bytes = bytes;
      st->pools = pools;
      st->conns = conns;
    }
    st->offsetSteps = steps;
    st->lines++;
  }
  fclose(f);
}

static int rank_main(int rank, int n, void* arg) {
  (void)arg;
  ncclComm_t comm = ranks_comm_init(rank, n);
  uint32_t** send = calloc((size_t)n, sizeof(*send));
  uint32_t** recv = calloc((size_t)n, sizeof(*recv));
  CHECK(send && recv);
  for (int k = 0; k < NCALLS; k++) {
    for (int p = 0; p < n; p++) {
      if (p == rank) continue;
      size_t sc = count_of(k, rank, p), rc = count_of(k, p, rank);
      send[p] = malloc((sc + 1) * sizeof(uint32_t));
      recv[p] = malloc((rc + GUARD) * sizeof(uint32_t));
      CHECK(send[p] && recv[p]);
      for (size_t i = 0; i < sc; i++) send[p][i] = value_of(k, rank, p, i);
      for (size_t i = 0; i < rc + GUARD; i++) recv[p][i] = GUARD_VALUE;
    }
    CHECK_NCCL(ncclGroupStart());
    for (int d = 1; d < n; d++) { /* peers in a different order on each rank */
      int to = (rank + d) % n, from = (rank + n - d) % n;
      CHECK_NCCL(ncclSend(send[to], count_of(k, rank, to), ncclUint32, to, comm, NULL));
      CHECK_NCCL(ncclRecv(recv[from], count_of(k, from, rank), ncclUint32, from, comm, NULL));
    }
    CHECK_NCCL(ncclGroupEnd());
    for (int p = 0; p < n; p++) {
      if (p == rank) continue;
      size_t rc = count_of(k, p, rank);
      for (size_t i = 0; i < rc; i++)
        CHECK_MSG(recv[p][i] == value_of(k, p, rank, i), "rank %d, call %d: element %zu of %zu from rank %d is %08x, not %08x",
                  rank, k, i, rc, p, recv[p][i], value_of(k, p, rank, i));
      for (size_t i = rc; i < rc + GUARD; i++)
        CHECK_MSG(recv[p][i] == GUARD_VALUE, "rank %d, call %d: written past the %zu elements from rank %d", rank, k, rc, p);
      free(send[p]);
      free(recv[p]);
    }
  }
  CHECK_NCCL(ncclCommDestroy(comm));
  free(send);
  free(recv);
  read_log(rank);
  return 0;
}

static void run(int n, int shared, rank_stats_t* out) {
  char file[96];
  snprintf(file, sizeof(file), "%s/log.%%p", logDir);
  setenv("NCCL_DEBUG_FILE", file, 1);
  setenv("NCCL_NET_SHARED_BUFFERS", shared ? "1" : "0", 1);
  stats = out;
  CHECK_EQ_INT(ranks_run(n, rank_main, NULL, 600), 0);
  for (int r = 0; r < n; r++) {
    rank_stats_t* s = &out[r];
    printf("shared %d rank %d: %lld bytes, %d pools, %d connections, %lld OFFSET steps\n", shared, r, s->bytes, s->pools,
           s->conns, s->offsetSteps);
    CHECK_MSG(s->lines >= 2, "rank %d: %d stats lines in its log", r, s->lines);
    if (shared) {
      CHECK_EQ_INT(s->pools, 2 * P2P_CHANNELS);
      CHECK_MSG(s->offsetSteps > 0, "rank %d: no step went through a pool slot", r);
    } else {
      CHECK_EQ_INT(s->pools, 0);
      CHECK_MSG(s->offsetSteps == 0, "rank %d: %lld OFFSET steps without shared buffers", r, s->offsetSteps);
    }
  }
}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 4;
  CHECK(n >= 2);
  snprintf(logDir, sizeof(logDir), "/tmp/mkccl-netshared-XXXXXX");
  CHECK(mkdtemp(logDir));
  setenv("NCCL_SHM_DISABLE", "1", 1);
  setenv("NCCL_P2P_DISABLE", "1", 1);
  setenv("NCCL_DEBUG", "INFO", 1);
  setenv("NCCL_DEBUG_SUBSYS", "INIT", 1);
  char v[32];
  snprintf(v, sizeof(v), "%d", BUFFSIZE);
  setenv("NCCL_BUFFSIZE", v, 1);
  snprintf(v, sizeof(v), "%d", P2P_CHANNELS);
  setenv("MKCCL_P2P_NCHANNELS", v, 1);
  setenv("MKCCL_HOST_NCHANNELS", v, 1);
  rank_stats_t* on = ranks_shared_alloc((unsigned long)n * sizeof(rank_stats_t));
  rank_stats_t* off = ranks_shared_alloc((unsigned long)n * sizeof(rank_stats_t));
  CHECK(on && off);
  run(n, 1, on);
  run(n, 0, off);
  /* The same connections; each p2p one had 8 steps of its own, the pools
   * have 16 per channel and direction. */
  long long p2pConns = 2LL * (n - 1) * P2P_CHANNELS, pools = 2LL * P2P_CHANNELS;
  for (int r = 0; r < n; r++) {
    CHECK_EQ_INT(on[r].conns, off[r].conns);
    long long want = (p2pConns * 8 - pools * 16) * STEP;
    CHECK_MSG(off[r].bytes - on[r].bytes == want, "rank %d: %lld bytes unshared, %lld shared: %lld apart, not %lld", r,
              off[r].bytes, on[r].bytes, off[r].bytes - on[r].bytes, want);
    if (n > 3) CHECK_MSG(on[r].bytes < off[r].bytes, "rank %d: shared buffers hold no less", r);
  }
  char cmd[96];
  snprintf(cmd, sizeof(cmd), "rm -rf %s", logDir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", logDir);
  return 0;
}
