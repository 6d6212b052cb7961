/* The GPUDirect RDMA decision (transport_net_gdr.h), NCCL's rules: the
 * plugin must take CUDA pointers, and the NIC be no farther from the GPU
 * than NCCL_NET_GDR_LEVEL (unset: PXB, one PCIe switch tree; a GPU whose
 * NIC hangs off its C2C-linked CPU, P2C, counts as near too). A distance
 * the core cannot tell leaves it to the plugin. */
#include <stdio.h>

#include "net/nccl_net.h"
#include "transport_net_gdr.h"

#define GDR_LEVEL_LOC 0
#define GDR_PATH_PXB 5
#define GDR_PATH_P2C 6
#define GDR_READ_SM 80 /* NCCL reads GPU memory for sends by default from Ampere on */
#define GDR_NO_FLUSH_SM 90

static const char* gdr_path_name(int type) {
  static const char* names[] = {"LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS", "NET", "DIS"};
  return type >= 0 && type < (int)(sizeof(names) / sizeof(names[0])) ? names[type] : "?";
}

static int gdr_no(char* why, int len, const char* text) {
  snprintf(why, (size_t)len, "%s", text);
  return 0;
}

int transport_net_gdr_decide(const transport_net_gdr_in_t* in, char* why, int len) {
  if (!in->deviceMem) return gdr_no(why, len, "the executor runs on the host");
  if (!(in->ptrSupport & NCCL_PTR_CUDA)) return gdr_no(why, len, "the net plugin does not take CUDA pointers (no NCCL_PTR_CUDA)");
  if (in->offload && !in->isSend) return gdr_no(why, len, "the net device type lands receives in its own buffers");
  if (in->gdrLevel == GDR_LEVEL_LOC) return gdr_no(why, len, "NCCL_NET_GDR_LEVEL=LOC");
  int level = in->gdrLevel >= 0 ? in->gdrLevel : in->path == GDR_PATH_P2C ? GDR_PATH_P2C : GDR_PATH_PXB;
  if (in->path > level) {
    snprintf(why, (size_t)len, "the NIC is %s from the GPU, farther than NCCL_NET_GDR_LEVEL%s %s", gdr_path_name(in->path),
             in->gdrLevel >= 0 ? "" : "'s default", gdr_path_name(level));
    return 0;
  }
  if (in->isSend && in->gdrRead == 0) return gdr_no(why, len, "NCCL_NET_GDR_READ=0");
  if (in->isSend && in->gdrRead < 0 && in->sm < GDR_READ_SM)
    return gdr_no(why, len, "sends read GPU memory only from sm_80 on unless NCCL_NET_GDR_READ=1");
  if (in->path < 0) snprintf(why, (size_t)len, "GPU-NIC distance unknown");
  else snprintf(why, (size_t)len, "the NIC is %s from the GPU", gdr_path_name(in->path));
  return 1;
}

int transport_net_gdr_needs_flush(int sm, int forceFlushProp, int forceFlushParam) {
  return forceFlushProp || forceFlushParam || sm < GDR_NO_FLUSH_SM;
}
