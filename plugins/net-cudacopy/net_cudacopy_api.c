/* The NCCL net v11 table: connections are the wrapped plugin's own;
 * registrations and requests are wrapped, so GPU memory can be copied
 * through its host copy on the way in and out. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net_cudacopy.h"

cudacopy_counts_t cudacopy_counts;

#define CUDACOPY_COUNT(field) __atomic_add_fetch(&cudacopy_counts.field, 1, __ATOMIC_RELAXED)
#define CUDACOPY_CALL(call)           \
  do {                                \
    ncclResult_t r_ = (call);         \
    if (r_ != ncclSuccess) return r_; \
  } while (0)

static ncclResult_t cudacopy_init(void** ctx, uint64_t commId, ncclNetCommConfig_v11_t* config,
                                  ncclDebugLogger_t logFunction, ncclProfilerCallback_t profFunction) {
  cudacopy_set_logger(logFunction);
  CUDACOPY_CALL(cudacopy_inner_load(cudacopy_param_plugin()));
  return cudacopy_inner->init(ctx, commId, config, logFunction, profFunction);
}

static ncclResult_t cudacopy_devices(int* ndev) { return cudacopy_inner->devices(ndev); }

/* The wrapped device, taking CUDA pointers too (dma-bufs of them with
 * MKCCL_NET_CUDACOPY_DMABUF=1). */
static ncclResult_t cudacopy_get_properties(int dev, ncclNetProperties_v11_t* props) {
  CUDACOPY_CALL(cudacopy_inner->getProperties(dev, props));
  props->ptrSupport = (props->ptrSupport | NCCL_PTR_HOST | NCCL_PTR_CUDA) & ~NCCL_PTR_DMABUF;
  if (cudacopy_param_dmabuf()) props->ptrSupport |= NCCL_PTR_DMABUF;
  props->forceFlush = cudacopy_param_force_flush();
  if (props->maxRecvs > CUDACOPY_MAX_RECVS) props->maxRecvs = CUDACOPY_MAX_RECVS;
  return ncclSuccess;
}

static ncclResult_t cudacopy_listen(void* ctx, int dev, void* handle, void** listenComm) {
  return cudacopy_inner->listen(ctx, dev, handle, listenComm);
}

static ncclResult_t cudacopy_connect(void* ctx, int dev, void* handle, void** sendComm,
                                     ncclNetDeviceHandle_v11_t** sendDevComm) {
  return cudacopy_inner->connect(ctx, dev, handle, sendComm, sendDevComm);
}

static ncclResult_t cudacopy_accept(void* listenComm, void** recvComm, ncclNetDeviceHandle_v11_t** recvDevComm) {
  return cudacopy_inner->accept(listenComm, recvComm, recvDevComm);
}

/* GPU memory: the wrapped plugin registers a host copy of it. */
static ncclResult_t cudacopy_reg_mr(void* comm, void* data, size_t size, int type, void** mhandle) {
  if (type != NCCL_PTR_HOST && type != NCCL_PTR_CUDA) {
    cudacopy_log(NCCL_LOG_WARN, "regMr: memory type %d is neither NCCL_PTR_HOST nor NCCL_PTR_CUDA", type);
    return ncclInvalidArgument;
  }
  cudacopy_mr_t* mr = calloc(1, sizeof(*mr));
  if (!mr) return ncclSystemError;
  mr->type = type;
  mr->base = data;
  mr->size = size;
  ncclResult_t res = ncclSuccess;
  void* innerData = data;
  if (type == NCCL_PTR_CUDA) {
    if ((res = cudacopy_cuda_attach(mr)) != ncclSuccess) goto fail;
    mr->shadow = malloc(size ? size : 1);
    if (!mr->shadow) {
      res = ncclSystemError;
      goto fail_cuda;
    }
    innerData = mr->shadow;
  }
  if ((res = cudacopy_inner->regMr(comm, innerData, size, NCCL_PTR_HOST, &mr->inner)) != ncclSuccess) goto fail_shadow;
  if (type == NCCL_PTR_CUDA && CUDACOPY_COUNT(regCuda) == 1)
    cudacopy_log(NCCL_LOG_INFO, "registered %zu bytes of GPU memory (NCCL_PTR_CUDA) at %p", size, data);
  if (type == NCCL_PTR_HOST) CUDACOPY_COUNT(regHost);
  *mhandle = mr;
  return ncclSuccess;
fail_shadow:
  free(mr->shadow);
fail_cuda:
  cudacopy_cuda_detach(mr);
fail:
  free(mr);
  return res;
}

/* The fd must be a dma-buf (the kernel names its files so); the memory is
 * then the GPU range it exports, copied through the driver as regMr's. */
static ncclResult_t cudacopy_reg_mr_dmabuf(void* comm, void* data, size_t size, int type, uint64_t offset, int fd,
                                           void** mhandle) {
  if (!cudacopy_param_dmabuf()) {
    cudacopy_log(NCCL_LOG_WARN, "regMrDmaBuf: not supported (the devices do not claim NCCL_PTR_DMABUF)");
    return ncclInvalidUsage;
  }
  char link[64], target[256] = "";
  snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, target, sizeof(target) - 1);
  if (n > 0) target[n] = '\0';
  if (type != NCCL_PTR_CUDA || n <= 0 || !strstr(target, "dmabuf")) {
    cudacopy_log(NCCL_LOG_WARN, "regMrDmaBuf: fd %d (%s) of type %d at offset %llu is not a dma-buf of GPU memory", fd,
                 n > 0 ? target : "closed", type, (unsigned long long)offset);
    return ncclInvalidArgument;
  }
  ncclResult_t res = cudacopy_reg_mr(comm, data, size, type, mhandle);
  if (res == ncclSuccess && CUDACOPY_COUNT(regDmaBuf) == 1)
    cudacopy_log(NCCL_LOG_INFO, "registered %zu bytes of GPU memory through dma-buf fd %d (%s), offset %llu", size, fd,
                 target, (unsigned long long)offset);
  return res;
}

static ncclResult_t cudacopy_dereg_mr(void* comm, void* mhandle) {
  cudacopy_mr_t* mr = mhandle;
  if (!mr) return ncclSuccess;
  ncclResult_t res = cudacopy_inner->deregMr(comm, mr->inner);
  free(mr->shadow);
  cudacopy_cuda_detach(mr);
  free(mr);
  return res;
}

/* Where the wrapped plugin moves `data` of mr: the host copy for GPU memory. */
static ncclResult_t cudacopy_inner_ptr(cudacopy_mr_t* mr, void* data, size_t size, void** out) {
  *out = data;
  if (!mr || mr->type != NCCL_PTR_CUDA) return ncclSuccess;
  if ((char*)data < mr->base || (char*)data + size > mr->base + mr->size) {
    cudacopy_log(NCCL_LOG_WARN, "%zu bytes at %p lie outside their registration [%p, +%zu)", size, data,
                 (void*)mr->base, mr->size);
    return ncclInvalidArgument;
  }
  *out = mr->shadow + ((char*)data - mr->base);
  return ncclSuccess;
}

/* Receives still outstanding: a comm closed with receives in flight frees
 * them (the ABI lets a caller close without testing them to the end). */
static pthread_mutex_t cudacopy_reqs_lock = PTHREAD_MUTEX_INITIALIZER;
static cudacopy_req_t* cudacopy_reqs;

static void cudacopy_req_track(cudacopy_req_t* r) {
  pthread_mutex_lock(&cudacopy_reqs_lock);
  r->next = cudacopy_reqs;
  if (r->next) r->next->prev = r;
  cudacopy_reqs = r;
  pthread_mutex_unlock(&cudacopy_reqs_lock);
}

static void cudacopy_req_free(cudacopy_req_t* r) {
  if (r->isRecv) {
    pthread_mutex_lock(&cudacopy_reqs_lock);
    if (r->prev) r->prev->next = r->next;
    else cudacopy_reqs = r->next;
    if (r->next) r->next->prev = r->prev;
    pthread_mutex_unlock(&cudacopy_reqs_lock);
  }
  free(r);
}

static ncclResult_t cudacopy_wrap_req(void* inner, int isRecv, int n, void** request, cudacopy_req_t** out) {
  *request = NULL;
  if (out) *out = NULL;
  if (!inner) return ncclSuccess; /* the wrapped plugin could not post it yet */
  cudacopy_req_t* r = calloc(1, sizeof(*r));
  if (!r) {
    cudacopy_log(NCCL_LOG_WARN, "out of memory wrapping a request");
    return ncclSystemError;
  }
  r->inner = inner;
  r->isRecv = isRecv;
  r->n = n;
  *request = r;
  if (out) *out = r;
  return ncclSuccess;
}

/* GPU memory goes to its host copy first, then out as host memory. */
static ncclResult_t cudacopy_isend(void* sendComm, void* data, size_t size, int tag, void* mhandle, void* phandle,
                                   void** request) {
  cudacopy_mr_t* mr = mhandle;
  void* src = NULL;
  *request = NULL;
  CUDACOPY_CALL(cudacopy_inner_ptr(mr, data, size, &src));
  if (src != data) CUDACOPY_CALL(cudacopy_cuda_dtoh(mr, src, data, size));
  void* req = NULL;
  CUDACOPY_CALL(cudacopy_inner->isend(sendComm, src, size, tag, mr ? mr->inner : NULL, phandle, &req));
  if (req) {
    if (src != data) CUDACOPY_COUNT(sendCuda);
    else CUDACOPY_COUNT(sendHost);
  }
  return cudacopy_wrap_req(req, 0, 1, request, NULL);
}

static ncclResult_t cudacopy_irecv(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                                   void** phandles, void** request) {
  *request = NULL;
  if (n < 1 || n > CUDACOPY_MAX_RECVS) {
    cudacopy_log(NCCL_LOG_WARN, "irecv: %d receives in one call (1 to %d)", n, CUDACOPY_MAX_RECVS);
    return ncclInvalidArgument;
  }
  void* dst[CUDACOPY_MAX_RECVS];
  void* innerMh[CUDACOPY_MAX_RECVS];
  for (int i = 0; i < n; i++) {
    cudacopy_mr_t* mr = mhandles ? mhandles[i] : NULL;
    CUDACOPY_CALL(cudacopy_inner_ptr(mr, data[i], sizes[i], &dst[i]));
    innerMh[i] = mr ? mr->inner : NULL;
  }
  void* req = NULL;
  CUDACOPY_CALL(cudacopy_inner->irecv(recvComm, n, dst, sizes, tags, innerMh, phandles, &req));
  cudacopy_req_t* r = NULL;
  CUDACOPY_CALL(cudacopy_wrap_req(req, 1, n, request, &r));
  if (!r) return ncclSuccess;
  r->comm = recvComm;
  cudacopy_req_track(r);
  for (int i = 0; i < n; i++) {
    cudacopy_mr_t* mr = mhandles ? mhandles[i] : NULL;
    if (dst[i] == data[i]) continue;
    r->dst[i] = data[i];
    r->mr[i] = mr;
  }
  return ncclSuccess;
}

/* Every copy into the registrations' GPU memory has landed (they are waited
 * for before test says done): the request completes at its first test. */
static ncclResult_t cudacopy_iflush(void* recvComm, int n, void** data, int* sizes, void** mhandles, void** request) {
  (void)recvComm, (void)data, (void)sizes;
  *request = NULL;
  for (int i = 0; i < n && mhandles; i++) {
    cudacopy_mr_t* mr = mhandles[i];
    if (mr && mr->type == NCCL_PTR_CUDA) CUDACOPY_CALL(cudacopy_cuda_sync(mr));
  }
  cudacopy_req_t* r = calloc(1, sizeof(*r));
  if (!r) return ncclSystemError;
  CUDACOPY_COUNT(flushes);
  *request = r;
  return ncclSuccess;
}

/* A receive into GPU memory is done once its bytes were copied there. */
static ncclResult_t cudacopy_test(void* request, int* done, int* sizes) {
  cudacopy_req_t* r = request;
  *done = 0;
  if (!r->inner) { /* a flush */
    *done = 1;
    cudacopy_req_free(r);
    return ncclSuccess;
  }
  int got[CUDACOPY_MAX_RECVS] = {0};
  ncclResult_t res = cudacopy_inner->test(r->inner, done, got);
  if (res != ncclSuccess) {
    cudacopy_req_free(r);
    return res;
  }
  if (!*done) return ncclSuccess;
  for (int i = 0; i < r->n; i++) {
    if (!r->dst[i]) continue;
    cudacopy_mr_t* mr = r->mr[i];
    char* from = mr->shadow + ((char*)r->dst[i] - mr->base);
    if (got[i] > 0 && (res = cudacopy_cuda_htod(mr, r->dst[i], from, (size_t)got[i])) != ncclSuccess) {
      cudacopy_req_free(r);
      return res;
    }
  }
  for (int i = 0; i < r->n && r->isRecv; i++) {
    if (r->dst[i]) CUDACOPY_COUNT(recvCuda);
    else CUDACOPY_COUNT(recvHost);
  }
  if (sizes) memcpy(sizes, got, sizeof(int) * (size_t)r->n);
  cudacopy_req_free(r);
  return ncclSuccess;
}

static ncclResult_t cudacopy_close_send(void* comm) { return cudacopy_inner->closeSend(comm); }
static ncclResult_t cudacopy_close_recv(void* comm) {
  pthread_mutex_lock(&cudacopy_reqs_lock);
  for (cudacopy_req_t **p = &cudacopy_reqs, *r; (r = *p);) {
    if (r->comm != comm) {
      p = &r->next;
      continue;
    }
    *p = r->next;
    if (r->next) r->next->prev = r->prev;
    free(r);
  }
  pthread_mutex_unlock(&cudacopy_reqs_lock);
  return cudacopy_inner->closeRecv(comm);
}
static ncclResult_t cudacopy_close_listen(void* comm) { return cudacopy_inner->closeListen(comm); }

static ncclResult_t cudacopy_get_device_mr(void* comm, void* mhandle, void** dptr_mhandle) {
  (void)comm, (void)mhandle, (void)dptr_mhandle;
  return ncclInvalidUsage; /* no device offload */
}

static ncclResult_t cudacopy_irecv_consumed(void* recvComm, int n, void* request) {
  (void)recvComm, (void)n, (void)request;
  return ncclSuccess;
}

static ncclResult_t cudacopy_make_vdevice(int* d, ncclNetVDeviceProps_v11_t* props) {
  return cudacopy_inner->makeVDevice ? cudacopy_inner->makeVDevice(d, props) : ncclInvalidUsage;
}

/* The counts, for tests to see what moved (and that flushes happened). */
static ncclResult_t cudacopy_finalize(void* ctx) {
  /* Another comm's proxy may still be counting: atomic reads. */
  cudacopy_counts_t* n = &cudacopy_counts;
#define CUDACOPY_READ(field) (long long)__atomic_load_n(&n->field, __ATOMIC_RELAXED)
  cudacopy_log(NCCL_LOG_INFO,
               "regMr CUDA %lld HOST %lld; isend from GPU %lld, host %lld; receives into GPU %lld, host %lld; "
               "iflush %lld; regMrDmaBuf %lld",
               CUDACOPY_READ(regCuda), CUDACOPY_READ(regHost), CUDACOPY_READ(sendCuda), CUDACOPY_READ(sendHost),
               CUDACOPY_READ(recvCuda), CUDACOPY_READ(recvHost), CUDACOPY_READ(flushes), CUDACOPY_READ(regDmaBuf));
#undef CUDACOPY_READ
  return cudacopy_inner->finalize ? cudacopy_inner->finalize(ctx) : ncclSuccess;
}

static ncclResult_t cudacopy_set_net_attr(void* ctx, ncclNetAttr_v11_t* attr) {
  return cudacopy_inner->setNetAttr ? cudacopy_inner->setNetAttr(ctx, attr) : ncclSuccess;
}

__attribute__((visibility("default"))) const ncclNet_v11_t ncclNetPlugin_v11 = {
    "cudacopy",          cudacopy_init,          cudacopy_devices,      cudacopy_get_properties,
    cudacopy_listen,     cudacopy_connect,       cudacopy_accept,       cudacopy_reg_mr,
    cudacopy_reg_mr_dmabuf, cudacopy_dereg_mr,   cudacopy_isend,        cudacopy_irecv,
    cudacopy_iflush,     cudacopy_test,          cudacopy_close_send,   cudacopy_close_recv,
    cudacopy_close_listen, cudacopy_get_device_mr, cudacopy_irecv_consumed, cudacopy_make_vdevice,
    cudacopy_finalize,   cudacopy_set_net_attr,
};
