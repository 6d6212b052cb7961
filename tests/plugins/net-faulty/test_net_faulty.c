/* Collectives over the socket net wrapped in net-faulty (NCCL_NET_PLUGIN,
 * shared memory off), 4 ranks as processes:
 *   correct: reordered completions (on every rank, or one): every
 *            AllReduce succeeds with the right result;
 *   errors:  an error or a closed connection injected on one rank at one
 *            isend/irecv/test: every rank's collective fails (ncclRemoteError
 *            or ncclSystemError, async error set) within MKCCL_TIMEOUT plus
 *            slack; no collective before it returns a wrong result.
 *
 *   test_net_faulty correct|errors [CASE]   (CASE: run only that one, from 0) */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "nccl.h"
#include "ranks_id.h"

#define NRANKS 4
#define COUNT (64 * 1024 + 3) /* several steps, and an odd tail */
#define TIMEOUT_S 2
#define SLACK_S 5

typedef struct {
  const char* mode; /* MKCCL_NET_FAULTY_MODE */
  const char* op;   /* MKCCL_NET_FAULTY_OP */
  int at;           /* MKCCL_NET_FAULTY_AT */
  int faultyRank;   /* -1: every rank */
  int expectError;
  int iters;
} fault_case_t;

/* Delayed and reordered completions change nothing but timing. (Delays
 * used to stall the ring: several ops on one connection wrote head/tail in
 * completion order; transport-net now hands steps back in op order.) */
static const fault_case_t correct_cases[] = {
    {"delay", "isend", 1, -1, 0, 30},
    {"delay", "test", 20, -1, 0, 30},
    {"reorder", "test", 1, -1, 0, 30},
    {"reorder", "isend", 5, 2, 0, 30},
    {"reorder", "irecv", 3, -1, 0, 30},
};

static const fault_case_t error_cases[] = {
    {"error", "isend", 40, 1, 1, 400},
    {"error", "irecv", 40, 2, 1, 400},
    {"error", "test", 200, 3, 1, 400},
    {"close", "isend", 40, 1, 1, 400},
    {"close", "irecv", 60, 0, 1, 400},
    {"close", "test", 300, 2, 1, 400},
};

typedef struct {
  fault_case_t c;
  volatile int good[NRANKS];
} round_t;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int rank_main(int rank, int n, void* arg) {
  round_t* r = arg;
  if (r->c.faultyRank < 0 || r->c.faultyRank == rank) {
    char at[16];
    snprintf(at, sizeof(at), "%d", r->c.at);
    setenv("MKCCL_NET_FAULTY_MODE", r->c.mode, 1);
    setenv("MKCCL_NET_FAULTY_OP", r->c.op, 1);
    setenv("MKCCL_NET_FAULTY_AT", at, 1);
    setenv("MKCCL_NET_FAULTY_DELAY_MS", "3", 1);
  }
  ncclComm_t comm = ranks_comm_init(rank, n);
  int32_t* in = malloc(COUNT * sizeof(int32_t));
  int32_t* out = malloc(COUNT * sizeof(int32_t));
  CHECK(in && out);
  double lastGood = now_s();
  for (int it = 0; it < r->c.iters; it++) {
    for (int i = 0; i < COUNT; i++) in[i] = rank * 1000 + i % 977 + it;
    memset(out, 0xff, COUNT * sizeof(int32_t));
    ncclResult_t res = ncclAllReduce(in, out, COUNT, ncclInt32, ncclSum, comm, NULL);
    if (res != ncclSuccess) {
      double after = now_s() - lastGood;
      CHECK_MSG(r->c.expectError, "rank %d: %s/%s: collective %d failed: %s", rank, r->c.mode, r->c.op, it,
                ncclGetLastError(comm));
      CHECK_MSG(res == ncclRemoteError || res == ncclSystemError, "rank %d: result %d", rank, (int)res);
      ncclResult_t async = ncclSuccess;
      CHECK_NCCL(ncclCommGetAsyncError(comm, &async));
      CHECK_MSG(async != ncclSuccess && async != ncclInProgress, "rank %d: async error not set", rank);
      CHECK_MSG(after <= TIMEOUT_S + SLACK_S, "rank %d: failed %.2f s after its last good collective", rank, after);
      printf("  rank %d: %s after %d good collective(s), %.2f s after the last: %s\n", rank,
             ncclGetErrorString(res), it, after, ncclGetLastError(comm));
      CHECK_NCCL(ncclCommAbort(comm));
      free(in), free(out);
      return 0;
    }
    for (int i = 0; i < COUNT; i++) {
      int32_t want = 1000 * n * (n - 1) / 2 + n * (i % 977 + it);
      CHECK_MSG(out[i] == want, "rank %d: %s/%s collective %d: element %d is %d, not %d (returned as success)",
                rank, r->c.mode, r->c.op, it, i, out[i], want);
    }
    r->good[rank]++;
    lastGood = now_s();
  }
  CHECK_MSG(!r->c.expectError, "rank %d: %s at %s #%d never surfaced in %d collectives", rank, r->c.mode, r->c.op,
            r->c.at, r->c.iters);
  CHECK_NCCL(ncclCommDestroy(comm));
  free(in), free(out);
  return 0;
}

int main(int argc, char** argv) {
  int errors = argc > 1 && strcmp(argv[1], "errors") == 0;
  const fault_case_t* cases = errors ? error_cases : correct_cases;
  int nCases = errors ? (int)(sizeof(error_cases) / sizeof(error_cases[0]))
                      : (int)(sizeof(correct_cases) / sizeof(correct_cases[0]));
  CHECK_MSG(getenv("NCCL_NET_PLUGIN") && strstr(getenv("NCCL_NET_PLUGIN"), "faulty"),
            "run with NCCL_NET_PLUGIN=<libmkccl-net-faulty.so>");
  char timeout[16];
  snprintf(timeout, sizeof(timeout), "%d", TIMEOUT_S);
  setenv("MKCCL_TIMEOUT", timeout, 0); /* a longer one from outside, to debug */
  setenv("NCCL_SHM_DISABLE", "1", 1);
  int only = argc > 2 ? atoi(argv[2]) : -1;
  for (int k = 0; k < nCases; k++) {
    if (only >= 0 && k != only) continue;
    round_t* r = ranks_shared_alloc(sizeof(round_t));
    CHECK(r);
    r->c = cases[k];
    printf("%s at %s #%d on %s\n", r->c.mode, r->c.op, r->c.at, r->c.faultyRank < 0 ? "every rank" : "one rank");
    CHECK_MSG(ranks_run(NRANKS, rank_main, r, 120) == 0, "case %d (%s at %s #%d) failed", k, r->c.mode, r->c.op,
              r->c.at);
  }
  printf("%d case(s) passed\n", nCases);
  return 0;
}
