/* Net plugins: selection hooks (name, adapter, init, devices) and the
 * process-wide refcounted list of loaded ones (net.h). */
#include "plugin/net.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/err.h"
#include "base/log.h"
#include "base/param.h"
#include "profile/profile.h"
#include "plugin/net_adapt.h"

#define NET_MAX_LOADED 16

static pthread_mutex_t net_lock = PTHREAD_MUTEX_INITIALIZER;
static plugin_net_t* net_loaded[NET_MAX_LOADED];

typedef struct {
  const char* wanted; /* NULL: any name */
  const ncclNet_v12_t* net;
  void* ctx;
  int ndev;
} net_start_t;

static int net_filter(const plugin_lib_t* lib, void* arg, plugin_candidate_t* c) {
  const net_start_t* st = arg;
  if (!st->wanted || strcasecmp(st->wanted, lib->name) == 0) return 0;
  c->outcome = PLUGIN_NAME_MISMATCH;
  snprintf(c->reason, sizeof(c->reason), "reports '%s', '%s' was asked for", lib->name, st->wanted);
  return -1;
}

static int net_start(plugin_lib_t* lib, void* arg, plugin_candidate_t* c) {
  net_start_t* st = arg;
  const plugin_adapter_t* adapter = lib->abiDesc->adapter;
  const void* presented = NULL;
  if (adapter->wrap(lib->symbol, &presented) != ncclSuccess) {
    c->outcome = PLUGIN_ADAPTER_BUSY;
    snprintf(c->reason, sizeof(c->reason), "the ABI v%d adapter holds another net plugin (one per old version)",
             lib->abi);
    return -1;
  }
  const ncclNet_v12_t* net = presented;
  void* ctx = NULL;
  int ndev = 0;
  ncclResult_t res;
  ncclNetCommConfig_v12_t config = {NCCL_NET_TRAFFIC_CLASS_UNDEF};
  if (plugin_start_table(c, net->init && net->devices && net->getProperties) ||
      plugin_start_init(c, net->init(&ctx, 0, &config, log_write, profile_net_callback)))
    goto unwrap;
  res = net->devices(&ndev);
  if (plugin_start_devices(c, lib, res, ndev)) goto finalize;
  st->net = net;
  st->ctx = ctx;
  st->ndev = ndev;
  return 0;
finalize:
  if (net->finalize) net->finalize(ctx);
unwrap:
  adapter->unwrap();
  return -1;
}

static plugin_net_t* net_find_locked(const char* wanted) {
  for (int i = 0; i < NET_MAX_LOADED; i++) {
    plugin_net_t* n = net_loaded[i];
    if (n && (wanted ? strcasecmp(n->name, wanted) == 0 : n->isDefault)) return n;
  }
  return NULL;
}

static void net_unload(plugin_net_t* n) {
  if (n->net->finalize) n->net->finalize(n->ctx);
  n->lib->abiDesc->adapter->unwrap();
  plugin_lib_close(n->lib);
  free(n);
}

static ncclResult_t net_load_locked(const char* wanted, plugin_net_t** out) {
  int slot = 0;
  while (slot < NET_MAX_LOADED && net_loaded[slot]) slot++;
  if (slot == NET_MAX_LOADED) return MK_FAIL(ncclInvalidUsage, "more than %d net plugins loaded", NET_MAX_LOADED);
  net_start_t st = {wanted, NULL, NULL, 0};
  plugin_select_t how = {net_filter, net_start, &st, 0};
  plugin_lib_t** libs = NULL;
  int nLibs = 0;
  MK_CHECK(plugin_select(PLUGIN_KIND_NET, &how, &libs, &nLibs));
  plugin_lib_t* lib = nLibs ? libs[0] : NULL;
  free(libs);
  if (!lib) {
    if (wanted)
      return MK_FAIL(ncclInvalidUsage, "no net plugin named '%s' could be loaded (NET/Plugin lines or mkccl-info say why)",
                     wanted);
    return MK_FAIL(ncclSystemError, "no net plugin could be loaded (NET/Plugin lines or mkccl-info say why)");
  }
  plugin_net_t* n = calloc(1, sizeof(*n));
  if (!n) {
    if (st.net->finalize) st.net->finalize(st.ctx);
    lib->abiDesc->adapter->unwrap();
    plugin_lib_close(lib);
    return MK_FAIL(ncclSystemError, "net plugin: out of memory");
  }
  n->net = st.net;
  n->ctx = st.ctx;
  n->name = lib->name;
  n->path = lib->path;
  n->abi = lib->abi;
  n->ndev = st.ndev;
  n->maxRequests = net_adapt_max_requests(lib->abi);
  n->lib = lib;
  n->isDefault = wanted == NULL;
  net_loaded[slot] = n;
  *out = n;
  return ncclSuccess;
}

ncclResult_t plugin_net_acquire(const char* netName, plugin_net_t** out) {
  if (!out) return MK_FAIL(ncclInvalidArgument, "plugin_net_acquire: out is NULL");
  const char* wanted = (netName && *netName) ? netName : param_NCCL_NET();
  if (wanted && !*wanted) wanted = NULL;
  pthread_mutex_lock(&net_lock);
  ncclResult_t res = ncclSuccess;
  plugin_net_t* n = net_find_locked(wanted);
  if (!n) res = net_load_locked(wanted, &n);
  if (res == ncclSuccess) {
    n->refs++;
    *out = n;
  }
  pthread_mutex_unlock(&net_lock);
  return res;
}

ncclResult_t plugin_net_release(plugin_net_t* net) {
  if (!net) return MK_FAIL(ncclInvalidArgument, "plugin_net_release: net is NULL");
  pthread_mutex_lock(&net_lock);
  int slot = 0;
  while (slot < NET_MAX_LOADED && net_loaded[slot] != net) slot++;
  if (slot == NET_MAX_LOADED || net->refs <= 0) {
    pthread_mutex_unlock(&net_lock);
    return MK_FAIL(ncclInvalidUsage, "plugin_net_release: not an acquired net plugin");
  }
  if (--net->refs == 0) {
    net_loaded[slot] = NULL;
    net_unload(net);
  }
  pthread_mutex_unlock(&net_lock);
  return ncclSuccess;
}
