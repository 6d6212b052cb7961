/* Opening one candidate library and finding what it exports. */
#include <dlfcn.h>
#include <link.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "plugin/loader_internal.h"

/* Versions looked for to call a plugin "too new" (only when it exports none
 * we load): cheap dlsym calls, and ABI versions are small numbers. */
#define LOADER_VERSION_SCAN_MAX 255

/* dlerror() names the file it could not find; a missing dependency names the
 * dependency instead, which is a dlopen error of this candidate. */
static int loader_error_is_missing(const char* error, const char* name) {
  return strstr(error, name) && strstr(error, "No such file or directory");
}

int loader_lib_open(const loader_spec_t* spec, plugin_lib_t* lib, plugin_candidate_t* c) {
  char tried[PLUGIN_TEXT_MAX] = "";
  for (int i = 0; i < spec->nNames; i++) {
    const char* name = spec->names[i];
    size_t used = strlen(tried);
    snprintf(tried + used, sizeof(tried) - used, "%s%s", used ? ", " : "", name);
    if (strchr(name, '/') && access(name, F_OK) != 0) continue;
    dlerror();
    void* handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* error = dlerror();
      if (!error) error = "unknown dlopen error";
      if (loader_error_is_missing(error, name)) continue;
      c->outcome = PLUGIN_DLOPEN_ERROR;
      snprintf(c->path, sizeof(c->path), "%s", name);
      snprintf(c->reason, sizeof(c->reason), "%s", error);
      return -1;
    }
    struct link_map* map = NULL;
    const char* path = (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name)
                           ? map->l_name
                           : name;
    lib->handle = handle;
    snprintf(lib->path, sizeof(lib->path), "%s", path);
    snprintf(c->path, sizeof(c->path), "%s", path);
    return 0;
  }
  c->outcome = PLUGIN_FILE_MISSING;
  snprintf(c->reason, sizeof(c->reason), "tried %s", tried);
  return -1;
}

/* The kind's symbol of a version the core does not load, if any. */
static int loader_other_version(const plugin_kind_desc_t* d, void* handle, int* version) {
  char symbol[128];
  for (int v = LOADER_VERSION_SCAN_MAX; v > plugin_kind_max_abi(d); v--) {
    snprintf(symbol, sizeof(symbol), d->symbolFamily, v);
    if (dlsym(handle, symbol)) return *version = v, 1;
  }
  for (int v = plugin_kind_min_abi(d) - 1; v >= 0; v--) {
    snprintf(symbol, sizeof(symbol), d->symbolFamily, v);
    if (dlsym(handle, symbol)) return *version = v, 1;
  }
  return 0;
}

static int loader_symbol_find(const plugin_kind_desc_t* d, plugin_lib_t* lib, plugin_candidate_t* c) {
  for (int i = 0; i < d->nAbis; i++) {
    const void* symbol = dlsym(lib->handle, d->abis[i].symbol);
    if (!symbol) continue; /* older versions are probed in turn: not an error */
    lib->symbol = symbol;
    lib->abi = d->abis[i].version;
    lib->abiDesc = &d->abis[i];
    c->abi = lib->abi;
    return 0;
  }
  char first[96], last[96];
  snprintf(first, sizeof(first), d->symbolFamily, plugin_kind_max_abi(d));
  snprintf(last, sizeof(last), d->symbolFamily, plugin_kind_min_abi(d));
  int other = 0;
  if (loader_other_version(d, lib->handle, &other)) {
    char found[96];
    snprintf(found, sizeof(found), d->symbolFamily, other);
    c->outcome = other > plugin_kind_max_abi(d) ? PLUGIN_ABI_TOO_NEW : PLUGIN_ABI_TOO_OLD;
    snprintf(c->reason, sizeof(c->reason), "exports %s; this mkccl loads v%d..v%d", found, plugin_kind_min_abi(d),
             plugin_kind_max_abi(d));
  } else {
    c->outcome = PLUGIN_SYMBOL_MISSING;
    if (d->nAbis == 1)
      snprintf(c->reason, sizeof(c->reason), "no %s", first);
    else
      snprintf(c->reason, sizeof(c->reason), "none of %s .. %s", first, last);
  }
  return -1;
}

static int loader_info_find(plugin_lib_t* lib, plugin_candidate_t* c) {
  const mkcclPluginInfo_v1_t* info = dlsym(lib->handle, MKCCL_PLUGIN_INFO_SYMBOL);
  if (!info) return 0;
  const char* bad = NULL;
  if (info->size < offsetof(mkcclPluginInfo_v1_t, bind) + sizeof(info->bind)) bad = "size too small";
  else if (info->abiVersion != MKCCL_PLUGIN_ABI_VERSION) bad = "abiVersion is not 1";
  else if (!info->name || !*info->name) bad = "no name";
  else if (info->nParams < 0 || (info->nParams > 0 && !info->params)) bad = "bad parameter table";
  if (bad) {
    c->outcome = PLUGIN_BAD_INFO;
    snprintf(c->reason, sizeof(c->reason), "%s: %s", MKCCL_PLUGIN_INFO_SYMBOL, bad);
    return -1;
  }
  lib->info = info;
  return 0;
}

int loader_lib_probe(const plugin_kind_desc_t* d, plugin_lib_t* lib, plugin_candidate_t* c) {
  if (loader_symbol_find(d, lib, c) || loader_info_find(lib, c)) return -1;
  const char* name = NULL;
  if (d->nameFirst) name = *(const char* const*)lib->symbol;
  if (!name && lib->info) name = lib->info->name;
  snprintf(lib->name, sizeof(lib->name), "%s", name ? name : "");
  snprintf(c->name, sizeof(c->name), "%s", lib->name);
  return 0;
}
