/* The descriptor of every plugin kind. Net, collnet, tuner and profiler
 * have adapters to their newest version; transport and net-device have one
 * version each and the loader hands back the raw symbol. */
#include "plugin/kind.h"

#include <string.h>

#include "base/param.h"
#include "nccl_common.h"
#include "plugin/collnet_adapt.h"
#include "plugin/net_adapt.h"
#include "profile/profile_adapt.h"
#include "tune/tune_adapt.h"

static const plugin_abi_t kind_net_abis[] = {
    {12, "ncclNetPlugin_v12", &net_adapt_v12}, {11, "ncclNetPlugin_v11", &net_adapt_v11},
    {10, "ncclNetPlugin_v10", &net_adapt_v10}, {9, "ncclNetPlugin_v9", &net_adapt_v9},
    {8, "ncclNetPlugin_v8", &net_adapt_v8},    {7, "ncclNetPlugin_v7", &net_adapt_v7},
    {6, "ncclNetPlugin_v6", &net_adapt_v6},
};
static const plugin_abi_t kind_collnet_abis[] = {
    {12, "ncclCollNetPlugin_v12", &collnet_adapt_v12}, {11, "ncclCollNetPlugin_v11", &collnet_adapt_v11},
    {10, "ncclCollNetPlugin_v10", &collnet_adapt_v10}, {9, "ncclCollNetPlugin_v9", &collnet_adapt_v9},
    {8, "ncclCollNetPlugin_v8", &collnet_adapt_v8},    {7, "ncclCollNetPlugin_v7", &collnet_adapt_v7},
    {6, "ncclCollNetPlugin_v6", &collnet_adapt_v6},
};
static const plugin_abi_t kind_transport_abis[] = {{1, "mkcclTransportPlugin_v1", NULL}};
static const plugin_abi_t kind_net_device_abis[] = {{1, "mkcclNetDevicePlugin_v1", NULL}};
static const plugin_abi_t kind_tuner_abis[] = {
    {6, "ncclTunerPlugin_v6", &tune_adapt_v6}, {5, "ncclTunerPlugin_v5", &tune_adapt_v5},
    {4, "ncclTunerPlugin_v4", &tune_adapt_v4}, {3, "ncclTunerPlugin_v3", &tune_adapt_v3},
    {2, "ncclTunerPlugin_v2", &tune_adapt_v2},
};
static const plugin_abi_t kind_profiler_abis[] = {
    {6, "ncclProfiler_v6", &profile_adapt_v6}, {5, "ncclProfiler_v5", &profile_adapt_v5},
    {4, "ncclProfiler_v4", &profile_adapt_v4}, {3, "ncclProfiler_v3", &profile_adapt_v3},
    {2, "ncclProfiler_v2", &profile_adapt_v2}, {1, "ncclProfiler_v1", &profile_adapt_v1},
};

#define ABIS(a) a, (int)(sizeof(a) / sizeof(a[0]))

/* Collnet lives in the net plugin's library under NCCL, so NCCL_NET_PLUGIN
 * names its candidates too. */
static const plugin_kind_desc_t kind_descs[PLUGIN_KIND_COUNT] = {
    {PLUGIN_KIND_NET, "net", "NET", NCCL_INIT | NCCL_NET, "ncclNetPlugin_v%d", ABIS(kind_net_abis),
     "NCCL_NET_PLUGIN", "libnccl-net", 1, param_NCCL_NET_PLUGIN},
    {PLUGIN_KIND_COLLNET, "collnet", "COLLNET", NCCL_INIT | NCCL_NET, "ncclCollNetPlugin_v%d",
     ABIS(kind_collnet_abis), "NCCL_NET_PLUGIN", "libnccl-net", 1, param_NCCL_NET_PLUGIN},
    {PLUGIN_KIND_TRANSPORT, "transport", "TRANSPORT", NCCL_INIT, "mkcclTransportPlugin_v%d",
     ABIS(kind_transport_abis), NULL, NULL, 0, NULL},
    {PLUGIN_KIND_NET_DEVICE, "net-device", "NETDEV", NCCL_INIT | NCCL_NET, "mkcclNetDevicePlugin_v%d",
     ABIS(kind_net_device_abis), NULL, NULL, 0, NULL},
    {PLUGIN_KIND_TUNER, "tuner", "TUNER", NCCL_INIT | NCCL_TUNING, "ncclTunerPlugin_v%d", ABIS(kind_tuner_abis),
     "NCCL_TUNER_PLUGIN", "libnccl-tuner", 1, param_NCCL_TUNER_PLUGIN},
    {PLUGIN_KIND_PROFILER, "profiler", "PROFILER", NCCL_INIT, "ncclProfiler_v%d", ABIS(kind_profiler_abis),
     "NCCL_PROFILER_PLUGIN", "libnccl-profiler", 1, param_NCCL_PROFILER_PLUGIN},
};

const plugin_kind_desc_t* plugin_kind_desc(plugin_kind_t kind) {
  if ((int)kind < 0 || kind >= PLUGIN_KIND_COUNT) return NULL;
  return &kind_descs[kind];
}

int plugin_kind_parse(const char* text, plugin_kind_t* kind) {
  for (int k = 0; k < PLUGIN_KIND_COUNT; k++) {
    if (strcmp(text, kind_descs[k].name) == 0) {
      *kind = (plugin_kind_t)k;
      return 0;
    }
  }
  return -1;
}

const char* plugin_kind_names(void) { return "net, collnet, transport, net-device, tuner, profiler"; }
