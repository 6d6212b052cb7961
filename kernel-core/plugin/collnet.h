/* The collnet plugin, for the rest of the core.
 *
 *   plugin_collnet_t* cn;
 *   MK_CHECK(plugin_collnet_acquire(&cn));
 *   cn->collnet->getProperties(dev, &props);   // always ABI v12
 *   ...
 *   plugin_collnet_release(cn);
 *
 * Process-wide and refcounted: the first acquire selects one (loader.h: the
 * candidates of kind collnet, NCCL_NET_PLUGIN's libraries first), adapts it
 * to v12, runs its init with the loader's own ctx and wants devices > 0; the
 * last release finalizes and unloads it. Users call init/finalize for their
 * own ctx. Members NULL in the v12 table are not supported by the plugin.
 *
 * Only with NCCL_COLLNET_ENABLE=1: otherwise every candidate is recorded as
 * refused and acquire fails. Host communicators acquire it for the CollNet
 * AllReduce (kernel-core/collnet/collnet.h). Thread-safe. */
#ifndef MKCCL_PLUGIN_COLLNET_H
#define MKCCL_PLUGIN_COLLNET_H

#include "collnet/nccl_collnet.h"
#include "plugin/loader.h"

typedef struct plugin_collnet {
  const ncclCollNet_v12_t* collnet; /* the plugin, through ABI v12 */
  void* ctx;                        /* the loader's context */
  const char* name;                 /* the name the plugin reports */
  const char* path;                 /* the library file */
  int abi;                          /* the version it exports (ncclCollNetPlugin_v<abi>) */
  int ndev;                         /* devices() when it was loaded */
  /* private */
  plugin_lib_t* lib;
  int refs;
} plugin_collnet_t;

/* Errors: ncclInvalidUsage when NCCL_COLLNET_ENABLE is not 1 or a manifest
 * is bad, ncclSystemError when no collnet plugin loads. */
ncclResult_t plugin_collnet_acquire(plugin_collnet_t** out);
ncclResult_t plugin_collnet_release(plugin_collnet_t* cn);

#endif
