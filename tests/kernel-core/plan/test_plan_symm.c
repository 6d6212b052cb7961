/* Which collectives run on the symmetric kernels (plan/plan_symm.c), with
 * no GPU: the rules over made-up windows (every buffer inside a symmetric
 * window, every fallback), the split of elements the kernels share
 * (device/common/symm.h), and a host communicator, whose windows are never
 * mapped and so never qualify. */
#include <stdlib.h>
#include <string.h>

#include "api/window.h"
#include "check.h"
#include "comm/comm.h"
#include "device/common/symm.h"
#include "nccl.h"
#include "plan/plan_symm.h"

#define WIN_BYTES (1 << 20)
#define STRIDE (1ull << 32)

static char win_a[WIN_BYTES] __attribute__((aligned(16)));
static char win_b[WIN_BYTES] __attribute__((aligned(16)));
/* Where LSA rank 0's copies of the two windows and of the flags would be. */
static const char* const flat_a = (const char*)(uintptr_t)0x7f0000000000ull;
static const char* const flat_b = (const char*)(uintptr_t)0x7f4000000000ull;
static const char* const flat_res = (const char*)(uintptr_t)0x7f8000000000ull;

static api_window_span_t span(const char* user, const char* flat) {
  return (api_window_span_t){user, WIN_BYTES, NCCL_WIN_COLL_SYMMETRIC, flat, STRIDE};
}

/* A float Sum AllReduce of `count` on 4 ranks, out of place, both buffers
 * at the start of their windows. */
static plan_symm_query_t base(int coll, size_t count) {
  plan_symm_query_t q;
  memset(&q, 0, sizeof(q));
  q.coll = coll;
  q.type = ncclFloat32;
  q.op = MK_OP_SUM;
  q.opUniform = 1;
  q.count = count;
  q.rank = 1;
  q.nRanks = 4;
  q.maxChannels = 32;
  q.maxBytes = 1 << 20;
  q.oneShotMaxBytes = 32 << 10;
  q.channelBytes = 32 << 10;
  q.sendbuff = win_a;
  q.recvbuff = win_b;
  q.haveSend = q.haveRecv = q.haveRes = 1;
  q.send = span(win_a, flat_a);
  q.recv = span(win_b, flat_b);
  q.res = (api_window_span_t){flat_res, 4096, 0, flat_res, STRIDE};
  return q;
}

static void expect_no(const plan_symm_query_t* q, const char* why) {
  plan_symm_t s;
  const char* got = NULL;
  CHECK_MSG(plan_symm_pick(q, &s, &got) == 0, "expected a fallback (%s)", why);
  CHECK_STR_CONTAINS(got, why);
}

static plan_symm_t expect_yes(const plan_symm_query_t* q) {
  plan_symm_t s;
  const char* why = NULL;
  memset(&s, 0, sizeof(s));
  CHECK_MSG(plan_symm_pick(q, &s, &why) == 1, "expected the symmetric kernels, got: %s", why ? why : "?");
  return s;
}

static void check_qualifying(void) {
  plan_symm_query_t q = base(MK_COLL_ALLREDUCE, 1024);
  plan_symm_t s = expect_yes(&q);
  CHECK_EQ_INT(s.oneShot, 1);
  CHECK(s.bytes == 4096);
  CHECK_EQ_INT(s.nChannels, 1);
  /* Peer r's copy of buffer p is p + delta + r * stride. */
  CHECK(s.sendDelta == (int64_t)((intptr_t)flat_a - (intptr_t)win_a));
  CHECK(s.recvDelta == (int64_t)((intptr_t)flat_b - (intptr_t)win_b));
  CHECK(s.sendStride == STRIDE && s.recvStride == STRIDE && s.res == flat_res && s.resStride == STRIDE);
  /* Above the one-shot limit: two shots, one channel per 32 KB. */
  q.count = 64 << 10; /* 256 KB */
  s = expect_yes(&q);
  CHECK_EQ_INT(s.oneShot, 0);
  CHECK_EQ_INT(s.nChannels, 8);
  /* Channels stop at the communicator's. */
  q.maxChannels = 3;
  CHECK_EQ_INT(expect_yes(&q).nChannels, 3);
  /* Buffers inside their windows, not at the start: the same delta. */
  q = base(MK_COLL_ALLREDUCE, 100);
  q.sendbuff = win_a + 4096;
  q.send = span(win_a, flat_a);
  CHECK(expect_yes(&q).sendDelta == (int64_t)((intptr_t)flat_a - (intptr_t)win_a));
  /* AllGather and ReduceScatter count NCCL's nBytes (the whole buffer). */
  q = base(MK_COLL_ALLGATHER, 1024);
  s = expect_yes(&q);
  CHECK(s.bytes == 4 * 4096);
  CHECK_EQ_INT(s.oneShot, 0);
  q = base(MK_COLL_REDUCESCATTER, 1024);
  CHECK(expect_yes(&q).bytes == 4 * 4096);
  /* Every type and op the kernels are built for; Avg is PREMULSUM (float) or SUMPOSTDIV (integer). */
  int types[] = {ncclInt32, ncclUint32, ncclInt64, ncclUint64, ncclFloat16, ncclFloat32, ncclFloat64, ncclBfloat16};
  for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
    for (int op = MK_OP_SUM; op <= MK_OP_SUMPOSTDIV; op++) {
      int isFloat = types[i] == ncclFloat16 || types[i] == ncclFloat32 || types[i] == ncclFloat64 || types[i] == ncclBfloat16;
      if ((op == MK_OP_PREMULSUM && !isFloat) || (op == MK_OP_SUMPOSTDIV && isFloat)) continue;
      q = base(MK_COLL_REDUCESCATTER, 256);
      q.type = types[i];
      q.op = op;
      expect_yes(&q);
    }
}

static void check_in_place(void) {
  /* AllReduce: the same buffer. */
  plan_symm_query_t q = base(MK_COLL_ALLREDUCE, 1024);
  q.recvbuff = q.sendbuff;
  q.recv = q.send;
  expect_yes(&q);
  /* AllGather: the input is this rank's block of the output. */
  q = base(MK_COLL_ALLGATHER, 1024);
  q.recvbuff = win_a;
  q.recv = span(win_a, flat_a);
  q.sendbuff = win_a + (size_t)q.rank * 4096;
  expect_yes(&q);
  /* ReduceScatter: the output is this rank's block of the input. */
  q = base(MK_COLL_REDUCESCATTER, 1024);
  q.recvbuff = win_a + (size_t)q.rank * 4096;
  q.recv = span(win_a, flat_a);
  expect_yes(&q);
}

static void check_fallbacks(void) {
  plan_symm_query_t q = base(MK_COLL_ALLREDUCE, 1024);
  q.maxBytes = 0;
  expect_no(&q, "MKCCL_SYMM_MAX_BYTES 0");
  q = base(MK_COLL_ALLREDUCE, 1024);
  q.tuner = 1;
  expect_no(&q, "tuner");
  q = base(MK_COLL_BROADCAST, 1024);
  expect_no(&q, "not AllReduce");
  q = base(MK_COLL_ALLREDUCE, 1024);
  q.haveRes = 0;
  expect_no(&q, "no symmetric resources");
  q = base(MK_COLL_ALLREDUCE, 1024);
  q.nRanks = 1;
  expect_no(&q, "no symmetric resources");
  q = base(MK_COLL_ALLREDUCE, 1024);
  q.type = ncclInt8;
  expect_no(&q, "element type");
  q = base(MK_COLL_ALLREDUCE, 1024);
  q.type = ncclFloat8e4m3;
  expect_no(&q, "element type");
  /* A user's PreMulSum: each rank may hold its own operand. */
  q = base(MK_COLL_ALLREDUCE, 1024);
  q.op = MK_OP_PREMULSUM;
  q.opUniform = 0;
  expect_no(&q, "PreMulSum operator");
  q.opUniform = 1;
  q.scalarPtr = 1;
  expect_no(&q, "PreMulSum operator");
  q = base(MK_COLL_ALLREDUCE, 0);
  expect_no(&q, "no elements");
  q = base(MK_COLL_ALLREDUCE, (1 << 18) + 1);
  expect_no(&q, "larger than MKCCL_SYMM_MAX_BYTES");
  q = base(MK_COLL_ALLREDUCE, 1024);
  q.haveSend = 0;
  expect_no(&q, "send buffer");
  q = base(MK_COLL_ALLREDUCE, 1024);
  q.haveRecv = 0;
  expect_no(&q, "receive buffer");
  /* Overlapping, not in NCCL's in-place layout. */
  q = base(MK_COLL_ALLREDUCE, 1024);
  q.recvbuff = win_a + 16;
  q.recv = q.send;
  expect_no(&q, "overlap");
  q = base(MK_COLL_ALLGATHER, 1024);
  q.recvbuff = q.sendbuff; /* rank 1's input at block 0 */
  q.recv = q.send;
  expect_no(&q, "overlap");
  q = base(MK_COLL_REDUCESCATTER, 1024);
  q.recvbuff = q.sendbuff;
  q.recv = q.send;
  expect_no(&q, "overlap");
}

/* Parts tile [0, n) in order, each but the last a whole number of groups. */
static void check_parts(void) {
  int64_t sizes[] = {0, 1, 3, 4, 15, 16, 17, 100, 1000, 4097, 1 << 20};
  int64_t aligns[] = {1, 2, 4, 8, 16};
  for (size_t a = 0; a < 5; a++)
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
      for (int parts = 1; parts <= 9; parts++) {
        int64_t next = 0;
        for (int p = 0; p < parts; p++) {
          int64_t off, len;
          mk_symm_part(sizes[i], parts, p, aligns[a], &off, &len);
          CHECK_MSG(off == next && len >= 0, "n %lld parts %d part %d: at %lld, expected %lld", (long long)sizes[i],
                    parts, p, (long long)off, (long long)next);
          CHECK(off % aligns[a] == 0 || len == 0);
          next = off + len;
        }
        CHECK_MSG(next == sizes[i], "n %lld parts %d: %lld covered", (long long)sizes[i], parts, (long long)next);
      }
  /* The flags of every channel and rank have a word of their own. */
  CHECK(mk_symm_inbox_off(4, 0, 0) == mk_symm_epoch_off(MK_SYMM_CHANNELS - 1) + 8);
  CHECK(mk_symm_inbox_off(4, MK_SYMM_CHANNELS - 1, 3) + 8 == mk_symm_res_bytes(4));
}

/* A host communicator's symmetric window is a record only: no resources,
 * nothing found, and its AllReduce runs as before. */
static void check_host_comm(void) {
  ncclUniqueId id;
  ncclComm_t comm;
  CHECK_NCCL(ncclGetUniqueId(&id));
  CHECK_NCCL(ncclCommInitRank(&comm, 1, id, 0));
  float* buf = calloc(64, sizeof(float));
  CHECK(buf != NULL);
  ncclWindow_t win;
  CHECK_NCCL(ncclCommWindowRegister(comm, buf, 64 * sizeof(float), &win, NCCL_WIN_COLL_SYMMETRIC));
  api_window_span_t s;
  CHECK(comm->symmRes == NULL);
  CHECK_EQ_INT(api_window_symm_find(comm, buf, 64 * sizeof(float), &s), 0);
  CHECK_EQ_INT(api_window_symm_res(comm, &s), 0);
  for (int i = 0; i < 64; i++) buf[i] = (float)i;
  CHECK_NCCL(ncclAllReduce(buf, buf, 64, ncclFloat32, ncclSum, comm, NULL));
  for (int i = 0; i < 64; i++) CHECK(buf[i] == (float)i);
  CHECK(comm->dp.algoCount[MK_ALGO_SYMM] == 0);
  CHECK_NCCL(ncclCommWindowDeregister(comm, win));
  CHECK_NCCL(ncclCommDestroy(comm));
  free(buf);
}

int main(void) {
  check_qualifying();
  check_in_place();
  check_fallbacks();
  check_parts();
  check_host_comm();
  return 0;
}
