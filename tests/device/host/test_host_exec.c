/* The host executor's workers (device/host/host_exec.c) through the public
 * API, ranks as processes: 8 channels of 16 KB and a 4 KB work FIFO, so
 * long runs of collectives on channel 0 alone wrap the FIFO many times
 * while the other workers sit idle, then a collective on all 8 wakes them;
 * groups mix items on one channel and on four in one launch, so a worker's
 * next item comes after others it must jump over. A worker that walked the
 * wrapped FIFO instead of jumping would read, 7 wraps (256 items of 112
 * bytes) before its item, that same item in the same slot, and run it
 * twice: the runs on channel 0 are longer than that. Every element is
 * checked. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "nccl.h"
#include "ranks.h"
#include "ranks_id.h"

#define BIG (256 * 1024)    /* int32s: 1 MB, every channel */
#define MID (16 * 1024)     /* 64 KB: 4 channels */
#define SMALL 4             /* 16 B: channel 0 */

static void check_sum(const int32_t* got, size_t count, int n, int32_t base, const char* what) {
  /* Rank r sent base + r + i at element i. */
  for (size_t i = 0; i < count; i++) {
    int32_t want = (int32_t)(n * (base + (int32_t)i) + n * (n - 1) / 2);
    CHECK_MSG(got[i] == want, "%s: element %zu is %d, want %d", what, i, got[i], want);
    if (got[i] != want) return;
  }
}

static void fill(int32_t* buf, size_t count, int rank, int32_t base) {
  for (size_t i = 0; i < count; i++) buf[i] = base + rank + (int32_t)i;
}

static int rank_main(int rank, int n, void* arg) {
  (void)arg;
  ncclComm_t comm = ranks_comm_init(rank, n);
  int32_t* in = malloc(BIG * sizeof(int32_t));
  int32_t* out = malloc(BIG * sizeof(int32_t));
  int32_t(*gin)[MID] = malloc(12 * sizeof(*gin));
  int32_t(*gout)[MID] = malloc(12 * sizeof(*gout));
  CHECK(in && out && gin && gout);
  for (int round = 0; round < 4; round++) {
    /* 300 items on channel 0 alone: the FIFO wraps about eight times. */
    for (int i = 0; i < 300; i++) {
      int32_t s[SMALL], r[SMALL];
      fill(s, SMALL, rank, i);
      CHECK_NCCL(ncclAllReduce(s, r, SMALL, ncclInt32, ncclSum, comm, NULL));
      check_sum(r, SMALL, n, i, "small");
    }
    /* Then every channel, in place: an item run twice would show. */
    fill(out, BIG, rank, round);
    CHECK_NCCL(ncclAllReduce(out, out, BIG, ncclInt32, ncclSum, comm, NULL));
    check_sum(out, BIG, n, round, "big");
    /* And out of place. */
    fill(in, BIG, rank, round + 1);
    CHECK_NCCL(ncclAllReduce(in, out, BIG, ncclInt32, ncclSum, comm, NULL));
    check_sum(out, BIG, n, round + 1, "big out of place");
    /* One launch: small and mid items alternate. */
    CHECK_NCCL(ncclGroupStart());
    for (int k = 0; k < 12; k++) {
      size_t count = k % 2 ? MID : SMALL;
      fill(gin[k], count, rank, 1000 * round + k);
      CHECK_NCCL(ncclAllReduce(gin[k], gout[k], count, ncclInt32, ncclSum, comm, NULL));
    }
    CHECK_NCCL(ncclGroupEnd());
    for (int k = 0; k < 12; k++) check_sum(gout[k], k % 2 ? MID : SMALL, n, 1000 * round + k, "grouped");
  }
  free(gout);
  free(gin);
  free(out);
  free(in);
  CHECK_NCCL(ncclCommDestroy(comm));
  return 0;
}

int main(void) {
  setenv("MKCCL_HOST_NCHANNELS", "8", 1);
  setenv("MKCCL_CHANNEL_MIN_BYTES", "16384", 1);
  setenv("NCCL_WORK_FIFO_BYTES", "4096", 1);
  setenv("MKCCL_TIMEOUT", "30", 1); /* a worker lost in the FIFO fails instead of hanging */
  CHECK_EQ_INT(ranks_run(3, rank_main, NULL, 300), 0);
  return 0;
}
