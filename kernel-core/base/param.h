/* The parameter table: every tunable, declared once with name, type, default
 * and help. The core's own declarations live in `<module>/params.def` files
 * gathered by param_tables.c; plugins bring theirs in mkcclPluginInfo_v1.
 *
 * Value precedence: environment, then a manifest option, then the default.
 * (Per-communicator ncclConfig_t fields are applied by the communicator on
 * top, where NCCL has such a field.) Lookups read the environment each time,
 * so tests and tools see current values; hot paths keep their own copy. */
#ifndef MKCCL_BASE_PARAM_H
#define MKCCL_BASE_PARAM_H

#include <stdint.h>

#include "mkccl_plugin_v1.h"

typedef enum { PARAM_FROM_DEFAULT = 0, PARAM_FROM_MANIFEST = 1, PARAM_FROM_ENV = 2 } param_source_t;

/* Who a parameter is for; mkccl-info --params lists USER unless asked for
 * more. USER: NCCL's documented knobs and what a user sets; EXPERT:
 * performance tuning; DEVELOPER: test and diagnosis switches. */
typedef enum { PARAM_LEVEL_USER = 0, PARAM_LEVEL_EXPERT = 1, PARAM_LEVEL_DEVELOPER = 2 } param_level_t;

/* Declarations the table holds at most (core and plugins together). */
#define PARAM_TABLE_MAX 512

typedef struct {
  const char* name;
  mkcclParamType_v1 type;
  const char* defaultValue;
  const char* help;
  const char* owner; /* "core" or the plugin's name */
  param_level_t level;
} param_decl_t;

/* Declare a plugin's parameters; names already declared keep their first
 * declaration. ABI v1 carries no level: a plugin's NCCL_* names (NCCL's own
 * knobs) are USER, the rest EXPERT. */
void param_register(const mkcclParamDecl_v1* decls, int n, const char* owner);

/* The declaration of `name`, or NULL when undeclared. Declarations stay
 * where they are for the life of the process. */
const param_decl_t* param_decl_find(const char* name);

/* By name: for names only known at run time (plugins' parameters); the
 * core's own are read with the typed accessors below. */
int64_t param_int(const char* name);
const char* param_str(const char* name); /* NULL when unset and no default */
/* 0 and *value when known; -1 for an undeclared name. */
int param_int_lookup(const char* name, int64_t* value);
int param_str_lookup(const char* name, const char** value);

/* A manifest's `options:` entry; `where` is "file:line:col". */
int param_option_set(const char* name, const char* value, const char* where);

param_source_t param_source(const char* name, const char** where);

/* Every declared parameter in declaration order. */
typedef void (*param_visit_fn)(const param_decl_t* decl, const char* value, param_source_t source,
                               const char* where, void* arg);
void param_foreach(param_visit_fn visit, void* arg);

const char* param_level_name(param_level_t level); /* "user", "expert", "developer" */

/* Typed accessors, one per core MK_PARAM line, so a misspelt name does not
 * build: param_NCCL_P2P_DISABLE() is an int64_t, param_NCCL_DEBUG_FILE() a
 * const char* (never NULL); PARAM_ID_<name> names it for param_core_source. */
typedef enum {
#define MK_PARAM(name, type, level, def, help) PARAM_ID_##name,
#include "base/params_core.def"
#undef MK_PARAM
  PARAM_CORE_COUNT
} param_id_t;

int64_t param_core_int(param_id_t id);
const char* param_core_str(param_id_t id);
param_source_t param_core_source(param_id_t id, const char** where);

#define PARAM_CTYPE_INT64 int64_t
#define PARAM_CTYPE_STRING const char*
#define PARAM_READ_INT64 param_core_int
#define PARAM_READ_STRING param_core_str
#define MK_PARAM(name, type, level, def, help) \
  static inline PARAM_CTYPE_##type param_##name(void) { return PARAM_READ_##type(PARAM_ID_##name); }
#include "base/params_core.def"
#undef MK_PARAM

#endif
