/* The communicator's net plugin: acquired through the loader (config
 * netName, else NCCL_NET, else the first that loads), then initialized with
 * this communicator's own context. No net plugin at all is fine for ranks of
 * one host; transports that need one then refuse to connect. */
#include "base/err.h"
#include "comm/comm.h"
#include "dp/dp_net.h"
#include "plugin/net.h"
#include "profile/profile.h"

int dp_host_net_flows(const struct ncclComm* comm) { return comm->cudaDev >= 0 ? 0 : 1; }

static ncclResult_t dp_net_set_flows(struct ncclComm* comm, const plugin_net_t* net, void* ctx, int flows) {
  if (!net->net->setNetAttr) return ncclSuccess;
  ncclNetAttr_v12_t attr = NCCL_NET_ATTR_INIT_V12;
  if (flows > 0) {
    attr.sendCommAttr.maxFlowsPerPeer = flows;
    attr.recvCommAttr.maxFlowsPerPeer = flows;
  }
  ncclResult_t res = net->net->setNetAttr(ctx, &attr);
  if (res != ncclSuccess)
    return MK_FAIL(res, "Rank %d: net plugin %s refused setNetAttr (maxFlowsPerPeer %d): %d", comm->rank, net->name,
                   flows, res);
  return ncclSuccess;
}

/* A host communicator's executors make their channels' net calls in their
 * own proxy lanes, so it asks for one flow per peer: a plugin that would
 * spread a connection over several flows and threads of its own then keeps
 * to one, whose hand-offs would cost more than they move on a host. A
 * plugin without setNetAttr, or one that ignores the hint, keeps its own
 * layout. */
ncclResult_t dp_net_hint(struct ncclComm* comm, const struct plugin_net* net, void* ctx) {
  int flows = dp_host_net_flows(comm);
  return flows > 0 ? dp_net_set_flows(comm, net, ctx, flows) : ncclSuccess;
}

ncclResult_t dp_net_p2p_begin(struct ncclComm* comm) {
  const plugin_net_t* net = (const plugin_net_t*)comm->dp.net.plugin;
  if (!net || dp_host_net_flows(comm) <= 0) return ncclSuccess;
  return dp_net_set_flows(comm, net, comm->dp.net.context, 0);
}

ncclResult_t dp_net_p2p_end(struct ncclComm* comm) {
  const plugin_net_t* net = (const plugin_net_t*)comm->dp.net.plugin;
  if (!net || dp_host_net_flows(comm) <= 0) return ncclSuccess;
  return dp_net_hint(comm, net, comm->dp.net.context);
}

ncclResult_t dp_net_open(struct ncclComm* comm) {
  dp_state_t* dp = &comm->dp;
  plugin_net_t* net = NULL;
  const char* name = comm->netName[0] ? comm->netName : NULL;
  ncclResult_t res = plugin_net_acquire(name, &net);
  if (res == ncclSystemError && !name) {
    MK_INFO(NCCL_INIT | NCCL_NET, "Rank %d: no net plugin loaded; only same-host transports are available", comm->rank);
    return ncclSuccess;
  }
  if (res != ncclSuccess) return res;
  ncclNetCommConfig_v12_t config = {NCCL_NET_TRAFFIC_CLASS_UNDEF};
  if (comm->config.trafficClass != NCCL_CONFIG_UNDEF_INT) config.trafficClass = comm->config.trafficClass;
  void* ctx = NULL;
  res = net->net->init(&ctx, comm->commHash, &config, log_write, profile_net_callback);
  if (res != ncclSuccess) {
    plugin_net_release(net);
    return MK_FAIL(res, "Rank %d: net plugin %s init failed (%d)", comm->rank, net->name, res);
  }
  res = dp_net_hint(comm, net, ctx);
  if (res != ncclSuccess) {
    if (net->net->finalize) net->net->finalize(ctx);
    plugin_net_release(net);
    return res;
  }
  dp->net.plugin = (struct plugin_net*)net;
  dp->net.api = net->net;
  dp->net.context = ctx;
  MK_INFO(NCCL_INIT | NCCL_NET, "Rank %d: using net plugin %s (%s, ABI v%d, %d device(s))", comm->rank, net->name,
          net->path, net->abi, net->ndev);
  return ncclSuccess;
}

void dp_net_close(struct ncclComm* comm) {
  dp_state_t* dp = &comm->dp;
  plugin_net_t* net = (plugin_net_t*)dp->net.plugin;
  if (!net) return;
  if (net->net->finalize) net->net->finalize(dp->net.context);
  plugin_net_release(net);
  dp->net.plugin = NULL;
  dp->net.api = NULL;
  dp->net.context = NULL;
}
