/* iallreduce, iflush and test on a rank: requests go out in post order and
 * their results come back in the same order; test() moves whatever the
 * socket takes or has, for every request of the comm (collnet_soft_wire.h). */
#include <stdlib.h>
#include <string.h>

#include "collnet_soft_comm.h"
#include "collnet_soft_log.h"
#include "collnet_soft_reduce.h"

/* Host memory needs no flush: every iflush is this request, done at once. */
static int collnet_soft_flush_done;

ncclResult_t collnet_soft_iallreduce(void* collComm, void* sendData, void* recvData, size_t count,
                                     ncclDataType_t dataType, ncclRedOp_t redOp, void* sendMhandle,
                                     void* recvMhandle, void** request) {
  (void)sendMhandle, (void)recvMhandle;
  collnet_soft_comm_t* c = collComm;
  if (!c || !request) return CS_FAIL(ncclInvalidArgument, "iallreduce: collComm or request is NULL");
  if (c->failed != ncclSuccess) return c->failed;
  if (!collnet_soft_supported(dataType, redOp))
    return CS_FAIL(ncclInvalidArgument, "iallreduce: type %d with op %d is not reduced here (reduceSupport says so)",
                   (int)dataType, (int)redOp);
  size_t esize = collnet_soft_type_size(dataType);
  if (count > SIZE_MAX / esize) return CS_FAIL(ncclInvalidArgument, "iallreduce: %zu elements overflow", count);
  if (count && (!sendData || !recvData)) return CS_FAIL(ncclInvalidArgument, "iallreduce: a NULL buffer");
  collnet_soft_req_t* r = NULL;
  CS_CHECK(collnet_soft_enqueue(c, sendData, recvData, count, dataType, redOp, &r));
  *request = r; /* NULL: the ABI's "try again" */
  return ncclSuccess;
}

ncclResult_t collnet_soft_enqueue(collnet_soft_comm_t* c, const void* send, void* recv, size_t count,
                                  ncclDataType_t dataType, ncclRedOp_t redOp, collnet_soft_req_t** out) {
  *out = NULL;
  if (c->nReqs >= COLLNET_SOFT_MAX_REQUESTS) return ncclSuccess;
  collnet_soft_req_t* r = calloc(1, sizeof(*r));
  if (!r) return CS_FAIL(ncclSystemError, "iallreduce: out of memory");
  r->comm = c;
  r->op = (collnet_soft_op_t){COLLNET_SOFT_MAGIC, c->nextSeq++, count, count * collnet_soft_type_size(dataType),
                              (int32_t)dataType, (int32_t)redOp};
  r->send = send;
  r->recv = recv;
  collnet_soft_req_t** tail = &c->head;
  while (*tail) tail = &(*tail)->next;
  *tail = r;
  c->nReqs++;
  *out = r;
  return ncclSuccess;
}

ncclResult_t collnet_soft_iflush(void* collComm, void* data, int size, void* mhandle, void** request) {
  (void)collComm, (void)data, (void)size, (void)mhandle;
  if (!request) return CS_FAIL(ncclInvalidArgument, "iflush: request is NULL");
  *request = &collnet_soft_flush_done;
  return ncclSuccess;
}

/* Header then data, from one buffer or the other, as far as the socket goes.
 * Returns 1 when the whole message has moved. */
static int collnet_soft_move(int fd, int sending, void* header, size_t headerSize, char* data, size_t bytes,
                             size_t* done, int* status) {
  while (*done < headerSize + bytes) {
    size_t before = *done;
    int rc;
    if (*done < headerSize) {
      size_t part = *done;
      rc = sending ? sock_send_some(fd, header, headerSize, &part) : sock_recv_some(fd, header, headerSize, &part);
      *done = part;
    } else {
      size_t part = *done - headerSize;
      rc = sending ? sock_send_some(fd, data, bytes, &part) : sock_recv_some(fd, data, bytes, &part);
      *done = headerSize + part;
    }
    if (rc != SOCK_OK) {
      *status = rc;
      return 0;
    }
    if (*done == before) return 0; /* the socket is full or empty for now */
    if (!sending && *done == headerSize) return 1; /* the header: the caller checks it first */
  }
  return 1;
}

static ncclResult_t collnet_soft_fail(collnet_soft_comm_t* c, ncclResult_t res) {
  c->failed = res;
  return res;
}

static ncclResult_t collnet_soft_progress(collnet_soft_comm_t* c) {
  int status = SOCK_OK;
  for (collnet_soft_req_t* r = c->head; r; r = r->next) {
    if (r->sent == sizeof(r->op) + r->op.bytes) continue;
    int whole = collnet_soft_move(c->fd, 1, &r->op, sizeof(r->op), (char*)r->send, r->op.bytes, &r->sent, &status);
    if (status != SOCK_OK)
      return collnet_soft_fail(c, CS_FAIL(ncclRemoteError, "rank %d: sending to the aggregator: %s", c->rank,
                                          sock_error()));
    if (!whole) break; /* later ones wait for this one */
  }
  for (collnet_soft_req_t* r = c->head; r; r = r->next) {
    if (r->done) continue;
    size_t need = sizeof(r->result) + r->op.bytes;
    while (r->received < need) {
      int whole = collnet_soft_move(c->fd, 0, &r->result, sizeof(r->result), r->recv, r->op.bytes, &r->received,
                                    &status);
      if (status != SOCK_OK)
        return collnet_soft_fail(c, CS_FAIL(ncclRemoteError, "rank %d: receiving from the aggregator: %s", c->rank,
                                            sock_error()));
      if (!whole) return ncclSuccess;
      if (r->received == sizeof(r->result)) {
        const collnet_soft_result_t* h = &r->result;
        if (h->magic != COLLNET_SOFT_MAGIC || h->seq != r->op.seq)
          return collnet_soft_fail(c, CS_FAIL(ncclRemoteError, "rank %d: the aggregator answered op %llu out of "
                                              "step (op %llu expected)", c->rank, (unsigned long long)h->seq,
                                              (unsigned long long)r->op.seq));
        if (h->status != COLLNET_SOFT_OK || h->bytes != r->op.bytes)
          return collnet_soft_fail(c, CS_FAIL(ncclInvalidUsage, "rank %d: allreduce %llu: the ranks disagree on its "
                                              "count, type or op (this rank: %llu elements, type %d, op %d)",
                                              c->rank, (unsigned long long)r->op.seq,
                                              (unsigned long long)r->op.count, r->op.dataType, r->op.redOp));
      }
    }
    r->done = 1;
  }
  return ncclSuccess;
}

ncclResult_t collnet_soft_test(void* request, int* done, int* size) {
  if (!request || !done) return CS_FAIL(ncclInvalidArgument, "test: request or done is NULL");
  if (request == &collnet_soft_flush_done) {
    *done = 1;
    if (size) *size = 0;
    return ncclSuccess;
  }
  collnet_soft_req_t* r = request;
  collnet_soft_comm_t* c = r->comm;
  if (c->failed != ncclSuccess) return c->failed;
  CS_CHECK(collnet_soft_progress(c));
  if (!r->done) {
    *done = 0;
    return ncclSuccess;
  }
  collnet_soft_req_t** p = &c->head;
  while (*p != r) p = &(*p)->next;
  *p = r->next;
  c->nReqs--;
  *done = 1;
  if (size) *size = r->op.bytes > (size_t)INT32_MAX ? INT32_MAX : (int)r->op.bytes;
  if (r->finish) r->finish(r);
  free(r->window);
  free(r->parts);
  free(r);
  return ncclSuccess;
}
