/* Connection setup over the RDM endpoint itself. listen posts a receive for
 * connection requests (REQ) tagged with the listen id and writes our address
 * and that id into the handle. connect sends a REQ carrying its address and
 * send-comm id and waits for the ACK that carries the receiver's comm id;
 * accept answers each REQ with an ACK. All calls are non-blocking: they make
 * progress and return a NULL comm until done. The connector's state between
 * calls lives in the handle (stage), as the ABI lets it. */
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include "net_ofi.h"

typedef struct {
  net_ofi_obj_t hdr; /* OFI_OBJ_LISTEN */
  uint32_t id;
  int armed;         /* REQ receive posted and not yet consumed */
  net_ofi_op_t reqOp;
  net_ofi_ctrl_msg_t msg;
  net_ofi_mr_t* mr;
  net_ofi_comm_t* pending; /* accepted, its ACK not posted yet */
} net_ofi_listen_t;

typedef struct {
  net_ofi_obj_t hdr; /* OFI_OBJ_STAGE */
  net_ofi_comm_t* comm;
  uint32_t listenId;
  int reqPosted, ackPosted;
  net_ofi_op_t reqOp, ackOp;
  net_ofi_ctrl_msg_t msgs[2]; /* [0] our REQ, [1] the ACK */
  net_ofi_mr_t* mr;
} net_ofi_stage_t;

void net_ofi_obj_extra_free(net_ofi_obj_t* o) {
  if (o->type == OFI_OBJ_LISTEN) {
    net_ofi_listen_t* l = (net_ofi_listen_t*)o;
    net_ofi_mr_deregister(o->dev, l->mr);
  } else if (o->type == OFI_OBJ_STAGE) {
    net_ofi_stage_t* s = (net_ofi_stage_t*)o;
    net_ofi_mr_deregister(o->dev, s->mr);
    if (s->comm) net_ofi_obj_free(&s->comm->hdr); /* never posted anything */
  }
}

static int net_ofi_ctrl_valid(const net_ofi_op_t* op, const net_ofi_ctrl_msg_t* m, uint32_t type) {
  return op->len == sizeof(*m) && m->magic == OFI_MAGIC && m->type == type && m->addrLen <= OFI_ADDR_MAX;
}

static ncclResult_t net_ofi_listen_arm(net_ofi_listen_t* l) {
  net_ofi_dev_t* d = l->hdr.dev;
  int rc = (int)fi_trecv(d->ep, &l->msg, sizeof(l->msg), l->mr ? l->mr->desc : NULL, FI_ADDR_UNSPEC,
                         net_ofi_ctrl_tag(d->nic, OFI_CTRL_REQ, l->id), 0, &l->reqOp.fctx);
  if (rc == -FI_EAGAIN) return ncclSuccess; /* armed on a later accept */
  if (rc != 0) {
    OFI_WARN("%s: posting the connection-request receive failed: %s", d->nic->name, fi_strerror(-rc));
    return ncclSystemError;
  }
  net_ofi_op_posted(&l->reqOp);
  l->armed = 1;
  return ncclSuccess;
}

ncclResult_t net_ofi_listen(void* ctx, int dev, void* handle, void** listenComm) {
  (void)ctx;
  if (!handle || !listenComm) {
    OFI_WARN("listen: NULL handle or listenComm");
    return ncclInvalidArgument;
  }
  net_ofi_dev_t* d;
  ncclResult_t res = net_ofi_dev_acquire(dev, &d);
  if (res != ncclSuccess) return res;
  net_ofi_listen_t* l = calloc(1, sizeof(*l));
  if (!l) {
    OFI_WARN("listen: out of memory");
    net_ofi_dev_release(d);
    return ncclSystemError;
  }
  l->hdr.type = OFI_OBJ_LISTEN;
  l->hdr.dev = d;
  l->reqOp.kind = OFI_OP_CTRL;
  l->reqOp.obj = &l->hdr;
  pthread_mutex_lock(&d->lock);
  l->id = net_ofi_dev_new_id(d);
  res = net_ofi_mr_register(d, &l->msg, sizeof(l->msg), NCCL_PTR_HOST, &l->mr);
  if (res == ncclSuccess) res = net_ofi_listen_arm(l);
  if (res != ncclSuccess) {
    net_ofi_mr_deregister(d, l->mr);
    pthread_mutex_unlock(&d->lock);
    free(l);
    net_ofi_dev_release(d);
    return res;
  }
  pthread_mutex_unlock(&d->lock);
  net_ofi_handle_t* h = handle;
  memset(h, 0, NCCL_NET_HANDLE_MAXSIZE);
  h->magic = OFI_MAGIC;
  h->listenId = l->id;
  h->addrLen = (uint32_t)d->addrLen;
  memcpy(h->addr, d->addr, d->addrLen);
  *listenComm = l;
  return ncclSuccess;
}

/* A REQ arrived: a recv comm for its sender, whose ACK goes out next. */
static ncclResult_t net_ofi_accept_request(net_ofi_listen_t* l) {
  net_ofi_dev_t* d = l->hdr.dev;
  l->armed = 0;
  ncclResult_t res = ncclSuccess;
  if (l->reqOp.err) {
    OFI_WARN("%s: connection-request receive failed: %s", d->nic->name, fi_strerror(l->reqOp.err));
    res = net_ofi_result(l->reqOp.err);
  } else if (!net_ofi_ctrl_valid(&l->reqOp, &l->msg, OFI_CTRL_REQ)) {
    OFI_WARN("%s: malformed connection request (%zu bytes, magic 0x%x): dropped", d->nic->name, l->reqOp.len,
             l->msg.magic);
    res = ncclSystemError;
  } else {
    fi_addr_t peer;
    if (fi_av_insert(d->av, l->msg.addr, 1, &peer, 0, NULL) != 1) {
      OFI_WARN("%s: inserting the connector's address failed", d->nic->name);
      res = ncclSystemError;
    }
    net_ofi_comm_t* c = NULL;
    if (res == ncclSuccess) res = net_ofi_comm_create(d, OFI_OBJ_RECV, peer, &c);
    if (res == ncclSuccess) {
      c->remoteId = l->msg.id;
      c->msg = (net_ofi_ctrl_msg_t){.magic = OFI_MAGIC, .type = OFI_CTRL_ACK, .id = c->id};
      res = net_ofi_mr_register(d, &c->msg, sizeof(c->msg), NCCL_PTR_HOST, &c->msgMr);
      if (res != ncclSuccess) net_ofi_obj_free(&c->hdr);
    }
    if (res == ncclSuccess) {
      l->pending = c;
      net_ofi_dev_acquire_ref(d);
    }
  }
  ncclResult_t armed = net_ofi_listen_arm(l); /* ready for the next connector either way */
  return res != ncclSuccess ? res : armed;
}

ncclResult_t net_ofi_accept(void* listenComm, void** recvComm) {
  net_ofi_listen_t* l = listenComm;
  if (!l || l->hdr.type != OFI_OBJ_LISTEN || !recvComm) {
    OFI_WARN("accept: not a listen comm, or NULL recvComm");
    return ncclInvalidArgument;
  }
  net_ofi_dev_t* d = l->hdr.dev;
  *recvComm = NULL;
  pthread_mutex_lock(&d->lock);
  ncclResult_t res = net_ofi_dev_progress(d);
  if (res == ncclSuccess && !l->pending) {
    if (!l->armed) res = net_ofi_listen_arm(l);
    else if (!l->reqOp.inFlight) res = net_ofi_accept_request(l);
  }
  net_ofi_comm_t* c = l->pending;
  if (res == ncclSuccess && c) {
    int rc = (int)fi_tsend(d->ep, &c->msg, sizeof(c->msg), c->msgMr ? c->msgMr->desc : NULL, c->peer,
                           net_ofi_ctrl_tag(d->nic, OFI_CTRL_ACK, c->remoteId), &c->ctrl.fctx);
    if (rc == 0) {
      net_ofi_op_posted(&c->ctrl);
      l->pending = NULL;
      *recvComm = c;
    } else if (rc != -FI_EAGAIN) {
      OFI_WARN("%s: sending the connection ACK failed: %s", d->nic->name, fi_strerror(-rc));
      l->pending = NULL;
      net_ofi_obj_free(&c->hdr);
      net_ofi_dev_release(d);
      res = net_ofi_result(-rc);
    }
  }
  pthread_mutex_unlock(&d->lock);
  return res;
}

static ncclResult_t net_ofi_stage_create(net_ofi_handle_t* h, int dev, net_ofi_stage_t** out) {
  net_ofi_dev_t* d;
  ncclResult_t res = net_ofi_dev_acquire(dev, &d);
  if (res != ncclSuccess) return res;
  net_ofi_stage_t* s = calloc(1, sizeof(*s));
  if (!s) {
    OFI_WARN("connect: out of memory");
    net_ofi_dev_release(d);
    return ncclSystemError;
  }
  s->hdr.type = OFI_OBJ_STAGE;
  s->hdr.dev = d;
  s->listenId = h->listenId;
  s->reqOp.kind = s->ackOp.kind = OFI_OP_CTRL;
  s->reqOp.obj = s->ackOp.obj = &s->hdr;
  pthread_mutex_lock(&d->lock);
  fi_addr_t peer;
  if (fi_av_insert(d->av, h->addr, 1, &peer, 0, NULL) != 1) {
    OFI_WARN("%s: connect: inserting the listener's address failed", d->nic->name);
    res = ncclSystemError;
  }
  if (res == ncclSuccess) res = net_ofi_comm_create(d, OFI_OBJ_SEND, peer, &s->comm);
  if (res == ncclSuccess) res = net_ofi_mr_register(d, s->msgs, sizeof(s->msgs), NCCL_PTR_HOST, &s->mr);
  if (res != ncclSuccess) {
    net_ofi_obj_free(&s->hdr);
    pthread_mutex_unlock(&d->lock);
    net_ofi_dev_release(d);
    return res;
  }
  net_ofi_ctrl_msg_t* req = &s->msgs[0];
  req->magic = OFI_MAGIC;
  req->type = OFI_CTRL_REQ;
  req->id = s->comm->id;
  req->addrLen = (uint32_t)d->addrLen;
  memcpy(req->addr, d->addr, d->addrLen);
  pthread_mutex_unlock(&d->lock);
  *out = s;
  return ncclSuccess;
}

/* One step of the connector; *sendComm stays NULL until the ACK is in. */
static ncclResult_t net_ofi_stage_step(net_ofi_stage_t* s, net_ofi_comm_t** done) {
  net_ofi_dev_t* d = s->hdr.dev;
  net_ofi_comm_t* c = s->comm;
  void* desc = s->mr ? s->mr->desc : NULL;
  ncclResult_t res = net_ofi_dev_progress(d);
  if (res != ncclSuccess) return res;
  if (!s->ackPosted) {
    int rc = (int)fi_trecv(d->ep, &s->msgs[1], sizeof(s->msgs[1]), desc, FI_ADDR_UNSPEC,
                           net_ofi_ctrl_tag(d->nic, OFI_CTRL_ACK, c->id), 0, &s->ackOp.fctx);
    if (rc == -FI_EAGAIN) return ncclSuccess;
    if (rc != 0) {
      OFI_WARN("%s: connect: posting the ACK receive failed: %s", d->nic->name, fi_strerror(-rc));
      return ncclSystemError;
    }
    net_ofi_op_posted(&s->ackOp);
    s->ackPosted = 1;
  }
  if (!s->reqPosted) {
    int rc = (int)fi_tsend(d->ep, &s->msgs[0], sizeof(s->msgs[0]), desc, c->peer,
                           net_ofi_ctrl_tag(d->nic, OFI_CTRL_REQ, s->listenId), &s->reqOp.fctx);
    if (rc == -FI_EAGAIN) return ncclSuccess;
    if (rc != 0) {
      OFI_WARN("%s: connect: sending the connection request failed: %s", d->nic->name, fi_strerror(-rc));
      return net_ofi_result(-rc);
    }
    net_ofi_op_posted(&s->reqOp);
    s->reqPosted = 1;
  }
  if (!s->reqOp.inFlight && s->reqOp.err) {
    OFI_WARN("%s: connect: the connection request failed: %s", d->nic->name, fi_strerror(s->reqOp.err));
    return net_ofi_result(s->reqOp.err);
  }
  if (s->ackOp.inFlight || s->reqOp.inFlight) return ncclSuccess;
  if (s->ackOp.err || !net_ofi_ctrl_valid(&s->ackOp, &s->msgs[1], OFI_CTRL_ACK)) {
    OFI_WARN("%s: connect: bad connection ACK (%s)", d->nic->name, s->ackOp.err ? fi_strerror(s->ackOp.err) : "malformed");
    return s->ackOp.err ? net_ofi_result(s->ackOp.err) : ncclSystemError;
  }
  c->remoteId = s->msgs[1].id;
  *done = c;
  return ncclSuccess;
}

ncclResult_t net_ofi_connect(void* ctx, int dev, void* handle, void** sendComm) {
  (void)ctx;
  net_ofi_handle_t* h = handle;
  if (!h || !sendComm) {
    OFI_WARN("connect: NULL handle or sendComm");
    return ncclInvalidArgument;
  }
  if (h->magic != OFI_MAGIC || h->addrLen == 0 || h->addrLen > OFI_ADDR_MAX) {
    OFI_WARN("connect: not a net-ofi handle (magic 0x%x, address length %u)", h->magic, h->addrLen);
    return ncclInvalidArgument;
  }
  *sendComm = NULL;
  net_ofi_stage_t* s = h->stage;
  if (!s) {
    ncclResult_t res = net_ofi_stage_create(h, dev, &s);
    if (res != ncclSuccess) return res;
    h->stage = s;
  }
  net_ofi_dev_t* d = s->hdr.dev;
  net_ofi_comm_t* c = NULL;
  pthread_mutex_lock(&d->lock);
  ncclResult_t res = net_ofi_stage_step(s, &c);
  if (c) {
    s->comm = NULL; /* takes over the stage's device reference */
    net_ofi_obj_free(&s->hdr);
    h->stage = NULL;
    *sendComm = c;
  } else if (res != ncclSuccess) {
    net_ofi_op_t* ops[2] = {&s->reqOp, &s->ackOp};
    net_ofi_obj_close(&s->hdr, ops, 2);
    h->stage = NULL;
  }
  pthread_mutex_unlock(&d->lock);
  if (!c && res != ncclSuccess) net_ofi_dev_release(d);
  return res;
}

ncclResult_t net_ofi_close_listen(void* listenComm) {
  net_ofi_listen_t* l = listenComm;
  if (!l) return ncclSuccess;
  if (l->hdr.type != OFI_OBJ_LISTEN) {
    OFI_WARN("closeListen: not a listen comm");
    return ncclInvalidArgument;
  }
  net_ofi_dev_t* d = l->hdr.dev;
  net_ofi_op_t* ops[1] = {&l->reqOp};
  pthread_mutex_lock(&d->lock);
  net_ofi_comm_t* pending = l->pending; /* accepted but never handed out: nothing posted */
  if (pending) net_ofi_obj_free(&pending->hdr);
  net_ofi_obj_close(&l->hdr, ops, 1);
  pthread_mutex_unlock(&d->lock);
  if (pending) net_ofi_dev_release(d);
  net_ofi_dev_release(d);
  return ncclSuccess;
}
