/* PreMulSum with a device-resident scalar (ncclScalarDevice) is read when
 * the collective runs, not when it is called: a scalar changed after the
 * call inside a group, before ncclGroupEnd, is the one applied; calls alone
 * (the small ones run on the calling thread with their connections kept
 * bound) read each call's value; a communicator of one applies it too. Each
 * rank has a scalar of its own and inputs that differ by rank and element;
 * in place and out of place; float and int32; small (FLAT) and large
 * (ring) counts. 3 ranks as processes, then one rank alone. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "nccl.h"
#include "ranks_id.h"

static const size_t counts[] = {5, 4099, 262147};

static double input(int rank, size_t i) { return (double)(rank * 1000 + (int)(i % 997)); }

/* sum over ranks of scale(r) * input(r, i), scale(r) = base + r */
static double expect(int n, int base, size_t i) {
  double e = 0;
  for (int r = 0; r < n; r++) e += (base + r) * input(r, i);
  return e;
}

static void fill(void* buf, ncclDataType_t t, int rank, size_t count) {
  for (size_t i = 0; i < count; i++) {
    if (t == ncclFloat32) ((float*)buf)[i] = (float)input(rank, i);
    else ((int32_t*)buf)[i] = (int32_t)input(rank, i);
  }
}

static void check(const void* buf, ncclDataType_t t, int n, int base, size_t count, const char* what) {
  for (size_t i = 0; i < count; i++) {
    double got = t == ncclFloat32 ? ((const float*)buf)[i] : ((const int32_t*)buf)[i];
    CHECK_MSG(got == expect(n, base, i), "%s: count %zu element %zu: %g, expected %g (scale base %d)", what, count, i,
              got, expect(n, base, i), base);
  }
}

static void set_scale(void* s, ncclDataType_t t, int v) {
  if (t == ncclFloat32) *(float*)s = (float)v;
  else *(int32_t*)s = v;
}

static void run_case(ncclComm_t comm, int rank, int n, ncclDataType_t t, size_t count, int inPlace) {
  size_t bytes = count * 4;
  char* send = malloc(bytes);
  char* recv = inPlace ? send : malloc(bytes);
  CHECK(send && recv);
  union {
    float f;
    int32_t i;
  } scale;
  ncclRedOp_t op;
  CHECK_NCCL(ncclRedOpCreatePreMulSum(&op, &scale, t, ncclScalarDevice, comm));

  /* In a group: the value at ncclGroupEnd is the one. */
  fill(send, t, rank, count);
  set_scale(&scale, t, 2 + rank);
  CHECK_NCCL(ncclGroupStart());
  CHECK_NCCL(ncclAllReduce(send, recv, count, t, op, comm, NULL));
  set_scale(&scale, t, 7 + rank);
  CHECK_NCCL(ncclGroupEnd());
  check(recv, t, n, 7, count, inPlace ? "grouped, in place" : "grouped");

  /* Calls alone, one after the other: each reads its own value. */
  for (int round = 0; round < 3; round++) {
    fill(send, t, rank, count);
    set_scale(&scale, t, 3 + round + rank);
    CHECK_NCCL(ncclAllReduce(send, recv, count, t, op, comm, NULL));
    check(recv, t, n, 3 + round, count, inPlace ? "alone, in place" : "alone");
  }
  CHECK_NCCL(ncclRedOpDestroy(op, comm));
  if (!inPlace) free(recv);
  free(send);
}

static int rank_main(int rank, int n, void* arg) {
  (void)arg;
  ncclComm_t comm = ranks_comm_init(rank, n);
  for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++)
    for (int inPlace = 0; inPlace < 2; inPlace++) {
      run_case(comm, rank, n, ncclFloat32, counts[k], inPlace);
      run_case(comm, rank, n, ncclInt32, counts[k], inPlace);
    }
  CHECK_NCCL(ncclCommDestroy(comm));
  return 0;
}

int main(void) {
  CHECK_EQ_INT(ranks_run(3, rank_main, NULL, 240), 0);
  CHECK_EQ_INT(ranks_run(1, rank_main, NULL, 60), 0);
  return 0;
}
