/* Proxy ops kept as templates and posted afresh on demand: a launch
 * captured into a CUDA graph runs its kernel again at every replay, so the
 * proxy must be told again. A host node placed before the kernel posts a
 * fresh copy of the templates each time; the templates themselves are never
 * progressed. They stay until the communicator is destroyed (a graph must
 * not be replayed after that). */
#ifndef MKCCL_PROXY_PROXY_REPLAY_H
#define MKCCL_PROXY_PROXY_REPLAY_H

#include "proxy/proxy.h"

typedef struct proxy_replay proxy_replay_t;

/* The `n` ops as templates for `client`; the ops themselves are freed. */
ncclResult_t proxy_replay_take(proxy_client_t* client, proxy_op_t* const* ops, int n, proxy_replay_t** out);
/* Posts one fresh copy of each template, in order (the host node's body, on
 * a CUDA thread: no errors to return; ops that cannot be allocated fail the
 * client, so the kernel waiting for them ends instead of hanging). */
void proxy_replay_post(void* replay);
/* Links `r` into a list of templates, freed together by proxy_replay_free_all
 * (at destroy, once the proxy is detached). */
void proxy_replay_keep(proxy_replay_t** list, proxy_replay_t* r);
void proxy_replay_free_all(proxy_replay_t** list);

#endif
