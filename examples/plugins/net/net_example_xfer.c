/* net-example: the data path.
 *
 * isend()/irecv() put a request into the comm's window and return at once
 * (a NULL request when the window is full: the caller tests and retries).
 * test() progresses the comm: it moves bytes for the oldest unfinished
 * request, then the next, until the socket would block; requests finish in
 * the order they were posted, whichever one test() is called on. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "net_example.h"

#define NX_HDR sizeof(nx_header_t)

/* A socket error: the peer went away (remote) or something local broke. */
static ncclResult_t nx_socket_error(const char* what, int err) {
  NX_WARN("NET/example: %s: %s", what, strerror(err));
  return err == EPIPE || err == ECONNRESET || err == ETIMEDOUT || err == EHOSTUNREACH ? ncclRemoteError
                                                                                      : ncclSystemError;
}

/* Writes what the socket takes of the header and the data; *complete once
 * every byte is in the kernel's hands (the caller may reuse its buffer). */
static ncclResult_t nx_send_some(nx_comm_t* c, nx_request_t* r, int* complete) {
  while (r->moved < NX_HDR + r->size) {
    struct iovec iov[2];
    int n = 0;
    if (r->moved < NX_HDR) {
      iov[n].iov_base = (char*)&r->hdr + r->moved;
      iov[n++].iov_len = NX_HDR - r->moved;
    }
    size_t dataSent = r->moved > NX_HDR ? r->moved - NX_HDR : 0;
    if (dataSent < r->size) {
      iov[n].iov_base = r->data + dataSent;
      iov[n++].iov_len = r->size - dataSent;
    }
    struct msghdr msg;
    memset(&msg, 0, sizeof(msg));
    msg.msg_iov = iov;
    msg.msg_iovlen = (size_t)n;
    /* MSG_NOSIGNAL: a dead peer is an error code, not a SIGPIPE that kills the process. */
    ssize_t sent = sendmsg(c->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return ncclSuccess; /* socket full: later */
      return nx_socket_error("send", errno);
    }
    r->moved += (size_t)sent;
  }
  *complete = 1;
  return ncclSuccess;
}

/* Reads up to len bytes into buf; *got 0 when nothing is there now. */
static ncclResult_t nx_read(nx_comm_t* c, void* buf, size_t len, size_t* got) {
  for (;;) {
    ssize_t n = recv(c->fd, buf, len, MSG_DONTWAIT);
    if (n > 0) {
      *got = (size_t)n;
      return ncclSuccess;
    }
    if (n == 0) { /* EOF with a receive posted: the peer closed or died */
      NX_WARN("NET/example: the peer closed the connection");
      return ncclRemoteError;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      *got = 0;
      return ncclSuccess;
    }
    return nx_socket_error("recv", errno);
  }
}

/* The header first, checked against the receive; then the data. */
static ncclResult_t nx_recv_some(nx_comm_t* c, nx_request_t* r, int* complete) {
  size_t got = 0;
  while (r->moved < NX_HDR) {
    ncclResult_t res = nx_read(c, (char*)&r->hdr + r->moved, NX_HDR - r->moved, &got);
    if (res != ncclSuccess) return res;
    if (got == 0) return ncclSuccess;
    r->moved += got;
    if (r->moved < NX_HDR) continue;
    if (r->hdr.magic != NX_MAGIC) {
      NX_WARN("NET/example: bad message header (magic 0x%x): the stream is out of step", r->hdr.magic);
      return ncclInternalError;
    }
    if (r->hdr.tag != r->tag) {
      NX_WARN("NET/example: a message with tag %d came for a receive posted with tag %d (messages match "
              "receives in order)", r->hdr.tag, r->tag);
      return ncclInvalidUsage;
    }
    if (r->hdr.size > r->capacity) {
      NX_WARN("NET/example: a message of %llu bytes came for a receive of %zu bytes",
              (unsigned long long)r->hdr.size, r->capacity);
      return ncclInvalidUsage;
    }
    r->size = (size_t)r->hdr.size;
  }
  while (r->moved < NX_HDR + r->size) {
    size_t dataGot = r->moved - NX_HDR;
    ncclResult_t res = nx_read(c, r->data + dataGot, r->size - dataGot, &got);
    if (res != ncclSuccess) return res;
    if (got == 0) return ncclSuccess;
    r->moved += got;
  }
  *complete = 1;
  return ncclSuccess;
}

/* Moves bytes for the oldest unfinished requests until the socket would
 * block. A failure is kept: the comm is broken for good. */
static ncclResult_t nx_progress(nx_comm_t* c) {
  if (c->error != ncclSuccess) return c->error;
  while (c->finished < c->posted) {
    nx_request_t* r = &c->reqs[c->finished % NX_MAX_REQUESTS];
    int complete = 0;
    ncclResult_t res = c->isSend ? nx_send_some(c, r, &complete) : nx_recv_some(c, r, &complete);
    if (res != ncclSuccess) {
      c->error = res;
      return res;
    }
    if (!complete) break;
    r->state = NX_REQ_DONE;
    c->finished++;
  }
  return ncclSuccess;
}

/* The next slot of the window, or NULL when the caller still holds the
 * request that used it NX_MAX_REQUESTS posts ago. */
static nx_request_t* nx_post(nx_comm_t* c, void* data, size_t size, int tag) {
  nx_request_t* r = &c->reqs[c->posted % NX_MAX_REQUESTS];
  if (r->state != NX_REQ_FREE) return NULL;
  r->state = NX_REQ_POSTED;
  r->data = data;
  r->size = size;
  r->capacity = size;
  r->tag = tag;
  r->moved = 0;
  r->hdr.size = size;
  r->hdr.tag = tag;
  r->hdr.magic = NX_MAGIC;
  c->posted++;
  return r;
}

ncclResult_t net_example_isend(void* sendComm, void* data, size_t size, int tag, void* mhandle, void* phandle,
                               void** request) {
  (void)mhandle, (void)phandle; /* no registration; no profiler events of our own */
  nx_comm_t* c = sendComm;
  if (!c || !c->isSend || !request || (size && !data)) return ncclInvalidArgument;
  if (c->error != ncclSuccess) return c->error;
  *request = nx_post(c, data, size, tag);
  return ncclSuccess;
}

ncclResult_t net_example_irecv(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                               void** phandles, void** request) {
  (void)mhandles, (void)phandles;
  nx_comm_t* c = recvComm;
  if (!c || c->isSend || !request || !data || !sizes || !tags) return ncclInvalidArgument;
  if (n != 1) {
    NX_WARN("NET/example: irecv of %d buffers: this plugin takes one (maxRecvs 1)", n);
    return ncclInvalidArgument;
  }
  if (sizes[0] && !data[0]) return ncclInvalidArgument;
  if (c->error != ncclSuccess) return c->error;
  *request = nx_post(c, data[0], sizes[0], tags[0]);
  return ncclSuccess;
}

/* Host memory needs no flush: a NULL request means nothing to wait for. */
ncclResult_t net_example_iflush(void* recvComm, int n, void** data, int* sizes, void** mhandles, void** request) {
  (void)recvComm, (void)n, (void)data, (void)sizes, (void)mhandles;
  if (!request) return ncclInvalidArgument;
  *request = NULL;
  return ncclSuccess;
}

ncclResult_t net_example_test(void* request, int* done, int* sizes) {
  nx_request_t* r = request;
  if (!r || !done || r->state == NX_REQ_FREE) return ncclInvalidArgument;
  if (r->state == NX_REQ_POSTED) {
    ncclResult_t res = nx_progress(r->comm);
    if (res != ncclSuccess) return res;
    if (r->state == NX_REQ_POSTED) {
      *done = 0;
      return ncclSuccess;
    }
  }
  if (sizes) sizes[0] = (int)r->size; /* a receive: the bytes that came */
  r->state = NX_REQ_FREE;               /* the request is the caller's no more */
  *done = 1;
  return ncclSuccess;
}
