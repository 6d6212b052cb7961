/* Reading a plugin's own parameters, from inside the plugin.
 *
 * Under mkccl the core answers (environment, manifest options, config, in
 * that order of precedence as the core decides). Hosted by NCCL there is no
 * core to ask: then, and only then, the value comes straight from the
 * environment, else the declared default. This header is the one place a
 * plugin's code touches the environment.
 *
 * Use: define the plugin's `mkcclParamDecl_v1` table, call
 * plugin_params_bind() from the info's `bind`, read with plugin_param_int(). */
#ifndef MKCCL_ABI_PLUGIN_PARAMS_H
#define MKCCL_ABI_PLUGIN_PARAMS_H

#include <stdlib.h>
#include <string.h>

#include "mkccl_plugin_v1.h"

typedef struct {
  const mkcclServices_v1* services; /* NULL when hosted by NCCL */
  const mkcclParamDecl_v1* decls;
  int nDecls;
} plugin_params_t;

static inline const mkcclParamDecl_v1* plugin_params_decl(const plugin_params_t* p, const char* name) {
  for (int i = 0; i < p->nDecls; i++)
    if (strcmp(p->decls[i].name, name) == 0) return &p->decls[i];
  return NULL;
}

static inline const char* plugin_param_str(const plugin_params_t* p, const char* name) {
  const char* value = NULL;
  if (p->services && p->services->paramString && p->services->paramString(name, &value) == 0) return value;
  if (!p->services) {
    value = getenv(name); /* standalone (hosted by NCCL): see the header comment */
    if (value) return value;
  }
  const mkcclParamDecl_v1* d = plugin_params_decl(p, name);
  return d ? d->defaultValue : NULL;
}

static inline int64_t plugin_param_int(const plugin_params_t* p, const char* name) {
  int64_t value = 0;
  if (p->services && p->services->paramInt64 && p->services->paramInt64(name, &value) == 0) return value;
  const char* text = p->services ? NULL : getenv(name);
  if (!text || !*text) {
    const mkcclParamDecl_v1* d = plugin_params_decl(p, name);
    text = d ? d->defaultValue : NULL;
  }
  return text ? strtoll(text, NULL, 0) : 0;
}

/* Typed accessors over a plugin's own table, kept in an X-macro file of
 * PLUGIN_PARAM(NAME, INT64|STRING, "default", "help") lines, so a misspelt
 * name does not build. The table: `#define PLUGIN_PARAM PLUGIN_PARAM_DECL`
 * around its #include; an accessor:
 *   #define PLUGIN_PARAM(n, t, d, h) PLUGIN_PARAM_DEFINE(my_param_, &my_params, n, t)
 * A STRING accessor never returns NULL. */
#define PLUGIN_PARAM_DECL(name, type, def, help) {#name, MKCCL_PARAM_##type, def, help},
#define PLUGIN_PARAM_CTYPE_INT64 int64_t
#define PLUGIN_PARAM_CTYPE_STRING const char*
#define PLUGIN_PARAM_READ_INT64 plugin_param_int
#define PLUGIN_PARAM_READ_STRING plugin_param_text
#define PLUGIN_PARAM_PROTO(prefix, name, type) PLUGIN_PARAM_CTYPE_##type prefix##name(void);
#define PLUGIN_PARAM_DEFINE(prefix, params, name, type) \
  PLUGIN_PARAM_CTYPE_##type prefix##name(void) { return PLUGIN_PARAM_READ_##type(params, #name); }

static inline const char* plugin_param_text(const plugin_params_t* p, const char* name) {
  const char* value = plugin_param_str(p, name);
  return value ? value : "";
}

#endif
