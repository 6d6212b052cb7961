/* The plugin loader: which libraries are candidates for a kind, in what
 * order, and what became of each.
 *
 * Candidates, in order:
 *  1. The NCCL variable of the kind (NCCL_NET_PLUGIN for net and collnet,
 *     NCCL_TUNER_PLUGIN, NCCL_PROFILER_PLUGIN), NCCL's rules: a comma list,
 *     each entry dlopen'ed as written (path or soname) and, if that finds
 *     nothing and the entry is a bare name, as <prefix>-<entry>.so
 *     (libnccl-net-<entry>.so ...). Unset: <prefix>.so (libnccl-net.so).
 *     "none": no candidate from the variable.
 *  2. The manifests' entries of the kind, priority high to low (manifest_set.h).
 *
 * Each candidate is opened (RTLD_NOW | RTLD_LOCAL), its kind symbol looked up
 * newest version first, then, for plugins exporting mkcclPluginInfo_v1, its
 * parameters declared, its manifest options applied and its bind() called
 * with the core's services, and the kind's own start hook run (net: adapter,
 * init, devices; collnet: the same once NCCL_COLLNET_ENABLE=1). Every
 * candidate gets one INFO line, "taken" or why not, and a
 * plugin_candidate_t record kept per kind for mkccl-info.
 *
 * Thread-safe; the records of a kind are those of its last selection. */
#ifndef MKCCL_PLUGIN_LOADER_H
#define MKCCL_PLUGIN_LOADER_H

#include <limits.h>

#include "mkccl_plugin_v1.h"
#include "nccl.h"
#include "plugin/kind.h"
#include "plugin/manifest.h"

#define PLUGIN_TEXT_MAX 320
#define PLUGIN_NAME_MAX 64

typedef enum {
  PLUGIN_TAKEN = 0,
  PLUGIN_NOT_TRIED,              /* an earlier candidate was taken */
  PLUGIN_FILE_MISSING,
  PLUGIN_DLOPEN_ERROR,
  PLUGIN_SYMBOL_MISSING,         /* no symbol of the kind at all */
  PLUGIN_ABI_TOO_OLD,            /* only versions older than the core loads */
  PLUGIN_ABI_TOO_NEW,            /* only versions newer than the core loads */
  PLUGIN_BAD_INFO,               /* mkcclPluginInfo_v1 present but malformed */
  PLUGIN_MANIFEST_NAME_MISMATCH, /* mkcclPluginInfo_v1 name != the manifest's name */
  PLUGIN_NAME_MISMATCH,          /* not the name asked for (NCCL_NET, config netName) */
  PLUGIN_BAD_OPTION,             /* a manifest option names no parameter */
  PLUGIN_ADAPTER_BUSY,           /* the adapter of its version holds another plugin */
  PLUGIN_INIT_FAILED,
  PLUGIN_NO_DEVICES,
  PLUGIN_REFUSED,                /* loads, but what it reports is not acceptable (net device version) */
} plugin_outcome_t;

/* "taken", "file missing", ... */
const char* plugin_outcome_text(plugin_outcome_t outcome);

typedef struct {
  plugin_kind_t kind;
  char origin[PLUGIN_TEXT_MAX];      /* "NCCL_NET_PLUGIN", "NCCL default name", "manifest f.yaml:3:5" */
  char request[PATH_MAX];            /* the library as asked for */
  char path[PATH_MAX];               /* the file opened, "" when none was */
  char manifestName[PLUGIN_NAME_MAX]; /* the manifest entry's name, "" for NCCL-named ones */
  char name[PLUGIN_NAME_MAX];        /* the name the plugin reports, "" when not read */
  int abi;                           /* version of the symbol found, 0 when none */
  plugin_outcome_t outcome;
  char reason[PLUGIN_TEXT_MAX];      /* why not taken; details when taken */
} plugin_candidate_t;

/* A loaded plugin library. */
typedef struct {
  plugin_kind_t kind;
  void* handle;                    /* from dlopen */
  char path[PATH_MAX];             /* file it was loaded from */
  char name[PLUGIN_NAME_MAX];      /* the kind struct's `name` (NCCL kinds), else the info's */
  int abi;                         /* version of the symbol found */
  const void* symbol;              /* the exported table, raw */
  const plugin_abi_t* abiDesc;     /* its version's descriptor: symbol name, adapter */
  const mkcclPluginInfo_v1_t* info;  /* NULL for plugins built for NCCL */
  const manifest_entry_t* entry;   /* NULL when named by an NCCL variable */
} plugin_lib_t;

/* A kind module's hooks into the generic selection. Each returns 0 to go on,
 * or sets c->outcome and c->reason (and undoes its own work) to skip. */
typedef struct {
  /* Before bind: the plugin has run no code yet. */
  int (*filter)(const plugin_lib_t* lib, void* arg, plugin_candidate_t* c);
  /* After bind: start the plugin; on success c->reason may get details. */
  int (*start)(plugin_lib_t* lib, void* arg, plugin_candidate_t* c);
  void* arg;
  int takeAll; /* every loadable candidate, not just the first */
} plugin_select_t;

/* start_judge.c: a net-like plugin's start (net, collnet). 0 to go on, or
 * c's outcome and reason set and -1: the table lacks init, devices or
 * getProperties; init failed; devices() failed or found none (on success
 * the reason names the devices and the symbol). */
int plugin_start_table(plugin_candidate_t* c, int complete);
int plugin_start_init(plugin_candidate_t* c, ncclResult_t res);
int plugin_start_devices(plugin_candidate_t* c, const plugin_lib_t* lib, ncclResult_t res, int ndev);

/* Runs the selection of `kind`; *libs (malloc'd, close with plugin_libs_close)
 * gets what was taken, possibly nothing. Fails only on a bad manifest
 * (ncclInvalidUsage) or a system error. */
ncclResult_t plugin_select(plugin_kind_t kind, const plugin_select_t* how, plugin_lib_t*** libs, int* nLibs);

/* Generic selections, for kinds without an adapter: the raw symbol and its
 * version. *lib is NULL when nothing loads. For net and collnet use
 * plugin_net_acquire (net.h) and plugin_collnet_acquire (collnet.h), which
 * also adapt and initialize. */
ncclResult_t plugin_kind_load_first(plugin_kind_t kind, plugin_lib_t** lib);
/* Every loadable plugin of the kind (transports, net devices). */
ncclResult_t plugin_kind_load_all(plugin_kind_t kind, plugin_lib_t*** libs, int* nLibs);

void plugin_lib_close(plugin_lib_t* lib);
void plugin_libs_close(plugin_lib_t** libs, int nLibs);

/* A copy of the kind's candidate records from its last selection (*n = 0 when
 * it never ran); free(*cands). `note` (may be NULL) gets remarks such as
 * "NCCL_NET_PLUGIN=none". */
ncclResult_t plugin_candidates_get(plugin_kind_t kind, plugin_candidate_t** cands, int* n, char* note,
                                   size_t noteSize);

/* The services table handed to plugins' bind(). */
const mkcclServices_v1* plugin_services(void);

#endif
