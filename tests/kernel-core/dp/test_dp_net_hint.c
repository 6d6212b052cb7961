/* The hint a host communicator gives its net plugin (dp_net_hint):
 * maxFlowsPerPeer 1 on both sides through setNetAttr, every other field
 * left undefined; nothing for GPU communicators or for a plugin without
 * setNetAttr; a refusal fails. Around point-to-point connections no hint
 * (every field undefined), then the communicator's again. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "comm/comm.h"
#include "dp/dp_net.h"
#include "plugin/net.h"

static int calls;
static void* seenCtx;
static ncclNetAttr_v12_t seen;
static ncclResult_t answer = ncclSuccess;

static ncclResult_t fake_set_attr(void* ctx, ncclNetAttr_v12_t* attr) {
  calls++;
  seenCtx = ctx;
  if (attr) seen = *attr;
  return answer;
}

int main(void) {
  const int flows = 1;
  struct ncclComm* comm = calloc(1, sizeof(*comm));
  CHECK(comm != NULL);
  comm->cudaDev = -1;
  ncclNet_v12_t fake;
  memset(&fake, 0, sizeof(fake));
  fake.name = "fake";
  fake.setNetAttr = fake_set_attr;
  plugin_net_t net;
  memset(&net, 0, sizeof(net));
  net.net = &fake;
  net.name = "fake";
  int ctx;

  CHECK_EQ_INT(dp_host_net_flows(comm), flows);
  CHECK_EQ_INT(dp_net_hint(comm, &net, &ctx), ncclSuccess);
  CHECK_EQ_INT(calls, 1);
  CHECK(seenCtx == &ctx);
  CHECK_EQ_INT(seen.sendCommAttr.maxFlowsPerPeer, flows);
  CHECK_EQ_INT(seen.recvCommAttr.maxFlowsPerPeer, flows);
  CHECK_EQ_INT(seen.sendCommAttr.minFlowsPerPeer, NCCL_NET_ATTR_UNDEF);
  CHECK_EQ_INT(seen.recvCommAttr.maxConcurrentPeers, NCCL_NET_ATTR_UNDEF);
  CHECK_EQ_INT((int)seen.op, NCCL_NET_ATTR_UNDEF);
  /* A plugin that refuses the hint fails the communicator's net setup. */
  answer = ncclInternalError;
  CHECK_EQ_INT(dp_net_hint(comm, &net, &ctx), ncclInternalError);
  answer = ncclSuccess;
  /* Point-to-point connections: no hint, then the communicator's again. */
  comm->dp.net.plugin = (struct plugin_net*)&net;
  comm->dp.net.context = &ctx;
  calls = 0;
  CHECK_EQ_INT(dp_net_p2p_begin(comm), ncclSuccess);
  CHECK_EQ_INT(calls, 1);
  CHECK_EQ_INT(seen.sendCommAttr.maxFlowsPerPeer, NCCL_NET_ATTR_UNDEF);
  CHECK_EQ_INT(seen.recvCommAttr.maxFlowsPerPeer, NCCL_NET_ATTR_UNDEF);
  CHECK_EQ_INT(dp_net_p2p_end(comm), ncclSuccess);
  CHECK_EQ_INT(calls, 2);
  CHECK_EQ_INT(seen.sendCommAttr.maxFlowsPerPeer, flows);
  CHECK_EQ_INT(seen.recvCommAttr.maxFlowsPerPeer, flows);
  comm->dp.net.plugin = NULL;
  calls = 0;
  /* GPU communicators keep the plugin's layout: their proxy thread alone
   * makes the socket calls. */
  comm->cudaDev = 0;
  CHECK_EQ_INT(dp_host_net_flows(comm), 0);
  CHECK_EQ_INT(dp_net_hint(comm, &net, &ctx), ncclSuccess);
  CHECK_EQ_INT(calls, 0);
  /* No setNetAttr (plugins before ABI v11): nothing to call, no error. */
  comm->cudaDev = -1;
  fake.setNetAttr = NULL;
  CHECK_EQ_INT(dp_net_hint(comm, &net, &ctx), ncclSuccess);
  CHECK_EQ_INT(calls, 0);
  free(comm);
  return 0;
}
