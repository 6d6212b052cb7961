/* mkcclInfoReport: what mkccl-info prints (include/mkccl_info.h). */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/param.h"
#include "dp/dp_topo.h"
#include "mkccl_info.h"
#include "netdev/netdev.h"
#include "plugin/collnet.h"
#include "plugin/loader.h"
#include "plugin/manifest_set.h"
#include "plugin/net.h"
#include "topo/topo.h"

static void info_version(FILE* out) {
  int code = 0;
  ncclGetVersion(&code);
  fprintf(out, "mkccl %d.%d.%d, NCCL API %d.%d.%d (version code %d)\n", MKCCL_MAJOR, MKCCL_MINOR, MKCCL_PATCH,
          code / 10000, (code % 10000) / 100, code % 100, code);
}

static ncclResult_t info_manifests(FILE* out) {
  const manifest_set_t* set = NULL;
  MK_CHECK(manifest_set_get(&set));
  fprintf(out, "\nManifests (in the order read; later entries replace earlier ones of the same name)\n");
  for (int i = 0; i < set->nManifests; i++) {
    const manifest_t* m = set->manifests[i];
    if (i == 0 && set->defaultEmbedded)
      fprintf(out, "  default         %s (no %s; libraries under %s)\n", m->path, set->defaultPath, m->dir);
    else
      fprintf(out, "  %-15s %s\n", i == 0 ? "default" : "MKCCL_MANIFEST", m->path);
    for (int j = 0; j < m->nEntries; j++) {
      const manifest_entry_t* e = &m->entries[j];
      fprintf(out, "    %-14s %-10s abi %-3d priority %-4d %s\n", e->name, plugin_kind_desc(e->kind)->name, e->abi,
              e->priority, e->path);
    }
  }
  return ncclSuccess;
}

/* Runs each kind's selection, as the core would, so the records are fresh. */
static ncclResult_t info_plugins_load(void) {
  /* No net plugin is a finding to report, not a failure of the report. */
  plugin_net_t* net = NULL;
  if (plugin_net_acquire(NULL, &net) == ncclSuccess) plugin_net_release(net);
  /* Collnet as the core would take it: enabled, adapted, init, devices. */
  plugin_collnet_t* cn = NULL;
  if (plugin_collnet_acquire(&cn) == ncclSuccess) plugin_collnet_release(cn);
  const plugin_kind_t firsts[] = {PLUGIN_KIND_TUNER, PLUGIN_KIND_PROFILER};
  for (size_t i = 0; i < sizeof(firsts) / sizeof(firsts[0]); i++) {
    plugin_lib_t* lib = NULL;
    MK_CHECK(plugin_kind_load_first(firsts[i], &lib));
    plugin_lib_close(lib);
  }
  plugin_lib_t** libs = NULL;
  int n = 0;
  MK_CHECK(plugin_kind_load_all(PLUGIN_KIND_TRANSPORT, &libs, &n));
  plugin_libs_close(libs, n);
  /* Net devices as communicators take them: checked type and version. */
  return netdev_plugins_load();
}

static ncclResult_t info_plugins(FILE* out) {
  MK_CHECK(info_plugins_load());
  fprintf(out, "\nPlugins (every candidate in the order tried)\n");
  for (int k = 0; k < PLUGIN_KIND_COUNT; k++) {
    plugin_candidate_t* cands = NULL;
    int n = 0;
    char note[PLUGIN_TEXT_MAX];
    MK_CHECK(plugin_candidates_get((plugin_kind_t)k, &cands, &n, note, sizeof(note)));
    const plugin_candidate_t* taken = NULL;
    for (int i = 0; i < n && !taken; i++)
      if (cands[i].outcome == PLUGIN_TAKEN) taken = &cands[i];
    fprintf(out, "  %s: ", plugin_kind_desc((plugin_kind_t)k)->name);
    if (taken)
      fprintf(out, "'%s' (ABI v%d) from %s\n", taken->name, taken->abi, taken->path);
    else
      fprintf(out, "none%s\n", n ? "" : " (no candidates)");
    if (note[0]) fprintf(out, "    note: %s\n", note);
    if (k == PLUGIN_KIND_COLLNET && param_NCCL_COLLNET_ENABLE() != 1)
      fprintf(out, "    note: collnet is off (NCCL_COLLNET_ENABLE=%lld): candidates are listed, none is loaded\n",
              (long long)param_NCCL_COLLNET_ENABLE());
    if (k == PLUGIN_KIND_COLLNET && taken)
      fprintf(out, "    note: loaded: host communicators may run AllReduce through it (CollNetDirect)\n");
    for (int i = 0; i < n; i++) {
      const plugin_candidate_t* c = &cands[i];
      fprintf(out, "    %d. %s [%s]: %s", i + 1, c->request, c->origin, plugin_outcome_text(c->outcome));
      if (c->name[0]) fprintf(out, " '%s'", c->name);
      if (c->abi) fprintf(out, " v%d", c->abi);
      if (c->reason[0]) fprintf(out, ": %s", c->reason);
      fputc('\n', out);
    }
    free(cands);
  }
  return ncclSuccess;
}

/* The machine as communicators see it: CPUs and NUMA domains, the PCI
 * tree, the GPUs of the CUDA driver and the devices of the net plugin a
 * communicator would take, and the paths between them. */
static ncclResult_t info_topology(FILE* out) {
  plugin_net_t* net = NULL;
  if (plugin_net_acquire(NULL, &net) != ncclSuccess) net = NULL;
  const topo_system_t* sys = NULL;
  ncclResult_t res = dp_topo_for_net(net ? net->net : NULL, &sys);
  fprintf(out, "\nTopology (NICs: %s)\n", net ? net->name : "none, no net plugin loaded");
  if (res == ncclSuccess) topo_print(sys, out);
  else fprintf(out, "  not available: %s\n", ncclGetLastError(NULL));
  if (net) plugin_net_release(net);
  return ncclSuccess;
}

static const char* info_source(param_source_t source, const char* where) {
  return source == PARAM_FROM_DEFAULT ? "default" : source == PARAM_FROM_ENV ? "environment" : where;
}

typedef struct {
  FILE* out;
  param_level_t maxLevel;
} info_params_arg_t;

/* A parameter someone set is shown whatever its level: it changes the run. */
static void info_param(const param_decl_t* d, const char* value, param_source_t source, const char* where,
                       void* arg) {
  const info_params_arg_t* a = arg;
  if (d->level > a->maxLevel && source == PARAM_FROM_DEFAULT) return;
  fprintf(a->out, "  %-28s = %-20s [%s]", d->name, value ? value : "", info_source(source, where));
  if (d->owner && strcmp(d->owner, "core") != 0) fprintf(a->out, " (%s)", d->owner);
  if (d->level != PARAM_LEVEL_USER) fprintf(a->out, " <%s>", param_level_name(d->level));
  fprintf(a->out, "\n      %s\n", d->help ? d->help : "");
}

static void info_params(FILE* out, unsigned sections) {
  info_params_arg_t a = {out, (sections & MKCCL_INFO_PARAMS_DEVELOPER) ? PARAM_LEVEL_DEVELOPER
                              : (sections & MKCCL_INFO_PARAMS_EXPERT)  ? PARAM_LEVEL_EXPERT
                                                                       : PARAM_LEVEL_USER};
  fprintf(out, "\nParameters (%s; value [source]; environment > manifest option > default)\n",
          a.maxLevel == PARAM_LEVEL_DEVELOPER ? "all levels"
          : a.maxLevel == PARAM_LEVEL_EXPERT  ? "user and expert level, and any set"
                                              : "user level and any set; --params=expert or --params=all for more");
  param_foreach(info_param, &a);
}

__attribute__((visibility("default"))) ncclResult_t mkcclInfoReport(FILE* out, unsigned sections) {
  if (!out) return MK_FAIL(ncclInvalidArgument, "mkcclInfoReport: out is NULL");
  if (sections & MKCCL_INFO_VERSION) info_version(out);
  if (sections & (MKCCL_INFO_MANIFESTS | MKCCL_INFO_PLUGINS)) {
    const manifest_set_t* set = NULL;
    MK_CHECK(manifest_set_get(&set));
  }
  if (sections & MKCCL_INFO_MANIFESTS) MK_CHECK(info_manifests(out));
  if (sections & MKCCL_INFO_PLUGINS) MK_CHECK(info_plugins(out));
  if (sections & MKCCL_INFO_TOPOLOGY) MK_CHECK(info_topology(out));
  if (sections & MKCCL_INFO_PARAMS) info_params(out, sections);
  return ncclSuccess;
}
