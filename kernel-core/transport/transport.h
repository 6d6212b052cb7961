/* Transports as the core uses them: the transport plugins loaded once per
 * process (every `transport` plugin the loader finds, in manifest priority
 * order), each initialized per communicator with the core's services, and
 * the connection of connectors through them. */
#ifndef MKCCL_TRANSPORT_TRANSPORT_H
#define MKCCL_TRANSPORT_TRANSPORT_H

#include "channel/channel.h"
#include "nccl.h"
#include "transport/mkccl_transport_v1.h"

struct ncclComm;

typedef struct transport_entry {
  const mkcclTransport_v1* t;
  void* tctx; /* from t->init, per communicator */
  int disabled; /* NCCL_<NAME>_DISABLE=1, the switch declared for the transport */
} transport_entry_t;

typedef struct transport_set {
  mkcclTransportServices_v1 services;
  transport_entry_t entries[8];
  int n;
} transport_set_t;

/* The services table a communicator lends its transports. */
ncclResult_t transport_services_fill(struct ncclComm* comm, mkcclTransportServices_v1* services);

/* The GPU services (transport_services_gpu.c), for GPU communicators. */
ncclResult_t transport_services_gpu_fill(struct ncclComm* comm, mkcclTransportServices_v1* services);
/* Release the peers' primary contexts that peer access held (GPU comms). */
void transport_services_gpu_release(struct ncclComm* comm);

/* Load (once per process) and initialize every transport for `comm`. */
ncclResult_t transport_set_init(struct ncclComm* comm, transport_set_t* set);
void transport_set_fini(transport_set_t* set);
/* An INFO line per transport that exports stats and holds connections:
 * "rank R: transport-NAME holds N bytes of staging (P pools, C connections),
 * K steps in OFFSET mode" (after each connect, and at the end). */
void transport_set_report(const transport_set_t* set);
/* Tell every transport that exports memDeregister that [base, base + size)
 * is no longer registered (ncclCommDeregister). */
void transport_set_mem_deregister(const transport_set_t* set, void* base, size_t size);

/* The transport that connects self to peer: the first enabled one, in
 * priority order, whose canConnect says so; *out NULL when none can. */
ncclResult_t transport_pick(const transport_set_t* set, const mkcclPeer_v1* self, const mkcclPeer_v1* peer,
                            const transport_entry_t** out);
/* Whether the transport's connections are progressed by the proxy thread
 * (their data goes through a net plugin or another agent, not straight
 * between the executors). */
int transport_entry_uses_proxy(const transport_entry_t* e);

/* A description of a connector to connect. */
typedef struct {
  connector_t* conn;
  int isSend;
  int peer;
  int channelId;
  int connIndex;
} transport_conn_req_t;

/* Connect every requested connector with its peer's counterpart: choose the
 * transport, setup, exchange connect info with each peer through the
 * bootstrap, connect (retrying while in progress), proxy setup/connect.
 * Every peer named must call this with the matching requests. */
ncclResult_t transport_connect(struct ncclComm* comm, transport_conn_req_t* reqs, int n);

/* Release a connector (proxy side first). */
void transport_conn_free(connector_t* conn);

/* The name of the transport a connector uses ("-" when unconnected). */
const char* transport_conn_name(const connector_t* conn);

#endif
