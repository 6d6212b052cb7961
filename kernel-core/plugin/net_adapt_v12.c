/* Net ABI v12 is what the core uses: the plugin's table as it is. */
#include "plugin/net_adapt_common.h"

static ncclResult_t v12_wrap(const void* plugin, const void** presented) {
  *presented = plugin;
  return ncclSuccess;
}

static void v12_unwrap(void) {}

const plugin_adapter_t net_adapt_v12 = {v12_wrap, v12_unwrap};
