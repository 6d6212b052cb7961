/* Collnet ABI v12 is what the core uses: the plugin's table as it is. */
#include "plugin/collnet_adapt.h"

static ncclResult_t v12_wrap(const void* plugin, const void** presented) {
  *presented = plugin;
  return ncclSuccess;
}

static void v12_unwrap(void) {}

const plugin_adapter_t collnet_adapt_v12 = {v12_wrap, v12_unwrap};
