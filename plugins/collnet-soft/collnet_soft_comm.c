/* Listen, connect and close: a rank's connection to the aggregator
 * (collnet_soft_comm.h, collnet_soft_wire.h). */
#include "collnet_soft_comm.h"

#include <stdlib.h>
#include <string.h>

#include "collnet_soft_agg.h"
#include "collnet_soft_log.h"
#include "collnet/nccl_collnet.h"

_Static_assert(sizeof(collnet_soft_handle_t) <= NCCL_NET_HANDLE_MAXSIZE, "the handle fits NCCL's");

static ncclResult_t collnet_soft_sock_fail(ncclResult_t res, const char* what) {
  return CS_FAIL(res, "%s: %s", what, sock_error());
}

ncclResult_t collnet_soft_listen(int dev, void* handle, void** listenComm) {
  if (dev != 0) return CS_FAIL(ncclInvalidArgument, "listen: device %d (collnet-soft has device 0 only)", dev);
  if (!handle || !listenComm) return CS_FAIL(ncclInvalidArgument, "listen: handle or listenComm is NULL");
  int family = AF_UNSPEC;
  if (sock_family_parse(collnet_soft_param_NCCL_SOCKET_FAMILY(), &family) != SOCK_OK)
    return collnet_soft_sock_fail(ncclInvalidArgument, "listen: NCCL_SOCKET_FAMILY");
  sock_iface_t iface;
  int n = 0;
  if (sock_ifaces_find(collnet_soft_param_NCCL_SOCKET_IFNAME(), family, &iface, 1, &n) != SOCK_OK || n < 1)
    return collnet_soft_sock_fail(ncclSystemError, "listen: no interface (NCCL_SOCKET_IFNAME)");
  collnet_soft_listen_t* lc = calloc(1, sizeof(*lc));
  if (!lc) return CS_FAIL(ncclSystemError, "listen: out of memory");
  if (sock_listen(&iface.addr, COLLNET_SOFT_MAX_RANKS, &lc->fd, &lc->addr) != SOCK_OK) {
    free(lc);
    return collnet_soft_sock_fail(ncclSystemError, "listen");
  }
  collnet_soft_handle_t h;
  memset(&h, 0, sizeof(h));
  h.magic = COLLNET_SOFT_MAGIC;
  h.addr = lc->addr;
  memcpy(handle, &h, sizeof(h));
  *listenComm = lc;
  return ncclSuccess;
}

ncclResult_t collnet_soft_close_listen(void* listenComm) {
  collnet_soft_listen_t* lc = listenComm;
  if (!lc) return CS_FAIL(ncclInvalidArgument, "closeListen: listenComm is NULL");
  sock_close(&lc->fd);
  free(lc);
  return ncclSuccess;
}

/* Rank 0 forks the aggregator over its own listener; then every rank,
 * rank 0 included, dials handles[0] and says who it is. */
ncclResult_t collnet_soft_connect(void* handles[], int nranks, int rank, void* listenComm, void** collComm) {
  collnet_soft_listen_t* lc = listenComm;
  if (!handles || !lc || !collComm || nranks < 1 || nranks > COLLNET_SOFT_MAX_RANKS || rank < 0 || rank >= nranks)
    return CS_FAIL(ncclInvalidArgument, "connect: bad arguments (rank %d of %d)", rank, nranks);
  collnet_soft_handle_t h;
  memcpy(&h, handles[0], sizeof(h));
  if (h.magic != COLLNET_SOFT_MAGIC || !sock_addr_valid(&h.addr))
    return CS_FAIL(ncclInvalidArgument, "connect: handles[0] is not a collnet-soft handle");
  int64_t timeoutMs = collnet_soft_param_MKCCL_COLLNET_SOFT_TIMEOUT_MS();
  int64_t chunk = collnet_soft_param_MKCCL_COLLNET_SOFT_CHUNK();
  if (chunk < 8 || chunk > (1LL << 30))
    return CS_FAIL(ncclInvalidArgument, "connect: MKCCL_COLLNET_SOFT_CHUNK=%lld (8 to 2^30 bytes)", (long long)chunk);
  collnet_soft_comm_t* c = calloc(1, sizeof(*c));
  if (!c) return CS_FAIL(ncclSystemError, "connect: out of memory");
  c->fd = -1;
  c->rank = rank;
  c->nranks = nranks;
  ncclResult_t res = ncclSuccess;
  if (rank == 0) {
    res = collnet_soft_agg_start(lc->fd, nranks, timeoutMs, (size_t)chunk, &c->aggregator);
    if (res != ncclSuccess) goto fail;
  }
  int64_t deadline = sock_deadline_ms(timeoutMs);
  if (sock_connect(&h.addr, deadline, NULL, &c->fd) != SOCK_OK ||
      sock_hello_send(c->fd, COLLNET_SOFT_MAGIC, COLLNET_SOFT_HELLO_TYPE, COLLNET_SOFT_VERSION,
                      collnet_soft_hello_arg(rank, nranks), deadline, NULL) != SOCK_OK) {
    char where[SOCK_ADDR_STRLEN];
    res = CS_FAIL(ncclRemoteError, "connect: rank %d of %d to the aggregator at %s: %s", rank, nranks,
                  sock_addr_to_string(&h.addr, where, sizeof(where), 1), sock_error());
    goto fail;
  }
  *collComm = c;
  return ncclSuccess;
fail:
  sock_close(&c->fd);
  if (c->aggregator > 0) collnet_soft_agg_stop(c->aggregator, 0);
  free(c);
  return res;
}

ncclResult_t collnet_soft_close_coll(void* collComm) {
  collnet_soft_comm_t* c = collComm;
  if (!c) return CS_FAIL(ncclInvalidArgument, "closeColl: collComm is NULL");
  while (c->head) {
    collnet_soft_req_t* r = c->head;
    c->head = r->next;
    free(r->window);
    free(r->parts);
    free(r);
  }
  sock_close(&c->fd);
  /* Rank 0's close ends the aggregator's stream: it exits by itself. */
  if (c->aggregator > 0 && collnet_soft_agg_stop(c->aggregator, 2000) != 0)
    CS_INFO("the aggregator (pid %d) did not end cleanly: stopped", (int)c->aggregator);
  free(c);
  return ncclSuccess;
}
