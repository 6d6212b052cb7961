/* The NCCL net v11 table: every call goes to the wrapped plugin, with its
 * connections and requests wrapped so a fault can act on them. */
#include <stdlib.h>

#include "net_faulty.h"

#define FAULTY_INNER_CALL(call)              \
  do {                                       \
    ncclResult_t r_ = (call);                \
    if (r_ != ncclSuccess) return r_;        \
  } while (0)

static ncclResult_t faulty_init(void** ctx, uint64_t commId, ncclNetCommConfig_v11_t* config,
                                ncclDebugLogger_t logFunction, ncclProfilerCallback_t profFunction) {
  faulty_config_read();
  FAULTY_INNER_CALL(faulty_inner_load(faulty_config.plugin));
  return faulty_inner->init(ctx, commId, config, logFunction, profFunction);
}

static ncclResult_t faulty_devices(int* ndev) { return faulty_inner->devices(ndev); }

static ncclResult_t faulty_get_properties(int dev, ncclNetProperties_v11_t* props) {
  FAULTY_INNER_CALL(faulty_inner->getProperties(dev, props));
  if (props->maxRecvs > FAULTY_MAX_RECVS) props->maxRecvs = FAULTY_MAX_RECVS;
  return ncclSuccess;
}

static ncclResult_t faulty_listen(void* ctx, int dev, void* handle, void** listenComm) {
  return faulty_inner->listen(ctx, dev, handle, listenComm);
}

static ncclResult_t faulty_wrap_comm(void* inner, int isSend, void** out) {
  *out = NULL;
  if (!inner) return ncclSuccess; /* not connected yet: the caller retries */
  faulty_comm_t* c = calloc(1, sizeof(*c));
  if (!c) {
    if (isSend) faulty_inner->closeSend(inner);
    else faulty_inner->closeRecv(inner);
    faulty_log(NCCL_LOG_WARN, "out of memory wrapping a connection");
    return ncclSystemError;
  }
  c->inner = inner;
  c->isSend = isSend;
  *out = c;
  return ncclSuccess;
}

static ncclResult_t faulty_connect(void* ctx, int dev, void* handle, void** sendComm,
                                   ncclNetDeviceHandle_v11_t** sendDevComm) {
  void* inner = NULL;
  FAULTY_INNER_CALL(faulty_inner->connect(ctx, dev, handle, &inner, sendDevComm));
  return faulty_wrap_comm(inner, 1, sendComm);
}

static ncclResult_t faulty_accept(void* listenComm, void** recvComm, ncclNetDeviceHandle_v11_t** recvDevComm) {
  void* inner = NULL;
  FAULTY_INNER_CALL(faulty_inner->accept(listenComm, &inner, recvDevComm));
  return faulty_wrap_comm(inner, 0, recvComm);
}

/* The inner connection, or NULL (and a logged error) once a fault closed it. */
static void* faulty_inner_comm(void* comm) {
  faulty_comm_t* c = comm;
  if (__atomic_load_n(&c->closed, __ATOMIC_ACQUIRE)) {
    faulty_log(NCCL_LOG_WARN, "call on a connection closed by an injected fault");
    return NULL;
  }
  return c->inner;
}

static ncclResult_t faulty_reg_mr(void* comm, void* data, size_t size, int type, void** mhandle) {
  void* inner = faulty_inner_comm(comm);
  return inner ? faulty_inner->regMr(inner, data, size, type, mhandle) : ncclRemoteError;
}

static ncclResult_t faulty_reg_mr_dmabuf(void* comm, void* data, size_t size, int type, uint64_t offset, int fd,
                                         void** mhandle) {
  void* inner = faulty_inner_comm(comm);
  if (!inner) return ncclRemoteError;
  if (!faulty_inner->regMrDmaBuf) return ncclInvalidUsage;
  return faulty_inner->regMrDmaBuf(inner, data, size, type, offset, fd, mhandle);
}

static ncclResult_t faulty_dereg_mr(void* comm, void* mhandle) {
  faulty_comm_t* c = comm;
  return c->closed ? ncclSuccess : faulty_inner->deregMr(c->inner, mhandle); /* closing freed them */
}

static ncclResult_t faulty_wrap_req(faulty_comm_t* c, void* inner, int faulty, int n, void** request) {
  static int alternate; /* reorder holds every other faulty request */
  *request = NULL;
  if (!inner) return ncclSuccess; /* the inner plugin could not post it yet */
  faulty_req_t* r = calloc(1, sizeof(*r));
  if (!r) {
    faulty_log(NCCL_LOG_WARN, "out of memory wrapping a request");
    return ncclSystemError;
  }
  r->inner = inner;
  r->comm = c;
  r->faulty = faulty;
  r->postNs = faulty_now_ns();
  r->n = n;
  if (faulty && faulty_config.mode == FAULTY_REORDER && __atomic_fetch_add(&alternate, 1, __ATOMIC_RELAXED) % 2 == 0)
    r->held = FAULTY_REORDER_HOLD;
  *request = r;
  return ncclSuccess;
}

/* error and close act on the call itself. */
static ncclResult_t faulty_post_fault(faulty_op_t op, int64_t nth, faulty_comm_t* c) {
  if (!faulty_fires(op, nth)) return ncclSuccess;
  const char* name = op == FAULTY_OP_ISEND ? "isend" : "irecv";
  if (faulty_config.mode == FAULTY_ERROR) {
    faulty_log(NCCL_LOG_WARN, "injected fault: %s #%lld returns an error", name, (long long)nth);
    return ncclSystemError;
  }
  if (faulty_config.mode == FAULTY_CLOSE) {
    faulty_comm_close(c, name);
    return ncclRemoteError;
  }
  return ncclSuccess;
}

static ncclResult_t faulty_isend(void* sendComm, void* data, size_t size, int tag, void* mhandle, void* phandle,
                                 void** request) {
  faulty_comm_t* c = sendComm;
  int64_t nth = faulty_tick(FAULTY_OP_ISEND);
  FAULTY_INNER_CALL(faulty_post_fault(FAULTY_OP_ISEND, nth, c));
  void* inner = faulty_inner_comm(c);
  if (!inner) return ncclRemoteError;
  void* req = NULL;
  FAULTY_INNER_CALL(faulty_inner->isend(inner, data, size, tag, mhandle, phandle, &req));
  return faulty_wrap_req(c, req, faulty_from(FAULTY_OP_ISEND, nth), 1, request);
}

static ncclResult_t faulty_irecv(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                                 void** phandles, void** request) {
  faulty_comm_t* c = recvComm;
  if (n > FAULTY_MAX_RECVS) return ncclInvalidArgument;
  int64_t nth = faulty_tick(FAULTY_OP_IRECV);
  FAULTY_INNER_CALL(faulty_post_fault(FAULTY_OP_IRECV, nth, c));
  void* inner = faulty_inner_comm(c);
  if (!inner) return ncclRemoteError;
  void* req = NULL;
  FAULTY_INNER_CALL(faulty_inner->irecv(inner, n, data, sizes, tags, mhandles, phandles, &req));
  return faulty_wrap_req(c, req, faulty_from(FAULTY_OP_IRECV, nth), n, request);
}

static ncclResult_t faulty_iflush(void* recvComm, int n, void** data, int* sizes, void** mhandles, void** request) {
  faulty_comm_t* c = recvComm;
  void* inner = faulty_inner_comm(c);
  if (!inner) return ncclRemoteError;
  void* req = NULL;
  FAULTY_INNER_CALL(faulty_inner->iflush(inner, n, data, sizes, mhandles, &req));
  return faulty_wrap_req(c, req, 0, n, request);
}

/* An error ends the request: the caller does not test it again. */
static ncclResult_t faulty_test_fail(faulty_req_t* r, ncclResult_t res) {
  free(r);
  return res;
}

static ncclResult_t faulty_test(void* request, int* done, int* sizes) {
  faulty_req_t* r = request;
  int64_t nth = faulty_tick(FAULTY_OP_TEST);
  *done = 0;
  if (faulty_fires(FAULTY_OP_TEST, nth) && faulty_config.mode == FAULTY_ERROR) {
    faulty_log(NCCL_LOG_WARN, "injected fault: test #%lld returns an error", (long long)nth);
    return faulty_test_fail(r, ncclSystemError);
  }
  if (faulty_fires(FAULTY_OP_TEST, nth) && faulty_config.mode == FAULTY_CLOSE) faulty_comm_close(r->comm, "test");
  if (__atomic_load_n(&r->comm->closed, __ATOMIC_ACQUIRE)) return faulty_test_fail(r, ncclRemoteError);
  if (faulty_from(FAULTY_OP_TEST, nth)) r->faulty = 1; /* test counts: requests tested from then on */
  if (!r->innerDone) {
    ncclResult_t res = faulty_inner->test(r->inner, &r->innerDone, r->sizes);
    if (res != ncclSuccess) return faulty_test_fail(r, res);
    if (!r->innerDone) return ncclSuccess;
  }
  if (!faulty_release(r)) return ncclSuccess;
  *done = 1;
  if (sizes)
    for (int i = 0; i < r->n; i++) sizes[i] = r->sizes[i];
  free(r);
  return ncclSuccess;
}

static ncclResult_t faulty_close(void* comm) {
  faulty_comm_t* c = comm;
  ncclResult_t res = ncclSuccess;
  if (!__atomic_load_n(&c->closed, __ATOMIC_ACQUIRE))
    res = c->isSend ? faulty_inner->closeSend(c->inner) : faulty_inner->closeRecv(c->inner);
  free(c);
  return res;
}

static ncclResult_t faulty_close_listen(void* listenComm) { return faulty_inner->closeListen(listenComm); }

static ncclResult_t faulty_get_device_mr(void* comm, void* mhandle, void** dptr_mhandle) {
  void* inner = faulty_inner_comm(comm);
  if (!inner) return ncclRemoteError;
  if (!faulty_inner->getDeviceMr) return ncclInvalidUsage;
  return faulty_inner->getDeviceMr(inner, mhandle, dptr_mhandle);
}

static ncclResult_t faulty_irecv_consumed(void* recvComm, int n, void* request) {
  void* inner = faulty_inner_comm(recvComm);
  if (!inner) return ncclRemoteError;
  return faulty_inner->irecvConsumed ? faulty_inner->irecvConsumed(inner, n, request) : ncclSuccess;
}

static ncclResult_t faulty_make_vdevice(int* d, ncclNetVDeviceProps_v11_t* props) {
  return faulty_inner->makeVDevice ? faulty_inner->makeVDevice(d, props) : ncclInvalidUsage;
}

static ncclResult_t faulty_finalize(void* ctx) { return faulty_inner->finalize ? faulty_inner->finalize(ctx) : ncclSuccess; }

static ncclResult_t faulty_set_net_attr(void* ctx, ncclNetAttr_v11_t* attr) {
  return faulty_inner->setNetAttr ? faulty_inner->setNetAttr(ctx, attr) : ncclSuccess;
}

__attribute__((visibility("default"))) const ncclNet_v11_t ncclNetPlugin_v11 = {
    "faulty",          faulty_init,           faulty_devices,       faulty_get_properties, faulty_listen,
    faulty_connect,    faulty_accept,         faulty_reg_mr,        faulty_reg_mr_dmabuf,  faulty_dereg_mr,
    faulty_isend,      faulty_irecv,          faulty_iflush,        faulty_test,           faulty_close,
    faulty_close,      faulty_close_listen,   faulty_get_device_mr, faulty_irecv_consumed, faulty_make_vdevice,
    faulty_finalize,   faulty_set_net_attr,
};
