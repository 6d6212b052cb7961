/* The collnet plugin: selection hooks (enabled, adapter, init, devices) and
 * the one refcounted instance (collnet.h). */
#include "plugin/collnet.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/err.h"
#include "base/log.h"
#include "base/param.h"

static pthread_mutex_t collnet_lock = PTHREAD_MUTEX_INITIALIZER;
static plugin_collnet_t* collnet_loaded;

typedef struct {
  const ncclCollNet_v12_t* collnet;
  void* ctx;
  int ndev;
} collnet_start_t;

/* Off, the candidates are still opened and listed, so mkccl-info shows what
 * NCCL_COLLNET_ENABLE=1 would load; none runs any code of its own. */
static int collnet_filter(const plugin_lib_t* lib, void* arg, plugin_candidate_t* c) {
  (void)lib, (void)arg;
  if (param_NCCL_COLLNET_ENABLE() == 1) return 0;
  c->outcome = PLUGIN_REFUSED;
  snprintf(c->reason, sizeof(c->reason), "collnet is off (NCCL_COLLNET_ENABLE=%lld)",
           (long long)param_NCCL_COLLNET_ENABLE());
  return -1;
}

static int collnet_start(plugin_lib_t* lib, void* arg, plugin_candidate_t* c) {
  collnet_start_t* st = arg;
  const plugin_adapter_t* adapter = lib->abiDesc->adapter;
  const void* presented = NULL;
  if (adapter->wrap(lib->symbol, &presented) != ncclSuccess) {
    c->outcome = PLUGIN_ADAPTER_BUSY;
    snprintf(c->reason, sizeof(c->reason), "the ABI v%d adapter holds another collnet plugin (one per old version)",
             lib->abi);
    return -1;
  }
  const ncclCollNet_v12_t* cn = presented;
  void* ctx = NULL;
  int ndev = 0;
  ncclResult_t res;
  if (plugin_start_table(c, cn->init && cn->devices && cn->getProperties) ||
      plugin_start_init(c, cn->init(&ctx, 0, log_write)))
    goto unwrap;
  res = cn->devices(&ndev);
  if (plugin_start_devices(c, lib, res, ndev)) goto finalize;
  st->collnet = cn;
  st->ctx = ctx;
  st->ndev = ndev;
  return 0;
finalize:
  if (cn->finalize) cn->finalize(ctx);
unwrap:
  adapter->unwrap();
  return -1;
}

static ncclResult_t collnet_load_locked(plugin_collnet_t** out) {
  collnet_start_t st = {NULL, NULL, 0};
  plugin_select_t how = {collnet_filter, collnet_start, &st, 0};
  plugin_lib_t** libs = NULL;
  int nLibs = 0;
  MK_CHECK(plugin_select(PLUGIN_KIND_COLLNET, &how, &libs, &nLibs));
  plugin_lib_t* lib = nLibs ? libs[0] : NULL;
  free(libs);
  if (!lib) {
    if (param_NCCL_COLLNET_ENABLE() != 1)
      return MK_FAIL(ncclInvalidUsage, "no collnet plugin is loaded: collnet is off (NCCL_COLLNET_ENABLE=%lld)",
                     (long long)param_NCCL_COLLNET_ENABLE());
    return MK_FAIL(ncclSystemError, "no collnet plugin could be loaded (COLLNET/Plugin lines or mkccl-info say why)");
  }
  plugin_collnet_t* cn = calloc(1, sizeof(*cn));
  if (!cn) {
    if (st.collnet->finalize) st.collnet->finalize(st.ctx);
    lib->abiDesc->adapter->unwrap();
    plugin_lib_close(lib);
    return MK_FAIL(ncclSystemError, "collnet plugin: out of memory");
  }
  cn->collnet = st.collnet;
  cn->ctx = st.ctx;
  cn->name = lib->name;
  cn->path = lib->path;
  cn->abi = lib->abi;
  cn->ndev = st.ndev;
  cn->lib = lib;
  MK_INFO(NCCL_INIT | NCCL_NET, "COLLNET: '%s' (ABI v%d) loaded with %d device%s", cn->name, cn->abi, cn->ndev,
          cn->ndev == 1 ? "" : "s");
  *out = cn;
  return ncclSuccess;
}

ncclResult_t plugin_collnet_acquire(plugin_collnet_t** out) {
  if (!out) return MK_FAIL(ncclInvalidArgument, "plugin_collnet_acquire: out is NULL");
  pthread_mutex_lock(&collnet_lock);
  ncclResult_t res = ncclSuccess;
  if (!collnet_loaded) res = collnet_load_locked(&collnet_loaded);
  if (res == ncclSuccess) {
    collnet_loaded->refs++;
    *out = collnet_loaded;
  }
  pthread_mutex_unlock(&collnet_lock);
  return res;
}

ncclResult_t plugin_collnet_release(plugin_collnet_t* cn) {
  if (!cn) return MK_FAIL(ncclInvalidArgument, "plugin_collnet_release: cn is NULL");
  pthread_mutex_lock(&collnet_lock);
  if (cn != collnet_loaded || cn->refs <= 0) {
    pthread_mutex_unlock(&collnet_lock);
    return MK_FAIL(ncclInvalidUsage, "plugin_collnet_release: not an acquired collnet plugin");
  }
  if (--cn->refs == 0) {
    collnet_loaded = NULL;
    if (cn->collnet->finalize) cn->collnet->finalize(cn->ctx);
    cn->lib->abiDesc->adapter->unwrap();
    plugin_lib_close(cn->lib);
    free(cn);
  }
  pthread_mutex_unlock(&collnet_lock);
  return ncclSuccess;
}
