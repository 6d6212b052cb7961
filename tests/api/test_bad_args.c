/* Bad input, everywhere: every public function with each class of invalid
 * argument (null, wrong type/op, count overflow, root out of range,
 * destroyed or finalized communicator, mismatched group) returns
 * ncclInvalidArgument or ncclInvalidUsage, with a last-error text that
 * names the call, and leaves a good communicator usable. The table is the
 * one in docs/RELIABILITY.md; it prints itself as Markdown rows. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "nccl.h"

static ncclComm_t good;      /* one rank, READY */
static ncclComm_t finalized; /* ncclCommFinalize'd, not yet destroyed */
static ncclComm_t dead;      /* destroyed: the pointer is stale */
static float buf[64];
static ncclUniqueId uid;
static const size_t HUGE_COUNT = SIZE_MAX / 2;
#define BADTYPE ((ncclDataType_t)99)
#define BADOP ((ncclRedOp_t)77)

typedef struct {
  const char* fn;
  const char* cls;
  ncclResult_t (*call)(void);
  int usage; /* 1: ncclInvalidUsage expected, 0: ncclInvalidArgument */
  const char* text; /* in the last-error text */
} bad_case_t;

#define BAD(name, body) static ncclResult_t bad_##name(void) { return body; }

BAD(version_null, ncclGetVersion(NULL))
BAD(uid_null, ncclGetUniqueId(NULL))
BAD(init_null, ncclCommInitRank(NULL, 1, uid, 0))
BAD(init_nranks, ncclCommInitRank(&(ncclComm_t){0}, 0, uid, 0))
BAD(init_rank, ncclCommInitRank(&(ncclComm_t){0}, 2, uid, 2))
BAD(init_neg_rank, ncclCommInitRank(&(ncclComm_t){0}, 2, uid, -1))
BAD(initcfg_bad, ncclCommInitRankConfig(&(ncclComm_t){0}, 1, uid, 0,
                                        &(ncclConfig_t){.size = 3, .magic = 1, .version = 1}))
BAD(initall_null, ncclCommInitAll(NULL, 2, NULL))
BAD(initall_ndev, ncclCommInitAll(&(ncclComm_t){0}, 0, NULL))
BAD(count_null_comm, ncclCommCount(NULL, &(int){0}))
BAD(count_null_out, ncclCommCount(good, NULL))
BAD(count_dead, ncclCommCount(dead, &(int){0}))
BAD(cudev_null_out, ncclCommCuDevice(good, NULL))
BAD(userrank_null_out, ncclCommUserRank(good, NULL))
BAD(async_null_out, ncclCommGetAsyncError(good, NULL))
BAD(async_null_comm, ncclCommGetAsyncError(NULL, &(ncclResult_t){0}))
BAD(finalize_null, ncclCommFinalize(NULL))
BAD(finalize_twice, ncclCommFinalize(finalized))
BAD(destroy_dead, ncclCommDestroy(dead))
BAD(abort_dead, ncclCommAbort(dead))
BAD(split_null_out, ncclCommSplit(good, 0, 0, NULL, NULL))
BAD(split_color, ncclCommSplit(good, -5, 0, &(ncclComm_t){0}, NULL))
BAD(split_finalized, ncclCommSplit(finalized, 0, 0, &(ncclComm_t){0}, NULL))
BAD(register_null, ncclCommRegister(good, NULL, 16, &(void*){0}))
BAD(register_null_handle, ncclCommRegister(good, buf, sizeof(buf), NULL))
BAD(deregister_null_comm, ncclCommDeregister(NULL, buf))
BAD(window_null, ncclCommWindowRegister(good, NULL, 16, &(ncclWindow_t){0}, NCCL_WIN_DEFAULT))
BAD(window_null_win, ncclCommWindowRegister(good, buf, sizeof(buf), NULL, NCCL_WIN_DEFAULT))
BAD(window_size, ncclCommWindowRegister(good, buf, 0, &(ncclWindow_t){0}, NCCL_WIN_DEFAULT))
BAD(window_flags, ncclCommWindowRegister(good, buf, sizeof(buf), &(ncclWindow_t){0}, 0x40))
BAD(window_finalized, ncclCommWindowRegister(finalized, buf, sizeof(buf), &(ncclWindow_t){0}, NCCL_WIN_DEFAULT))
BAD(window_deregister_unknown, ncclCommWindowDeregister(good, (ncclWindow_t)(void*)buf))
BAD(window_deregister_null, ncclCommWindowDeregister(good, NULL))
BAD(premul_null_op, ncclRedOpCreatePreMulSum(NULL, buf, ncclFloat, ncclScalarHostImmediate, good))
BAD(premul_type, ncclRedOpCreatePreMulSum(&(ncclRedOp_t){0}, buf, BADTYPE, ncclScalarHostImmediate, good))
BAD(premul_null_scalar, ncclRedOpCreatePreMulSum(&(ncclRedOp_t){0}, NULL, ncclFloat, ncclScalarHostImmediate, good))
BAD(redop_destroy_builtin, ncclRedOpDestroy(ncclSum, good))
BAD(redop_destroy_unknown, ncclRedOpDestroy((ncclRedOp_t)(ncclNumOps + 40), good))
BAD(memalloc_null, ncclMemAlloc(NULL, 16))
BAD(allreduce_null_send, ncclAllReduce(NULL, buf, 4, ncclFloat, ncclSum, good, NULL))
BAD(allreduce_null_recv, ncclAllReduce(buf, NULL, 4, ncclFloat, ncclSum, good, NULL))
BAD(allreduce_type, ncclAllReduce(buf, buf, 4, BADTYPE, ncclSum, good, NULL))
BAD(allreduce_op, ncclAllReduce(buf, buf, 4, ncclFloat, BADOP, good, NULL))
BAD(allreduce_overflow, ncclAllReduce(buf, buf, HUGE_COUNT, ncclDouble, ncclSum, good, NULL))
BAD(allreduce_null_comm, ncclAllReduce(buf, buf, 4, ncclFloat, ncclSum, NULL, NULL))
BAD(allreduce_dead, ncclAllReduce(buf, buf, 4, ncclFloat, ncclSum, dead, NULL))
BAD(allreduce_finalized, ncclAllReduce(buf, buf, 4, ncclFloat, ncclSum, finalized, NULL))
BAD(allgather_null, ncclAllGather(NULL, buf, 4, ncclFloat, good, NULL))
BAD(allgather_type, ncclAllGather(buf, buf, 4, BADTYPE, good, NULL))
BAD(allgather_overflow, ncclAllGather(buf, buf, HUGE_COUNT, ncclInt64, good, NULL))
BAD(reducescatter_null, ncclReduceScatter(buf, NULL, 4, ncclFloat, ncclSum, good, NULL))
BAD(reducescatter_op, ncclReduceScatter(buf, buf, 4, ncclFloat, BADOP, good, NULL))
BAD(broadcast_root, ncclBroadcast(buf, buf, 4, ncclFloat, 1, good, NULL))
BAD(broadcast_neg_root, ncclBroadcast(buf, buf, 4, ncclFloat, -1, good, NULL))
BAD(broadcast_null, ncclBroadcast(buf, NULL, 4, ncclFloat, 0, good, NULL))
BAD(bcast_type, ncclBcast(buf, 4, BADTYPE, 0, good, NULL))
BAD(reduce_root, ncclReduce(buf, buf, 4, ncclFloat, ncclSum, 3, good, NULL))
BAD(reduce_op, ncclReduce(buf, buf, 4, ncclFloat, BADOP, 0, good, NULL))
BAD(alltoall_null, ncclAlltoAll(NULL, buf, 4, ncclFloat, good, NULL))
BAD(alltoall_overflow, ncclAlltoAll(buf, buf, HUGE_COUNT, ncclFloat, good, NULL))
BAD(gather_root, ncclGather(buf, buf, 4, ncclFloat, 5, good, NULL))
BAD(scatter_root, ncclScatter(buf, buf, 4, ncclFloat, -2, good, NULL))
BAD(send_peer, ncclSend(buf, 4, ncclFloat, 1, good, NULL))
BAD(send_null, ncclSend(NULL, 4, ncclFloat, 0, good, NULL))
BAD(recv_peer, ncclRecv(buf, 4, ncclFloat, -1, good, NULL))
BAD(recv_type, ncclRecv(buf, 4, BADTYPE, 0, good, NULL))
BAD(send_dead, ncclSend(buf, 4, ncclFloat, 0, dead, NULL))
BAD(group_end_unmatched, ncclGroupEnd())
#define ROW(fn, cls, name, usage, text) {fn, cls, bad_##name, usage, text}
static const bad_case_t cases[] = {
    ROW("ncclGetVersion", "null", version_null, 0, "ncclGetVersion"),
    ROW("ncclGetUniqueId", "null", uid_null, 0, "ncclGetUniqueId"),
    ROW("ncclCommInitRank", "null", init_null, 0, "ncclCommInitRank"),
    ROW("ncclCommInitRank", "nranks < 1", init_nranks, 0, "ncclCommInitRank"),
    ROW("ncclCommInitRank", "rank out of range", init_rank, 0, "ncclCommInitRank"),
    ROW("ncclCommInitRank", "negative rank", init_neg_rank, 0, "ncclCommInitRank"),
    ROW("ncclCommInitRankConfig", "bad config", initcfg_bad, 0, "ncclCommInitRankConfig"),
    ROW("ncclCommInitAll", "null", initall_null, 0, "ncclCommInitAll"),
    ROW("ncclCommInitAll", "ndev < 1", initall_ndev, 0, "ncclCommInitAll"),
    ROW("ncclCommCount", "null comm", count_null_comm, 0, "ncclCommCount"),
    ROW("ncclCommCount", "null output", count_null_out, 0, "ncclCommCount"),
    ROW("ncclCommCount", "destroyed comm", count_dead, 0, "ncclCommCount"),
    ROW("ncclCommCuDevice", "null output", cudev_null_out, 0, "ncclCommCuDevice"),
    ROW("ncclCommUserRank", "null output", userrank_null_out, 0, "ncclCommUserRank"),
    ROW("ncclCommGetAsyncError", "null output", async_null_out, 0, "ncclCommGetAsyncError"),
    ROW("ncclCommGetAsyncError", "null comm", async_null_comm, 0, "ncclCommGetAsyncError"),
    ROW("ncclCommFinalize", "null comm", finalize_null, 0, "ncclCommFinalize"),
    ROW("ncclCommFinalize", "finalized twice", finalize_twice, 1, "ncclCommFinalize"),
    ROW("ncclCommDestroy", "destroyed comm", destroy_dead, 0, "ncclCommDestroy"),
    ROW("ncclCommAbort", "destroyed comm", abort_dead, 0, "ncclCommAbort"),
    ROW("ncclCommSplit", "null output", split_null_out, 0, "ncclCommSplit"),
    ROW("ncclCommSplit", "negative color", split_color, 0, "ncclCommSplit"),
    ROW("ncclCommSplit", "finalized comm", split_finalized, 1, "ncclCommSplit"),
    ROW("ncclCommRegister", "null buffer", register_null, 0, "ncclCommRegister"),
    ROW("ncclCommRegister", "null handle", register_null_handle, 0, "ncclCommRegister"),
    ROW("ncclCommDeregister", "null comm", deregister_null_comm, 0, "ncclCommDeregister"),
    ROW("ncclCommWindowRegister", "null buffer", window_null, 0, "ncclCommWindowRegister"),
    ROW("ncclCommWindowRegister", "null output", window_null_win, 0, "ncclCommWindowRegister"),
    ROW("ncclCommWindowRegister", "size 0", window_size, 0, "ncclCommWindowRegister"),
    ROW("ncclCommWindowRegister", "unknown flags", window_flags, 0, "ncclCommWindowRegister"),
    ROW("ncclCommWindowRegister", "finalized comm", window_finalized, 1, "ncclCommWindowRegister"),
    ROW("ncclCommWindowDeregister", "unknown window", window_deregister_unknown, 0, "ncclCommWindowDeregister"),
    ROW("ncclCommWindowDeregister", "null window", window_deregister_null, 0, "ncclCommWindowDeregister"),
    ROW("ncclRedOpCreatePreMulSum", "null output", premul_null_op, 0, "ncclRedOpCreatePreMulSum"),
    ROW("ncclRedOpCreatePreMulSum", "wrong type", premul_type, 0, "ncclRedOpCreatePreMulSum"),
    ROW("ncclRedOpCreatePreMulSum", "null scalar", premul_null_scalar, 0, "ncclRedOpCreatePreMulSum"),
    ROW("ncclRedOpDestroy", "built-in op", redop_destroy_builtin, 0, "ncclRedOpDestroy"),
    ROW("ncclRedOpDestroy", "unknown op", redop_destroy_unknown, 0, "ncclRedOpDestroy"),
    ROW("ncclMemAlloc", "null", memalloc_null, 0, "ncclMemAlloc"),
    ROW("ncclAllReduce", "null sendbuff", allreduce_null_send, 0, "ncclAllReduce"),
    ROW("ncclAllReduce", "null recvbuff", allreduce_null_recv, 0, "ncclAllReduce"),
    ROW("ncclAllReduce", "wrong type", allreduce_type, 0, "ncclAllReduce"),
    ROW("ncclAllReduce", "wrong op", allreduce_op, 0, "ncclAllReduce"),
    ROW("ncclAllReduce", "count overflow", allreduce_overflow, 0, "ncclAllReduce"),
    ROW("ncclAllReduce", "null comm", allreduce_null_comm, 0, "ncclAllReduce"),
    ROW("ncclAllReduce", "destroyed comm", allreduce_dead, 0, "ncclAllReduce"),
    ROW("ncclAllReduce", "finalized comm", allreduce_finalized, 1, "ncclAllReduce"),
    ROW("ncclAllGather", "null sendbuff", allgather_null, 0, "ncclAllGather"),
    ROW("ncclAllGather", "wrong type", allgather_type, 0, "ncclAllGather"),
    ROW("ncclAllGather", "count overflow", allgather_overflow, 0, "ncclAllGather"),
    ROW("ncclReduceScatter", "null recvbuff", reducescatter_null, 0, "ncclReduceScatter"),
    ROW("ncclReduceScatter", "wrong op", reducescatter_op, 0, "ncclReduceScatter"),
    ROW("ncclBroadcast", "root out of range", broadcast_root, 0, "ncclBroadcast"),
    ROW("ncclBroadcast", "negative root", broadcast_neg_root, 0, "ncclBroadcast"),
    ROW("ncclBroadcast", "null recvbuff", broadcast_null, 0, "ncclBroadcast"),
    ROW("ncclBcast", "wrong type", bcast_type, 0, "ncclBroadcast"),
    ROW("ncclReduce", "root out of range", reduce_root, 0, "ncclReduce"),
    ROW("ncclReduce", "wrong op", reduce_op, 0, "ncclReduce"),
    ROW("ncclAlltoAll", "null sendbuff", alltoall_null, 0, "ncclAlltoAll"),
    ROW("ncclAlltoAll", "count overflow", alltoall_overflow, 0, "ncclAlltoAll"),
    ROW("ncclGather", "root out of range", gather_root, 0, "ncclGather"),
    ROW("ncclScatter", "negative root", scatter_root, 0, "ncclScatter"),
    ROW("ncclSend", "peer out of range", send_peer, 0, "ncclSend"),
    ROW("ncclSend", "null buffer", send_null, 0, "ncclSend"),
    ROW("ncclSend", "destroyed comm", send_dead, 0, "ncclSend"),
    ROW("ncclRecv", "negative peer", recv_peer, 0, "ncclRecv"),
    ROW("ncclRecv", "wrong type", recv_type, 0, "ncclRecv"),
    ROW("ncclGroupEnd", "no ncclGroupStart", group_end_unmatched, 1, "ncclGroupEnd"),
};

int main(void) {
  CHECK_NCCL(ncclGetUniqueId(&uid));
  CHECK_NCCL(ncclCommInitRank(&good, 1, uid, 0));
  ncclUniqueId u2, u4;
  CHECK_NCCL(ncclGetUniqueId(&u2));
  CHECK_NCCL(ncclCommInitRank(&finalized, 1, u2, 0));
  CHECK_NCCL(ncclCommFinalize(finalized));
  CHECK_NCCL(ncclGetUniqueId(&u4));
  /* A destroyed comm stays allocated, poisoned, for the next 64
   * destructions (comm_free's quarantine): the calls below read its dead
   * magic, not freed memory, so the rows run under the sanitizers too. */
  CHECK_NCCL(ncclCommInitRank(&dead, 1, u4, 0));
  CHECK_NCCL(ncclCommDestroy(dead));
  int n = (int)(sizeof(cases) / sizeof(cases[0])), failed = 0;
  printf("| function | invalid argument | result | last error |\n|---|---|---|---|\n");
  for (int i = 0; i < n; i++) {
    const bad_case_t* c = &cases[i];
    ncclResult_t res = c->call();
    const char* text = ncclGetLastError(NULL);
    ncclResult_t want = c->usage ? ncclInvalidUsage : ncclInvalidArgument;
    int ok = res == want && text && strstr(text, c->text);
    printf("| `%s` | %s | %s%s | %s |\n", c->fn, c->cls, ncclGetErrorString(res), ok ? "" : " **WRONG**", text ? text : "");
    if (!ok) {
      fprintf(stderr, "%s (%s): got %d, want %d; last error \"%s\" should name \"%s\"\n", c->fn, c->cls, (int)res,
              (int)want, text ? text : "", c->text);
      failed++;
    }
  }
  /* The good communicator is still good. */
  float x = 2, y = 0;
  CHECK_NCCL(ncclAllReduce(&x, &y, 1, ncclFloat, ncclSum, good, NULL));
  CHECK(y == 2);
  CHECK_NCCL(ncclCommDestroy(good));
  CHECK_NCCL(ncclCommDestroy(finalized));
  printf("%d case(s), %d wrong\n", n, failed);
  return failed ? 1 : 0;
}
