/* transport-shm's parameters: declared once in transport_shm_params.def
 * (exported with mkcclPluginInfo_v1, so the core lists and sets them) and
 * read through the services table an init gets. */
#ifndef TRANSPORT_SHM_PARAMS_H
#define TRANSPORT_SHM_PARAMS_H

#include <stdint.h>

#include "mkccl_plugin_params.h"
#include "transport/mkccl_transport_v1.h"

/* transport_shm_param_<NAME>(services): typed accessors over transport_shm_params.def. */
#define PLUGIN_PARAM(name, type, def, help) \
  PLUGIN_PARAM_CTYPE_##type transport_shm_param_##name(const mkcclTransportServices_v1* services);
#include "transport_shm_params.def"
#undef PLUGIN_PARAM

#endif
