/* iallgather and ireducescatter of the collnet v12 ABI, over the
 * aggregator's one operation, the allreduce.
 *
 * Both work on a window of a whole of nranks blocks of bytesPerRank bytes
 * (rank r's block at r * bytesPerRank): bytes [windowOffset, windowOffset +
 * windowBytes) of it. A rank's own bytes in the window are its block's
 * intersection with it; its pointer (sendData of iallgather, recvData of
 * ireducescatter) is where that intersection starts (NCCL passes its
 * buffer plus windowOffset % bytesPerRank when the window starts inside its
 * block, its buffer's start otherwise).
 *  - iallgather: every rank's bytes of the window, into recvParts in order
 *    (their sizes add up to windowBytes). Done as a uint8 sum of windows
 *    that are zero but for each rank's own bytes: each byte has one
 *    contributor, so the sum is that byte.
 *  - ireducescatter: sendParts in order hold this rank's whole window; the
 *    window is reduced whole, and each rank keeps its own bytes of the
 *    result, at recvData.
 * A reference, not a fast path: the aggregator moves whole windows. */
#include <stdlib.h>
#include <string.h>

#include "collnet_soft_comm.h"
#include "collnet_soft_log.h"
#include "collnet_soft_reduce.h"

/* This rank's bytes of the window, as offsets into it; len 0 when none. */
static void window_mine(int rank, size_t bytesPerRank, size_t winOff, size_t winBytes, size_t* off, size_t* len) {
  size_t lo = (size_t)rank * bytesPerRank, hi = lo + bytesPerRank, end = winOff + winBytes;
  if (lo < winOff) lo = winOff;
  if (hi > end) hi = end;
  *off = lo < hi ? lo - winOff : 0;
  *len = lo < hi ? hi - lo : 0;
}

static ncclResult_t window_parts_check(const char* fn, int n, const ncclNetSGE_v12_t* parts, size_t winBytes) {
  if (n < 0 || (n > 0 && !parts)) return CS_FAIL(ncclInvalidArgument, "%s: %d parts at %p", fn, n, (const void*)parts);
  size_t sum = 0;
  for (int i = 0; i < n; i++) {
    if (parts[i].size && !parts[i].address) return CS_FAIL(ncclInvalidArgument, "%s: part %d has no address", fn, i);
    sum += parts[i].size;
  }
  if (sum != winBytes)
    return CS_FAIL(ncclInvalidArgument, "%s: the parts hold %zu bytes, the window %zu", fn, sum, winBytes);
  return ncclSuccess;
}

/* Allgather done: the gathered window into the caller's parts, in order. */
static void window_gather_finish(collnet_soft_req_t* r) {
  const ncclNetSGE_v12_t* parts = r->parts;
  size_t at = 0;
  for (int i = 0; i < r->nParts; i++) {
    if (parts[i].size) memcpy(parts[i].address, r->window + at, parts[i].size);
    at += parts[i].size;
  }
}

/* Reduce-scatter done: this rank's bytes of the reduced window. */
static void window_scatter_finish(collnet_soft_req_t* r) {
  if (r->mineLen) memcpy(r->mineDst, r->window + r->mineOff, r->mineLen);
}

/* The window's request; *request NULL (try again) when the comm is full. */
static ncclResult_t window_post(collnet_soft_comm_t* c, char* window, size_t count, ncclDataType_t type,
                                ncclRedOp_t op, collnet_soft_req_t** out) {
  CS_CHECK(collnet_soft_enqueue(c, window, window, count, type, op, out));
  if (!*out) free(window);
  else (*out)->window = window;
  return ncclSuccess;
}

ncclResult_t collnet_soft_iallgather(void* collComm, void* sendData, int nRecvParts, ncclNetSGE_v12_t* recvParts,
                                     size_t bytesPerRank, size_t windowOffset, size_t windowBytes, void* sendMhandle,
                                     void** request) {
  (void)sendMhandle;
  collnet_soft_comm_t* c = collComm;
  if (!c || !request) return CS_FAIL(ncclInvalidArgument, "iallgather: collComm or request is NULL");
  if (c->failed != ncclSuccess) return c->failed;
  if (windowOffset + windowBytes > (size_t)c->nranks * bytesPerRank)
    return CS_FAIL(ncclInvalidArgument, "iallgather: window [%zu, +%zu) beyond %d blocks of %zu bytes", windowOffset,
                   windowBytes, c->nranks, bytesPerRank);
  CS_CHECK(window_parts_check("iallgather", nRecvParts, recvParts, windowBytes));
  size_t off, len;
  window_mine(c->rank, bytesPerRank, windowOffset, windowBytes, &off, &len);
  if (len && !sendData) return CS_FAIL(ncclInvalidArgument, "iallgather: sendData is NULL");
  if (c->nReqs >= COLLNET_SOFT_MAX_REQUESTS) {
    *request = NULL;
    return ncclSuccess;
  }
  char* window = calloc(1, windowBytes ? windowBytes : 1);
  ncclNetSGE_v12_t* parts = malloc(sizeof(*parts) * (size_t)(nRecvParts ? nRecvParts : 1));
  if (!window || !parts) {
    free(window), free(parts);
    return CS_FAIL(ncclSystemError, "iallgather: out of memory for a window of %zu bytes", windowBytes);
  }
  if (len) memcpy(window + off, sendData, len);
  memcpy(parts, recvParts, sizeof(*parts) * (size_t)nRecvParts);
  collnet_soft_req_t* r = NULL;
  ncclResult_t res = window_post(c, window, windowBytes, ncclUint8, ncclSum, &r);
  if (res != ncclSuccess || !r) {
    free(parts);
    *request = NULL;
    return res;
  }
  r->parts = parts;
  r->nParts = nRecvParts;
  r->finish = window_gather_finish;
  *request = r;
  return ncclSuccess;
}

ncclResult_t collnet_soft_ireducescatter(void* collComm, int nSendParts, ncclNetSGE_v12_t* sendParts, void* recvData,
                                         size_t bytesPerRank, size_t windowOffset, size_t windowBytes,
                                         ncclDataType_t dataType, ncclRedOp_t redOp, void* recvMhandle,
                                         void** request) {
  (void)recvMhandle;
  collnet_soft_comm_t* c = collComm;
  if (!c || !request) return CS_FAIL(ncclInvalidArgument, "ireducescatter: collComm or request is NULL");
  if (c->failed != ncclSuccess) return c->failed;
  if (!collnet_soft_supported(dataType, redOp))
    return CS_FAIL(ncclInvalidArgument, "ireducescatter: type %d with op %d is not reduced here (reduceSupport says "
                   "so)", (int)dataType, (int)redOp);
  size_t esize = collnet_soft_type_size(dataType);
  if (bytesPerRank % esize || windowOffset % esize || windowBytes % esize)
    return CS_FAIL(ncclInvalidArgument, "ireducescatter: block %zu, window [%zu, +%zu) not in whole %zu-byte elements",
                   bytesPerRank, windowOffset, windowBytes, esize);
  if (windowOffset + windowBytes > (size_t)c->nranks * bytesPerRank)
    return CS_FAIL(ncclInvalidArgument, "ireducescatter: window [%zu, +%zu) beyond %d blocks of %zu bytes",
                   windowOffset, windowBytes, c->nranks, bytesPerRank);
  CS_CHECK(window_parts_check("ireducescatter", nSendParts, sendParts, windowBytes));
  size_t off, len;
  window_mine(c->rank, bytesPerRank, windowOffset, windowBytes, &off, &len);
  if (len && !recvData) return CS_FAIL(ncclInvalidArgument, "ireducescatter: recvData is NULL");
  if (c->nReqs >= COLLNET_SOFT_MAX_REQUESTS) {
    *request = NULL;
    return ncclSuccess;
  }
  char* window = malloc(windowBytes ? windowBytes : 1);
  if (!window) return CS_FAIL(ncclSystemError, "ireducescatter: out of memory for a window of %zu bytes", windowBytes);
  size_t at = 0;
  for (int i = 0; i < nSendParts; i++) {
    if (sendParts[i].size) memcpy(window + at, sendParts[i].address, sendParts[i].size);
    at += sendParts[i].size;
  }
  collnet_soft_req_t* r = NULL;
  CS_CHECK(window_post(c, window, windowBytes / esize, dataType, redOp, &r));
  if (!r) {
    *request = NULL;
    return ncclSuccess;
  }
  r->mineOff = off;
  r->mineLen = len;
  r->mineDst = recvData;
  r->finish = window_scatter_finish;
  *request = r;
  return ncclSuccess;
}
