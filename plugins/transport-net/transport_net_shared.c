/* The registry of net comms shared by a peer's p2p connections. */
#include <string.h>

#include "transport_net.h"

transport_net_shared_t* transport_net_shared_find(transport_net_ctx_t* ctx, int peer, int isSend, int netDev) {
  for (int i = 0; i < NET_SHARED_MAX; i++) {
    transport_net_shared_t* s = &ctx->shared[i];
    if (s->used && s->peer == peer && s->isSend == isSend && s->netDev == netDev) return s;
  }
  return NULL;
}

transport_net_shared_t* transport_net_shared_add(transport_net_ctx_t* ctx, int peer, int isSend, int netDev) {
  for (int i = 0; i < NET_SHARED_MAX; i++) {
    transport_net_shared_t* s = &ctx->shared[i];
    if (s->used) continue;
    memset(s, 0, sizeof(*s));
    s->used = 1;
    s->peer = peer;
    s->isSend = isSend;
    s->netDev = netDev;
    return s;
  }
  return NULL;
}

/* The last connection closes the comm. */
void transport_net_shared_release(transport_net_ctx_t* ctx, transport_net_shared_t* s) {
  if (--s->refs > 0) return;
  const ncclNet_v12_t* net = ctx->net;
  transport_net_reg_drop_comm(ctx, s->netComm);
  if (s->netComm) (s->isSend ? net->closeSend : net->closeRecv)(s->netComm);
  if (s->listenComm) net->closeListen(s->listenComm);
  memset(s, 0, sizeof(*s));
}
