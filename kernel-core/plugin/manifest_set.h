/* The process's manifests, read once: the default manifest, then those of
 * MKCCL_MANIFEST in the order listed.
 *
 * The default ships with the library and is found next to it, with no
 * environment variable: <folder of libmkccl.so or libnccl.so.2>/mkccl/
 * manifest.yaml (dladdr on a core symbol). When that file is absent the copy
 * built into the library is used ("the embedded default"), its relative
 * libraries still resolved against that folder.
 *
 * A later manifest's entry replaces an earlier entry of the same name. A bad
 * manifest fails the whole set (ncclInvalidUsage, "file:line:col: ..."), every
 * time it is asked for. Options naming parameters already declared are applied
 * when the set is read; the loader applies the rest once the plugin has
 * declared its own (manifest_entry_options_apply). */
#ifndef MKCCL_PLUGIN_MANIFEST_SET_H
#define MKCCL_PLUGIN_MANIFEST_SET_H

#include <limits.h>

#include "plugin/manifest.h"
#include "plugin/program.h"

#define MANIFEST_EMBEDDED_NAME "<embedded default>"

typedef struct {
  manifest_t** manifests; /* the default first */
  int nManifests;
  int defaultEmbedded;              /* the default is the built-in copy */
  char defaultPath[PATH_MAX];       /* where the default file is (or was looked for) */
  const manifest_entry_t** entries; /* after replacements; priority high to low, then order read */
  int nEntries;
} manifest_set_t;

ncclResult_t manifest_set_get(const manifest_set_t** out);

/* Sets the entry's options whose parameters are declared; returns the first
 * option naming an undeclared parameter, or NULL when all were set. */
const manifest_option_t* manifest_entry_options_apply(const manifest_entry_t* e);

/* The manifest text compiled into the library (generated at build time from
 * the default manifest: kernel-core/plugin/manifest_head.yaml and the
 * plugins' manifest.yaml, kernel-core/plugin/manifest.cmake). */
extern const char manifest_embedded_text[];
extern const unsigned long manifest_embedded_size;

#endif
