/* mkccl plugin info, ABI v1: what any mkccl plugin (of any kind) may export
 * beside its kind's own symbol, and the services table the core hands it.
 *
 * A plugin built for NCCL exports only its kind's symbol and still loads. A
 * plugin of ours exports `mkcclPluginInfo_v1` too: the core reads its
 * parameter table (so `mkccl-info` lists and the environment, the manifest and
 * the config set them) and binds the services table before the kind's `init`.
 * Frozen: fields are only ever appended; `size` says how many are present. */
#ifndef MKCCL_ABI_PLUGIN_V1_H
#define MKCCL_ABI_PLUGIN_V1_H

#include <stddef.h>
#include <stdint.h>

#include "nccl_common.h"

#define MKCCL_PLUGIN_INFO_SYMBOL "mkcclPluginInfo_v1"
#define MKCCL_PLUGIN_ABI_VERSION 1

typedef enum { MKCCL_PARAM_INT64 = 0, MKCCL_PARAM_STRING = 1 } mkcclParamType_v1;

/* One parameter a plugin reads: declared once, here, with its default. */
typedef struct {
  const char* name;         /* e.g. "NCCL_SOCKET_NTHREADS" */
  mkcclParamType_v1 type;
  const char* defaultValue; /* as text; parsed by the core as `type` */
  const char* help;
} mkcclParamDecl_v1;

typedef struct mkcclServices_v1 {
  size_t size;
  ncclDebugLogger_t log;
  /* Value of a parameter this plugin declared (or a core parameter).
   * Return 0 and set *value, or -1 when the name is unknown. */
  int (*paramInt64)(const char* name, int64_t* value);
  int (*paramString)(const char* name, const char** value);
} mkcclServices_v1;

typedef struct {
  size_t size;                  /* sizeof(mkcclPluginInfo_v1_t) of the plugin's build */
  int abiVersion;               /* MKCCL_PLUGIN_ABI_VERSION */
  const char* name;             /* plugin name = folder name, e.g. "net-socket" */
  const char* version;          /* the plugin's own version */
  const mkcclParamDecl_v1* params;
  int nParams;
  /* Called by the core before the kind's init; may be NULL. */
  void (*bind)(const mkcclServices_v1* services);
} mkcclPluginInfo_v1_t;

#endif
