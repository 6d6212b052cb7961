/* Connection setup over the plugin's own TCP socket (address in the handle):
 *   connector: connect, send its frame (QPNs, FIFO address and rkey),
 *              receive the receiver's, bring its QPs to RTS, send "ready";
 *   acceptor:  accept, receive the frame, create and connect its QPs, send
 *              its frame (QPNs, sizes FIFO), wait for "ready" (so it never
 *              writes into QPs the connector has not brought up yet).
 * Every call does what it can without blocking and returns a NULL comm
 * until done; the connector's progress lives in the handle (stage). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net_ib.h"

enum { ST_START = 0, ST_WAIT, ST_SEND, ST_RECV, ST_READY };

typedef struct {
  int step;
  int fd;
  net_ib_comm_t* comm;
  uint8_t out[IB_META_BYTES];
  uint8_t in[IB_META_BYTES];
  uint8_t ready;
  size_t off;
} net_ib_shake_t;

typedef struct {
  int type; /* IB_COMM_LISTEN: first, as in comms */
  net_ib_dev_t* dev;
  int lfd;
  int trafficClass;
  net_ib_shake_t acc;
} net_ib_listen_t;

typedef struct {
  net_ib_dev_t* dev;
  int trafficClass;
  net_ib_shake_t sh;
} net_ib_stage_t;

/* Logs why a handshake step failed; -1. */
static int net_ib_shake_fail(const char* why) {
  IB_WARN("%s", why);
  return -1;
}

static int net_ib_tc(void* ctx) {
  net_ib_ctx_t* c = ctx;
  return c && c->trafficClass != NCCL_NET_TRAFFIC_CLASS_UNDEF ? c->trafficClass : (int)net_ib_param_NCCL_IB_TC();
}

static void net_ib_shake_reset(net_ib_shake_t* s) {
  if (s->comm) net_ib_comm_destroy(s->comm);
  if (s->fd >= 0) close(s->fd);
  memset(s, 0, sizeof(*s));
  s->fd = -1;
}

ncclResult_t net_ib_listen(void* ctx, int dev, void* handle, void** listenComm) {
  net_ib_dev_t* d = net_ib_dev_get(dev);
  if (!d || !handle || !listenComm) {
    IB_WARN("listen: device %d out of range (%d devices) or NULL argument", dev, net_ib_dev_count());
    return ncclInvalidArgument;
  }
  net_ib_addr_t at, bound;
  if (net_ib_sock_ifaddr(&at) != 0) {
    IB_WARN("listen: no interface address for the handshake socket (NCCL_SOCKET_IFNAME)");
    return ncclSystemError;
  }
  net_ib_listen_t* l = calloc(1, sizeof(*l));
  if (!l) return ncclSystemError;
  if (net_ib_sock_listen(&at, &l->lfd, &bound) != 0) {
    IB_WARN("listen: the handshake socket could not listen");
    free(l);
    return ncclSystemError;
  }
  l->type = IB_COMM_LISTEN;
  l->dev = d;
  l->trafficClass = net_ib_tc(ctx);
  l->acc.fd = -1;
  net_ib_handle_t* h = handle;
  memset(h, 0, NCCL_NET_HANDLE_MAXSIZE);
  h->magic = NET_IB_MAGIC;
  h->addr = bound;
  h->guid = d->guid;
  *listenComm = l;
  return ncclSuccess;
}

/* One step of the connector: 1 done, 0 not yet, -1 failed. */
static int net_ib_connect_step(net_ib_stage_t* s, const net_ib_handle_t* h) {
  net_ib_shake_t* sh = &s->sh;
  net_ib_meta_t m;
  int r;
  for (;;) switch (sh->step) {
      case ST_START:
        if (net_ib_sock_connect_start(&h->addr, &sh->fd) != 0) return net_ib_shake_fail("connect: socket to the listener failed");
        sh->step = ST_WAIT;
        break;
      case ST_WAIT:
        if ((r = net_ib_sock_connect_done(sh->fd)) <= 0) return r < 0 ? net_ib_shake_fail("connect: the listener refused") : 0;
        r = (int)net_ib_param_NCCL_IB_QPS_PER_CONNECTION();
        if (r < 1 || r > IB_MAX_QPS) return net_ib_shake_fail("connect: NCCL_IB_QPS_PER_CONNECTION out of 1..16");
        if (net_ib_comm_create(s->dev, IB_COMM_SEND, r, &sh->comm) != ncclSuccess) return -1;
        net_ib_comm_meta(sh->comm, &m);
        if (net_ib_meta_encode(&m, sh->out) != 0) return net_ib_shake_fail("connect: cannot encode our handshake frame");
        sh->step = ST_SEND, sh->off = 0;
        break;
      case ST_SEND:
        if ((r = net_ib_sock_xfer(sh->fd, sh->out, IB_META_BYTES, &sh->off, 1)) <= 0) return r;
        sh->step = ST_RECV, sh->off = 0;
        break;
      case ST_RECV:
        if ((r = net_ib_sock_xfer(sh->fd, sh->in, IB_META_BYTES, &sh->off, 0)) <= 0)
          return r < 0 ? net_ib_shake_fail("connect: the listener closed during the handshake") : 0;
        if (net_ib_meta_decode(sh->in, IB_META_BYTES, IB_META_RECEIVER, &m) != 0)
          return net_ib_shake_fail("connect: the listener's handshake frame is malformed");
        if (net_ib_comm_connect_qps(sh->comm, &m, s->trafficClass) != ncclSuccess) return -1;
        sh->step = ST_READY, sh->off = 0, sh->ready = 1;
        break;
      case ST_READY:
        return net_ib_sock_xfer(sh->fd, &sh->ready, 1, &sh->off, 1);
      default:
        return -1;
    }
}

ncclResult_t net_ib_connect(void* ctx, int dev, void* handle, void** sendComm) {
  net_ib_handle_t* h = handle;
  if (!h || !sendComm || h->magic != NET_IB_MAGIC || !net_ib_dev_get(dev)) {
    IB_WARN("connect: bad arguments (device %d of %d, handle magic 0x%x)", dev, net_ib_dev_count(), h ? h->magic : 0);
    return ncclInvalidArgument;
  }
  *sendComm = NULL;
  net_ib_stage_t* s = h->stage;
  if (!s) {
    if (!(s = calloc(1, sizeof(*s)))) return ncclSystemError;
    s->dev = net_ib_dev_get(dev);
    s->trafficClass = net_ib_tc(ctx);
    s->sh.fd = -1;
    h->stage = s;
  }
  int r = net_ib_connect_step(s, h);
  if (r == 0) return ncclSuccess;
  if (r > 0) {
    net_ib_comm_t* c = s->sh.comm;
    c->fd = s->sh.fd; /* kept: EOF tells us the receiver is gone */
    s->sh.comm = NULL, s->sh.fd = -1;
    *sendComm = c;
  }
  net_ib_shake_reset(&s->sh);
  free(s);
  h->stage = NULL;
  return r > 0 ? ncclSuccess : ncclRemoteError;
}

/* One step of the acceptor: 1 done, 0 not yet, -1 failed. */
static int net_ib_accept_step(net_ib_listen_t* l) {
  net_ib_shake_t* a = &l->acc;
  net_ib_meta_t m;
  int r;
  for (;;) switch (a->step) {
      case ST_START:
        if ((r = net_ib_sock_accept(l->lfd, &a->fd)) <= 0) return r < 0 ? net_ib_shake_fail("accept failed") : 0;
        a->step = ST_RECV, a->off = 0;
        break;
      case ST_RECV:
        if ((r = net_ib_sock_xfer(a->fd, a->in, IB_META_BYTES, &a->off, 0)) <= 0) {
          if (r == 0) return 0;
          IB_INFO(NCCL_NET, "accept: a connection closed before its handshake: dropped");
          net_ib_shake_reset(a);
          break;
        }
        if (net_ib_meta_decode(a->in, IB_META_BYTES, IB_META_SENDER, &m) != 0) {
          IB_INFO(NCCL_NET, "accept: a connection sent a malformed handshake frame: dropped");
          net_ib_shake_reset(a); /* a stray client must not break the listen */
          break;
        }
        if (net_ib_comm_create(l->dev, IB_COMM_RECV, m.nqps, &a->comm) != ncclSuccess) return -1;
        if (net_ib_comm_connect_qps(a->comm, &m, l->trafficClass) != ncclSuccess) return -1;
        net_ib_comm_meta(a->comm, &m);
        if (net_ib_meta_encode(&m, a->out) != 0) return -1;
        a->step = ST_SEND, a->off = 0;
        break;
      case ST_SEND:
        if ((r = net_ib_sock_xfer(a->fd, a->out, IB_META_BYTES, &a->off, 1)) <= 0)
          return r < 0 ? net_ib_shake_fail("accept: the connector closed during the handshake") : 0;
        a->step = ST_READY, a->off = 0;
        break;
      case ST_READY:
        if ((r = net_ib_sock_xfer(a->fd, &a->ready, 1, &a->off, 0)) <= 0)
          return r < 0 ? net_ib_shake_fail("accept: the connector closed before it was ready") : 0;
        return a->ready == 1 ? 1 : -1;
      default:
        return -1;
    }
}

ncclResult_t net_ib_accept(void* listenComm, void** recvComm) {
  net_ib_listen_t* l = listenComm;
  if (!l || l->type != IB_COMM_LISTEN || !recvComm) {
    IB_WARN("accept: not a listen comm, or NULL recvComm");
    return ncclInvalidArgument;
  }
  *recvComm = NULL;
  int r = net_ib_accept_step(l);
  if (r == 0) return ncclSuccess;
  if (r > 0) {
    net_ib_comm_t* c = l->acc.comm;
    c->fd = l->acc.fd;
    l->acc.comm = NULL, l->acc.fd = -1;
    *recvComm = c;
  }
  net_ib_shake_reset(&l->acc);
  return r > 0 ? ncclSuccess : ncclRemoteError;
}

ncclResult_t net_ib_close_listen(void* listenComm) {
  net_ib_listen_t* l = listenComm;
  if (!l) return ncclSuccess;
  if (l->type != IB_COMM_LISTEN) {
    IB_WARN("closeListen: not a listen comm");
    return ncclInvalidArgument;
  }
  net_ib_shake_reset(&l->acc);
  close(l->lfd);
  free(l);
  return ncclSuccess;
}

/* Destroying the QPs drops whatever was still posted: any state will do. */
ncclResult_t net_ib_close_comm(void* comm, int type) {
  net_ib_comm_t* c = comm;
  if (!c) return ncclSuccess;
  if (c->type != type) {
    IB_WARN("close: not a %s comm", type == IB_COMM_SEND ? "send" : "recv");
    return ncclInvalidArgument;
  }
  net_ib_comm_destroy(c);
  return ncclSuccess;
}
