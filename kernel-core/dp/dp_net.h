/* The net plugin a communicator uses (through the loader), per comm context. */
#ifndef MKCCL_DP_DP_NET_H
#define MKCCL_DP_DP_NET_H

#include "nccl.h"

struct ncclComm;
/* Absence of any net plugin is not an error (single host: shm/p2p). */
ncclResult_t dp_net_open(struct ncclComm* comm);
void dp_net_close(struct ncclComm* comm);

/* Flows per peer a communicator asks of its net plugin through setNetAttr's
 * maxFlowsPerPeer: 1 for a host communicator, 0 (no hint) for a GPU one. */
int dp_host_net_flows(const struct ncclComm* comm);

/* Gives the net plugin's context `ctx` the hints of dp_host_net_flows
 * (setNetAttr, where the plugin has it); a refusal is an error. */
struct plugin_net;
ncclResult_t dp_net_hint(struct ncclComm* comm, const struct plugin_net* net, void* ctx);

/* Around the making of point-to-point connections (Send/Recv and what is
 * built of it): they share one net comm per peer, progressed in lane 0 by
 * the proxy thread, not in a channel's lane by its executor, so there no
 * hint is given (the plugin's own layout); _end puts dp_host_net_flows
 * back. Nothing for communicators that give no hint. */
ncclResult_t dp_net_p2p_begin(struct ncclComm* comm);
ncclResult_t dp_net_p2p_end(struct ncclComm* comm);

#endif
