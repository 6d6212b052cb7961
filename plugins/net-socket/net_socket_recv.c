/* Receive side: headers are read from the control socket in send order and
 * each is matched to the earliest posted buffer with its tag; the payload is
 * then read inline, or handed to the helpers as chunks. A header with no
 * matching buffer yet is kept as an early message when another receive
 * waits (net_socket_unexp.h), else it waits (nothing behind it is read
 * meanwhile). */
#include "net_socket_recv.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "net_socket_chunk.h"
#include "net_socket_helper.h"
#include "net_socket_log.h"
#include "net_socket_params.h"
#include "net_socket_unexp.h"
#include "net_socket_unpack.h"
#include "sock/sock.h"

static net_socket_sub_t* net_socket_rx_match(net_socket_comm_t* comm, int tag) {
  net_socket_sub_t* best = NULL;
  uint64_t bestSeq = UINT64_MAX;
  for (int i = 0; i < NET_SOCKET_MAX_REQUESTS; i++) {
    net_socket_request_t* r = &comm->reqs[i];
    if (!r->used || r->seq >= bestSeq) continue;
    for (int s = 0; s < r->n; s++)
      if (!r->subs[s].matched && r->subs[s].tag == tag) {
        best = &r->subs[s];
        bestSeq = r->seq;
        break;
      }
  }
  return best;
}

static ncclResult_t net_socket_rx_sock_fail(net_socket_comm_t* comm, int rc, const char* what) {
  NS_WARN("control socket: %s", what);
  return net_socket_comm_fail(comm, rc == SOCK_ECLOSED ? ncclRemoteError : ncclSystemError);
}

/* Moves bytes of the control stream into dst (len bytes, *off done): from
 * the read-ahead first, then with one recvmsg that scatters into the rest of
 * dst and, behind it, the read-ahead: a header arrives with its small payload
 * (often with the next messages), a large payload lands in place. */
static int net_socket_rx_read(net_socket_comm_t* comm, void* dst, size_t len, size_t* off, const char** what) {
  for (;;) {
    size_t avail = comm->rxBufTail - comm->rxBufHead, want = len - *off;
    size_t n = avail < want ? avail : want;
    if (n) {
      memcpy((char*)dst + *off, comm->rxBuf + comm->rxBufHead, n);
      comm->rxBufHead += n;
      *off += n;
    }
    if (*off == len) return SOCK_OK;
    /* The read-ahead is empty here. */
    struct iovec iov[2] = {{(char*)dst + *off, len - *off}, {comm->rxBuf, sizeof(comm->rxBuf)}};
    struct msghdr msg = {.msg_iov = iov, .msg_iovlen = 2};
    ssize_t got = recvmsg(comm->ctrlFd, &msg, MSG_DONTWAIT);
    if (got > 0) {
      size_t direct = (size_t)got < len - *off ? (size_t)got : len - *off;
      *off += direct;
      comm->rxBufHead = 0;
      comm->rxBufTail = (size_t)got - direct;
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return SOCK_OK;
    *what = got == 0 ? "the peer closed the connection" : strerror(errno);
    return got == 0 || errno == ECONNRESET ? SOCK_ECLOSED : SOCK_ESYS;
  }
}

/* A complete header: is it one we could have sent? A chunked message of
 * n > 0 bytes has at least one chunk: with none it would complete with no
 * data moved (found by fuzz_net_socket). */
static ncclResult_t net_socket_rx_check(net_socket_comm_t* comm, const net_socket_hdr_t* h) {
  int isInline = (h->flags & NET_SOCKET_HDR_INLINE) != 0;
  if (h->check != NET_SOCKET_HDR_CHECK || h->size > INT_MAX ||
      (!isInline && (comm->nSocks == 0 || (h->size && h->chunkSize == 0) ||
                     net_socket_chunk_count(h->size, h->chunkSize) > comm->nSocks))) {
    NS_WARN("control socket: malformed message header (check %x, size %llu, chunk %llu)", h->check,
            (unsigned long long)h->size, (unsigned long long)h->chunkSize);
    return net_socket_comm_fail(comm, ncclRemoteError);
  }
  return ncclSuccess;
}

/* A message of `sent` bytes fits sub; else the comm fails with ncclInvalidUsage. */
static ncclResult_t net_socket_rx_fits(net_socket_comm_t* comm, size_t sent, int tag, const net_socket_sub_t* sub) {
  if (sent <= sub->size) return ncclSuccess;
  NS_WARN("message truncated: %zu bytes sent with tag %d, receive posted for %zu", sent, tag, sub->size);
  return net_socket_comm_fail(comm, ncclInvalidUsage);
}

/* The header in comm->rxHdr matched sub (or is kept early): take the message. */
static ncclResult_t net_socket_rx_start(net_socket_comm_t* comm, net_socket_sub_t* sub) {
  const net_socket_hdr_t* h = &comm->rxHdr;
  NS_CHECK(net_socket_rx_fits(comm, (size_t)h->size, h->tag, sub));
  sub->matched = 1;
  sub->received = h->size;
  comm->rxOff = 0;
  comm->rxState = NET_SOCKET_RX_HDR;
  if (h->size == 0) return ncclSuccess;
  if (h->flags & NET_SOCKET_HDR_INLINE) {
    atomic_store_explicit(&sub->pending, 1, memory_order_relaxed);
    comm->rxSub = sub;
    comm->rxState = NET_SOCKET_RX_DATA;
    return ncclSuccess;
  }
  ncclResult_t res = net_socket_helper_schedule(comm, sub, sub->data, h->size, h->chunkSize);
  return res == ncclSuccess ? res : net_socket_comm_fail(comm, res);
}

static ncclResult_t net_socket_rx_stream(net_socket_comm_t* comm) {
  const char* what = "";
  for (;;) {
    if (comm->rxState == NET_SOCKET_RX_HDR) {
      if (comm->rxClosed) return ncclSuccess;
      int rc = net_socket_rx_read(comm, &comm->rxHdr, sizeof(comm->rxHdr), &comm->rxOff, &what);
      if (rc == SOCK_ECLOSED && comm->rxOff == 0) {
        /* Not an error yet: receives the peer sent everything for still complete. */
        comm->rxClosed = 1;
        return ncclSuccess;
      }
      if (rc != SOCK_OK) return net_socket_rx_sock_fail(comm, rc, what);
      if (comm->rxOff < sizeof(comm->rxHdr)) return ncclSuccess;
      NS_CHECK(net_socket_rx_check(comm, &comm->rxHdr));
      comm->rxState = NET_SOCKET_RX_MATCH;
    }
    if (comm->rxState == NET_SOCKET_RX_MATCH) {
      net_socket_sub_t* sub = net_socket_rx_match(comm, comm->rxHdr.tag);
      if (sub) {
        NS_CHECK(net_socket_rx_start(comm, sub));
      } else {
        net_socket_sub_t* kept;
        NS_CHECK(net_socket_unexp_keep(comm, &kept));
        if (!kept) return ncclSuccess; /* no buffer for it yet */
        NS_CHECK(net_socket_rx_start(comm, kept));
      }
    }
    if (comm->rxState == NET_SOCKET_RX_DATA) {
      net_socket_sub_t* sub = comm->rxSub;
      int rc = net_socket_rx_read(comm, sub->data, sub->received, &comm->rxOff, &what);
      if (rc != SOCK_OK) return net_socket_rx_sock_fail(comm, rc, what);
      if (comm->rxOff < sub->received) return ncclSuccess;
      atomic_store_explicit(&sub->pending, 0, memory_order_relaxed);
      comm->rxSub = NULL;
      comm->rxOff = 0;
      comm->rxState = NET_SOCKET_RX_HDR;
    }
  }
}

ncclResult_t net_socket_rx_progress(net_socket_comm_t* comm) {
  ncclResult_t res = net_socket_rx_stream(comm);
  if (comm->unexpHead) net_socket_unexp_progress(comm);
  return res;
}

/* A buffer just posted takes the earliest kept message of its tag, if any. */
static ncclResult_t net_socket_rx_take_early(net_socket_comm_t* comm, net_socket_sub_t* sub) {
  net_socket_unexp_t* u = net_socket_unexp_find(comm, sub->tag);
  if (!u) return ncclSuccess;
  NS_CHECK(net_socket_rx_fits(comm, u->sub.received, sub->tag, sub));
  net_socket_unexp_give(u, sub);
  return ncclSuccess;
}

ncclResult_t net_socket_irecv(void* recvComm, int n, void** data, const size_t* sizes, const int* tags,
                              void** request) {
  net_socket_comm_t* comm = recvComm;
  if (!comm || comm->isSend || !request) return NS_FAIL(ncclInvalidArgument, "irecv: not a receive comm");
  if (n < 1 || n > NET_SOCKET_MAX_RECVS || !data || !sizes || !tags)
    return NS_FAIL(ncclInvalidArgument, "irecv: %d buffers (1..%d, with data, sizes and tags)", n,
                   NET_SOCKET_MAX_RECVS);
  ncclResult_t err = (ncclResult_t)atomic_load(&comm->error);
  if (err != ncclSuccess) return err; /* logged where it was decided */
  net_socket_request_t* r = net_socket_request_get(comm);
  if (!r) {
    *request = NULL; /* the caller retries once a request completes */
    return ncclSuccess;
  }
  char* landing = NULL;
  if (comm->unpack) {
    NS_CHECK(net_socket_unpack_post(comm, n, sizes, r, &landing));
    if (!landing) {
      *request = NULL; /* every slot awaits irecvConsumed: retry */
      return ncclSuccess;
    }
  }
  r->n = n;
  r->seq = comm->nextSeq++;
  r->awaitConsumed = 0;
  for (int i = 0; i < n; i++) {
    net_socket_sub_t* sub = &r->subs[i];
    sub->data = landing ? landing : data[i];
    sub->size = sizes[i];
    sub->received = 0;
    sub->tag = tags[i];
    sub->matched = 0;
    atomic_store_explicit(&sub->pending, 0, memory_order_relaxed);
    if (comm->unexpHead) NS_CHECK(net_socket_rx_take_early(comm, sub));
  }
  r->used = 1;
  NS_CHECK(net_socket_rx_progress(comm));
  if (net_socket_trace())
    NS_INFO(NCCL_NET, "trace: irecv comm %p %d buffer(s), first %zu B tag %d -> %p", (void*)comm, n, sizes[0], tags[0],
            (void*)r);
  *request = r;
  return ncclSuccess;
}

void net_socket_recv_free(net_socket_comm_t* comm) {
  if (!comm) return;
  net_socket_comm_stop(comm); /* nothing writes into the kept messages or the unpack queue after this */
  net_socket_unexp_free(comm);
  net_socket_unpack_free(comm->unpack);
  comm->unpack = NULL;
  net_socket_comm_free(comm);
}
