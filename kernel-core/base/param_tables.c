/* Gathers every core module's params.def into the one parameter table. */
#include <stddef.h>

#include "base/param.h"

#define MK_PARAM(name, type, level, def, help) {#name, MKCCL_PARAM_##type, def, help, "core", PARAM_LEVEL_##level},
static const param_decl_t param_core_decls[] = {
#include "base/params_core.def"
};
#undef MK_PARAM

void param_tables_core(void (*add)(const param_decl_t*));
void param_tables_core(void (*add)(const param_decl_t*)) {
  for (size_t i = 0; i < sizeof(param_core_decls) / sizeof(param_core_decls[0]); i++) add(&param_core_decls[i]);
}
