/* Broadcast and Reduce on trees, through real communicators of N ranks
 * (processes), against the same collectives on rings:
 *  - for every root, every type, every op (Avg and PreMulSum, host and
 *    device scalar, included), counts 0, 1, odd and large (many chunks),
 *    each in and out of place: the tree communicator (NCCL_ALGO=tree) and
 *    the ring one (NCCL_ALGO=^tree) give the same bytes on every rank, and
 *    the exact expected values (float Avg over 3 or 5 ranks rounds 1/n:
 *    there, values within the rounding);
 *  - the tree path was taken: the planner's per-algorithm item counts
 *    (comm->dp.algoCount) show every non-empty case of the tree
 *    communicator on trees and none of the ring one's;
 *  - with no setting the cost model picks tree for a small Broadcast and
 *    Reduce and ring for a large one, and the planner runs what it picked;
 *  - ncclGroupSimulateEnd agrees: its estimate with no setting is the
 *    forced tree's for a small one and the forced ring's for a large one,
 *    and the cheaper of the two.
 *   test_plan_rooted N   (transports, channels, buffer size follow the environment) */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "coll_cases.h"
#include "comm/comm.h"
#include "device/common/work.h"
#include "nccl.h"
#include "plan/plan_tune.h"
#include "ranks_id.h"

static ncclUniqueId ids[3];

static ncclComm_t comm_with_algo(const char* algo, int n, int id, int rank) {
  ncclComm_t comm;
  if (algo) setenv("NCCL_ALGO", algo, 1);
  else unsetenv("NCCL_ALGO");
  CHECK_NCCL(ncclCommInitRank(&comm, n, ids[id], rank));
  unsetenv("NCCL_ALGO");
  return comm;
}

/* One case on both communicators: same bytes everywhere, right values. */
static long same_on_both(ncclComm_t ring, ncclComm_t tree, const coll_case_t* c, int rank, int n) {
  coll_run_t a, b;
  coll_case_prepare(&a, c, ring, rank, n, &coll_mem_host, NULL);
  coll_case_prepare(&b, c, tree, rank, n, &coll_mem_host, NULL);
  CHECK_NCCL(coll_case_launch(&a));
  CHECK_NCCL(coll_case_launch(&b));
  /* Inexact results (float Avg over 3 or 5 ranks) depend on the order of
   * the additions: checked within their rounding alone. */
  CHECK_MSG(!coll_case_exact(&a) || memcmp(a.r, b.r, a.outCnt * a.ts) == 0,
            "rank %d: %s root %d type %d op %d count %zu in place %d: ring and tree differ", rank, coll_name(c->coll),
            c->root, c->type, c->op, c->count, c->inPlace);
  return coll_case_check(&a) + coll_case_check(&b);
}

/* Every root, type and op; the count rotates over 0, 1, odd and a few
 * hundred KB so each root sees each, and each root runs a large case
 * (several loops of the default buffer) once per collective. */
static long run_matrix(ncclComm_t ring, ncclComm_t tree, int rank, int n, uint64_t* planned) {
  const size_t counts[] = {0, 1, 7, 70001};
  /* MKCCL_TEST_QUICK (the sanitizer runs, tools/dev/sanitize.sh says why):
   * the large case is a tenth, still many chunks of NCCL_BUFFSIZE=65536. */
  size_t large = getenv("MKCCL_TEST_QUICK") ? 100003 : 1000003;
  long wrong = 0;
  for (int root = 0; root < n; root++) {
    for (int coll = C_BROADCAST; coll <= C_REDUCE; coll++) {
      for (int type = 0; type < ncclNumTypes; type++)
        for (int op = 0; op < (coll == C_REDUCE ? C_OP_N : 1); op++)
          for (int inPlace = 0; inPlace < 2; inPlace++) {
            int k = (root + type + op) % 4;
            coll_case_t c = {coll, type, op, root, inPlace, counts[k], 0};
            wrong += same_on_both(ring, tree, &c, rank, n);
            *planned += c.count > 0;
          }
      for (int inPlace = 0; inPlace < 2; inPlace++) {
        coll_case_t big = {coll, coll == C_REDUCE ? ncclFloat32 : ncclInt8, 0, root, inPlace, large, 1};
        wrong += same_on_both(ring, tree, &big, rank, n);
        (*planned)++;
      }
    }
  }
  return wrong;
}

/* The model's picks, and the planner running them. */
static void check_model_choice(ncclComm_t comm, int n) {
  const int colls[2] = {MK_COLL_BROADCAST, MK_COLL_REDUCE};
  for (int i = 0; i < 2; i++) {
    int algo, proto;
    CHECK_NCCL(plan_tune_pick(comm, colls[i], 8, &algo, &proto));
    CHECK_MSG(algo == MK_ALGO_TREE, "%d ranks, coll %d, 8 B: the model picks %d", n, colls[i], algo);
    CHECK_EQ_INT(proto, MK_PROTO_SIMPLE);
    CHECK_NCCL(plan_tune_pick(comm, colls[i], (size_t)64 << 20, &algo, &proto));
    CHECK_MSG(algo == MK_ALGO_RING, "%d ranks, coll %d, 64 MB: the model picks %d", n, colls[i], algo);
  }
  uint64_t tree0 = comm->dp.algoCount[MK_ALGO_TREE], ring0 = comm->dp.algoCount[MK_ALGO_RING];
  int rank = comm->rank;
  float x = (float)rank + 1, y = 0;
  CHECK_NCCL(ncclBroadcast(&x, &y, 1, ncclFloat32, n - 1, comm, NULL));
  CHECK(y == (float)n);
  CHECK_NCCL(ncclReduce(&x, &y, 1, ncclFloat32, ncclSum, 0, comm, NULL));
  if (rank == 0) CHECK(y == (float)(n * (n + 1) / 2));
  CHECK(comm->dp.algoCount[MK_ALGO_TREE] == tree0 + 2 && comm->dp.algoCount[MK_ALGO_RING] == ring0);
  size_t big = (size_t)64 << 20 >> 2;
  float* buf = malloc(big * sizeof(float));
  CHECK(buf);
  for (size_t i = 0; i < big; i++) buf[i] = (float)rank;
  CHECK_NCCL(ncclBroadcast(buf, buf, big, ncclFloat32, 1, comm, NULL));
  CHECK(buf[0] == 1.0f && buf[big - 1] == 1.0f);
  free(buf);
  CHECK(comm->dp.algoCount[MK_ALGO_RING] == ring0 + 1 && comm->dp.algoCount[MK_ALGO_TREE] == tree0 + 2);
}

/* ncclGroupSimulateEnd's estimate for one Broadcast or Reduce (nothing runs). */
static float simulate(ncclComm_t comm, int coll, size_t count) {
  static float buf[1];
  ncclSimInfo_t sim = NCCL_SIM_INFO_INITIALIZER;
  CHECK_NCCL(ncclGroupStart());
  if (coll == C_REDUCE) CHECK_NCCL(ncclReduce(buf, buf, count, ncclFloat32, ncclSum, 0, comm, NULL));
  else CHECK_NCCL(ncclBroadcast(buf, buf, count, ncclFloat32, 0, comm, NULL));
  CHECK_NCCL(ncclGroupSimulateEnd(&sim));
  return sim.estimatedTime;
}

static void check_simulate(ncclComm_t model, ncclComm_t ring, ncclComm_t tree, int n) {
  for (int coll = C_BROADCAST; coll <= C_REDUCE; coll++) {
    size_t small = 2, large = (size_t)64 << 20 >> 2;
    float m = simulate(model, coll, small), r = simulate(ring, coll, small), t = simulate(tree, coll, small);
    CHECK_MSG(m > 0 && m == t && t < r, "%d ranks %s 8 B: simulated %g us, tree %g, ring %g", n, coll_name(coll), m, t,
              r);
    m = simulate(model, coll, large), r = simulate(ring, coll, large), t = simulate(tree, coll, large);
    CHECK_MSG(m > 0 && m == r && r < t, "%d ranks %s 64 MB: simulated %g us, tree %g, ring %g", n, coll_name(coll), m,
              t, r);
  }
}

static int rank_main(int rank, int n, void* arg) {
  (void)arg;
  /* The model's choices below are those of NCCL's constants: no SHM hop
   * latency (test_plan_algo checks that one). */
  setenv("MKCCL_HOST_SHM_HOP_NS", "0", 1);
  for (int i = 0; i < 3; i++) ranks_unique_id(rank, &ids[i]);
  ncclComm_t ring = comm_with_algo("^tree", n, 0, rank);
  ncclComm_t tree = comm_with_algo("tree", n, 1, rank);
  ncclComm_t model = comm_with_algo(NULL, n, 2, rank);
  check_simulate(model, ring, tree, n);
  uint64_t planned = 0;
  long wrong = run_matrix(ring, tree, rank, n, &planned);
  CHECK_MSG(wrong == 0, "rank %d: %ld wrong elements", rank, wrong);
  CHECK(ring->dp.algoCount[MK_ALGO_TREE] == 0 && ring->dp.algoCount[MK_ALGO_RING] == planned);
  CHECK_MSG(tree->dp.algoCount[MK_ALGO_TREE] == planned && tree->dp.algoCount[MK_ALGO_RING] == 0,
            "rank %d: %llu tree items, %llu ring, %llu planned", rank,
            (unsigned long long)tree->dp.algoCount[MK_ALGO_TREE], (unsigned long long)tree->dp.algoCount[MK_ALGO_RING],
            (unsigned long long)planned);
  CHECK_NCCL(ncclCommDestroy(tree));
  CHECK_NCCL(ncclCommDestroy(ring));
  check_model_choice(model, n);
  CHECK_NCCL(ncclCommDestroy(model));
  return 0;
}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 2;
  CHECK(n >= 2 && n <= 8);
  CHECK_EQ_INT(ranks_run(n, rank_main, NULL, 500), 0);
  printf("test_plan_rooted %d: OK\n", n);
  return 0;
}
