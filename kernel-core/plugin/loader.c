/* Plugin selection: candidates in order, one log line and one record each
 * (loader.h). Opening a library is loader_open.c. */
#include "plugin/loader.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/err.h"
#include "base/log.h"
#include "base/param.h"
#include "plugin/loader_internal.h"
#include "plugin/manifest_set.h"

typedef struct {
  plugin_candidate_t* cands;
  int n;
  char note[PLUGIN_TEXT_MAX];
} loader_record_t;

static pthread_mutex_t loader_lock = PTHREAD_MUTEX_INITIALIZER;
static loader_record_t loader_records[PLUGIN_KIND_COUNT];

static const mkcclServices_v1 loader_services = {sizeof(mkcclServices_v1), log_write, param_int_lookup,
                                                 param_str_lookup};

const mkcclServices_v1* plugin_services(void) { return &loader_services; }

const char* plugin_outcome_text(plugin_outcome_t outcome) {
  switch (outcome) {
    case PLUGIN_TAKEN: return "taken";
    case PLUGIN_NOT_TRIED: return "not tried";
    case PLUGIN_FILE_MISSING: return "file missing";
    case PLUGIN_DLOPEN_ERROR: return "dlopen error";
    case PLUGIN_SYMBOL_MISSING: return "symbol missing";
    case PLUGIN_ABI_TOO_OLD: return "ABI too old";
    case PLUGIN_ABI_TOO_NEW: return "ABI too new";
    case PLUGIN_BAD_INFO: return "bad plugin info";
    case PLUGIN_MANIFEST_NAME_MISMATCH: return "name mismatch with the manifest";
    case PLUGIN_NAME_MISMATCH: return "name mismatch";
    case PLUGIN_BAD_OPTION: return "bad option";
    case PLUGIN_ADAPTER_BUSY: return "adapter busy";
    case PLUGIN_INIT_FAILED: return "init failed";
    case PLUGIN_NO_DEVICES: return "zero devices";
    case PLUGIN_REFUSED: return "refused";
  }
  return "unknown";
}

/* NCCL's name rule: a bare name that is not already "lib*.so" is also tried
 * as <prefix>-<name>.so. */
static void loader_spec_nccl(const plugin_kind_desc_t* d, const char* entry, loader_spec_t* s) {
  memset(s, 0, sizeof(*s));
  snprintf(s->origin, sizeof(s->origin), "%s", d->ncclEnv);
  snprintf(s->request, sizeof(s->request), "%s", entry);
  snprintf(s->names[s->nNames++], PATH_MAX, "%s", entry);
  size_t len = strlen(entry);
  int soname = strncmp(entry, "lib", 3) == 0 && len >= 3 && strcmp(entry + len - 3, ".so") == 0;
  if (!strchr(entry, '/') && !soname) snprintf(s->names[s->nNames++], PATH_MAX, "%s-%s.so", d->ncclPrefix, entry);
}

static ncclResult_t loader_spec_push(loader_spec_t** specs, int* n, int* cap, const loader_spec_t* s) {
  if (*n == *cap) {
    int grown = *cap ? *cap * 2 : 8;
    loader_spec_t* p = realloc(*specs, sizeof(*p) * (size_t)grown);
    if (!p) return MK_FAIL(ncclSystemError, "plugin loader: out of memory");
    *specs = p;
    *cap = grown;
  }
  (*specs)[(*n)++] = *s;
  return ncclSuccess;
}

/* The NCCL variable's candidates, then the manifests'. */
static ncclResult_t loader_specs_build(const plugin_kind_desc_t* d, const manifest_set_t* set, loader_spec_t** out,
                                       int* nOut, char* note, size_t noteSize) {
  loader_spec_t* specs = NULL;
  int n = 0, cap = 0;
  loader_spec_t s;
  ncclResult_t res = ncclSuccess;
  if (d->ncclEnv) {
    const char* value = d->ncclEnvValue();
    if (value && strcasecmp(value, "none") == 0) {
      snprintf(note, noteSize, "%s=none: no library named by NCCL's rules was tried", d->ncclEnv);
    } else if (!value || !*value) {
      char name[PATH_MAX];
      snprintf(name, sizeof(name), "%s.so", d->ncclPrefix);
      loader_spec_nccl(d, name, &s);
      snprintf(s.origin, sizeof(s.origin), "NCCL default name");
      MK_CHECK_GOTO(loader_spec_push(&specs, &n, &cap, &s), res, fail);
    } else {
      char* copy = strdup(value);
      if (!copy) {
        res = MK_FAIL(ncclSystemError, "plugin loader: out of memory");
        goto fail;
      }
      for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ') tok++;
        if (!*tok) continue;
        loader_spec_nccl(d, tok, &s);
        res = loader_spec_push(&specs, &n, &cap, &s);
        if (res != ncclSuccess) break;
      }
      free(copy);
      if (res != ncclSuccess) goto fail;
    }
  }
  for (int i = 0; i < set->nEntries; i++) {
    const manifest_entry_t* e = set->entries[i];
    if (e->kind != d->kind) continue;
    memset(&s, 0, sizeof(s));
    snprintf(s.origin, sizeof(s.origin), "manifest %s", e->where);
    snprintf(s.request, sizeof(s.request), "%s", e->library);
    snprintf(s.names[s.nNames++], PATH_MAX, "%s", e->path);
    s.entry = e;
    MK_CHECK_GOTO(loader_spec_push(&specs, &n, &cap, &s), res, fail);
  }
  *out = specs;
  *nOut = n;
  return ncclSuccess;
fail:
  free(specs);
  return res;
}

/* Plugin parameter tables live as long as the process's parameter table, and
 * the library may be unloaded: the table gets its own copy of each new
 * declaration's strings (names already declared keep their first one). */
static int loader_params_register(const mkcclPluginInfo_v1_t* info) {
  mkcclParamDecl_v1* decls = calloc((size_t)info->nParams + 1, sizeof(*decls));
  char* owner = strdup(info->name);
  int n = 0;
  if (!decls || !owner) goto oom;
  for (int i = 0; i < info->nParams; i++) {
    const mkcclParamDecl_v1* p = &info->params[i];
    const char* known = NULL;
    if (!p->name || param_str_lookup(p->name, &known) == 0) continue;
    mkcclParamDecl_v1* d = &decls[n];
    d->type = p->type;
    d->name = strdup(p->name);
    d->defaultValue = strdup(p->defaultValue ? p->defaultValue : "");
    d->help = strdup(p->help ? p->help : "");
    if (!d->name || !d->defaultValue || !d->help) goto oom;
    n++;
  }
  if (n) param_register(decls, n, owner); /* copies each declaration, keeps the strings */
  else free(owner);
  free(decls);
  return 0;
oom:
  for (int i = 0; decls && i <= n; i++) /* decls has room for n + 1 */
    free((char*)decls[i].name), free((char*)decls[i].defaultValue), free((char*)decls[i].help);
  free(decls);
  free(owner);
  MK_WARN("plugin %s: out of memory declaring its parameters", info->name);
  return -1;
}

/* The newest version a plugin exports is taken; when that is not the one its
 * manifest entry names and the named one is not exported at all, say so. */
static void loader_abi_note(const plugin_kind_desc_t* d, const loader_spec_t* s, const plugin_lib_t* lib,
                            plugin_candidate_t* c) {
  if (!s->entry || s->entry->abi == lib->abi) return;
  char symbol[96];
  snprintf(symbol, sizeof(symbol), d->symbolFamily, s->entry->abi);
  if (dlsym(lib->handle, symbol)) return;
  size_t used = strlen(c->reason);
  snprintf(c->reason + used, sizeof(c->reason) - used, "%s(the manifest says abi %d, %s is not exported)",
           used ? " " : "", s->entry->abi, symbol);
}

/* Everything after the file opened; 0 when the candidate is taken. */
static int loader_candidate_start(const plugin_kind_desc_t* d, const loader_spec_t* s, const plugin_select_t* how,
                                  plugin_lib_t* lib, plugin_candidate_t* c) {
  if (loader_lib_probe(d, lib, c)) return -1;
  if (s->entry && lib->info && strcmp(lib->info->name, s->entry->name) != 0) {
    c->outcome = PLUGIN_MANIFEST_NAME_MISMATCH;
    snprintf(c->reason, sizeof(c->reason), "the plugin calls itself '%s', the manifest entry '%s'", lib->info->name,
             s->entry->name);
    return -1;
  }
  if (how && how->filter && how->filter(lib, how->arg, c)) return -1;
  if (lib->info && loader_params_register(lib->info)) {
    c->outcome = PLUGIN_INIT_FAILED;
    snprintf(c->reason, sizeof(c->reason), "out of memory declaring its parameters");
    return -1;
  }
  if (s->entry) {
    const manifest_option_t* bad = manifest_entry_options_apply(s->entry);
    if (bad) {
      c->outcome = PLUGIN_BAD_OPTION;
      snprintf(c->reason, sizeof(c->reason), "%s: option '%s' is not a parameter of the core or of this plugin",
               bad->where, bad->name);
      return -1;
    }
  }
  if (lib->info && lib->info->bind) lib->info->bind(&loader_services);
  if (how && how->start && how->start(lib, how->arg, c)) return -1;
  c->outcome = PLUGIN_TAKEN;
  loader_abi_note(d, s, lib, c);
  return 0;
}

/* The one line a candidate gets: "NET/Plugin: <request> [<origin>]: <outcome> ...". */
static void loader_candidate_log(const plugin_kind_desc_t* d, const plugin_candidate_t* c) {
  char what[PLUGIN_NAME_MAX + 48] = "";
  if (c->name[0] && c->abi) snprintf(what, sizeof(what), " '%s' v%d", c->name, c->abi);
  else if (c->name[0]) snprintf(what, sizeof(what), " '%s'", c->name);
  else if (c->abi) snprintf(what, sizeof(what), " v%d", c->abi);
  MK_INFO(d->logFlags, "%s/Plugin: %s [%s]: %s%s%s%s", d->logName, c->request, c->origin,
          plugin_outcome_text(c->outcome), what, c->reason[0] ? ": " : "", c->reason);
}

static ncclResult_t loader_record_store(plugin_kind_t kind, plugin_candidate_t* cands, int n, const char* note) {
  pthread_mutex_lock(&loader_lock);
  free(loader_records[kind].cands);
  loader_records[kind].cands = cands;
  loader_records[kind].n = n;
  snprintf(loader_records[kind].note, sizeof(loader_records[kind].note), "%s", note);
  pthread_mutex_unlock(&loader_lock);
  return ncclSuccess;
}

ncclResult_t plugin_select(plugin_kind_t kind, const plugin_select_t* how, plugin_lib_t*** libs, int* nLibs) {
  const plugin_kind_desc_t* d = plugin_kind_desc(kind);
  if (!d || !libs || !nLibs) return MK_FAIL(ncclInvalidArgument, "plugin_select: bad arguments");
  const manifest_set_t* set = NULL;
  MK_CHECK(manifest_set_get(&set));
  char note[PLUGIN_TEXT_MAX] = "";
  loader_spec_t* specs = NULL;
  int nSpecs = 0;
  MK_CHECK(loader_specs_build(d, set, &specs, &nSpecs, note, sizeof(note)));
  if (note[0]) MK_INFO(d->logFlags, "%s/Plugin: %s", d->logName, note);
  plugin_candidate_t* cands = calloc(nSpecs ? (size_t)nSpecs : 1, sizeof(*cands));
  plugin_lib_t** taken = calloc(nSpecs ? (size_t)nSpecs : 1, sizeof(*taken));
  ncclResult_t res = ncclSuccess;
  int nTaken = 0;
  if (!cands || !taken) {
    res = MK_FAIL(ncclSystemError, "plugin loader: out of memory");
    goto fail;
  }
  for (int i = 0; i < nSpecs; i++) {
    const loader_spec_t* s = &specs[i];
    plugin_candidate_t* c = &cands[i];
    c->kind = kind;
    snprintf(c->origin, sizeof(c->origin), "%s", s->origin);
    snprintf(c->request, sizeof(c->request), "%s", s->request);
    if (s->entry) snprintf(c->manifestName, sizeof(c->manifestName), "%s", s->entry->name);
    if (nTaken && !(how && how->takeAll)) {
      c->outcome = PLUGIN_NOT_TRIED;
      snprintf(c->reason, sizeof(c->reason), "'%s' was taken before it", taken[0]->name);
      loader_candidate_log(d, c);
      continue;
    }
    plugin_lib_t* lib = calloc(1, sizeof(*lib));
    if (!lib) {
      res = MK_FAIL(ncclSystemError, "plugin loader: out of memory");
      goto fail;
    }
    lib->kind = kind;
    lib->entry = s->entry;
    if (loader_lib_open(s, lib, c) == 0 && loader_candidate_start(d, s, how, lib, c) == 0) {
      taken[nTaken++] = lib;
    } else {
      if (lib->handle) dlclose(lib->handle);
      free(lib);
    }
    loader_candidate_log(d, c);
  }
  free(specs);
  loader_record_store(kind, cands, nSpecs, note);
  *libs = taken;
  *nLibs = nTaken;
  return ncclSuccess;
fail:
  plugin_libs_close(taken, nTaken);
  free(cands);
  free(specs);
  return res;
}

ncclResult_t plugin_kind_load_first(plugin_kind_t kind, plugin_lib_t** lib) {
  plugin_lib_t** libs = NULL;
  int n = 0;
  MK_CHECK(plugin_select(kind, NULL, &libs, &n));
  *lib = n ? libs[0] : NULL;
  free(libs);
  return ncclSuccess;
}

ncclResult_t plugin_kind_load_all(plugin_kind_t kind, plugin_lib_t*** libs, int* nLibs) {
  plugin_select_t how = {NULL, NULL, NULL, 1};
  return plugin_select(kind, &how, libs, nLibs);
}

void plugin_lib_close(plugin_lib_t* lib) {
  if (!lib) return;
  if (lib->handle) dlclose(lib->handle);
  free(lib);
}

void plugin_libs_close(plugin_lib_t** libs, int nLibs) {
  if (!libs) return;
  for (int i = 0; i < nLibs; i++) plugin_lib_close(libs[i]);
  free(libs);
}

ncclResult_t plugin_candidates_get(plugin_kind_t kind, plugin_candidate_t** cands, int* n, char* note,
                                   size_t noteSize) {
  if ((int)kind < 0 || kind >= PLUGIN_KIND_COUNT || !cands || !n)
    return MK_FAIL(ncclInvalidArgument, "plugin_candidates_get: bad arguments");
  ncclResult_t res = ncclSuccess;
  pthread_mutex_lock(&loader_lock);
  const loader_record_t* r = &loader_records[kind];
  plugin_candidate_t* copy = calloc(r->n ? (size_t)r->n : 1, sizeof(*copy));
  if (copy) {
    if (r->n) memcpy(copy, r->cands, sizeof(*copy) * (size_t)r->n);
    *cands = copy;
    *n = r->n;
    if (note && noteSize) snprintf(note, noteSize, "%s", r->note);
  }
  pthread_mutex_unlock(&loader_lock);
  if (!copy) res = MK_FAIL(ncclSystemError, "plugin loader: out of memory");
  return res;
}
