/* Plugin manifests: YAML files that say which plugins exist.
 *
 *   mkccl-manifest: 1                  # format version (required)
 *   plugins:                           # list (required, may be [])
 *     - name: net-socket               # unique in the file; letters, digits, - _ .
 *       kind: net                      # net, collnet, transport, net-device, tuner, profiler
 *       abi: 11                        # ABI version it exports, one the core loads for that kind
 *       library: libmkccl-net-socket.so  # relative to the manifest's folder, or absolute
 *       priority: 10                   # optional, default 0; higher is tried first
 *       options:                       # optional: parameter values, below the environment
 *         NCCL_SOCKET_NTHREADS: 2
 *
 * Anything else is an error naming file:line:col and what was expected; a
 * bad manifest is never half-read. Parsing is pure: nothing is applied here
 * (manifest_set.h applies options and merges files). */
#ifndef MKCCL_PLUGIN_MANIFEST_H
#define MKCCL_PLUGIN_MANIFEST_H

#include "nccl.h"
#include "plugin/kind.h"

#define MANIFEST_FORMAT_VERSION 1

typedef struct {
  char* name;  /* parameter name */
  char* value; /* as text */
  char* where; /* "file:line:col" of the option */
} manifest_option_t;

typedef struct {
  char* name;
  plugin_kind_t kind;
  int abi;
  char* library; /* as written */
  char* path;    /* absolute as written, else joined to the manifest's folder */
  int priority;
  manifest_option_t* options;
  int nOptions;
  char* where; /* "file:line:col" of the entry */
} manifest_entry_t;

typedef struct {
  char* path; /* as given (shown in messages), or "<embedded default>" */
  char* dir;  /* folder relative libraries resolve against */
  manifest_entry_t* entries;
  int nEntries;
} manifest_t;

/* Parse `len` bytes of YAML; `path` names it in messages, `dir` anchors
 * relative library paths. Errors: ncclInvalidUsage, text "path:line:col: ..."
 * (also the last error). */
ncclResult_t manifest_text_parse(const char* text, size_t len, const char* path, const char* dir,
                                 manifest_t** out);
/* Read and parse a file; relative libraries resolve against its folder. */
ncclResult_t manifest_file_parse(const char* path, manifest_t** out);
void manifest_free(manifest_t* m);

#endif
