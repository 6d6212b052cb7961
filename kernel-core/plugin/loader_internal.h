/* Between loader.c (selection) and loader_open.c (opening one library). */
#ifndef MKCCL_PLUGIN_LOADER_INTERNAL_H
#define MKCCL_PLUGIN_LOADER_INTERNAL_H

#include "plugin/loader.h"

/* One candidate before it is tried: the file names to try, in order. */
typedef struct {
  char origin[PLUGIN_TEXT_MAX];
  char request[PATH_MAX];
  char names[2][PATH_MAX];
  int nNames;
  const manifest_entry_t* entry;
} loader_spec_t;

/* dlopen the first of spec's names that exists; 0 and lib->handle/path set,
 * else c->outcome FILE_MISSING or DLOPEN_ERROR. */
int loader_lib_open(const loader_spec_t* spec, plugin_lib_t* lib, plugin_candidate_t* c);
/* Find the kind's symbol (newest version first) and mkcclPluginInfo_v1;
 * 0 and lib->symbol/abi/name/info set, else c->outcome says why. */
int loader_lib_probe(const plugin_kind_desc_t* d, plugin_lib_t* lib, plugin_candidate_t* c);

#endif
