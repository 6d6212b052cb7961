/* The net plugin, for the rest of the core.
 *
 *   plugin_net_t* net;
 *   MK_CHECK(plugin_net_acquire(config->netName, &net));   // NULL: NCCL_NET, else any
 *   net->net->getProperties(dev, &props);                  // always ABI v12
 *   ...
 *   plugin_net_release(net);
 *
 * Process-wide and refcounted: a plugin is loaded (selected as loader.h says,
 * adapted to v12, init once with the loader's own ctx, devices > 0) on the
 * first acquire that needs it and unloaded when its last user releases it.
 * Communicators still call net->net->init/finalize for their own ctx; for
 * plugins older than v11 the adapter runs the plugin's init only once
 * (net_adapt.h). Members NULL in the v12 table are not supported by the
 * plugin. Thread-safe. */
#ifndef MKCCL_PLUGIN_NET_H
#define MKCCL_PLUGIN_NET_H

#include "net/nccl_net.h"
#include "plugin/loader.h"

typedef struct plugin_net {
  const ncclNet_v12_t* net; /* the plugin, through ABI v12 */
  void* ctx;                /* the loader's context (comms make their own) */
  const char* name;         /* the name the plugin reports */
  const char* path;         /* the library file */
  int abi;                  /* the version it exports (ncclNetPlugin_v<abi>) */
  int ndev;                 /* devices() when it was loaded */
  int maxRequests;          /* outstanding requests per comm it accepts */
  /* private */
  plugin_lib_t* lib;
  int refs;
  int isDefault; /* loaded for an acquire that named no net */
} plugin_net_t;

/* netName NULL or "": NCCL_NET when set, else the first loadable plugin.
 * Otherwise only a plugin reporting that name (case-insensitive) is taken;
 * the others are skipped with "name mismatch". Errors: ncclInvalidUsage for a
 * bad manifest or when no plugin has the name asked for, ncclSystemError
 * when no net plugin loads at all. */
ncclResult_t plugin_net_acquire(const char* netName, plugin_net_t** out);
ncclResult_t plugin_net_release(plugin_net_t* net);

#endif
