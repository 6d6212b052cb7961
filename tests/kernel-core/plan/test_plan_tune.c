/* The tuner drives the real collective path: ranks as processes, host
 * buffers over the net transport (so proxy ops exist), 4 channels per
 * communicator. The recording test profiler shows what the planner did: the
 * Coll event's channels and algorithm, one KernelCh per channel the host
 * executor ran, and the ProxyOps' chunk size.
 *  - a test tuner of every ABI version v2..v6 asks for 3 channels (capped
 *    at 2 on a communicator of 2 channels); v6 also for a 12345-byte
 *    chunk, which becomes 12336 (whole 16-byte groups); it forces ring or
 *    tree and the collective runs on what it forced (a tree chunk is one
 *    step: the ring's default chunk is cut to it; each rank poses as a node
 *    of its own so that tree is costed at all): AllReduce, and Broadcast
 *    and Reduce (trees rooted at their root; their ring chunk is one step
 *    already);
 *  - the rule tuner's file changes the choice (ring to tree, channels,
 *    chunk) between two collectives;
 * and every result is right. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "nccl.h"
#include "plan_observe.h"
#include "profiler/nccl_profiler.h"
#include "ranks_id.h"

#define COUNT (3 * 65536 + 7) /* floats: several chunks per channel, a ragged end */
#define DEFAULT_CHUNK (4 * (4194304 / 8)) /* a ring chunk: 4 steps of the default buffer */
#define TREE_CHUNK (4194304 / 8)          /* a tree chunk: 1 step */

static const char* const tuner_paths[7] = {NULL, NULL, TEST_TUNER_V2, TEST_TUNER_V3, TEST_TUNER_V4, TEST_TUNER_V5,
                                           TEST_TUNER_V6};

typedef struct {
  int nChannels;         /* what the planner may use: the tuner's 3, or fewer when the comm has fewer */
  const char* rulesPath; /* rule tuner: rewritten between the two collectives */
} scenario_t;

/* An AllReduce whose every element is checked. */
static void allreduce_checked(ncclComm_t comm, int rank, int n) {
  float* buf = malloc(COUNT * sizeof(float));
  CHECK(buf);
  for (int i = 0; i < COUNT; i++) buf[i] = (float)(rank + i % 7);
  CHECK_NCCL(ncclAllReduce(buf, buf, COUNT, ncclFloat32, ncclSum, comm, NULL));
  for (int i = 0; i < COUNT; i++)
    CHECK_MSG(buf[i] == (float)(n * (i % 7) + n * (n - 1) / 2), "rank %d: element %d is %g", rank, i, buf[i]);
  free(buf);
}

/* A Broadcast from the last rank and a Reduce to rank 0, every element checked. */
static void rooted_checked(ncclComm_t comm, int rank, int n, int reduce) {
  float* buf = malloc(COUNT * sizeof(float));
  CHECK(buf);
  for (int i = 0; i < COUNT; i++) buf[i] = (float)(rank + i % 7);
  int root = reduce ? 0 : n - 1;
  if (reduce) CHECK_NCCL(ncclReduce(buf, buf, COUNT, ncclFloat32, ncclSum, root, comm, NULL));
  else CHECK_NCCL(ncclBroadcast(buf, buf, COUNT, ncclFloat32, root, comm, NULL));
  for (int i = 0; i < COUNT && (!reduce || rank == root); i++) {
    float want = reduce ? (float)(n * (i % 7) + n * (n - 1) / 2) : (float)(root + i % 7);
    CHECK_MSG(buf[i] == want, "rank %d: %s element %d is %g", rank, reduce ? "reduce" : "broadcast", i, buf[i]);
  }
  free(buf);
}

/* The last collective (from record `from` on) ran as `algo` on `nChannels`
 * channels with `chunk`-byte chunks; a rooted one's proxy ops depend on
 * where the rank sits, so only their chunk is checked. */
static void expect_plan_of(const test_report_t* r, int from, const char* algo, int nChannels, int chunk, int rooted) {
  int coll = plan_observe_last(r, ncclProfileColl, from);
  CHECK_MSG(coll >= 0, "no Coll event");
  CHECK_EQ_INT(r->recs[coll].nChannels, nChannels);
  CHECK_STR_CONTAINS(r->recs[coll].algo, algo);
  CHECK_EQ_INT(plan_observe_children(r, ncclProfileKernelCh, coll), nChannels);
  int ops = 0;
  plan_observe_lock(1); /* the proxy thread may still be recording */
  for (int i = coll; i < r->n; i++)
    if (r->recs[i].type == ncclProfileProxyOp && r->recs[i].parent == coll) {
      CHECK_EQ_INT(r->recs[i].chunkSize, chunk);
      ops++;
    }
  plan_observe_lock(0);
  if (rooted) return;
  if (strcmp(algo, "Ring") == 0) CHECK_EQ_INT(ops, 2 * nChannels); /* a send and a recv sub per channel */
  else CHECK_MSG(ops >= 2 * nChannels, "%d proxy ops for %d tree channels", ops, nChannels); /* a sub per tree peer and direction */
}

static void expect_plan(const test_report_t* r, int from, const char* algo, int nChannels, int chunk) {
  expect_plan_of(r, from, algo, nChannels, chunk, 0);
}

static int rank_forced(int rank, int n, void* arg) {
  scenario_t* sc = arg;
  int v = atoi(getenv("TEST_TUNER_ABI"));
  /* One "node" per rank: the model then costs tree for AllReduce, so a
   * tuner forcing tree really asks for what the executors lack. */
  char host[32];
  snprintf(host, sizeof(host), "plan-tune-node-%d", rank);
  setenv("NCCL_HOSTID", host, 1);
  ncclComm_t comm = ranks_comm_init(rank, n);
  test_report_t* r = plan_observe_report(TEST_PROFILER_V6);
  allreduce_checked(comm, rank, n);
  int tree = v % 2; /* what main told the tuner to force */
  expect_plan(r, 0, tree ? "Tree" : "Ring", sc->nChannels, v == 6 ? 12336 : tree ? TREE_CHUNK : DEFAULT_CHUNK);
  for (int reduce = 0; reduce < 2; reduce++) {
    int from = r->n;
    rooted_checked(comm, rank, n, reduce);
    expect_plan_of(r, from, tree ? "Tree" : "Ring", sc->nChannels, v == 6 ? 12336 : TREE_CHUNK, 1);
  }
  CHECK_NCCL(ncclCommDestroy(comm));
  plan_observe_release();
  return 0;
}

static void rules_write(const char* path, const char* text) {
  char tmp[600];
  snprintf(tmp, sizeof(tmp), "%s.tmp", path);
  FILE* f = fopen(tmp, "w");
  CHECK(f);
  fputs(text, f);
  CHECK(fclose(f) == 0);
  CHECK(rename(tmp, path) == 0); /* whole: a reader never sees half a file */
}

static const char rules_a[] = "rules:\n  - coll: allreduce\n    channels: 2\n    chunksize: 64KiB\n";
static const char rules_b[] =
    "# changed while running\nrules:\n  - coll: allreduce\n    algo: tree\n    channels: 1\n    chunksize: 32KiB\n";

static int rank_rules(int rank, int n, void* arg) {
  scenario_t* sc = arg;
  ncclComm_t comm = ranks_comm_init(rank, n);
  test_report_t* r = plan_observe_report(TEST_PROFILER_V6);
  allreduce_checked(comm, rank, n);
  expect_plan(r, 0, "Ring", 2, 65536);
  /* Rank 0 rewrites the rules; the broadcast (no rule matches it) orders
   * that before every rank's next AllReduce. */
  if (rank == 0) rules_write(sc->rulesPath, rules_b);
  int token = rank == 0 ? 42 : 0, from = r->n;
  CHECK_NCCL(ncclBroadcast(&token, &token, 1, ncclInt32, 0, comm, NULL));
  CHECK_EQ_INT(token, 42);
  allreduce_checked(comm, rank, n);
  expect_plan(r, from, "Tree", 1, 32768); /* the new file's algorithm, channels and chunk */
  CHECK_NCCL(ncclCommDestroy(comm));
  plan_observe_release();
  return 0;
}

static void run(rank_fn fn, scenario_t* sc, int n) {
  CHECK_EQ_INT(ranks_run(n, fn, sc, 120), 0);
}

int main(void) {
  setenv("NCCL_SHM_DISABLE", "1", 1);
  setenv("MKCCL_HOST_NCHANNELS", "4", 1);
  setenv("NCCL_PROFILER_PLUGIN", TEST_PROFILER_V6, 1);
  /* Group, Coll, P2p, ProxyOp and KernelCh: what the checks read. */
  char mask[32];
  snprintf(mask, sizeof(mask), "%d",
           ncclProfileGroup | ncclProfileColl | ncclProfileP2p | ncclProfileProxyOp | ncclProfileKernelCh);
  setenv("MKCCL_TEST_PROFILER_MASK", mask, 1);
  scenario_t sc;
  memset(&sc, 0, sizeof(sc));
  for (int v = 2; v <= 6; v++) {
    char abi[8];
    snprintf(abi, sizeof(abi), "%d", v);
    setenv("TEST_TUNER_ABI", abi, 1);
    setenv("NCCL_TUNER_PLUGIN", tuner_paths[v], 1);
    setenv("MKCCL_TEST_TUNER_FORCE", v % 2 ? "tree" : "ring", 1);
    /* v2: the communicator has 2 channels, the tuner's 3 are capped. */
    setenv("MKCCL_HOST_NCHANNELS", v == 2 ? "2" : "4", 1);
    sc.nChannels = v == 2 ? 2 : 3;
    run(rank_forced, &sc, v == 4 ? 3 : 2);
  }
  setenv("MKCCL_HOST_NCHANNELS", "4", 1);

  char dir[] = "/tmp/mkccl-plan-tune-XXXXXX", path[600];
  CHECK(mkdtemp(dir));
  snprintf(path, sizeof(path), "%s/rules.yaml", dir);
  rules_write(path, rules_a);
  sc.rulesPath = path;
  setenv("NCCL_TUNER_PLUGIN", RULES_TUNER, 1);
  setenv("MKCCL_TUNER_RULES", path, 1);
  setenv("MKCCL_TUNER_RULES_CHECK_MS", "0", 1);
  run(rank_rules, &sc, 2);
  unlink(path);
  rmdir(dir);
  printf("test_plan_tune: OK\n");
  return 0;
}
