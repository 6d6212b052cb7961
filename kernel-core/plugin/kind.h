/* Plugin kinds and their descriptors: for each kind, the ABI versions the
 * core loads (newest first) with the symbol each exports and the adapter
 * that presents an older version through the newest one, plus NCCL's naming
 * rules for the kind's libraries. The loader (loader.h) is generic over
 * these descriptors. */
#ifndef MKCCL_PLUGIN_KIND_H
#define MKCCL_PLUGIN_KIND_H

#include "nccl.h"

typedef enum {
  PLUGIN_KIND_NET = 0,
  PLUGIN_KIND_COLLNET,
  PLUGIN_KIND_TRANSPORT,
  PLUGIN_KIND_NET_DEVICE,
  PLUGIN_KIND_TUNER,
  PLUGIN_KIND_PROFILER,
  PLUGIN_KIND_COUNT
} plugin_kind_t;

/* Presents a plugin table of one version as the kind's newest version.
 * wrap may refuse (one plugin per old version at a time, see net_adapt.h);
 * unwrap undoes a successful wrap. */
typedef struct {
  ncclResult_t (*wrap)(const void* plugin, const void** presented);
  void (*unwrap)(void);
} plugin_adapter_t;

typedef struct {
  int version;
  const char* symbol;               /* e.g. "ncclNetPlugin_v9" */
  const plugin_adapter_t* adapter;  /* NULL: not written yet, callers get the raw symbol */
} plugin_abi_t;

typedef struct {
  plugin_kind_t kind;
  const char* name;          /* manifest spelling: "net", "net-device" */
  const char* logName;       /* log prefix: "NET" */
  unsigned long logFlags;    /* NCCL_INIT | the kind's subsystem */
  const char* symbolFamily;  /* printf format of the symbol, to name versions not loaded */
  const plugin_abi_t* abis;  /* newest first */
  int nAbis;
  const char* ncclEnv;       /* NCCL variable naming libraries tried first, or NULL */
  const char* ncclPrefix;    /* NCCL library prefix: "<prefix>.so", "<prefix>-<name>.so" */
  int nameFirst;             /* the kind's struct starts with `const char* name` */
  const char* (*ncclEnvValue)(void); /* ncclEnv's typed accessor, or NULL */
} plugin_kind_desc_t;

const plugin_kind_desc_t* plugin_kind_desc(plugin_kind_t kind);
/* 0 and *kind for a manifest spelling, -1 otherwise. */
int plugin_kind_parse(const char* text, plugin_kind_t* kind);
/* "net, collnet, transport, net-device, tuner, profiler" */
const char* plugin_kind_names(void);

static inline int plugin_kind_min_abi(const plugin_kind_desc_t* d) { return d->abis[d->nAbis - 1].version; }
static inline int plugin_kind_max_abi(const plugin_kind_desc_t* d) { return d->abis[0].version; }

#endif
