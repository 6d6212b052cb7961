/* Send side: isend queues a header (with an inline payload) for the control
 * socket and the chunks of a large message for the data sockets; queued
 * control messages leave in batches, one sendmsg each. */
#include "net_socket_send.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "net_socket_chunk.h"
#include "net_socket_helper.h"
#include "net_socket_log.h"
#include "net_socket_params.h"
#include "sock/sock.h"

/* Gathers the unsent control bytes of up to NET_SOCKET_TX_BATCH queued
 * messages, from txOff into the first one. Returns the iovec count. */
static int net_socket_tx_gather(net_socket_comm_t* comm, struct iovec* iov, size_t* bytes) {
  int niov = 0;
  size_t skip = comm->txOff;
  *bytes = 0;
  for (uint32_t q = comm->txHead; q != comm->txTail && niov + 2 <= 2 * NET_SOCKET_TX_BATCH; q++) {
    net_socket_request_t* r = comm->txq[q % NET_SOCKET_MAX_REQUESTS];
    struct iovec parts[2] = {{&r->hdr, sizeof(r->hdr)}, {r->tail, r->tailLen}};
    for (int p = 0; p < 2; p++) {
      if (skip >= parts[p].iov_len) {
        skip -= parts[p].iov_len;
        continue;
      }
      iov[niov++] = (struct iovec){(char*)parts[p].iov_base + skip, parts[p].iov_len - skip};
      *bytes += parts[p].iov_len - skip;
      skip = 0;
    }
  }
  return niov;
}

ncclResult_t net_socket_tx_progress(net_socket_comm_t* comm) {
  while (comm->txHead != comm->txTail) {
    struct iovec iov[2 * NET_SOCKET_TX_BATCH];
    size_t want;
    struct msghdr msg = {.msg_iov = iov, .msg_iovlen = (size_t)net_socket_tx_gather(comm, iov, &want)};
    ssize_t n = sendmsg(comm->ctrlFd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return ncclSuccess;
      int closed = errno == EPIPE || errno == ECONNRESET;
      NS_WARN("control socket: send failed: %s", strerror(errno));
      return net_socket_comm_fail(comm, closed ? ncclRemoteError : ncclSystemError);
    }
    /* Retire the messages the bytes written complete. */
    size_t done = comm->txOff + (size_t)n;
    while (comm->txHead != comm->txTail) {
      net_socket_request_t* r = comm->txq[comm->txHead % NET_SOCKET_MAX_REQUESTS];
      if (done < sizeof(r->hdr) + r->tailLen) break;
      done -= sizeof(r->hdr) + r->tailLen;
      r->ctrlDone = 1;
      comm->txHead++;
    }
    comm->txOff = done;
    if ((size_t)n < want) return ncclSuccess; /* the socket is full */
  }
  return ncclSuccess;
}

ncclResult_t net_socket_isend(void* sendComm, void* data, size_t size, int tag, void** request) {
  net_socket_comm_t* comm = sendComm;
  if (!comm || !comm->isSend || !request) return NS_FAIL(ncclInvalidArgument, "isend: not a send comm");
  if (size > INT_MAX) return NS_FAIL(ncclInvalidArgument, "isend: %zu bytes is over INT_MAX", size);
  if (size && !data) return NS_FAIL(ncclInvalidArgument, "isend: NULL data for %zu bytes", size);
  ncclResult_t err = (ncclResult_t)atomic_load(&comm->error);
  if (err != ncclSuccess) return err; /* logged where it was decided */
  net_socket_request_t* r = net_socket_request_get(comm);
  if (!r) {
    *request = NULL; /* the caller retries once a request completes */
    return ncclSuccess;
  }
  r->n = 1;
  r->ctrlDone = 0;
  r->subs[0].data = data;
  r->subs[0].size = size;
  r->subs[0].tag = tag;
  atomic_store_explicit(&r->subs[0].pending, 0, memory_order_relaxed);
  r->hdr = (net_socket_hdr_t){NET_SOCKET_HDR_CHECK, 0, tag, size, 0};
  r->tail = NULL;
  r->tailLen = 0;
  if (comm->nSocks == 0 || size <= comm->inlineMax) {
    r->hdr.flags = NET_SOCKET_HDR_INLINE;
    r->tail = data;
    r->tailLen = size;
  } else {
    r->hdr.chunkSize = net_socket_chunk_size(size, comm->nSocks, comm->minChunk);
    ncclResult_t res = net_socket_helper_schedule(comm, &r->subs[0], data, size, r->hdr.chunkSize);
    if (res != ncclSuccess) return net_socket_comm_fail(comm, res);
  }
  r->used = 1;
  comm->txq[comm->txTail++ % NET_SOCKET_MAX_REQUESTS] = r;
  NS_CHECK(net_socket_tx_progress(comm));
  if (net_socket_trace()) NS_INFO(NCCL_NET, "trace: isend comm %p %zu B tag %d -> %p", (void*)comm, size, tag, (void*)r);
  *request = r;
  return ncclSuccess;
}
