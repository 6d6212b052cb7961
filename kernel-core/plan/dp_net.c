/* The communicator's net plugin: acquired through the loader (config
 * netName, else NCCL_NET, else the first that loads), then initialized with
 * this communicator's own context. No net plugin at all is fine for ranks of
 * one host; transports that need one then refuse to connect. */
#include "base/err.h"
#include "comm/comm.h"
#include "plan/dp_net.h"
#include "plugin/net.h"
#include "profile/profile.h"

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
  dp->netPlugin = (struct plugin_net*)net;
  dp->net = net->net;
  dp->netContext = ctx;
  MK_INFO(NCCL_INIT | NCCL_NET, "Rank %d: using net plugin %s (%s, ABI v%d, %d device(s))", comm->rank, net->name,
          net->path, net->abi, net->ndev);
  return ncclSuccess;
}

void dp_net_close(struct ncclComm* comm) {
  dp_state_t* dp = &comm->dp;
  plugin_net_t* net = (plugin_net_t*)dp->netPlugin;
  if (!net) return;
  if (net->net->finalize) net->net->finalize(dp->netContext);
  plugin_net_release(net);
  dp->netPlugin = NULL;
  dp->net = NULL;
  dp->netContext = NULL;
}
