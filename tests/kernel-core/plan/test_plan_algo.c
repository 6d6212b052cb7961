/* The algorithm a collective runs, through real communicators of N ranks
 * (processes):
 *  - NCCL_ALGO forces it: a communicator made with "^tree" runs every
 *    AllReduce on rings, one made with "tree" on trees (the planner counts
 *    items per algorithm in comm->dp.algoCount);
 *  - tree and ring give the same bytes for every AllReduce type, op (with
 *    Avg and PreMulSum, its scalar host-immediate and device-resident),
 *    count 0, 1, odd and a few MB (once per op, in fp32 or int8), each in
 *    and out of place, and the exact expected values (float Avg over 3
 *    ranks rounds 1/n: there, values within the rounding);
 *  - NCCL_PROTO excludes protocols: LL alone (the host runs Simple) is an
 *    error naming the setting;
 *  - FLAT (MKCCL_FLAT_MAX_BYTES) gives the same bytes as the ring for every
 *    type and op, counts up to a step, each in and out of place; every rank
 *    gets the inputs folded in rank order, bit for bit, on data where
 *    another order gives other bits;
 *  - a FLAT AllReduce called alone runs at once (plan_alone.c) where no
 *    connection needs the proxy, and gives the bits the general path
 *    (the same call in a group) gives; over SHM, many of them between
 *    grouped ones, PreMulSums and rings stay right on the prims the
 *    executor keeps bound, with the LL wait settings off and on;
 *  - over the network (3 and 4 ranks), FLAT's direct form for larger
 *    inputs (MKCCL_NET_FLAT_MAX_BYTES) gives the ring's bytes too;
 *  - with no setting a small AllReduce runs FLAT and a large one the ring;
 *    with FLAT off the cost model picks tree for the small one, and the
 *    planner runs what it picked;
 *  - where the ranks of one host over SHM each have a CPU, the model takes
 *    MKCCL_HOST_SHM_HOP_NS for a hop (the ring from smaller sizes), and
 *    elsewhere keeps NCCL's constants.
 *   test_plan_algo N [all|tree|flat|direct|settings]
 * (transports and channels follow the environment; the part: the ring
 * against trees, against FLAT, against FLAT's direct form over the
 * network, or the settings and the model's choices). */
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

static ncclUniqueId ids[11];

/* A communicator made while `var` (NCCL_ALGO or NCCL_PROTO) is `value`. */
static ncclComm_t comm_with(const char* var, const char* value, int n, int id, int rank) {
  ncclComm_t comm;
  if (value) setenv(var, value, 1);
  else unsetenv(var);
  CHECK_NCCL(ncclCommInitRank(&comm, n, ids[id], rank));
  unsetenv(var);
  return comm;
}

static ncclComm_t comm_with_algo(const char* algo, int n, int id, int rank) {
  return comm_with("NCCL_ALGO", algo, n, id, rank);
}

/* NCCL_PROTO: the host executor runs Simple. Excluding LL changes nothing;
 * allowing LL alone is an error that names the setting, not a silent Simple. */
static void check_proto(int n, int rank) {
  ncclComm_t simple = comm_with("NCCL_PROTO", "^ll", n, 3, rank);
  ncclComm_t ll = comm_with("NCCL_PROTO", "ll", n, 4, rank);
  int32_t one = 1, sum = 0;
  CHECK_NCCL(ncclAllReduce(&one, &sum, 1, ncclInt32, ncclSum, simple, NULL));
  CHECK_EQ_INT(sum, n);
  CHECK(ncclAllReduce(&one, &sum, 1, ncclInt32, ncclSum, ll, NULL) == ncclInvalidUsage);
  CHECK_MSG(strstr(ncclGetLastError(ll), "NCCL_PROTO") != NULL, "last error: %s", ncclGetLastError(ll));
  CHECK_NCCL(ncclCommDestroy(ll));
  CHECK_NCCL(ncclCommDestroy(simple));
}

/* The type of an op's few-MB case, once per op family: fp32 or int8. */
static int large_type(int op) { return op % 2 ? ncclInt8 : ncclFloat32; }

/* One AllReduce case on both communicators: same bytes, right values. */
static long same_on_both(ncclComm_t ring, ncclComm_t other, const coll_case_t* c, int rank, int n) {
  coll_run_t a, b;
  coll_case_prepare(&a, c, ring, rank, n, &coll_mem_host, NULL);
  coll_case_prepare(&b, c, other, rank, n, &coll_mem_host, NULL);
  CHECK_NCCL(coll_case_launch(&a));
  CHECK_NCCL(coll_case_launch(&b));
  /* Inexact results (float Avg over 3 ranks) depend on the order of the
   * additions, which algorithms choose differently: those are checked
   * within their rounding alone. */
  CHECK_MSG(!coll_case_exact(&a) || memcmp(a.r, b.r, a.outCnt * a.ts) == 0,
            "rank %d: type %d op %d count %zu in place %d: ring and %s differ", rank, c->type, c->op, c->count,
            c->inPlace, other->dp.par.flatMaxBytes ? "flat" : "tree");
  return coll_case_check(&a) + coll_case_check(&b);
}

/* Inputs whose sum depends on the order of the additions: 2^24 + 1 rounds
 * to 2^24 in float, so each rank's 1 counts only when it is added before
 * the large terms cancel. Every rank must hold the rank-order fold. */
static float order_input(int r, size_t i) {
  switch ((r + (int)i) % 4) {
    case 0: return 16777216.0f;
    case 1: return 1.0f;
    case 2: return -16777216.0f;
    default: return 0.5f * (float)(r + 1);
  }
}

static void check_flat_order(ncclComm_t flat, int rank, int n) {
  enum { COUNT = 97 };
  float in[COUNT], out[COUNT];
  for (size_t i = 0; i < COUNT; i++) in[i] = order_input(rank, i);
  uint64_t flat0 = flat->dp.algoCount[MK_ALGO_FLAT], aloneBefore = flat->dp.aloneCount;
  CHECK_NCCL(ncclAllReduce(in, out, COUNT, ncclFloat32, ncclSum, flat, NULL));
  CHECK(flat->dp.algoCount[MK_ALGO_FLAT] == flat0 + 1);
  /* Ranks of one host over SHM: no FLAT connection needs the proxy, so the
   * call ran at once; over NET it took the general path. */
  const char* shmOff = getenv("NCCL_SHM_DISABLE");
  int overShm = !(shmOff && atoi(shmOff) == 1);
  CHECK_MSG(flat->dp.ch.flatNoProxy == overShm, "FLAT connections %s the proxy", overShm ? "need" : "do not need");
  CHECK(flat->dp.aloneCount == aloneBefore + (uint64_t)overShm);
  int orderMatters = 0;
  for (size_t i = 0; i < COUNT; i++) {
    volatile float fwd = order_input(0, i), rev = order_input(n - 1, i);
    for (int r = 1; r < n; r++) fwd = fwd + order_input(r, i);
    for (int r = n - 2; r >= 0; r--) rev = rev + order_input(r, i);
    orderMatters |= fwd != rev;
    CHECK_MSG(memcmp((const void*)&fwd, &out[i], sizeof(float)) == 0, "rank %d element %zu: %.9g, rank order gives %.9g",
              rank, i, (double)out[i], (double)fwd);
  }
  if (n > 2) CHECK_MSG(orderMatters, "%d ranks: the inputs do not tell one order from another", n);
  /* The same call in a group takes the general path: the same bits. Alone,
   * it ran at once, unless a connection needs the proxy (NET). */
  float grouped[COUNT];
  uint64_t alone0 = flat->dp.aloneCount;
  CHECK_NCCL(ncclGroupStart());
  CHECK_NCCL(ncclAllReduce(in, grouped, COUNT, ncclFloat32, ncclSum, flat, NULL));
  CHECK_NCCL(ncclGroupEnd());
  CHECK(flat->dp.aloneCount == alone0 && flat->dp.algoCount[MK_ALGO_FLAT] == flat0 + 2);
  CHECK(memcmp(grouped, out, sizeof(out)) == 0);
}

/* Small AllReduces alone, again and again, between large ones and grouped
 * ones on the same connections: the executor keeps channel 0's FLAT
 * connections bound from one alone run to the next (host_coll_flat_bound),
 * so their step counters must stay in step with what the ring and the
 * general path do to them; a PreMulSum scalar that changes every call must
 * be the one used; lines (up to 32 bytes) and a Simple step both. Run once
 * with the LL wait settings off and once with their defaults (both must
 * give the same values: they only change when a rank notices a line).
 * Over SHM only: over the network FLAT takes the general path. */
static void check_flat_bound(int n, int rank, int id, int settingsOff) {
  if (settingsOff) {
    setenv("MKCCL_HOST_LL_POLLS", "0", 1);
  }
  ncclComm_t comm = comm_with_algo(NULL, n, id, rank);
  unsetenv("MKCCL_HOST_LL_POLLS");
  enum { BIG = 1 << 18, SMALL_MAX = 500, ROUNDS = 80 };
  float* big = malloc(BIG * sizeof(float));
  CHECK(big);
  uint64_t alone0 = comm->dp.aloneCount;
  int alone = 0;
  for (int i = 0; i < ROUNDS; i++) {
    int32_t in[SMALL_MAX], out[SMALL_MAX];
    int count = i % 5 == 4 ? SMALL_MAX : 1 + i % 8; /* 2000 bytes: a Simple step; else lines */
    for (int k = 0; k < count; k++) in[k] = rank * 1000 + k + i;
    int grouped = i % 7 == 3;
    if (grouped) CHECK_NCCL(ncclGroupStart());
    CHECK_NCCL(ncclAllReduce(in, out, (size_t)count, ncclInt32, ncclSum, comm, NULL));
    if (grouped) CHECK_NCCL(ncclGroupEnd());
    alone += !grouped;
    for (int k = 0; k < count; k++)
      CHECK_MSG(out[k] == 1000 * n * (n - 1) / 2 + n * (k + i), "round %d element %d: %d", i, k, (int)out[k]);
    float scalar = 0.5f * (float)(1 + i % 4), x[3] = {1.0f + (float)rank, 2.0f, 4.0f}, y[3];
    ncclRedOp_t op;
    CHECK_NCCL(ncclRedOpCreatePreMulSum(&op, &scalar, ncclFloat32, ncclScalarHostImmediate, comm));
    CHECK_NCCL(ncclAllReduce(x, y, 3, ncclFloat32, op, comm, NULL));
    CHECK_NCCL(ncclRedOpDestroy(op, comm));
    alone++;
    CHECK_MSG(y[0] == scalar * (float)(n + n * (n - 1) / 2) && y[1] == scalar * 2.0f * (float)n &&
                  y[2] == scalar * 4.0f * (float)n,
              "round %d, PreMulSum by %g: %g %g %g", i, (double)scalar, (double)y[0], (double)y[1], (double)y[2]);
    if (i % 16 == 0) { /* a ring on the same connections in between */
      for (size_t k = 0; k < BIG; k++) big[k] = (float)(k % 5);
      CHECK_NCCL(ncclAllReduce(big, big, BIG, ncclFloat32, ncclSum, comm, NULL));
      CHECK(big[0] == 0.0f && big[BIG - 1] == (float)(n * (int)((BIG - 1) % 5)));
    }
  }
  /* Every ungrouped one ran alone (on the bound prims) but the first,
   * which connects FLAT on the general path. */
  CHECK_MSG(comm->dp.aloneCount == alone0 + (uint64_t)alone - 1, "%llu of %d ran alone",
            (unsigned long long)(comm->dp.aloneCount - alone0), alone);
  free(big);
  CHECK_NCCL(ncclCommDestroy(comm));
}

/* MKCCL_HOST_SHM_HOP_NS: where the ranks of one host over SHM each have a
 * CPU, the model takes a Simple hop at 250 ns instead of NCCL's PCI
 * constants. Then the ring wins at 256 KB for every count (the constants
 * keep the tree there for 4 and 8 ranks) and at 8 B for 2 and 3 ranks,
 * whose trees have as many hops as their rings; elsewhere (ranks outnumber
 * CPUs, as 3 or more on a 2-core machine, or the network) the picks are the
 * constants'. `constants` was made with the setting at 0. */
static void check_shm_hop(ncclComm_t hop, ncclComm_t constants, int n) {
  const char* shmOff = getenv("NCCL_SHM_DISABLE");
  int cores = !(shmOff && atoi(shmOff) == 1) && comm_peer_host_ranks(hop, hop->rank) <= hop->peerInfo[hop->rank].cpus;
  CHECK_MSG(hop->dp.par.hostShmCores == cores && constants->dp.par.hostShmCores == cores,
            "%d ranks: one host over SHM with a CPU each is %d, the communicators say %d and %d", n, cores,
            hop->dp.par.hostShmCores, constants->dp.par.hostShmCores);
  const size_t sizes[] = {8, 256 << 10};
  for (int i = 0; i < 2; i++) {
    int got, constant, proto;
    CHECK_NCCL(plan_tune_pick(hop, MK_COLL_ALLREDUCE, sizes[i], &got, &proto));
    CHECK_NCCL(plan_tune_pick(constants, MK_COLL_ALLREDUCE, sizes[i], &constant, &proto));
    int want = !cores ? constant : i == 1 || n <= 3 ? MK_ALGO_RING : MK_ALGO_TREE;
    CHECK_MSG(got == want, "%d ranks, %zu B, %s: the model picks %d, not %d", n, sizes[i],
              cores ? "a CPU each" : "the constants", got, want);
  }
}

static void check_model_choice(ncclComm_t comm, ncclComm_t noFlat, int n) {
  int algo, proto;
  CHECK_NCCL(plan_tune_pick(comm, MK_COLL_ALLREDUCE, 8, &algo, &proto));
  CHECK_MSG(algo == MK_ALGO_TREE, "%d ranks, 8 B: the model picks %d", n, algo);
  CHECK_EQ_INT(proto, MK_PROTO_SIMPLE);
  CHECK_NCCL(plan_tune_pick(comm, MK_COLL_ALLREDUCE, (size_t)64 << 20, &algo, &proto));
  CHECK_MSG(algo == MK_ALGO_RING, "%d ranks, 64 MB: the model picks %d", n, algo);
  CHECK_NCCL(plan_tune_pick(comm, MK_COLL_ALLGATHER, 8, &algo, &proto));
  CHECK_EQ_INT(algo, MK_ALGO_RING); /* no tree AllGather */

  /* What the planner runs: a small AllReduce FLAT (or, FLAT off, on the
   * model's tree), a large one on the ring. */
  uint64_t tree0 = comm->dp.algoCount[MK_ALGO_TREE], ring0 = comm->dp.algoCount[MK_ALGO_RING];
  uint64_t flat0 = comm->dp.algoCount[MK_ALGO_FLAT];
  float one = 1, sum = 0;
  CHECK_NCCL(ncclAllReduce(&one, &sum, 1, ncclFloat32, ncclSum, comm, NULL));
  CHECK(sum == (float)n);
  CHECK(comm->dp.algoCount[MK_ALGO_FLAT] == flat0 + 1 && comm->dp.algoCount[MK_ALGO_TREE] == tree0 &&
        comm->dp.algoCount[MK_ALGO_RING] == ring0);
  sum = 0;
  CHECK_NCCL(ncclAllReduce(&one, &sum, 1, ncclFloat32, ncclSum, noFlat, NULL));
  CHECK(sum == (float)n);
  CHECK(noFlat->dp.algoCount[MK_ALGO_TREE] == 1 && noFlat->dp.algoCount[MK_ALGO_FLAT] == 0);
  size_t big = (size_t)16 << 20 >> 2;
  float* buf = malloc(big * sizeof(float));
  CHECK(buf);
  for (size_t i = 0; i < big; i++) buf[i] = 1;
  CHECK_NCCL(ncclAllReduce(buf, buf, big, ncclFloat32, ncclSum, comm, NULL));
  CHECK(buf[0] == (float)n && buf[big - 1] == (float)n);
  free(buf);
  CHECK(comm->dp.algoCount[MK_ALGO_RING] == ring0 + 1);
}

/* Over the network with 3 or 4 ranks, an AllReduce up to
 * MKCCL_NET_FLAT_MAX_BYTES runs FLAT, direct beyond a chunk
 * (device/common/coll_flat.h): with 4 KB chunks, every type and op gives the
 * ring's bytes and the right values, for counts in one step, in one chunk
 * a piece, across many chunks and with uneven pieces, in and out of place. */
static long check_net_direct(ncclComm_t ring, int rank, int n) {
  setenv("MKCCL_NET_FLAT_MAX_BYTES", "8388608", 1); /* the few-MB cases too */
  ncclComm_t direct = comm_with("MKCCL_NET_FLAT_CHUNK_BYTES", "4096", n, 7, rank);
  unsetenv("MKCCL_NET_FLAT_MAX_BYTES");
  const size_t counts[] = {1, 7, 1029, 30011, 1000003};
  long wrong = 0;
  uint64_t flat0 = direct->dp.algoCount[MK_ALGO_FLAT];
  int runs = 0;
  for (int type = 0; type < ncclNumTypes; type++)
    for (int op = 0; op < C_OP_N; op++)
      for (int k = 0; k < 5; k++)
        for (int inPlace = 0; inPlace < 2; inPlace++) {
          if (k == 4 && type != large_type(op)) continue;
          coll_case_t c = {C_ALLREDUCE, type, op, 0, inPlace, counts[k], k};
          wrong += same_on_both(ring, direct, &c, rank, n);
          runs++;
        }
  CHECK_MSG(direct->dp.algoCount[MK_ALGO_FLAT] == flat0 + (uint64_t)runs, "%d ranks: %llu of %d AllReduces ran FLAT", n,
            (unsigned long long)(direct->dp.algoCount[MK_ALGO_FLAT] - flat0), runs);
  CHECK(direct->dp.algoCount[MK_ALGO_RING] == 0 && direct->dp.algoCount[MK_ALGO_TREE] == 0);
  /* Above MKCCL_NET_FLAT_MAX_BYTES: the ring. */
  size_t big = ((size_t)direct->dp.par.netFlatMaxBytes + 4096) / sizeof(float);
  float* buf = malloc(big * sizeof(float));
  CHECK(buf);
  for (size_t i = 0; i < big; i++) buf[i] = (float)(i % 7);
  CHECK_NCCL(ncclAllReduce(buf, buf, big, ncclFloat32, ncclSum, direct, NULL));
  for (size_t i = 0; i < big; i++) wrong += buf[i] != (float)(n * (int)(i % 7));
  CHECK(direct->dp.algoCount[MK_ALGO_RING] == 1);
  free(buf);
  CHECK_NCCL(ncclCommDestroy(direct));
  return wrong;
}

/* The part of the checks a run makes (argv[2]; all by default): each is a
 * ctest case of its own, so none runs for long under the sanitizers. */
static const char* part = "all";
static int part_is(const char* p) { return !strcmp(part, "all") || !strcmp(part, p); }

static int rank_main(int rank, int n, void* arg) {
  (void)arg;
  for (int i = 0; i < 11; i++) ranks_unique_id(rank, &ids[i]);
  ncclComm_t ring = comm_with_algo("^tree", n, 0, rank);
  long wrong = 0;
  int matrices = 0;
  const char* shmOff = getenv("NCCL_SHM_DISABLE");
  if (part_is("tree")) {
    ncclComm_t tree = comm_with_algo("tree", n, 1, rank);
    const size_t counts[] = {0, 1, 7, 1000003};
    for (int type = 0; type < ncclNumTypes; type++)
      for (int op = 0; op < C_OP_N; op++)
        for (int k = 0; k < 4; k++)
          for (int inPlace = 0; inPlace < 2; inPlace++) {
            if (k == 3 && type != large_type(op)) continue;
            coll_case_t c = {C_ALLREDUCE, type, op, 0, inPlace, counts[k], k};
            wrong += same_on_both(ring, tree, &c, rank, n);
          }
    CHECK(tree->dp.algoCount[MK_ALGO_TREE] > 0 && tree->dp.algoCount[MK_ALGO_RING] == 0);
    /* Only trees allowed, and AllGather has none: an error, not a silent ring. */
    char x = 1, y[8];
    CHECK(ncclAllGather(&x, y, 1, ncclInt8, tree, NULL) == ncclInvalidUsage);
    CHECK_NCCL(ncclCommDestroy(tree));
    matrices++;
  }
  if (part_is("flat")) {
    /* FLAT for every case that fits a step (30011 doubles do, with the default buffers). */
    ncclComm_t flat = comm_with("MKCCL_FLAT_MAX_BYTES", "1073741824", n, 5, rank);
    const size_t flatCounts[] = {0, 1, 7, 30011};
    uint64_t ring0 = ring->dp.algoCount[MK_ALGO_RING];
    for (int type = 0; type < ncclNumTypes; type++)
      for (int op = 0; op < C_OP_N; op++)
        for (int k = 0; k < 4; k++)
          for (int inPlace = 0; inPlace < 2; inPlace++) {
            coll_case_t c = {C_ALLREDUCE, type, op, 0, inPlace, flatCounts[k], k};
            wrong += same_on_both(ring, flat, &c, rank, n);
          }
    CHECK(flat->dp.algoCount[MK_ALGO_FLAT] == ring->dp.algoCount[MK_ALGO_RING] - ring0);
    CHECK(flat->dp.algoCount[MK_ALGO_RING] == 0 && flat->dp.algoCount[MK_ALGO_TREE] == 0);
    check_flat_order(flat, rank, n);
    CHECK_NCCL(ncclCommDestroy(flat));
    matrices++;
  }
  if (part_is("direct") && shmOff && atoi(shmOff) == 1 && n >= 3 && n <= 4) {
    wrong += check_net_direct(ring, rank, n);
    matrices++;
  }
  CHECK_MSG(wrong == 0, "rank %d: %ld wrong elements", rank, wrong);
  if (matrices) CHECK(ring->dp.algoCount[MK_ALGO_RING] > 0 && ring->dp.algoCount[MK_ALGO_TREE] == 0);
  CHECK_NCCL(ncclCommDestroy(ring));

  if (!part_is("settings")) return 0;
  check_proto(n, rank);
  if (!(shmOff && atoi(shmOff) == 1)) {
    check_flat_bound(n, rank, 8, 1);
    check_flat_bound(n, rank, 9, 0);
  }
  /* The model's constants (what the choices below are written for), then
   * the SHM hop on a communicator of its own. */
  setenv("MKCCL_HOST_SHM_HOP_NS", "0", 1);
  ncclComm_t model = comm_with_algo(NULL, n, 2, rank);
  setenv("MKCCL_NET_FLAT_MAX_BYTES", "0", 1); /* over the network FLAT has a setting of its own */
  ncclComm_t noFlat = comm_with("MKCCL_FLAT_MAX_BYTES", "0", n, 6, rank);
  unsetenv("MKCCL_NET_FLAT_MAX_BYTES");
  unsetenv("MKCCL_HOST_SHM_HOP_NS");
  check_model_choice(model, noFlat, n);
  ncclComm_t hop = comm_with_algo(NULL, n, 10, rank);
  check_shm_hop(hop, model, n);
  CHECK_NCCL(ncclCommDestroy(hop));
  CHECK_NCCL(ncclCommDestroy(noFlat));
  CHECK_NCCL(ncclCommDestroy(model));
  return 0;
}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 2;
  CHECK(n >= 2 && n <= 8);
  if (argc > 2) part = argv[2];
  CHECK_MSG(part_is("tree") || part_is("flat") || part_is("direct") || part_is("settings"),
            "unknown part %s (all, tree, flat, direct, settings)", part);
  CHECK_EQ_INT(ranks_run(n, rank_main, NULL, 300), 0);
  printf("test_plan_algo %d %s: OK\n", n, part);
  return 0;
}
