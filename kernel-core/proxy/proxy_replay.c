#include "proxy/proxy_replay.h"

#include <stdlib.h>

#include "base/err.h"

struct proxy_replay {
  proxy_replay_t* next;
  proxy_client_t* client;
  int nOps;
  proxy_op_t ops[]; /* templates: never posted themselves */
};

void proxy_replay_post(void* replay) {
  proxy_replay_t* r = replay;
  for (int i = 0; i < r->nOps; i++) {
    proxy_op_t* op;
    if (proxy_op_alloc(&op) != ncclSuccess) {
      proxy_client_fail(r->client, ncclSystemError);
      MK_WARN("Rank %d: graph replay: out of memory for proxy op %d of %d; communicator aborted", r->client->rank,
              i, r->nOps);
      return;
    }
    op->progress = r->ops[i].progress;
    op->tctx = r->ops[i].tctx;
    op->lane = r->ops[i].lane;
    op->args = r->ops[i].args;
    proxy_op_post(r->client, op);
  }
}

ncclResult_t proxy_replay_take(proxy_client_t* client, proxy_op_t* const* ops, int n, proxy_replay_t** out) {
  proxy_replay_t* r = calloc(1, sizeof(*r) + (size_t)n * sizeof(proxy_op_t));
  if (!r) return MK_FAIL(ncclSystemError, "out of memory keeping %d proxy ops of a captured launch", n);
  r->client = client;
  r->nOps = n;
  for (int i = 0; i < n; i++) {
    r->ops[i] = *ops[i];
    proxy_op_free(ops[i]);
  }
  *out = r;
  return ncclSuccess;
}

void proxy_replay_keep(proxy_replay_t** list, proxy_replay_t* r) {
  r->next = *list;
  *list = r;
}

void proxy_replay_free_all(proxy_replay_t** list) {
  while (*list) {
    proxy_replay_t* r = *list;
    *list = r->next;
    free(r);
  }
}
