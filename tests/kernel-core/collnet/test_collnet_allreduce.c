/* CollNet AllReduce through a collnet plugin (collnet-soft from the default
 * manifest), ranks as processes:
 *
 *   test_collnet_allreduce N on
 *     (NCCL_COLLNET_ENABLE=1, NCCL_ALGO=allreduce:collnetdirect) every rank
 *     offers CollNet; int8, uint8, int32, uint32, int64, uint64, float and
 *     double with sum, prod, max, min (and Avg and PreMulSum for the
 *     floats), counts 1, odd, one element short of and just past a step,
 *     and many steps (more than the 8 slots hold), in place and out of
 *     place, on inputs distinct by rank and element: every element of every
 *     rank is checked; every call ran as CollNetDirect (the planner's
 *     count) and the proxy handed the plugin exactly the steps the schedule
 *     says (the collnet's request count). Integer Avg is not reduced by a
 *     collnet: it runs on the ring, right.
 *   test_collnet_allreduce N off
 *     (NCCL_COLLNET_ENABLE unset) no collnet, no CollNet call, results right.
 *   test_collnet_allreduce N excluded
 *     (NCCL_COLLNET_ENABLE=1, NCCL_ALGO=allreduce:^collnetdirect) a collnet
 *     is set up, but no call runs through it.
 *   test_collnet_allreduce N nodes
 *     (NCCL_COLLNET_ENABLE=1, no NCCL_ALGO, each rank a host of its own by
 *     NCCL_HOSTID) the cost model runs large AllReduces as CollNetDirect.
 *   test_collnet_allreduce N mismatch
 *     (CollNet forced) the last rank's count differs: collnet-soft's test
 *     fails, and ncclAllReduce returns an error on every rank.
 *   test_collnet_allreduce N fail
 *     (NCCL_COLLNET_ENABLE=1, but the last rank's collnet-soft refuses to
 *     connect) no rank offers CollNet; the AllReduces run elsewhere, right.
 *   test_collnet_allreduce N model
 *     with a collnet the cost model picks CollNetDirect for AllReduces
 *     across nodes, not on one node, and never without a collnet. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "collnet/collnet.h"
#include "comm/comm.h"
#include "costmodel/costmodel.h"
#include "device/common/sched_collnet.h"
#include "device/common/shape.h"
#include "device/common/work.h"
#include "nccl.h"
#include "ranks_id.h"

static int mode_on, mode_fail, mode_excluded, mode_nodes, mode_mismatch;

/* Input of `rank` at element i: small, so that sums and products stay
 * exact in every type; distinct by rank (and, but for prod, by element). */
static int64_t input_value(int rank, size_t i, ncclRedOp_t op, int wide) {
  if (op == ncclProd) return (int64_t)((rank + i) % 3) + 1;
  if (wide) return (int64_t)(((size_t)rank * 40009 + i * 11) % 100003) - 50000;
  return (int64_t)((rank * 37 + i * 11) % 113) - 56;
}

#define TYPE_CASES(X)                                                   \
  X(ncclInt8, int8_t) X(ncclUint8, uint8_t) X(ncclInt32, int32_t)       \
  X(ncclUint32, uint32_t) X(ncclInt64, int64_t) X(ncclUint64, uint64_t) \
  X(ncclFloat, float) X(ncclDouble, double)

/* Fill, and the expected value folded in the element type (integers wrap
 * as the reduction does). */
#define FILL_EXPECT(T)                                                                                  \
  static void fill_##T(void* buf, size_t count, int rank, ncclRedOp_t op, double scalar) {             \
    (void)scalar;                                                                                       \
    for (size_t i = 0; i < count; i++) ((T*)buf)[i] = (T)input_value(rank, i, op, sizeof(T) >= 4);                     \
  }                                                                                                     \
  static int check_##T(const void* buf, size_t count, int nranks, ncclRedOp_t op, double scalar,        \
                       int rank) {                                                                      \
    for (size_t i = 0; i < count; i++) {                                                                \
      T acc = (T)input_value(0, i, op, sizeof(T) >= 4);                                                                 \
      double fsum = (double)(T)input_value(0, i, op, sizeof(T) >= 4);                                                   \
      for (int r = 1; r < nranks; r++) {                                                                \
        T v = (T)input_value(r, i, op, sizeof(T) >= 4);                                                                 \
        fsum += (double)v;                                                                              \
        if (op == ncclSum || op == ncclAvg) acc = (T)(acc + v);                                         \
        else if (op == ncclProd) acc = (T)(acc * v);                                                    \
        else if (op == ncclMax) acc = v > acc ? v : acc;                                                \
        else if (op == ncclMin) acc = v < acc ? v : acc;                                                \
      }                                                                                                 \
      if (op == ncclAvg) acc = (T)(fsum / nranks);                                                      \
      if (scalar != 0) acc = (T)(fsum * scalar); /* PreMulSum: every input times the same scalar */    \
      T got = ((const T*)buf)[i];                                                                       \
      if (got != acc) {                                                                                 \
        fprintf(stderr, "rank %d: %s count %zu op %d element %zu: got %g, expected %g\n", rank, #T,     \
                count, (int)op, i, (double)got, (double)acc);                                           \
        return 1;                                                                                       \
      }                                                                                                 \
    }                                                                                                   \
    return 0;                                                                                           \
  }
FILL_EXPECT(int8_t)
FILL_EXPECT(uint8_t)
FILL_EXPECT(int32_t)
FILL_EXPECT(uint32_t)
FILL_EXPECT(int64_t)
FILL_EXPECT(uint64_t)
FILL_EXPECT(float)
FILL_EXPECT(double)

typedef struct {
  ncclDataType_t type;
  size_t size;
  void (*fill)(void*, size_t, int, ncclRedOp_t, double);
  int (*check)(const void*, size_t, int, ncclRedOp_t, double, int);
} type_case_t;

#define TYPE_ENTRY(t, T) {t, sizeof(T), fill_##T, check_##T},
static const type_case_t types[] = {TYPE_CASES(TYPE_ENTRY)};
#define NTYPES ((int)(sizeof(types) / sizeof(types[0])))

/* Requests one call of `count` elements makes: per channel, its chunks. */
static uint64_t expected_requests(struct ncclComm* c, size_t count, size_t ts) {
  int nch = collnet_comm_channels(c) < c->dp.ch.nChannels ? collnet_comm_channels(c) : c->dp.ch.nChannels;
  int64_t per = c->dp.par.channelMinBytes > 0 ? c->dp.par.channelMinBytes : 1;
  int64_t want = (int64_t)(count * ts) / per;
  if (want < 1) want = 1;
  if (want < nch) nch = (int)want;
  int64_t chunkElems = (c->dp.ch.buffSize / MKCCL_STEPS) / (int64_t)ts, total = 0;
  for (int b = 0; b < nch; b++) {
    int64_t off, len, n;
    sched_collnet_part((int64_t)count, nch, b, chunkElems, mk_elem_align((int)ts), &off, &len, &n);
    total += n;
  }
  return (uint64_t)total;
}

static int one_case(ncclComm_t comm, int rank, int n, const type_case_t* tc, ncclRedOp_t op, double scalar,
                    size_t count, int inPlace) {
  struct ncclComm* c = comm;
  char* send = malloc(count * tc->size + 64);
  char* recv = inPlace ? send : malloc(count * tc->size + 64);
  CHECK(send && recv);
  tc->fill(send, count, rank, op, scalar);
  if (!inPlace) memset(recv, 0x5a, count * tc->size);
  ncclRedOp_t use = op;
  if (scalar != 0) {
    /* PreMulSum with a host scalar in the element type. */
    float fs = (float)scalar;
    double ds = scalar;
    CHECK_NCCL(ncclRedOpCreatePreMulSum(&use, tc->type == ncclFloat ? (void*)&fs : (void*)&ds, tc->type,
                                        ncclScalarHostImmediate, comm));
  }
  int viaCollnet = mode_on;
  uint64_t algo0 = c->dp.algoCount[MK_ALGO_COLLNET_DIRECT], req0 = collnet_comm_requests(c);
  CHECK_NCCL(ncclAllReduce(send, recv, count, tc->type, use, comm, NULL));
  if (scalar != 0) CHECK_NCCL(ncclRedOpDestroy(use, comm));
  int bad = tc->check(recv, count, n, op, scalar, rank);
  CHECK_MSG(!bad, "rank %d: type %d op %d count %zu %s: wrong result", rank, (int)tc->type, (int)op, count,
            inPlace ? "in place" : "out of place");
  uint64_t calls = c->dp.algoCount[MK_ALGO_COLLNET_DIRECT] - algo0, reqs = collnet_comm_requests(c) - req0;
  if (viaCollnet) {
    CHECK_MSG(calls == 1, "rank %d: type %d op %d count %zu did not run as CollNetDirect", rank, (int)tc->type,
              (int)op, count);
    uint64_t want = expected_requests(c, count, tc->size);
    CHECK_MSG(reqs == want, "rank %d: count %zu: %llu collnet requests, the schedule says %llu", rank, count,
              (unsigned long long)reqs, (unsigned long long)want);
  } else {
    CHECK_MSG(calls == 0 && reqs == 0, "rank %d: type %d op %d ran through the collnet", rank, (int)tc->type, (int)op);
  }
  free(send);
  if (!inPlace) free(recv);
  return 0;
}

static int rank_main(int rank, int n, void* arg) {
  (void)arg;
  /* A host of its own per rank: the model sees several nodes. */
  if (mode_nodes) {
    char host[32];
    snprintf(host, sizeof(host), "collnet-test-host-%d", rank);
    setenv("NCCL_HOSTID", host, 1);
  }
  /* One rank's collnet cannot connect (a chunk collnet-soft refuses): no rank may offer CollNet. */
  if (mode_fail && rank == n - 1) setenv("MKCCL_COLLNET_SOFT_CHUNK", "1", 1);
  ncclComm_t comm = ranks_comm_init(rank, n);
  struct ncclComm* c = comm;
  if (mode_on || mode_excluded || mode_mismatch) {
    CHECK_MSG(c->dp.collnet != NULL, "rank %d: no collnet with NCCL_COLLNET_ENABLE=1", rank);
  } else {
    CHECK_MSG(c->dp.collnet == NULL, "rank %d: a collnet %s", rank,
              mode_fail ? "though one rank could not connect" : "without NCCL_COLLNET_ENABLE");
  }
  size_t step = (size_t)(c->dp.ch.buffSize / MKCCL_STEPS);
  if (mode_mismatch) {
    /* The last rank asks for more elements: the collnet's test fails, and
     * so does the call, on every rank, instead of waiting for ever. */
    size_t count = rank == n - 1 ? 1017 : 1001;
    float* buf = calloc(count, sizeof(float));
    CHECK(buf);
    ncclResult_t res = ncclAllReduce(buf, buf, count, ncclFloat, ncclSum, comm, NULL);
    CHECK_MSG(res != ncclSuccess, "rank %d: an AllReduce the collnet refused succeeded", rank);
    CHECK_STR_CONTAINS(ncclGetLastError(comm), "collective failed");
    free(buf);
    CHECK_NCCL(ncclCommAbort(comm));
    return 0;
  }
  if (mode_nodes) {
    /* No NCCL_ALGO: the model's choice for large AllReduces across nodes. */
    CHECK_EQ_INT(c->nNodes, n);
    for (int t = 0; t < NTYPES; t++) {
      if (types[t].type != ncclFloat && types[t].type != ncclInt32) continue;
      for (int inPlace = 0; inPlace < 2; inPlace++) {
        if (one_case(comm, rank, n, &types[t], ncclSum, 0, 19 * step / types[t].size + 7, inPlace)) return 1;
        if (one_case(comm, rank, n, &types[t], ncclMax, 0, 19 * step / types[t].size + 7, inPlace)) return 1;
      }
    }
    CHECK_NCCL(ncclCommDestroy(comm));
    return 0;
  }
  static const ncclRedOp_t ops[] = {ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg};
  for (int t = 0; t < NTYPES; t++) {
    const type_case_t* tc = &types[t];
    size_t perStep = step / tc->size;
    size_t counts[] = {1, 1001, perStep - 1, perStep + 1, 19 * perStep + 7};
    int isInt = tc->type != ncclFloat && tc->type != ncclDouble;
    for (int o = 0; o < (isInt ? 4 : 5); o++) { /* integer Avg is no collnet case */
      /* Every count for sum; the others on two counts (one of many steps). */
      for (int k = 0; k < 5; k++) {
        if (ops[o] != ncclSum && k != 1 && k != 4) continue;
        for (int inPlace = 0; inPlace < 2; inPlace++)
          if (one_case(comm, rank, n, tc, ops[o], 0, counts[k], inPlace)) return 1;
      }
    }
    if (tc->type == ncclFloat || tc->type == ncclDouble)
      for (int inPlace = 0; inPlace < 2; inPlace++)
        if (one_case(comm, rank, n, tc, ncclSum, 0.5, 19 * perStep + 7, inPlace)) return 1;
  }
  CHECK_NCCL(ncclCommDestroy(comm));
  return 0;
}

/* The model's choice for an AllReduce of `bytes`: CollNetDirect where it is cheaper. */
static int model_pick(int nNodes, int collnet, size_t bytes) {
  costmodel_topo_t topo;
  costmodel_topo_default(&topo, 8, nNodes);
  topo.collnet = collnet;
  ncclTunerConstants_v5_t k;
  costmodel_constants(&topo, &k);
  float table[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
  costmodel_table(&topo, &k, ncclFuncAllReduce, bytes, 4, 4, table);
  int best = -1;
  float bestUs = 0;
  for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
    if (table[a][NCCL_PROTO_SIMPLE] >= 0 && (best < 0 || table[a][NCCL_PROTO_SIMPLE] < bestUs)) {
      best = a;
      bestUs = table[a][NCCL_PROTO_SIMPLE];
    }
  if (!collnet) CHECK(table[NCCL_ALGO_COLLNET_DIRECT][NCCL_PROTO_SIMPLE] < 0);
  CHECK(table[NCCL_ALGO_COLLNET_CHAIN][NCCL_PROTO_SIMPLE] < 0);
  return best;
}

static int test_model(void) {
  CHECK_EQ_INT(model_pick(4, 1, 64u << 20), NCCL_ALGO_COLLNET_DIRECT);
  CHECK(model_pick(4, 0, 64u << 20) != NCCL_ALGO_COLLNET_DIRECT);
  CHECK(model_pick(1, 1, 64u << 20) != NCCL_ALGO_COLLNET_DIRECT);
  /* Across nodes two network hops beat a tree's 2 log2(nNodes); on one node the shared-memory hops win. */
  CHECK_EQ_INT(model_pick(4, 1, 8), NCCL_ALGO_COLLNET_DIRECT);
  CHECK(model_pick(1, 1, 8) != NCCL_ALGO_COLLNET_DIRECT);
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s N on|off|excluded|nodes|mismatch|fail|model\n", argv[0]);
    return 2;
  }
  int n = atoi(argv[1]);
  if (strcmp(argv[2], "model") == 0) return test_model();
  mode_on = strcmp(argv[2], "on") == 0;
  mode_fail = strcmp(argv[2], "fail") == 0;
  mode_excluded = strcmp(argv[2], "excluded") == 0;
  mode_nodes = strcmp(argv[2], "nodes") == 0;
  mode_mismatch = strcmp(argv[2], "mismatch") == 0;
  mode_on |= mode_nodes;
  CHECK_EQ_INT(ranks_run(n, rank_main, NULL, 240), 0);
  printf("test_collnet_allreduce: %d ranks, collnet %s: ok\n", n, argv[2]);
  return 0;
}
