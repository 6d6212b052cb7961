/* Early messages on a receive comm (net_socket_unexp.h). */
#include "net_socket_unexp.h"

#include <stdlib.h>
#include <string.h>

#include "net_socket_log.h"

/* Whether a posted buffer still waits for its message. */
static int net_socket_unexp_someone_waits(const net_socket_comm_t* comm) {
  for (int i = 0; i < NET_SOCKET_MAX_REQUESTS; i++) {
    const net_socket_request_t* r = &comm->reqs[i];
    if (!r->used) continue;
    for (int s = 0; s < r->n; s++)
      if (!r->subs[s].matched) return 1;
  }
  return 0;
}

ncclResult_t net_socket_unexp_keep(net_socket_comm_t* comm, net_socket_sub_t** kept) {
  *kept = NULL;
  size_t size = (size_t)comm->rxHdr.size;
  if (comm->unpack || comm->unexpMaxBytes == 0 || comm->unexpCount >= NET_SOCKET_MAX_UNEXPECTED ||
      size > comm->unexpMaxBytes - comm->unexpBytes ||
      !net_socket_unexp_someone_waits(comm))
    return ncclSuccess;
  net_socket_unexp_t* u = calloc(1, sizeof(*u));
  char* data = u ? malloc(size ? size : 1) : NULL;
  if (!data) {
    free(u);
    NS_WARN("no memory to keep a message of %zu bytes (tag %d) that came before its receive", size, comm->rxHdr.tag);
    return net_socket_comm_fail(comm, ncclSystemError);
  }
  u->sub.data = data;
  u->sub.size = size;
  u->sub.tag = comm->rxHdr.tag;
  net_socket_unexp_t** end = &comm->unexpHead;
  while (*end) end = &(*end)->next;
  *end = u;
  comm->unexpCount++;
  comm->unexpBytes += size;
  *kept = &u->sub;
  return ncclSuccess;
}

net_socket_unexp_t* net_socket_unexp_find(net_socket_comm_t* comm, int tag) {
  for (net_socket_unexp_t* u = comm->unexpHead; u; u = u->next)
    if (!u->taker && u->sub.tag == tag) return u;
  return NULL;
}

void net_socket_unexp_give(net_socket_unexp_t* u, net_socket_sub_t* sub) {
  u->taker = sub;
  sub->matched = 1;
  sub->received = u->sub.received;
  atomic_store_explicit(&sub->pending, 1, memory_order_relaxed); /* until the copy */
}

void net_socket_unexp_progress(net_socket_comm_t* comm) {
  net_socket_unexp_t** link = &comm->unexpHead;
  while (*link) {
    net_socket_unexp_t* u = *link;
    if (!u->taker || atomic_load_explicit(&u->sub.pending, memory_order_acquire) != 0) {
      link = &u->next;
      continue;
    }
    net_socket_sub_t* sub = u->taker;
    if (u->sub.received) memcpy(sub->data, u->sub.data, u->sub.received);
    atomic_store_explicit(&sub->pending, 0, memory_order_release);
    *link = u->next;
    comm->unexpCount--;
    comm->unexpBytes -= u->sub.size;
    free(u->sub.data);
    free(u);
  }
}

void net_socket_unexp_free(net_socket_comm_t* comm) {
  while (comm->unexpHead) {
    net_socket_unexp_t* u = comm->unexpHead;
    comm->unexpHead = u->next;
    free(u->sub.data);
    free(u);
  }
  comm->unexpCount = 0;
  comm->unexpBytes = 0;
}
