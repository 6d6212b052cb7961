/* Loading the transport plugins (once per process) and starting them for a
 * communicator. The core knows transports only through the ABI: their names
 * come from the plugins, and each gets a NCCL_<NAME>_DISABLE switch. */
#include <ctype.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "base/err.h"
#include "base/param.h"
#include "comm/comm.h"
#include "plugin/loader.h"
#include "transport/transport.h"

static pthread_mutex_t transport_lock = PTHREAD_MUTEX_INITIALIZER;
static plugin_lib_t** transport_libs;
static int transport_nlibs = -1;

/* NCCL_<NAME>_DISABLE, NAME the transport's own name in capitals (P2P,
 * SHM, NET...), declared per transport as it loads. */
static void transport_switch_name(const char* tname, char* out, size_t size) {
  char upper[32];
  size_t i = 0;
  for (; tname[i] && i < sizeof(upper) - 1; i++) upper[i] = (char)toupper((unsigned char)tname[i]);
  upper[i] = '\0';
  snprintf(out, size, "NCCL_%s_DISABLE", upper);
}

static ncclResult_t transport_libs_load(void) {
  ncclResult_t res = ncclSuccess;
  pthread_mutex_lock(&transport_lock);
  if (transport_nlibs < 0) {
    plugin_lib_t** libs = NULL;
    int n = 0;
    MK_CHECK_GOTO(plugin_kind_load_all(PLUGIN_KIND_TRANSPORT, &libs, &n), res, out);
    int kept = 0;
    for (int i = 0; i < n; i++) {
      const mkcclTransport_v1* t = libs[i]->symbol;
      if (t->size < MKCCL_TRANSPORT_V1_MIN_SIZE || t->abiVersion != MKCCL_TRANSPORT_ABI_V1 || !t->name || !t->init) {
        MK_WARN("Transport plugin %s: malformed mkcclTransportPlugin_v1 (size %zu, abi %d), skipped", libs[i]->path,
                t->size, t->abiVersion);
        plugin_lib_close(libs[i]);
        continue;
      }
      static char names[8][48];
      static mkcclParamDecl_v1 decls[8];
      if (kept < 8) {
        transport_switch_name(t->name, names[kept], sizeof(names[kept]));
        decls[kept] = (mkcclParamDecl_v1){names[kept], MKCCL_PARAM_INT64, "0", "Do not use this transport"};
        param_register(&decls[kept], 1, t->name);
        libs[kept++] = libs[i];
      } else {
        plugin_lib_close(libs[i]);
      }
    }
    transport_libs = libs;
    transport_nlibs = kept;
  }
out:
  pthread_mutex_unlock(&transport_lock);
  return res;
}

ncclResult_t transport_set_init(struct ncclComm* comm, transport_set_t* set) {
  MK_CHECK(transport_libs_load());
  if (transport_nlibs == 0)
    return MK_FAIL(ncclSystemError, "No transport plugin could be loaded (see the plugin lines of NCCL_DEBUG=INFO)");
  MK_CHECK(transport_services_fill(comm, &set->services));
  set->n = 0;
  for (int i = 0; i < transport_nlibs && set->n < 8; i++) {
    const mkcclTransport_v1* t = transport_libs[i]->symbol;
    transport_entry_t* e = &set->entries[set->n];
    char sw[48];
    transport_switch_name(t->name, sw, sizeof(sw));
    e->t = t;
    e->disabled = param_int(sw) != 0;
    e->tctx = NULL;
    ncclResult_t res = t->init(&set->services, &e->tctx);
    if (res != ncclSuccess) {
      MK_WARN("Transport %s: init failed (%d), not used", t->name, res);
      continue;
    }
    MK_INFO(NCCL_INIT, "Transport %s %s", t->name, e->disabled ? "disabled by its switch" : "ready");
    set->n++;
  }
  return ncclSuccess;
}

/* A transport's stats, where it exports them (appended to the ABI). */
static int transport_entry_stats(const transport_entry_t* e, mkcclTransportStats_v1* st) {
  const mkcclTransport_v1* t = e->t;
  if (t->size < offsetof(mkcclTransport_v1, stats) + sizeof(t->stats) || !t->stats) return 0;
  memset(st, 0, sizeof(*st));
  st->size = sizeof(*st);
  return t->stats(e->tctx, st) == ncclSuccess;
}

void transport_set_report(const transport_set_t* set) {
  for (int i = 0; i < set->n; i++) {
    mkcclTransportStats_v1 st;
    if (!transport_entry_stats(&set->entries[i], &st) || (st.conns == 0 && st.offsetSteps == 0)) continue;
    MK_INFO(NCCL_INIT, "rank %d: transport-%s holds %llu bytes of staging (%d pools, %d connections), %llu steps in OFFSET mode",
            set->services.rank, set->entries[i].t->name, (unsigned long long)st.stagingBytes, (int)st.pools,
            (int)st.conns, (unsigned long long)st.offsetSteps);
  }
}

void transport_set_mem_deregister(const transport_set_t* set, void* base, size_t size) {
  for (int i = 0; i < set->n; i++) {
    const mkcclTransport_v1* t = set->entries[i].t;
    if (t->size >= offsetof(mkcclTransport_v1, memDeregister) + sizeof(t->memDeregister) && t->memDeregister)
      t->memDeregister(set->entries[i].tctx, base, size);
  }
}

void transport_set_fini(transport_set_t* set) {
  transport_set_report(set); /* what OFFSET mode moved, once the connections are gone */
  for (int i = set->n - 1; i >= 0; i--)
    if (set->entries[i].t->finalize) set->entries[i].t->finalize(set->entries[i].tctx);
  set->n = 0;
}
