/* The GPUDirect RDMA decision (transport_net_gdr.h). NCCL's rules, less the
 * GPU-NIC distance: a communicator holds no topology yet, so
 * NCCL_NET_GDR_LEVEL only turns GPUDirect off (LOC: no GPU-NIC path is that
 * close) or leaves it to what the plugin says. */
#include "net/nccl_net.h"
#include "transport_net_gdr.h"

#define GDR_LEVEL_LOC 0
#define GDR_READ_SM 80 /* NCCL reads GPU memory for sends by default from Ampere on */
#define GDR_NO_FLUSH_SM 90

int transport_net_gdr_decide(const transport_net_gdr_in_t* in, const char** why) {
  if (!in->deviceMem) {
    *why = "the executor runs on the host";
    return 0;
  }
  if (!(in->ptrSupport & NCCL_PTR_CUDA)) {
    *why = "the net plugin does not take CUDA pointers (no NCCL_PTR_CUDA)";
    return 0;
  }
  if (in->offload && !in->isSend) {
    *why = "the net device type lands receives in its own buffers";
    return 0;
  }
  if (in->gdrLevel == GDR_LEVEL_LOC) {
    *why = "NCCL_NET_GDR_LEVEL=LOC";
    return 0;
  }
  if (in->isSend && in->gdrRead == 0) {
    *why = "NCCL_NET_GDR_READ=0";
    return 0;
  }
  if (in->isSend && in->gdrRead < 0 && in->sm < GDR_READ_SM) {
    *why = "sends read GPU memory only from sm_80 on unless NCCL_NET_GDR_READ=1";
    return 0;
  }
  *why = "";
  return 1;
}

int transport_net_gdr_needs_flush(int sm, int forceFlushProp, int forceFlushParam) {
  return forceFlushProp || forceFlushParam || sm < GDR_NO_FLUSH_SM;
}
